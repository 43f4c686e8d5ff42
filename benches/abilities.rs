//! Ability benchmarks.
//!
//! - `abilities/block_20_abilities`: writing the `<abilities>` block
//!   ([`write_abilities_block`]) of 20 abilities, each with its what, when, one or two
//!   inputs of every type in turn, its sources, a validation line and an example (5 to 6
//!   lines each), into a buffer kept from one block to the next, as a frame writing
//!   many actors' prompts does. Target: ≤ 5 µs.
//! - `abilities/check_invocation_3_inputs`: checking the inputs of one invocation of an
//!   offered ability against it ([`check_invocation`]), as a model's answer gives them
//!   (already read as JSON): an entity named among 10 candidates (found case
//!   insensitively), a whole number within its range, and a choice among 4 (found
//!   case insensitively), each checked and turned into its value. Target: ≤ 2 µs.
//! - `abilities/offer_1000_same_named_candidates`: offering an ability whose one entity
//!   input finds 1,000 things of one name ("gold coin") in the actor's place
//!   ([`OfferedAbility::new`]): the first `MAX_ENTITY_CANDIDATES` (32) the scope gives
//!   are kept, and each numbered apart ("gold coin (1)", …), a number no other
//!   candidate's name has.
//!
//! Run with `cargo bench --bench abilities`.

use std::hint::black_box;
use std::sync::Arc;

use bevy::prelude::*;
use bevy_loom::content::AbilityDefinition;
use bevy_loom::prompt::answer::check_invocation;
use bevy_loom::prompt::write_abilities_block;
use bevy_loom::world::{EntityView, OfferedAbility, TargetScopes, WorldView};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

/// Renting a room: who stays (one of 10 guests here), for how many nights (1 to 14),
/// and which room (one of 4).
fn rent_room() -> OfferedAbility {
    let definition: AbilityDefinition = serde_json::from_value(json!({
        "id": "tavern:rent_room",
        "description": "Rent a room at the inn.",
        "what": "Rents the guest a room for some nights.",
        "when": "Someone asks for a room.",
        "inputs": {
            "required": [
                { "name": "guest", "type": "entity", "scope": "characters_here" },
                { "name": "nights", "type": "integer", "min": 1, "max": 14 }
            ],
            "optional": [
                { "name": "room", "type": "choice",
                  "choices": ["attic", "corner room", "garden room", "suite"] }
            ]
        }
    }))
    .expect("a valid ability");
    let guests = (0..10u32)
        .map(|n| {
            let entity = Entity::from_raw_u32(100 + n).expect("a valid index");
            (entity, format!("Guest {n}"))
        })
        .collect();
    OfferedAbility {
        definition: Arc::new(definition),
        candidates: vec![("guest".to_owned(), guests)],
    }
}

fn check_invocation_3_inputs(c: &mut Criterion) {
    let offered = rent_room();
    let inputs = json!({ "guest": "guest 7", "nights": 2, "room": "Garden Room" });
    let checked = check_invocation(&offered, Some(&inputs)).expect("a valid invocation");
    assert_eq!(checked.len(), 3, "every input checked");
    c.bench_function("abilities/check_invocation_3_inputs", |b| {
        b.iter(|| check_invocation(black_box(&offered), black_box(Some(&inputs))))
    });
}

/// 20 abilities of every mode, with inputs of every type in turn.
fn twenty_abilities() -> Vec<AbilityDefinition> {
    let inputs = [
        json!({ "name": "nights", "type": "integer", "min": 1, "max": 14, "description": "how many nights" }),
        json!({ "name": "guest", "type": "entity", "scope": "characters_here", "description": "who stays" }),
        json!({ "name": "drink", "type": "choice", "choices": ["ale", "stout", "wine"], "description": "which drink" }),
        json!({ "name": "song", "type": "text", "maxLength": 60, "description": "the song asked for" }),
        json!({ "name": "tip", "type": "number", "min": 0.5, "description": "what is paid on top" }),
    ];
    let modes = ["explicit", "implicit", "mixed"];
    (0..20)
        .map(|n| {
            let value = json!({
                "id": format!("tavern:service_{n}"),
                "description": "A service of the inn.",
                "what": format!("Does the inn's service number {n} for the guest, at a fair price."),
                "when": "The person you are talking to asks for it, or plainly needs it.",
                "inputs": {
                    "mode": modes[n % modes.len()],
                    "required": [inputs[n % inputs.len()]],
                    "optional": if n % 2 == 0 { vec![inputs[(n + 1) % inputs.len()].clone()] } else { vec![] },
                    "inferFrom": ["current_line", "partner"],
                    "validation": "Within what the inn can offer tonight.",
                    "examples": ["\"The usual\" → what the guest had last time"]
                }
            });
            serde_json::from_value(value).expect("a valid ability")
        })
        .collect()
}

fn block_20_abilities(c: &mut Criterion) {
    let abilities = twenty_abilities();
    let mut block = String::new();
    write_abilities_block(&mut block, &abilities);
    assert_eq!(block.matches("\n- tavern:service_").count(), 20, "{block}");
    c.bench_function("abilities/block_20_abilities", |b| {
        b.iter(|| {
            block.clear();
            write_abilities_block(&mut block, black_box(&abilities));
            black_box(block.len())
        })
    });
}

fn offer_1000_same_named_candidates(c: &mut Criterion) {
    let definition: AbilityDefinition = serde_json::from_value(json!({
        "id": "bank:count", "description": "Counts coins.", "what": "Counts a coin.",
        "when": "Asked to.",
        "inputs": { "required": [{ "name": "coin", "type": "entity", "scope": "things_here" }] }
    }))
    .expect("an ability");
    let entity = |n: u32| Entity::from_raw_u32(n).expect("a valid index");
    let (vault, banker) = (entity(1), entity(2));
    let mut records = vec![
        (
            vault,
            EntityView {
                name: "the vault".into(),
                is_place: true,
                ..Default::default()
            },
        ),
        (
            banker,
            EntityView {
                name: "the banker".into(),
                place: Some(vault),
                character: true,
                ..Default::default()
            },
        ),
    ];
    records.extend((10..1010).map(|n| {
        let coin = EntityView {
            name: "gold coin".into(),
            place: Some(vault),
            ..Default::default()
        };
        (entity(n), coin)
    }));
    let view = WorldView::new(records);
    let scopes = TargetScopes::default();
    let definition = Arc::new(definition);
    c.bench_function("abilities/offer_1000_same_named_candidates", |b| {
        b.iter(|| OfferedAbility::new(Arc::clone(&definition), black_box(&view), &scopes, banker))
    });
}

criterion_group!(
    benches,
    block_20_abilities,
    check_invocation_3_inputs,
    offer_1000_same_named_candidates
);
criterion_main!(benches);
