//! The trait every backend implements.

use std::future::Future;
use std::pin::Pin;

use super::{LlmError, LlmReply, LlmRequest, ServerLimits};

/// Where a backend sends the pieces of a streamed answer as they arrive.
///
/// The bridge turns them into [`LlmDelta`](super::LlmDelta) messages, in order, before
/// the request's one [`LlmResponse`](super::LlmResponse).
pub struct DeltaSink {
    send: Box<dyn Fn(String) + Send + Sync>,
}

impl DeltaSink {
    /// A sink that hands every piece to `send`.
    pub fn new(send: impl Fn(String) + Send + Sync + 'static) -> Self {
        Self {
            send: Box::new(send),
        }
    }

    /// A sink that drops every piece, for calling a backend directly.
    pub fn discard() -> Self {
        Self::new(|_| {})
    }

    /// Passes on one piece; empty pieces are dropped.
    pub fn send(&self, text: &str) {
        if !text.is_empty() {
            (self.send)(text.to_owned());
        }
    }
}

/// A boxed future a backend returns.
pub type LlmFuture = Pin<Box<dyn Future<Output = Result<LlmReply, LlmError>> + Send>>;

/// A boxed future of what a server says of its limits; `None` when it says nothing.
pub type LimitsFuture = Pin<Box<dyn Future<Output = Option<ServerLimits>> + Send>>;

/// A source of answers: a model server, or the offline stand-in.
///
/// Futures run on the bridge's own runtime (Tokio), never on the main thread or
/// Bevy's task pools, so a backend may do network I/O freely.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an LLM backend: it does not implement `LlmBackend`",
    label = "not an LLM backend",
    note = "implement `LlmBackend` for `{Self}`: `describe` (a short name for logs) and `complete` (one request to an `LlmFuture`); `model` and `limits` are optional. It must be `Send + Sync + 'static`; wrap it in an `Arc` for `BackendChoice::Custom`"
)]
pub trait LlmBackend: Send + Sync + 'static {
    /// A short name for logs: `offline`, `openai http://127.0.0.1:8080/v1`.
    fn describe(&self) -> String;

    /// The model name requests go to, part of a recorded request's key; empty when
    /// the backend has no such notion.
    fn model(&self) -> &str {
        ""
    }

    /// Answers one request. When `request.stream` is set, the backend sends the
    /// answer's pieces to `deltas` as they arrive; the reply still holds the whole text.
    fn complete(&self, request: &LlmRequest, deltas: DeltaSink) -> LlmFuture;

    /// What the server says of its own limits (llama.cpp's `/props`), asked when the
    /// bridge starts and again once it first answers; by default nothing.
    fn limits(&self) -> LimitsFuture {
        Box::pin(async { None })
    }
}

/// Fails every request with the error that kept a backend from starting, or with
/// why there is none.
pub(super) struct UnavailableBackend(pub(super) LlmError);

impl LlmBackend for UnavailableBackend {
    fn describe(&self) -> String {
        format!("no backend ({})", self.0)
    }

    fn complete(&self, _request: &LlmRequest, _deltas: DeltaSink) -> LlmFuture {
        let error = self.0.clone();
        Box::pin(async move { Err(error) })
    }
}
