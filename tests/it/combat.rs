//! Combat: actors in combat are offered only the combat verbs, and any other answer is
//! a pass with a "hesitates" line, so combat always advances.

use bevy::prelude::*;
use bevy_loom::prelude::*;

use crate::support::{FixedBackend, run_turn, tavern_app};

/// Everyone hesitating, as written.
#[derive(Resource, Default)]
struct Hesitations(Vec<ActorHesitated>);

fn record(mut seen: ResMut<Hesitations>, mut hesitated: MessageReader<ActorHesitated>) {
    seen.0.extend(hesitated.read().cloned());
}

/// The tavern with every smart actor in combat, answering `answer`. Brom and Silas
/// are armed; Marta's spec allows no combat action at all.
fn fight(answer: &str) -> App {
    let (mut app, scene) = tavern_app(FixedBackend::choice(answer));
    app.init_resource::<Hesitations>()
        .add_systems(Update, record.after(LoomSystems::Decide));
    for id in ["marta", "silas", "brom"] {
        let mut actor = app.world_mut().entity_mut(scene.entities[id]);
        actor.insert(InCombat);
        if id != "marta"
            && let Some(mut tags) = actor.get_mut::<Tags>()
        {
            tags.0.insert("armed".to_owned());
        }
    }
    app
}

fn combat_verb(action_id: &str) -> bool {
    ["combat:attack", "combat:flee"].contains(&action_id)
}

#[test]
fn in_combat_only_attack_and_flee_are_offered_and_chosen() {
    let mut app = fight(r#"{"action": 1, "speech": "", "thought": "Strike first."}"#);
    let log = run_turn(&mut app);
    app.update();
    assert_eq!(log.prompts.len(), 3);
    for prompt in &log.prompts {
        assert!(
            prompt.offered.iter().all(|a| combat_verb(a.action_id)),
            "{:?}",
            prompt.offered
        );
    }
    let offered: Vec<usize> = log.prompts.iter().map(|p| p.offered.len()).collect();
    assert_eq!(
        offered.iter().filter(|&&n| n == 0).count(),
        1,
        "Marta has no combat action: {offered:?}"
    );
    assert_eq!(log.requests.len(), 2, "{log:#?}");
    assert!(log.requests.iter().all(|r| combat_verb(&r.action_id)));
    // With nothing to choose, Marta's answer names an action that was not offered.
    let hesitations = &app.world().resource::<Hesitations>().0;
    assert_eq!(
        hesitations
            .iter()
            .map(|h| h.line.as_str())
            .collect::<Vec<_>>(),
        ["Marta hesitates."]
    );
}

#[test]
fn any_other_answer_in_combat_is_a_pass_that_hesitates() {
    for (answer, rejected) in [
        ("I put down my weapon and pour a drink.", true),
        (r#"{"action": 40, "speech": "", "thought": ""}"#, true),
        (
            r#"{"action": null, "speech": "Wait!", "thought": ""}"#,
            false,
        ),
    ] {
        let mut app = fight(answer);
        let log = run_turn(&mut app);
        app.update();
        assert!(log.requests.is_empty(), "{answer}: {log:#?}");
        let hesitations = &app.world().resource::<Hesitations>().0;
        let mut lines: Vec<&str> = hesitations.iter().map(|h| h.line.as_str()).collect();
        lines.sort_unstable();
        assert_eq!(
            lines,
            ["Brom hesitates.", "Marta hesitates.", "Silas hesitates."],
            "{answer}"
        );
        assert!(
            hesitations.iter().all(|h| h.reason.is_some() == rejected),
            "{answer}: {hesitations:?}"
        );
    }
}

#[test]
fn out_of_combat_every_allowed_action_is_offered() {
    let (mut app, _) = tavern_app(BackendChoice::Offline { seed: 1 });
    let log = run_turn(&mut app);
    assert_eq!(log.prompts.len(), 3, "every smart actor thought");
    assert!(
        log.prompts
            .iter()
            .all(|p| p.offered.iter().any(|a| !combat_verb(a.action_id))),
        "{:?}",
        log.prompts.iter().map(|p| &p.offered).collect::<Vec<_>>()
    );
}

/// The fight of [`fight`], in which the player tells Brom to stop and Brom answers
/// `answer`.
fn brom_answers_the_player(answer: &str) -> App {
    let mut app = fight(answer);
    app.world_mut().write_message(PlayerSaid {
        text: "@Brom, stop!".to_owned(),
    });
    app.update();
    crate::support::update_until(&mut app, "Brom to answer", |app| {
        let mut minds = app.world_mut().query::<&ActorMind>();
        !minds.iter(app.world()).any(ActorMind::is_thinking)
    });
    app.update();
    app
}

/// A fighter the player speaks to answers: its line is said, and with no combat action
/// chosen it hesitates, so combat still advances.
#[test]
fn a_fighter_spoken_to_answers_and_hesitates() {
    let app = brom_answers_the_player(r#"{"do": 0, "say": "Never!"}"#);
    let log = app.world().resource::<crate::support::TurnLog>();
    let said: Vec<&str> = log.spoke.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(said, ["Never!"], "{log:#?}");
    let hesitations = &app.world().resource::<Hesitations>().0;
    let lines: Vec<&str> = hesitations.iter().map(|h| h.line.as_str()).collect();
    assert_eq!(lines, ["Brom hesitates."]);
}

/// A fighter the player speaks to is offered its combat actions with its reply, and
/// asked for both: it answers and fights on, so talking to it does not stall the fight.
#[test]
fn a_fighter_spoken_to_answers_and_fights_on() {
    let app = brom_answers_the_player(r#"{"do": 1, "say": "Never!"}"#);
    let log = app.world().resource::<crate::support::TurnLog>();
    let [prompt] = log.prompts.as_slice() else {
        panic!("only Brom is asked: {log:#?}");
    };
    assert!(
        !prompt.offered.is_empty() && prompt.offered.iter().all(|a| combat_verb(a.action_id)),
        "{:?}",
        prompt.offered
    );
    let user = &prompt.messages.last().expect("a user message").content;
    assert!(
        user.contains(bevy_loom::prompt::DECISION_REPLY_IN_COMBAT)
            && !user.contains(bevy_loom::prompt::DECISION_REPLY),
        "{user}"
    );
    let said: Vec<&str> = log.spoke.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(said, ["Never!"], "{log:#?}");
    let [request] = log.requests.as_slice() else {
        panic!("Brom strikes as he answers: {log:#?}");
    };
    assert!(combat_verb(&request.action_id), "{request:?}");
    assert!(app.world().resource::<Hesitations>().0.is_empty());
}

/// A fight that breaks out while an actor waits on its answer is the answer's judge:
/// an action out of combat chosen before it is not carried out, and the actor
/// hesitates, as in combat.
#[test]
fn an_answer_that_comes_once_a_fight_broke_out_is_judged_by_its_rules() {
    let (backend, gate) = crate::support::GatedBackend::choice(|_| r#"{"do": 1}"#.to_owned());
    let (mut app, scene) = tavern_app(backend);
    app.init_resource::<Hesitations>()
        .add_systems(Update, record.after(LoomSystems::Decide));
    let marta = scene.entities["marta"];
    app.world_mut().write_message(TurnEnded);
    app.update();
    app.world_mut().entity_mut(marta).insert(InCombat);
    gate.store(true, std::sync::atomic::Ordering::SeqCst);
    let reason = crate::support::rejection_of(&mut app, marta);
    assert!(
        matches!(
            reason,
            bevy_loom::prompt::RejectionReason::NoLongerAllowed(_)
        ),
        "{reason}"
    );
    let log = app.world().resource::<crate::support::TurnLog>();
    assert!(log.requests.iter().all(|r| r.actor != marta), "{log:#?}");
    let hesitations = &app.world().resource::<Hesitations>().0;
    assert!(
        hesitations.iter().any(|h| h.actor == marta),
        "{hesitations:?}"
    );
}
