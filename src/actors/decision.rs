//! Parsing and validating a model's decision answer.

use serde_json::Value;
use thiserror::Error;

use crate::llm::LlmError;
use crate::prompt::DecisionLimits;

/// A valid decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The chosen index among those offered, or `None` to pass.
    pub action: Option<usize>,
    /// What the actor says aloud; may be empty.
    pub speech: String,
    /// A private thought; may be empty.
    pub thought: String,
}

/// Why an answer was rejected. The actor passes its turn instead.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RejectionReason {
    /// The answer is not one JSON object.
    #[error("the answer is not a JSON object ({0})")]
    NotAnObject(String),
    /// The object has no `action`.
    #[error("the answer has no `action` field")]
    MissingAction,
    /// `action` is neither an index nor null.
    #[error("`action` must be an index number or null, not {0}")]
    BadAction(String),
    /// `action` names an index that was not offered.
    #[error("action {index} was not offered (the choices were 1 to {offered})")]
    NotOffered {
        /// The index the model named.
        index: u64,
        /// How many actions were offered.
        offered: usize,
    },
    /// `speech` or `thought` is not a string.
    #[error("`{0}` must be a string")]
    NotAString(&'static str),
    /// A field is longer than its limit.
    #[error("`{field}` is {length} characters long; the limit is {max}")]
    TooLong {
        /// `speech` or `thought`.
        field: &'static str,
        /// Its length in characters.
        length: usize,
        /// The limit.
        max: usize,
    },
    /// The whole answer is larger than the limit.
    #[error("the answer is {length} bytes long; the limit is {max}")]
    AnswerTooLarge {
        /// Its size in bytes.
        length: usize,
        /// The limit.
        max: usize,
    },
    /// The model gave no answer.
    #[error("no answer from the model: {0}")]
    NoAnswer(LlmError),
    /// The actor's spec is not loaded, so it could not think.
    #[error(
        "actor spec `{0}` is not loaded: check the SmartActor's spec id and the content errors"
    )]
    UnknownSpec(String),
}

/// Parses `{"action": <index or null>, "speech": "...", "thought": "..."}` and checks
/// it against what was offered (indices `1..=offered`) and the size limits.
///
/// Lenient where it costs nothing: a single Markdown code fence around the object is
/// tolerated, other fields are ignored, and a missing `speech` or `thought` is empty.
pub fn parse_decision(
    raw: &str,
    offered: usize,
    limits: &DecisionLimits,
) -> Result<Decision, RejectionReason> {
    if raw.len() > limits.max_answer_bytes {
        return Err(RejectionReason::AnswerTooLarge {
            length: raw.len(),
            max: limits.max_answer_bytes,
        });
    }
    let text = strip_code_fence(raw.trim());
    let value: Value = serde_json::from_str(text)
        .map_err(|error| RejectionReason::NotAnObject(error.to_string()))?;
    let Value::Object(object) = value else {
        return Err(RejectionReason::NotAnObject(format!(
            "got {}",
            kind(&value)
        )));
    };
    let action = match object.get("action") {
        None => return Err(RejectionReason::MissingAction),
        Some(Value::Null) => None,
        Some(Value::Number(number)) => match number.as_u64() {
            Some(index) if index >= 1 && index <= offered as u64 => Some(index as usize),
            Some(index) => return Err(RejectionReason::NotOffered { index, offered }),
            None => return Err(RejectionReason::BadAction(number.to_string())),
        },
        Some(other) => return Err(RejectionReason::BadAction(kind(other).to_owned())),
    };
    let speech = text_field(&object, "speech", limits.max_speech_chars)?;
    let thought = text_field(&object, "thought", limits.max_thought_chars)?;
    Ok(Decision {
        action,
        speech,
        thought,
    })
}

fn text_field(
    object: &serde_json::Map<String, Value>,
    field: &'static str,
    max: usize,
) -> Result<String, RejectionReason> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) => {
            let length = text.chars().count();
            if length > max {
                Err(RejectionReason::TooLong { field, length, max })
            } else {
                Ok(text.trim().to_owned())
            }
        }
        Some(_) => Err(RejectionReason::NotAString(field)),
    }
}

fn strip_code_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.split_once('\n').map_or("", |(_, body)| body);
    rest.trim_end().strip_suffix("```").unwrap_or(rest).trim()
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<Decision, RejectionReason> {
        parse_decision(raw, 3, &DecisionLimits::default())
    }

    #[test]
    fn accepts_an_offered_index_and_null() {
        let decision =
            parse(r#"{"action": 2, "speech": "Evening.", "thought": "A stranger."}"#).unwrap();
        assert_eq!(
            decision,
            Decision {
                action: Some(2),
                speech: "Evening.".into(),
                thought: "A stranger.".into()
            }
        );
        assert_eq!(
            parse(r#"{"action": null, "speech": "", "thought": ""}"#)
                .unwrap()
                .action,
            None
        );
    }

    #[test]
    fn tolerates_one_code_fence() {
        let decision =
            parse("```json\n{\"action\": 1, \"speech\": \"Hi\", \"thought\": \"\"}\n```").unwrap();
        assert_eq!(decision.action, Some(1));
    }

    #[test]
    fn rejects_what_was_not_offered_or_not_an_object() {
        assert_eq!(
            parse(r#"{"action": 4}"#),
            Err(RejectionReason::NotOffered {
                index: 4,
                offered: 3
            })
        );
        assert_eq!(
            parse(r#"{"action": 0}"#),
            Err(RejectionReason::NotOffered {
                index: 0,
                offered: 3
            })
        );
        assert_eq!(
            parse(r#"{"action": -1}"#),
            Err(RejectionReason::BadAction("-1".into()))
        );
        assert_eq!(
            parse(r#"{"action": "2"}"#),
            Err(RejectionReason::BadAction("a string".into()))
        );
        assert_eq!(
            parse(r#"{"speech": "hi"}"#),
            Err(RejectionReason::MissingAction)
        );
        assert!(matches!(
            parse("I will greet Marta."),
            Err(RejectionReason::NotAnObject(_))
        ));
        assert!(matches!(parse("[1]"), Err(RejectionReason::NotAnObject(_))));
        assert_eq!(
            parse(r#"{"action": 1, "speech": 5}"#),
            Err(RejectionReason::NotAString("speech"))
        );
    }

    #[test]
    fn rejects_oversized_answers() {
        let long = "a".repeat(301);
        assert_eq!(
            parse(&format!(r#"{{"action": 1, "speech": "{long}"}}"#)),
            Err(RejectionReason::TooLong {
                field: "speech",
                length: 301,
                max: 300
            })
        );
        let huge = format!(r#"{{"action": 1, "thought": "{}"}}"#, "b".repeat(5000));
        assert!(matches!(
            parse(&huge),
            Err(RejectionReason::AnswerTooLarge { .. })
        ));
    }
}
