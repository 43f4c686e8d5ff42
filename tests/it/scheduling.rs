//! Who thinks when: the per-frame cap and the real-time cadence.

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_loom::prelude::*;

use crate::support::{TurnLog, tavern_app_with, update_until};

#[test]
fn at_most_the_cap_start_thinking_in_one_frame() {
    let settings = SmartActorSettings {
        max_new_thinkers_per_frame: 1,
        ..default()
    };
    let (mut app, _) = tavern_app_with(BackendChoice::Offline { seed: 3 }, settings);
    app.world_mut().write_message(TurnEnded);
    let mut asked_per_frame = Vec::new();
    for _ in 0..4 {
        let before = app.world().resource::<TurnLog>().prompts.len();
        app.update();
        asked_per_frame.push(app.world().resource::<TurnLog>().prompts.len() - before);
    }
    assert_eq!(asked_per_frame, [1, 1, 1, 0]);
}

#[test]
fn a_cadence_starts_turns_without_turn_ended() {
    let settings = SmartActorSettings {
        cadence: Some(Duration::from_secs(2)),
        ..default()
    };
    let (mut app, _) = tavern_app_with(BackendChoice::Offline { seed: 3 }, settings);
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
        500,
    )));
    let mut frames = 0;
    update_until(&mut app, "a cadence turn", |app| {
        frames += 1;
        app.world().resource::<TurnClock>().turn >= 1
    });
    assert_eq!(
        app.world().resource::<TurnClock>().turn,
        1,
        "one turn per 2 s, not per frame"
    );
    assert!(
        frames >= 4,
        "2 s take at least four 500 ms frames, took {frames}"
    );
    update_until(&mut app, "the decisions", |app| {
        app.world().resource::<TurnLog>().requests.len() >= 3
    });
}
