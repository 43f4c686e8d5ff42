//! The shipped content loads through the real `AssetServer` and a turn on the
//! offline backend ends in validated `ActionRequest`s.

use bevy::prelude::*;
use bevy_loom::prelude::*;

use bevy_loom::prompt::PromptBudgets;

use crate::support::{SeenErrors, run_turn, tavern_app, tavern_app_with};

#[test]
fn shipped_content_loads_cleanly() {
    let (app, _) = tavern_app(BackendChoice::Offline { seed: 1 });
    let errors = &app.world().resource::<SeenErrors>().0;
    assert!(errors.is_empty(), "{errors:#?}");
    let registry = app.world().resource::<ContentRegistry>();
    assert!(registry.mods().len() >= 5);
    assert!(registry.actions().len() >= 12);
    for id in ["core", "positioning", "items", "conversation", "combat"] {
        let metadata = registry.action_metadata(id).expect("an action mod");
        assert!(
            metadata.purpose.is_some() && metadata.consider_when.is_some(),
            "{id} has metadata"
        );
    }
    assert!(
        registry.action("combat:flee").is_some(),
        "RON action files load"
    );
}

#[test]
fn an_offline_turn_ends_in_action_requests_for_offered_actions() {
    let (mut app, scene) = tavern_app(BackendChoice::Offline { seed: 1 });
    let log = run_turn(&mut app);
    let smart: Vec<Entity> = ["marta", "silas", "brom"]
        .iter()
        .map(|id| scene.entities[*id])
        .collect();
    assert_eq!(log.prompts.len(), 3, "each smart actor is asked once");
    assert!(log.rejected.is_empty(), "{:#?}", log.rejected);
    assert_eq!(log.requests.len(), 3);
    for request in &log.requests {
        assert!(smart.contains(&request.actor));
        let prompt = log
            .prompts
            .iter()
            .find(|p| p.actor == request.actor)
            .expect("a prompt");
        let offered = prompt
            .offered
            .iter()
            .find(|a| a.command == request.command)
            .expect("the command was offered");
        assert_eq!(
            (offered.action_id, offered.targets),
            (&*request.action_id, &*request.targets)
        );
    }
    let player = scene.entities["player"];
    assert!(
        log.requests.iter().all(|r| r.actor != player),
        "the player is not a smart actor"
    );
}

#[test]
fn the_prompt_is_stable_rules_first_then_grouped_actions_then_perception() {
    // A budget with room for every mod's group: the default keeps a CPU server's
    // first prompt small, which leaves too few actions to group.
    let roomy = SmartActorSettings {
        budgets: PromptBudgets {
            total: 1000,
            ..default()
        },
        ..default()
    };
    let (mut app, scene) = tavern_app_with(BackendChoice::Offline { seed: 1 }, roomy);
    let log = run_turn(&mut app);
    let marta = scene.entities["marta"];
    let prompt = log
        .prompts
        .iter()
        .find(|p| p.actor == marta)
        .expect("Marta was asked");
    let system = &prompt.messages[0].content;
    let user = &prompt.messages[1].content;
    assert!(system.starts_with(bevy_loom::prompt::DECISION_RULES));
    assert!(system.contains("You are Marta"));
    assert!(user.starts_with("<available_actions>"), "{user}");
    let actions_end = user.find("</available_actions>").expect("the block ends");
    let perception = user
        .find("<perception>\nYou are in the common room.")
        .expect("what Marta perceives");
    assert!(
        actions_end < perception,
        "what changes more often comes later"
    );
    let positioning = user.find("## POSITIONING ACTIONS").expect("grouped");
    let items = user.find("## ITEMS ACTIONS").expect("grouped");
    assert!(
        user.find("## CORE ACTIONS").expect("grouped") < positioning && positioning < items,
        "the game file's group order"
    );
    assert!(user.contains("**Purpose:** ") && user.contains("**Consider when:** "));
    assert!(
        !user.contains("COMBAT ACTIONS"),
        "Marta's policy leaves combat out"
    );
    assert!(user.contains("[Index: 1] Command: \""));
}

#[test]
fn cooldown_skips_turns_and_same_seed_repeats_the_transcript() {
    let transcript = |seed| {
        let (mut app, scene) = tavern_app(BackendChoice::Offline { seed });
        let brom = scene.entities["brom"];
        (0..3)
            .map(|_| {
                let log = run_turn(&mut app);
                let asked = log.prompts.iter().any(|p| p.actor == brom);
                let mut commands: Vec<String> =
                    log.requests.iter().map(|r| r.command.clone()).collect();
                commands.sort();
                (asked, commands)
            })
            .collect::<Vec<_>>()
    };
    let first = transcript(7);
    assert_eq!(
        first.iter().map(|(asked, _)| *asked).collect::<Vec<_>>(),
        [true, false, true],
        "Brom's cooldown is one turn"
    );
    assert_eq!(first, transcript(7));
}

#[test]
fn an_actor_with_an_unknown_spec_is_rejected_and_nothing_else_breaks() {
    let (mut app, scene) = tavern_app(BackendChoice::Offline { seed: 1 });
    let stranger = app
        .world_mut()
        .spawn((
            SmartActor::new("tavern:nobody"),
            DisplayName("Stranger".into()),
        ))
        .id();
    let log = run_turn(&mut app);
    assert_eq!(log.rejected.len(), 1);
    assert_eq!(log.rejected[0].actor, stranger);
    assert_eq!(
        log.rejected[0].reason,
        RejectionReason::UnknownSpec("tavern:nobody".into())
    );
    assert_eq!(log.requests.len(), 3, "the others still act");
    assert!(
        log.requests
            .iter()
            .all(|r| r.actor != stranger && r.actor != scene.entities["player"])
    );
}

#[test]
fn prompts_report_their_sections_and_how_much_of_the_last_one_they_reuse() {
    let (mut app, scene) = tavern_app(BackendChoice::Offline { seed: 1 });
    let marta = scene.entities["marta"];
    let prompt_of = |log: &crate::support::TurnLog| {
        log.prompts
            .iter()
            .find(|p| p.actor == marta)
            .cloned()
            .expect("Marta was asked")
    };
    let first = prompt_of(&run_turn(&mut app));
    let names: Vec<&str> = first.sections.iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "rules",
            "character",
            "backstory",
            "goals",
            "actions",
            "perception",
            "memories",
            "question"
        ]
    );
    let estimated: usize = first
        .messages
        .iter()
        .map(|m| bevy_loom::prompt::estimate_tokens(&m.content))
        .sum();
    let counted: usize = first.sections.iter().map(|s| s.tokens).sum();
    assert!(
        counted.abs_diff(estimated) <= first.sections.len(),
        "{counted} vs {estimated}"
    );
    assert_eq!(first.reused_prefix, 0.0);
    let second = prompt_of(&run_turn(&mut app));
    assert!(
        second.reused_prefix >= 0.85,
        "a warm turn reuses most of the last prompt: {}",
        second.reused_prefix
    );
}
