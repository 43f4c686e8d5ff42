//! What the HTTP backends share: sending a request, reading an answer whole or
//! line by line, and errors that say what went wrong without leaking secrets.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{LlmError, without_credentials};

/// The HTTP client a backend sends with, each request bounded by `timeout`.
pub(super) fn http_client(timeout: Duration) -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|error| LlmError::Setup(format!("HTTP client: {error}")))
}

/// Where a backend posts: the URL parsed once, and as errors show it.
pub(super) struct ServerUrl {
    url: reqwest::Url,
    /// Without credentials.
    shown: Arc<str>,
}

impl ServerUrl {
    /// `base_url` with `path` appended; an error that says what to fix when it is not
    /// an `http` or `https` URL.
    pub(super) fn new(base_url: &str, path: &str) -> Result<Self, LlmError> {
        let joined = format!("{}{path}", base_url.trim_end_matches('/'));
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

    /// A POST to this URL.
    pub(super) fn post(&self, client: &reqwest::Client) -> reqwest::RequestBuilder {
        client.post(self.url.clone())
    }

    /// One exchange with this URL, bounded by `timeout`.
    pub(super) fn exchange(&self, timeout: Duration) -> Exchange {
        Exchange {
            url: Arc::clone(&self.shown),
            timeout,
        }
    }
}

/// One request to one endpoint: where it went, for errors, and its timeout.
pub(super) struct Exchange {
    /// Without credentials.
    url: Arc<str>,
    timeout: Duration,
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
        // Only the seconds form of Retry-After; a date is treated as absent.
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = response.text().await.unwrap_or_default();
        Err(LlmError::Status {
            status: status.as_u16(),
            retry_after,
            body: truncate(&body, 500),
        })
    }

    /// The whole body.
    pub(super) async fn body(
        &self,
        response: reqwest::Response,
    ) -> Result<impl std::ops::Deref<Target = [u8]> + use<>, LlmError> {
        response
            .bytes()
            .await
            .map_err(|error| self.broke_off(error))
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
            done: false,
        }
    }

    fn error(&self, error: reqwest::Error) -> LlmError {
        let error = error.without_url();
        if error.is_timeout() {
            return LlmError::TimedOut(self.timeout);
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
            url: self.url.to_string(),
            detail,
        }
    }

    /// A failure while reading a body whose headers already arrived.
    fn broke_off(&self, error: reqwest::Error) -> LlmError {
        match self.error(error) {
            LlmError::Unreachable { detail, .. } => {
                LlmError::InvalidResponse(format!("the answer broke off: {detail}"))
            }
            other => other,
        }
    }
}

/// A response body read line by line (server-sent events, NDJSON).
pub(super) struct Lines {
    exchange: Exchange,
    response: reqwest::Response,
    buffer: Vec<u8>,
    done: bool,
}

impl Lines {
    /// The next non-empty line, or `None` when the body ended.
    pub(super) async fn next(&mut self) -> Result<Option<String>, LlmError> {
        loop {
            if let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line).trim().to_owned();
                if line.is_empty() {
                    continue;
                }
                return Ok(Some(line));
            }
            if self.done {
                let rest = String::from_utf8_lossy(&std::mem::take(&mut self.buffer))
                    .trim()
                    .to_owned();
                return Ok((!rest.is_empty()).then_some(rest));
            }
            match self
                .response
                .chunk()
                .await
                .map_err(|error| self.exchange.broke_off(error))?
            {
                Some(chunk) => self.buffer.extend_from_slice(&chunk),
                None => self.done = true,
            }
        }
    }
}

/// A body as JSON, or an error quoting its start.
pub(super) fn json_value(body: &[u8]) -> Result<Value, LlmError> {
    serde_json::from_slice(body).map_err(|error| {
        let start = String::from_utf8_lossy(&body[..body.len().min(800)]).into_owned();
        LlmError::InvalidResponse(format!("not JSON ({error}): {}", truncate(&start, 200)))
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
                truncate(&value.to_string(), 200)
            ))
        })
}

/// One piece of a streamed answer, as JSON.
pub(super) fn stream_chunk(text: &str) -> Result<Value, LlmError> {
    serde_json::from_str(text).map_err(|error| {
        LlmError::InvalidResponse(format!(
            "a stream chunk is not JSON ({error}): {}",
            truncate(text, 200)
        ))
    })
}

/// At most `max` characters of `text`, marked when cut.
pub(super) fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
