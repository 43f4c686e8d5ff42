//! Ollama's native chat API: `/api/chat`, NDJSON streaming, `format` schemas, `keep_alive`.

use std::time::Duration;

use serde_json::{Value, json};

use super::http::{
    BACKSTOP_TIMEOUT, CONNECT_TIMEOUT, ChatEndpoint, ResponseLimits, Timeouts, cut_off_at,
    message_reply, stream_chunk,
};
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
    /// server's speed, normally ends a request first; when this does, the request
    /// ends as [`LlmError::BackendTimedOut`]. Keep it longer than any deadline given.
    pub timeout: Duration,
    /// How long to wait for the server to take a connection ([`CONNECT_TIMEOUT`] by
    /// default): one it never takes is [`LlmError::Unreachable`].
    pub connect_timeout: Duration,
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
            .field("connect_timeout", &self.connect_timeout)
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
            connect_timeout: CONNECT_TIMEOUT,
            limits: ResponseLimits::default(),
        }
    }
}

impl OllamaSettings {
    /// Settings from the process's `OLLAMA_HOST` (or `LOOM_LLM_URL`) and
    /// `LOOM_LLM_MODEL`; the defaults for whatever is unset. As Ollama's own tools read
    /// it, an address without a scheme is over http and on Ollama's port (11434) when
    /// it names none, and `0.0.0.0` (what a server is told to listen on) is this
    /// machine.
    pub fn from_env() -> Self {
        Self::from_environment(&LlmEnvironment::process())
    }

    /// Like [`from_env`](Self::from_env), from these variables. Each address of a
    /// comma-separated list is read so.
    pub fn from_environment(environment: &LlmEnvironment) -> Self {
        let defaults = Self::default();
        let base_url = environment
            .var("OLLAMA_HOST")
            .or_else(|| environment.var("LOOM_LLM_URL"))
            .map(|hosts| {
                let hosts = hosts.split(',').filter(|host| !host.trim().is_empty());
                let addresses: Vec<String> = hosts.map(ollama_address).collect();
                addresses.join(",")
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

/// Ollama's port, where an address that names none is served.
const OLLAMA_PORT: u16 = 11434;

/// An address as Ollama's own tools read `OLLAMA_HOST`: one with a scheme as given;
/// otherwise over http, on Ollama's port when it names none, and the address a server
/// is told to listen on (`0.0.0.0`, `::`) as this machine's.
fn ollama_address(host: &str) -> String {
    let host = host.trim();
    if host.contains("://") {
        return host.to_owned();
    }
    let (authority, path) = match host.split_once('/') {
        Some((authority, path)) => (authority, Some(path)),
        None => (host, None),
    };
    let mut address = String::from("http://");
    let host_port = match authority.rsplit_once('@') {
        Some((credentials, host_port)) => {
            address.push_str(credentials);
            address.push('@');
            host_port
        }
        None => authority,
    };
    address.push_str(&with_port(host_port));
    if let Some(path) = path {
        address.push('/');
        address.push_str(path);
    }
    address
}

/// `host_port` with Ollama's port when it names none, an unspecified address as this
/// machine's.
fn with_port(host_port: &str) -> String {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    let local = |ip: IpAddr| match ip {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    if let Ok(socket) = host_port.parse::<SocketAddr>() {
        return SocketAddr::new(local(socket.ip()), socket.port()).to_string();
    }
    let bare = host_port.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return SocketAddr::new(local(ip), OLLAMA_PORT).to_string();
    }
    let host_port = host_port.trim_end_matches(':');
    match host_port.rsplit_once(':') {
        Some((_, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host_port.to_owned(),
        _ if host_port.is_empty() => format!("127.0.0.1:{OLLAMA_PORT}"),
        _ => format!("{host_port}:{OLLAMA_PORT}"),
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
        let timeouts = Timeouts {
            connect: settings.connect_timeout,
            whole: settings.timeout,
        };
        let bounds = (timeouts, settings.limits);
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
                let reply = message_reply(&value, "/message", measured)?;
                let cut_off = cut_off_at(&value, "/done_reason");
                return Ok(LlmReply { cut_off, ..reply });
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
                    reply.cut_off = cut_off_at(&chunk, "/done_reason");
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
    fn ollama_host_is_read_as_ollama_reads_it() {
        let address = |host: &str| {
            let environment = LlmEnvironment::from_vars([("OLLAMA_HOST", host)]);
            OllamaSettings::from_environment(&environment).base_url
        };
        assert_eq!(address("127.0.0.1:11500"), "http://127.0.0.1:11500");
        assert_eq!(
            address("localhost"),
            "http://localhost:11434",
            "Ollama's port"
        );
        assert_eq!(address("gpu-box"), "http://gpu-box:11434");
        assert_eq!(address("gpu-box:8080"), "http://gpu-box:8080");
        // The address the server is told to listen on: this machine's, to a client.
        assert_eq!(address("0.0.0.0"), "http://127.0.0.1:11434");
        assert_eq!(address("0.0.0.0:11500"), "http://127.0.0.1:11500");
        assert_eq!(address("::"), "http://[::1]:11434");
        assert_eq!(address("[::]:11500"), "http://[::1]:11500");
        assert_eq!(address("::1"), "http://[::1]:11434");
        assert_eq!(address(" 10.0.0.7 "), "http://10.0.0.7:11434");
        assert_eq!(
            address("user:secret@gpu-box"),
            "http://user:secret@gpu-box:11434"
        );
        assert_eq!(address("gpu-box/ollama"), "http://gpu-box:11434/ollama");
        // A scheme given is an address given whole, as Ollama takes it.
        assert_eq!(address("https://ollama.lan"), "https://ollama.lan");
        assert_eq!(
            address("127.0.0.1, gpu-box:11500"),
            "http://127.0.0.1:11434,http://gpu-box:11500",
            "each of a list"
        );
        assert_eq!(
            address("gpu-box, "),
            "http://gpu-box:11434",
            "none for a blank one"
        );
    }

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
