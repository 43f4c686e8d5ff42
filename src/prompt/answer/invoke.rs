//! Invoking an ability: the inputs an answer gives, checked against the offered
//! ability whatever the server enforced, and their JSON Schema.
//!
//! An invocation names the ability and its inputs by name:
//! `{"use": "tavern:rent_room", "inputs": {"nights": 2}, "say": ""}`. Every
//! input the ability requires must be there (else the actor should have asked); an
//! entity is named as the prompt names it and must be one its scope offers now; a
//! number is within its range, text within its length, a choice one of its choices.

use bevy::prelude::*;
use serde_json::{Map, Number, Value, json};

use crate::content::{AbilityInput, InputType};
use crate::llm::{LlmReply, ToolSpec};
use crate::world::{InputValue, OfferedAbilities, OfferedAbility};

use super::{ABILITY_FIELD, DecisionLimits, LINE_FIELD, RejectionReason};

/// An ability's inputs as an answer gives them (`inputs`: an object, or absent, `null`
/// or empty text for none), checked against `offered`: each by its name, with its
/// value, in the ability's order (the required first). An input given as `null` or as
/// empty text is not given, whatever its name.
pub fn check_invocation(
    offered: &OfferedAbility,
    inputs: Option<&Value>,
) -> Result<Vec<(String, InputValue)>, RejectionReason> {
    let id = offered.id();
    let given = match inputs {
        None => None,
        Some(nothing) if is_nothing(nothing) => None,
        Some(Value::Object(given)) => Some(given),
        Some(other) => {
            return Err(RejectionReason::BadInputs {
                ability: id.to_owned(),
                found: super::parse::kind(other).to_owned(),
            });
        }
    };
    if let Some(given) = given
        && let Some(unknown) = (given.iter())
            .find(|(name, value)| offered.definition.input(name).is_none() && !is_nothing(value))
            .map(|(name, _)| name)
    {
        return Err(RejectionReason::UnknownInput {
            ability: id.to_owned(),
            input: unknown.clone(),
            known: input_names(offered),
        });
    }
    let mut checked = Vec::with_capacity(given.map_or(0, Map::len));
    for (input, required) in offered.definition.all_inputs() {
        let value = given.and_then(|given| given.get(&input.name));
        let value = value.filter(|value| !is_nothing(value));
        match value {
            Some(value) => {
                let value = input_value(offered, input, value).map_err(|problem| {
                    RejectionReason::BadInput {
                        ability: id.to_owned(),
                        input: input.name.clone(),
                        problem,
                    }
                })?;
                checked.push((input.name.clone(), value));
            }
            None if required => {
                return Err(RejectionReason::MissingInput {
                    ability: id.to_owned(),
                    input: input.name.clone(),
                });
            }
            None => {}
        }
    }
    Ok(checked)
}

/// Whether a given value stands for nothing: `null`, or text of spaces.
fn is_nothing(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.trim().is_empty(),
        _ => false,
    }
}

/// Every input's name, for a message.
fn input_names(offered: &OfferedAbility) -> String {
    let names: Vec<&str> = (offered.definition.all_inputs())
        .map(|(input, _)| input.name.as_str())
        .collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// `value` checked as `input` of `offered`; what is wrong with it, otherwise.
fn input_value(
    offered: &OfferedAbility,
    input: &AbilityInput,
    value: &Value,
) -> Result<InputValue, String> {
    match input.kind {
        InputType::Entity => {
            let Value::String(name) = value else {
                return Err("must be a name, as the prompt gives it".to_owned());
            };
            entity_named(offered.candidates(&input.name), name.trim()).map(InputValue::Entity)
        }
        InputType::Integer => {
            let number = number_in(value)?;
            // A whole number past `i64` (`1e20`, `18446744073709551615`) is refused,
            // not clamped: the game would get a number nobody said.
            let float = number.as_f64().unwrap_or(f64::NAN);
            let whole = number.as_i64().or_else(|| {
                let fits = (i64::MIN as f64..i64::MAX as f64).contains(&float);
                (float.fract() == 0.0 && fits).then_some(float as i64)
            });
            let Some(whole) = whole else {
                if float.fract() != 0.0 {
                    return Err(format!("must be a whole number, not {number}"));
                }
                return Err(format!(
                    "must be a whole number from {} to {}, not {number}",
                    i64::MIN,
                    i64::MAX
                ));
            };
            // Compared as whole numbers: past 2^53 floats are 2 apart, and one past a
            // bound would round onto it.
            let exact = |bound: f64| {
                if bound.fract() == 0.0 && bound.abs() < 9.2e18 {
                    (whole as i128).cmp(&(bound as i128))
                } else {
                    (whole as f64).total_cmp(&bound)
                }
            };
            let below = input.min.is_some_and(|min| exact(min).is_lt());
            let above = input.max.is_some_and(|max| exact(max).is_gt());
            within(!(below || above), whole, input)?;
            Ok(InputValue::Integer(whole))
        }
        InputType::Number => {
            let number = number_in(value)?;
            in_range(number.as_f64().unwrap_or(f64::NAN), input)?;
            Ok(InputValue::Number(number))
        }
        InputType::Text => {
            let Value::String(text) = value else {
                return Err("must be text".to_owned());
            };
            let length = text.chars().count();
            match input.max_length {
                Some(max) if length > max => {
                    Err(format!("is {length} characters long; the limit is {max}"))
                }
                _ => Ok(InputValue::Text(text.clone())),
            }
        }
        InputType::Choice => {
            let Value::String(said) = value else {
                return Err(format!("must be one of: {}", input.choices.join(", ")));
            };
            let said = said.trim();
            (input.choices.iter())
                .find(|choice| choice.eq_ignore_ascii_case(said))
                .map(|choice| InputValue::Choice(choice.clone()))
                .ok_or_else(|| format!("\"{said}\" is not one of: {}", input.choices.join(", ")))
        }
    }
}

/// The one candidate called `name` (the same name first, then the same but for case).
fn entity_named(candidates: &[(Entity, String)], name: &str) -> Result<Entity, String> {
    let exact = candidates.iter().filter(|(_, known)| known == name);
    let found: Vec<Entity> = match exact.map(|&(entity, _)| entity).collect::<Vec<_>>() {
        found if !found.is_empty() => found,
        _ => (candidates.iter())
            .filter(|(_, known)| known.eq_ignore_ascii_case(name))
            .map(|&(entity, _)| entity)
            .collect(),
    };
    match found[..] {
        [entity] => Ok(entity),
        [] if candidates.is_empty() => Err(format!(
            "\"{name}\" is not here: nobody and nothing here can be it"
        )),
        [] => {
            let names: Vec<&str> = candidates.iter().map(|(_, n)| n.as_str()).collect();
            Err(format!(
                "\"{name}\" is not here: name one of {}",
                names.join(", ")
            ))
        }
        _ => Err(format!(
            "\"{name}\" names {} here: the game cannot tell which",
            found.len()
        )),
    }
}

/// A number, given as one or as text that reads as one ("2").
fn number_in(value: &Value) -> Result<Number, String> {
    match value {
        Value::Number(number) => Ok(number.clone()),
        Value::String(text) => {
            let text = text.trim();
            text.parse::<i64>()
                .map(Number::from)
                .ok()
                .or_else(|| text.parse::<f64>().ok().and_then(Number::from_f64))
                .ok_or_else(|| format!("must be a number, not \"{text}\""))
        }
        other => Err(format!(
            "must be a number, not {}",
            super::parse::kind(other)
        )),
    }
}

/// Whether `number` is within `input`'s range; what is wrong otherwise.
fn in_range(number: f64, input: &AbilityInput) -> Result<(), String> {
    // JSON holds no NaN; one would be in no range.
    let below = input.min.is_some_and(|min| number < min) || number.is_nan();
    let above = input.max.is_some_and(|max| number > max);
    within(!(below || above), number, input)
}

/// Nothing when `number` is `inside` `input`'s range; otherwise what is wrong.
fn within(
    inside: bool,
    number: impl std::fmt::Display,
    input: &AbilityInput,
) -> Result<(), String> {
    if inside {
        return Ok(());
    }
    // `f64` displays as a person writes: `14`, not `14.0`.
    Err(match (input.min, input.max) {
        (Some(min), Some(max)) => format!("{number} is not from {min} to {max}"),
        (Some(min), None) => format!("{number} is below {min}"),
        (None, Some(max)) => format!("{number} is above {max}"),
        (None, None) => format!("{number} is not a number"),
    })
}

/// The JSON Schema of an invocation of `offered` (`{"use": "<id>", "inputs": {...},
/// "say": "..."}`): its id, each input typed as the ability says (an entity as one of
/// the names its scope offers now, a number within its range, text within its length,
/// a choice among its choices), the required inputs required, and `say` as `line`.
/// Every field is listed as required, an optional input as one that may be `null`, as
/// OpenAI's strict mode wants. A whole number whose range holds a few dozen is listed:
/// every grammar keeps to a list, and some llama.cpp builds do not keep to a range (a
/// number that is not whole is given by its bounds, and checked when it is read).
pub fn invoke_schema(offered: &OfferedAbility, line: &Value) -> Value {
    super::schema::object(&[
        (
            ABILITY_FIELD,
            json!({ "type": "string", "enum": [offered.id()] }),
        ),
        ("inputs", inputs_schema(offered)),
        (LINE_FIELD, line.clone()),
    ])
}

/// The JSON Schema of an invocation's `inputs` for `offered`, as [`invoke_schema`]
/// types them: also the arguments of the ability as a tool ([`ability_tools`]).
pub fn inputs_schema(offered: &OfferedAbility) -> Value {
    let mut inputs = Map::new();
    let mut names = Vec::new();
    for (input, required) in offered.definition.all_inputs() {
        names.push(input.name.as_str());
        let nothing = json!({ "type": "null" });
        // An entity input nobody here can fill (only an optional one is offered so)
        // can only be left out.
        let schema = match input_schema(offered, input) {
            Some(schema) if required => schema,
            Some(schema) => json!({ "anyOf": [schema, nothing] }),
            None => nothing,
        };
        inputs.insert(input.name.clone(), schema);
    }
    json!({
        "type": "object",
        "properties": inputs,
        "required": names,
        "additionalProperties": false
    })
}

/// The abilities offered as tools for a server's native tool calling: each named by
/// its id as a tool name (`mod__ability`, with `_` for any character a tool name does
/// not take, cut to 64 characters, and `_2`, `_3`... after a name an earlier ability
/// has), described by what it does and when to use it, its inputs the arguments.
pub fn ability_tools(abilities: &OfferedAbilities) -> Vec<ToolSpec> {
    (abilities.iter().zip(tool_names(abilities)))
        .map(|(ability, name)| ToolSpec {
            name,
            description: format!(
                "{} When: {}",
                ability.definition.what.trim(),
                ability.definition.when.trim()
            ),
            parameters: inputs_schema(ability),
        })
        .collect()
}

/// The most characters a tool's name may have: OpenAI's limit, which other servers
/// keep too.
const MOST_TOOL_NAME_CHARS: usize = 64;

/// Each offered ability's name as a tool, in their order: its id with `__` for the
/// `:` and `_` for any other character tool names do not take (they take ASCII letters,
/// digits, `_` and `-`), cut to [`MOST_TOOL_NAME_CHARS`]. One an earlier ability has
/// ends in a number (`_2`): a server refuses a request whose tools share a name.
fn tool_names(abilities: &OfferedAbilities) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(abilities.len());
    for ability in abilities.iter() {
        let taken = |c: char| c.is_ascii_alphanumeric() || c == '-';
        let base: String = (ability.id().replacen(':', "__", 1).chars())
            .map(|c| if taken(c) { c } else { '_' })
            .take(MOST_TOOL_NAME_CHARS)
            .collect();
        let mut name = base.clone();
        for number in 2.. {
            if !names.contains(&name) {
                break;
            }
            let suffix = format!("_{number}");
            // ASCII: any length is a character boundary.
            let kept = base.len().min(MOST_TOOL_NAME_CHARS - suffix.len());
            name = format!("{}{suffix}", &base[..kept]);
        }
        names.push(name);
    }
    names
}

/// The answer a reply's first tool call stands for, as the model would have written
/// it: an invocation of the offered ability the tool is (by [`ability_tools`]' names,
/// else the name as it is, which no ability is), with the call's arguments as its
/// inputs and the reply's text, if any, as what is said, cut to the speech `limits`
/// (no schema held it to them, and a valid call is not refused for its chatter).
/// `None` for a reply that calls no tool.
pub fn tool_call_answer(
    reply: &LlmReply,
    abilities: &OfferedAbilities,
    limits: &DecisionLimits,
) -> Option<String> {
    let call = reply.tool_calls.first()?;
    let ability = (abilities.iter().zip(tool_names(abilities)))
        .find(|(_, name)| *name == call.name)
        .map_or(call.name.as_str(), |(ability, _)| ability.id());
    let answer = json!({
        ABILITY_FIELD: ability,
        "inputs": call.arguments,
        LINE_FIELD: super::said_within(super::answer_body(&reply.text), limits)
    });
    Some(answer.to_string())
}

/// The schema of one input's value; `None` for an entity input with no candidate.
fn input_schema(offered: &OfferedAbility, input: &AbilityInput) -> Option<Value> {
    let mut schema = Map::new();
    let mut put = |key: &str, value: Value| {
        schema.insert(key.to_owned(), value);
    };
    match input.kind {
        InputType::Entity => {
            let names: Vec<&str> = (offered.candidates(&input.name).iter())
                .map(|(_, name)| name.as_str())
                .collect();
            if names.is_empty() {
                return None;
            }
            put("type", "string".into());
            put("enum", names.into());
        }
        InputType::Integer if let Some((min, max)) = small_range(input) => {
            // Listed, as every grammar keeps to a list and not all keep to a range.
            put("type", "integer".into());
            put("enum", (min..=max).collect::<Vec<i64>>().into());
        }
        InputType::Integer | InputType::Number => {
            let kind = if input.kind == InputType::Integer {
                "integer"
            } else {
                "number"
            };
            put("type", kind.into());
            let bound = |bound: f64| match input.kind {
                InputType::Integer => Value::from(bound as i64),
                _ => Number::from_f64(bound).map_or(Value::Null, Value::Number),
            };
            if let Some(min) = input.min {
                put("minimum", bound(min));
            }
            if let Some(max) = input.max {
                put("maximum", bound(max));
            }
        }
        InputType::Text => {
            put("type", "string".into());
            if let Some(max) = input.max_length {
                put("maxLength", max.into());
            }
        }
        InputType::Choice => {
            put("type", "string".into());
            put("enum", input.choices.clone().into());
        }
    }
    Some(Value::Object(schema))
}

/// The most whole numbers an integer input's schema lists one by one; a wider range is
/// given by its bounds.
const MAX_LISTED_NUMBERS: i64 = 64;

/// An integer input's bounds, when it has both and they hold few enough numbers to list.
fn small_range(input: &AbilityInput) -> Option<(i64, i64)> {
    let (min, max) = (input.min?.ceil(), input.max?.floor());
    let count = max - min + 1.0;
    (count >= 1.0 && count <= MAX_LISTED_NUMBERS as f64).then_some((min as i64, max as i64))
}

/// The most characters an invocation of `ability` takes beyond a decision's own
/// answer: its id, and each input's name and longest value (a text without
/// `maxLength` up to `longest_text`), with the JSON around them.
pub(super) fn invocation_chars(ability: &OfferedAbility, longest_text: usize) -> usize {
    const AROUND_ABILITY: usize = 24; // `"use": "", "inputs": {}, `
    const AROUND_INPUT: usize = 8; // `"": "", `
    const LONGEST_NUMBER: usize = 24;
    let longest_candidate = |name: &str| {
        let candidates = ability.candidates.iter().find(|(input, _)| input == name);
        let names = candidates.map(|(_, found)| found.iter().map(|(_, name)| name.len()));
        names.and_then(Iterator::max).unwrap_or(0)
    };
    let inputs = ability.definition.all_inputs().map(|(input, _)| {
        let value = match input.kind {
            InputType::Entity => longest_candidate(&input.name),
            InputType::Integer | InputType::Number => LONGEST_NUMBER,
            InputType::Text => input.max_length.unwrap_or(longest_text),
            InputType::Choice => (input.choices.iter()).map(String::len).max().unwrap_or(0),
        };
        (input.name.len() + AROUND_INPUT).saturating_add(value)
    });
    let id = ability.id().len() + AROUND_ABILITY;
    inputs.fold(id, usize::saturating_add)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::content::AbilityDefinition;
    use crate::prompt::DecisionLimits;

    fn entity(n: u32) -> Entity {
        Entity::from_raw_u32(n).expect("a valid index")
    }

    /// Marta's room: nights (1–14) required; the guest (Traveler or Brom), a note
    /// (at most 20 characters), a meal (bread or stew) and a deposit (0.5 to 10)
    /// optional.
    fn rent_room() -> OfferedAbility {
        let definition: AbilityDefinition = serde_json::from_value(json!({
            "id": "tavern:rent_room", "description": "d", "what": "w", "when": "w",
            "inputs": {
                "required": [{ "name": "nights", "type": "integer", "min": 1, "max": 14 }],
                "optional": [
                    { "name": "guest", "type": "entity", "scope": "characters_here" },
                    { "name": "note", "type": "text", "maxLength": 20 },
                    { "name": "meal", "type": "choice", "choices": ["bread", "stew"] },
                    { "name": "deposit", "type": "number", "min": 0.5, "max": 10 }
                ]
            }
        }))
        .expect("an ability");
        OfferedAbility {
            definition: Arc::new(definition),
            candidates: vec![(
                "guest".to_owned(),
                vec![
                    (entity(4), "Brom".to_owned()),
                    (entity(3), "Traveler".to_owned()),
                ],
            )],
        }
    }

    /// Every ability goes out under a name a server takes as a tool's (letters,
    /// digits, `_` and `-`, at most 64), its own, whatever its id holds; a call of
    /// that name comes back as that ability.
    #[test]
    fn every_ability_is_a_tool_of_a_name_of_its_own_that_servers_take() {
        let ids = [
            "tavern:rent_room".to_owned(),
            "tavern:rent.room".to_owned(),
            "tavern:rent room".to_owned(),
            "tavern:née".to_owned(),
            format!("tavern:{}", "long".repeat(20)),
            format!("tavern:{}x", "long".repeat(20)),
        ];
        let abilities: OfferedAbilities = (ids.iter())
            .map(|id| {
                let mut ability = rent_room();
                let mut definition = (*ability.definition).clone();
                definition.id = id.clone();
                ability.definition = Arc::new(definition);
                ability
            })
            .collect();
        let tools = ability_tools(&abilities);
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(names[0], "tavern__rent_room");
        for name in &names {
            let fits = (1..=64).contains(&name.len())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
            assert!(fits, "`{name}` is no tool name");
        }
        let mut distinct = names.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
        for (id, name) in ids.iter().zip(&names) {
            let reply = LlmReply {
                tool_calls: vec![crate::llm::ToolCall {
                    name: (*name).to_owned(),
                    arguments: json!({ "nights": 2 }),
                }],
                ..LlmReply::default()
            };
            let limits = DecisionLimits::default();
            let answer = tool_call_answer(&reply, &abilities, &limits).expect("a call");
            let answer: Value = serde_json::from_str(&answer).expect("JSON");
            assert_eq!(answer[ABILITY_FIELD], json!(id), "{name}");
        }
    }

    #[test]
    fn an_answer_has_room_for_the_longest_invocation() {
        let limits = DecisionLimits::default();
        let plain = limits.max_answer_tokens();
        let none = OfferedAbilities::default();
        assert_eq!(limits.max_answer_tokens_invoking(&none), plain);
        let rent: OfferedAbilities = [rent_room()].into_iter().collect();
        let with_rent = limits.max_answer_tokens_invoking(&rent);
        // Its id, a 20-character note, the longest guest, meal and two numbers.
        assert!(with_rent as usize >= plain as usize + "tavern:rent_room".len() + 20 + 8 + 5 + 48);
        let mut letter = rent_room();
        let mut definition = (*letter.definition).clone();
        definition.inputs.optional[1].max_length = None;
        letter.definition = Arc::new(definition);
        let letter: OfferedAbilities = [letter].into_iter().collect();
        assert!(
            limits.max_answer_tokens_invoking(&letter) as usize
                >= plain as usize + limits.max_speech_chars,
            "a text of any length: as long as a line said"
        );
        let short = DecisionLimits {
            max_answer_bytes: 500,
            ..limits.clone()
        };
        assert_eq!(
            short.max_answer_tokens_invoking(&letter),
            500,
            "never past the bytes"
        );
    }

    fn check(inputs: Value) -> Result<Vec<(String, InputValue)>, RejectionReason> {
        check_invocation(&rent_room(), Some(&inputs))
    }

    fn problem(inputs: Value) -> String {
        match check(inputs) {
            Ok(values) => panic!("accepted: {values:?}"),
            Err(reason) => reason.to_string(),
        }
    }

    #[test]
    fn every_input_given_well_is_checked_into_its_value() {
        let values = check(json!({
            "nights": 2, "guest": "traveler", "note": "quiet room", "meal": "Stew", "deposit": 2.5
        }))
        .expect("valid");
        assert_eq!(
            values,
            [
                ("nights".to_owned(), InputValue::Integer(2)),
                ("guest".to_owned(), InputValue::Entity(entity(3))),
                ("note".to_owned(), InputValue::Text("quiet room".to_owned())),
                ("meal".to_owned(), InputValue::Choice("stew".to_owned())),
                (
                    "deposit".to_owned(),
                    InputValue::Number(Number::from_f64(2.5).expect("finite"))
                ),
            ]
        );
        let leniently = check(json!({ "nights": "3", "guest": null, "meal": " " }));
        assert_eq!(
            leniently,
            Ok(vec![("nights".to_owned(), InputValue::Integer(3))]),
            "a number as text, and null or blank as not given"
        );
        assert_eq!(check(json!({ "nights": 4.0 })).map(|v| v.len()), Ok(1));
    }

    #[test]
    fn nothing_given_is_no_input_whatever_its_name() {
        // A name the ability does not take, given as nothing.
        let values = check(json!({ "nights": 2, "companion": null, "pet": " " })).expect("valid");
        assert_eq!(values, [("nights".to_owned(), InputValue::Integer(2))]);
        let unknown = check(json!({ "nights": 2, "companion": "Brom" }));
        assert!(
            matches!(unknown, Err(RejectionReason::UnknownInput { .. })),
            "{unknown:?}"
        );
        // Inputs given as empty text, as a tool's empty arguments may be.
        let mut free = (*rent_room().definition).clone();
        free.inputs.required.clear();
        let free = OfferedAbility {
            definition: Arc::new(free),
            ..rent_room()
        };
        assert_eq!(check_invocation(&free, Some(&json!(""))), Ok(Vec::new()));
        let not_inputs = check_invocation(&free, Some(&json!("two nights")));
        assert!(
            matches!(not_inputs, Err(RejectionReason::BadInputs { .. })),
            "{not_inputs:?}"
        );
    }

    #[test]
    fn a_missing_required_input_is_named_and_says_to_ask() {
        let reason = check(json!({ "guest": "Brom" })).expect_err("no nights");
        assert_eq!(
            reason,
            RejectionReason::MissingInput {
                ability: "tavern:rent_room".to_owned(),
                input: "nights".to_owned()
            }
        );
        assert!(reason.to_string().contains("\"ask\""), "{reason}");
        assert!(
            check_invocation(&rent_room(), None).is_err(),
            "no inputs at all"
        );
    }

    #[test]
    fn values_out_of_bounds_or_of_the_wrong_kind_are_refused_with_what_is_wrong() {
        assert!(problem(json!({ "nights": -5 })).contains("-5 is not from 1 to 14"));
        assert!(problem(json!({ "nights": 15 })).contains("not from 1 to 14"));
        assert!(problem(json!({ "nights": 1.5 })).contains("whole number"));
        assert!(problem(json!({ "nights": "two" })).contains("must be a number"));
        assert!(problem(json!({ "nights": 1, "deposit": 0.25 })).contains("from 0.5 to 10"));
        assert!(
            problem(json!({ "nights": 1, "guest": "Silas" }))
                .contains("name one of Brom, Traveler")
        );
        assert!(problem(json!({ "nights": 1, "guest": 3 })).contains("must be a name"));
        assert!(problem(json!({ "nights": 1, "note": "x".repeat(21) })).contains("limit is 20"));
        assert!(problem(json!({ "nights": 1, "meal": "ale" })).contains("one of: bread, stew"));
        assert!(problem(json!({ "nights": 1, "price": 0 })).contains("`price`"));
        assert!(problem(json!([1])).contains("object"));
    }

    #[test]
    fn a_whole_number_past_what_the_game_holds_is_refused_not_clamped() {
        let mut unbounded = rent_room();
        let mut definition = (*unbounded.definition).clone();
        definition.inputs.required[0].max = None;
        unbounded.definition = Arc::new(definition);
        let check =
            |nights: Value| check_invocation(&unbounded, Some(&json!({ "nights": nights })));
        let huge = [json!(1e20), json!(u64::MAX), json!(9.3e18)];
        for nights in huge {
            let reason = check(nights.clone()).expect_err("past i64").to_string();
            assert!(reason.contains("whole number from"), "{nights}: {reason}");
        }
        let most = json!({ "nights": i64::MAX });
        assert_eq!(
            check_invocation(&unbounded, Some(&most)),
            Ok(vec![("nights".to_owned(), InputValue::Integer(i64::MAX))]),
            "the largest said exactly is taken"
        );
        assert_eq!(
            check(json!(4e18)),
            Ok(vec![(
                "nights".to_owned(),
                InputValue::Integer(4_000_000_000_000_000_000)
            )]),
            "a whole float within i64"
        );
        // Past 2^53 floats are 2 apart: one past a bound there rounds onto it.
        let mut bounded = unbounded.clone();
        let mut definition = (*bounded.definition).clone();
        definition.inputs.required[0].max = Some(9_007_199_254_740_992.0);
        bounded.definition = Arc::new(definition);
        let past = json!({ "nights": 9_007_199_254_740_993_i64 });
        let reason = check_invocation(&bounded, Some(&past)).expect_err("one past the bound");
        assert!(
            (reason.to_string()).contains("9007199254740993 is not from 1 to 9007199254740992"),
            "{reason}"
        );
        let fraction = check(json!(2.5)).expect_err("a fraction").to_string();
        assert!(
            fraction.ends_with("must be a whole number, not 2.5"),
            "{fraction}"
        );
    }

    #[test]
    fn an_entity_named_twice_here_is_ambiguous() {
        let twins = [(entity(3), "mug".to_owned()), (entity(4), "mug".to_owned())];
        assert!(entity_named(&twins, "mug").is_err_and(|e| e.contains("names 2")));
        assert_eq!(entity_named(&twins[..1], "MUG"), Ok(entity(3)));
    }

    #[test]
    fn the_schema_types_each_input_and_lets_the_optional_be_null() {
        let line = json!({ "type": "string", "maxLength": 300 });
        let schema = invoke_schema(&rent_room(), &line);
        let inputs = &schema["properties"]["inputs"];
        assert_eq!(
            inputs["properties"]["nights"],
            json!({ "type": "integer", "enum": (1..=14).collect::<Vec<i64>>() })
        );
        assert_eq!(
            inputs["properties"]["guest"],
            json!({ "anyOf": [{ "type": "string", "enum": ["Brom", "Traveler"] }, { "type": "null" }] })
        );
        assert_eq!(
            inputs["properties"]["deposit"]["anyOf"][0],
            json!({ "type": "number", "minimum": 0.5, "maximum": 10.0 })
        );
        assert_eq!(
            inputs["required"],
            json!(["nights", "guest", "note", "meal", "deposit"])
        );
        assert_eq!(
            schema["properties"]["use"]["enum"],
            json!(["tavern:rent_room"])
        );
        assert_eq!(schema["properties"]["say"], line);
    }
}
