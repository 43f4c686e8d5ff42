//! What goes to a model and what comes back.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use bevy::prelude::*;
use serde_json::Value;
use thiserror::Error;

/// A chat message, as every chat-completion API takes it.
///
/// Cloning one is cheap: its text is shared, so a prompt can go to the bridge and
/// into a [`DecisionRequested`](crate::actors::DecisionRequested) message (and many
/// actors can share one system message) without copying it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: Cow<'static, str>,
    /// The text.
    pub content: Arc<str>,
}

/// What a [`LlmError::Status`] says after the server's words: for a 429, that the
/// server limits how often it is asked, and for any status, how long it asked to be
/// left alone (`Retry-After`), which a request out of time before then never waits.
fn status_advice(status: u16, retry_after: Option<Duration>) -> String {
    let mut advice = String::new();
    if status == 429 {
        advice.push_str(
            " (the server limits how often it is asked: ask it less at once, \
             LlmPlugin::concurrency_per_endpoint or `concurrencyPerEndpoint` in llm.ron, \
             or raise its limit)",
        );
    }
    if let Some(wait) = retry_after {
        advice.push_str(&format!(
            "; it asked to be asked again in {} s",
            wait.as_secs()
        ));
    }
    advice
}

impl LlmError {
    /// Whether trying again may help: the server was unreachable, overloaded (429),
    /// failing (5xx), broke off its answer or sent one that is not JSON (another
    /// server of a fleet may answer).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Unreachable { .. }
            | Self::Loading { .. }
            | Self::BrokeOff(_)
            | Self::Unreadable(_) => true,
            Self::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }

    /// Whether the error says something of the server's health, and so counts toward
    /// its circuit breaker: unreachable, failing, answering with what is not JSON (a
    /// web page), or refusing every request (an account out of quota: once its
    /// breaker opens, a fleet's other servers are asked). A server still loading its
    /// model, one limiting how often it is asked (429: it answered, and said when to
    /// ask again), or one that found a prompt too long for its context, is healthy.
    pub fn is_server_fault(&self) -> bool {
        match self {
            Self::QuotaExceeded { .. } => true,
            Self::Loading { .. } | Self::Status { status: 429, .. } => false,
            other => other.is_retryable(),
        }
    }
}

impl ChatMessage {
    /// A system message.
    pub fn system(content: impl Into<Arc<str>>) -> Self {
        Self {
            role: Cow::Borrowed("system"),
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<Arc<str>>) -> Self {
        Self {
            role: Cow::Borrowed("user"),
            content: content.into(),
        }
    }

    /// A message the model wrote: an earlier answer, kept in a conversation.
    pub fn assistant(content: impl Into<Arc<str>>) -> Self {
        Self {
            role: Cow::Borrowed("assistant"),
            content: content.into(),
        }
    }
}

/// Identifies one submitted request; its [`LlmResponse`] carries the same id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// Sampling options. On a request, `None` takes the bridge's
/// ([`LlmSettings::sampling`](crate::llm::LlmSettings::sampling)); there, `None` leaves
/// the server's default.
#[derive(Debug, Clone, Default, PartialEq, Reflect, serde::Serialize, serde::Deserialize)]
pub struct SamplingOptions {
    /// Randomness, usually 0.0–1.0.
    pub temperature: Option<f32>,
    /// The longest answer, in tokens.
    pub max_tokens: Option<u32>,
    /// A seed, for servers that honour one.
    pub seed: Option<u64>,
    /// Text that ends the answer when the model writes it; empty for none.
    pub stop: Vec<String>,
}

/// How the offline backend, which is not a language model, answers a request: its
/// requester knows what a valid answer looks like and writes one. `rng` is seeded from
/// the backend's seed and the request, so the same requests get the same answers.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot write offline answers",
    label = "implement `OfflineAnswer` for it",
    note = "`fn write(&self, rng: &mut dyn rand::Rng) -> String` returns the whole answer text"
)]
pub trait OfflineAnswer: std::fmt::Debug + Send + Sync {
    /// The answer text.
    fn write(&self, rng: &mut dyn rand::Rng) -> String;
}

/// A fixed text is its own offline answer.
impl OfflineAnswer for String {
    fn write(&self, _rng: &mut dyn rand::Rng) -> String {
        self.clone()
    }
}

/// One chat request to a model.
#[derive(Debug, Clone, Default)]
pub struct LlmRequest {
    /// The conversation, system message first. Shared: a smart actor's transcript,
    /// its request and its [`DecisionRequested`](crate::actors::DecisionRequested)
    /// hold one list, and the next turn appends to it in place once they are gone.
    pub messages: Arc<Vec<ChatMessage>>,
    /// A JSON Schema the answer must follow. The OpenAI-compatible backend sends it as
    /// `response_format` (`json_schema`, strict); answers are validated regardless.
    /// Shared, since many requests (every decision offering as many actions) take the same.
    pub schema: Option<Arc<Value>>,
    /// Sampling options; unset fields take the bridge's defaults.
    pub sampling: SamplingOptions,
    /// How long to wait for the answer from submission, queueing included; a request
    /// the server's measured speed cannot answer in the time left is not sent
    /// ([`LlmError::TooSlow`]). `None` takes the bridge's default
    /// ([`LlmSettings::deadline`](super::LlmSettings::deadline)), which counts from dispatch.
    pub deadline: Option<Duration>,
    /// Who waits for the answer: the bridge serves higher priorities first.
    pub priority: Priority,
    /// Ask for the answer in pieces as it is written: [`LlmDelta`] messages, then the
    /// [`LlmResponse`]. Backends that cannot stream (the offline backend, a replay)
    /// send the whole text as one delta; a server that answers a streamed request
    /// whole sends none, and its text comes with the response.
    pub stream: bool,
    /// What the offline backend answers with; a stock sentence when `None`. Language
    /// models read only the messages.
    pub offline: Option<Arc<dyn OfflineAnswer>>,
    /// Requests with the same affinity (one actor's, say) go to the same server of a
    /// fleet while it is healthy, and to the same server slot where the backend
    /// supports it, so the server can reuse the prompt prefix it already read.
    pub affinity: Option<u64>,
    /// Functions the model may call instead of answering in text, for servers with
    /// native tool calling (OpenAI-compatible ones, Ollama); the calls come back in
    /// [`LlmReply::tool_calls`]. A request with tools is not streamed.
    pub tools: Option<Arc<Vec<ToolSpec>>>,
}

impl LlmRequest {
    /// Whether a server is asked to stream the answer: when [`stream`](Self::stream)
    /// asks for it and the request offers no tools.
    pub fn streams(&self) -> bool {
        self.stream && self.tools.is_none()
    }
}

/// A function a model may call: its name (letters, digits, `_` and `-`), what it does,
/// and the JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolSpec {
    /// Its name.
    pub name: String,
    /// What it does and when to call it.
    pub description: String,
    /// The JSON Schema of its arguments: an object.
    pub parameters: Value,
}

/// A function the model called: its name and its arguments.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The name of a [`ToolSpec`] of the request.
    pub name: String,
    /// Its arguments, as JSON; a server that sent them as text that is no JSON gives
    /// them as that text.
    pub arguments: Value,
}

/// A model's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LlmReply {
    /// The answer text.
    pub text: String,
    /// Tokens read and written, when the server reports them.
    pub usage: Option<TokenUsage>,
    /// The functions the model called, when the request offered tools.
    pub tool_calls: Vec<ToolCall>,
    /// How long the server took to read the prompt and to write the answer, when it
    /// says (llama.cpp's `timings`, Ollama's eval durations).
    pub timings: Option<ServerTimings>,
    /// Whether the server stopped the answer at the request's token limit
    /// (`finish_reason: "length"`, Ollama's `done_reason: "length"`): it may be
    /// unfinished.
    pub cut_off: bool,
}

impl LlmReply {
    /// A reply with this text and no usage report.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }
}

/// Tokens a request cost, as the server reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TokenUsage {
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens in the answer.
    pub completion_tokens: u64,
    /// Of the prompt's tokens, those the server took from its cache of earlier prompts
    /// instead of reading them again, when it says (`prompt_tokens_details.cached_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
}

impl TokenUsage {
    /// The prompt tokens the server had to read: those it did not hold in its cache
    /// (all of them when it does not say).
    pub fn new_prompt_tokens(&self) -> u64 {
        self.prompt_tokens
            .saturating_sub(self.cached_tokens.unwrap_or(0))
    }
}

/// How long a server spent on a request, as it reports it: the measure of its speed,
/// free of the time the request spent on the way or waiting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerTimings {
    /// The prompt tokens it read (those it did not have cached).
    pub prompt_tokens: u64,
    /// How long reading them took.
    pub prompt: Duration,
    /// The answer tokens it wrote.
    pub answer_tokens: u64,
    /// How long writing them took.
    pub answer: Duration,
}

/// Why a request produced no answer; each says what to check.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The server could not be reached.
    #[error(
        "could not reach the model server at {url}: {detail}; check that it is running and that its address (LOOM_LLM_URL; OLLAMA_HOST for Ollama) is right"
    )]
    Unreachable {
        /// The address tried.
        url: String,
        /// What the connection reported.
        detail: String,
        /// Nothing listened at the address: the connection was refused. Just after the
        /// bridge starts, that is a server still starting ([`RetryPolicy::startup_grace`](super::RetryPolicy::startup_grace)).
        refused: bool,
    },
    /// The server is up but still loading its model (llama.cpp's, Ollama's and vLLM's
    /// `503` while they start), or did not accept connections yet; the request waited
    /// for it until its deadline.
    #[error(
        "the model server at {url} is loading its model ({detail}); wait until it has loaded, or raise the deadline"
    )]
    Loading {
        /// The address tried.
        url: String,
        /// What the server said.
        detail: String,
    },
    /// The server refused the answer format the request asked for: a JSON schema as
    /// `response_format`, which some servers do not take (llama-cpp-python's server
    /// wants `json_object`). Every request would fail the same way until the format is
    /// changed, so it is no fault of the server's health.
    #[error(
        "the model server at {url} does not take the answer format it was sent ({detail}); set LOOM_LLM_SCHEMA=json_object (or off), or OpenAiSettings::schema_format"
    )]
    FormatRefused {
        /// The address tried.
        url: String,
        /// What the server said.
        detail: String,
    },
    /// The prompt and the answer it asks for do not fit in the model's context
    /// (llama.cpp's `exceed_context_size_error`, OpenAI's `context_length_exceeded`).
    /// A smart actor starts its conversation again from a fresh prompt and asks once
    /// more; what the server said of its figures calibrates the bridge's token counts.
    #[error(
        "the prompt does not fit in the model's context: {detail}; start the server with a larger context per slot, or lower the prompt budgets"
    )]
    ContextExceeded {
        /// What the server said.
        detail: String,
        /// The prompt's tokens, when the server said.
        prompt_tokens: Option<u64>,
        /// The tokens its context (per slot) holds, when the server said.
        context: Option<u64>,
    },
    /// The server has no such path (HTTP 404): its address lacks the part where its
    /// API begins, or has one too many, or it is another kind of server.
    #[error("the model server at {url} has no such path (HTTP 404: {detail}); {hint}")]
    NoSuchPath {
        /// The address tried.
        url: String,
        /// What the server said.
        detail: String,
        /// How the address of this kind of server is written.
        hint: &'static str,
    },
    /// The server redirected the request (HTTP 3xx): it is not followed, so a
    /// prompt goes only to the address the game set.
    #[error(
        "the model server at {url} redirects to {to} (HTTP {status}); a request is sent only to the address set: set it (LOOM_LLM_URL, or the url in llm.ron) to the address the server redirects to, if that is the server to use"
    )]
    Redirected {
        /// The address tried.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// Where the server redirects to (its `Location`), or "nowhere it names".
        to: String,
    },
    /// The server does not have the model the request named (HTTP 404).
    #[error(
        "the model server at {url} does not have the model asked for ({detail}); check its name (LOOM_LLM_MODEL), or fetch it first (`ollama pull NAME` for Ollama)"
    )]
    NoSuchModel {
        /// The address tried.
        url: String,
        /// What the server said.
        detail: String,
    },
    /// The server refused the request as unauthorized (HTTP 401 or 403): it wants an
    /// API key, or another one.
    #[error(
        "the model server at {url} refused the request as unauthorized (HTTP {status}: {detail}); give it the API key it expects: LOOM_LLM_API_KEY, the variable `apiKeyEnv` names in llm.ron, or `api_key` in OpenAiSettings"
    )]
    Unauthorized {
        /// The address tried.
        url: String,
        /// 401 or 403.
        status: u16,
        /// What the server said.
        detail: String,
    },
    /// The account behind the API key has used up what it may ask (OpenAI's
    /// `insufficient_quota`, sent as a 429): asking again does not help until it has
    /// more.
    #[error(
        "the model server at {url} refused the request: the account behind its API key has no quota left ({detail}); add to the account's quota or plan, or use another key (LOOM_LLM_API_KEY) or server (LOOM_LLM_URL)"
    )]
    QuotaExceeded {
        /// The address tried.
        url: String,
        /// What the server said.
        detail: String,
    },
    /// The server answered with an error status.
    #[error("the model server answered HTTP {status}: {body}{}", status_advice(*.status, *.retry_after))]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The start of the response body.
        body: String,
        /// How long the server asked to wait before trying again (`Retry-After`).
        retry_after: Option<Duration>,
    },
    /// Every endpoint's circuit breaker is open after repeated failures.
    #[error("every model server is failing ({0}); requests fail fast until one recovers")]
    Unavailable(String),
    /// The request was cancelled: explicitly, because its requester went away, or
    /// because a newer request replaced it.
    #[error("the request was cancelled")]
    Cancelled,
    /// No answer came before the deadline.
    #[error(
        "no answer within {0:.1?}; if the server's log shows it working on the request, raise the deadline (the request's own, or LlmSettings::deadline and `deadlineSeconds` in llm.ron for those that give none) or use a faster model; if it shows nothing, the address may be another program's, or the server stuck"
    )]
    TimedOut(Duration),
    /// Never sent: every server was busy with other requests (of the same priority
    /// or higher, or that started first) until the deadline.
    #[error(
        "not started within {0:.1?}: the model servers were busy with other requests until the deadline; ask less at once, give the server more slots (llama-server's `--parallel`, and LlmPlugin::concurrency_per_endpoint), or give this request a longer deadline"
    )]
    NotStarted(Duration),
    /// The HTTP backend's own `timeout` ended the request first: a backstop against a
    /// connection that hangs (ten minutes by default), shorter than the request's
    /// deadline, so a longer deadline would not have helped.
    #[error(
        "no whole answer within {0:.1?}, the HTTP backend's `timeout` (a backstop against a server that hangs); if the server is this slow, raise `timeout` in the backend's settings (OpenAiSettings, OllamaSettings)"
    )]
    BackendTimedOut(Duration),
    /// Not sent: at the speed the server was measured at, reading the part of the
    /// prompt it does not hold and writing the answer would take longer than the time
    /// left before the request's deadline. The server's time goes to requests that can
    /// finish.
    #[error(
        "not sent: the server would take about {predicted:.1?} at its measured speed, and only {left:.1?} was left before the deadline; give this request a longer deadline, or use a faster model"
    )]
    TooSlow {
        /// How long the server would take.
        predicted: Duration,
        /// The time that was left.
        left: Duration,
    },
    /// The server answered with JSON that is not a chat completion (no text where the
    /// answer's text goes, a stream that stopped early), or reported an error in its
    /// place: what this request got, not the server's health (a content filter's
    /// empty answer is one).
    #[error("the model server's answer was not understood: {0}")]
    InvalidResponse(String),
    /// The server answered with what is not JSON at all: a web page, another
    /// program's answer. Tried again, on another server of a fleet when there is one,
    /// and counted toward the server's circuit breaker.
    #[error(
        "the model server's answer is not JSON: {0}; check that the address is a model server's (OpenAI-compatible, or Ollama's) and what its log says"
    )]
    Unreadable(String),
    /// The connection broke while the answer came, its headers already sent: the
    /// server crashed, restarted or was stopped mid-answer.
    #[error(
        "the model server's answer broke off: {0}; check the server's log: it may have crashed (out of memory, as a server can reading a long prompt) or been restarted"
    )]
    BrokeOff(String),
    /// The server sent more than the backend reads of an answer.
    #[error(
        "the model server's {what} passed the limit of {limit} bytes; if such answers are expected, raise `limits.{setting}` in the backend's settings"
    )]
    TooLarge {
        /// What was too large: `answer` or `streamed line`.
        what: &'static str,
        /// The limit passed, in bytes.
        limit: usize,
        /// The `ResponseLimits` field that sets it, in the backend's settings.
        setting: &'static str,
    },
    /// A backend failed in a way it did not report, such as a panic.
    #[error("the backend failed: {0}")]
    BackendFailed(String),
    /// The backend could not be set up.
    #[error("the backend could not be set up: {0}")]
    Setup(String),
    /// A replayed run met a request its cassette does not hold.
    #[error(
        "no recorded answer for this request (key {key}) in {cassette}: record the scene again (LOOM_LLM_RECORD) or check what changed in the prompt"
    )]
    NotRecorded {
        /// The request's key.
        key: String,
        /// The cassette read.
        cassette: String,
    },
    /// The bridge's background runtime is not running.
    #[error("the LLM bridge is not running: {0}")]
    BridgeStopped(String),
}

/// The outcome of one request, written in [`LoomSystems::Receive`](crate::LoomSystems::Receive).
#[derive(Message, Debug, Clone, PartialEq)]
pub struct LlmResponse {
    /// The request this answers.
    pub id: RequestId,
    /// The answer, or why there is none.
    pub result: Result<LlmReply, LlmError>,
    /// Time from submission to outcome.
    pub latency: Duration,
    /// Time from submission to the first piece of a streamed answer.
    pub first_token: Option<Duration>,
    /// How many times the request was tried again after a failure.
    pub retries: u32,
}

/// Who waits for an answer; the bridge serves higher priorities first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Priority {
    /// Thinking nobody is waiting on: smart actors deciding.
    #[default]
    Background,
    /// Narration of what just happened.
    Narration,
    /// A line a player is waiting to read.
    Dialogue,
}

/// A piece of a streamed answer, in order; the request's [`LlmResponse`] follows the last.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct LlmDelta {
    /// The request this belongs to.
    pub id: RequestId,
    /// The text written since the previous piece.
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn how_long_was_waited_is_told_to_a_tenth() {
        let waited = Duration::from_secs_f64(111.911_110_656);
        let said = LlmError::TimedOut(waited).to_string();
        assert!(said.starts_with("no answer within 111.9s;"), "{said}");
        let said = LlmError::NotStarted(waited).to_string();
        assert!(said.starts_with("not started within 111.9s:"), "{said}");
        let said = LlmError::BackendTimedOut(waited).to_string();
        assert!(said.starts_with("no whole answer within 111.9s,"), "{said}");
    }
}
