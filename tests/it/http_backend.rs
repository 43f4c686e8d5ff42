//! The OpenAI-compatible HTTP backend against a real HTTP server on 127.0.0.1 that
//! each test starts on a Tokio runtime of its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Json;
use bevy::prelude::*;
use bevy_loom::llm::{
    ApiKey, ChatMessage, LlmBackend, LlmError, LlmReply, LlmRequest, OllamaBackend, OllamaSettings,
    OpenAiBackend, OpenAiSettings, RequestId, SamplingOptions, ServerTimings, TokenUsage,
};
use bevy_loom::prelude::*;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use crate::support::{RefusedPort, run_turn, tavern_app};

/// The key the backend sends; no debug output or error may show it.
const API_KEY: &str = "sk-loom-test-5e1f0c9a";
/// The model name the backend sends.
const MODEL: &str = "loom-test-model";
/// How long a wait may last before the test fails instead of hanging.
const GIVE_UP: Duration = Duration::from_secs(20);

/// Serves `router` on 127.0.0.1 and returns the runtime (dropping it stops the
/// server) and the OpenAI-style API base URL.
fn serve(router: Router) -> (Runtime, String) {
    let (runtime, root) = crate::support::serve(router);
    (runtime, format!("{root}/v1"))
}

/// A chat-completions body as OpenAI sends it, answering `content`.
fn chat_completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-loom-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": content },
            "finish_reason": "stop"
        }],
        "usage": {
            "prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49,
            "prompt_tokens_details": { "cached_tokens": 30 }
        },
        // llama.cpp's.
        "timings": {
            "cache_n": 30, "prompt_n": 12, "prompt_ms": 240.0, "prompt_per_second": 50.0,
            "predicted_n": 7, "predicted_ms": 350.0, "predicted_per_second": 20.0
        }
    })
}

/// One request as the server received it.
#[derive(Debug, Clone)]
struct Received {
    method: Method,
    path: String,
    authorization: Option<String>,
    body: Value,
}

/// A server that records every request and answers each with the same completion.
#[derive(Clone)]
struct Recorder {
    received: Arc<Mutex<Vec<Received>>>,
    content: Arc<str>,
}

impl Recorder {
    fn received(&self) -> Vec<Received> {
        self.received.lock().expect("the recorder's lock").clone()
    }
}

async fn record_and_answer(
    State(recorder): State<Recorder>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Json<Value> {
    let received = Received {
        method,
        path: uri.path().to_owned(),
        authorization: headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    recorder
        .received
        .lock()
        .expect("the recorder's lock")
        .push(received);
    Json(chat_completion(&recorder.content))
}

/// Serves a recorder answering `content` to every request, on any path.
fn recording_server(content: &str) -> (Runtime, String, Recorder) {
    let recorder = Recorder {
        received: Arc::default(),
        content: content.into(),
    };
    let (runtime, base_url) = serve(
        Router::new()
            // Like most servers, it says nothing of its limits.
            .route(
                "/props",
                axum::routing::get(|| async { StatusCode::NOT_FOUND }),
            )
            .fallback(record_and_answer)
            .with_state(recorder.clone()),
    );
    (runtime, base_url, recorder)
}

/// Settings for the server at `base_url`, with the test API key.
fn settings(base_url: &str) -> OpenAiSettings {
    OpenAiSettings {
        base_url: base_url.to_owned(),
        model: MODEL.to_owned(),
        api_key: Some(ApiKey::new(API_KEY)),
        timeout: Duration::from_secs(30),
        connect_timeout: bevy_loom::llm::CONNECT_TIMEOUT,
        schema_format: bevy_loom::llm::SchemaFormat::JsonSchema,
        slots: None,
        limits: Default::default(),
    }
}

/// A bridge to the server at `base_url` with this deadline.
fn bridge(base_url: &str, deadline: Duration) -> LlmBridge {
    let backend = OpenAiBackend::new(settings(base_url)).expect("an HTTP backend");
    LlmBridge::new(Arc::new(backend), deadline, SamplingOptions::default())
}

/// A small free-text request.
fn greeting() -> LlmRequest {
    LlmRequest {
        messages: vec![
            ChatMessage::system("You are a terse innkeeper."),
            ChatMessage::user("Greet the traveler."),
        ]
        .into(),
        ..default()
    }
}

/// Drains the bridge until at least `count` outcomes arrived; fails after [`GIVE_UP`] instead of hanging.
fn drain_until(bridge: &mut LlmBridge, count: usize) -> Vec<LlmResponse> {
    let started = Instant::now();
    let mut arrived = Vec::new();
    loop {
        arrived.extend(bridge.drain());
        if arrived.len() >= count {
            return arrived;
        }
        assert!(
            started.elapsed() < GIVE_UP,
            "gave up waiting: {} of {count} outcomes arrived",
            arrived.len()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Submits one request to the server at `base_url` and returns its only outcome.
fn outcome(base_url: &str, deadline: Duration) -> Result<LlmReply, LlmError> {
    let mut bridge = bridge(base_url, deadline);
    let id = bridge.submit(greeting());
    let arrived = drain_until(&mut bridge, 1);
    assert_eq!(arrived.len(), 1, "one request, one outcome: {arrived:?}");
    assert_eq!(arrived[0].id, id);
    arrived[0].result.clone()
}

/// The error from a server that answers HTTP 500.
fn server_error() -> LlmError {
    let router = Router::new()
        .fallback(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "the model fell over") });
    let (_server, base_url) = serve(router);
    outcome(&base_url, GIVE_UP).expect_err("HTTP 500 is an error")
}

/// The error from a server that answers 200 with a body that is not JSON.
fn not_json_error() -> LlmError {
    let router = Router::new().fallback(|| async { "<html><body>Welcome to nginx!</body></html>" });
    let (_server, base_url) = serve(router);
    outcome(&base_url, GIVE_UP).expect_err("a body that is not JSON is an error")
}

/// The error from a port where nothing listens.
fn refused_error() -> LlmError {
    let refused = RefusedPort::new();
    outcome(&refused.base_url(), GIVE_UP).expect_err("a refused connection is an error")
}

/// A server that answers each request only after 5 s.
fn sleepy_server() -> (Runtime, String) {
    serve(Router::new().fallback(|| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Json(chat_completion("Too late."))
    }))
}

/// The error from a server slower than a 200 ms deadline.
fn timeout_error() -> LlmError {
    let (_server, base_url) = sleepy_server();
    outcome(&base_url, Duration::from_millis(200)).expect_err("a slow server is an error")
}

/// A completion arrives as its reply text, after a POST with the model, messages, `stream: false` and the bearer key.
#[test]
fn bridge_returns_the_completion_and_sends_an_openai_request() {
    let (_server, base_url, recorder) = recording_server("Evening, traveler.");

    let reply = outcome(&base_url, GIVE_UP).expect("a completion");

    assert_eq!(reply.text, "Evening, traveler.");
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            prompt_tokens: 42,
            completion_tokens: 7,
            cached_tokens: Some(30),
        })
    );
    assert_eq!(
        reply.timings,
        Some(ServerTimings {
            prompt_tokens: 12,
            prompt: Duration::from_millis(240),
            answer_tokens: 7,
            answer: Duration::from_millis(350),
        })
    );
    let received = recorder.received();
    assert_eq!(
        received.len(),
        1,
        "one request reached the server: {received:?}"
    );
    let request = &received[0];
    assert_eq!(request.method, Method::POST);
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.authorization.as_deref(),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert_eq!(request.body["model"], MODEL);
    assert_eq!(
        request.body["messages"],
        json!([
            { "role": "system", "content": "You are a terse innkeeper." },
            { "role": "user", "content": "Greet the traveler." }
        ])
    );
    assert_eq!(request.body["stream"], json!(false));
}

/// An HTTP 500 answer becomes `LlmError::Status` with the code and the body.
#[test]
fn server_error_status_is_reported() {
    match server_error() {
        LlmError::Status { status, body, .. } => {
            assert_eq!(status, 500);
            assert_eq!(body, "the model fell over");
        }
        other => panic!("expected LlmError::Status, got {other:?}"),
    }
}

/// A 200 answer whose body is not JSON becomes `LlmError::Unreadable`, which is the
/// server's fault: tried again, and counted toward its breaker.
#[test]
fn body_that_is_not_json_is_unreadable() {
    let error = not_json_error();
    assert!(
        matches!(error, LlmError::Unreadable(_)),
        "expected LlmError::Unreadable, got {error:?}"
    );
    assert!(error.is_retryable() && error.is_server_fault());
    let wrong_shape = LlmError::InvalidResponse("no choices.0.message.content".to_owned());
    assert!(
        !wrong_shape.is_server_fault(),
        "an answer without text (a content filter's) is this request's, not the server's"
    );
}

/// A refused connection becomes `LlmError::Unreachable` naming the endpoint.
#[test]
fn refused_connection_is_unreachable() {
    let refused = RefusedPort::new();
    let base_url = refused.base_url();
    match outcome(&base_url, GIVE_UP) {
        Err(LlmError::Unreachable { url, .. }) => {
            assert_eq!(url, format!("{base_url}/chat/completions"))
        }
        other => panic!("expected LlmError::Unreachable, got {other:?}"),
    }
}

/// A server slower than the backend's own `timeout`, which a deadline longer than it
/// cannot outlast, gives an error naming that setting: raising the deadline, as a
/// deadline's timeout says, would not help.
#[test]
fn the_backends_timeout_says_it_ended_the_request_not_the_deadline() {
    let (_server, base_url) = sleepy_server();
    let backend = OpenAiBackend::new(OpenAiSettings {
        timeout: Duration::from_millis(200),
        ..settings(&base_url)
    })
    .expect("an HTTP backend");
    let mut bridge = LlmBridge::new(Arc::new(backend), GIVE_UP, SamplingOptions::default());
    bridge.submit(greeting());
    let arrived = drain_until(&mut bridge, 1);
    let error = arrived[0]
        .result
        .clone()
        .expect_err("too slow for the backend");
    assert_eq!(
        error,
        LlmError::BackendTimedOut(Duration::from_millis(200)),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains("raise `timeout` in the backend's settings"),
        "{message}"
    );
}

/// A server slower than the deadline gives `LlmError::TimedOut`, once per request and nothing after.
#[test]
fn slow_server_times_out_once_per_request() {
    let deadline = Duration::from_millis(200);
    let (server, base_url) = sleepy_server();
    let mut bridge = bridge(&base_url, deadline);

    let mut submitted: Vec<RequestId> = (0..3).map(|_| bridge.submit(greeting())).collect();
    let mut arrived = drain_until(&mut bridge, submitted.len());

    arrived.sort_by_key(|response| response.id);
    submitted.sort();
    assert_eq!(
        arrived
            .iter()
            .map(|response| response.id)
            .collect::<Vec<_>>(),
        submitted,
        "one outcome per request"
    );
    // Before the server's speed is measured, the bridge's deadline allows the slowest
    // server it expects to read the prompt: a little longer than 200 ms.
    for response in &arrived {
        assert!(
            matches!(response.result, Err(LlmError::TimedOut(waited)) if waited >= deadline),
            "{:?}",
            response.result
        );
    }
    assert_eq!(bridge.in_flight(), 0);

    // Stopping the server ends any request still open; a request abandoned at its
    // deadline must not come back now. The sentinel, sent to the stopped server,
    // is answered after anything such a stale request would produce.
    drop(server);
    // Its own deadline: it waits out the retries of a refused connection, however
    // slow the machine, rather than the 200 ms above.
    let sentinel = bridge.submit(LlmRequest {
        deadline: Some(GIVE_UP),
        ..greeting()
    });
    let after = drain_until(&mut bridge, 1);
    assert_eq!(
        after.iter().map(|response| response.id).collect::<Vec<_>>(),
        [sentinel],
        "late outcomes: {after:?}"
    );
    assert!(
        matches!(after[0].result, Err(LlmError::Unreachable { .. })),
        "{:?}",
        after[0].result
    );
}

/// The API key shows in no debug output of the settings and in no error message.
#[test]
fn api_key_never_shows() {
    let settings = settings("http://127.0.0.1:9/v1");
    let llm_settings = LlmPlugin {
        backend: BackendChoice::OpenAi(settings.clone()),
        ..default()
    };
    let backend = OpenAiBackend::new(settings.clone()).expect("an HTTP backend");
    let shown = [
        format!("{settings:?}"),
        format!("{llm_settings:?}"),
        backend.describe(),
    ];
    for text in &shown {
        assert!(!text.contains(API_KEY), "the key shows in {text}");
    }

    for error in [
        server_error(),
        not_json_error(),
        refused_error(),
        timeout_error(),
    ] {
        let message = error.to_string();
        assert!(
            !message.contains(API_KEY),
            "the key shows in the error {message}"
        );
        assert!(
            !format!("{error:?}").contains(API_KEY),
            "the key shows in the error {error:?}"
        );
    }
}

/// Through the ECS, every tavern smart actor asks the server once and requests the action it chose.
#[test]
fn tavern_actors_act_on_server_decisions() {
    let (_server, base_url, recorder) = recording_server(
        r#"{"action": 1, "speech": "Evening.", "thought": "A quiet night so far."}"#,
    );
    let backend = BackendChoice::OpenAi(OpenAiSettings {
        api_key: None,
        ..settings(&base_url)
    });
    let (mut app, scene) = tavern_app(backend);
    let actors: Vec<Entity> = ["marta", "silas", "brom"]
        .iter()
        .map(|id| scene.entities[*id])
        .collect();
    let seen = run_turn(&mut app);
    assert!(
        seen.rejected.is_empty(),
        "rejected decisions: {:?}",
        seen.rejected
    );
    let mut actions: HashMap<Entity, Vec<&ActionRequest>> = HashMap::new();
    for action in &seen.requests {
        actions.entry(action.actor).or_default().push(action);
    }
    for &actor in &actors {
        let requested: Vec<_> = seen.prompts.iter().filter(|r| r.actor == actor).collect();
        assert_eq!(requested.len(), 1, "actor {actor} asked once");
        let first = requested[0]
            .offered
            .get(1)
            .expect("at least one action offered");
        assert_eq!(first.index, 1);
        let chosen = actions.get(&actor).map(Vec::as_slice).unwrap_or_default();
        assert_eq!(
            chosen.len(),
            1,
            "actor {actor} requests exactly one action: {chosen:?}"
        );
        assert_eq!(chosen[0].command, first.command);
        assert_eq!(&*chosen[0].action_id, first.action_id);
        assert_eq!(&chosen[0].targets[..], first.targets);
        assert!(
            seen.spoke
                .iter()
                .any(|s| s.actor == actor && s.text == "Evening."),
            "actor {actor} said its line"
        );
    }
    assert_eq!(
        seen.requests.len(),
        actors.len(),
        "no action requests beyond one per actor"
    );

    let received = recorder.received();
    assert_eq!(
        received.len(),
        3,
        "one request per smart actor reached the server"
    );
    for request in &received {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(
            request.authorization, None,
            "no key is set, so none is sent"
        );
        assert_eq!(request.body["model"], MODEL);
        assert_eq!(request.body["stream"], json!(false));
        let last = request.body["messages"]
            .as_array()
            .and_then(|messages| messages.last());
        let content = last
            .and_then(|message| message["content"].as_str())
            .unwrap_or_default();
        assert!(
            content.contains("<available_actions>"),
            "the last message offers actions: {content}"
        );
        // The schema travels in OpenAI's form, and only offered indices fit it.
        let format = &request.body["response_format"];
        assert_eq!(format["type"], "json_schema");
        assert_eq!(format["json_schema"]["strict"], json!(true));
        let schema = &format["json_schema"]["schema"];
        assert_eq!(
            schema["type"], "object",
            "strict mode wants an object at the root"
        );
        // Actions are numbered from 1, and the tasks (the innkeeper's) on after them;
        // 0 is for none.
        let (actions, tasks) = content
            .split_once("</available_actions>")
            .expect("the actions block");
        let offered = actions.matches("[Index: ").count() + tasks.matches("[Index: ").count();
        let expected: Vec<serde_json::Value> = (0..=offered).map(|i| json!(i)).collect();
        assert_eq!(schema["properties"]["do"]["enum"], json!(expected));
        assert_eq!(schema["required"], json!(["do", "say"]));
    }
}

/// Credentials written into the URL never show in descriptions, `Debug` output or errors.
#[test]
fn credentials_in_the_url_never_show() {
    let refused = RefusedPort::new();
    let base = refused
        .base_url()
        .replace("http://", "http://loom:hunter2@");
    let settings = OpenAiSettings {
        api_key: None,
        ..settings(&base)
    };
    let backend = OpenAiBackend::new(settings.clone()).expect("an HTTP backend");
    let error = outcome(&base, GIVE_UP).expect_err("a refused connection is an error");
    for shown in [
        backend.describe(),
        format!("{settings:?}"),
        error.to_string(),
        format!("{error:?}"),
    ] {
        assert!(!shown.contains("hunter2"), "the password shows in {shown}");
    }
    assert!(backend.describe().contains("<redacted>@127.0.0.1"));
}

#[test]
fn a_server_url_that_is_not_http_is_a_setup_error_naming_it() {
    for base in [
        "localhost:8080/v1",
        "127.0.0.1 :8080",
        "ftp://loom:hunter2@127.0.0.1/v1",
    ] {
        let openai = OpenAiBackend::new(settings(base)).err();
        let ollama = OllamaBackend::new(OllamaSettings {
            base_url: base.to_owned(),
            ..OllamaSettings::default()
        })
        .err();
        for error in [openai, ollama] {
            let Some(LlmError::Setup(message)) = error else {
                panic!("`{base}` is refused at setup, got {error:?}");
            };
            assert!(message.contains("http://127.0.0.1:8080/v1"), "{message}");
            assert!(
                !message.contains("hunter2"),
                "the password shows in {message}"
            );
        }
    }
}

#[test]
fn an_affinity_keeps_a_server_slot_when_the_server_has_slots() {
    let (_server, base, recorder) = recording_server("ok");
    let with_slots = OpenAiBackend::new(OpenAiSettings {
        slots: Some(4),
        ..settings(&base)
    })
    .expect("an HTTP backend");
    let mut slotted = LlmBridge::new(Arc::new(with_slots), GIVE_UP, SamplingOptions::default());
    slotted.submit(LlmRequest {
        affinity: Some(10),
        ..greeting()
    });
    slotted.submit(greeting());
    drain_until(&mut slotted, 2);
    let mut bodies: Vec<Value> = recorder.received().into_iter().map(|r| r.body).collect();
    bodies.sort_by_key(|body| body.get("id_slot").is_none());
    assert_eq!(
        (&bodies[0]["id_slot"], &bodies[0]["cache_prompt"]),
        (&json!(2), &json!(true)),
        "affinity 10 on 4 slots is slot 2"
    );
    assert!(bodies[1].get("id_slot").is_none() && bodies[1].get("cache_prompt").is_none());

    // Without slots configured, nothing llama.cpp-specific is sent.
    let (_server, base, recorder) = recording_server("ok");
    let mut bridge = bridge(&base, GIVE_UP);
    bridge.submit(LlmRequest {
        affinity: Some(10),
        ..greeting()
    });
    drain_until(&mut bridge, 1);
    let body = &recorder.received()[0].body;
    assert!(
        body.get("id_slot").is_none() && body.get("cache_prompt").is_none(),
        "{body}"
    );
}

#[test]
fn requests_with_the_same_affinity_go_to_the_same_server_of_a_fleet() {
    let (_first, first_url, first) = recording_server("first");
    let (_second, second_url, second) = recording_server("second");
    let endpoints: Vec<Arc<dyn LlmBackend>> = [first_url, second_url]
        .iter()
        .map(|url| {
            Arc::new(OpenAiBackend::new(settings(url)).expect("an HTTP backend"))
                as Arc<dyn LlmBackend>
        })
        .collect();
    let mut bridge = LlmBridge::start(endpoints, &bevy_loom::llm::LlmPlugin::default());
    for _ in 0..6 {
        bridge.submit(LlmRequest {
            affinity: Some(7),
            ..greeting()
        });
    }
    let done = drain_until(&mut bridge, 6);
    assert!(
        done.iter()
            .all(|r| r.result.as_ref().is_ok_and(|reply| reply.text == "second"))
    );
    assert_eq!((first.received().len(), second.received().len()), (0, 6));
}

#[test]
fn a_fleet_uses_every_slot_of_every_server() {
    let (_first, first_url, first) = recording_server("first");
    let (_second, second_url, second) = recording_server("second");
    let fleet = BackendChoice::Fleet(
        [&first_url, &second_url]
            .into_iter()
            .map(|url| {
                BackendChoice::OpenAi(OpenAiSettings {
                    slots: Some(2),
                    ..settings(url)
                })
            })
            .collect(),
    );
    let mut bridge = LlmBridge::start(fleet.endpoints(), &LlmPlugin::default());
    for affinity in 0..4 {
        bridge.submit(LlmRequest {
            affinity: Some(affinity),
            ..greeting()
        });
    }
    drain_until(&mut bridge, 4);
    for (server, recorder) in [("first", &first), ("second", &second)] {
        let mut slots: Vec<Value> = recorder
            .received()
            .into_iter()
            .map(|r| r.body["id_slot"].clone())
            .collect();
        slots.sort_by_key(|slot| slot.as_u64());
        assert_eq!(slots, [json!(0), json!(1)], "the {server} server's slots");
    }
}

#[test]
fn a_bridge_started_without_a_server_fails_each_request_saying_so() {
    let mut bridge = LlmBridge::start(Vec::new(), &LlmPlugin::default());
    let id = bridge.submit(greeting());
    let arrived = drain_until(&mut bridge, 1);
    assert_eq!(arrived[0].id, id);
    let error = arrived[0].result.clone().expect_err("nothing can answer");
    assert!(
        matches!(&error, LlmError::Setup(why) if why.contains("at least one")),
        "{error:?}"
    );
}

/// A port on 127.0.0.1 that never accepts a connection, as a host that is off or a
/// firewall dropping packets: a listener whose queue of connections is full, so the
/// system drops every further attempt unanswered.
struct SilentPort {
    _listener: socket2::Socket,
    _queued: std::net::TcpStream,
    port: u16,
}

impl SilentPort {
    fn new() -> Self {
        let listener = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
            .expect("a TCP socket");
        let any_port = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        listener.bind(&any_port.into()).expect("a free port");
        listener.listen(0).expect("listening");
        let address = listener
            .local_addr()
            .ok()
            .and_then(|address| address.as_socket())
            .expect("the bound address");
        // Fills the queue: it is never accepted.
        let queued = std::net::TcpStream::connect(address).expect("the one queued connection");
        Self {
            _listener: listener,
            _queued: queued,
            port: address.port(),
        }
    }
}

#[test]
fn a_server_that_never_accepts_the_connection_is_unreachable_not_slow() {
    let silent = SilentPort::new();
    let settings = OpenAiSettings {
        connect_timeout: Duration::from_millis(200),
        ..settings(&format!("http://127.0.0.1:{}/v1", silent.port))
    };
    let backend = OpenAiBackend::new(settings).expect("an HTTP backend");
    let plugin = LlmPlugin {
        retry: bevy_loom::llm::RetryPolicy {
            max_retries: 0,
            ..default()
        },
        ..default()
    };
    let mut bridge = LlmBridge::start(vec![Arc::new(backend)], &plugin);
    bridge.submit(greeting());
    let arrived = drain_until(&mut bridge, 1);
    let error = arrived[0].result.clone().expect_err("nothing answers");
    assert!(
        matches!(&error, LlmError::Unreachable { refused: false, .. }),
        "a fault of the server's, which its breaker counts: {error:?}"
    );
    assert!(error.is_server_fault());
}

#[test]
fn an_answer_stopped_at_the_token_limit_is_marked_cut_off() {
    let mut cut = chat_completion("{\"do\": 1, \"say\": \"Welc");
    cut["choices"][0]["finish_reason"] = json!("length");
    let router = Router::new().fallback(move || {
        let cut = cut.clone();
        async move { Json(cut) }
    });
    let (_server, base_url) = serve(router);
    let reply = outcome(&base_url, GIVE_UP).expect("an answer, cut short");
    assert!(reply.cut_off);
    let whole = recording_server("{\"do\": 0}");
    let reply = outcome(&whole.1, GIVE_UP).expect("an answer");
    assert!(!reply.cut_off, "finished as it meant to");
}
