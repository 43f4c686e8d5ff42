//! The trait every backend implements.

use std::future::Future;
use std::pin::Pin;

use super::{LlmError, LlmReply, LlmRequest};

/// A boxed future a backend returns.
pub type LlmFuture = Pin<Box<dyn Future<Output = Result<LlmReply, LlmError>> + Send>>;

/// A source of answers: a model server, or the offline stand-in.
///
/// Futures run on the bridge's own runtime (Tokio), never on the main thread or
/// Bevy's task pools, so a backend may do network I/O freely.
pub trait LlmBackend: Send + Sync + 'static {
    /// A short name for logs: `offline`, `openai http://127.0.0.1:8080/v1`.
    fn describe(&self) -> String;

    /// Answers one request.
    fn complete(&self, request: LlmRequest) -> LlmFuture;
}
