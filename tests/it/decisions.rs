//! A model's bad answers become `DecisionRejected` and never an `ActionRequest`.

use std::sync::Arc;

use bevy::prelude::*;
use bevy_loom::prelude::*;

use crate::support::{FixedBackend, run_turn, tavern_app};

fn turn_with_answer(answer: &str) -> crate::support::TurnLog {
    let (mut app, _) = tavern_app(FixedBackend::choice(answer));
    run_turn(&mut app)
}

#[test]
fn garbage_is_rejected() {
    let log = turn_with_answer("Marta smiles and pours another ale.");
    assert!(log.requests.is_empty());
    assert_eq!(log.rejected.len(), 3);
    assert!(
        log.rejected
            .iter()
            .all(|r| matches!(r.reason, RejectionReason::NotAnObject(_)))
    );
    assert!(
        log.rejected
            .iter()
            .all(|r| r.raw == "Marta smiles and pours another ale."),
        "the raw answer is kept"
    );
}

#[test]
fn an_index_that_was_not_offered_is_rejected() {
    let log = turn_with_answer(r#"{"action": 999, "speech": "Ha!", "thought": ""}"#);
    assert!(log.requests.is_empty());
    assert!(
        log.spoke.is_empty(),
        "a rejected answer says nothing either"
    );
    assert_eq!(log.rejected.len(), 3);
    assert!(
        log.rejected
            .iter()
            .all(|r| matches!(r.reason, RejectionReason::NotOffered { index: 999, .. }))
    );
}

#[test]
fn an_oversized_answer_is_rejected() {
    let speech = "la ".repeat(200);
    let log = turn_with_answer(&format!(
        r#"{{"action": 1, "speech": "{speech}", "thought": ""}}"#
    ));
    assert!(log.requests.is_empty());
    assert_eq!(log.rejected.len(), 3);
    assert!(log.rejected.iter().all(|r| matches!(
        r.reason,
        RejectionReason::TooLong {
            field: "speech",
            ..
        }
    )));
}

#[test]
fn an_answer_over_the_size_limit_is_rejected_whole() {
    let thought = "hm ".repeat(2000);
    let log = turn_with_answer(&format!(
        r#"{{"action": 1, "speech": "", "thought": "{thought}"}}"#
    ));
    assert!(log.requests.is_empty());
    assert_eq!(log.rejected.len(), 3);
    assert!(
        log.rejected
            .iter()
            .all(|r| matches!(r.reason, RejectionReason::AnswerTooLarge { .. }))
    );
}

#[test]
fn null_passes_and_speech_is_still_heard() {
    let log = turn_with_answer(
        r#"{"action": null, "speech": "Quiet night.", "thought": "Nothing to do."}"#,
    );
    assert!(log.requests.is_empty());
    assert!(log.rejected.is_empty());
    assert_eq!(log.spoke.len(), 3);
    assert!(log.spoke.iter().all(|s| s.text == "Quiet night."));
}

#[test]
fn a_valid_index_becomes_the_offered_request() {
    let log = turn_with_answer(r#"{"action": 1, "speech": "Evening.", "thought": ""}"#);
    assert!(log.rejected.is_empty(), "{:#?}", log.rejected);
    assert_eq!(log.requests.len(), 3);
    for request in &log.requests {
        let prompt = log
            .prompts
            .iter()
            .find(|p| p.actor == request.actor)
            .expect("a prompt");
        let first = prompt.offered.get(1).expect("an action offered");
        assert_eq!(first.command, request.command);
    }
}

/// A backend that panics on every request.
struct PanickingBackend;

impl bevy_loom::llm::LlmBackend for PanickingBackend {
    fn describe(&self) -> String {
        "panics".to_owned()
    }

    fn complete(
        &self,
        _request: &bevy_loom::llm::LlmRequest,
        _deltas: bevy_loom::llm::DeltaSink,
    ) -> bevy_loom::llm::LlmFuture {
        Box::pin(async { panic!("a backend bug") })
    }
}

#[test]
fn a_panicking_backend_still_ends_every_request_and_actors_think_again() {
    let (mut app, _) = tavern_app(BackendChoice::Custom(Arc::new(PanickingBackend)));
    for _ in 0..2 {
        let log = run_turn(&mut app);
        assert!(log.requests.is_empty());
        assert!(
            log.rejected.len() >= 2,
            "every thinking actor gets an outcome: {:#?}",
            log.rejected
        );
        assert!(log.rejected.iter().all(|r| matches!(
            r.reason,
            RejectionReason::NoAnswer(bevy_loom::llm::LlmError::BackendFailed(_))
        )));
    }
}

/// Answers after a long pause, so a request is still out when its actor leaves.
struct SlowBackend;

impl bevy_loom::llm::LlmBackend for SlowBackend {
    fn describe(&self) -> String {
        "slow".to_owned()
    }

    fn complete(
        &self,
        _request: &bevy_loom::llm::LlmRequest,
        _deltas: bevy_loom::llm::DeltaSink,
    ) -> bevy_loom::llm::LlmFuture {
        Box::pin(async {
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            Ok(bevy_loom::llm::LlmReply::text(r#"{"action": 1}"#))
        })
    }
}

#[test]
fn an_actor_that_leaves_has_its_request_cancelled() {
    use bevy::prelude::*;
    #[derive(Resource, Default)]
    struct Outcomes(Vec<bevy_loom::llm::LlmResponse>);
    let (mut app, scene) = tavern_app(BackendChoice::Custom(Arc::new(SlowBackend)));
    app.init_resource::<Outcomes>().add_systems(
        Update,
        (|mut seen: ResMut<Outcomes>, mut done: MessageReader<bevy_loom::llm::LlmResponse>| {
            seen.0.extend(done.read().cloned());
        })
        .after(LoomSystems::Receive),
    );
    app.world_mut().write_message(TurnEnded);
    app.update();
    assert_eq!(app.world().resource::<LlmBridge>().in_flight(), 3);
    app.world_mut().despawn(scene.entities["marta"]);
    crate::support::update_until(&mut app, "the cancellation", |app| {
        !app.world().resource::<Outcomes>().0.is_empty()
    });
    let outcomes = &app.world().resource::<Outcomes>().0;
    assert_eq!(outcomes.len(), 1, "only Marta's request ends: {outcomes:?}");
    assert_eq!(outcomes[0].result, Err(bevy_loom::llm::LlmError::Cancelled));
    assert_eq!(app.world().resource::<LlmBridge>().in_flight(), 2);
}

/// A game that changes servers inserts a new bridge: the actors waiting on the old
/// one's answers, which never come, ask the new one.
#[test]
fn actors_waiting_on_a_replaced_bridge_ask_the_new_one() {
    let (mut app, scene) = tavern_app(BackendChoice::Custom(Arc::new(SlowBackend)));
    // Made before the old one is asked anything, as a game may keep a second ready.
    let answer = bevy_loom::llm::LlmReply::text(r#"{"action": null}"#);
    let new = LlmBridge::new(
        Arc::new(FixedBackend(answer)),
        std::time::Duration::from_secs(30),
        default(),
    );
    app.world_mut().write_message(TurnEnded);
    app.update();
    let old = app.world().resource::<LlmBridge>();
    assert_eq!(old.in_flight(), 3);
    assert_ne!(new.serial(), old.serial());
    app.world_mut().insert_resource(new);
    crate::support::update_until(&mut app, "every actor to decide", |app| {
        let mut minds = app.world_mut().query::<&ActorMind>();
        !minds.iter(app.world()).any(ActorMind::is_thinking)
    });
    app.update();
    let log = app.world().resource::<crate::support::TurnLog>();
    let mut passed: Vec<Entity> = log.passed.iter().map(|passed| passed.actor).collect();
    let mut actors = ["marta", "silas", "brom"].map(|id| scene.entities[id]);
    passed.sort_unstable();
    actors.sort_unstable();
    assert_eq!(passed, actors, "each answered by the new bridge: {log:#?}");
    assert_eq!(log.prompts.len(), 6, "each asked of both bridges");
}

#[test]
fn an_actor_that_stops_being_smart_and_starts_again_thinks_again() {
    use bevy::prelude::*;
    use bevy_loom::actors::ThinkState;
    // One actor a frame: after the turn's first frame one is waiting on the model and
    // two are still queued.
    let settings = SmartActorSettings {
        max_new_thinkers_per_frame: 1,
        ..SmartActorSettings::default()
    };
    let (mut app, scene) =
        crate::support::tavern_app_with(BackendChoice::Custom(Arc::new(SlowBackend)), settings);
    app.world_mut().write_message(TurnEnded);
    app.update();
    let state = |app: &App, entity: Entity| {
        app.world()
            .get::<ActorMind>(entity)
            .expect("a mind")
            .state()
            .clone()
    };
    let actors = ["marta", "silas", "brom"].map(|id| scene.entities[id]);
    let waiting = actors
        .into_iter()
        .find(|&a| matches!(state(&app, a), ThinkState::Waiting(_)))
        .expect("one actor waits on the model");
    let queued = actors
        .into_iter()
        .find(|&a| matches!(state(&app, a), ThinkState::Queued { .. }))
        .expect("one actor is still queued");
    // Both stop being smart actors before the next frame, in which the queued one
    // would otherwise be sent.
    let specs = [waiting, queued].map(|actor| {
        let spec = app.world().get::<SmartActor>(actor).expect("smart").clone();
        app.world_mut().entity_mut(actor).remove::<SmartActor>();
        spec
    });
    app.update();
    for (actor, spec) in [waiting, queued].into_iter().zip(specs) {
        assert_eq!(state(&app, actor), ThinkState::Idle, "forgotten, not stuck");
        app.world_mut().entity_mut(actor).insert(spec);
    }
    app.world_mut().write_message(TurnEnded);
    crate::support::update_until(&mut app, "both to ask the model again", |app| {
        [waiting, queued]
            .into_iter()
            .all(|actor| matches!(state(app, actor), ThinkState::Waiting(_)))
    });
}

/// The answer choosing the first offered command that starts with "give ".
fn give(user: &str) -> String {
    let index = (user.lines())
        .find(|line| line.contains("Command: \"give "))
        .and_then(|line| line.strip_prefix("[Index: "))
        .and_then(|rest| rest.split(']').next())
        .map_or(0, |n| n.parse::<usize>().expect("an index"));
    format!(r#"{{"action": {index}}}"#)
}

#[test]
fn an_action_chosen_under_a_spec_replaced_meanwhile_is_rejected() {
    let (backend, gate) = crate::support::GatedBackend::choice(give);
    let (mut app, scene) = tavern_app(backend);
    let marta = scene.entities["marta"];
    app.world_mut().write_message(TurnEnded);
    app.update();
    let log = app.world().resource::<crate::support::TurnLog>();
    let prompt = (log.prompts.iter())
        .find(|p| p.actor == marta)
        .expect("she is asked");
    assert!(
        (prompt.offered.iter()).any(|a| a.action_id == "items:give"),
        "she is offered a give"
    );
    // She becomes Brom, whose spec allows no action on items, before her answer comes.
    (app.world_mut().entity_mut(marta)).insert(SmartActor::new("tavern:brom"));
    gate.store(true, std::sync::atomic::Ordering::SeqCst);
    let reason = crate::support::rejection_of(&mut app, marta);
    let log = app.world().resource::<crate::support::TurnLog>();
    assert!(
        (log.requests.iter()).all(|r| r.actor != marta),
        "{:?}",
        log.requests
    );
    assert_eq!(
        reason,
        RejectionReason::NoLongerAllowed("items:give".to_owned())
    );
}

/// The tavern with Marta's answer (`answer` to her prompt) held back until her spec id
/// is changed to one never loaded; the app, Marta, and why her answer was rejected.
fn answered_under_a_spec_not_loaded(
    answer: fn(&str) -> String,
) -> (bevy::app::App, bevy::ecs::entity::Entity, RejectionReason) {
    let (backend, gate) = crate::support::GatedBackend::choice(answer);
    let (mut app, scene) = tavern_app(backend);
    let marta = scene.entities["marta"];
    app.world_mut().write_message(TurnEnded);
    app.update();
    (app.world_mut().entity_mut(marta)).insert(SmartActor::new("tavern:marta_typo"));
    gate.store(true, std::sync::atomic::Ordering::SeqCst);
    let reason = crate::support::rejection_of(&mut app, marta);
    (app, marta, reason)
}

#[test]
fn an_action_chosen_under_a_spec_no_longer_loaded_says_the_spec_is_missing() {
    let (_, _, reason) = answered_under_a_spec_not_loaded(give);
    assert_eq!(
        reason,
        RejectionReason::UnknownSpec("tavern:marta_typo".to_owned()),
        "{reason}"
    );
}

/// Under a spec no longer loaded an actor says nothing either, and the model is not
/// told of the game's missing content, which it cannot mend.
#[test]
fn a_line_said_under_a_spec_no_longer_loaded_is_rejected_and_not_told_the_model() {
    // A line, and a command named in words, which no action of a spec not loaded is.
    let (mut app, marta, reason) = answered_under_a_spec_not_loaded(|_| {
        r#"{"do": "order ale", "say": "Evening."}"#.to_owned()
    });
    assert_eq!(
        reason,
        RejectionReason::UnknownSpec("tavern:marta_typo".to_owned())
    );
    let log = app.world().resource::<crate::support::TurnLog>();
    assert!(
        log.spoke.iter().all(|s| s.actor != marta),
        "{:?}",
        log.spoke
    );
    // Her spec mended, her next prompt says nothing of it.
    (app.world_mut().entity_mut(marta)).insert(SmartActor::new("tavern:marta"));
    let log = run_turn(&mut app);
    let asked = (log.prompts.iter().rev())
        .find(|p| p.actor == marta)
        .expect("she is asked again");
    let user = &asked.messages[asked.messages.len() - 1].content;
    assert!(!user.contains("not used"), "{user}");
}

/// A tavern turn in which every actor answers `answer`, with these settings.
fn turn_with(answer: &str, settings: SmartActorSettings) -> crate::support::TurnLog {
    let (mut app, _) = crate::support::tavern_app_with(FixedBackend::choice(answer), settings);
    run_turn(&mut app)
}

/// Budgets set as high as they go ("never trim") ask every actor as usual.
#[test]
fn the_highest_budgets_trim_nothing_and_break_nothing() {
    let settings = SmartActorSettings {
        budgets: bevy_loom::prompt::PromptBudgets {
            total: usize::MAX,
            tasks: usize::MAX,
            abilities: usize::MAX,
            ..Default::default()
        },
        offer_abilities: bevy_loom::actors::AbilityOffers::Always,
        ..SmartActorSettings::default()
    };
    let log = turn_with(r#"{"do": 0, "say": "Evening."}"#, settings);
    assert_eq!(log.prompts.len(), 3, "{log:#?}");
    assert_eq!(log.spoke.len(), 3);
    // Nothing trimmed: everyone is offered as much as with a budget that fits all.
    let roomy = SmartActorSettings {
        budgets: bevy_loom::prompt::PromptBudgets {
            total: 100_000,
            tasks: 100_000,
            abilities: 100_000,
            ..Default::default()
        },
        offer_abilities: bevy_loom::actors::AbilityOffers::Always,
        ..SmartActorSettings::default()
    };
    let fits = turn_with(r#"{"do": 0, "say": "Evening."}"#, roomy);
    let offered = |log: &crate::support::TurnLog| -> Vec<usize> {
        log.prompts.iter().map(|p| p.offered.len()).collect()
    };
    assert_eq!(offered(&log), offered(&fits));
}

#[test]
fn an_utterance_becomes_the_offered_command_it_names() {
    // Everyone in the common room is offered "look around".
    let log = turn_with_answer(r#"{"type": "UTTERANCE", "utterance": "Look around."}"#);
    assert!(log.rejected.is_empty(), "{:#?}", log.rejected);
    assert_eq!(log.requests.len(), 3);
    assert!(log.requests.iter().all(|r| r.command == "look around"));
    assert!(log.spoke.is_empty(), "an utterance says nothing aloud");
}

#[test]
fn a_command_named_with_a_line_to_say_is_taken_and_the_line_said() {
    let log = turn_with_answer(r#"{"do": "look around", "say": "Quiet night."}"#);
    assert!(log.rejected.is_empty(), "{:#?}", log.rejected);
    assert_eq!(log.requests.len(), 3);
    assert!(log.requests.iter().all(|r| r.command == "look around"));
    assert_eq!(log.spoke.len(), 3, "each says the line: {:#?}", log.spoke);
    assert!(log.spoke.iter().all(|s| s.text == "Quiet night."));
}

#[test]
fn an_utterance_may_use_the_mods_verb_aliases_and_articles() {
    // `items` aliases "look at" to "examine"; articles are not compared. The budget
    // leaves every offered action in.
    let settings = SmartActorSettings {
        budgets: bevy_loom::prompt::PromptBudgets {
            total: 10_000,
            ..Default::default()
        },
        ..SmartActorSettings::default()
    };
    let log = turn_with(
        r#"{"type": "UTTERANCE", "utterance": "look at the oak bench"}"#,
        settings,
    );
    let marta_and_silas: Vec<&ActionRequest> = log
        .requests
        .iter()
        .filter(|r| r.command == "examine oak bench")
        .collect();
    assert_eq!(
        marta_and_silas.len(),
        2,
        "the two actors allowed `items:*` examine the bench: {log:#?}"
    );
    // Brom's policy has no items actions: the verb is not his to use.
    assert_eq!(log.rejected.len(), 1, "{:#?}", log.rejected);
    assert_eq!(
        log.rejected[0].reason,
        RejectionReason::VerbNotAllowed {
            line: "look at the oak bench".into(),
            verb: "examine".into()
        }
    );
}

#[test]
fn an_utterance_outside_what_was_offered_is_rejected_with_why() {
    let cases = [
        (
            "pick up the moon",
            RejectionReason::CommandNotOffered("pick up the moon".into()),
        ),
        (
            "dance a jig",
            RejectionReason::UnknownCommand("dance a jig".into()),
        ),
        // Prefix or extra words are not guessed at.
        (
            "look around carefully",
            RejectionReason::CommandNotOffered("look around carefully".into()),
        ),
    ];
    for (line, reason) in cases {
        let log = turn_with_answer(&format!(
            r#"{{"type": "UTTERANCE", "utterance": "{line}"}}"#
        ));
        assert!(log.requests.is_empty(), "{line}: {log:#?}");
        assert_eq!(log.rejected.len(), 3, "{line}");
        let reasons: Vec<&RejectionReason> = log.rejected.iter().map(|r| &r.reason).collect();
        // Brom may not pick things up at all.
        assert!(
            reasons.iter().filter(|r| ***r == reason).count() >= 2,
            "{line}: {reasons:?}"
        );
    }
}

#[test]
fn color_is_heard_and_none_passes() {
    let log = turn_with_answer(r#"{"do": 0, "say": "Another round, then."}"#);
    assert!(log.requests.is_empty() && log.rejected.is_empty() && log.passed.is_empty());
    assert_eq!(log.spoke.len(), 3);
    assert!(log.spoke.iter().all(|s| s.text == "Another round, then."));

    let log = turn_with_answer(r#"{"do": 0, "say": "", "thought": "Not my business."}"#);
    assert!(log.requests.is_empty() && log.rejected.is_empty() && log.spoke.is_empty());
    assert_eq!(log.passed.len(), 3);
    assert!(log.passed.iter().all(|p| p.thought == "Not my business."));
}

#[test]
fn a_rejected_decision_takes_the_configured_fallback() {
    let settings = SmartActorSettings {
        fallback: DecisionFallback::Action("core:look_around".into()),
        ..SmartActorSettings::default()
    };
    let log = turn_with("I refuse to answer in JSON.", settings);
    assert_eq!(log.rejected.len(), 3);
    assert!(
        log.rejected
            .iter()
            .all(|r| r.fallback.as_deref() == Some("look around")),
        "{:#?}",
        log.rejected
    );
    assert_eq!(log.requests.len(), 3);
    assert!(
        log.requests
            .iter()
            .all(|r| &*r.action_id == "core:look_around")
    );

    // The default passes.
    let log = turn_with_answer("I refuse to answer in JSON.");
    assert!(log.requests.is_empty());
    assert!(log.rejected.iter().all(|r| r.fallback.is_none()));
}

#[test]
fn a_decision_smuggled_into_a_line_stays_words() {
    let log =
        turn_with_answer(r#"{"type": "COLOR", "color": "{\"type\": \"ACTION\", \"action\": 1}"}"#);
    assert!(log.requests.is_empty(), "{log:#?}");
    assert_eq!(log.spoke.len(), 3);
    assert!(
        log.spoke
            .iter()
            .all(|s| s.text == r#"{"type": "ACTION", "action": 1}"#)
    );
}

#[test]
fn an_actor_with_max_color_lines_may_not_say_more() {
    // Brom's spec has `"maxColorLines": 1`; Marta's and Silas's have no limit.
    let log = turn_with_answer(r#"{"type": "COLOR", "color": "Hm.\nGo away."}"#);
    assert_eq!(log.spoke.len(), 2, "{log:#?}");
    assert_eq!(log.rejected.len(), 1);
    assert_eq!(
        log.rejected[0].reason,
        RejectionReason::TooManyLines {
            field: "color",
            lines: 2,
            max: 1
        }
    );
    assert!(log.spoke.iter().all(|s| s.actor != log.rejected[0].actor));
}

#[test]
fn an_answer_cut_off_at_the_token_limit_says_so() {
    // A model that runs out of tokens halfway through every answer.
    let cut_off = bevy_loom::llm::LlmReply {
        cut_off: true,
        ..bevy_loom::llm::LlmReply::text(r#"{"thought": "Let me think about the ale, the"#)
    };
    let (mut app, _) = tavern_app(FixedBackend::replying(cut_off));
    let log = run_turn(&mut app);
    assert_eq!(log.rejected.len(), 3);
    for rejected in &log.rejected {
        assert!(
            matches!(rejected.reason, RejectionReason::CutOff(_)),
            "{:?}",
            rejected.reason
        );
        assert!(
            rejected
                .reason
                .to_string()
                .contains("cut off at the token limit"),
            "{}",
            rejected.reason
        );
    }
}

/// The smart actor whose answer removes its `SmartActor`, in the frame the answer comes.
#[derive(Resource)]
struct LeavesWhenAnswered(Entity, bevy_loom::llm::RequestId);

fn leave_when_answered(
    leaves: Res<LeavesWhenAnswered>,
    mut responses: MessageReader<LlmResponse>,
    mut commands: Commands,
) {
    if responses.read().any(|response| response.id == leaves.1) {
        commands.entity(leaves.0).remove::<SmartActor>();
    }
}

#[test]
fn an_answer_to_an_actor_that_stopped_being_a_smart_actor_that_frame_is_not_applied() {
    let (backend, gate) =
        crate::support::GatedBackend::choice(|_| r#"{"do": 0, "say": "Evening."}"#.to_owned());
    let (mut app, scene) = tavern_app(backend);
    let marta = scene.entities["marta"];
    app.world_mut().write_message(TurnEnded);
    app.update();
    let log = app.world().resource::<crate::support::TurnLog>();
    let request = (log.prompts.iter())
        .find(|p| p.actor == marta)
        .expect("she is asked")
        .request;
    app.insert_resource(LeavesWhenAnswered(marta, request));
    app.add_systems(
        Update,
        leave_when_answered
            .after(LoomSystems::Receive)
            .before(LoomSystems::Decide),
    );
    gate.store(true, std::sync::atomic::Ordering::SeqCst);
    crate::support::update_until(&mut app, "her answer", |app| {
        let log = app.world().resource::<crate::support::TurnLog>();
        log.responses.iter().any(|r| r.id == request)
    });
    app.update();
    let log = app.world().resource::<crate::support::TurnLog>();
    assert!(
        log.spoke.iter().all(|s| s.actor != marta),
        "{:?}",
        log.spoke
    );
    assert!(
        log.rejected.iter().all(|r| r.actor != marta),
        "{:?}",
        log.rejected
    );
    let mind = app
        .world()
        .get::<ActorMind>(marta)
        .expect("her mind is kept");
    let idle = matches!(mind.state(), bevy_loom::actors::ThinkState::Idle);
    assert!(idle, "{:?}", mind.state());
}
