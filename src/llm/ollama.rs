//! Ollama's native chat API: `/api/chat`, NDJSON streaming, `format` schemas, `keep_alive`.

use std::time::Duration;

use serde_json::{Value, json};

use super::http::{BACKSTOP_TIMEOUT, ChatEndpoint, ResponseLimits, message_reply, stream_chunk};
use super::{
    DeltaSink, LlmBackend, LlmError, LlmFuture, LlmReply, LlmRequest, ServerTimings, TokenUsage,
};
use super::{LlmEnvironment, debug_endpoint, describe_server};

/// Where an Ollama server is and how to use it. Its `Debug` hides credentials in the URL.
#[derive(Clone, PartialEq)]
pub struct OllamaSettings {
    /// The server's address: `http://127.0.0.1:11434`.
    pub base_url: String,
    /// The model to run: `llama3.2`.
    pub model: String,
    /// How long the server keeps the model loaded after a request: a duration
    /// (`"5m"`, `"1h30m"`) or seconds (`"300"`; `"-1"` keeps it loaded for good); the
    /// server's default when `None`.
    pub keep_alive: Option<String>,
    /// How long one HTTP request may take: a backstop against a connection that
    /// hangs ([`BACKSTOP_TIMEOUT`] by default). The bridge's deadline, which knows the
    /// server's speed, normally ends a request first.
    pub timeout: Duration,
    /// How much of an answer is read before the request fails as too large.
    pub limits: ResponseLimits,
}

impl std::fmt::Debug for OllamaSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("OllamaSettings");
        debug_endpoint(&mut debug, &self.base_url, &self.model);
        debug
            .field("keep_alive", &self.keep_alive)
            .field("timeout", &self.timeout)
            .field("limits", &self.limits)
            .finish()
    }
}

impl Default for OllamaSettings {
    /// Ollama on this machine's default port.
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:11434".to_owned(),
            model: "llama3.2".to_owned(),
            keep_alive: None,
            timeout: BACKSTOP_TIMEOUT,
            limits: ResponseLimits::default(),
        }
    }
}

impl OllamaSettings {
    /// Settings from the process's `OLLAMA_HOST` (or `LOOM_LLM_URL`) and
    /// `LOOM_LLM_MODEL`; the defaults for whatever is unset. `OLLAMA_HOST` may omit the
    /// scheme, as Ollama's own tools allow.
    pub fn from_env() -> Self {
        Self::from_environment(&LlmEnvironment::process())
    }

    /// Like [`from_env`](Self::from_env), from these variables. Each address of a
    /// comma-separated list gets the scheme it lacks.
    pub fn from_environment(environment: &LlmEnvironment) -> Self {
        let defaults = Self::default();
        let base_url = environment
            .var("OLLAMA_HOST")
            .or_else(|| environment.var("LOOM_LLM_URL"))
            .map(|hosts| {
                hosts
                    .split(',')
                    .map(|host| {
                        let host = host.trim();
                        if host.contains("://") {
                            host.to_owned()
                        } else {
                            format!("http://{host}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or(defaults.base_url.clone());
        Self {
            base_url,
            model: environment
                .var("LOOM_LLM_MODEL")
                .unwrap_or(defaults.model.clone()),
            ..defaults
        }
    }
}

/// Talks to Ollama's `/api/chat` with `reqwest`.
pub struct OllamaBackend {
    settings: OllamaSettings,
    chat: ChatEndpoint,
}

impl OllamaBackend {
    /// A backend for these settings.
    pub fn new(settings: OllamaSettings) -> Result<Self, LlmError> {
        let bounds = (settings.timeout, settings.limits);
        let chat = ChatEndpoint::new(&settings.base_url, "/api/chat", bounds)?;
        Ok(Self { settings, chat })
    }

    fn body(&self, request: &LlmRequest) -> Value {
        let mut options = json!({});
        if let Some(temperature) = request.sampling.temperature {
            options["temperature"] = json!(temperature);
        }
        if let Some(max_tokens) = request.sampling.max_tokens {
            options["num_predict"] = json!(max_tokens);
        }
        if let Some(seed) = request.sampling.seed {
            options["seed"] = json!(seed);
        }
        if !request.sampling.stop.is_empty() {
            options["stop"] = json!(request.sampling.stop);
        }
        let mut body = json!({
            "model": self.settings.model,
            "messages": request.messages,
            "stream": request.streams(),
            "options": options,
        });
        if let Some(tools) = &request.tools {
            body["tools"] = super::http::tools_body(tools);
        }
        if let Some(schema) = &request.schema {
            body["format"] = Value::clone(schema);
        }
        if let Some(keep_alive) = &self.settings.keep_alive {
            body["keep_alive"] = keep_alive_value(keep_alive);
        }
        body
    }
}

/// `keep_alive` as Ollama's API reads it: a number of seconds as a JSON number (`-1`,
/// kept loaded for good), anything else as a duration string (`"5m"`). The API reads
/// a string as a Go duration, which needs a unit, so `"-1"` would fail every request.
fn keep_alive_value(keep_alive: &str) -> Value {
    let seconds = keep_alive.trim();
    if let Ok(whole) = seconds.parse::<i64>() {
        json!(whole)
    } else if let Some(seconds) = seconds.parse::<f64>().ok().filter(|s| s.is_finite()) {
        json!(seconds)
    } else {
        json!(keep_alive)
    }
}

impl LlmBackend for OllamaBackend {
    fn describe(&self) -> String {
        describe_server("Ollama", &self.settings.base_url, &self.settings.model)
    }

    fn model(&self) -> &str {
        &self.settings.model
    }

    fn complete(&self, request: &LlmRequest, deltas: DeltaSink) -> LlmFuture {
        let (call, exchange) = self.chat.post(&self.body(request));
        let stream = request.streams();
        Box::pin(async move {
            let response = exchange.send(call).await?;
            if !stream {
                let value = exchange.json(response).await?;
                failed(&value)?;
                let measured = (ollama_usage(&value), ollama_timings(&value));
                return message_reply(&value, "/message", measured);
            }
            // NDJSON: one object per line, the last with `"done": true`.
            let mut lines = exchange.lines(response);
            let mut reply = LlmReply::default();
            while let Some(line) = lines.next().await? {
                let chunk = stream_chunk(&line)?;
                failed(&chunk)?;
                if let Some(piece) = chunk.pointer("/message/content").and_then(Value::as_str) {
                    deltas.send(piece);
                    reply.text.push_str(piece);
                }
                if chunk.get("done").and_then(Value::as_bool) == Some(true) {
                    reply.usage = ollama_usage(&chunk);
                    reply.timings = ollama_timings(&chunk);
                    return Ok(reply);
                }
            }
            Err(LlmError::InvalidResponse(
                "the stream ended before a line with \"done\": true: the server stopped mid-answer"
                    .to_owned(),
            ))
        })
    }
}

/// An `{"error": ...}` object, which Ollama sends instead of an answer.
fn failed(value: &Value) -> Result<(), LlmError> {
    match value.get("error") {
        Some(error) => Err(super::error_body::reported_error(error, "Ollama reported")),
        None => Ok(()),
    }
}

/// `prompt_eval_count` and `eval_count` of a final answer.
fn ollama_usage(value: &Value) -> Option<TokenUsage> {
    Some(TokenUsage {
        prompt_tokens: value.get("prompt_eval_count")?.as_u64()?,
        completion_tokens: value.get("eval_count")?.as_u64()?,
        cached_tokens: None,
    })
}

/// The eval counts and durations (in nanoseconds) of a final answer: Ollama counts
/// only the prompt tokens it read, not those it held from the last prompt.
fn ollama_timings(value: &Value) -> Option<ServerTimings> {
    let number = |key: &str| value.get(key).and_then(Value::as_u64);
    Some(ServerTimings {
        prompt_tokens: number("prompt_eval_count")?,
        prompt: Duration::from_nanos(number("prompt_eval_duration")?),
        answer_tokens: number("eval_count")?,
        answer: Duration::from_nanos(number("eval_duration")?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keep_alive_in_seconds_is_sent_as_a_number() {
        let sent = |keep_alive: &str| {
            let settings = OllamaSettings {
                keep_alive: Some(keep_alive.into()),
                ..OllamaSettings::default()
            };
            let backend = OllamaBackend::new(settings).expect("a backend");
            backend.body(&LlmRequest::default())["keep_alive"].clone()
        };
        // Ollama reads a string as a Go duration, which needs a unit: "-1" fails.
        assert_eq!(sent("-1"), json!(-1), "kept loaded for good");
        assert_eq!(sent(" 300 "), json!(300));
        assert_eq!(sent("0.5"), json!(0.5));
        assert_eq!(sent("5m"), json!("5m"));
        assert_eq!(sent("1h30m"), json!("1h30m"));
    }

    #[test]
    fn credentials_in_ollama_host_never_show() {
        let environment =
            LlmEnvironment::from_vars([("OLLAMA_HOST", "player:hunter2@127.0.0.1:11434")]);
        let settings = OllamaSettings::from_environment(&environment);
        let shown = format!("{settings:?}");
        assert!(
            !shown.contains("hunter2") && shown.contains("127.0.0.1:11434"),
            "{shown}"
        );
    }
}
