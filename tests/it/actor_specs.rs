//! What actor specs bind to: the prompt template they name and the scene entities
//! that name them.

use bevy::prelude::*;
use bevy_loom::content::PromptTemplate;
use bevy_loom::prelude::*;
use bevy_loom::prompt::{DECISION_QUESTION, DECISION_RULES};
use serde_json::json;

use crate::support::{content_dir, core_mod, game, loom_app, manifest, run_turn, tavern_app};

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
        LlmSettings {
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
        (
            prompt.messages[0].content.as_str(),
            prompt.messages[1].content.as_str(),
        )
    };
    let (system, user) = prompt_of(tess);
    assert!(
        system.starts_with("Be terse. Answer in JSON.\nKeep speech under"),
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
