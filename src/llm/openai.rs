//! The OpenAI-compatible chat-completions backend: OpenAI, llama.cpp's server, vLLM,
//! LM Studio, Ollama's `/v1`, OpenRouter.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::http::{
    BACKSTOP_TIMEOUT, CONNECT_TIMEOUT, ChatEndpoint, ResponseLimits, ServerUrl, Timeouts,
    cut_off_at, json_value, message_reply, stream_chunk,
};
use super::{
    DeltaSink, LimitsFuture, LlmBackend, LlmError, LlmFuture, LlmReply, LlmRequest, ServerLimits,
    ServerTimings, TokenUsage,
};
use super::{LlmEnvironment, debug_endpoint, describe_server};

/// How long a server may take to say what its limits are.
const PROPS_TIMEOUT: Duration = Duration::from_secs(5);

/// An API key. Its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Where an OpenAI-compatible server is and how to talk to it.
#[derive(Clone, PartialEq)]
pub struct OpenAiSettings {
    /// The API base, ending before `/chat/completions`: `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// The model name the server expects.
    pub model: String,
    /// Sent as a bearer token when set.
    pub api_key: Option<ApiKey>,
    /// How long one HTTP request may take: a backstop against a connection that
    /// hangs ([`BACKSTOP_TIMEOUT`] by default). The bridge's deadline, which knows the
    /// server's speed, normally ends a request first; when this does, the request
    /// ends as [`LlmError::BackendTimedOut`]. Keep it longer than any deadline given.
    pub timeout: Duration,
    /// How long to wait for the server to take a connection ([`CONNECT_TIMEOUT`] by
    /// default): one it never takes is [`LlmError::Unreachable`].
    pub connect_timeout: Duration,
    /// How a request's JSON Schema is sent; answers are validated either way.
    pub schema_format: SchemaFormat,
    /// The server's slots (llama.cpp's `--parallel`): when set, a request with an
    /// affinity is sent with `id_slot` (its affinity modulo the slots; in a fleet, what
    /// is left of it once the bridge picked the server) and
    /// `cache_prompt`, so the slot keeps its prompt prefix. Only for servers that take
    /// those fields: OpenAI's own API refuses them. More than the server says it has
    /// (its `/props`) count as its own, with a warning, once it has said: a request
    /// sent before (while the server still loads its model) takes the setting as
    /// given. `LOOM_LLM_SLOTS`.
    pub slots: Option<u32>,
    /// How much of an answer is read before the request fails as too large.
    pub limits: ResponseLimits,
}

/// How an OpenAI-compatible server takes a JSON Schema for the answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SchemaFormat {
    /// `response_format: {type: "json_schema", json_schema: {name, schema, strict: true}}`:
    /// OpenAI, llama.cpp's own server, vLLM, LM Studio.
    #[default]
    JsonSchema,
    /// `response_format: {type: "json_object", schema}`: llama-cpp-python's server.
    JsonObject,
    /// No schema: for servers that take neither.
    Off,
}

impl SchemaFormat {
    /// `json_schema`, `json_object` or `off`, as `LOOM_LLM_SCHEMA` spells them.
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "json_schema" => Some(Self::JsonSchema),
            "json_object" => Some(Self::JsonObject),
            "off" | "none" => Some(Self::Off),
            _ => None,
        }
    }
}

impl fmt::Debug for OpenAiSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("OpenAiSettings");
        debug_endpoint(&mut debug, &self.base_url, &self.model);
        debug
            .field("api_key", &self.api_key)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("schema_format", &self.schema_format)
            .field("slots", &self.slots)
            .field("limits", &self.limits)
            .finish()
    }
}

impl Default for OpenAiSettings {
    /// A llama.cpp server on this machine's default port.
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:8080/v1".to_owned(),
            model: "local-model".to_owned(),
            api_key: None,
            timeout: BACKSTOP_TIMEOUT,
            connect_timeout: CONNECT_TIMEOUT,
            schema_format: SchemaFormat::JsonSchema,
            slots: None,
            limits: ResponseLimits::default(),
        }
    }
}

impl OpenAiSettings {
    /// Settings from the process's `LOOM_LLM_URL`, `LOOM_LLM_MODEL`,
    /// `LOOM_LLM_API_KEY`, `LOOM_LLM_SCHEMA` (`json_schema`, `json_object` or `off`)
    /// and `LOOM_LLM_SLOTS`; `None` when `LOOM_LLM_URL` is unset or empty. The URL is
    /// taken as it is: [`BackendChoice::from_environment`](super::BackendChoice::from_environment)
    /// makes a comma-separated list a fleet.
    pub fn from_env() -> Option<Self> {
        Self::from_environment(&LlmEnvironment::process())
    }

    /// Like [`from_env`](Self::from_env), from these variables.
    pub fn from_environment(environment: &LlmEnvironment) -> Option<Self> {
        let defaults = Self::default();
        let var = |name| environment.var(name);
        Some(Self {
            base_url: var("LOOM_LLM_URL")?,
            model: var("LOOM_LLM_MODEL").unwrap_or(defaults.model),
            api_key: var("LOOM_LLM_API_KEY").map(ApiKey::new),
            schema_format: var("LOOM_LLM_SCHEMA")
                .and_then(|name| SchemaFormat::parse(&name))
                .unwrap_or(defaults.schema_format),
            slots: var("LOOM_LLM_SLOTS")
                .and_then(|slots| slots.trim().parse().ok())
                .filter(|&slots| slots > 0),
            ..defaults
        })
    }
}

/// Talks to an OpenAI-compatible `/chat/completions` endpoint with `reqwest`.
pub struct OpenAiBackend {
    settings: OpenAiSettings,
    chat: ChatEndpoint,
    /// llama.cpp's `/props`, beside the API's base.
    props: ServerUrl,
    /// The slots the server said it has (`total_slots`), 0 until it did: a request
    /// kept to a slot it does not have would wait there for ever.
    server_slots: Arc<AtomicU32>,
}

impl OpenAiBackend {
    /// A backend for these settings.
    pub fn new(settings: OpenAiSettings) -> Result<Self, LlmError> {
        let timeouts = Timeouts {
            connect: settings.connect_timeout,
            whole: settings.timeout,
        };
        let bounds = (timeouts, settings.limits);
        let chat = ChatEndpoint::new(&settings.base_url, "/chat/completions", bounds)?;
        let root = settings.base_url.trim().trim_end_matches('/');
        let props = ServerUrl::new(root.strip_suffix("/v1").unwrap_or(root), "/props")?;
        Ok(Self {
            settings,
            chat,
            props,
            server_slots: Arc::default(),
        })
    }

    fn body<'a>(&'a self, request: &'a LlmRequest) -> ChatBody<'a> {
        let response_format =
            request
                .schema
                .as_ref()
                .and_then(|schema| match self.settings.schema_format {
                    SchemaFormat::JsonSchema => Some(json!({
                        "type": "json_schema",
                        "json_schema": { "name": "answer", "schema": schema, "strict": true },
                    })),
                    SchemaFormat::JsonObject => {
                        Some(json!({ "type": "json_object", "schema": schema }))
                    }
                    SchemaFormat::Off => None,
                });
        let server_slots = self.server_slots.load(Ordering::Relaxed);
        let id_slot = (self.settings.slots)
            .map(|slots| match server_slots {
                0 => slots,
                known => slots.min(known),
            })
            .filter(|&slots| slots > 0)
            .zip(request.affinity)
            .map(|(slots, affinity)| (affinity % u64::from(slots)) as u32);
        let stream = request.streams();
        ChatBody {
            model: &self.settings.model,
            messages: &request.messages,
            stream,
            tools: request
                .tools
                .as_deref()
                .map(|tools| super::http::tools_body(tools)),
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
            stop: &request.sampling.stop,
            temperature: request.sampling.temperature,
            max_tokens: request.sampling.max_tokens,
            seed: request.sampling.seed,
            response_format,
            id_slot,
            cache_prompt: id_slot.is_some(),
        }
    }
}

/// A chat-completions request body, serialized straight from the request's parts.
#[derive(Serialize)]
struct ChatBody<'a> {
    model: &'a str,
    messages: &'a [super::ChatMessage],
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
    /// llama.cpp's server slot; sent with `cache_prompt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    id_slot: Option<u32>,
    #[serde(skip_serializing_if = "is_false")]
    cache_prompt: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

impl LlmBackend for OpenAiBackend {
    fn describe(&self) -> String {
        let (url, model) = (&self.settings.base_url, &self.settings.model);
        describe_server("OpenAI-compatible server", url, model)
    }

    fn model(&self) -> &str {
        &self.settings.model
    }

    /// llama.cpp's `/props`: `default_generation_settings.n_ctx` (per slot) and
    /// `total_slots`. Other servers have no such page, and say nothing.
    fn limits(&self) -> LimitsFuture {
        let mut call = self.props.get(&self.chat.client).timeout(PROPS_TIMEOUT);
        if let Some(key) = &self.settings.api_key {
            call = call.bearer_auth(key.expose());
        }
        let exchange = self.props.exchange(PROPS_TIMEOUT, self.settings.limits);
        let (server_slots, set) = (Arc::clone(&self.server_slots), self.settings.slots);
        let described = self.describe();
        Box::pin(async move {
            let response = exchange.send(call).await.ok()?;
            let props = exchange.json(response).await.ok()?;
            let number = |pointer: &str| {
                props
                    .pointer(pointer)
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|&n| n > 0)
            };
            let limits = ServerLimits {
                context_per_slot: number("/default_generation_settings/n_ctx"),
                slots: number("/total_slots"),
            };
            if let Some(slots) = limits.slots {
                let before = server_slots.swap(slots, Ordering::Relaxed);
                if let Some(set) = set.filter(|&set| set > slots && before != slots) {
                    bevy::log::warn!(
                        "{described} has {slots} slots, not the {set} its settings give \
                         (LOOM_LLM_SLOTS): requests keep to its {slots}"
                    );
                }
            }
            (limits != ServerLimits::default()).then_some(limits)
        })
    }

    fn complete(&self, request: &LlmRequest, deltas: DeltaSink) -> LlmFuture {
        let (mut call, exchange) = self.chat.post(&self.body(request));
        if let Some(key) = &self.settings.api_key {
            call = call.bearer_auth(key.expose());
        }
        let stream = request.streams();
        Box::pin(async move {
            let response = exchange.send(call).await?;
            if !stream {
                return whole_answer(&exchange.body(response).await?);
            }
            // Server-sent events: `data: {chunk}` lines, then `data: [DONE]`; an error
            // comes as a chunk with an `error`, or (llama.cpp's server before late
            // 2025) as an `error: {error}` event.
            let mut lines = exchange.lines(response);
            let mut reply = LlmReply::default();
            // What came that is no event: a server that does not stream answers whole.
            let (mut not_events, mut events) = (String::new(), false);
            while let Some(line) = lines.next().await? {
                if let Some(event) = line.strip_prefix("error:") {
                    let error = stream_chunk(event.trim())?;
                    let error = error.get("error").unwrap_or(&error);
                    let context = "the server reported an error mid-stream";
                    return Err(super::error_body::reported_error(error, context));
                }
                let Some(data) = line.strip_prefix("data:").map(str::trim) else {
                    if !is_event_field(&line) {
                        not_events.push_str(&line);
                        not_events.push('\n');
                    }
                    continue;
                };
                events = true;
                if data == "[DONE]" {
                    return Ok(reply);
                }
                let chunk = stream_chunk(data)?;
                if let Some(error) = chunk.get("error") {
                    return Err(super::error_body::reported_error(
                        error,
                        "the server reported an error mid-stream",
                    ));
                }
                if let Some(piece) = chunk
                    .pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                {
                    deltas.send(piece);
                    reply.text.push_str(piece);
                }
                reply.cut_off |= cut_off_at(&chunk, "/choices/0/finish_reason");
                reply.usage = openai_usage(&chunk).or(reply.usage);
                reply.timings = llama_timings(&chunk).or(reply.timings);
            }
            if !events && !not_events.trim().is_empty() {
                return whole_answer(not_events.trim().as_bytes());
            }
            Err(LlmError::InvalidResponse(
                "the stream ended before `data: [DONE]`: the server stopped mid-answer".to_owned(),
            ))
        })
    }
}

/// Whether a line of a server-sent event stream is one of its fields (`event:`,
/// `id:`, `retry:`), a comment (`: keep-alive`) or the blank line between events:
/// what a stream holds besides its `data:` lines.
fn is_event_field(line: &str) -> bool {
    let line = line.trim();
    line.is_empty()
        || line.starts_with(':')
        || ["event:", "id:", "retry:"]
            .iter()
            .any(|field| line.starts_with(field))
}

/// A whole answer: a chat completion, or the server's error object in its place (a
/// 200 that says the server failed). Also what a server that does not stream sends a
/// streamed request.
fn whole_answer(body: &[u8]) -> Result<LlmReply, LlmError> {
    // The usual answer, read without building a JSON tree; anything else is read as
    // JSON to say what is wrong with it.
    if let Ok(completion) = serde_json::from_slice::<Completion<'_>>(body)
        && let Some(reply) = completion.reply()
    {
        return Ok(reply);
    }
    let value = json_value(body)?;
    if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
        let context = "the server answered with an error";
        return Err(super::error_body::reported_error(error, context));
    }
    let measured = (openai_usage(&value), llama_timings(&value));
    let reply = message_reply(&value, "/choices/0/message", measured)?;
    let cut_off = cut_off_at(&value, "/choices/0/finish_reason");
    Ok(LlmReply { cut_off, ..reply })
}

/// The parts of a chat completion the backend reads.
#[derive(Deserialize)]
struct Completion<'a> {
    #[serde(borrow)]
    choices: Vec<CompletionChoice<'a>>,
    #[serde(default)]
    usage: Option<CompletionUsage>,
    /// llama.cpp's.
    #[serde(default)]
    timings: Option<LlamaTimings>,
}

#[derive(Deserialize)]
struct CompletionChoice<'a> {
    #[serde(borrow)]
    message: CompletionMessage<'a>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct CompletionMessage<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    /// Present when the model called tools: such an answer is read as JSON.
    #[serde(default)]
    tool_calls: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct CompletionUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Deserialize)]
struct PromptTokensDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

/// llama.cpp's `timings` of an answer: the prompt tokens it read (`prompt_n`, not
/// those it had cached) and how long that took, then the same for the answer.
#[derive(Deserialize)]
struct LlamaTimings {
    prompt_n: u64,
    prompt_ms: f64,
    predicted_n: u64,
    predicted_ms: f64,
}

impl From<LlamaTimings> for ServerTimings {
    fn from(timings: LlamaTimings) -> Self {
        let duration = |ms: f64| Duration::try_from_secs_f64(ms / 1000.0).unwrap_or_default();
        Self {
            prompt_tokens: timings.prompt_n,
            prompt: duration(timings.prompt_ms),
            answer_tokens: timings.predicted_n,
            answer: duration(timings.predicted_ms),
        }
    }
}

impl Completion<'_> {
    /// The first choice's text, when there is one.
    fn reply(self) -> Option<LlmReply> {
        let choice = self.choices.into_iter().next()?;
        let (message, cut_off) = (
            choice.message,
            choice.finish_reason.as_deref() == Some("length"),
        );
        if message.tool_calls.is_some() {
            return None;
        }
        Some(LlmReply {
            text: message.content?.into_owned(),
            usage: self.usage.map(|usage| TokenUsage {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cached_tokens: usage.prompt_tokens_details.and_then(|d| d.cached_tokens),
            }),
            tool_calls: Vec::new(),
            timings: self.timings.map(ServerTimings::from),
            cut_off,
        })
    }
}

/// `usage` of a completion or of a stream's last chunk.
fn openai_usage(value: &Value) -> Option<TokenUsage> {
    let usage = value.get("usage")?;
    Some(TokenUsage {
        prompt_tokens: usage.get("prompt_tokens")?.as_u64()?,
        completion_tokens: usage.get("completion_tokens")?.as_u64()?,
        cached_tokens: (usage.pointer("/prompt_tokens_details/cached_tokens"))
            .and_then(Value::as_u64),
    })
}

/// llama.cpp's `timings` of an answer or of a stream's last chunk.
fn llama_timings(value: &Value) -> Option<ServerTimings> {
    let timings = value.get("timings")?;
    LlamaTimings::deserialize(timings)
        .ok()
        .map(ServerTimings::from)
}
