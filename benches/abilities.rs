//! Ability benchmarks.
//!
//! - `abilities/check_invocation_3_inputs`: checking the inputs of one invocation of an
//!   offered ability against it ([`check_invocation`]), as a model's answer gives them
//!   (already read as JSON): an entity named among 10 candidates (found case
//!   insensitively), a whole number within its range, and a choice among 4 (found
//!   case insensitively), each checked and turned into its value. Target: ≤ 2 µs.
//!
//! Run with `cargo bench --bench abilities`.

use std::hint::black_box;
use std::sync::Arc;

use bevy::prelude::*;
use bevy_loom::content::AbilityDefinition;
use bevy_loom::prompt::answer::check_invocation;
use bevy_loom::world::OfferedAbility;
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

criterion_group!(benches, check_invocation_3_inputs);
criterion_main!(benches);
