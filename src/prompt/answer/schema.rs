//! The JSON Schema of a decision answer, derived from what was offered.

use serde_json::{Value, json};

use super::{
    ANSWER_FIELD, CHOICE_FIELD, DecisionLimits, LINE_FIELD, Offer, QUESTION_FIELD, invoke_schema,
};

/// The most offered indices the schema lists one by one; beyond them it gives a range.
/// OpenAI's strict mode takes at most 1,000 enum values in a schema.
const MAX_LISTED_INDICES: usize = 500;

/// The JSON schema of a decision answer when these choices were offered (actions
/// numbered from 1, tasks on after them): `{"do": <index>, "say": "<line>"}`, where
/// `do` is one of the offered indices or 0 for none (only a line, or nothing), and
/// `say` is within the speech limit (empty for an actor that never speaks). With
/// abilities offered in the answer, the answer sits under `answer` and is one of
/// that, an invocation of each offered ability with its inputs typed
/// ([`invoke_schema`](super::invoke_schema)), or `{"ask": "<question>"}` when the
/// actor speaks. A server that honours it can write no answer
/// [`parse_decision`](super::parse_decision) refuses, and no action that was not
/// offered.
///
/// OpenAI's strict structured outputs want an object at the root, with every field
/// required and no others, and no choice (`anyOf`) there: the answer without abilities
/// is that object itself, and only a choice among whole answers needs the wrapper.
/// The grammars of llama.cpp, vLLM and Ollama take the same schema. The parser reads
/// an answer with or without the wrapper. (OpenAI's fine-tuned models do not take
/// `maxLength`; their answers are checked for length when they are parsed.)
///
/// A command in `do` is left out: it is for models that write free text, and under a
/// schema the index says the same in fewer tokens. Without abilities the schema
/// depends only on the numbers offered and the limits, so one schema serves every
/// actor offered as many actions and tasks.
pub fn decision_schema<'a>(offer: impl Into<Offer<'a>>, limits: &DecisionLimits) -> Value {
    let offer = offer.into();
    // An actor that may say no line may only say nothing along with its action.
    let speaks = limits.max_color_lines != Some(0);
    let line =
        json!({ "type": "string", "maxLength": if speaks { limits.max_speech_chars } else { 0 } });
    let choice = object(&[
        (CHOICE_FIELD, indices(0, offer.choices.total())),
        (LINE_FIELD, line.clone()),
    ]);
    let abilities = offer.abilities();
    if abilities.is_empty() {
        return choice;
    }
    let mut answers = Vec::with_capacity(abilities.len() + 2);
    answers.push(choice);
    // Abilities called as tools are invoked by the call, not in the answer.
    if !offer.as_tools {
        answers.extend(
            abilities
                .iter()
                .map(|ability| invoke_schema(ability, &line)),
        );
    }
    // A question has at least a character: no room for one, no question.
    if speaks && limits.max_speech_chars > 0 {
        // An empty question asks nothing: the parser refuses it.
        let mut question = line;
        question["minLength"] = json!(1);
        answers.push(object(&[(QUESTION_FIELD, question)]));
    }
    if answers.len() == 1 {
        return answers.swap_remove(0);
    }
    object(&[(ANSWER_FIELD, json!({ "anyOf": answers }))])
}

/// The schema of an object of exactly these fields, each required.
pub(super) fn object(fields: &[(&str, Value)]) -> Value {
    let properties: serde_json::Map<String, Value> = (fields.iter())
        .map(|(name, field)| ((*name).to_owned(), field.clone()))
        .collect();
    let required: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

/// The schema of an index from `first` to `last`: each listed, or a range when there
/// are too many to list.
fn indices(first: usize, last: usize) -> Value {
    if last + 1 - first <= MAX_LISTED_INDICES {
        let indices: Vec<Value> = (first..=last).map(Value::from).collect();
        json!({ "type": "integer", "enum": indices })
    } else {
        json!({ "type": "integer", "minimum": first, "maximum": last })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::Choices;

    #[test]
    fn answers_are_capped_at_what_the_schema_allows() {
        assert_eq!(DecisionLimits::default().max_answer_tokens(), 300 + 96);
    }

    /// Where `schema` breaks the rules of OpenAI's strict structured outputs: an
    /// object at the root (no `anyOf` there), every object listing all its properties
    /// as required and no others, `anyOf` branches and types from the subset strict
    /// mode takes, and enum values of their schema's type. Empty when it keeps them.
    fn strict_mode_faults(schema: &Value) -> Vec<String> {
        let mut faults = Vec::new();
        if schema["type"] != "object" {
            faults.push(format!("the root is not an object: {schema}"));
        }
        for keyword in ["anyOf", "oneOf", "allOf", "$ref"] {
            if schema.get(keyword).is_some() {
                faults.push(format!("the root has `{keyword}`"));
            }
        }
        check_strict(schema, "", 0, &mut faults);
        faults
    }

    fn check_strict(schema: &Value, at: &str, depth: usize, faults: &mut Vec<String>) {
        const KEYWORDS: [&str; 13] = [
            "type",
            "properties",
            "required",
            "additionalProperties",
            "enum",
            "const",
            "anyOf",
            "items",
            "description",
            // Strict mode takes these since 2025 (not on fine-tuned models).
            "maxLength",
            "minLength",
            "minimum",
            "maximum",
        ];
        const TYPES: [&str; 7] = [
            "string", "number", "integer", "boolean", "object", "array", "null",
        ];
        let Some(object) = schema.as_object() else {
            faults.push(format!("{at}: not a schema object"));
            return;
        };
        if depth > 10 {
            faults.push(format!("{at}: nested deeper than 10"));
        }
        for keyword in object.keys() {
            if !KEYWORDS.contains(&keyword.as_str()) {
                faults.push(format!("{at}: `{keyword}` is not in strict mode's subset"));
            }
        }
        let types: Vec<&str> = match &object.get("type") {
            Some(Value::String(name)) => vec![name.as_str()],
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            Some(other) => {
                faults.push(format!("{at}: `type` is {other}"));
                Vec::new()
            }
            None => Vec::new(),
        };
        if types.is_empty() && object.get("anyOf").is_none() {
            faults.push(format!("{at}: neither a type nor anyOf"));
        }
        for name in &types {
            if !TYPES.contains(name) {
                faults.push(format!("{at}: unknown type {name}"));
            }
        }
        if let Some(values) = object.get("enum") {
            let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
            if values.is_empty() {
                faults.push(format!("{at}: an empty enum"));
            }
            let fits = |value: &Value| match value {
                Value::Null => types.contains(&"null"),
                Value::String(_) => types.contains(&"string"),
                Value::Number(n) if n.is_u64() || n.is_i64() => {
                    types.contains(&"integer") || types.contains(&"number")
                }
                Value::Number(_) => types.contains(&"number"),
                _ => false,
            };
            if let Some(value) = values.iter().find(|value| !fits(value)) {
                faults.push(format!("{at}: enum value {value} is not of type {types:?}"));
            }
        }
        if types.contains(&"object") {
            let properties = object.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let names: Vec<&str> = properties
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            if names.iter().any(|name| !required.contains(name)) || names.len() != required.len() {
                faults.push(format!(
                    "{at}: required {required:?} is not every property {names:?}"
                ));
            }
            if object.get("additionalProperties") != Some(&Value::Bool(false)) {
                faults.push(format!("{at}: additionalProperties is not false"));
            }
            for (name, property) in properties.into_iter().flatten() {
                check_strict(property, &format!("{at}/{name}"), depth + 1, faults);
            }
        }
        if let Some(branches) = object.get("anyOf") {
            for (i, branch) in branches.as_array().into_iter().flatten().enumerate() {
                check_strict(branch, &format!("{at}/anyOf/{i}"), depth + 1, faults);
            }
        }
        if let Some(items) = object.get("items") {
            check_strict(items, &format!("{at}/items"), depth + 1, faults);
        }
    }

    /// The limits a decision schema can be made for.
    fn every_limit() -> Vec<DecisionLimits> {
        [None, Some(0), Some(1), Some(3)]
            .into_iter()
            .map(|max_color_lines| DecisionLimits {
                max_color_lines,
                ..DecisionLimits::default()
            })
            .collect()
    }

    #[test]
    fn every_schema_keeps_the_rules_of_strict_structured_outputs() {
        for limits in every_limit() {
            for actions in [0, 1, 2, 17, 500, 501, 2000] {
                for tasks in [0, 1, 3, 501] {
                    let offered = Choices { actions, tasks };
                    let schema = decision_schema(offered, &limits);
                    assert_eq!(
                        strict_mode_faults(&schema),
                        Vec::<String>::new(),
                        "{offered:?}, {limits:?}: {schema:#}"
                    );
                }
            }
        }
    }

    #[test]
    fn an_invocation_schema_keeps_the_rules_of_strict_structured_outputs() {
        let definition: crate::content::AbilityDefinition = serde_json::from_value(json!({
            "id": "tavern:rent_room", "description": "d", "what": "w", "when": "w",
            "inputs": {
                "required": [{ "name": "nights", "type": "integer", "min": 1, "max": 14 }],
                "optional": [
                    { "name": "guest", "type": "entity", "scope": "characters_here" },
                    { "name": "drink", "type": "choice", "choices": ["ale", "wine"] },
                    { "name": "note", "type": "text", "maxLength": 40 },
                    { "name": "tip", "type": "number" }
                ]
            }
        }))
        .expect("an ability");
        let offered = crate::world::OfferedAbility {
            definition: std::sync::Arc::new(definition),
            candidates: vec![("guest".to_owned(), Vec::new())],
        };
        let line = json!({ "type": "string", "maxLength": 300 });
        let schema = json!({
            "type": "object",
            "properties": { ANSWER_FIELD: { "anyOf": [super::super::invoke_schema(&offered, &line)] } },
            "required": [ANSWER_FIELD],
            "additionalProperties": false
        });
        assert_eq!(
            strict_mode_faults(&schema),
            Vec::<String>::new(),
            "{schema:#}"
        );
    }

    #[test]
    fn the_strict_mode_check_finds_what_breaks_the_rules() {
        let kinds = json!({ "anyOf": [
            { "type": "object", "properties": { "type": { "const": "NONE" } },
              "required": ["type"], "additionalProperties": false }
        ]});
        assert!(!strict_mode_faults(&kinds).is_empty(), "anyOf at the root");
        let optional = json!({
            "type": "object",
            "properties": { "type": { "type": "string" }, "speech": { "type": "string" } },
            "required": ["type"],
            "additionalProperties": false
        });
        assert!(
            !strict_mode_faults(&optional).is_empty(),
            "a field not required"
        );
        let open = json!({
            "type": "object", "properties": {}, "required": []
        });
        assert!(
            !strict_mode_faults(&open).is_empty(),
            "other fields allowed"
        );
        let pattern = json!({
            "type": "object",
            "properties": { "line": { "type": "string", "pattern": "^a" } },
            "required": ["line"],
            "additionalProperties": false
        });
        assert!(
            !strict_mode_faults(&pattern).is_empty(),
            "a keyword outside the subset"
        );
    }

    #[test]
    fn the_schema_offers_only_the_indices_offered_and_0_for_none() {
        let schema = decision_schema(2, &DecisionLimits::default());
        let line = json!({ "type": "string", "maxLength": 300 });
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "do": { "type": "integer", "enum": [0, 1, 2] },
                    "say": line
                },
                "required": ["do", "say"],
                "additionalProperties": false
            }),
            "no wrapper and no choice without abilities"
        );
        let many = decision_schema(MAX_LISTED_INDICES, &DecisionLimits::default());
        assert_eq!(
            many["properties"]["do"],
            json!({ "type": "integer", "minimum": 0, "maximum": MAX_LISTED_INDICES })
        );
    }

    #[test]
    fn offered_tasks_are_numbered_after_the_actions() {
        let offered = Choices {
            actions: 2,
            tasks: 2,
        };
        let schema = decision_schema(offered, &DecisionLimits::default());
        assert_eq!(
            schema["properties"]["do"],
            json!({ "type": "integer", "enum": [0, 1, 2, 3, 4] })
        );
    }

    #[test]
    fn with_nothing_offered_or_no_lines_allowed_the_schema_narrows() {
        let alone = decision_schema(0, &DecisionLimits::default());
        assert_eq!(alone["properties"]["do"]["enum"], json!([0]), "only a line");
        let mute = DecisionLimits {
            max_color_lines: Some(0),
            ..DecisionLimits::default()
        };
        let schema = decision_schema(1, &mute);
        assert_eq!(
            schema["properties"]["say"]["maxLength"], 0,
            "nothing may be said along with the action"
        );
    }

    #[test]
    fn with_abilities_the_answer_is_a_choice_under_its_field() {
        let definition: crate::content::AbilityDefinition = serde_json::from_value(json!({
            "id": "tavern:rent_room", "description": "d", "what": "w", "when": "w",
            "inputs": { "required": [{ "name": "nights", "type": "integer", "min": 1, "max": 2 }] }
        }))
        .expect("an ability");
        let abilities: crate::world::OfferedAbilities = [crate::world::OfferedAbility {
            definition: std::sync::Arc::new(definition),
            candidates: Vec::new(),
        }]
        .into_iter()
        .collect();
        let offer = Offer {
            choices: Choices::from(1),
            abilities: Some(&abilities),
            as_tools: false,
        };
        let fields_of = |schema: &Value| -> Vec<Value> {
            let answers = schema["properties"]["answer"]["anyOf"].as_array();
            answers.expect("answers").clone()
        };
        let fields = |schema: &Value| -> Vec<Vec<String>> {
            (fields_of(schema).iter())
                .map(|answer| {
                    let names = answer["properties"].as_object().expect("fields").keys();
                    names.cloned().collect()
                })
                .collect()
        };
        let schema = decision_schema(offer, &DecisionLimits::default());
        assert_eq!(
            fields(&schema),
            [vec!["do", "say"], vec!["inputs", "say", "use"], vec!["ask"]]
        );
        let mute = DecisionLimits {
            max_color_lines: Some(0),
            ..DecisionLimits::default()
        };
        let schema = decision_schema(offer, &mute);
        assert_eq!(fields(&schema).len(), 2, "a mute actor asks nothing");
        let as_tools = Offer {
            as_tools: true,
            ..offer
        };
        let schema = decision_schema(as_tools, &DecisionLimits::default());
        assert_eq!(
            fields(&schema),
            [vec!["do", "say"], vec!["ask"]],
            "tools: invoked by a call, asked in the answer"
        );
        let question = &fields_of(&decision_schema(offer, &DecisionLimits::default()))[2];
        assert_eq!(
            question["properties"]["ask"]["minLength"],
            json!(1),
            "an empty question is no answer: the parser refuses it, so the schema does"
        );
        let schema = decision_schema(as_tools, &mute);
        assert_eq!(
            schema["properties"]["do"]["enum"],
            json!([0, 1]),
            "one kind: no wrapper"
        );
    }
}
