//! What a model server's error says, beyond its status: a server still loading its
//! model and a prompt too long for the context are not failures of the server, and
//! the bridge and smart actors treat them differently.

use std::time::Duration;

use super::LlmError;

/// Words servers use when a prompt does not fit their context, lowercase: llama.cpp
/// (`exceed_context_size_error`, "Context size has been exceeded.", "exceeds the
/// available context size"), OpenAI (`context_length_exceeded`), vLLM and LM Studio
/// ("maximum context length"), Ollama ("context length").
const CONTEXT_EXCEEDED: [&str; 7] = [
    "exceed_context_size",
    "context_length_exceeded",
    "context size has been exceeded",
    "exceeds the available context size",
    "larger than the max context size",
    "maximum context length",
    "exceeds maximum context length",
];

/// Words a server uses while it loads its model: llama.cpp's and llama-cpp-python's
/// "Loading model", vLLM's and Ollama's "loading".
const LOADING: [&str; 2] = ["loading model", "model is loading"];

/// The error for an HTTP error status with this body (its start) and `Retry-After`.
pub(super) fn status_error(
    url: &str,
    status: u16,
    body: String,
    retry_after: Option<Duration>,
) -> LlmError {
    let lowercase = body.to_ascii_lowercase();
    if CONTEXT_EXCEEDED
        .iter()
        .any(|words| lowercase.contains(words))
    {
        return LlmError::ContextExceeded(message_of(&body));
    }
    if status == 503 && LOADING.iter().any(|words| lowercase.contains(words)) {
        return LlmError::Loading {
            url: url.to_owned(),
            detail: message_of(&body),
        };
    }
    LlmError::Status {
        status,
        body,
        retry_after,
    }
}

/// The error for an `error` object a server sent in place of an answer or in the
/// middle of a stream.
pub(super) fn reported_error(error: &serde_json::Value, context: &str) -> LlmError {
    let text = error.to_string();
    if CONTEXT_EXCEEDED
        .iter()
        .any(|words| text.to_ascii_lowercase().contains(words))
    {
        return LlmError::ContextExceeded(message_of(&text));
    }
    LlmError::InvalidResponse(format!("{context}: {text}"))
}

/// The `message` of a JSON error body (`{"error": {"message": ...}}`, `{"error": "..."}`,
/// `{"message": ...}`), or the body itself.
fn message_of(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(body) else {
        return body.trim().to_owned();
    };
    let error = value.get("error").unwrap_or(&value);
    error
        .get("message")
        .or(Some(error))
        .and_then(serde_json::Value::as_str)
        .map_or_else(|| body.trim().to_owned(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_cpp_loading_its_model_is_loading() {
        let body = r#"{"error":{"message":"Loading model","type":"unavailable_error","code":503}}"#;
        assert_eq!(
            status_error("http://127.0.0.1:8080/v1", 503, body.to_owned(), None),
            LlmError::Loading {
                url: "http://127.0.0.1:8080/v1".to_owned(),
                detail: "Loading model".to_owned()
            }
        );
        // Overloaded is another 503: a fault, retried and counted.
        let busy = status_error("u", 503, "Service Unavailable".to_owned(), None);
        assert!(matches!(busy, LlmError::Status { status: 503, .. }));
        assert!(busy.is_server_fault());
    }

    #[test]
    fn each_servers_context_errors_are_context_exceeded() {
        for (status, body) in [
            (
                400,
                r#"{"error":{"code":400,"message":"request (4200 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}}"#,
            ),
            (
                500,
                r#"{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}"#,
            ),
            (
                400,
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
            ),
        ] {
            let error = status_error("u", status, body.to_owned(), None);
            assert!(
                matches!(&error, LlmError::ContextExceeded(message) if !message.contains('{')),
                "{body} gave {error:?}"
            );
            assert!(!error.is_retryable() && !error.is_server_fault());
        }
        let streamed =
            serde_json::json!({"message": "Context size has been exceeded.", "code": 500});
        assert!(matches!(
            reported_error(&streamed, "mid-stream"),
            LlmError::ContextExceeded(_)
        ));
    }
}
