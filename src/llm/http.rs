//! What the HTTP backends share: sending a request, reading an answer whole or
//! line by line, and errors that say what went wrong without leaking secrets.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{LlmError, LlmReply, without_credentials};

/// How much of a server's answer a backend reads before it gives up on the answer.
///
/// A server that sends more fails the request with [`LlmError::TooLarge`], which
/// names the limit to raise; the bridge's thread never holds more than this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseLimits {
    /// The most bytes of an answer: a whole body, or all the lines of a streamed one.
    /// 8 MiB by default.
    pub body_bytes: usize,
    /// The most bytes of one line of a streamed answer (a server-sent event, an NDJSON
    /// object). 1 MiB by default.
    pub line_bytes: usize,
    /// How much of an error status's body is read, to quote in the error; the rest is
    /// not read. 4 KiB by default.
    pub error_body_bytes: usize,
}

impl Default for ResponseLimits {
    fn default() -> Self {
        Self {
            body_bytes: 8 << 20,
            line_bytes: 1 << 20,
            error_body_bytes: 4 << 10,
        }
    }
}

/// The most of a body's announced length reserved before any of it arrives: a
/// decision's answer fits many times over, and a larger body grows as it comes.
const FIRST_RESERVATION: usize = 64 << 10;

/// How long an HTTP backend lets one request take by default: ten minutes, a backstop
/// against a connection that hangs. The bridge's deadline governs a request; it
/// stretches with a slow server's measured speed (a 3B model on two CPU cores reads
/// an actor's first prompt in over a minute), and a shorter timeout here would cut
/// that short.
pub const BACKSTOP_TIMEOUT: Duration = Duration::from_secs(600);

/// How long an HTTP backend waits by default for a server to take a connection: one
/// that takes longer (its host is off, a firewall drops the packets) is unreachable,
/// which the bridge retries elsewhere and its breaker counts. A server on this machine
/// or its network takes one in milliseconds.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request to a server may take: to connect, and in all.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timeouts {
    pub(super) connect: Duration,
    pub(super) whole: Duration,
}

/// The HTTP client a backend sends to `url` with, each request bounded by `timeouts`.
/// It follows no redirect: a prompt goes only to the address the game set
/// ([`LlmError::Redirected`] says where the server redirects to). A server on this
/// machine is reached directly, whatever proxy the environment names (`HTTP_PROXY`,
/// `ALL_PROXY`), which could not reach it; one elsewhere, through that proxy.
fn http_client(timeouts: Timeouts, url: &ServerUrl) -> Result<reqwest::Client, LlmError> {
    let mut client = reqwest::Client::builder()
        .connect_timeout(timeouts.connect)
        .timeout(timeouts.whole)
        .redirect(reqwest::redirect::Policy::none());
    if url.on_this_machine() {
        client = client.no_proxy();
    }
    client
        .build()
        .map_err(|error| LlmError::Setup(format!("HTTP client: {error}")))
}

/// Where a backend sends its chats: the client it sends with, the URL, and how long
/// and how much of an answer it reads.
pub(super) struct ChatEndpoint {
    pub(super) client: reqwest::Client,
    url: ServerUrl,
    timeout: Duration,
    limits: ResponseLimits,
}

impl ChatEndpoint {
    /// `path` on the server at `base_url` ([`ServerUrl::new`]), each request bounded
    /// by `timeouts` and `limits`.
    pub(super) fn new(
        base_url: &str,
        path: &str,
        (timeouts, limits): (Timeouts, ResponseLimits),
    ) -> Result<Self, LlmError> {
        let url = ServerUrl::new(base_url, path)?;
        Ok(Self {
            client: http_client(timeouts, &url)?,
            url,
            timeout: timeouts.whole,
            limits,
        })
    }

    /// A POST of `body` as JSON, and the exchange that reads its answer.
    pub(super) fn post(&self, body: &impl serde::Serialize) -> (reqwest::RequestBuilder, Exchange) {
        let call = self.url.post(&self.client).json(body);
        (call, self.url.exchange(self.timeout, self.limits))
    }
}

/// Where a backend posts: the URL parsed once, and as errors show it.
pub(super) struct ServerUrl {
    url: reqwest::Url,
    /// Without credentials.
    shown: Arc<str>,
}

impl ServerUrl {
    /// `base_url` (without spaces around it, as a settings file may leave) with `path`
    /// appended; an error that says what to fix when it is not an `http` or `https`
    /// URL.
    pub(super) fn new(base_url: &str, path: &str) -> Result<Self, LlmError> {
        let joined = format!("{}{path}", base_url.trim().trim_end_matches('/'));
        let shown: Arc<str> = without_credentials(&joined).into();
        let url = reqwest::Url::parse(&joined)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https"))
            .ok_or_else(|| {
                LlmError::Setup(format!(
                    "the server URL `{}` is not an http(s) URL; give one like \
                     `http://127.0.0.1:8080/v1`",
                    without_credentials(base_url)
                ))
            })?;
        Ok(Self { url, shown })
    }

    /// Whether it names this machine: `localhost`, a loopback address, or the
    /// unspecified address (`0.0.0.0`, which a server started with `--host 0.0.0.0`
    /// prints as its own, and which reaches this machine).
    fn on_this_machine(&self) -> bool {
        let Some(host) = self.url.host_str() else {
            return false;
        };
        let address = host.trim_start_matches('[').trim_end_matches(']');
        match address.parse::<std::net::IpAddr>() {
            Ok(address) => {
                let address = address.to_canonical();
                address.is_loopback() || address.is_unspecified()
            }
            Err(_) => {
                let name = host.trim_end_matches('.').to_ascii_lowercase();
                name == "localhost" || name.ends_with(".localhost")
            }
        }
    }

    /// A GET of this URL.
    pub(super) fn get(&self, client: &reqwest::Client) -> reqwest::RequestBuilder {
        client.get(self.url.clone())
    }

    /// A POST to this URL.
    pub(super) fn post(&self, client: &reqwest::Client) -> reqwest::RequestBuilder {
        client.post(self.url.clone())
    }

    /// One exchange with this URL, bounded by `timeout` and `limits`.
    pub(super) fn exchange(&self, timeout: Duration, limits: ResponseLimits) -> Exchange {
        Exchange {
            url: Arc::clone(&self.shown),
            timeout,
            limits,
        }
    }
}

/// One request to one endpoint: where it went, for errors, its timeout and how much
/// of the answer it reads.
pub(super) struct Exchange {
    /// Without credentials.
    url: Arc<str>,
    timeout: Duration,
    limits: ResponseLimits,
}

impl Exchange {
    /// Sends the request; an error status becomes [`LlmError::Status`] with the body's start.
    pub(super) async fn send(
        &self,
        call: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, LlmError> {
        let response = call.send().await.map_err(|error| self.error(error))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if status.is_redirection() {
            // Where to, whole: a server may name only the path.
            let location = response.headers().get(reqwest::header::LOCATION);
            let to = location.and_then(|value| value.to_str().ok());
            let to = to.map(|to| response.url().join(to).map_or(to.to_owned(), String::from));
            return Err(LlmError::Redirected {
                url: self.url.to_string(),
                status: status.as_u16(),
                to: to.map_or("nowhere it names".to_owned(), |to| {
                    excerpt(&without_credentials(&to), 300)
                }),
            });
        }
        // Only the seconds form of Retry-After; a date is treated as absent.
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = error_body_start(response, self.limits.error_body_bytes).await;
        Err(super::error_body::status_error(
            &self.url,
            status.as_u16(),
            excerpt(&String::from_utf8_lossy(&body), 500),
            retry_after,
        ))
    }

    /// The whole body, up to [`ResponseLimits::body_bytes`].
    pub(super) async fn body(&self, mut response: reqwest::Response) -> Result<Vec<u8>, LlmError> {
        let limit = self.limits.body_bytes;
        let too_large = || LlmError::TooLarge {
            what: "answer",
            limit,
            setting: "body_bytes",
        };
        let announced = response.content_length().unwrap_or(0);
        if announced > limit as u64 {
            return Err(too_large());
        }
        // The announced length is only a hint, believed up to a first reservation: a
        // server may announce more than it sends, and the loop below keeps to the limit.
        let mut body = Vec::with_capacity((announced as usize).min(FIRST_RESERVATION));
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| self.broke_off(error))?
        {
            if chunk.len() > limit - body.len() {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// The whole body as JSON.
    pub(super) async fn json(&self, response: reqwest::Response) -> Result<Value, LlmError> {
        json_value(&self.body(response).await?)
    }

    /// The body line by line, as it arrives.
    pub(super) fn lines(self, response: reqwest::Response) -> Lines {
        Lines {
            exchange: self,
            response,
            buffer: Vec::new(),
            start: 0,
            scanned: 0,
            received: 0,
            done: false,
        }
    }

    fn error(&self, error: reqwest::Error) -> LlmError {
        let error = error.without_url();
        // A connection the server never took is no slow answer: it is unreachable.
        if error.is_timeout() && !error.is_connect() {
            return LlmError::BackendTimedOut(self.timeout);
        }
        // The top-level message repeats the URL; the causes say what went wrong.
        let mut causes = Vec::new();
        let mut refused = false;
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            causes.push(cause.to_string());
            refused |= cause
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
            source = cause.source();
        }
        let detail = if causes.is_empty() {
            error.to_string()
        } else {
            causes.join(": ")
        };
        LlmError::Unreachable {
            url: self.url.to_string(),
            detail,
            refused,
        }
    }

    /// A failure while reading a body whose headers already arrived.
    fn broke_off(&self, error: reqwest::Error) -> LlmError {
        match self.error(error) {
            LlmError::Unreachable { detail, .. } => LlmError::BrokeOff(detail),
            other => other,
        }
    }
}

/// A response body read line by line (server-sent events, NDJSON), bounded by the
/// exchange's [`ResponseLimits`].
///
/// Each byte is looked at once: the search for the next newline goes on from where the
/// last one stopped, and what was read is dropped from the buffer only before more
/// arrives, so a long answer costs time in proportion to its length.
pub(super) struct Lines {
    exchange: Exchange,
    response: reqwest::Response,
    buffer: Vec<u8>,
    /// Where the next line starts in `buffer`; what comes before was returned.
    start: usize,
    /// How far from `start` the buffer holds no newline.
    scanned: usize,
    /// Bytes of the body so far.
    received: usize,
    done: bool,
}

impl Lines {
    /// The next non-empty line, or `None` when the body ended.
    pub(super) async fn next(&mut self) -> Result<Option<String>, LlmError> {
        let limits = self.exchange.limits;
        let line_too_long = || LlmError::TooLarge {
            what: "streamed line",
            limit: limits.line_bytes,
            setting: "line_bytes",
        };
        loop {
            let unread = &self.buffer[self.scanned..];
            if let Some(offset) = unread.iter().position(|&b| b == b'\n') {
                let end = self.scanned + offset;
                let line = &self.buffer[self.start..end];
                if line.len() > limits.line_bytes {
                    return Err(line_too_long());
                }
                let line = String::from_utf8_lossy(line).trim().to_owned();
                self.start = end + 1;
                self.scanned = self.start;
                if line.is_empty() {
                    continue;
                }
                return Ok(Some(line));
            }
            self.scanned = self.buffer.len();
            if self.buffer.len() - self.start > limits.line_bytes {
                return Err(line_too_long());
            }
            if self.done {
                let rest = String::from_utf8_lossy(&self.buffer[self.start..])
                    .trim()
                    .to_owned();
                self.start = self.buffer.len();
                return Ok((!rest.is_empty()).then_some(rest));
            }
            match self
                .response
                .chunk()
                .await
                .map_err(|error| self.exchange.broke_off(error))?
            {
                Some(chunk) => {
                    self.received = self.received.saturating_add(chunk.len());
                    if self.received > limits.body_bytes {
                        return Err(LlmError::TooLarge {
                            what: "answer",
                            limit: limits.body_bytes,
                            setting: "body_bytes",
                        });
                    }
                    // Only the line being read stays: at most `line_bytes`.
                    self.buffer.drain(..self.start);
                    self.scanned -= self.start;
                    self.start = 0;
                    self.buffer.extend_from_slice(&chunk);
                }
                None => self.done = true,
            }
        }
    }
}

/// The start of an error status's body, at most `limit` bytes; the rest is not read.
async fn error_body_start(mut response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = limit - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            // The status already says what went wrong; a body that broke off adds nothing.
            Ok(None) | Err(_) => break,
        }
    }
    body
}

/// A body as JSON, or an error quoting its start.
pub(super) fn json_value(body: &[u8]) -> Result<Value, LlmError> {
    serde_json::from_slice(body).map_err(|error| {
        let start = String::from_utf8_lossy(&body[..body.len().min(800)]).into_owned();
        LlmError::Unreadable(format!("{error}: {}", excerpt(&start, 200)))
    })
}

/// The text at `pointer` in an answer, or an error saying the answer lacks it.
pub(super) fn text_at<'a>(value: &'a Value, pointer: &str) -> Result<&'a str, LlmError> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| {
            LlmError::InvalidResponse(format!(
                "no {} in {}",
                pointer.trim_start_matches('/').replace('/', "."),
                excerpt(&value.to_string(), 200)
            ))
        })
}

/// The reply whose message is at `message` (a JSON pointer) in `value`, with its
/// `usage` and `timings`: the message's text and tool calls. A message that calls
/// tools may have no text; any other must have some.
pub(super) fn message_reply(
    value: &Value,
    message: &str,
    (usage, timings): (Option<super::TokenUsage>, Option<super::ServerTimings>),
) -> Result<LlmReply, LlmError> {
    let tool_calls = (value.pointer(message).map(tool_calls)).unwrap_or_default();
    let text = match text_at(value, &format!("{message}/content")) {
        Ok(text) => text.to_owned(),
        Err(_) if !tool_calls.is_empty() => String::new(),
        Err(error) => return Err(error),
    };
    Ok(LlmReply {
        text,
        usage,
        tool_calls,
        timings,
        cut_off: false,
    })
}

/// Whether a server's reason for ending an answer (OpenAI's `finish_reason`, Ollama's
/// `done_reason`) at `pointer` of `value` is its token limit.
pub(super) fn cut_off_at(value: &Value, pointer: &str) -> bool {
    value.pointer(pointer).and_then(Value::as_str) == Some("length")
}

/// The tools of a request as OpenAI's chat completions and Ollama's chat take them:
/// `[{"type": "function", "function": {"name", "description", "parameters"}}]`.
pub(super) fn tools_body(tools: &[super::ToolSpec]) -> Value {
    let tools = tools
        .iter()
        .map(|tool| serde_json::json!({ "type": "function", "function": tool }));
    Value::Array(tools.collect())
}

/// The tool calls of an answer's message (`message.tool_calls`): each function's name
/// and arguments, given as a JSON object (Ollama) or as text holding one (OpenAI).
pub(super) fn tool_calls(message: &Value) -> Vec<super::ToolCall> {
    let Some(calls) = message.get("tool_calls").and_then(Value::as_array) else {
        return Vec::new();
    };
    (calls.iter())
        .filter_map(|call| {
            let function = call.get("function")?;
            let name = function.get("name")?.as_str()?.to_owned();
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => {
                    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
                }
                Some(arguments) => arguments.clone(),
                None => Value::Null,
            };
            Some(super::ToolCall { name, arguments })
        })
        .collect()
}

/// One piece of a streamed answer, as JSON.
pub(super) fn stream_chunk(text: &str) -> Result<Value, LlmError> {
    serde_json::from_str(text).map_err(|error| {
        LlmError::Unreadable(format!("a stream chunk: {error}: {}", excerpt(text, 200)))
    })
}

/// Outside text (a server's body, a header) as an error quotes it: on one line (a
/// line break or tab a space), without the characters content may not hold either
/// ([`forbidden_character`](crate::content::forbidden_character): a terminal's
/// escapes, a bell, the marks that reorder text), its first `max` characters and "…"
/// when there were more.
pub(super) fn excerpt(text: &str, max: usize) -> String {
    let mut quoted = String::with_capacity(text.len().min(max.saturating_mul(4)));
    let shown = text
        .chars()
        .filter(|&c| crate::content::forbidden_character(c).is_none())
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        });
    for (count, c) in shown.enumerate() {
        if count == max {
            quoted.push('…');
            break;
        }
        quoted.push(c);
    }
    quoted
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::llm::{ToolCall, ToolSpec};

    #[test]
    fn spaces_around_an_address_are_not_part_of_it() {
        let url = ServerUrl::new(" http://127.0.0.1:8080/v1/ \n", "/chat/completions");
        let url = url.expect("a URL");
        assert_eq!(
            url.url.as_str(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(&*url.shown, "http://127.0.0.1:8080/v1/chat/completions");
    }

    #[test]
    fn loopback_addresses_and_localhost_are_this_machine() {
        let here = |base: &str| {
            let url = ServerUrl::new(base, "/chat/completions").expect("a URL");
            url.on_this_machine()
        };
        for base in [
            "http://127.0.0.1:8080/v1",
            "http://127.4.5.6:8080",
            "http://[::1]:8080/v1",
            "http://localhost:11434",
            "http://LocalHost.:11434",
            "http://llm.localhost/v1",
            "http://0.0.0.0:8080/v1",
            "http://[::ffff:127.0.0.1]:8080/v1",
        ] {
            assert!(here(base), "{base}");
        }
        for base in [
            "http://192.168.1.20:8080/v1",
            "https://api.openai.com/v1",
            "http://localhost.example.com/v1",
            "http://[::2]:8080",
        ] {
            assert!(!here(base), "{base}");
        }
    }

    #[test]
    fn tools_go_out_as_functions_and_calls_come_back_with_their_arguments() {
        let tool = ToolSpec {
            name: "tavern__rent_room".to_owned(),
            description: "Rents a room.".to_owned(),
            parameters: json!({ "type": "object" }),
        };
        assert_eq!(
            tools_body(&[tool]),
            json!([{ "type": "function", "function": {
                "name": "tavern__rent_room", "description": "Rents a room.",
                "parameters": { "type": "object" } } }])
        );
        // OpenAI sends the arguments as text, Ollama as an object.
        let message = json!({ "tool_calls": [
            { "function": { "name": "a", "arguments": "{\"nights\": 2}" } },
            { "function": { "name": "b", "arguments": { "nights": 3 } } },
            { "function": { "name": "c", "arguments": "not json" } },
            { "function": { "arguments": {} } }
        ] });
        assert_eq!(
            tool_calls(&message),
            [
                ToolCall {
                    name: "a".into(),
                    arguments: json!({ "nights": 2 })
                },
                ToolCall {
                    name: "b".into(),
                    arguments: json!({ "nights": 3 })
                },
                ToolCall {
                    name: "c".into(),
                    arguments: json!("not json")
                },
            ],
            "a call without a name is left out"
        );
        assert!(tool_calls(&json!({ "content": "hi" })).is_empty());
    }
}
