//! The OpenAI-compatible chat-completions backend: OpenAI, llama.cpp's server, vLLM,
//! LM Studio, Ollama's `/v1`, OpenRouter.

use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};

use super::{LlmBackend, LlmError, LlmFuture, LlmReply, LlmRequest};

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
    /// How long one HTTP request may take; the bridge's deadline applies as well.
    pub timeout: Duration,
    /// Send a request's JSON Schema as a strict `response_format`. Turn off for a
    /// server that rejects `json_schema`; answers are validated either way.
    pub send_schema: bool,
}

impl fmt::Debug for OpenAiSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiSettings")
            .field("base_url", &without_credentials(&self.base_url))
            .field("model", &self.model)
            .field("api_key", &self.api_key)
            .field("timeout", &self.timeout)
            .field("send_schema", &self.send_schema)
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
            timeout: Duration::from_secs(60),
            send_schema: true,
        }
    }
}

impl OpenAiSettings {
    /// Settings from `LOOM_LLM_URL`, `LOOM_LLM_MODEL` and `LOOM_LLM_API_KEY`; `None`
    /// when `LOOM_LLM_URL` is unset or empty.
    pub fn from_env() -> Option<Self> {
        let var = |name| {
            std::env::var(name)
                .ok()
                .filter(|v: &String| !v.trim().is_empty())
        };
        let defaults = Self::default();
        Some(Self {
            base_url: var("LOOM_LLM_URL")?,
            model: var("LOOM_LLM_MODEL").unwrap_or(defaults.model),
            api_key: var("LOOM_LLM_API_KEY").map(ApiKey::new),
            ..defaults
        })
    }
}

/// Talks to an OpenAI-compatible `/chat/completions` endpoint with `reqwest`.
pub struct OpenAiBackend {
    client: reqwest::Client,
    settings: OpenAiSettings,
    endpoint: String,
}

impl OpenAiBackend {
    /// A backend for these settings.
    pub fn new(settings: OpenAiSettings) -> Result<Self, LlmError> {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .build()
            .map_err(|error| LlmError::Setup(format!("HTTP client: {error}")))?;
        let endpoint = format!(
            "{}/chat/completions",
            settings.base_url.trim_end_matches('/')
        );
        Ok(Self {
            client,
            settings,
            endpoint,
        })
    }

    fn body(&self, request: &LlmRequest) -> Value {
        let mut body = json!({
            "model": self.settings.model,
            "messages": request.messages,
            "stream": false,
        });
        if let Some(temperature) = request.sampling.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(max_tokens) = request.sampling.max_tokens {
            body["max_tokens"] = json!(max_tokens);
        }
        if let Some(seed) = request.sampling.seed {
            body["seed"] = json!(seed);
        }
        if let Some(schema) = request
            .schema
            .as_ref()
            .filter(|_| self.settings.send_schema)
        {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": { "name": "answer", "schema": schema, "strict": true },
            });
        }
        body
    }
}

impl LlmBackend for OpenAiBackend {
    fn describe(&self) -> String {
        format!(
            "OpenAI-compatible server at {} (model {})",
            without_credentials(&self.settings.base_url),
            self.settings.model
        )
    }

    fn complete(&self, request: LlmRequest) -> LlmFuture {
        let mut call = self.client.post(&self.endpoint).json(&self.body(&request));
        if let Some(key) = &self.settings.api_key {
            call = call.bearer_auth(key.expose());
        }
        let url = without_credentials(&self.endpoint);
        let timeout = self.settings.timeout;
        Box::pin(async move {
            let response = call
                .send()
                .await
                .map_err(|error| http_error(&url, timeout, error))?;
            let status = response.status();
            let body =
                response
                    .text()
                    .await
                    .map_err(|error| match http_error(&url, timeout, error) {
                        LlmError::Unreachable { detail, .. } => {
                            LlmError::InvalidResponse(format!("the answer broke off: {detail}"))
                        }
                        other => other,
                    })?;
            if !status.is_success() {
                return Err(LlmError::Status {
                    status: status.as_u16(),
                    body: truncate(&body, 500),
                });
            }
            let value: Value = serde_json::from_str(&body).map_err(|error| {
                LlmError::InvalidResponse(format!("not JSON ({error}): {}", truncate(&body, 200)))
            })?;
            let text = value
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    LlmError::InvalidResponse(format!(
                        "no choices[0].message.content in {}",
                        truncate(&body, 200)
                    ))
                })?;
            Ok(LlmReply {
                text: text.to_owned(),
            })
        })
    }
}

fn http_error(url: &str, timeout: Duration, error: reqwest::Error) -> LlmError {
    let error = error.without_url();
    if error.is_timeout() {
        return LlmError::TimedOut(timeout);
    }
    // The top-level message repeats the URL; the causes say what went wrong.
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    let detail = if causes.is_empty() {
        error.to_string()
    } else {
        causes.join(": ")
    };
    LlmError::Unreachable {
        url: url.to_owned(),
        detail,
    }
}

/// The URL with any `user:password@` part hidden, for logs and errors.
fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://<redacted>@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
