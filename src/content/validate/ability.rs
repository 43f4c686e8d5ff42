//! The checks of one ability file.

use std::collections::HashSet;

use super::{TEXT_LIMITS, check_namespaced_id, too_long};
use crate::content::method::is_identifier;
use crate::content::{
    AbilityDefinition, AbilityInput, ContentAsset, ContentError, InputType, MAX_ABILITY_EXAMPLES,
};

impl ContentAsset for AbilityDefinition {
    const EXTENSIONS: &'static [&'static str] = &["ability.json", "ability.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems = check_namespaced_id(&self.id, file);
        let limit = TEXT_LIMITS.action_description;
        for (field, text) in [
            ("description", &self.description),
            ("what", &self.what),
            ("when", &self.when),
        ] {
            let pointer = format!("/{field}");
            if text.trim().is_empty() {
                problems.push(ContentError::new(
                    file,
                    pointer,
                    format!("the `{field}` is empty: {}", purpose_of(field)),
                ));
            } else {
                problems.extend(too_long(file, &pointer, text, limit, "action_description"));
            }
        }
        problems.extend(self.input_problems(file));
        problems
    }
}

/// What each text is for, to say when it is missing.
fn purpose_of(field: &str) -> &'static str {
    match field {
        "description" => "say what the ability is, for help screens",
        "what" => "tell the model what the ability does",
        _ => "tell the model when to use the ability, so it does not overuse it",
    }
}

impl AbilityDefinition {
    /// Inputs that are malformed, named twice or given fields of another type, and
    /// where they come from.
    fn input_problems(&self, file: &str) -> Vec<ContentError> {
        let mut problems = Vec::new();
        let mut names = HashSet::new();
        let lists = [
            ("required", &self.inputs.required),
            ("optional", &self.inputs.optional),
        ];
        for (list, inputs) in lists {
            for (index, input) in inputs.iter().enumerate() {
                let pointer = format!("/inputs/{list}/{index}");
                let name = input.name.as_str();
                if !is_identifier(name) {
                    problems.push(ContentError::new(
                        file,
                        format!("{pointer}/name"),
                        format!("`{name}` is not an input name: use letters, digits and `_`, as an invocation names it"),
                    ));
                } else if !names.insert(name) {
                    problems.push(ContentError::new(
                        file,
                        format!("{pointer}/name"),
                        format!("input `{name}` is named twice: give each input its own name"),
                    ));
                }
                problems.extend(too_long(
                    file,
                    &format!("{pointer}/description"),
                    &input.description,
                    TEXT_LIMITS.action_description,
                    "action_description",
                ));
                problems.extend(type_problems(file, &pointer, input));
            }
        }
        let inputs = &self.inputs;
        if inputs.infer_from.is_empty() {
            problems.push(ContentError::new(
                file,
                "/inputs/inferFrom",
                "no source to infer inputs from: leave `inferFrom` out (the player's current line) or name at least one",
            ));
        }
        let mut sources = HashSet::new();
        for (index, source) in inputs.infer_from.iter().enumerate() {
            if !sources.insert(source) {
                problems.push(ContentError::new(
                    file,
                    format!("/inputs/inferFrom/{index}"),
                    "this source is named twice: name each once",
                ));
            }
        }
        problems.extend(too_long(
            file,
            "/inputs/validation",
            &inputs.validation,
            TEXT_LIMITS.action_description,
            "action_description",
        ));
        if inputs.examples.len() > MAX_ABILITY_EXAMPLES {
            problems.push(ContentError::new(
                file,
                "/inputs/examples",
                format!(
                    "{} examples: give at most {MAX_ABILITY_EXAMPLES}, as each is read by the model every turn",
                    inputs.examples.len()
                ),
            ));
        }
        for (index, example) in inputs.examples.iter().enumerate() {
            let pointer = format!("/inputs/examples/{index}");
            if example.trim().is_empty() {
                problems.push(ContentError::new(
                    file,
                    pointer,
                    "the example is empty: write one or leave it out",
                ));
            } else {
                let limit = TEXT_LIMITS.action_description;
                problems.extend(too_long(
                    file,
                    &pointer,
                    example,
                    limit,
                    "action_description",
                ));
            }
        }
        problems
    }
}

/// The problems of an input's type: the fields its type needs, and none of another
/// type's.
fn type_problems(file: &str, pointer: &str, input: &AbilityInput) -> Vec<ContentError> {
    let mut problems = Vec::new();
    let kind = input.kind;
    let mut wrong = |field: &str, belongs: &str| {
        problems.push(ContentError::new(
            file,
            format!("{pointer}/{field}"),
            format!(
                "`{field}` is for {belongs}, and this input is of type `{}`: remove it, or change the type",
                kind.name()
            ),
        ));
    };
    let entity = kind == InputType::Entity;
    let number = matches!(kind, InputType::Integer | InputType::Number);
    if !entity && input.scope.is_some() {
        wrong("scope", "entity inputs");
    }
    if !entity && !input.required_tags.is_empty() {
        wrong("requiredTags", "entity inputs");
    }
    if !entity && !input.forbidden_tags.is_empty() {
        wrong("forbiddenTags", "entity inputs");
    }
    if !number && input.min.is_some() {
        wrong("min", "integer and number inputs");
    }
    if !number && input.max.is_some() {
        wrong("max", "integer and number inputs");
    }
    if kind != InputType::Text && input.max_length.is_some() {
        wrong("maxLength", "text inputs");
    }
    if kind != InputType::Choice && !input.choices.is_empty() {
        wrong("choices", "choice inputs");
    }
    let mut problem = |field: &str, message: String| {
        problems.push(ContentError::new(
            file,
            format!("{pointer}{field}"),
            message,
        ));
    };
    match kind {
        InputType::Entity => match &input.scope {
            None => problem(
                "",
                "an entity input needs a `scope` its candidates come from (`characters_here`, `things_here`, `inventory`, `exits`, or one the game registered)".to_owned(),
            ),
            Some(scope) if scope.trim().is_empty() => problem(
                "/scope",
                "the scope is empty: name a target scope".to_owned(),
            ),
            Some(_) => {}
        },
        InputType::Integer | InputType::Number => {
            for (field, bound) in [("/min", input.min), ("/max", input.max)] {
                match bound {
                    Some(value) if !value.is_finite() => {
                        problem(field, "write a finite number".to_owned());
                    }
                    Some(value) if kind == InputType::Integer && value.fract() != 0.0 => {
                        problem(field, format!("{value} is not a whole number, and the input is an `integer`: write a whole number"));
                    }
                    // Answers are read as 64-bit whole numbers: none could be past it.
                    Some(value)
                        if kind == InputType::Integer
                            && !(-(2f64.powi(63))..2f64.powi(63)).contains(&value) =>
                    {
                        problem(field, format!("{value} is past the largest whole number an answer can give (about ±9.2e18): write a smaller bound, or leave it out"));
                    }
                    _ => {}
                }
            }
            if let (Some(min), Some(max)) = (input.min, input.max)
                && min > max
            {
                problem(
                    "/min",
                    format!("`min` ({min}) is above `max` ({max}): swap them"),
                );
            }
        }
        InputType::Text => {
            if input.max_length == Some(0) {
                problem(
                    "/maxLength",
                    "a text input of at most 0 characters can hold nothing: raise it or leave it out".to_owned(),
                );
            }
        }
        InputType::Choice => {
            if input.choices.is_empty() {
                problem(
                    "",
                    "a choice input needs `choices`, the values it may take".to_owned(),
                );
            }
            let mut seen = HashSet::new();
            for (index, choice) in input.choices.iter().enumerate() {
                if choice.trim().is_empty() {
                    problem(
                        &format!("/choices/{index}"),
                        "the choice is empty: write it or leave it out".to_owned(),
                    );
                } else if choice.trim() != choice {
                    problem(
                        &format!("/choices/{index}"),
                        format!(
                            "`{choice}` has space around it, which an answer is read without, so it could never be chosen: remove it"
                        ),
                    );
                } else if !seen.insert(choice.to_lowercase()) {
                    problem(
                        &format!("/choices/{index}"),
                        format!("`{choice}` is listed twice: list each choice once"),
                    );
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::content::fixtures::{parsed, pointers};
    use crate::content::{InputMode, InputSource};

    const FILE: &str = "mods/tavern/abilities/rent_room.ability.json";

    fn ability(overrides: Value) -> AbilityDefinition {
        let base = json!({
            "id": "tavern:rent_room",
            "description": "Rent a room at the inn.",
            "what": "Rents the guest a room for some nights.",
            "when": "Someone asks for a room.",
            "inputs": {
                "required": [{ "name": "nights", "type": "integer", "min": 1, "max": 14 }],
                "optional": [{ "name": "guest", "type": "entity", "scope": "characters_here" }]
            }
        });
        parsed(base, overrides)
    }

    fn problems(overrides: Value) -> Vec<String> {
        let found = ability(overrides).check(FILE);
        pointers(&found).into_iter().map(str::to_owned).collect()
    }

    fn inputs(required: Value) -> Value {
        json!({ "inputs": { "required": required } })
    }

    #[test]
    fn a_valid_ability_passes_and_absent_fields_take_their_defaults() {
        assert_eq!(problems(json!({})), Vec::<String>::new());
        let bare = ability(json!({ "inputs": {} }));
        assert_eq!(bare.inputs.mode, InputMode::Explicit);
        assert_eq!(bare.inputs.infer_from, [InputSource::CurrentLine]);
        assert!(bare.inputs.required.is_empty() && bare.inputs.examples.is_empty());
        let without: AbilityDefinition = serde_json::from_value(json!({
            "id": "tavern:wave", "description": "Wave.", "what": "Waves.", "when": "Greeted."
        }))
        .expect("parses");
        assert_eq!(
            without.inputs, bare.inputs,
            "no `inputs` is the default inputs"
        );
        assert!(without.check(FILE).is_empty());
    }

    #[test]
    fn the_id_and_each_text_are_checked() {
        assert_eq!(problems(json!({ "id": "rent_room" })), ["/id"]);
        assert_eq!(
            problems(json!({ "what": " ", "when": "" })),
            ["/what", "/when"]
        );
        let long = "x".repeat(TEXT_LIMITS.action_description + 1);
        assert_eq!(problems(json!({ "description": long })), ["/description"]);
        let found = ability(json!({ "when": "" })).check(FILE);
        assert!(found[0].message.contains("overuse"), "{}", found[0].message);
    }

    #[test]
    fn input_names_are_identifiers_named_once_across_both_lists() {
        let twice = json!({ "inputs": {
            "required": [{ "name": "nights", "type": "integer" }],
            "optional": [{ "name": "nights", "type": "text" }, { "name": "two words", "type": "text" }]
        }});
        assert_eq!(
            problems(twice),
            ["/inputs/optional/0/name", "/inputs/optional/1/name"]
        );
    }

    #[test]
    fn each_type_needs_its_fields_and_refuses_another_types() {
        assert_eq!(
            problems(inputs(json!([{ "name": "who", "type": "entity" }]))),
            ["/inputs/required/0"],
            "an entity needs a scope"
        );
        assert_eq!(
            problems(inputs(
                json!([{ "name": "n", "type": "text", "min": 1, "scope": "exits" }])
            )),
            ["/inputs/required/0/scope", "/inputs/required/0/min"]
        );
        assert_eq!(
            problems(inputs(
                json!([{ "name": "n", "type": "integer", "min": 1.5 }])
            )),
            ["/inputs/required/0/min"],
            "an integer's bounds are whole"
        );
        assert_eq!(
            problems(inputs(
                json!([{ "name": "n", "type": "integer", "min": 1e20, "max": -1e19 }])
            )),
            [
                "/inputs/required/0/min",
                "/inputs/required/0/max",
                "/inputs/required/0/min"
            ],
            "an integer's bounds are within what an answer can give"
        );
        assert!(
            problems(inputs(
                json!([{ "name": "n", "type": "integer", "min": i64::MIN, "max": i64::MIN }])
            ))
            .is_empty(),
            "the least whole number an answer can give"
        );
        assert!(
            problems(inputs(
                json!([{ "name": "n", "type": "number", "min": 0.5, "max": 2.5 }])
            ))
            .is_empty()
        );
        assert_eq!(
            problems(inputs(
                json!([{ "name": "n", "type": "integer", "min": 5, "max": 2 }])
            )),
            ["/inputs/required/0/min"]
        );
        assert_eq!(
            problems(inputs(
                json!([{ "name": "t", "type": "text", "maxLength": 0 }])
            )),
            ["/inputs/required/0/maxLength"]
        );
        assert_eq!(
            problems(inputs(json!([{ "name": "c", "type": "choice" }]))),
            ["/inputs/required/0"],
            "a choice needs choices"
        );
        assert_eq!(
            problems(inputs(
                json!([{ "name": "c", "type": "choice", "choices": ["ale", "", "Ale", " stew"] }])
            )),
            [
                "/inputs/required/0/choices/1",
                "/inputs/required/0/choices/2",
                "/inputs/required/0/choices/3"
            ],
            "empty, twice, and with a space the model does not write back"
        );
    }

    #[test]
    fn sources_examples_and_validation_are_bounded() {
        let sources = json!({ "inputs": { "inferFrom": [] } });
        assert_eq!(problems(sources), ["/inputs/inferFrom"]);
        let twice = json!({ "inputs": { "inferFrom": ["partner", "self", "partner"] } });
        assert_eq!(problems(twice), ["/inputs/inferFrom/2"]);
        let examples = json!({ "inputs": { "examples": ["one", "two", ""] } });
        assert_eq!(
            problems(examples),
            ["/inputs/examples", "/inputs/examples/2"]
        );
        let long = "x".repeat(TEXT_LIMITS.action_description + 1);
        let validation = json!({ "inputs": { "validation": long } });
        assert_eq!(problems(validation), ["/inputs/validation"]);
    }

    #[test]
    fn an_unknown_field_or_source_names_where_it_is() {
        let text = r#"{"id": "tavern:x", "description": "d", "what": "w", "when": "w",
            "inputs": {"inferFrom": ["the_moon"]}}"#;
        let problems = crate::content::parse_content::<AbilityDefinition>(text.as_bytes(), FILE)
            .expect_err("an unknown source");
        assert_eq!(problems[0].pointer, "/inputs/inferFrom/0", "{problems:?}");
    }
}
