//! Content built in code for unit tests: each value is a valid file unless a test
//! merges in the field it means to break.

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{ActionDefinition, ActorSpec, ContentError, GameManifest, ModManifest, TaskDefinition};

/// `base` with the fields of `overrides` put in, parsed as `T`.
pub(crate) fn parsed<T: DeserializeOwned>(mut base: Value, overrides: Value) -> T {
    if let (Value::Object(base), Value::Object(extra)) = (&mut base, overrides) {
        base.extend(extra);
    }
    serde_json::from_value(base).expect("test content parses")
}

/// A game file listing `mods`, in that order.
pub(crate) fn game(mods: &[&str]) -> GameManifest {
    parsed(json!({ "mods": mods }), json!({}))
}

/// A valid manifest of the mod `id`, version 1.0.0, with `overrides`.
pub(crate) fn manifest(id: &str, overrides: Value) -> ModManifest {
    let base = json!({ "id": id, "version": "1.0.0", "name": format!("The {id} mod") });
    parsed(base, overrides)
}

/// A valid action `id` with no targets and the template `template`, with `overrides`.
pub(crate) fn action(id: &str, template: &str, overrides: Value) -> ActionDefinition {
    let base =
        json!({ "id": id, "name": "An action", "description": "Does it.", "template": template });
    parsed(base, overrides)
}

/// A valid actor spec `id`, with `overrides`.
pub(crate) fn actor(id: &str, overrides: Value) -> ActorSpec {
    let base = json!({ "id": id, "persona": { "name": "Marta", "role": "the innkeeper" } });
    parsed(base, overrides)
}

/// A valid task `id`, serving a drink: its entity parameters `customer` (a character
/// here) and `drink` (a thing here), and its value `rounds` (an integer, 1 by
/// default); with `overrides`.
pub(crate) fn task(id: &str, overrides: Value) -> TaskDefinition {
    let base = json!({
        "id": id,
        "name": "Serve a drink",
        "description": "bring someone a drink",
        "template": "serve {customer} a drink with {drink}",
        "parameters": [
            { "name": "customer", "entity": { "scope": "characters_here" } },
            { "name": "drink", "entity": { "scope": "things_here" } },
            { "name": "rounds", "value": { "type": "integer", "default": 1 } }
        ]
    });
    parsed(base, overrides)
}

/// The pointers of `problems`, in order.
pub(crate) fn pointers(problems: &[ContentError]) -> Vec<&str> {
    problems.iter().map(|p| p.pointer.as_str()).collect()
}
