//! Warming up: with `warm_up` on, each smart actor of the tavern sends its system
//! message to the model server as soon as it appears, on its own affinity, before its
//! first decision, which starts with that same message; off (the default), nothing is
//! sent until a turn.

use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy_loom::llm::{DeltaSink, LlmBackend, LlmFuture, LlmReply, LlmRequest};
use bevy_loom::prelude::*;

use crate::support::{run_turn, tavern_app_with};

/// Lets every moment pass, and keeps every request it was sent.
#[derive(Default)]
struct Recorder(Mutex<Vec<LlmRequest>>);

impl LlmBackend for Recorder {
    fn describe(&self) -> String {
        "a recorder".to_owned()
    }

    fn complete(&self, request: &LlmRequest, _deltas: DeltaSink) -> LlmFuture {
        self.0.lock().expect("not poisoned").push(request.clone());
        Box::pin(async { Ok(LlmReply::text(r#"{"do": 0, "say": ""}"#)) })
    }
}

impl Recorder {
    fn sent(&self) -> Vec<LlmRequest> {
        self.0.lock().expect("not poisoned").clone()
    }
}

/// The tavern answered by a recorder, with these settings; its requests so far.
fn tavern(settings: SmartActorSettings) -> (App, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let backend: Arc<dyn LlmBackend> = recorder.clone();
    let (mut app, _) = tavern_app_with(BackendChoice::Custom(backend), settings);
    app.update();
    crate::support::update_until(&mut app, "the bridge to send what it has", |app| {
        app.world().resource::<LlmBridge>().is_idle()
    });
    (app, recorder)
}

#[test]
fn each_smart_actor_sends_its_system_message_before_its_first_decision() {
    let (mut app, recorder) = tavern(SmartActorSettings {
        warm_up: true,
        ..default()
    });
    let warm_ups = recorder.sent();
    let actors: Vec<Entity> = {
        let world = app.world_mut();
        let mut actors = world.query_filtered::<Entity, With<SmartActor>>();
        actors.iter(world).collect()
    };
    assert_eq!(warm_ups.len(), actors.len(), "one each: {warm_ups:#?}");
    for request in &warm_ups {
        assert_eq!(request.messages.len(), 1);
        assert_eq!(request.messages[0].role, "system");
        assert_eq!(request.sampling.max_tokens, Some(1));
        assert_eq!(request.priority, Priority::Background);
    }
    let turn = run_turn(&mut app);
    assert!(!turn.prompts.is_empty());
    for decision in &turn.prompts {
        let affinity = Some(decision.actor.to_bits());
        let warmed = (warm_ups.iter())
            .find(|request| request.affinity == affinity)
            .expect("the actor warmed up on its own affinity");
        assert_eq!(
            decision.messages[0], warmed.messages[0],
            "the decision starts with what was sent ahead"
        );
    }
}

#[test]
fn by_default_nothing_is_sent_before_a_turn() {
    let (_app, recorder) = tavern(SmartActorSettings::default());
    assert!(recorder.sent().is_empty());
}

/// Never answers: every request stays out until it is cancelled.
struct Silent;

impl LlmBackend for Silent {
    fn describe(&self) -> String {
        "a server that never answers".to_owned()
    }

    fn complete(&self, _request: &LlmRequest, _deltas: DeltaSink) -> LlmFuture {
        Box::pin(std::future::pending())
    }
}

#[test]
fn an_actor_that_goes_takes_its_warm_up_with_it() {
    let settings = SmartActorSettings {
        warm_up: true,
        ..default()
    };
    let (mut app, scene) = tavern_app_with(BackendChoice::Custom(Arc::new(Silent)), settings);
    app.update();
    app.update();
    assert_eq!(app.world().resource::<LlmStats>().cancelled, 0);
    // Marta stops being a smart actor, Silas leaves the game, before the server reads
    // their system messages: nobody is left to warm up for.
    let (marta, silas) = (scene.entities["marta"], scene.entities["silas"]);
    app.world_mut().entity_mut(marta).remove::<SmartActor>();
    app.world_mut().despawn(silas);
    crate::support::update_until(&mut app, "the warm-ups to be cancelled", |app| {
        app.world().resource::<LlmStats>().cancelled >= 2
    });
    assert_eq!(app.world().resource::<LlmStats>().cancelled, 2);
}
