//! What real model servers do that is not a failure: load their model for a while after
//! they start, refuse a prompt longer than their context, and count tokens their own
//! way; and a decision that got no answer, which keeps the actor's conversation warm.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bevy::prelude::*;
use bevy_loom::llm::{
    DeltaSink, LlmBackend, LlmBridge, LlmError, LlmFuture, LlmReply, OpenAiSettings, RetryPolicy,
    TokenUsage,
};
use bevy_loom::prelude::*;
use serde_json::{Value, json};

use crate::support::{RefusedPort, run_turn, serve, tavern_app_configured};

/// Long enough for any machine; the tests wait for outcomes, never for time.
const GIVE_UP: Duration = Duration::from_secs(30);

const LOADING: &str =
    r#"{"error":{"message":"Loading model","type":"unavailable_error","code":503}}"#;
const CONTEXT_EXCEEDED: &str = r#"{"error":{"code":400,"message":"request (5210 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}}"#;

fn completion(text: &str) -> Response {
    Json(json!({
        "choices": [{ "message": { "role": "assistant", "content": text } }]
    }))
    .into_response()
}

fn loading() -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, LOADING).into_response()
}

fn openai(base_url: &str) -> BackendChoice {
    BackendChoice::OpenAi(OpenAiSettings {
        base_url: format!("{base_url}/v1"),
        model: "tiny".into(),
        ..default()
    })
}

fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        first_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        ..default()
    }
}

fn bridge(backend: &BackendChoice, plugin: LlmPlugin) -> LlmBridge {
    LlmBridge::start(backend.endpoints(), &plugin)
}

fn hello() -> LlmRequest {
    LlmRequest {
        messages: Arc::new(vec![bevy_loom::llm::ChatMessage::user("Hello?")]),
        deadline: Some(GIVE_UP),
        ..default()
    }
}

/// Drains the bridge until `count` outcomes arrived, failing after [`GIVE_UP`].
fn outcomes(bridge: &mut LlmBridge, count: usize) -> Vec<LlmResponse> {
    let started = std::time::Instant::now();
    let mut arrived = Vec::new();
    while arrived.len() < count {
        assert!(started.elapsed() < GIVE_UP, "outcomes: {arrived:?}");
        arrived.extend(bridge.drain());
        std::thread::sleep(Duration::from_millis(1));
    }
    arrived
}

/// A server answering "Loading model" to its first requests is waited for: however
/// many times it says so, it neither uses up the retries nor opens the breaker.
#[test]
fn a_server_loading_its_model_is_waited_for_not_failed() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    let (_server, url) = serve(axum::Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 6 {
                    loading()
                } else {
                    completion("ready")
                }
            }
        }),
    ));
    let backend = openai(&url);
    let mut bridge = bridge(
        &backend,
        LlmPlugin {
            retry: fast_retries(),
            ..default()
        },
    );
    bridge.submit(hello());
    let first = outcomes(&mut bridge, 1);
    assert_eq!(
        first[0].result.as_ref().map(|reply| reply.text.as_str()),
        Ok("ready")
    );
    assert!(seen.load(Ordering::SeqCst) > 6);
    // The breaker stayed closed: the next requests are answered, not failed fast.
    for _ in 0..3 {
        bridge.submit(hello());
    }
    for response in outcomes(&mut bridge, 3) {
        assert!(response.result.is_ok(), "{response:?}");
    }
}

/// A server still loading at the request's deadline: the error says so.
#[test]
fn a_server_still_loading_at_the_deadline_says_so() {
    let (_server, url) =
        serve(axum::Router::new().route("/v1/chat/completions", post(|| async { loading() })));
    let mut bridge = bridge(
        &openai(&url),
        LlmPlugin {
            retry: fast_retries(),
            ..default()
        },
    );
    bridge.submit(LlmRequest {
        deadline: Some(Duration::from_millis(300)),
        ..hello()
    });
    let error = outcomes(&mut bridge, 1)[0]
        .result
        .clone()
        .expect_err("no answer from a loading server");
    assert!(matches!(error, LlmError::Loading { .. }), "{error:?}");
    assert!(error.to_string().contains("loading its model"), "{error}");
}

/// Just after the bridge starts, a refused connection is a server still starting:
/// waited for until the deadline. Without the grace, it is unreachable at once.
#[test]
fn a_refused_connection_at_startup_is_a_server_still_starting() {
    let port = RefusedPort::new();
    let backend = BackendChoice::OpenAi(OpenAiSettings {
        base_url: port.base_url(),
        ..default()
    });
    let deadline = Some(Duration::from_millis(300));
    let mut starting = bridge(
        &backend,
        LlmPlugin {
            retry: fast_retries(),
            ..default()
        },
    );
    starting.submit(LlmRequest {
        deadline,
        ..hello()
    });
    let error = outcomes(&mut starting, 1)[0].result.clone();
    assert!(matches!(error, Err(LlmError::Loading { .. })), "{error:?}");

    let mut started = bridge(
        &backend,
        LlmPlugin {
            retry: RetryPolicy {
                startup_grace: Duration::ZERO,
                ..fast_retries()
            },
            ..default()
        },
    );
    started.submit(LlmRequest {
        deadline,
        ..hello()
    });
    let error = outcomes(&mut started, 1)[0].result.clone();
    assert!(
        matches!(error, Err(LlmError::Unreachable { refused: true, .. })),
        "{error:?}"
    );
}

/// What a fake llama.cpp server saw: the number of messages of each chat request,
/// and whether it refused it as too long for its context.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<(usize, bool)>>>);

impl Seen {
    fn take(&self) -> Vec<(usize, bool)> {
        std::mem::take(&mut *self.0.lock().expect("the log"))
    }
}

/// A llama.cpp server that refuses a request as too long for its context when `fits`
/// (given the request's messages and its `max_tokens`) says it does not fit, and whose
/// `/props` says `props` (404 when `None`).
fn llama_with_context(
    fits: impl Fn(&[Value], u64) -> bool + Clone + Send + Sync + 'static,
    props: Option<Value>,
) -> (tokio::runtime::Runtime, String, Seen) {
    let seen = Seen::default();
    let log = seen.clone();
    let chat = post(move |Json(body): Json<Value>| {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let fits = fits(&messages, body["max_tokens"].as_u64().unwrap_or(0));
        log.0.lock().expect("the log").push((messages.len(), !fits));
        async move {
            if fits {
                completion(r#"{"do": 0, "say": ""}"#)
            } else {
                (StatusCode::BAD_REQUEST, CONTEXT_EXCEEDED).into_response()
            }
        }
    });
    let props = get(move || {
        let props = props.clone();
        async move {
            match props {
                Some(props) => Json(props).into_response(),
                None => StatusCode::NOT_FOUND.into_response(),
            }
        }
    });
    let (server, url) = serve(
        axum::Router::new()
            .route("/v1/chat/completions", chat)
            .route("/props", props),
    );
    (server, url, seen)
}

/// The tavern, its actors asking the server at `url`.
fn tavern_served_by(url: &str) -> App {
    let (app, _) = tavern_app_configured(
        LlmPlugin {
            backend: openai(url),
            retry: fast_retries(),
            ..default()
        },
        SmartActorSettings::default(),
    );
    app
}

/// A prompt too long for the server's context is not a fault: each actor starts its
/// conversation again from a fresh prompt and is asked once more, and decides.
#[test]
fn a_context_exceeded_restarts_the_transcript_and_asks_once_more() {
    // A context that holds one fresh prompt but no second turn.
    let (_server, url, seen) = llama_with_context(|messages, _| messages.len() <= 2, None);
    let mut app = tavern_served_by(&url);
    let first = run_turn(&mut app);
    assert!(first.rejected.is_empty(), "{:?}", first.rejected);
    assert!(seen.take().iter().all(|&(_, refused)| !refused));

    let second = run_turn(&mut app);
    assert!(second.rejected.is_empty(), "{:?}", second.rejected);
    let asked = seen.take();
    let thinking = second
        .prompts
        .iter()
        .filter(|prompt| prompt.messages.len() > 2)
        .count();
    assert!(thinking > 0, "someone continued its conversation");
    assert_eq!(
        asked.iter().filter(|&&(_, refused)| refused).count(),
        thinking,
        "each long prompt was refused once: {asked:?}"
    );
    assert_eq!(
        asked.iter().filter(|&&(messages, _)| messages == 2).count(),
        thinking,
        "and asked again from a fresh prompt: {asked:?}"
    );
    // What the server said of its context is known from then on.
    assert_eq!(
        app.world().resource::<LlmBridge>().context_per_slot(None),
        Some(4096)
    );
    // The breaker stayed closed: the next turn is answered too.
    let third = run_turn(&mut app);
    assert!(third.rejected.is_empty(), "{:?}", third.rejected);
}

/// The tokens a prompt and its answer take on a server whose tokenizer reads four
/// characters a token (the estimate's own rate, so that no calibration is needed).
fn four_chars_a_token(messages: &[Value], max_tokens: u64) -> u64 {
    let chars: usize = messages
        .iter()
        .filter_map(|message| message["content"].as_str())
        .map(|text| text.chars().count())
        .sum();
    chars as u64 / 4 + max_tokens
}

/// A server that says its context per slot (llama.cpp's `/props`) gets no prompt
/// longer than it: transcripts start again before they would outgrow it, where they
/// would otherwise have been refused within six turns.
#[test]
fn transcripts_start_again_before_outgrowing_the_servers_context() {
    const CONTEXT: u64 = 1200;
    let fits = |messages: &[Value], max_tokens| four_chars_a_token(messages, max_tokens) <= CONTEXT;
    let run = |props: Option<Value>| {
        let (_server, url, seen) = llama_with_context(fits, props.clone());
        let mut app = tavern_served_by(&url);
        if props.is_some() {
            crate::support::update_until(&mut app, "the server's limits", |app| {
                app.world().resource::<LlmBridge>().context_per_slot(None) == Some(CONTEXT as u32)
            });
        }
        for _ in 0..6 {
            let turn = run_turn(&mut app);
            assert!(turn.rejected.is_empty(), "{:?}", turn.rejected);
        }
        seen.take()
    };
    let unaware = run(None);
    assert!(
        unaware.iter().any(|&(_, refused)| refused),
        "the default transcript budget outgrows this context: {unaware:?}"
    );
    let props = json!({ "default_generation_settings": { "n_ctx": CONTEXT }, "total_slots": 3 });
    let aware = run(Some(props));
    assert!(
        aware.iter().all(|&(_, refused)| !refused),
        "refused: {aware:?}"
    );
    assert!(
        aware.iter().any(|&(messages, _)| messages > 2),
        "transcripts still continue while they fit: {aware:?}"
    );
}

/// On a server slot too small for the default fresh prompt and its answer (llama.cpp's
/// `-c 4096 -np 4` gives 1,024 tokens a slot), a fresh prompt offers less, to fit,
/// instead of being sent whole and refused: a server on a CPU reads the whole prompt
/// before it refuses it.
#[test]
fn a_fresh_prompt_fits_a_small_server_slot() {
    const CONTEXT: u64 = 1000;
    let fits = |messages: &[Value], max_tokens| four_chars_a_token(messages, max_tokens) <= CONTEXT;
    let props = json!({ "default_generation_settings": { "n_ctx": CONTEXT }, "total_slots": 4 });
    let (_server, url, seen) = llama_with_context(fits, Some(props));
    let mut app = tavern_served_by(&url);
    crate::support::update_until(&mut app, "the server's limits", |app| {
        app.world().resource::<LlmBridge>().context_per_slot(None) == Some(CONTEXT as u32)
    });
    for _ in 0..2 {
        let turn = run_turn(&mut app);
        assert!(turn.rejected.is_empty(), "{:?}", turn.rejected);
    }
    let asked = seen.take();
    assert!(
        asked.iter().all(|&(_, refused)| !refused),
        "refused: {asked:?}"
    );
}

/// A model whose second turn of every actor runs out of time, and whose server counts
/// tokens like a real tokenizer: 0.3 a character, and 4 more a message for the chat
/// template.
struct ScriptedModel {
    /// The system messages of the conversations whose second turn got no answer.
    hung: Mutex<Vec<Arc<str>>>,
    hang_on_turn: Option<usize>,
}

/// The prompt tokens the scripted server reports for these messages.
fn server_tokens(messages: &[bevy_loom::llm::ChatMessage]) -> u64 {
    messages
        .iter()
        .map(|m| (m.content.chars().count() as f64 * 0.3).round() as u64 + 4)
        .sum()
}

impl LlmBackend for ScriptedModel {
    fn describe(&self) -> String {
        "scripted".to_owned()
    }

    fn complete(&self, request: &LlmRequest, _deltas: DeltaSink) -> LlmFuture {
        let messages = Arc::clone(&request.messages);
        // The user messages say which turn of the actor's conversation this is.
        let turn = messages.iter().filter(|m| m.role == "user").count();
        if Some(turn) == self.hang_on_turn {
            let mut hung = self.hung.lock().expect("the log");
            let system = Arc::clone(&messages[0].content);
            if !hung.contains(&system) {
                hung.push(system);
                // What the bridge ends a request with at its deadline, without waiting
                // for one.
                return Box::pin(async { Err(LlmError::TimedOut(Duration::from_secs(60))) });
            }
        }
        let usage = TokenUsage {
            prompt_tokens: server_tokens(&messages),
            completion_tokens: 5,
            ..TokenUsage::default()
        };
        Box::pin(async move {
            Ok(LlmReply {
                text: r#"{"do": 0, "say": ""}"#.to_owned(),
                usage: Some(usage),
                ..LlmReply::default()
            })
        })
    }
}

fn scripted_tavern(hang_on_turn: Option<usize>) -> App {
    let model = Arc::new(ScriptedModel {
        hung: Mutex::default(),
        hang_on_turn,
    });
    let (app, _) = tavern_app_configured(
        LlmPlugin {
            backend: BackendChoice::Custom(model),
            ..default()
        },
        SmartActorSettings::default(),
    );
    app
}

/// A decision that got no answer (here: out of time) keeps the conversation: the next
/// turn continues from the last answered one, which the server still holds.
#[test]
fn a_turn_without_an_answer_keeps_the_conversation_warm() {
    let mut app = scripted_tavern(Some(2));
    let first = run_turn(&mut app);
    let lost = run_turn(&mut app);
    assert!(
        !lost.rejected.is_empty()
            && lost.rejected.iter().all(|rejected| matches!(
                rejected.reason,
                bevy_loom::prompt::RejectionReason::NoAnswer(LlmError::TimedOut(_))
            )),
        "{:?}",
        lost.rejected
    );
    let third = run_turn(&mut app);
    for lost in &lost.prompts {
        let before = first
            .prompts
            .iter()
            .find(|prompt| prompt.actor == lost.actor)
            .expect("its first prompt");
        let next = third
            .prompts
            .iter()
            .find(|prompt| prompt.actor == lost.actor)
            .expect("its next prompt");
        assert_eq!(next.messages.len(), 4, "appended to the answered turn");
        assert_eq!(
            next.messages[..2],
            before.messages[..],
            "the first turn, as sent"
        );
        assert_eq!(next.messages[2].role, "assistant");
        assert!(next.reused_prefix > 0.5, "warm: {}", next.reused_prefix);
    }
}

/// After the first answer, a prompt's figures are the server's tokens, within 5%.
#[test]
fn prompt_figures_are_calibrated_to_the_servers_token_counts() {
    let mut app = scripted_tavern(None);
    let share = |prompt: &DecisionRequested| {
        let figured: usize = prompt.sections.iter().map(|section| section.tokens).sum();
        let counted = server_tokens(&prompt.messages) as f64;
        (figured as f64 - counted).abs() / counted
    };
    let first = run_turn(&mut app);
    assert!(
        first.prompts.iter().any(|prompt| share(prompt) > 0.05),
        "uncalibrated, four characters a token is off for this server"
    );
    for _ in 0..3 {
        for prompt in run_turn(&mut app).prompts {
            assert!(
                share(&prompt) <= 0.05,
                "off by {:.1}%",
                share(&prompt) * 100.0
            );
        }
    }
}

#[test]
fn more_slots_set_than_the_server_has_use_only_the_servers() {
    let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
    let log = Arc::clone(&asked);
    let chat = post(move |Json(body): Json<Value>| {
        log.lock().expect("the log").push(body["id_slot"].clone());
        async { completion(r#"{"do": 0, "say": ""}"#) }
    });
    let props = get(|| async {
        Json(json!({ "default_generation_settings": { "n_ctx": 4096 }, "total_slots": 2 }))
    });
    let (_server, url) = serve(
        axum::Router::new()
            .route("/v1/chat/completions", chat)
            .route("/props", props),
    );
    // A player's LOOM_LLM_SLOTS=4 against `llama-server --parallel 2`.
    let settings = OpenAiSettings {
        base_url: format!("{url}/v1"),
        slots: Some(4),
        ..default()
    };
    let mut bridge = bridge(&BackendChoice::OpenAi(settings), LlmPlugin::default());
    let started = std::time::Instant::now();
    while bridge.context_per_slot(None).is_none() {
        assert!(started.elapsed() < GIVE_UP, "the server's props never read");
        std::thread::sleep(Duration::from_millis(1));
    }
    for affinity in 0..4 {
        bridge.submit(LlmRequest {
            affinity: Some(affinity),
            ..hello()
        });
    }
    outcomes(&mut bridge, 4);
    let mut slots: Vec<u64> = (asked.lock().expect("the log").iter())
        .filter_map(Value::as_u64)
        .collect();
    slots.sort_unstable();
    assert_eq!(
        slots,
        [0, 0, 1, 1],
        "a slot the server does not have would never be served"
    );
}
