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

/// A game that sets the clock (a saved game loaded at turn 42) starts no turn by it;
/// the next `TurnEnded` does.
#[test]
fn setting_the_turn_clock_starts_no_turn() {
    let (mut app, _) = tavern_app_with(BackendChoice::Offline { seed: 3 }, default());
    app.insert_resource(TurnClock { turn: 42 });
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(app.world().resource::<TurnLog>().prompts.len(), 0);
    app.world_mut().write_message(TurnEnded);
    app.update();
    assert_eq!(app.world().resource::<TurnClock>().turn, 43);
    assert_eq!(app.world().resource::<TurnLog>().prompts.len(), 3);
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

/// A game copies a smart actor (`clone_and_spawn`) while it waits on its answer: the
/// copy starts with a mind of its own and thinks at the next turn, and the original
/// gets its answer.
#[test]
fn a_copy_of_a_waiting_actor_thinks_for_itself() {
    let (backend, gate) = crate::support::GatedBackend::choice(|_| r#"{"do": 1}"#.to_owned());
    let (mut app, scene) = crate::support::tavern_app(backend);
    let marta = scene.entities["marta"];
    app.world_mut().write_message(TurnEnded);
    app.update();
    let copy = app
        .world_mut()
        .commands()
        .entity(marta)
        .clone_and_spawn()
        .id();
    app.world_mut().flush();
    gate.store(true, std::sync::atomic::Ordering::SeqCst);
    crate::support::update_until(&mut app, "every actor to answer", |app| {
        let mut minds = app.world_mut().query::<&ActorMind>();
        !minds.iter(app.world()).any(ActorMind::is_thinking)
    });
    app.update();
    let log = std::mem::take(&mut *app.world_mut().resource_mut::<crate::support::TurnLog>());
    assert!(
        log.requests.iter().any(|r| r.actor == marta),
        "the original acts on its answer: {log:#?}"
    );
    let turn = crate::support::run_turn(&mut app);
    let asked: Vec<Entity> = turn.prompts.iter().map(|p| p.actor).collect();
    assert!(asked.contains(&copy), "the copy thinks: {asked:?}");
    assert!(
        asked.contains(&marta),
        "and so does the original: {asked:?}"
    );
}
