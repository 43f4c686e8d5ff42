use std::sync::Arc;

use super::*;
use crate::actors::{PendingDecision, ThinkState};
use crate::llm::{LlmError, LlmReply, LlmStats};
use crate::prompt::DecisionLimits;
use crate::prompt::RejectionReason;
use crate::world::{OfferedAbilities, OfferedActions};

fn entity(n: u32) -> Entity {
    Entity::from_raw_u32(n).expect("a valid index")
}

/// An app with the log's plugin alone.
fn app() -> App {
    let mut app = App::new();
    app.add_plugins(DebugLogPlugin);
    app
}

fn asked(actor: Entity, request: u64) -> DecisionRequested {
    DecisionRequested {
        actor,
        request: RequestId(request),
        messages: Arc::default(),
        offered: OfferedActions::default(),
        tasks: OfferedActions::default(),
        abilities: OfferedAbilities::default(),
        sections: vec![
            PromptSection {
                name: "rules",
                tokens: 130,
            },
            PromptSection {
                name: "actions",
                tokens: 70,
            },
        ],
        reused_prefix: 0.85,
        memories: Default::default(),
    }
}

fn record(app: &App, actor: Entity) -> ActorRecord {
    let log = app.world().resource::<DebugLog>();
    log.actors.get(&actor).cloned().expect("a record")
}

/// How the overlay shows `actor`, called Marta, idle and on no plan, by its record.
fn idle_view(app: &App, actor: Entity) -> ActorView {
    actor_view(
        "Marta",
        &ThinkState::Idle,
        None,
        Some(&record(app, actor)),
        &[],
    )
}

#[test]
fn an_answer_streams_in_then_its_verdict_and_timing_are_noted() {
    let mut app = app();
    let marta = entity(7);
    app.world_mut().write_message(asked(marta, 1));
    app.update();
    for piece in ["{\"type\": ", "\"NONE\"}"] {
        app.world_mut().write_message(LlmDelta {
            id: RequestId(1),
            text: piece.to_owned(),
        });
        app.update();
    }
    assert_eq!(record(&app, marta).answer, "{\"type\": \"NONE\"}");
    app.world_mut().write_message(LlmResponse {
        id: RequestId(1),
        result: Ok(LlmReply::text("{\"type\": \"NONE\"}")),
        latency: Duration::from_millis(1500),
        first_token: Some(Duration::from_millis(300)),
        retries: 0,
    });
    app.world_mut().write_message(ActorPassed {
        actor: marta,
        thought: String::new(),
    });
    app.update();
    let view = idle_view(&app, marta);
    assert_eq!(
        view.lines,
        [
            "State: idle",
            "Prompt: 200 tokens, 85% reused (rules 130, actions 70)",
            "Answer: {\"type\": \"NONE\"}",
            "Verdict: lets the moment pass",
            "Latency: 1.50 s, first token 0.30 s",
        ]
    );
}

#[test]
fn a_request_replaced_by_a_newer_one_leaves_the_newer_ones_record_alone() {
    let mut app = app();
    let marta = entity(7);
    app.world_mut().write_message(asked(marta, 1));
    app.update();
    app.world_mut().write_message(LlmDelta {
        id: RequestId(1),
        text: "{\"do\": ".to_owned(),
    });
    // The player spoke to her: her thinking was cancelled for a reply.
    app.world_mut().write_message(asked(marta, 2));
    app.update();
    app.world_mut().write_message(LlmDelta {
        id: RequestId(1),
        text: "1}".to_owned(),
    });
    app.world_mut().write_message(LlmResponse {
        id: RequestId(1),
        result: Err(LlmError::Cancelled),
        latency: Duration::from_millis(900),
        first_token: None,
        retries: 0,
    });
    app.world_mut().write_message(LlmDelta {
        id: RequestId(2),
        text: "{\"do\": 0".to_owned(),
    });
    app.update();
    let now = record(&app, marta);
    assert_eq!(now.answer, "{\"do\": 0", "the reply's own answer alone");
    assert_eq!(now.latency, None, "the reply is not answered yet");
}

#[test]
fn a_rejection_says_why_and_a_failed_request_says_it_got_no_answer() {
    let mut app = app();
    let brom = entity(8);
    app.world_mut().write_message(asked(brom, 2));
    app.update();
    app.world_mut().write_message(LlmResponse {
        id: RequestId(2),
        result: Err(LlmError::TimedOut(Duration::from_secs(60))),
        latency: Duration::from_secs(60),
        first_token: None,
        retries: 1,
    });
    let reason = RejectionReason::NoAnswer(LlmError::TimedOut(Duration::from_secs(60)));
    app.world_mut().write_message(DecisionRejected {
        actor: brom,
        reason: reason.clone(),
        raw: String::new(),
        fallback: None,
    });
    app.update();
    let record = record(&app, brom);
    assert!(
        record.answer.starts_with("(no answer: "),
        "{}",
        record.answer
    );
    assert_eq!(record.verdict, Some(Verdict::Rejected(reason.to_string())));
    let view = actor_view("Brom", &ThinkState::Idle, None, Some(&record), &[]);
    assert!(
        view.lines
            .iter()
            .any(|line| line.starts_with("Verdict: rejected: no answer"))
    );
}

#[test]
fn words_said_with_an_action_go_with_it_and_plan_steps_and_the_games_requests_are_no_verdict() {
    let mut app = app();
    let silas = entity(9);
    app.world_mut().write_message(asked(silas, 3));
    app.update();
    let request = |plan| ActionRequest {
        actor: silas,
        action_id: "core:wait".into(),
        targets: Default::default(),
        command: "wait".to_owned(),
        parameters: Default::default(),
        plan,
    };
    // The game's own request for Silas while he waits on the model is not his verdict.
    let mut pushed = request(None);
    pushed.command = "stagger".to_owned();
    app.world_mut().write_message(pushed);
    app.update();
    assert_eq!(record(&app, silas).verdict, None);
    // His answer comes, and with it what it chose.
    app.world_mut().write_message(LlmResponse {
        id: RequestId(3),
        result: Ok(LlmReply::text(r#"{"do": 1, "say": "Patience."}"#)),
        latency: Duration::from_millis(900),
        first_token: None,
        retries: 0,
    });
    app.world_mut().write_message(request(None));
    app.world_mut().write_message(ActorSpoke {
        actor: silas,
        text: "Patience.".to_owned(),
    });
    app.update();
    assert_eq!(
        record(&app, silas).verdict,
        Some(Verdict::Acted("wait".into()))
    );
    let step = crate::world::PlanStepRef {
        plan: 1,
        task_id: "a:b".into(),
        method_id: "a:c".into(),
        step: "/steps/0".into(),
        number: 1,
        progress: (1, 2),
    };
    let mut stepped = request(Some(step));
    stepped.command = "step".to_owned();
    app.world_mut().write_message(stepped);
    app.update();
    assert_eq!(
        record(&app, silas).verdict,
        Some(Verdict::Acted("wait".into()))
    );
    app.world_mut().write_message(AbilityInvoked {
        actor: silas,
        ability: "tavern:play_song".to_owned(),
        inputs: vec![("song".to_owned(), InputValue::Text("The Lay".to_owned()))],
    });
    app.update();
    assert_eq!(
        record(&app, silas).verdict,
        Some(Verdict::Invoked(
            "tavern:play_song (song \"The Lay\")".into()
        ))
    );
}

#[test]
fn each_state_and_a_plan_in_progress_read_in_words() {
    let pending = PendingDecision {
        request: RequestId(1),
        offered: OfferedActions::default(),
        tasks: OfferedActions::default(),
        abilities: OfferedAbilities::default(),
        fighting: false,
        reply_to: None,
        asking_again: false,
        limits: DecisionLimits::default(),
        cooldown: 0,
    };
    let states = [
        (ThinkState::Idle, "idle"),
        (
            ThinkState::Queued {
                reply_to: None,
                asking_again: false,
            },
            "queued to think",
        ),
        (ThinkState::Waiting(pending), "waiting on the model"),
        (ThinkState::CoolingDown { until: 4 }, "cooling down"),
    ];
    for (state, words) in states {
        let view = actor_view("Marta", &state, None, None, &[]);
        assert_eq!(view.lines, [format!("State: {words}")]);
    }
    let plan = PlanProgress {
        command: "serve Traveler mug of stout".to_owned(),
        step: Some((2, 4)),
    };
    let view = actor_view("Marta", &ThinkState::Idle, Some(&plan), None, &[]);
    assert_eq!(
        view.lines,
        ["State: idle; running a plan: serve Traveler mug of stout, step 2 of 4"]
    );
    let between_steps = PlanProgress { step: None, ..plan };
    let view = actor_view("Marta", &ThinkState::Idle, Some(&between_steps), None, &[]);
    assert_eq!(
        view.lines,
        ["State: idle; running a plan: serve Traveler mug of stout"]
    );
}

#[test]
fn a_rambling_answer_is_kept_bounded_and_errors_are_the_latest() {
    let mut text = String::new();
    push_bounded(&mut text, &"x".repeat(MAX_ANSWER_CHARS + 10));
    push_bounded(&mut text, "more");
    assert_eq!(text.chars().count(), MAX_ANSWER_CHARS);
    let mut app = app();
    for n in 0..MAX_ERRORS + 5 {
        app.world_mut()
            .write_message(ContentError::new(format!("file {n}"), "", "broken"));
    }
    app.update();
    let log = app.world().resource::<DebugLog>();
    assert_eq!(log.errors.len(), MAX_ERRORS);
    assert_eq!(log.errors[0].file, "file 5", "the oldest go first");
    let lines = global_view("offline", &LlmStats::default(), &[], log.content_errors());
    assert!(
        lines.contains(&format!(
            "Content errors: {} (the latest {MAX_ERRORS})",
            MAX_ERRORS + 5
        )),
        "{lines:#?}"
    );
}

#[test]
fn a_task_taken_on_and_a_hesitation_are_verdicts() {
    let mut app = app();
    let (marta, brom) = (entity(7), entity(8));
    app.world_mut().write_message(asked(marta, 1));
    app.world_mut().write_message(asked(brom, 2));
    app.update();
    // The game's own plan is no verdict of the model's.
    let mut started = crate::world::StartPlan::new(marta, "tavern:serve_drink");
    app.world_mut().write_message(started.clone());
    app.update();
    assert_eq!(record(&app, marta).verdict, None);
    started.chosen_by = crate::world::PlanOrigin::Model;
    app.world_mut().write_message(started);
    app.world_mut()
        .write_message(crate::actors::ActorHesitated {
            actor: brom,
            line: "Brom hesitates.".to_owned(),
            reason: None,
        });
    app.update();
    let verdict = record(&app, marta).verdict;
    assert_eq!(verdict, Some(Verdict::TookOn("tavern:serve_drink".into())));
    assert_eq!(record(&app, brom).verdict, Some(Verdict::Hesitated));
    let view = idle_view(&app, marta);
    assert!(
        view.lines
            .contains(&"Verdict: takes on tavern:serve_drink".to_owned()),
        "{:?}",
        view.lines
    );
}

#[test]
fn a_rejection_says_what_was_done_instead_and_is_kept_bounded() {
    let mut app = app();
    let brom = entity(8);
    app.world_mut().write_message(asked(brom, 2));
    app.update();
    let error = LlmError::InvalidResponse("x".repeat(1 << 20));
    app.world_mut().write_message(DecisionRejected {
        actor: brom,
        reason: RejectionReason::NoAnswer(error),
        raw: String::new(),
        fallback: Some("look around".to_owned()),
    });
    app.update();
    let Some(Verdict::Rejected(why)) = record(&app, brom).verdict else {
        panic!("rejected");
    };
    assert!(
        why.chars().count() <= MAX_ANSWER_CHARS,
        "{} characters",
        why.len()
    );
    assert!(
        why.ends_with("; did instead: look around"),
        "{}",
        &why[why.len() - 60..]
    );
}

#[test]
fn the_global_view_never_shows_a_credential() {
    let settings = crate::llm::OpenAiSettings {
        base_url: "http://player:hunter2@127.0.0.1:8080/v1".to_owned(),
        api_key: Some(crate::llm::ApiKey::new("sk-secret-key")),
        ..Default::default()
    };
    let backend = crate::llm::OpenAiBackend::new(settings).expect("a backend");
    let described = crate::llm::LlmBackend::describe(&backend);
    let errors = [ContentError::new("mods/a/mod.json", "/id", "bad id")];
    let lines = global_view(&described, &LlmStats::default(), &[], (&errors, 1));
    let all = lines.join("\n");
    assert!(
        !all.contains("hunter2") && !all.contains("sk-secret"),
        "{all}"
    );
    assert!(all.contains("127.0.0.1:8080"), "{all}");
    assert!(all.contains("Content errors: 1") && all.contains("mods/a/mod.json"));
    assert!(all.contains("Latency p50 - / p95 -"), "{all}");
}

#[test]
fn tab_and_shift_tab_go_round_the_list() {
    let [a, b, c] = [entity(1), entity(2), entity(3)];
    let list = [a, b, c];
    assert_eq!(next_actor(&list, Some(a), false), Some(b));
    assert_eq!(next_actor(&list, Some(c), false), Some(a), "around the end");
    assert_eq!(
        next_actor(&list, Some(a), true),
        Some(c),
        "around the start"
    );
    assert_eq!(next_actor(&list, None, false), Some(a));
    assert_eq!(next_actor(&list, None, true), Some(c));
    assert_eq!(
        next_actor(&list, Some(entity(9)), false),
        Some(a),
        "one that is gone"
    );
    assert_eq!(next_actor(&[], Some(a), false), None);
}

/// A store put in place of the one memories were recalled from (a save loaded)
/// numbers others alike: the record no longer names them.
#[test]
fn memories_recalled_from_a_store_since_replaced_are_not_shown() {
    let mut app = app();
    let brom = entity(8);
    let memory = |text: &str| crate::actors::NewMemory {
        text: text.to_owned(),
        tags: Vec::new(),
        scope: Some(crate::actors::MemoryScope::Global),
        turn: 0,
        source: "seed".to_owned(),
        pinned: true,
    };
    let mut history = crate::actors::HistoryStore::new();
    let oath = history.append(memory("I swore to keep the cellar locked."));
    app.insert_resource(history);
    let mut asking = asked(brom, 5);
    asking.memories.push(oath);
    app.world_mut().write_message(asking);
    app.update();
    assert_eq!(record(&app, brom).memories.as_slice(), [oath]);
    app.update();
    assert_eq!(
        record(&app, brom).memories.as_slice(),
        [oath],
        "the same store"
    );
    // Another store, whose first memory has the same id.
    let mut loaded = crate::actors::HistoryStore::new();
    let other = loaded.append(memory("Silas owes me three silver."));
    assert_eq!(other, oath);
    app.insert_resource(loaded);
    app.update();
    assert!(record(&app, brom).memories.is_empty());
}

/// The whole overlay for two actors, one picked, with a memory recalled and an open
/// breaker whose failure is shown, and a key that never is.
#[test]
fn the_overlay_lists_every_actor_and_details_the_one_picked() {
    let mut app = app();
    let [marta, brom] = [entity(7), entity(8)];
    let mut history = crate::actors::HistoryStore::new();
    let oath = history.append(crate::actors::NewMemory {
        text: "I swore to keep the cellar locked.".to_owned(),
        tags: Vec::new(),
        scope: Some(crate::actors::MemoryScope::Global),
        turn: 0,
        source: "seed".to_owned(),
        pinned: true,
    });
    let mut asking = asked(brom, 5);
    asking.memories.push(oath);
    app.world_mut().write_message(asking);
    app.update();
    let log = app.world().resource::<DebugLog>();
    let (idle, cooling) = (ThinkState::Idle, ThinkState::CoolingDown { until: 3 });
    let actors = [
        ActorSnapshot {
            entity: brom,
            name: "Brom",
            state: &cooling,
            plan: None,
        },
        ActorSnapshot {
            entity: marta,
            name: "Marta",
            state: &idle,
            plan: Some(PlanProgress {
                command: "serve Traveler mug of ale".to_owned(),
                step: Some((1, 4)),
            }),
        },
    ];
    let endpoints = [crate::llm::EndpointHealth {
        endpoint: "OpenAI-compatible server at http://127.0.0.1:8080/v1 (model m)".to_owned(),
        breaker: crate::llm::BreakerState::Open,
        loading: false,
        last_failure: Some("the model server answered HTTP 502: down".to_owned()),
        prompt_tokens_per_second: Some(21.4),
        answer_tokens_per_second: Some(11.04),
    }];
    let snapshot = OverlaySnapshot {
        actors: &actors,
        selected: Some(brom),
        backend: "OpenAI-compatible server at http://127.0.0.1:8080/v1 (model m)",
        stats: &LlmStats::default(),
        endpoints: &endpoints,
        log,
        history: Some(&history),
    };
    let view = overlay_view(&snapshot);
    let labels: Vec<(&str, bool)> = (view.rows.iter())
        .map(|row| (row.label.as_str(), row.selected))
        .collect();
    assert_eq!(
        labels,
        [
            ("Brom: cooling down", true),
            (
                "Marta: idle; running a plan: serve Traveler mug of ale, step 1 of 4",
                false
            ),
        ]
    );
    let detail = view.detail.expect("the picked actor's details");
    assert_eq!(detail.title, "Brom");
    assert_eq!(
        detail.lines[detail.lines.len() - 2..],
        [
            "Recalled 1 memories:",
            "- I swore to keep the cellar locked."
        ]
    );
    assert!(
        view.global.contains(
            &"Endpoint 1: breaker open; reads 21 and writes 11.0 tokens/s; last failure: \
              the model server answered HTTP 502: down"
                .to_owned()
        ),
        "{:?}",
        view.global
    );
    // Picking one that is gone shows the first listed.
    let gone = overlay_view(&OverlaySnapshot {
        selected: Some(entity(99)),
        ..snapshot
    });
    assert_eq!(gone.detail.map(|d| d.title), Some("Brom".to_owned()));
    assert!(gone.rows[0].selected);
}

#[test]
fn typographic_punctuation_is_drawn_in_ascii() {
    assert_eq!(
        drawable("Marta \u{2014} \u{201c}Hm\u{2026}\u{201d} it\u{2019}s late".to_owned()),
        "Marta - \"Hm...\" it's late"
    );
    assert_eq!(drawable("plain".to_owned()), "plain");
    // A model's answer may hold a right-to-left override or a terminal's escapes.
    assert_eq!(
        drawable("\u{202e}Evening\u{1b}[31m, love\u{7}".to_owned()),
        "Evening[31m, love"
    );
}

#[test]
fn the_records_of_actors_gone_are_forgotten_once_they_pile_up() {
    let mut app = app();
    let stays: Vec<Entity> = (0..3).map(|_| app.world_mut().spawn_empty().id()).collect();
    for (n, &actor) in stays.iter().enumerate() {
        app.world_mut().write_message(asked(actor, n as u64));
    }
    app.update();
    // Actors come, are asked, and are despawned before their answer, one a frame.
    for n in 100..400 {
        let actor = app.world_mut().spawn_empty().id();
        app.world_mut().write_message(asked(actor, n));
        app.update();
        app.world_mut().despawn(actor);
    }
    let log = app.world().resource::<DebugLog>();
    let held = log.actors.len() + log.requests.len();
    assert!(
        held < 200,
        "{held} records and requests kept, most of them of actors gone"
    );
    for actor in stays {
        assert!(
            log.actors.contains_key(&actor),
            "the records of those still here"
        );
        assert!(
            log.requests.values().any(|&a| a == actor),
            "and their requests"
        );
    }
}

#[test]
fn an_actor_that_stopped_being_a_smart_actor_is_not_left_waiting_for_a_verdict() {
    let mut app = app();
    let marta = app.world_mut().spawn(SmartActor::new("tavern:marta")).id();
    app.world_mut().write_message(asked(marta, 1));
    app.update();
    app.world_mut().entity_mut(marta).remove::<SmartActor>();
    app.update();
    assert_eq!(record(&app, marta).verdict, Some(Verdict::Withdrawn));
    let view = idle_view(&app, marta);
    let said = "Verdict: none: it stopped being a smart actor before its answer was used";
    assert!(view.lines.contains(&said.to_owned()), "{:?}", view.lines);
}
