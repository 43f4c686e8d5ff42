//! What smart actors' prompts share from frame to frame (each spec's system message,
//! the actions its policy allows, the commands rendered for a frame) follows content
//! edits, settings changes and renames: nothing stale reaches a prompt.

use bevy::prelude::*;
use bevy_loom::prelude::*;
use bevy_loom::prompt::BlockOptions;
use bevy_loom::prompt::PromptBudgets;
use serde_json::json;

use crate::support::{
    action, content_dir, game, loom_app, manifest, run_turn, update_until, write,
};

const KEEPER: &str = "mods/core/actors/keeper.actor.json";
const GREET: &str = "mods/core/actions/greet.action.json";

fn keeper(persona: &str) -> String {
    json!({ "id": "core:keeper",
            "persona": { "name": "Marta", "role": "the innkeeper", "lines": [persona],
                         "goals": ["Keep the peace."] } })
    .to_string()
}

fn greet(template: &str) -> String {
    action(
        "core:greet",
        json!({ "name": "Greet", "description": "say hello", "template": template, "verb": "greet",
                "targets": { "primary": { "scope": "characters_here", "placeholder": "target" } } }),
    )
}

/// A `core` mod with `wait` and `greet` and the innkeeper's spec, in a folder.
fn files() -> Vec<(&'static str, String)> {
    vec![
        game(&["core"]),
        (
            "mods/core/mod.json",
            manifest(
                "core",
                json!({ "content": {
                    "actions": ["actions/wait.action.json", "actions/greet.action.json"],
                    "actors": ["actors/keeper.actor.json"]
                } }),
            ),
        ),
        (
            "mods/core/actions/wait.action.json",
            action("core:wait", json!({ "verb": "wait" })),
        ),
        (GREET, greet("greet {target}")),
        (KEEPER, keeper("Warm.")),
    ]
}

/// The app on `root` (watched for edits when `watch`), with two innkeepers and a
/// guest in one room.
fn inn(root: &std::path::Path, watch: bool, actors: SmartActorSettings) -> (App, [Entity; 3]) {
    let llm = LlmPlugin {
        backend: BackendChoice::Offline { seed: 1 },
        ..default()
    };
    let mut app = loom_app(root, watch, llm, actors);
    // Until every file has loaded and no rebuild follows for a while.
    let (mut generation, mut steady) = (0, 0);
    update_until(&mut app, "the content to settle", |app| {
        let now = app.world().resource::<ContentRegistry>().generation();
        steady = if now == generation { steady + 1 } else { 0 };
        generation = now;
        steady >= 20
            && app
                .world()
                .resource::<ContentRegistry>()
                .actor("core:keeper")
                .is_some()
    });
    let world = app.world_mut();
    let room = world.spawn((Place, DisplayName("the inn".into()))).id();
    let mut keeper = |name: &str| {
        world
            .spawn((
                SmartActor::new("core:keeper"),
                DisplayName(name.into()),
                InPlace(room),
            ))
            .id()
    };
    let (marta, greta) = (keeper("Marta"), keeper("Greta"));
    let guest = world
        .spawn((Character, DisplayName("Brom".into()), InPlace(room)))
        .id();
    (app, [marta, greta, guest])
}

/// Each actor's system and user messages in a turn.
fn prompts(app: &mut App, actors: &[Entity]) -> Vec<(String, String)> {
    let log = run_turn(app);
    actors
        .iter()
        .map(|&actor| {
            let prompt = log
                .prompts
                .iter()
                .find(|p| p.actor == actor)
                .expect("each actor is asked");
            (
                prompt.messages[0].content.to_string(),
                // This turn's part: the last message of the actor's conversation.
                prompt.messages[prompt.messages.len() - 1]
                    .content
                    .to_string(),
            )
        })
        .collect()
}

#[test]
fn edited_content_and_renames_reach_the_next_prompts() {
    let dir = content_dir(&files());
    let (mut app, [marta, greta, guest]) = inn(dir.path(), true, SmartActorSettings::default());
    let before = prompts(&mut app, &[marta, greta]);
    for (system, user) in &before {
        assert!(system.contains("- Warm."), "{system}");
        assert!(user.contains("Command: \"greet Brom\""), "{user}");
    }
    assert!(before[0].1.contains("Command: \"greet Greta\""));
    assert!(before[1].1.contains("Command: \"greet Marta\""));

    write(dir.path(), KEEPER, &keeper("Cold."));
    write(dir.path(), GREET, &greet("hail {target}"));
    update_until(&mut app, "both edits to apply", |app| {
        let registry = app.world().resource::<ContentRegistry>();
        registry
            .actor("core:keeper")
            .is_some_and(|spec| spec.persona.lines == ["Cold."])
            && registry
                .action("core:greet")
                .is_some_and(|greet| greet.template == "hail {target}")
    });
    app.world_mut()
        .entity_mut(guest)
        .insert(DisplayName("Bram".into()));
    let after = prompts(&mut app, &[marta, greta]);
    for (system, user) in &after {
        assert!(
            system.contains("- Cold.") && !system.contains("Warm"),
            "{system}"
        );
        assert!(user.contains("Command: \"hail Bram\""), "{user}");
        assert!(!user.contains("greet") && !user.contains("Brom"), "{user}");
    }
}

#[test]
fn changed_settings_reach_the_next_prompts() {
    let dir = content_dir(&files());
    let settings = SmartActorSettings {
        combat_verbs: vec!["wait".to_owned()],
        ..default()
    };
    // Not watched: no reload may hide a change of settings.
    let (mut app, [marta, greta, _]) = inn(dir.path(), false, settings);
    for actor in [marta, greta] {
        app.world_mut().entity_mut(actor).insert(InCombat);
    }
    let commands = |prompts: &[(String, String)]| -> Vec<bool> {
        prompts
            .iter()
            .map(|(_, user)| user.contains("Command: \"wait\"") && !user.contains("greet"))
            .collect()
    };
    let before = prompts(&mut app, &[marta, greta]);
    assert_eq!(commands(&before), [true, true], "{before:?}");
    assert!(
        before[0]
            .0
            .contains("Keep what you say under 300 characters")
    );

    {
        let mut settings = app.world_mut().resource_mut::<SmartActorSettings>();
        settings.combat_verbs = vec!["greet".to_owned()];
        settings.limits.max_speech_chars = 120;
    }
    // A frame in which nobody thinks comes between the change and the next turn.
    app.update();
    let after = prompts(&mut app, &[marta, greta]);
    for (system, user) in &after {
        assert!(
            system.contains("Keep what you say under 120 characters"),
            "{system}"
        );
        assert!(
            user.contains("Command: \"greet Brom\"") && !user.contains("Command: \"wait\""),
            "{user}"
        );
    }
}

#[test]
fn a_changed_block_layout_rewrites_an_unchanged_offer() {
    let dir = content_dir(&files());
    let (mut app, [marta, greta, _]) = inn(dir.path(), false, SmartActorSettings::default());
    let grouped = |prompts: &[(String, String)]| -> Vec<bool> {
        prompts
            .iter()
            .map(|(_, user)| user.contains("choose the category"))
            .collect()
    };
    let before = prompts(&mut app, &[marta, greta]);
    assert_eq!(grouped(&before), [false, false], "{before:?}");
    let unchanged = prompts(&mut app, &[marta, greta]);
    for (_, user) in &unchanged {
        assert!(
            !user.contains("Command: \"greet Brom\""),
            "the same offer is not shown again: {user}"
        );
    }
    // The offer is the same; the block's layout is not.
    app.world_mut().resource_mut::<SmartActorSettings>().block = BlockOptions {
        min_actions: 1,
        min_namespaces: 1,
    };
    let after = prompts(&mut app, &[marta, greta]);
    assert_eq!(grouped(&after), [true, true], "{after:?}");
}

#[test]
fn an_offer_that_outgrows_its_budget_after_an_edit_is_trimmed_again() {
    let dir = content_dir(&files());
    // Room for two of Marta's three actions.
    let settings = SmartActorSettings {
        budgets: PromptBudgets {
            total: 207,
            ..default()
        },
        ..default()
    };
    let (mut app, [marta, _, _]) = inn(dir.path(), true, settings);
    let offered = |log: &crate::support::TurnLog| {
        let prompt = log.prompts.iter().find(|p| p.actor == marta);
        prompt.expect("Marta is asked").offered.len()
    };
    assert_eq!(offered(&run_turn(&mut app)), 2);
    // The same commands, each with a much longer description.
    let long =
        "say hello, warmly, as an innkeeper greets a guest she has known for years ".repeat(2);
    let edited = action(
        "core:greet",
        json!({ "name": "Greet", "description": long.trim(), "template": "greet {target}", "verb": "greet",
                "targets": { "primary": { "scope": "characters_here", "placeholder": "target" } } }),
    );
    write(dir.path(), GREET, &edited);
    update_until(&mut app, "the edit to apply", |app| {
        let registry = app.world().resource::<ContentRegistry>();
        registry
            .action("core:greet")
            .is_some_and(|greet| greet.description.starts_with("say hello, warmly"))
    });
    assert!(
        offered(&run_turn(&mut app)) < 2,
        "the kept mask no longer fits the budget"
    );
}
