//! Abilities as content: loaded from a mod's listing through the asset server, checked
//! file by file and across files, and linted when no actor may invoke them.

use bevy_loom::content::lint::lint_narrative;
use bevy_loom::content::{InputMode, InputSource, InputType};
use serde_json::json;

use crate::support;

/// The `inn` mod: Marta may invoke `inn:rent_room`; `inn:sell_map` is offered to no
/// one; `inn:broken` has an integer input bounded by text; `inn:fetch` names a scope
/// nobody registered.
fn inn_content() -> Vec<(&'static str, String)> {
    let ability = |id: &str, inputs: serde_json::Value| {
        json!({ "id": id, "description": "A service of the inn.", "what": "Does it.",
                "when": "Someone asks for it.", "inputs": inputs })
        .to_string()
    };
    let mut files = support::core_mod();
    files.extend([
        support::game(&["core", "inn"]),
        (
            "mods/inn/mod.json",
            support::manifest(
                "inn",
                json!({ "content": {
                    "actors": ["actors/marta.actor.json"],
                    "abilities": [
                        "abilities/rent_room.ability.json",
                        "abilities/sell_map.ability.json",
                        "abilities/broken.ability.json",
                        "abilities/fetch.ability.json"
                    ]
                } }),
            ),
        ),
        (
            "mods/inn/actors/marta.actor.json",
            json!({
                "id": "inn:marta",
                "persona": { "name": "Marta", "role": "the innkeeper" },
                "policy": { "allowedAbilities": ["inn:rent_room", "inn:fetch", "inn:broken"] }
            })
            .to_string(),
        ),
        (
            "mods/inn/abilities/rent_room.ability.json",
            ability(
                "inn:rent_room",
                json!({
                    "required": [{ "name": "nights", "type": "integer", "min": 1, "max": 14 }],
                    "optional": [{ "name": "guest", "type": "entity", "scope": "characters_here" }],
                    "inferFrom": ["current_line", "partner"]
                }),
            ),
        ),
        (
            "mods/inn/abilities/sell_map.ability.json",
            ability("inn:sell_map", json!({ "mode": "implicit" })),
        ),
        (
            "mods/inn/abilities/broken.ability.json",
            ability(
                "inn:broken",
                json!({ "required": [{ "name": "nights", "type": "integer", "maxLength": 3 }] }),
            ),
        ),
        (
            "mods/inn/abilities/fetch.ability.json",
            ability(
                "inn:fetch",
                json!({ "required": [{ "name": "what", "type": "entity", "scope": "the_moon" }] }),
            ),
        ),
    ]);
    files
}

#[test]
fn abilities_load_from_a_mods_listing_with_their_defaults() {
    let (registry, _) = support::load(&inn_content());
    let rent = registry.ability("inn:rent_room").expect("rent_room loads");
    assert_eq!(rent.inputs.mode, InputMode::Explicit, "the default mode");
    assert_eq!(
        rent.inputs.infer_from,
        [InputSource::CurrentLine, InputSource::Partner]
    );
    let (nights, required) = rent.input("nights").expect("an input");
    assert!(required && nights.kind == InputType::Integer);
    assert_eq!((nights.min, nights.max), (Some(1.0), Some(14.0)));
    assert_eq!(
        registry.ability_file("inn:rent_room"),
        Some("mods/inn/abilities/rent_room.ability.json")
    );
    let map = registry.ability("inn:sell_map").expect("sell_map loads");
    assert_eq!(map.inputs.infer_from, [InputSource::CurrentLine]);
    let spec = registry.actor("inn:marta").expect("marta loads");
    assert!(spec.policy.allows_ability("inn:rent_room"));
    assert!(!spec.policy.allows_ability("inn:sell_map"));
}

#[test]
fn a_broken_ability_is_an_error_naming_its_field_and_the_rest_loads() {
    let (registry, errors) = support::load(&inn_content());
    let found: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (e.file.as_str(), e.pointer.as_str()))
        .collect();
    assert!(
        found.contains(&(
            "mods/inn/abilities/broken.ability.json",
            "/inputs/required/0/maxLength"
        )),
        "{errors:#?}"
    );
    assert!(
        found.contains(&(
            "mods/inn/abilities/fetch.ability.json",
            "/inputs/required/0/scope"
        )),
        "an unknown scope is found across files: {errors:#?}"
    );
    let unknown = errors.iter().find(|e| e.pointer.ends_with("/scope"));
    assert!(unknown.is_some_and(|e| e.message.contains("unknown scope `the_moon`")));
    assert!(registry.ability("inn:broken").is_none());
    assert!(registry.ability("inn:fetch").is_none());
    assert_eq!(registry.abilities().count(), 2, "the other two load");
}

#[test]
fn an_ability_no_actor_may_invoke_is_a_lint_warning() {
    let (registry, _) = support::load(&inn_content());
    let report = lint_narrative(&registry);
    let warnings: Vec<(&str, &str)> = (report.abilities.iter())
        .map(|w| (w.file.as_str(), w.pointer.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [("mods/inn/abilities/sell_map.ability.json", "/id")]
    );
    assert!(
        report.abilities[0]
            .message
            .contains("policy.allowedAbilities")
    );
    assert!(report.to_string().contains("ability warnings (1):"));
}

#[test]
fn an_ability_file_not_listed_is_a_warning() {
    let mut files = inn_content();
    files.push((
        "mods/inn/abilities/unlisted.ability.json",
        json!({ "id": "inn:unlisted", "description": "d", "what": "w", "when": "w" }).to_string(),
    ));
    let (registry, _) = support::load(&files);
    assert!(registry.ability("inn:unlisted").is_none());
    let warned = (registry.warnings().iter())
        .any(|w| w.file.ends_with("unlisted.ability.json") && w.message.contains("abilities"));
    assert!(warned, "{:#?}", registry.warnings());
}
