//! An actor's policy narrows what it is offered and how much it may say.

use std::time::Duration;

use bevy::prelude::*;
use bevy_loom::prelude::*;
use bevy_loom::testing::HeadlessApp;
use serde_json::json;

use crate::support::{
    FixedBackend, action, content_dir, game, load, manifest, update_until, wait_for_content,
};

/// A `core` mod with three actions and a guard who may only wait or attack, and say
/// at most 12 characters.
fn files() -> Vec<(&'static str, String)> {
    vec![
        game(&["core"]),
        (
            "mods/core/mod.json",
            manifest(
                "core",
                json!({ "content": {
                    "actions": ["actions/wait.action.json", "actions/shout.action.json", "actions/attack.action.json"],
                    "actors": ["actors/guard.actor.json"]
                } }),
            ),
        ),
        (
            "mods/core/actions/wait.action.json",
            action("core:wait", json!({ "verb": "wait" })),
        ),
        (
            "mods/core/actions/shout.action.json",
            action(
                "core:shout",
                json!({ "name": "Shout", "template": "shout" }),
            ),
        ),
        (
            "mods/core/actions/attack.action.json",
            action(
                "core:attack",
                json!({ "name": "Attack", "template": "attack {target}", "verb": "attack",
                        "targets": { "primary": { "scope": "characters_here", "placeholder": "target" } } }),
            ),
        ),
        (
            "mods/core/actors/guard.actor.json",
            json!({ "id": "core:guard", "persona": { "name": "Brom", "role": "a guard" },
                    "policy": { "allowedVerbs": ["wait", "attack"], "maxUtteranceLength": 12 } })
            .to_string(),
        ),
    ]
}

#[test]
fn allowed_verbs_narrow_the_offer_and_the_utterance_limit_is_enforced() {
    let content = content_dir(&files());
    let answer = r#"{"action": 1, "speech": "Stand back, all of you!", "thought": ""}"#;
    let mut app = HeadlessApp::new(content.path())
        .llm(LlmPlugin {
            backend: FixedBackend::choice(answer),
            settings: LlmSettings {
                deadline: Duration::from_secs(5),
                ..default()
            },
            ..default()
        })
        .build();
    wait_for_content(&mut app);
    let world = app.world_mut();
    let room = world.spawn((Place, DisplayName("the gate".into()))).id();
    let guard = world
        .spawn((
            SmartActor::new("core:guard"),
            Character,
            DisplayName("Brom".into()),
            Tags::default(),
            InPlace(room),
        ))
        .id();
    world.spawn((
        Character,
        DisplayName("a thief".into()),
        Tags::default(),
        InPlace(room),
    ));

    #[derive(Resource, Default)]
    struct Seen(Vec<DecisionRequested>, Vec<DecisionRejected>);
    app.init_resource::<Seen>().add_systems(
        Update,
        (|mut seen: ResMut<Seen>,
          mut asked: MessageReader<DecisionRequested>,
          mut rejected: MessageReader<DecisionRejected>| {
            seen.0.extend(asked.read().cloned());
            seen.1.extend(rejected.read().cloned());
        })
        .after(LoomSystems::Decide),
    );
    app.world_mut().write_message(TurnEnded);
    update_until(&mut app, "the guard's decision", |app| {
        !app.world().resource::<Seen>().1.is_empty()
    });
    let seen = app.world().resource::<Seen>();
    let offered: Vec<&str> = seen.0[0].offered.iter().map(|a| a.action_id).collect();
    assert_eq!(
        offered,
        ["core:attack", "core:wait"],
        "no `shout`: it has no verb"
    );
    assert_eq!(seen.1[0].actor, guard);
    assert!(
        matches!(
            seen.1[0].reason,
            RejectionReason::TooLong {
                field: "speech",
                max: 12,
                ..
            }
        ),
        "{:?}",
        seen.1[0].reason
    );
}

#[test]
fn an_allowed_verb_nobody_knows_is_a_content_error() {
    let mut files = files();
    files[5].1 = json!({ "id": "core:guard", "persona": { "name": "Brom", "role": "a guard" },
                          "policy": { "allowedVerbs": ["wait", "juggle"] } })
    .to_string();
    let (registry, errors) = load(&files);
    assert!(registry.actor("core:guard").is_none());
    let error = errors
        .iter()
        .find(|e| e.file.ends_with("guard.actor.json"))
        .expect("the guard's spec is refused");
    assert_eq!(error.pointer, "/policy/allowedVerbs/1");
    assert!(error.message.contains("juggle"), "{}", error.message);
}
