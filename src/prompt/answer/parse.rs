//! Parsing and validating a model's decision answer: a [`Decision`] read from its JSON,
//! or why it is rejected.

use serde_json::Value;

use super::decision::{Answer, Decision, RejectionReason};
use super::{
    ABILITY_FIELD, ANSWER_FIELD, ANSWER_TYPES, CHOICE_FIELD, Choices, DecisionLimits, LINE_FIELD,
    Offer, QUESTION_FIELD,
};
use crate::world::as_shown;

/// Parses one decision object and checks it against what was offered (actions at
/// indices `1..=actions`, tasks on after them: [`Choices`]) and the size limits:
///
/// - `{"do": <an offered index>, "say": "..."}`: the action or task with that index;
/// - `{"do": 0, "say": "<a short line>"}`: only the line; with no line, a pass;
/// - `{"do": "<an offered command>"}`: an utterance;
/// - `{"use": "<an offered ability's id>", "inputs": {...}, "say": "..."}`;
/// - `{"ask": "<a short question>"}`.
///
/// An invocation's inputs are checked against the offered ability
/// ([`check_invocation`](super::check_invocation)) whatever the server enforced: one
/// left out that the ability requires rejects it, saying to ask instead.
/// Each may carry a `thought`. The longer forms of earlier versions are read too:
/// with a `type` (`{"type": "ACTION", "action": <index>, "speech": "..."}`, `TASK` with
/// `task`, `UTTERANCE` with `utterance`, `COLOR` with `color`, `INVOKE` with `ability`,
/// `inputs` and `speech`, `ASK` with `question`, `NONE`), and without one
/// `{"action": <index or null>, "speech": "..."}`. An utterance is returned as
/// written: smart actors find the offered command it names (`match_utterance`).
///
/// Lenient where it costs nothing: a single Markdown code fence around the object is
/// tolerated, other fields are ignored, a missing line or `thought` is empty, and
/// an `ACTION` naming an offered task's index (or a `TASK` an action's) is read as
/// what the index names: one run of numbers leaves no doubt.
pub fn parse_decision<'a>(
    raw: &str,
    offer: impl Into<Offer<'a>>,
    limits: &DecisionLimits,
) -> Result<Decision, RejectionReason> {
    let offer = offer.into();
    if raw.len() > limits.max_answer_bytes {
        return Err(RejectionReason::AnswerTooLarge {
            length: raw.len(),
            max: limits.max_answer_bytes,
        });
    }
    let text = answer_body(raw);
    let value = serde_json::from_str::<Unambiguous>(text)
        .map_err(|error| RejectionReason::NotAnObject(error.to_string()))?
        .0;
    let Value::Object(object) = value else {
        return Err(RejectionReason::NotAnObject(format!(
            "got {}",
            kind(&value)
        )));
    };
    let object = unwrapped(object);
    let answer = match object.get("type") {
        None | Some(Value::Null) => compact(&object, offer, limits)?,
        Some(kind) => typed(kind, &object, offer, limits)?,
    };
    let thought = text_field(&object, "thought", limits.max_thought_chars)?;
    Ok(Decision { answer, thought })
}

/// A JSON value in which no object names a key twice: `{"do": 1, "do": 3}` is no
/// answer, where a plain [`Value`] would keep the last and take 3.
struct Unambiguous(Value);

impl<'de> serde::Deserialize<'de> for Unambiguous {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(UnambiguousVisitor)
            .map(Unambiguous)
    }
}

struct UnambiguousVisitor;

impl<'de> serde::de::Visitor<'de> for UnambiguousVisitor {
    type Value = Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Unambiguous(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Unambiguous(value) = map.next_value()?;
            match object.entry(key) {
                serde_json::map::Entry::Vacant(field) => {
                    field.insert(value);
                }
                serde_json::map::Entry::Occupied(field) => {
                    let said = format!("`{}` is given twice: give each field once", field.key());
                    return Err(serde::de::Error::custom(said));
                }
            }
        }
        Ok(Value::Object(object))
    }
}

/// An answer in the longer form, with a `type` (`kind`).
fn typed(
    kind: &Value,
    object: &serde_json::Map<String, Value>,
    offer: Offer<'_>,
    limits: &DecisionLimits,
) -> Result<Answer, RejectionReason> {
    let answer_type = match kind {
        Value::String(name) => ANSWER_TYPES
            .iter()
            .find(|known| known.eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| RejectionReason::UnknownType(format!("\"{name}\"")))?,
        other => return Err(RejectionReason::UnknownType(self::kind(other).to_owned())),
    };
    let choices = offer.choices;
    let offered = choices.total();
    let speech_limit = limits.max_speech_chars;
    let answer = match *answer_type {
        "ACTION" => {
            let index = action_index(object.get("action"), offered)?.ok_or(
                RejectionReason::MissingField {
                    answer: "ACTION",
                    field: "action",
                },
            )?;
            chosen(index, spoken(object, "speech", limits)?, choices)
        }
        "TASK" => {
            let index =
                task_index(object.get("task"), choices)?.ok_or(RejectionReason::MissingField {
                    answer: "TASK",
                    field: "task",
                })?;
            chosen(index, spoken(object, "speech", limits)?, choices)
        }
        "UTTERANCE" => {
            let line = text_field(object, "utterance", speech_limit)?;
            if line.is_empty() {
                return Err(RejectionReason::MissingField {
                    answer: "UTTERANCE",
                    field: "utterance",
                });
            }
            Answer::Utterance {
                command: line,
                speech: spoken(object, "speech", limits)?,
            }
        }
        "COLOR" => {
            let line = spoken(object, "color", limits)?;
            if line.is_empty() {
                return Err(RejectionReason::MissingField {
                    answer: "COLOR",
                    field: "color",
                });
            }
            Answer::Color(line)
        }
        "INVOKE" => invoked(object, ("ability", "speech"), offer, limits)?,
        "ASK" => asked(object, "question", limits)?,
        _ => Answer::Pass,
    };
    Ok(answer)
}

/// Whether a choice written as text is an index: digits alone, spaces around them.
fn is_index(written: &str) -> bool {
    let digits = written.trim();
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// An answer in the short form: its keys say its kind.
fn compact(
    object: &serde_json::Map<String, Value>,
    offer: Offer<'_>,
    limits: &DecisionLimits,
) -> Result<Answer, RejectionReason> {
    // An empty `use` or `ask` beside a choice (a model merging the answers' shapes
    // into one) is no invocation or question: the choice is the answer.
    let names = |field: &str| match object.get(field) {
        None => false,
        Some(Value::Null) => !object.contains_key(CHOICE_FIELD),
        Some(Value::String(text)) => !said_nothing(text) || !object.contains_key(CHOICE_FIELD),
        Some(_) => true,
    };
    if names(ABILITY_FIELD) {
        return invoked(object, (ABILITY_FIELD, LINE_FIELD), offer, limits);
    }
    if names(QUESTION_FIELD) {
        return asked(object, QUESTION_FIELD, limits);
    }
    // The older form: `action` and `speech`, and no `do`.
    let short = object.contains_key(CHOICE_FIELD) || !object.contains_key("action");
    let (choice, line, not_an_index): (_, _, fn(String) -> RejectionReason) = if short {
        (
            object.get(CHOICE_FIELD),
            LINE_FIELD,
            RejectionReason::BadChoice,
        )
    } else {
        (object.get("action"), "speech", RejectionReason::BadAction)
    };
    let said = spoken(object, line, limits)?;
    let choices = offer.choices;
    let index = match choice {
        // A line alone says it; nothing at all names no choice.
        None if !object.contains_key(LINE_FIELD) => return Err(RejectionReason::NoChoice),
        Some(Value::String(written)) if short && !is_index(written) => {
            let command = text_field(object, CHOICE_FIELD, limits.max_speech_chars)?;
            if command.is_empty() {
                return Err(RejectionReason::BadChoice("an empty string".to_owned()));
            }
            return Ok(Answer::Utterance {
                command,
                speech: said,
            });
        }
        choice => {
            // An index written as text ("2") is the index.
            let written = match choice {
                Some(Value::String(digits)) if short => digits.trim().parse::<u64>().ok(),
                _ => None,
            };
            let written = written.map(Value::from);
            let choice = written.as_ref().or(choice);
            let offered = choices.total();
            let not_offered = |index| RejectionReason::NotOffered { index, offered };
            match choice {
                Some(number) if short && number.as_u64() == Some(0) => None,
                choice => offered_index(choice, offered, not_offered, not_an_index)?,
            }
        }
    };
    Ok(match index {
        Some(index) => chosen(index, said, choices),
        None if said.is_empty() => Answer::Pass,
        None => Answer::Color(said),
    })
}

/// An `ASK` answer: the question in `field`, said aloud.
fn asked(
    object: &serde_json::Map<String, Value>,
    field: &'static str,
    limits: &DecisionLimits,
) -> Result<Answer, RejectionReason> {
    let question = spoken(object, field, limits)?;
    if question.is_empty() {
        return Err(RejectionReason::MissingField {
            answer: "ASK",
            field,
        });
    }
    Ok(Answer::Ask(question))
}

/// An invocation: the offered ability it names (in `ability_field`), with its inputs
/// checked, saying what is in `line_field`.
fn invoked(
    object: &serde_json::Map<String, Value>,
    (ability_field, line_field): (&'static str, &'static str),
    offer: Offer<'_>,
    limits: &DecisionLimits,
) -> Result<Answer, RejectionReason> {
    let id = match object.get(ability_field) {
        Some(Value::String(id)) if !id.trim().is_empty() => id.trim(),
        None | Some(Value::Null) | Some(Value::String(_)) => {
            return Err(RejectionReason::MissingField {
                answer: "INVOKE",
                field: ability_field,
            });
        }
        Some(_) => return Err(RejectionReason::NotAString(ability_field)),
    };
    let abilities = offer.abilities();
    // Named exactly, or else in another case: ids that differ only in case may both
    // be offered.
    let found = (abilities.iter())
        .find(|ability| ability.id() == id)
        .or_else(|| (abilities.iter()).find(|ability| ability.id().eq_ignore_ascii_case(id)));
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
        speech: spoken(object, line_field, limits)?,
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
        let lines = text.lines().filter(|line| !said_nothing(line)).count();
        if lines > max as usize {
            return Err(RejectionReason::TooManyLines { field, lines, max });
        }
    }
    Ok(text)
}

/// `text` as a line said within `limits`, cut to fit where [`spoken`] would refuse it:
/// its first lines that say something, as many as `max_color_lines` allows, and of
/// those the leading whole words within `max_speech_chars` characters with "…" after
/// them (as much of the first word as fits, when not even it does). For a text no
/// schema held to the limits as the model wrote it: what a tool call says.
pub(super) fn said_within(text: &str, limits: &DecisionLimits) -> String {
    let shown = as_shown(text);
    let lines = shown.trim_matches(unseen).lines();
    let lines = lines.filter(|line| !said_nothing(line));
    let most = limits
        .max_color_lines
        .map_or(usize::MAX, |max| max as usize);
    let text = lines.take(most).collect::<Vec<_>>().join("\n");
    let max = limits.max_speech_chars;
    if text.chars().count() <= max {
        return text;
    }
    let Some(room) = max.checked_sub(1) else {
        return String::new();
    };
    // Where the characters that leave room for the ellipsis end: there, when a word
    // ends there too; else where the last word before it ends, or, when not even the
    // first word fits, there all the same.
    let limit = (text.char_indices().nth(room)).map_or(text.len(), |(at, _)| at);
    let cut = if text[limit..].starts_with(char::is_whitespace) {
        limit
    } else {
        text[..limit].rfind(char::is_whitespace).unwrap_or(limit)
    };
    let kept = text[..cut].trim_end_matches(unseen);
    format!("{kept}…")
}

fn text_field(
    object: &serde_json::Map<String, Value>,
    field: &'static str,
    max: usize,
) -> Result<String, RejectionReason> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) => {
            // Shown to the player and kept in memories as the text looks: without a
            // terminal's escapes or marks that reorder it; measured so.
            let text = as_shown(text);
            let text = text.trim_matches(unseen);
            let length = text.chars().count();
            if length > max {
                Err(RejectionReason::TooLong { field, length, max })
            } else {
                Ok(text.to_owned())
            }
        }
        Some(_) => Err(RejectionReason::NotAString(field)),
    }
}

/// Whether `c` shows nothing: white space, or a character Unicode does not count as
/// white space that a reader cannot see either (zero-width spaces, joiners and
/// direction marks and isolates, the word joiner and invisible operators, the
/// byte-order mark, the soft hyphen, the combining grapheme joiner, the Mongolian vowel
/// separator), or one [`printable`](crate::world::printable) drops (control
/// characters, tag characters). A model's line of them alone says nothing.
pub(super) fn unseen(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{AD}'
                | '\u{34F}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
        )
        || crate::content::forbidden_character(c).is_some()
}

/// Whether `text` shows nothing ([`unseen`]).
fn said_nothing(text: &str) -> bool {
    text.chars().all(unseen)
}

/// The answer in a model's text: without what shows nothing around it ([`unseen`]),
/// the thinking a reasoning model wrote before it inline (`<think>…</think>`, which
/// DeepSeek-R1 and Qwen3 write when the server does not take it apart; the opening tag
/// may be the prompt's, leaving only `…</think>`), or a code fence around it. Thinking
/// that never ends leaves no answer: empty.
pub(crate) fn answer_body(raw: &str) -> &str {
    let text = raw.trim_matches(unseen);
    let text = match text.strip_prefix(THOUGHT_BEGINS) {
        Some(thinking) => thought(thinking).unwrap_or_default(),
        // An answer starts as an answer does; thinking begun by the prompt does not.
        None if !text.starts_with(['{', '[', '`']) => thought(text).unwrap_or(text),
        None => text,
    };
    strip_code_fence(text.trim_matches(unseen))
}

/// Where a reasoning model's thinking begins.
pub(super) const THOUGHT_BEGINS: &str = "<think>";
/// Where it ends.
pub(super) const THOUGHT_ENDS: &str = "</think>";

/// What follows the thinking that `text` holds, if it holds its end.
fn thought(text: &str) -> Option<&str> {
    text.split_once(THOUGHT_ENDS).map(|(_, after)| after)
}

fn strip_code_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    // The fence's language (`json`), if any, then the body, on its lines or the
    // fence's own.
    let language = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '.');
    let body = rest
        .trim_start_matches([' ', '\t'])
        .trim_start_matches(language);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
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
    use crate::world::InputValue;
    use serde_json::json;

    fn parse(raw: &str) -> Result<Decision, RejectionReason> {
        parse_decision(raw, 3, &DecisionLimits::default())
    }

    fn answer(raw: &str) -> Answer {
        parse(raw).expect("a valid answer").answer
    }

    #[test]
    fn what_a_model_says_holds_no_control_characters() {
        // A terminal's "clear the screen", a NUL, a right-to-left override.
        let said = r#"{"do": 0, "say": "Evening.\u001b[2J\u0000 \u202eDrink?", "thought": "\u001b[31mA stranger."}"#;
        let decision = parse(said).expect("a valid answer");
        assert_eq!(decision.answer, Answer::Color("Evening.[2J Drink?".into()));
        assert_eq!(decision.thought, "[31mA stranger.");
        // A carriage return alone, which a terminal writes over a line with, breaks one.
        assert_eq!(
            answer(r#"{"do": 0, "say": "Evening.\rDrink?\r\nAle?"}"#),
            Answer::Color("Evening.\nDrink?\nAle?".into())
        );
        assert_eq!(
            answer(r#"{"ask": "How long?\u0007", "say": ""}"#),
            Answer::Ask("How long?".into())
        );
        // A question of control characters alone beside a choice asks nothing.
        assert_eq!(
            answer(r#"{"do": 2, "ask": "\u0007\u001b"}"#),
            Answer::Action {
                index: 2,
                speech: String::new()
            }
        );
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
            Answer::Utterance {
                command: "pick up the mug".into(),
                speech: String::new()
            }
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
        for fenced in [
            "```json {\"do\": 1, \"say\": \"Hi\"}```",
            "```{\"do\": 1, \"say\": \"Hi\"}```",
            "```\n{\"do\": 1, \"say\": \"Hi\"}\n```",
            "``` json\n{\"do\": 1, \"say\": \"Hi\"}\n```",
            "```json-ld\n{\"do\": 1, \"say\": \"Hi\"}\n```",
        ] {
            assert_eq!(
                parse(fenced).map(|d| d.answer),
                Ok(Answer::Action {
                    index: 1,
                    speech: "Hi".into()
                }),
                "{fenced}"
            );
        }
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
        assert_eq!(parse(r#"{"speech": "hi"}"#), Err(RejectionReason::NoChoice));
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
            "task 4 was not offered: no task was offered, so answer with an offered action's Index"
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
        assert_eq!(
            answer(two_lines),
            Answer::Color("Hm.\nGo away.".into()),
            "no line limit by default: both lines kept"
        );
    }

    /// One answer of each kind the schema allows, as a server that honours it writes
    /// them (under `answer`): every field filled, the last index offered, every line
    /// as long as the schema lets it be.
    /// Every answer the schema of a decision without abilities allows: each index
    /// (0 for none) with the longest line the schema allows, and with none.
    fn answers_the_schema_allows(offered: Choices, limits: &DecisionLimits) -> Vec<Value> {
        let schema = super::super::decision_schema(offered, limits);
        let choice = &schema["properties"]["do"]["enum"];
        let longest = schema["properties"]["say"]["maxLength"]
            .as_u64()
            .expect("a limit");
        let indices = choice.as_array().expect("the indices listed");
        let lines = ["a".repeat(longest as usize), String::new()];
        (indices.iter())
            .flat_map(|index| {
                lines
                    .iter()
                    .map(move |line| json!({ "do": index, "say": line }))
            })
            .collect()
    }

    #[test]
    fn every_answer_the_schema_allows_is_read_as_its_kind() {
        for max_color_lines in [None, Some(0), Some(1)] {
            let limits = DecisionLimits {
                max_color_lines,
                ..DecisionLimits::default()
            };
            let counts = [0, 1, 3].into_iter();
            let offers = counts.flat_map(|actions| [0, 2].map(|tasks| Choices { actions, tasks }));
            for offered in offers {
                for answer in answers_the_schema_allows(offered, &limits) {
                    let raw = answer.to_string();
                    let parsed = parse_decision(&raw, offered, &limits)
                        .unwrap_or_else(|reason| panic!("{raw} is rejected: {reason}"));
                    let speech = answer["say"].as_str().unwrap_or_default().to_owned();
                    let index = answer["do"].as_u64().expect("an index") as usize;
                    let expected = match index.checked_sub(offered.actions) {
                        _ if index == 0 && speech.is_empty() => Answer::Pass,
                        _ if index == 0 => Answer::Color(speech),
                        Some(position) if position > 0 => Answer::Task { position, speech },
                        _ => Answer::Action { index, speech },
                    };
                    assert_eq!(parsed.answer, expected, "{raw}");
                }
            }
        }
    }

    #[test]
    fn reads_each_short_answer_and_says_what_is_wrong_with_a_bad_one() {
        let offered = Choices {
            actions: 2,
            tasks: 1,
        };
        let limits = DecisionLimits::default();
        let read = |raw: &str| parse_decision(raw, offered, &limits);
        let answer = |raw: &str| read(raw).expect("valid").answer;
        assert_eq!(
            answer(r#"{"do": 2, "say": "Evening, dearie."}"#),
            Answer::Action {
                index: 2,
                speech: "Evening, dearie.".into()
            }
        );
        assert_eq!(
            answer(r#"{"do": 3, "say": ""}"#),
            Answer::Task {
                position: 1,
                speech: String::new()
            }
        );
        assert_eq!(
            answer(r#"{"do": 0, "say": " Hm. "}"#),
            Answer::Color("Hm.".into())
        );
        assert_eq!(answer(r#"{"do": 0, "say": ""}"#), Answer::Pass);
        // Invisible characters (zero-width spaces and joiners, a byte-order mark)
        // say nothing, alone or around the words.
        assert_eq!(
            answer("{\"do\": 0, \"say\": \"\u{200b}\u{2060} \u{feff}\"}"),
            Answer::Pass
        );
        assert_eq!(
            answer("{\"do\": 0, \"say\": \"\u{200d}Hm.\u{200c}\"}"),
            Answer::Color("Hm.".into())
        );
        assert_eq!(
            answer("<think>\nA stranger. Say little.\n</think>\n\n{\"do\": 0, \"say\": \"Hm.\"}"),
            Answer::Color("Hm.".into()),
            "after a reasoning model's thinking"
        );
        assert_eq!(
            answer("A stranger. Say little.\n</think>\n{\"do\": 0, \"say\": \"Hm.\"}"),
            Answer::Color("Hm.".into()),
            "after thinking the prompt opened"
        );
        assert_eq!(
            answer("{\"do\": 0, \"say\": \"I </think> too.\"}"),
            Answer::Color("I </think> too.".into()),
            "an answer that says the tag is an answer"
        );
        assert_eq!(
            answer("\u{feff}\u{200b}{\"do\": 0, \"say\": \"Hm.\"}\u{200b}"),
            Answer::Color("Hm.".into()),
            "around the answer"
        );
        assert_eq!(answer(r#"{"do": null}"#), Answer::Pass);
        assert_eq!(answer(r#"{"say": "Hm."}"#), Answer::Color("Hm.".into()));
        assert_eq!(
            answer(r#"{"do": " pour ale "}"#),
            Answer::Utterance {
                command: "pour ale".into(),
                speech: String::new()
            }
        );
        assert_eq!(
            answer(r#"{"do": "pour ale", "say": "Coming up."}"#),
            Answer::Utterance {
                command: "pour ale".into(),
                speech: "Coming up.".into()
            },
            "a line said with a command is kept"
        );
        // An index written as text is the index.
        assert_eq!(
            answer(r#"{"do": " 2 ", "say": "Here."}"#),
            Answer::Action {
                index: 2,
                speech: "Here.".into()
            }
        );
        assert_eq!(
            answer(r#"{"do": "0", "say": "Evening."}"#),
            Answer::Color("Evening.".into())
        );
        assert_eq!(
            read(r#"{"do": "7"}"#),
            Err(RejectionReason::NotOffered {
                index: 7,
                offered: 3
            })
        );
        assert_eq!(
            answer(r#"{"ask": "For how long?"}"#),
            Answer::Ask("For how long?".into())
        );
        let thought = read(r#"{"do": 1, "say": "", "thought": "Busy night."}"#);
        assert_eq!(thought.expect("valid").thought, "Busy night.");
        assert_eq!(
            read(r#"{"do": 4}"#),
            Err(RejectionReason::NotOffered {
                index: 4,
                offered: 3
            })
        );
        assert_eq!(
            read(r#"{"do": 1.5}"#),
            Err(RejectionReason::BadChoice("1.5".into()))
        );
        assert_eq!(
            read(r#"{"do": ""}"#),
            Err(RejectionReason::BadChoice("an empty string".into()))
        );
        assert_eq!(
            read(r#"{"thought": "Hm."}"#),
            Err(RejectionReason::NoChoice)
        );
        assert!(matches!(
            read(&json!({ "do": 1, "say": "a".repeat(301) }).to_string()),
            Err(RejectionReason::TooLong { field: "say", .. })
        ));
        assert_eq!(
            read(r#"{"ask": ""}"#),
            Err(RejectionReason::MissingField {
                answer: "ASK",
                field: "ask"
            })
        );
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
    fn a_field_given_twice_is_no_answer() {
        for raw in [
            r#"{"do": 1, "say": "", "do": 3}"#,
            r#"{"use": "tavern:rent_room", "inputs": {"nights": 2, "nights": 9}}"#,
        ] {
            let Err(RejectionReason::NotAnObject(why)) = parse(raw) else {
                panic!("{raw} is ambiguous");
            };
            assert!(why.contains("is given twice"), "{why}");
        }
        assert_eq!(
            answer(r#"{"do": 1, "say": "", "thought": "x", "inputs": [{"a": 1}, {"a": 2}]}"#),
            Answer::Action {
                index: 1,
                speech: String::new()
            },
            "the same key in two objects is no repeat"
        );
    }

    #[test]
    fn an_ability_named_exactly_goes_before_one_differing_in_case() {
        let inn = inn_abilities();
        let rent = inn.iter().next().expect("the room").clone();
        let mut definition = (*rent.definition).clone();
        definition.id = "tavern:RENT_ROOM".to_owned();
        let shouted = crate::world::OfferedAbility {
            definition: std::sync::Arc::new(definition),
            ..rent
        };
        // Two ids that differ only in case, the other first.
        let abilities: crate::world::OfferedAbilities = std::iter::once(shouted)
            .chain(inn.iter().cloned())
            .collect();
        let offer = Offer {
            choices: Choices::from(2),
            abilities: Some(&abilities),
            as_tools: false,
        };
        let limits = DecisionLimits::default();
        let invoked = |raw: &str| match parse_decision(raw, offer, &limits) {
            Ok(Decision {
                answer: Answer::Invoke { ability, .. },
                ..
            }) => ability,
            other => panic!("an invocation: {other:?}"),
        };
        let exact = r#"{"use": "tavern:rent_room", "inputs": {"nights": 2}}"#;
        assert_eq!(invoked(exact), "tavern:rent_room");
        let shouted = r#"{"use": "tavern:RENT_ROOM", "inputs": {"nights": 2}}"#;
        assert_eq!(invoked(shouted), "tavern:RENT_ROOM");
        // Named in neither's case, the first in the offer.
        let mixed = r#"{"use": "tavern:Rent_Room", "inputs": {"nights": 2}}"#;
        assert_eq!(invoked(mixed), "tavern:RENT_ROOM");
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
        let short = read(r#"{"use": "tavern:rent_room", "inputs": {"nights": 3}, "say": "Done."}"#);
        assert!(
            matches!(&short, Ok(Decision { answer: Answer::Invoke { ability, inputs, speech }, .. })
                if ability == "tavern:rent_room" && inputs.len() == 1 && speech == "Done."),
            "{short:?}"
        );
        let nothing = RejectionReason::NotOffered {
            index: 1,
            offered: 0,
        };
        assert_eq!(
            nothing.to_string(),
            "action 1 was not offered: no action was, so answer with \"do\": 0"
        );
        // An empty one beside a choice is no invocation, nor an empty question.
        for merged in [
            r#"{"do": 2, "say": "Here.", "use": null}"#,
            r#"{"do": 2, "say": "Here.", "use": " ", "inputs": {}}"#,
            r#"{"do": 2, "say": "Here.", "ask": null}"#,
            r#"{"do": 2, "say": "Here.", "ask": ""}"#,
            "{\"do\": 2, \"say\": \"Here.\", \"ask\": \"\u{200b}\"}",
        ] {
            assert_eq!(
                read(merged).map(|decision| decision.answer),
                Ok(Answer::Action {
                    index: 2,
                    speech: "Here.".into()
                }),
                "{merged}"
            );
        }
        assert!(matches!(
            read(r#"{"use": null, "inputs": {}}"#),
            Err(RejectionReason::MissingField {
                answer: "INVOKE",
                field: "use"
            })
        ));
    }

    #[test]
    fn a_text_no_schema_held_is_cut_to_the_speech_limits() {
        let limits = DecisionLimits {
            max_speech_chars: 12,
            max_color_lines: Some(2),
            ..DecisionLimits::default()
        };
        let fits = |text: &str| {
            let said = said_within(text, &limits);
            let object = json!({ "speech": said });
            let checked = spoken(object.as_object().expect("an object"), "speech", &limits);
            assert_eq!(checked.as_deref(), Ok(said.as_str()), "{text:?}");
            said
        };
        assert_eq!(fits("  Two nights. "), "Two nights.");
        assert_eq!(fits("Two nights, then."), "Two nights,…");
        assert_eq!(fits("Of course, of course."), "Of course,…");
        assert_eq!(fits("Incomprehensibly"), "Incomprehen…");
        assert_eq!(fits("Crêpes? Zoë's."), "Crêpes?…");
        assert_eq!(fits("Yes.\n\n \nNo.\nMaybe."), "Yes.\nNo.");
        assert_eq!(fits("A\rB\rC"), "A\nB", "a carriage return breaks a line");
        let silent = DecisionLimits {
            max_speech_chars: 0,
            ..limits
        };
        assert_eq!(said_within("Hello.", &silent), "");
    }

    #[test]
    fn a_tool_calls_chatter_is_cut_to_the_speech_limits_not_refused() {
        let abilities = inn_abilities();
        let offer = Offer {
            choices: Choices::from(2),
            abilities: Some(&abilities),
            as_tools: true,
        };
        let limits = DecisionLimits::default();
        let reply = |text: String| crate::llm::LlmReply {
            text,
            tool_calls: vec![crate::llm::ToolCall {
                name: "tavern__rent_room".to_owned(),
                arguments: json!({ "nights": 2, "guest": "Traveler" }),
            }],
            ..crate::llm::LlmReply::default()
        };
        let said = |text: String| {
            let answer = super::super::tool_call_answer(&reply(text), &abilities, &limits);
            let answer = answer.expect("a call");
            let decision = parse_decision(&answer, offer, &limits);
            let decision = decision.unwrap_or_else(|why| panic!("{why}: {answer}"));
            let Answer::Invoke {
                ability, speech, ..
            } = decision.answer
            else {
                panic!("an invocation: {decision:?}");
            };
            assert_eq!(ability, "tavern:rent_room");
            speech
        };
        assert_eq!(said("Two nights, then.".to_owned()), "Two nights, then.");
        let long = "Of course! ".repeat(40);
        let chatter = said(long.clone());
        assert!(chatter.chars().count() <= limits.max_speech_chars);
        // Whole words, then "…".
        let words = chatter.strip_suffix('…').expect("cut");
        assert!(long.starts_with(words) && long[words.len()..].starts_with(' '));
        assert!(words.len() > 250, "{chatter}");
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
                let properties = answer["properties"].as_object().expect("fields");
                let first = properties.keys().next().cloned().unwrap_or_default();
                let ability = &answer["properties"]["use"]["enum"][0];
                format!("{first} {}", ability.as_str().unwrap_or(""))
                    .trim()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "do",
                "inputs tavern:rent_room",
                "inputs tavern:pour_drink",
                "ask"
            ]
        );
        // An answer the schema allows is read as the invocation it is.
        let raw = json!({ "answer": { "use": "tavern:rent_room",
                          "inputs": { "nights": 14, "guest": null }, "say": "" } });
        let decision = parse_decision(&raw.to_string(), offer, &DecisionLimits::default());
        assert!(matches!(
            decision.map(|d| d.answer),
            Ok(Answer::Invoke { .. })
        ));
    }
}
