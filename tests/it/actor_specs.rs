//! What actor specs bind to: the prompt template they name and the scene entities
//! that name them.

use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy_loom::content::{PromptTemplate, parse_content};
use bevy_loom::llm::{DeltaSink, LlmBackend, LlmFuture, LlmReply};
use bevy_loom::prelude::*;
use bevy_loom::prompt::{DECISION_QUESTION, DECISION_RULES};
use serde_json::json;

use crate::support::{
    content_dir, core_mod, game, loom_app, manifest, repo_assets, run_turn, tavern_app,
};

/// A `core` mod with `core:wait`, the template `core:terse` and two specs: `core:terse`
/// names the template, `core:plain` names none.
fn templated() -> Vec<(&'static str, String)> {
    let mut files = core_mod();
    files[0].1 = manifest(
        "core",
        json!({ "content": {
            "actions": ["actions/wait.action.json"],
            "actors": ["actors/terse.actor.json", "actors/plain.actor.json"],
            "prompts": ["prompts/terse.prompt.json"]
        } }),
    );
    files.extend([
        game(&["core"]),
        (
            "mods/core/prompts/terse.prompt.json",
            json!({ "id": "core:terse", "rules": "Be terse. Answer in JSON.",
                    "question": "Your move?", "reply": "Answer the player." })
            .to_string(),
        ),
        (
            "mods/core/actors/terse.actor.json",
            json!({ "id": "core:terse", "promptId": "core:terse",
                    "persona": { "name": "Tess", "role": "a terse guard" } })
            .to_string(),
        ),
        (
            "mods/core/actors/plain.actor.json",
            json!({ "id": "core:plain", "persona": { "name": "Pip", "role": "a porter" } })
                .to_string(),
        ),
    ]);
    files
}

#[test]
fn each_actor_thinks_with_the_template_its_spec_names() {
    let dir = content_dir(&templated());
    let mut app = loom_app(
        dir.path(),
        false,
        LlmPlugin {
            backend: BackendChoice::Offline { seed: 1 },
            ..default()
        },
        SmartActorSettings::default(),
    );
    let world = app.world_mut();
    let gate = world.spawn((Place, DisplayName("the gate".into()))).id();
    let tess = world
        .spawn((
            SmartActor::new("core:terse"),
            DisplayName("Tess".into()),
            InPlace(gate),
        ))
        .id();
    let pip = world
        .spawn((
            SmartActor::new("core:plain"),
            DisplayName("Pip".into()),
            InPlace(gate),
        ))
        .id();
    let log = run_turn(&mut app);
    let prompt_of = |actor| {
        let prompt = log
            .prompts
            .iter()
            .find(|p| p.actor == actor)
            .expect("asked");
        (&*prompt.messages[0].content, &*prompt.messages[1].content)
    };
    let (system, user) = prompt_of(tess);
    assert!(
        system.starts_with("Be terse. Answer in JSON.\nKeep what you say under"),
        "{system}"
    );
    assert!(user.ends_with("\n\nYour move?"), "{user}");
    let (system, user) = prompt_of(pip);
    assert!(system.starts_with(DECISION_RULES), "{system}");
    assert!(user.ends_with(DECISION_QUESTION), "{user}");
}

#[test]
fn the_core_mod_ships_the_built_in_template_and_the_tavern_uses_it() {
    let (app, _) = tavern_app(BackendChoice::Offline { seed: 1 });
    let registry = app.world().resource::<ContentRegistry>();
    assert_eq!(
        registry.prompt("core:smart_actor"),
        Some(&PromptTemplate {
            id: "core:smart_actor".into(),
            ..PromptTemplate::default()
        }),
        "assets/mods/core/prompts/smart_actor.prompt.json holds the built-in text: \
         when DECISION_RULES, DECISION_QUESTION or DECISION_REPLY change, change it too"
    );
    for id in ["tavern:marta", "tavern:silas", "tavern:brom"] {
        let spec = registry.actor(id).expect("a tavern spec");
        assert_eq!(
            registry.prompt_for(spec).map(|t| t.id.as_str()),
            Some("core:smart_actor"),
            "{id}"
        );
    }
}

/// A scene of the common room: Marta, and `second` with these fields.
fn scene_with(second: serde_json::Value) -> SceneDefinition {
    let mut entity = json!({ "id": "tom", "name": "Old Tom", "place": "room", "character": true });
    if let (Some(entity), serde_json::Value::Object(extra)) = (entity.as_object_mut(), second) {
        entity.extend(extra);
    }
    let scene = json!({
        "places": [{ "id": "room", "name": "the common room" }],
        "entities": [
            { "id": "marta", "name": "Marta", "place": "room", "character": true,
              "smartActor": "tavern:marta" },
            entity
        ]
    });
    parse_content(scene.to_string().as_bytes(), "scenes/test.scene.json").expect("a valid scene")
}

#[test]
fn a_scene_key_that_names_no_spec_is_reported_with_the_keys_that_do() {
    let (app, _) = tavern_app(BackendChoice::Offline { seed: 1 });
    let registry = app.world().resource::<ContentRegistry>();
    let scene = scene_with(json!({ "smartActor": "tavern:tom" }));
    let problems = scene.check_actor_keys(registry, "scenes/test.scene.json");
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(
        (problems[0].file.as_str(), problems[0].pointer.as_str()),
        ("scenes/test.scene.json", "/entities/1/smartActor")
    );
    assert!(
        problems[0].message.contains(
            "no loaded actor spec has the key `tavern:tom` (loaded: tavern:brom, tavern:marta, tavern:silas)"
        ),
        "{}",
        problems[0].message
    );
    let tavern = std::fs::read(repo_assets().join("scenes/tavern.scene.json")).expect("the scene");
    let tavern: SceneDefinition =
        parse_content(&tavern, "scenes/tavern.scene.json").expect("a valid scene");
    assert!(
        tavern
            .check_actor_keys(registry, "scenes/tavern.scene.json")
            .is_empty()
    );
}

/// Answers every decision with nothing, noting whose decision was asked for.
#[derive(Default)]
struct AskedBackend(Arc<Mutex<Vec<String>>>);

impl LlmBackend for AskedBackend {
    fn describe(&self) -> String {
        "notes who is asked".to_owned()
    }

    fn complete(&self, request: &LlmRequest, _deltas: DeltaSink) -> LlmFuture {
        // A decision's system message introduces its character: "You are Marta, ...".
        let system = request.messages.first().map_or("", |m| &*m.content);
        if let Some((_, rest)) = system.split_once("\nYou are ")
            && let Some((name, _)) = rest.split_once(',')
        {
            self.0.lock().expect("not poisoned").push(name.to_owned());
        }
        let answer = r#"{"action": null, "speech": "", "thought": ""}"#;
        Box::pin(async move { Ok(LlmReply::text(answer)) })
    }
}

#[test]
fn a_scene_character_without_an_actor_key_is_a_plain_npc_and_never_asks_a_model() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let mut app = loom_app(
        &repo_assets(),
        false,
        LlmPlugin {
            backend: BackendChoice::Custom(Arc::new(AskedBackend(Arc::clone(&asked)))),
            ..default()
        },
        SmartActorSettings::default(),
    );
    let scene = scene_with(json!({}));
    assert!(
        scene
            .check_actor_keys(
                app.world().resource::<ContentRegistry>(),
                "scenes/test.scene.json"
            )
            .is_empty(),
        "a plain NPC needs no spec"
    );
    let spawned = {
        let world = app.world_mut();
        let spawned = scene.spawn(&mut world.commands()).expect("spawns");
        world.flush();
        spawned
    };
    let tom = spawned.entities["tom"];
    assert!(app.world().get::<Character>(tom).is_some());
    assert!(app.world().get::<SmartActor>(tom).is_none());
    for _ in 0..2 {
        let log = run_turn(&mut app);
        assert!(log.prompts.iter().all(|p| p.actor != tom), "{log:#?}");
        assert!(log.rejected.is_empty(), "{log:#?}");
    }
    assert_eq!(
        *asked.lock().expect("not poisoned"),
        ["Marta", "Marta"],
        "only the smart actor asks, once a turn"
    );
}
