//! Parsing and validating a model's decision answer.

use serde_json::Value;
use thiserror::Error;

use super::{ANSWER_FIELD, ANSWER_TYPES, Choices, DecisionLimits, Offer};
use crate::llm::LlmError;
use crate::world::InputValue;

/// A valid decision: what the actor answered, and its private thought, if it gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The answer.
    pub answer: Answer,
    /// A private thought; may be empty.
    pub thought: String,
}

/// One of the answers of the decision contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `ACTION`: the offered action with this index (from 1), with what the actor says
    /// as it acts (may be empty).
    Action {
        /// The chosen index.
        index: usize,
        /// Words said along with it.
        speech: String,
    },
    /// `TASK`: the offered task at this position among the tasks (from 1; the prompt
    /// numbers it on after the actions, [`Choices::task_number`]), with what the actor
    /// says as it sets about it (may be empty).
    Task {
        /// Its position among the offered tasks.
        position: usize,
        /// Words said along with it.
        speech: String,
    },
    /// `UTTERANCE`: a player-like command line, still to be matched against the offered
    /// commands (`match_utterance` in smart actors).
    Utterance(String),
    /// `COLOR`: a short in-character line with no mechanical effect.
    Color(String),
    /// `INVOKE`: the offered ability with this id, with its inputs checked
    /// ([`check_invocation`](super::check_invocation)) and what the actor says as it
    /// does it (may be empty).
    Invoke {
        /// The ability's id.
        ability: String,
        /// Each input given, by name, in the ability's order.
        inputs: Vec<(String, InputValue)>,
        /// Words said along with it.
        speech: String,
    },
    /// `ASK`: a short question for an input an ability needs and nobody gave; said
    /// aloud, it keeps the conversation open for the answer.
    Ask(String),
    /// `NONE`: the actor does nothing this turn.
    Pass,
}

impl Decision {
    /// The chosen index, for an `ACTION` answer.
    pub fn action(&self) -> Option<usize> {
        match self.answer {
            Answer::Action { index, .. } => Some(index),
            _ => None,
        }
    }

    /// The chosen task's position among the offered tasks, for a `TASK` answer.
    pub fn task(&self) -> Option<usize> {
        match self.answer {
            Answer::Task { position, .. } => Some(position),
            _ => None,
        }
    }

    /// What the actor says aloud: an `ACTION`'s, `TASK`'s or `INVOKE`'s speech, a
    /// `COLOR` line or an `ASK` question; empty otherwise.
    pub fn speech(&self) -> &str {
        match &self.answer {
            Answer::Action { speech, .. }
            | Answer::Task { speech, .. }
            | Answer::Invoke { speech, .. }
            | Answer::Color(speech)
            | Answer::Ask(speech) => speech,
            Answer::Utterance(_) | Answer::Pass => "",
        }
    }
}

/// Why an answer was rejected. The actor passes its turn, or takes the configured
/// fallback (`DecisionFallback` of smart actors), instead.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RejectionReason {
    /// The answer is not one JSON object.
    #[error("the answer is not a JSON object ({0})")]
    NotAnObject(String),
    /// `type` is not one of [`ANSWER_TYPES`].
    #[error(
        "`type` must be \"ACTION\", \"TASK\", \"UTTERANCE\", \"COLOR\", \"INVOKE\", \"ASK\" or \"NONE\", not {0}"
    )]
    UnknownType(String),
    /// The answer lacks the field its type needs.
    #[error("{} {answer} answer needs `{field}`", article(answer))]
    MissingField {
        /// The answer's type.
        answer: &'static str,
        /// The field it lacks.
        field: &'static str,
    },
    /// `action` is not an index.
    #[error("`action` must be an index number, not {0}")]
    BadAction(String),
    /// `task` is not an index.
    #[error("`task` must be an index number, not {0}")]
    BadTask(String),
    /// `action` names an index that was not offered.
    #[error("action {index} was not offered (the choices were 1 to {offered})")]
    NotOffered {
        /// The index the model named.
        index: u64,
        /// How many actions were offered.
        offered: usize,
    },
    /// `task` names an index that is no offered task.
    #[error("{}", task_not_offered(*index, *first, *last))]
    TaskNotOffered {
        /// The index the model named.
        index: u64,
        /// The first task's index.
        first: usize,
        /// The last task's index; below `first` when no task was offered.
        last: usize,
    },
    /// A text field is not a string.
    #[error("`{0}` must be a string")]
    NotAString(&'static str),
    /// A field is longer than its limit.
    #[error("`{field}` is {length} characters long; the limit is {max}")]
    TooLong {
        /// `speech`, `color`, `utterance` or `thought`.
        field: &'static str,
        /// Its length in characters.
        length: usize,
        /// The limit.
        max: usize,
    },
    /// A spoken line has more lines than the actor's `maxColorLines`.
    #[error("`{field}` has {lines} lines; the limit is {max}")]
    TooManyLines {
        /// `speech` or `color`.
        field: &'static str,
        /// Its lines.
        lines: usize,
        /// The limit.
        max: u32,
    },
    /// The whole answer is larger than the limit.
    #[error("the answer is {length} bytes long; the limit is {max}")]
    AnswerTooLarge {
        /// Its size in bytes.
        length: usize,
        /// The limit.
        max: usize,
    },
    /// An `UTTERANCE` names no command of the loaded content.
    #[error("\"{0}\" is not a command: answer with one of the offered commands, word for word")]
    UnknownCommand(String),
    /// An `UTTERANCE` uses a verb the actor's policy (or combat) does not allow.
    #[error("\"{line}\" uses `{verb}`, which this actor may not use now")]
    VerbNotAllowed {
        /// The line.
        line: String,
        /// The verb of the command it names.
        verb: String,
    },
    /// An `UTTERANCE` is a command, but none that was offered (a target not here, say).
    #[error("\"{0}\" was not offered: answer with one of the offered commands, word for word")]
    CommandNotOffered(String),
    /// An `UTTERANCE` matches more than one offered command.
    #[error("\"{line}\" matches {count} offered commands: name one exactly")]
    AmbiguousCommand {
        /// The line.
        line: String,
        /// How many it matches.
        count: usize,
    },
    /// An invocation names an ability that was not offered.
    #[error("{}", ability_not_offered(ability, offered))]
    AbilityNotOffered {
        /// The ability named.
        ability: String,
        /// The abilities offered, by id; empty when none was.
        offered: String,
    },
    /// An invocation's `inputs` is not an object.
    #[error("the inputs of `{ability}` must be an object of inputs by name, not {found}")]
    BadInputs {
        /// The ability.
        ability: String,
        /// What was given.
        found: String,
    },
    /// An invocation gives an input its ability does not have.
    #[error("`{ability}` has no input `{input}`: its inputs are {known}")]
    UnknownInput {
        /// The ability.
        ability: String,
        /// The input named.
        input: String,
        /// Its inputs' names.
        known: String,
    },
    /// An invocation leaves out an input its ability requires: the actor should have
    /// asked for it.
    #[error(
        "`{ability}` needs `{input}`, which was not given: when the player has not said it and it cannot be inferred, ask for it with an ASK answer instead of invoking"
    )]
    MissingInput {
        /// The ability.
        ability: String,
        /// The required input left out.
        input: String,
    },
    /// An invocation gives an input a value its ability does not take.
    #[error("input `{input}` of `{ability}` {problem}")]
    BadInput {
        /// The ability.
        ability: String,
        /// The input.
        input: String,
        /// What is wrong with its value.
        problem: String,
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

/// Parses one decision object and checks it against what was offered (actions at
/// indices `1..=actions`, tasks on after them: [`Choices`]) and the size limits:
///
/// - `{"type": "ACTION", "action": <index>, "speech": "..."}`
/// - `{"type": "TASK", "task": <index>, "speech": "..."}`
/// - `{"type": "UTTERANCE", "utterance": "<an offered command>"}`
/// - `{"type": "COLOR", "color": "<a short line>"}`
/// - `{"type": "INVOKE", "ability": "<an offered ability's id>", "inputs": {...}, "speech": "..."}`
/// - `{"type": "ASK", "question": "<a short question>"}`
/// - `{"type": "NONE"}`
///
/// An invocation's inputs are checked against the offered ability
/// ([`check_invocation`](super::check_invocation)) whatever the server enforced: one
/// left out that the ability requires rejects it, saying to ask instead.
/// Each may carry a `thought`. Without `type`, the older form `{"action": <index or
/// null>, "speech": "..."}` is read as `ACTION`, or as `COLOR` (with speech) or
/// `NONE` (without) when `action` is null. An utterance is returned as written:
/// smart actors find the offered command it names (`match_utterance`).
///
/// Lenient where it costs nothing: a single Markdown code fence around the object is
/// tolerated, other fields are ignored, a missing `speech` or `thought` is empty, and
/// an `ACTION` naming an offered task's index (or a `TASK` an action's) is read as
/// what the index names: one run of numbers leaves no doubt.
pub fn parse_decision<'a>(
    raw: &str,
    offer: impl Into<Offer<'a>>,
    limits: &DecisionLimits,
) -> Result<Decision, RejectionReason> {
    let offer = offer.into();
    let choices = offer.choices;
    let offered = choices.total();
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
    let object = unwrapped(object);
    let answer_type = match object.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => match ANSWER_TYPES
            .iter()
            .find(|known| known.eq_ignore_ascii_case(name.trim()))
        {
            Some(known) => Some(*known),
            None => return Err(RejectionReason::UnknownType(format!("\"{name}\""))),
        },
        Some(other) => return Err(RejectionReason::UnknownType(kind(other).to_owned())),
    };
    let speech_limit = limits.max_speech_chars;
    let answer = match answer_type {
        Some("ACTION") => {
            let index = action_index(object.get("action"), offered)?.ok_or(
                RejectionReason::MissingField {
                    answer: "ACTION",
                    field: "action",
                },
            )?;
            chosen(index, spoken(&object, "speech", limits)?, choices)
        }
        Some("TASK") => {
            let index =
                task_index(object.get("task"), choices)?.ok_or(RejectionReason::MissingField {
                    answer: "TASK",
                    field: "task",
                })?;
            chosen(index, spoken(&object, "speech", limits)?, choices)
        }
        Some("UTTERANCE") => {
            let line = text_field(&object, "utterance", speech_limit)?;
            if line.is_empty() {
                return Err(RejectionReason::MissingField {
                    answer: "UTTERANCE",
                    field: "utterance",
                });
            }
            Answer::Utterance(line)
        }
        Some("COLOR") => {
            let line = spoken(&object, "color", limits)?;
            if line.is_empty() {
                return Err(RejectionReason::MissingField {
                    answer: "COLOR",
                    field: "color",
                });
            }
            Answer::Color(line)
        }
        Some("INVOKE") => invoked(&object, offer, limits)?,
        Some("ASK") => {
            let question = spoken(&object, "question", limits)?;
            if question.is_empty() {
                return Err(RejectionReason::MissingField {
                    answer: "ASK",
                    field: "question",
                });
            }
            Answer::Ask(question)
        }
        Some(_) => Answer::Pass,
        // The older form: `action` and `speech`.
        None => {
            let Some(action) = object.get("action") else {
                return Err(RejectionReason::MissingField {
                    answer: "ACTION",
                    field: "type",
                });
            };
            let speech = spoken(&object, "speech", limits)?;
            match action_index(Some(action), offered)? {
                Some(index) => chosen(index, speech, choices),
                None if speech.is_empty() => Answer::Pass,
                None => Answer::Color(speech),
            }
        }
    };
    let thought = text_field(&object, "thought", limits.max_thought_chars)?;
    Ok(Decision { answer, thought })
}

/// An `INVOKE` answer: the offered ability it names, with its inputs checked.
fn invoked(
    object: &serde_json::Map<String, Value>,
    offer: Offer<'_>,
    limits: &DecisionLimits,
) -> Result<Answer, RejectionReason> {
    let id = match object.get("ability") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.trim(),
        None | Some(Value::Null) | Some(Value::String(_)) => {
            return Err(RejectionReason::MissingField {
                answer: "INVOKE",
                field: "ability",
            });
        }
        Some(_) => return Err(RejectionReason::NotAString("ability")),
    };
    let abilities = offer.abilities();
    let found = (abilities.iter()).find(|ability| ability.id().eq_ignore_ascii_case(id));
    let Some(ability) = found else {
        let offered: Vec<&str> = abilities.iter().map(|ability| ability.id()).collect();
        return Err(RejectionReason::AbilityNotOffered {
            ability: id.to_owned(),
            offered: offered.join(", "),
        });
    };
    let inputs = super::check_invocation(ability, object.get("inputs"))?;
    Ok(Answer::Invoke {
        ability: ability.id().to_owned(),
        inputs,
        speech: spoken(object, "speech", limits)?,
    })
}

/// The answer choosing the offered action or task at `index` (one of the offered
/// indices), saying `speech`.
fn chosen(index: usize, speech: String, choices: Choices) -> Answer {
    match index.checked_sub(choices.actions) {
        Some(position) if position > 0 => Answer::Task { position, speech },
        _ => Answer::Action { index, speech },
    }
}

/// `task` as an offered index (a task's, or leniently an action's); `None` for null
/// or absent.
fn task_index(value: Option<&Value>, choices: Choices) -> Result<Option<usize>, RejectionReason> {
    let last = choices.total();
    let not_offered = |index| RejectionReason::TaskNotOffered {
        index,
        first: choices.actions + 1,
        last,
    };
    offered_index(value, last, not_offered, RejectionReason::BadTask)
}

/// Why an invocation's `ability` names none offered, when `offered` were (by id).
fn ability_not_offered(ability: &str, offered: &str) -> String {
    if offered.is_empty() {
        format!("ability `{ability}` was not offered: no ability was, so answer without one")
    } else {
        format!("ability `{ability}` was not offered (the abilities were {offered})")
    }
}

/// The article before an answer type: "an ACTION", "a COLOR".
fn article(answer: &str) -> &'static str {
    if answer.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    }
}

/// Why a `TASK` answer's `index` names no task, when the offered tasks are numbered
/// `first..=last`.
fn task_not_offered(index: u64, first: usize, last: usize) -> String {
    if last < first {
        format!("task {index} was not offered: no task was offered, so answer with ACTION")
    } else {
        format!("task {index} was not offered (the tasks were {first} to {last})")
    }
}

/// `action` as an offered index; `None` for null or absent.
fn action_index(value: Option<&Value>, offered: usize) -> Result<Option<usize>, RejectionReason> {
    let not_offered = |index| RejectionReason::NotOffered { index, offered };
    offered_index(value, offered, not_offered, RejectionReason::BadAction)
}

/// An index field as one of the indices `1..=offered`; `None` for null or absent.
/// Another number is what `not_offered` says of it, and a value that is no index what
/// `not_an_index` says of its kind.
fn offered_index(
    value: Option<&Value>,
    offered: usize,
    not_offered: impl Fn(u64) -> RejectionReason,
    not_an_index: fn(String) -> RejectionReason,
) -> Result<Option<usize>, RejectionReason> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => match number.as_u64() {
            Some(index) if index >= 1 && index <= offered as u64 => Ok(Some(index as usize)),
            Some(index) => Err(not_offered(index)),
            None => Err(not_an_index(number.to_string())),
        },
        Some(other) => Err(not_an_index(kind(other).to_owned())),
    }
}

/// A line said aloud: within the speech limit and the actor's line limit.
fn spoken(
    object: &serde_json::Map<String, Value>,
    field: &'static str,
    limits: &DecisionLimits,
) -> Result<String, RejectionReason> {
    let text = text_field(object, field, limits.max_speech_chars)?;
    if let Some(max) = limits.max_color_lines {
        let lines = text.lines().filter(|line| !line.trim().is_empty()).count();
        if lines > max as usize {
            return Err(RejectionReason::TooManyLines { field, lines, max });
        }
    }
    Ok(text)
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

pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The answer itself: under a schema it sits alone under `answer`
/// ([`decision_schema`](super::decision_schema)); written freely it is the object.
fn unwrapped(mut object: serde_json::Map<String, Value>) -> serde_json::Map<String, Value> {
    if object.len() == 1
        && let Some(Value::Object(answer)) = object.remove(ANSWER_FIELD)
    {
        return answer;
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(raw: &str) -> Result<Decision, RejectionReason> {
        parse_decision(raw, 3, &DecisionLimits::default())
    }

    fn answer(raw: &str) -> Answer {
        parse(raw).expect("a valid answer").answer
    }

    #[test]
    fn reads_the_four_answer_types() {
        assert_eq!(
            parse(
                r#"{"type": "ACTION", "action": 2, "speech": "Evening.", "thought": "A stranger."}"#
            ),
            Ok(Decision {
                answer: Answer::Action {
                    index: 2,
                    speech: "Evening.".into()
                },
                thought: "A stranger.".into()
            })
        );
        assert_eq!(
            answer(r#"{"type": "UTTERANCE", "utterance": " pick up the mug "}"#),
            Answer::Utterance("pick up the mug".into())
        );
        assert_eq!(
            answer(r#"{"type": "COLOR", "color": "Mind the step, dearie."}"#),
            Answer::Color("Mind the step, dearie.".into())
        );
        assert_eq!(answer(r#"{"type": "NONE"}"#), Answer::Pass);
        assert_eq!(answer(r#"{"type": "none"}"#), Answer::Pass, "any case");
    }

    #[test]
    fn reads_the_older_form_without_a_type() {
        assert_eq!(
            answer(r#"{"action": 1, "speech": "Hi"}"#),
            Answer::Action {
                index: 1,
                speech: "Hi".into()
            }
        );
        assert_eq!(
            answer(r#"{"action": null, "speech": "Hi"}"#),
            Answer::Color("Hi".into())
        );
        assert_eq!(
            answer(r#"{"action": null, "speech": "", "thought": ""}"#),
            Answer::Pass
        );
    }

    #[test]
    fn tolerates_one_code_fence() {
        let decision =
            parse("```json\n{\"type\": \"ACTION\", \"action\": 1, \"speech\": \"Hi\"}\n```")
                .unwrap();
        assert_eq!(decision.action(), Some(1));
        assert_eq!(decision.speech(), "Hi");
    }

    #[test]
    fn rejects_what_was_not_offered_or_not_an_object() {
        assert_eq!(
            parse(r#"{"type": "ACTION", "action": 4}"#),
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
            parse(r#"{"type": "ACTION", "action": "2"}"#),
            Err(RejectionReason::BadAction("a string".into()))
        );
        assert_eq!(
            parse(r#"{"type": "ACTION", "action": null}"#),
            Err(RejectionReason::MissingField {
                answer: "ACTION",
                field: "action"
            })
        );
        assert_eq!(
            parse(r#"{"speech": "hi"}"#),
            Err(RejectionReason::MissingField {
                answer: "ACTION",
                field: "type"
            })
        );
        assert_eq!(
            parse(r#"{"type": "DANCE"}"#),
            Err(RejectionReason::UnknownType("\"DANCE\"".into()))
        );
        assert_eq!(
            parse(r#"{"type": "COLOR", "color": "  "}"#),
            Err(RejectionReason::MissingField {
                answer: "COLOR",
                field: "color"
            })
        );
        assert_eq!(
            parse(r#"{"type": "UTTERANCE"}"#),
            Err(RejectionReason::MissingField {
                answer: "UTTERANCE",
                field: "utterance"
            })
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
    fn a_task_is_named_by_its_index_after_the_actions() {
        let offered = Choices {
            actions: 3,
            tasks: 2,
        };
        let read = |raw: &str| parse_decision(raw, offered, &DecisionLimits::default());
        let task = |position: usize, speech: &str| Answer::Task {
            position,
            speech: speech.into(),
        };
        assert_eq!(
            read(r#"{"type": "TASK", "task": 5, "speech": "Coming up."}"#).map(|d| d.answer),
            Ok(task(2, "Coming up."))
        );
        let decision = read(r#"{"answer": {"type": "TASK", "task": 4, "speech": ""}}"#).unwrap();
        assert_eq!((decision.task(), decision.action()), (Some(1), None));
        // One run of numbers: the index says which it is, whatever the type says.
        assert_eq!(
            read(r#"{"type": "ACTION", "action": 4}"#).map(|d| d.answer),
            Ok(task(1, ""))
        );
        assert_eq!(
            read(r#"{"type": "TASK", "task": 2}"#).map(|d| d.answer),
            Ok(Answer::Action {
                index: 2,
                speech: String::new()
            })
        );
        assert_eq!(
            read(r#"{"type": "TASK", "task": 6}"#),
            Err(RejectionReason::TaskNotOffered {
                index: 6,
                first: 4,
                last: 5
            })
        );
        assert_eq!(
            read(r#"{"type": "TASK"}"#),
            Err(RejectionReason::MissingField {
                answer: "TASK",
                field: "task"
            })
        );
        assert_eq!(
            read(r#"{"type": "TASK", "task": "serve"}"#),
            Err(RejectionReason::BadTask("a string".into()))
        );
        let no_tasks = parse(r#"{"type": "TASK", "task": 4}"#).unwrap_err();
        assert_eq!(
            no_tasks.to_string(),
            "task 4 was not offered: no task was offered, so answer with ACTION"
        );
        assert_eq!(
            read(r#"{"type": "TASK", "task": 9}"#)
                .unwrap_err()
                .to_string(),
            "task 9 was not offered (the tasks were 4 to 5)"
        );
    }

    #[test]
    fn rejects_oversized_answers_and_too_many_lines() {
        let long = "a".repeat(301);
        assert_eq!(
            parse(&format!(r#"{{"type": "COLOR", "color": "{long}"}}"#)),
            Err(RejectionReason::TooLong {
                field: "color",
                length: 301,
                max: 300
            })
        );
        let huge = format!(r#"{{"action": 1, "thought": "{}"}}"#, "b".repeat(5000));
        assert!(matches!(
            parse(&huge),
            Err(RejectionReason::AnswerTooLarge { .. })
        ));
        let one_line = DecisionLimits {
            max_color_lines: Some(1),
            ..DecisionLimits::default()
        };
        let two_lines = r#"{"type": "COLOR", "color": "Hm.\nGo away."}"#;
        assert_eq!(
            parse_decision(two_lines, 3, &one_line),
            Err(RejectionReason::TooManyLines {
                field: "color",
                lines: 2,
                max: 1
            })
        );
        assert!(parse(two_lines).is_ok(), "no line limit by default");
    }

    /// One answer of each kind the schema allows, as a server that honours it writes
    /// them (under `answer`): every field filled, the last index offered, every line
    /// as long as the schema lets it be.
    fn answers_the_schema_allows(
        offered: Choices,
        limits: &DecisionLimits,
    ) -> Vec<(String, Value)> {
        let schema = super::super::decision_schema(offered, limits);
        let answers = schema["properties"]["answer"]["anyOf"]
            .as_array()
            .expect("the answers");
        answers
            .iter()
            .map(|answer| {
                let properties = answer["properties"].as_object().expect("its fields");
                let fields = properties.iter().map(|(name, field)| {
                    let value = match field["type"].as_str() {
                        _ if name == "type" => field["enum"][0].clone(),
                        Some("integer") => field["enum"]
                            .as_array()
                            .and_then(|indices| indices.last().cloned())
                            .unwrap_or_else(|| field["maximum"].clone()),
                        Some("string") => {
                            let longest = field["maxLength"].as_u64().unwrap_or(0) as usize;
                            Value::from("a".repeat(longest))
                        }
                        other => panic!("a field of type {other:?}"),
                    };
                    (name.clone(), value)
                });
                let kind = answer["properties"]["type"]["enum"][0]
                    .as_str()
                    .expect("a type")
                    .to_owned();
                (
                    kind,
                    serde_json::json!({ "answer": Value::Object(fields.collect()) }),
                )
            })
            .collect()
    }

    #[test]
    fn every_answer_the_schema_allows_is_read_as_its_type() {
        for max_color_lines in [None, Some(0), Some(1)] {
            let limits = DecisionLimits {
                max_color_lines,
                ..DecisionLimits::default()
            };
            let counts = [0, 1, 3].into_iter();
            let offers = counts.flat_map(|actions| [0, 2].map(|tasks| Choices { actions, tasks }));
            for offered in offers {
                for (kind, answer) in answers_the_schema_allows(offered, &limits) {
                    let raw = answer.to_string();
                    let parsed = parse_decision(&raw, offered, &limits)
                        .unwrap_or_else(|reason| panic!("{raw} is rejected: {reason}"));
                    let answer = &answer["answer"];
                    let speech = answer["speech"].as_str().unwrap_or_default().to_owned();
                    let expected = match kind.as_str() {
                        "ACTION" => Answer::Action {
                            index: offered.actions,
                            speech,
                        },
                        "TASK" => Answer::Task {
                            position: offered.tasks,
                            speech,
                        },
                        "COLOR" => {
                            Answer::Color(answer["color"].as_str().unwrap_or_default().into())
                        }
                        _ => Answer::Pass,
                    };
                    assert_eq!(parsed.answer, expected, "{raw}");
                }
            }
        }
    }

    /// Marta may rent a room (nights 1–14 required, the guest Brom or Traveler
    /// optional) and pour a drink (ale or wine, optional).
    fn inn_abilities() -> crate::world::OfferedAbilities {
        use std::sync::Arc;
        let ability = |id: &str, inputs: Value| -> Arc<crate::content::AbilityDefinition> {
            let definition =
                json!({ "id": id, "description": "d", "what": "w", "when": "w", "inputs": inputs });
            Arc::new(serde_json::from_value(definition).expect("an ability"))
        };
        let rent = ability(
            "tavern:rent_room",
            json!({
                "required": [{ "name": "nights", "type": "integer", "min": 1, "max": 14 }],
                "optional": [{ "name": "guest", "type": "entity", "scope": "characters_here" }]
            }),
        );
        let pour = ability(
            "tavern:pour_drink",
            json!({ "mode": "implicit",
                    "optional": [{ "name": "drink", "type": "choice", "choices": ["ale", "wine"] }] }),
        );
        let guests = vec![(
            "guest".to_owned(),
            vec![(
                bevy::prelude::Entity::from_raw_u32(3).expect("an index"),
                "Traveler".to_owned(),
            )],
        )];
        [
            crate::world::OfferedAbility {
                definition: rent,
                candidates: guests,
            },
            crate::world::OfferedAbility {
                definition: pour,
                candidates: Vec::new(),
            },
        ]
        .into_iter()
        .collect()
    }

    #[test]
    fn an_invocation_names_an_offered_ability_with_its_inputs_checked() {
        let abilities = inn_abilities();
        let offer = Offer {
            choices: Choices::from(2),
            abilities: Some(&abilities),
            as_tools: false,
        };
        let limits = DecisionLimits::default();
        let read = |raw: &str| parse_decision(raw, offer, &limits);
        let decision = read(
            r#"{"type": "INVOKE", "ability": "tavern:rent_room", "inputs": {"nights": 2, "guest": "Traveler"}, "speech": "Two nights, then."}"#,
        )
        .expect("valid");
        let Answer::Invoke {
            ability,
            inputs,
            speech,
        } = &decision.answer
        else {
            panic!("an invocation: {decision:?}");
        };
        assert_eq!(ability, "tavern:rent_room");
        assert_eq!(inputs[0], ("nights".to_owned(), InputValue::Integer(2)));
        assert_eq!(speech, "Two nights, then.");
        assert_eq!(decision.speech(), "Two nights, then.");
        let implicit = read(r#"{"type": "INVOKE", "ability": "tavern:pour_drink"}"#);
        assert!(
            matches!(&implicit, Ok(Decision { answer: Answer::Invoke { inputs, .. }, .. }) if inputs.is_empty()),
            "an implicit ability with nothing given: {implicit:?}"
        );
        assert!(matches!(
            read(r#"{"type": "INVOKE", "ability": "tavern:rent_room", "inputs": {}}"#),
            Err(RejectionReason::MissingInput { .. })
        ));
        assert!(matches!(
            read(r#"{"type": "INVOKE", "ability": "tavern:rent_room", "inputs": {"nights": -5}}"#),
            Err(RejectionReason::BadInput { .. })
        ));
        let unknown = read(r#"{"type": "INVOKE", "ability": "tavern:free_room", "inputs": {}}"#);
        assert_eq!(
            unknown.map_err(|reason| reason.to_string()),
            Err("ability `tavern:free_room` was not offered (the abilities were tavern:rent_room, tavern:pour_drink)".to_owned())
        );
        let none_offered = parse_decision(
            r#"{"type": "INVOKE", "ability": "tavern:rent_room"}"#,
            2,
            &limits,
        );
        assert!(none_offered.is_err_and(|reason| reason.to_string().contains("no ability was")));
        assert!(matches!(
            read(r#"{"type": "INVOKE", "inputs": {"nights": 1}}"#),
            Err(RejectionReason::MissingField {
                answer: "INVOKE",
                field: "ability"
            })
        ));
    }

    #[test]
    fn a_question_is_said_aloud_within_the_speech_limits() {
        let limits = DecisionLimits::default();
        let decision = parse_decision(
            r#"{"type": "ASK", "question": "For how many nights?"}"#,
            0,
            &limits,
        )
        .expect("valid");
        assert_eq!(
            decision.answer,
            Answer::Ask("For how many nights?".to_owned())
        );
        assert_eq!(decision.speech(), "For how many nights?");
        assert!(matches!(
            parse_decision(r#"{"type": "ASK", "question": ""}"#, 0, &limits),
            Err(RejectionReason::MissingField {
                answer: "ASK",
                field: "question"
            })
        ));
        let long = json!({ "type": "ASK", "question": "?".repeat(301) }).to_string();
        assert!(matches!(
            parse_decision(&long, 0, &limits),
            Err(RejectionReason::TooLong { .. })
        ));
    }

    #[test]
    fn with_abilities_the_schema_offers_each_invocation_and_a_question() {
        let abilities = inn_abilities();
        let offer = Offer {
            choices: Choices::from(1),
            abilities: Some(&abilities),
            as_tools: false,
        };
        let schema = super::super::decision_schema(offer, &DecisionLimits::default());
        let answers = schema["properties"]["answer"]["anyOf"]
            .as_array()
            .expect("answers");
        let kinds: Vec<String> = answers
            .iter()
            .map(|answer| {
                let kind = &answer["properties"]["type"]["enum"][0];
                let ability = &answer["properties"]["ability"]["enum"][0];
                format!(
                    "{} {}",
                    kind.as_str().unwrap_or("?"),
                    ability.as_str().unwrap_or("")
                )
                .trim()
                .to_owned()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "ACTION",
                "INVOKE tavern:rent_room",
                "INVOKE tavern:pour_drink",
                "ASK",
                "COLOR",
                "NONE"
            ]
        );
        // An answer the schema allows is read as the invocation it is.
        let raw = json!({ "answer": { "type": "INVOKE", "ability": "tavern:rent_room",
                          "inputs": { "nights": 14, "guest": null }, "speech": "" } });
        let decision = parse_decision(&raw.to_string(), offer, &DecisionLimits::default());
        assert!(matches!(
            decision.map(|d| d.answer),
            Ok(Answer::Invoke { .. })
        ));
    }
}
