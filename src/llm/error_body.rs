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

/// The field of an OpenAI-compatible request a server names when it refuses the answer
/// format: llama-cpp-python's "Input should be 'text' or 'json_object'" at
/// `('body', 'response_format', 'type')`, OpenAI's "Invalid schema for
/// response_format".
const ANSWER_FORMAT_FIELD: &str = "response_format";

/// What OpenAI calls an account out of quota, in a 429's `error.code` and `type`.
const QUOTA_EXCEEDED: &str = "insufficient_quota";

/// Where Ollama's own API takes chats, after the server's address.
const OLLAMA_CHAT: &str = "/api/chat";

/// The most characters of what a server said that an error quotes.
const DETAIL_CHARS: usize = 300;

/// The error for an HTTP error status with this body (its start) and `Retry-After`.
pub(super) fn status_error(
    url: &str,
    status: u16,
    body: String,
    retry_after: Option<Duration>,
) -> LlmError {
    let lowercase = body.to_ascii_lowercase();
    if says_context_exceeded(&lowercase) {
        return context_exceeded(&body);
    }
    if matches!(status, 400 | 422 | 500) && lowercase.contains(ANSWER_FORMAT_FIELD) {
        return LlmError::FormatRefused {
            url: url.to_owned(),
            detail: one_line(&message_of(&body)),
        };
    }
    if status == 404 {
        // Ollama, OpenAI and vLLM name the model they do not have; a path they do not
        // serve is "page not found", "File Not Found", "Not Found".
        let (url, detail) = (url.to_owned(), one_line(&message_of(&body)));
        return if lowercase.contains("model") {
            LlmError::NoSuchModel { url, detail }
        } else {
            let hint = if url.ends_with(OLLAMA_CHAT) {
                "Ollama's address is the server's own, without `/v1` (OLLAMA_HOST=127.0.0.1:11434)"
            } else {
                "an OpenAI-compatible server's address usually ends in `/v1` (LOOM_LLM_URL=http://127.0.0.1:8080/v1), and Ollama's own API needs LOOM_LLM_PROVIDER=ollama"
            };
            LlmError::NoSuchPath { url, detail, hint }
        };
    }
    if matches!(status, 401 | 403) {
        return LlmError::Unauthorized {
            url: url.to_owned(),
            status,
            detail: one_line(&message_of(&body)),
        };
    }
    if status == 429 && lowercase.contains(QUOTA_EXCEEDED) {
        return LlmError::QuotaExceeded {
            url: url.to_owned(),
            detail: one_line(&message_of(&body)),
        };
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
    // As JSON its control characters are escapes; what reorders text is not.
    let text = super::http::excerpt(&error.to_string(), MESSAGE_CHARS);
    if says_context_exceeded(&text.to_ascii_lowercase()) {
        return context_exceeded(&text);
    }
    LlmError::InvalidResponse(format!("{context}: {text}"))
}

/// Whether a lowercase error text says the prompt did not fit the context.
fn says_context_exceeded(lowercase: &str) -> bool {
    CONTEXT_EXCEEDED
        .iter()
        .any(|words| lowercase.contains(words))
}

/// A context error, with the prompt's tokens and the context's size where the server
/// gave them: llama.cpp as `n_prompt_tokens` and `n_ctx` (and in words), OpenAI, vLLM
/// and llama-cpp-python in words ("maximum context length is 4096 tokens … 5175 in
/// the messages").
fn context_exceeded(body: &str) -> LlmError {
    let detail = message_of(body);
    let value = serde_json::from_str::<serde_json::Value>(body).ok();
    let error = value.as_ref().map(|v| v.get("error").unwrap_or(v));
    let field = |name: &str| {
        error
            .and_then(|e| e.get(name))
            .and_then(serde_json::Value::as_u64)
    };
    let said = |phrases: &[&str]| phrases.iter().find_map(|p| number_after(&detail, p));
    LlmError::ContextExceeded {
        prompt_tokens: field("n_prompt_tokens")
            .or_else(|| said(&["request (", "input ("]))
            .or_else(|| number_before(&detail, " in the messages")),
        context: field("n_ctx").or_else(|| {
            said(&[
                "available context size (",
                "max context size (",
                "maximum context length is ",
            ])
        }),
        detail,
    }
}

/// The whole number right after `phrase` in `text`.
fn number_after(text: &str, phrase: &str) -> Option<u64> {
    let start = text.find(phrase)? + phrase.len();
    let digits: String = text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The whole number right before `phrase` in `text`.
fn number_before(text: &str, phrase: &str) -> Option<u64> {
    let end = text.find(phrase)?;
    let start = text[..end]
        .char_indices()
        .rev()
        .find(|(_, c)| !c.is_ascii_digit())
        .map_or(0, |(at, c)| at + c.len_utf8());
    text[start..end].parse().ok()
}

/// What a server said, on one line (a traceback is many), cut to [`DETAIL_CHARS`].
fn one_line(said: &str) -> String {
    let words: Vec<&str> = said.split_whitespace().collect();
    words.join(" ").chars().take(DETAIL_CHARS).collect()
}

/// The `message` of a JSON error body (`{"error": {"message": ...}}`, `{"error": "..."}`,
/// `{"message": ...}`), or the body itself; as an error quotes it
/// ([`excerpt`](super::http::excerpt): its escapes, `\u001b`, decoded are no more shown
/// than the body's own).
fn message_of(body: &str) -> String {
    let value = serde_json::from_str::<serde_json::Value>(body).ok();
    let error = value
        .as_ref()
        .map(|value| value.get("error").unwrap_or(value));
    let message = error.and_then(|error| error.get("message").or(Some(error)));
    let said = message.and_then(serde_json::Value::as_str).unwrap_or(body);
    super::http::excerpt(said.trim(), MESSAGE_CHARS)
}

/// The most characters of a server's message read for its figures (a context's size
/// may come late in it).
const MESSAGE_CHARS: usize = 2_000;

#[cfg(test)]
mod tests {
    use super::*;

    /// A server limiting its rate says so, and how long it asked to wait.
    #[test]
    fn a_rate_limit_says_what_it_is_and_how_long_to_wait() {
        let wait = Some(Duration::from_secs(999_999));
        let said = status_error("u", 429, "slow down".to_owned(), wait).to_string();
        assert_eq!(
            said,
            "the model server answered HTTP 429: slow down (the server limits how often it is \
             asked: ask it less at once, LlmPlugin::concurrency_per_endpoint or \
             `concurrencyPerEndpoint` in llm.ron, or raise its limit); it asked to be asked \
             again in 999999 s"
        );
        let said = status_error("u", 500, "down".to_owned(), None).to_string();
        assert_eq!(said, "the model server answered HTTP 500: down");
        let limited = status_error("u", 429, "slow down".to_owned(), None);
        assert!(
            limited.is_retryable() && !limited.is_server_fault(),
            "a server limiting its rate answered: it is up"
        );
    }

    /// A key refused says which settings hold it, and is not tried again.
    #[test]
    fn an_unauthorized_request_says_where_the_key_goes() {
        let body =
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#;
        for status in [401, 403] {
            let error = status_error("http://127.0.0.1:1/v1", status, body.to_owned(), None);
            let said = error.to_string();
            assert_eq!(
                said,
                format!(
                    "the model server at http://127.0.0.1:1/v1 refused the request as unauthorized \
                     (HTTP {status}: Incorrect API key provided); give it the API key it expects: \
                     LOOM_LLM_API_KEY, the variable `apiKeyEnv` names in llm.ron, or `api_key` in \
                     OpenAiSettings"
                )
            );
            assert!(!error.is_retryable() && !error.is_server_fault());
        }
    }

    /// What a server says is quoted as it looks: a terminal's escapes in its body, or
    /// in the JSON of its error's message, clear no screen and ring no bell.
    #[test]
    fn a_server_s_words_are_quoted_without_what_a_terminal_obeys() {
        let raw = format!(
            "{} down",
            crate::llm::http::excerpt("\u{1b}[2J\u{1b}[31mPWNED\u{1b}[0m\u{7}\r\nall", 500)
        );
        let error = status_error("u", 500, raw, None);
        let said = error.to_string();
        assert_eq!(
            said,
            "the model server answered HTTP 500: [2J[31mPWNED[0m  all down"
        );
        let escaped = r#"{"error":{"message":"no \u001b[2Jmodel \u202egpt"}}"#;
        let said = status_error("u", 404, escaped.to_owned(), None).to_string();
        assert!(said.contains("(no [2Jmodel gpt)"), "{said}");
        let reported = serde_json::json!({ "message": "bad \u{202e}\u{1b}" });
        let said = reported_error(&reported, "mid-stream").to_string();
        assert!(!said.contains(['\u{202e}', '\u{1b}']), "{said}");
    }

    #[test]
    fn a_server_refusing_the_answer_format_says_how_to_change_it() {
        // llama-cpp-python's server, sent a JSON schema as `response_format`.
        let body = r#"{"error":{"message":"1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}","type":"internal_server_error"}}"#;
        let error = status_error("http://127.0.0.1:8765/v1", 500, body.to_owned(), None);
        assert!(matches!(error, LlmError::FormatRefused { .. }), "{error:?}");
        let said = error.to_string();
        assert!(
            said.contains("Input should be 'text' or 'json_object'"),
            "{said}"
        );
        assert!(said.contains("set LOOM_LLM_SCHEMA=json_object"), "{said}");
        assert!(!error.is_retryable() && !error.is_server_fault());
        let other = status_error("u", 500, "internal error".to_owned(), None);
        assert!(matches!(other, LlmError::Status { .. }), "{other:?}");
    }

    #[test]
    fn a_404_says_whether_the_model_or_the_address_is_wrong() {
        let url = "http://127.0.0.1:11434/chat/completions";
        let not_found = |body: &str| status_error(url, 404, body.to_owned(), None);
        // Ollama's, llama.cpp's and vLLM's answers to a path they do not serve: an
        // address without its `/v1`.
        for body in [
            "404 page not found",
            r#"{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}"#,
            r#"{"detail":"Not Found"}"#,
        ] {
            let error = not_found(body);
            assert!(matches!(error, LlmError::NoSuchPath { .. }), "{error:?}");
            let said = error.to_string();
            assert!(said.contains(url) && said.contains("/v1"), "{said}");
        }
        // Ollama's, OpenAI's and vLLM's answers naming a model they do not have.
        for body in [
            r#"{"error":"model \"llama3.2\" not found, try pulling it first"}"#,
            r#"{"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}"#,
            r#"{"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","code":404}"#,
        ] {
            let error = not_found(body);
            assert!(matches!(error, LlmError::NoSuchModel { .. }), "{error:?}");
            let said = error.to_string();
            assert!(said.contains("LOOM_LLM_MODEL"), "{said}");
        }
        let ollama = "http://127.0.0.1:11434/v1/api/chat";
        let wrong = status_error(ollama, 404, "404 page not found".to_owned(), None);
        assert!(wrong.to_string().contains("without `/v1`"), "{wrong}");
        assert!(!not_found("404 page not found").is_retryable());
        assert!(!not_found("404 page not found").is_server_fault());
    }

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

    /// OpenAI's 429 for an account out of quota is no rate limit: waiting does not
    /// help, and the error says what does.
    #[test]
    fn an_account_out_of_quota_is_told_and_not_retried() {
        let body = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        let error = status_error("https://api.example/v1", 429, body.to_owned(), None);
        assert_eq!(
            error,
            LlmError::QuotaExceeded {
                url: "https://api.example/v1".to_owned(),
                detail:
                    "You exceeded your current quota, please check your plan and billing details."
                        .to_owned(),
            }
        );
        assert!(
            !error.is_retryable() && error.is_server_fault(),
            "not asked again, and its breaker opens: a fleet asks another"
        );
        let said = error.to_string();
        assert!(
            said.contains("no quota left") && said.contains("LOOM_LLM_API_KEY"),
            "{said}"
        );
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
                matches!(&error, LlmError::ContextExceeded { detail, .. } if !detail.contains('{')),
                "{body} gave {error:?}"
            );
            assert!(!error.is_retryable() && !error.is_server_fault());
        }
        let streamed =
            serde_json::json!({"message": "Context size has been exceeded.", "code": 500});
        assert!(matches!(
            reported_error(&streamed, "mid-stream"),
            LlmError::ContextExceeded { .. }
        ));
    }

    #[test]
    fn a_context_error_gives_the_prompts_tokens_and_the_context_where_it_says_them() {
        let figures = |body: &str| match status_error("u", 400, body.to_owned(), None) {
            LlmError::ContextExceeded {
                prompt_tokens,
                context,
                ..
            } => (prompt_tokens, context),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            figures(
                r#"{"error":{"code":400,"message":"request (5210 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5210,"n_ctx":4096}}"#
            ),
            (Some(5210), Some(4096))
        );
        assert_eq!(
            figures(
                r#"{"error":{"message":"request (5210 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}}"#
            ),
            (Some(5210), Some(4096)),
            "in words only"
        );
        assert_eq!(
            figures(
                r#"{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 5571 tokens (5175 in the messages, 396 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error"}}"#
            ),
            (Some(5175), Some(4096))
        );
        assert_eq!(
            figures(r#"{"error":{"message":"Context size has been exceeded.","code":500}}"#),
            (None, None)
        );
        assert_eq!(
            figures(
                r#"{"error":{"message":"maximum context length is 99999999999999999999999 tokens —5175 in the messages"}}"#
            ),
            (Some(5175), None),
            "a number too large or after a wide character is read safely"
        );
    }
}
