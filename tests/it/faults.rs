//! Faults against servers on 127.0.0.1, through a running app: every request ends in
//! exactly one `LlmResponse`, and frames keep running while servers misbehave.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use bevy::prelude::*;
use bevy_loom::llm::{
    BreakerSettings, BreakerState, ChatMessage, DeltaSink, LimitsFuture, LlmBackend, LlmError,
    LlmFuture, LlmReply, LlmRequest, LlmResponse, OpenAiSettings, Priority, RequestId, RetryPolicy,
};
use bevy_loom::prelude::*;
use serde_json::{Value, json};

use crate::support::serve;

fn completion(text: &str) -> Response {
    axum::Json(
        json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": text } }] }),
    )
    .into_response()
}

/// A server whose n-th request (from 0) gets `answer(n, body)`; it counts requests.
fn server(
    answer: impl Fn(usize, Value) -> Response + Clone + Send + Sync + 'static,
) -> (tokio::runtime::Runtime, String, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    // Like most servers, it says nothing of its limits.
    let props = axum::routing::get(|| async { axum::http::StatusCode::NOT_FOUND });
    let router = Router::new()
        .route("/props", props)
        .fallback(move |body: Bytes| {
            let (answer, counter) = (answer.clone(), counter.clone());
            async move {
                let n = counter.fetch_add(1, Ordering::SeqCst);
                answer(n, serde_json::from_slice(&body).unwrap_or(Value::Null))
            }
        });
    let (runtime, root) = serve(router);
    (runtime, format!("{root}/v1"), count)
}

fn endpoint(base_url: &str) -> BackendChoice {
    BackendChoice::OpenAi(OpenAiSettings {
        base_url: base_url.to_owned(),
        model: "tiny".into(),
        ..default()
    })
}

fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        first_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        ..default()
    }
}

/// An app whose bridge asks the server at `url` and retries quickly.
fn retrying_app(url: &str) -> App {
    app(LlmPlugin {
        backend: endpoint(url),
        retry: fast_retries(),
        ..default()
    })
}

fn request(text: &str) -> LlmRequest {
    LlmRequest {
        messages: vec![ChatMessage::user(text)].into(),
        ..default()
    }
}

#[derive(Resource, Default)]
struct Outcomes(Vec<LlmResponse>);

fn collect(mut outcomes: ResMut<Outcomes>, mut responses: MessageReader<LlmResponse>) {
    outcomes.0.extend(responses.read().cloned());
}

/// An app with only the bridge, configured by `plugin`.
fn app(plugin: LlmPlugin) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, plugin))
        .init_resource::<Outcomes>()
        .add_systems(Update, collect.after(LoomSystems::Receive));
    app.finish();
    app.cleanup();
    app
}

/// Updates until every id has an outcome and checks there is exactly one each.
/// Returns the outcomes by id and how many frames ran while waiting.
fn outcomes_and_frames(app: &mut App, ids: &[RequestId]) -> (HashMap<RequestId, LlmResponse>, u32) {
    let (started, mut frames) = (Instant::now(), 0u32);
    while app.world().resource::<Outcomes>().0.len() < ids.len() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "gave up waiting for outcomes"
        );
        app.update();
        frames += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    // Exactly one each: once the bridge is idle nothing more can come, and an outcome
    // sent just as it went idle arrives with the next frame.
    while !app.world().resource::<LlmBridge>().is_idle() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "gave up waiting for the bridge to be idle"
        );
        app.update();
        std::thread::sleep(Duration::from_millis(1));
    }
    app.update();
    let all = &app.world().resource::<Outcomes>().0;
    assert_eq!(
        all.len(),
        ids.len(),
        "exactly one outcome per request: {all:#?}"
    );
    let by_id: HashMap<RequestId, LlmResponse> = all.iter().map(|r| (r.id, r.clone())).collect();
    assert!(ids.iter().all(|id| by_id.contains_key(id)));
    (by_id, frames)
}

fn outcomes(app: &mut App, ids: &[RequestId]) -> HashMap<RequestId, LlmResponse> {
    outcomes_and_frames(app, ids).0
}

/// Like [`outcomes`], for requests that take a while: frames must keep running meanwhile.
fn outcomes_while_running(app: &mut App, ids: &[RequestId]) -> HashMap<RequestId, LlmResponse> {
    let (done, frames) = outcomes_and_frames(app, ids);
    assert!(
        frames > 1,
        "frames kept running while the requests were out"
    );
    done
}

fn submit(app: &mut App, request: LlmRequest) -> RequestId {
    app.world_mut().resource_mut::<LlmBridge>().submit(request)
}

#[test]
fn server_errors_and_429_are_retried_honouring_retry_after() {
    let (_server, url, count) = server(|n, _| match n {
        0 => (StatusCode::SERVICE_UNAVAILABLE, "warming up").into_response(),
        1 => (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "0")],
            "slow down",
        )
            .into_response(),
        _ => completion("Evening."),
    });
    let mut app = retrying_app(&url);
    let id = submit(&mut app, request("hello"));
    let done = outcomes(&mut app, &[id]);
    assert_eq!(
        done[&id].result.as_ref().map(|r| r.text.as_str()),
        Ok("Evening.")
    );
    assert_eq!(done[&id].retries, 2);
    assert_eq!(count.load(Ordering::SeqCst), 3);
    let stats = app.world().resource::<LlmStats>();
    assert_eq!((stats.completed, stats.retries, stats.failed), (1, 2, 0));
    assert!(stats.latency_p50().is_some());
    assert_eq!((stats.queued, stats.in_flight), (0, 0));
}

#[test]
fn other_client_errors_are_not_retried() {
    let (_server, url, count) =
        server(|_, _| (StatusCode::BAD_REQUEST, "unknown model").into_response());
    let mut app = retrying_app(&url);
    let id = submit(&mut app, request("hello"));
    let done = outcomes(&mut app, &[id]);
    assert!(matches!(
        done[&id].result,
        Err(LlmError::Status { status: 400, .. })
    ));
    assert_eq!((done[&id].retries, count.load(Ordering::SeqCst)), (0, 1));
}

#[test]
fn a_redirect_is_not_followed_to_another_address() {
    let (_elsewhere, elsewhere, reached) = server(|_, _| completion("Evening."));
    let to = format!("{elsewhere}/chat/completions");
    let (_server, url, count) = server(move |_, _| {
        let location = [(header::LOCATION, to.clone())];
        (StatusCode::TEMPORARY_REDIRECT, location, "").into_response()
    });
    let mut app = retrying_app(&url);
    let id = submit(&mut app, request("hello"));
    let done = outcomes(&mut app, &[id]);
    let error = done[&id].result.as_ref().expect_err("not followed");
    assert!(matches!(error, LlmError::Redirected { .. }), "{error:?}");
    let said = error.to_string();
    assert!(
        said.contains(&elsewhere),
        "names where it redirects: {said}"
    );
    assert!(said.contains("LOOM_LLM_URL"), "says what to set: {said}");
    assert_eq!(count.load(Ordering::SeqCst), 1, "not retried");
    assert_eq!(reached.load(Ordering::SeqCst), 0, "nothing sent elsewhere");
}

/// Set in the process [`a_server_on_this_machine_is_reached_without_a_proxy`] runs
/// itself in, with a proxy set.
const UNDER_A_PROXY: &str = "LOOM_TEST_UNDER_A_PROXY";

#[test]
fn a_server_on_this_machine_is_reached_without_a_proxy() {
    if std::env::var_os(UNDER_A_PROXY).is_some() {
        let (_server, url, count) = server(|_, _| completion("Evening."));
        let mut app = retrying_app(&url);
        let id = submit(&mut app, request("hello"));
        let done = outcomes(&mut app, &[id]);
        let answer = done[&id].result.as_ref().map(|r| r.text.as_str());
        assert_eq!(answer, Ok("Evening."));
        assert_eq!(count.load(Ordering::SeqCst), 1);
        return;
    }
    // The proxy variables are the process's own: this test runs again in a process of
    // its own with them set, and this one is the proxy.
    let (_proxy, proxy, proxied) = server(|_, _| completion("from the proxy"));
    let proxy = proxy.trim_end_matches("/v1");
    let name = "faults::a_server_on_this_machine_is_reached_without_a_proxy";
    let run = std::process::Command::new(std::env::current_exe().expect("this test"))
        .args(["--exact", name, "--test-threads", "1"])
        .env(UNDER_A_PROXY, "1")
        .env("HTTP_PROXY", proxy)
        .env("http_proxy", proxy)
        .env("ALL_PROXY", proxy)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .output()
        .expect("the test runs again");
    let said = String::from_utf8_lossy(&run.stdout) + String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "under a proxy: {said}");
    assert!(said.contains("1 passed"), "it ran again: {said}");
    assert_eq!(proxied.load(Ordering::SeqCst), 0, "nothing went through it");
}

#[test]
fn a_breaker_opens_and_fails_fast() {
    let (_server, url, count) =
        server(move |_, _| (StatusCode::BAD_GATEWAY, "down").into_response());
    // Open for longer than any machine takes to run the test: when its open period
    // ends, and how a probe closes it, the scheduler's own tests show on a clock of
    // their own.
    let breaker = BreakerSettings {
        failures_to_open: 2,
        open_for: Duration::from_secs(3600),
    };
    let mut app = app(LlmPlugin {
        backend: endpoint(&url),
        retry: RetryPolicy {
            max_retries: 0,
            ..fast_retries()
        },
        breaker,
        ..default()
    });
    let first: Vec<RequestId> = (0..2)
        .map(|i| submit(&mut app, request(&format!("a{i}"))))
        .collect();
    outcomes(&mut app, &first);
    assert_eq!(count.load(Ordering::SeqCst), 2);
    app.world_mut().resource_mut::<Outcomes>().0.clear();

    let open: Vec<RequestId> = (0..3)
        .map(|i| submit(&mut app, request(&format!("while open {i}"))))
        .collect();
    let done = outcomes(&mut app, &open);
    for id in &open {
        let Err(LlmError::Unavailable(why)) = &done[id].result else {
            panic!("failed fast: {:?}", done[id].result);
        };
        assert!(
            why.ends_with(": the model server answered HTTP 502: down"),
            "it says why the server last failed: {why}"
        );
    }
    assert_eq!(
        count.load(Ordering::SeqCst),
        2,
        "an open breaker sends nothing"
    );
    let health = app.world().resource::<LlmBridge>().endpoint_health();
    let [endpoint] = health.as_slice() else {
        panic!("one endpoint: {health:?}");
    };
    assert_eq!(endpoint.breaker, BreakerState::Open);
    assert_eq!(
        endpoint.last_failure.as_deref(),
        Some("the model server answered HTTP 502: down")
    );
    assert!(
        endpoint
            .endpoint
            .starts_with("OpenAI-compatible server at http://127.0.0.1:"),
        "{}",
        endpoint.endpoint
    );
}

/// A server limiting its rate answered, and said when to ask again: it is up, and its
/// breaker stays closed however often it says so.
#[test]
fn a_rate_limit_does_not_open_the_breaker() {
    let (_server, url, count) = server(|n, _| {
        if n < 3 {
            (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, "0")],
                "slow down",
            )
                .into_response()
        } else {
            completion("Evening.")
        }
    });
    let mut app = app(LlmPlugin {
        backend: endpoint(&url),
        retry: RetryPolicy {
            max_retries: 0,
            ..fast_retries()
        },
        breaker: BreakerSettings {
            failures_to_open: 2,
            open_for: Duration::from_secs(3600),
        },
        ..default()
    });
    for i in 0..3 {
        let id = submit(&mut app, request(&format!("r{i}")));
        let done = outcomes(&mut app, &[id]);
        assert!(
            matches!(done[&id].result, Err(LlmError::Status { status: 429, .. })),
            "{:?}",
            done[&id].result
        );
        app.world_mut().resource_mut::<Outcomes>().0.clear();
    }
    let health = app.world().resource::<LlmBridge>().endpoint_health();
    assert_eq!(health[0].breaker, BreakerState::Closed, "{health:#?}");
    let id = submit(&mut app, request("hello"));
    let done = outcomes(&mut app, &[id]);
    assert_eq!(
        done[&id].result.as_ref().map(|r| r.text.as_str()),
        Ok("Evening."),
        "asked, not failed fast"
    );
    assert_eq!(count.load(Ordering::SeqCst), 4);
}

#[test]
fn a_fleet_fails_over_from_a_dead_server() {
    let (_server, good, count) = server(|_, _| completion("served"));
    let refused = crate::support::RefusedPort::new();
    let dead = refused.base_url();
    let mut app = app(LlmPlugin {
        backend: BackendChoice::Fleet(vec![endpoint(&dead), endpoint(&good)]),
        retry: fast_retries(),
        ..default()
    });
    let ids: Vec<RequestId> = (0..6)
        .map(|i| submit(&mut app, request(&format!("r{i}"))))
        .collect();
    let done = outcomes(&mut app, &ids);
    assert!(
        ids.iter()
            .all(|id| done[id].result.as_ref().is_ok_and(|r| r.text == "served")),
        "{done:#?}"
    );
    assert_eq!(
        count.load(Ordering::SeqCst),
        6,
        "the good server answered each once"
    );
}

/// A server that answers 200 with a web page is no server to keep asking: each
/// request is asked again of the healthy one, and the bad one's breaker opens.
#[test]
fn a_fleet_fails_over_from_a_server_answering_garbage() {
    let (_good_server, good, served) = server(|_, _| completion("served"));
    let page = |_, _| (StatusCode::OK, "<html>It works!</html>").into_response();
    let (_bad_server, bad, garbled) = server(page);
    let mut app = app(LlmPlugin {
        backend: BackendChoice::Fleet(vec![endpoint(&bad), endpoint(&good)]),
        retry: fast_retries(),
        breaker: BreakerSettings {
            failures_to_open: 2,
            open_for: Duration::from_secs(3600),
        },
        ..default()
    });
    // One after the other, so that none is under way on the bad server when its
    // breaker opens.
    for i in 0..6 {
        let id = submit(&mut app, request(&format!("r{i}")));
        let done = outcomes(&mut app, &[id]);
        let served = done[&id].result.as_ref();
        assert!(served.is_ok_and(|r| r.text == "served"), "{done:#?}");
        app.world_mut().resource_mut::<Outcomes>().0.clear();
    }
    assert!(
        garbled.load(Ordering::SeqCst) <= 2,
        "the bad server's breaker opened after two: {garbled:?}"
    );
    assert_eq!(served.load(Ordering::SeqCst), 6);
    let health = app.world().resource::<LlmBridge>().endpoint_health();
    assert_eq!(health[0].breaker, BreakerState::Open, "{health:#?}");
    let said = health[0].last_failure.as_deref().unwrap_or_default();
    assert!(
        said.contains("not JSON") && said.contains("check that the address"),
        "{said}"
    );
}

#[test]
fn a_connection_reset_mid_stream_fails_once() {
    let (_server, url, _) = server(|_, _| {
        let first = "data: {\"choices\":[{\"delta\":{\"content\":\"Wel\"}}]}\n\n";
        let chunks = futures_lite::stream::unfold(0, move |step| async move {
            match step {
                0 => Some((Ok(Bytes::from(first)), 1)),
                1 => {
                    // Let the headers and the first piece reach the client, then drop the connection.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Some((Err(std::io::Error::other("reset")), 2))
                }
                _ => None,
            }
        });
        Body::from_stream(chunks).into_response()
    });
    let mut app = retrying_app(&url);
    let id = submit(
        &mut app,
        LlmRequest {
            stream: true,
            ..request("hello")
        },
    );
    let done = outcomes_while_running(&mut app, &[id]);
    let result = &done[&id].result;
    assert!(matches!(result, Err(LlmError::BrokeOff(_))), "{result:?}");
    assert_eq!(
        done[&id].retries, 0,
        "a stream that reached the game is not asked again"
    );
}

#[test]
fn an_answer_that_broke_off_before_reaching_the_game_is_asked_again() {
    // The server goes down with the headers sent, as one that runs out of memory
    // reading the prompt; then it is back.
    let (_server, url, count) = server(|n, _| match n {
        0 => {
            let broken = futures_lite::stream::once_future(async {
                // The headers reach the client first.
                tokio::time::sleep(Duration::from_millis(100)).await;
                Err::<Bytes, _>(std::io::Error::other("reset"))
            });
            Body::from_stream(broken).into_response()
        }
        _ => completion("Evening."),
    });
    let mut app = retrying_app(&url);
    let id = submit(&mut app, request("hello"));
    let done = outcomes(&mut app, &[id]);
    let answer = done[&id].result.as_ref().map(|r| r.text.as_str());
    assert_eq!(answer, Ok("Evening."));
    assert_eq!((done[&id].retries, count.load(Ordering::SeqCst)), (1, 2));
}

#[test]
fn a_streamed_request_answered_whole_or_with_an_error_is_read_as_it_came() {
    let (_server, url, _) = server(|_, body| {
        if body.to_string().contains("hello") {
            return completion("Evening.");
        }
        let overloaded = json!({ "error": { "message": "model is overloaded, try tiny" } });
        axum::Json(overloaded).into_response()
    });
    let mut app = retrying_app(&url);
    let streamed = |text| LlmRequest {
        stream: true,
        ..request(text)
    };
    let whole = submit(&mut app, streamed("hello"));
    let refused = submit(&mut app, streamed("hi"));
    let done = outcomes(&mut app, &[whole, refused]);
    let answer = done[&whole].result.as_ref().map(|r| r.text.as_str());
    assert_eq!(answer, Ok("Evening."), "a server that does not stream");
    let error = done[&refused].result.as_ref().expect_err("an error");
    assert!(error.to_string().contains("model is overloaded"), "{error}");
}

#[test]
fn slow_answers_time_out_and_cancelled_ones_end_cancelled() {
    let (_server, url, _) = server(|_, _| {
        std::thread::sleep(Duration::from_millis(1500));
        completion("too late")
    });
    let mut app = app(LlmPlugin {
        backend: endpoint(&url),
        ..default()
    });
    let timed = submit(
        &mut app,
        LlmRequest {
            deadline: Some(Duration::from_millis(200)),
            ..request("slow")
        },
    );
    let cancelled = submit(&mut app, request("unwanted"));
    app.world_mut()
        .resource_mut::<LlmBridge>()
        .cancel(cancelled);
    let done = outcomes_while_running(&mut app, &[timed, cancelled]);
    assert!(matches!(done[&timed].result, Err(LlmError::TimedOut(_))));
    assert_eq!(done[&cancelled].result, Err(LlmError::Cancelled));
    let stats = app.world().resource::<LlmStats>();
    assert_eq!(
        (stats.timed_out, stats.cancelled, stats.completed),
        (1, 1, 0)
    );
}

#[test]
fn dialogue_goes_before_background_thinking() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let seen = order.clone();
    // The first request is held until the others wait behind it.
    let (release, held) = std::sync::mpsc::channel::<()>();
    let held = Arc::new(Mutex::new(held));
    let (_server, url, _) = server(move |n, body| {
        let text = body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        seen.lock().expect("the record").push(text);
        if n == 0 {
            let _ = held.lock().expect("the latch").recv();
        }
        completion("ok")
    });
    let mut app = app(LlmPlugin {
        backend: endpoint(&url),
        concurrency_per_endpoint: 1,
        ..default()
    });
    // The first request goes out on its own and takes the only slot; the rest queue
    // behind it and are sent together.
    let first = submit(&mut app, request("first"));
    app.world_mut().resource_mut::<LlmBridge>().flush();
    crate::support::update_until(&mut app, "the first request to reach the server", |_| {
        !order.lock().expect("the record").is_empty()
    });
    let ids = vec![
        first,
        submit(&mut app, request("background")),
        submit(
            &mut app,
            LlmRequest {
                priority: Priority::Narration,
                ..request("narration")
            },
        ),
        submit(
            &mut app,
            LlmRequest {
                priority: Priority::Dialogue,
                ..request("dialogue")
            },
        ),
    ];
    app.world_mut().resource_mut::<LlmBridge>().flush();
    release.send(()).expect("the server waits");
    outcomes(&mut app, &ids);
    assert_eq!(
        *order.lock().expect("the record"),
        ["first", "dialogue", "narration", "background"]
    );
}

#[test]
fn requests_submitted_in_one_frame_start_highest_priority_first() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let seen = order.clone();
    let (_server, url, _) = server(move |_, body| {
        let text = body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        seen.lock().expect("the record").push(text);
        completion("ok")
    });
    let mut app = app(LlmPlugin {
        backend: endpoint(&url),
        concurrency_per_endpoint: 1,
        ..default()
    });
    // All three leave together at the end of the frame: the free slot goes to dialogue.
    let ids = vec![
        submit(&mut app, request("background")),
        submit(
            &mut app,
            LlmRequest {
                priority: Priority::Narration,
                ..request("narration")
            },
        ),
        submit(
            &mut app,
            LlmRequest {
                priority: Priority::Dialogue,
                ..request("dialogue")
            },
        ),
    ];
    outcomes(&mut app, &ids);
    assert_eq!(
        *order.lock().expect("the record"),
        ["dialogue", "narration", "background"]
    );
}

#[test]
fn a_retry_after_too_long_to_wait_ends_each_request_and_the_bridge_goes_on() {
    let forever = u64::MAX.to_string();
    let (_server, url, _) = server(
        move |_, body| match body["messages"][0]["content"].as_str() {
            Some("busy") => (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, forever.clone())],
                "slow down",
            )
                .into_response(),
            Some("loading") => (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, forever.clone())],
                "come back later",
            )
                .into_response(),
            _ => completion("Evening."),
        },
    );
    let mut app = retrying_app(&url);
    let refused = [
        submit(&mut app, request("busy")),
        submit(&mut app, request("loading")),
    ];
    let done = outcomes(&mut app, &refused);
    assert!(
        matches!(
            done[&refused[0]].result,
            Err(LlmError::Status { status: 429, .. })
        ),
        "{:?}",
        done[&refused[0]].result
    );
    assert!(
        matches!(
            done[&refused[1]].result,
            Err(LlmError::Status { status: 503, .. })
        ),
        "{:?}",
        done[&refused[1]].result
    );
    app.world_mut().resource_mut::<Outcomes>().0.clear();
    let next = submit(&mut app, request("hello"));
    let done = outcomes(&mut app, &[next]);
    assert_eq!(
        done[&next].result.as_ref().map(|r| r.text.as_str()),
        Ok("Evening."),
        "the bridge still serves requests"
    );
}

#[test]
fn a_deadline_too_long_to_add_still_gets_an_answer() {
    let (_server, url, _) = server(|_, _| completion("Evening."));
    let mut app = app(LlmPlugin {
        backend: endpoint(&url),
        settings: LlmSettings {
            deadline: Duration::MAX,
            ..default()
        },
        ..default()
    });
    let ids = [
        submit(&mut app, request("the settings' deadline")),
        submit(
            &mut app,
            LlmRequest {
                deadline: Some(Duration::MAX),
                ..request("the request's own deadline")
            },
        ),
    ];
    let done = outcomes(&mut app, &ids);
    for id in ids {
        assert_eq!(
            done[&id].result.as_ref().map(|r| r.text.as_str()),
            Ok("Evening.")
        );
    }
}

#[test]
fn concurrency_past_any_server_is_an_error_and_the_bridge_still_answers() {
    let (_server, url, _) = server(|_, _| completion("Evening."));
    let plugin = LlmPlugin {
        backend: endpoint(&url),
        concurrency_per_endpoint: usize::MAX,
        ..default()
    };
    assert!(
        (plugin.validate().expect_err("cannot work").to_string())
            .contains(&format!("use at most {}", bevy_loom::llm::MOST_CONCURRENCY)),
        "the error says what to use"
    );
    let mut app = app(plugin);
    let ids = [
        submit(&mut app, request("one")),
        submit(&mut app, request("two")),
    ];
    let done = outcomes(&mut app, &ids);
    for id in ids {
        assert_eq!(
            done[&id].result.as_ref().map(|r| r.text.as_str()),
            Ok("Evening.")
        );
    }
}

/// Fails every request as unreachable; describing it panics after the first time.
struct PanicsWhenDescribedAgain(AtomicUsize);

impl bevy_loom::llm::LlmBackend for PanicsWhenDescribedAgain {
    fn describe(&self) -> String {
        assert!(
            self.0.fetch_add(1, Ordering::SeqCst) == 0,
            "described again"
        );
        "a backend that panics when described again".to_owned()
    }

    fn complete(
        &self,
        _request: &LlmRequest,
        _deltas: bevy_loom::llm::DeltaSink,
    ) -> bevy_loom::llm::LlmFuture {
        Box::pin(async {
            Err(LlmError::Unreachable {
                url: "nowhere".to_owned(),
                detail: "down".to_owned(),
                refused: false,
            })
        })
    }
}

#[test]
fn a_panic_while_serving_a_request_ends_it_and_the_bridge_serves_the_next() {
    let backend = Arc::new(PanicsWhenDescribedAgain(AtomicUsize::new(0)));
    let mut app = app(LlmPlugin {
        backend: BackendChoice::Custom(backend),
        concurrency_per_endpoint: 1,
        retry: RetryPolicy {
            max_retries: 0,
            ..fast_retries()
        },
        breaker: BreakerSettings {
            failures_to_open: 1,
            open_for: Duration::from_secs(600),
        },
        ..default()
    });
    let first = submit(&mut app, request("opens the breaker"));
    let done = outcomes(&mut app, &[first]);
    assert!(matches!(
        done[&first].result,
        Err(LlmError::Unreachable { .. })
    ));
    app.world_mut().resource_mut::<Outcomes>().0.clear();
    // With the breaker open, serving a request names the failing endpoint: it panics.
    let later: Vec<RequestId> = (0..3)
        .map(|i| submit(&mut app, request(&format!("after {i}"))))
        .collect();
    let done = outcomes(&mut app, &later);
    for id in &later {
        assert!(
            matches!(&done[id].result, Err(LlmError::BackendFailed(m)) if m.contains("panicked")),
            "{:?}",
            done[id].result
        );
    }
    let stats = app.world().resource::<LlmStats>();
    assert_eq!(
        (stats.queued, stats.in_flight),
        (0, 0),
        "every slot is free"
    );
}

/// A server that holds every request until the test lets go (dropping the returned
/// sender), and counts the requests it received.
fn holding_server() -> (
    tokio::runtime::Runtime,
    String,
    std::sync::mpsc::Sender<()>,
    Arc<AtomicUsize>,
) {
    let (release, held) = std::sync::mpsc::channel::<()>();
    let held = Arc::new(Mutex::new(held));
    let (runtime, url, count) = server(move |_, _| {
        let _ = held.lock().expect("the latch").recv();
        completion("held")
    });
    (runtime, url, release, count)
}

/// A request for the server at index `server` of a two-server fleet.
fn bound_to(server: u64, priority: Priority, text: &str) -> LlmRequest {
    LlmRequest {
        affinity: Some(server),
        priority,
        ..request(text)
    }
}

/// A fleet of two servers, one request at a time each: the first holds every request
/// (background thinking bound to it holds it now), the second answers at once.
struct BusyFleet {
    app: App,
    first: RequestId,
    release: Option<std::sync::mpsc::Sender<()>>,
    busy_count: Arc<AtomicUsize>,
    _servers: [tokio::runtime::Runtime; 2],
}

impl BusyFleet {
    fn new() -> Self {
        let (busy_server, busy, release, busy_count) = holding_server();
        let (free_server, free, _) = server(|_, _| completion("from the free server"));
        let mut app = app(LlmPlugin {
            backend: BackendChoice::Fleet(vec![endpoint(&busy), endpoint(&free)]),
            concurrency_per_endpoint: 1,
            ..default()
        });
        let first = submit(&mut app, bound_to(0, Priority::Background, "thinking"));
        crate::support::update_until(&mut app, "the busy server to be busy", |_| {
            busy_count.load(Ordering::SeqCst) == 1
        });
        Self {
            app,
            first,
            release: Some(release),
            busy_count,
            _servers: [busy_server, free_server],
        }
    }

    /// Lets the busy server answer what it holds.
    fn release(&mut self) {
        self.release.take();
    }
}

/// A request whose server is busy with background work goes to a free one of the
/// fleet instead of waiting behind it, however long that work takes.
#[test]
fn a_request_bound_to_a_busy_server_goes_to_a_free_one() {
    let mut fleet = BusyFleet::new();
    let background = fleet.first;
    let dialogue = submit(&mut fleet.app, bound_to(0, Priority::Dialogue, "a reply"));
    crate::support::update_until(&mut fleet.app, "the reply", |app| {
        app.world()
            .resource::<Outcomes>()
            .0
            .iter()
            .any(|r| r.id == dialogue)
    });
    let reply = &fleet.app.world().resource::<Outcomes>().0[0];
    assert_eq!(
        reply.result.as_ref().map(|r| r.text.as_str()),
        Ok("from the free server")
    );
    fleet.release();
    let done = outcomes(&mut fleet.app, &[background, dialogue]);
    assert!(done[&background].result.is_ok());
}

/// A request waiting for a slot that other work holds ends at its deadline, not when
/// the slot frees.
#[test]
fn a_request_waiting_behind_busy_slots_ends_at_its_deadline() {
    let (_server, url, release, count) = holding_server();
    let mut app = app(LlmPlugin {
        backend: endpoint(&url),
        concurrency_per_endpoint: 1,
        ..default()
    });
    let background = submit(&mut app, request("thinking"));
    crate::support::update_until(&mut app, "the server to be busy", |_| {
        count.load(Ordering::SeqCst) == 1
    });
    let waiting = submit(
        &mut app,
        LlmRequest {
            deadline: Some(Duration::from_millis(200)),
            priority: Priority::Dialogue,
            ..request("a reply")
        },
    );
    crate::support::update_until(&mut app, "the waiting request's outcome", |app| {
        !app.world().resource::<Outcomes>().0.is_empty()
    });
    let outcome = &app.world().resource::<Outcomes>().0[0];
    assert_eq!(outcome.id, waiting);
    assert!(
        matches!(outcome.result, Err(LlmError::NotStarted(_))),
        "{:?}",
        outcome.result
    );
    drop(release);
    let done = outcomes(&mut app, &[background, waiting]);
    assert!(done[&background].result.is_ok());
    assert_eq!(
        count.load(Ordering::SeqCst),
        1,
        "the late one was never sent"
    );
}

/// Background thinking waiting for its own busy server holds no slot of the fleet's:
/// a request that can go elsewhere goes at once.
#[test]
fn background_work_waiting_for_its_server_does_not_hold_up_the_rest() {
    let mut fleet = BusyFleet::new();
    let first = fleet.first;
    let waiting = submit(
        &mut fleet.app,
        bound_to(0, Priority::Background, "more thinking"),
    );
    let elsewhere = submit(&mut fleet.app, request("anywhere"));
    crate::support::update_until(&mut fleet.app, "the request that can go elsewhere", |app| {
        app.world()
            .resource::<Outcomes>()
            .0
            .iter()
            .any(|r| r.id == elsewhere)
    });
    let outcome = &fleet.app.world().resource::<Outcomes>().0[0];
    assert_eq!(outcome.id, elsewhere);
    assert_eq!(
        outcome.result.as_ref().map(|r| r.text.as_str()),
        Ok("from the free server")
    );
    fleet.release();
    let done = outcomes(&mut fleet.app, &[first, waiting, elsewhere]);
    assert!(done[&waiting].result.is_ok());
    assert_eq!(
        fleet.busy_count.load(Ordering::SeqCst),
        2,
        "background thinking waited for its own server"
    );
}

/// Loading its model at the first request; at the next, it starts streaming an answer
/// and then takes forever.
#[derive(Default)]
struct LoadingThenStuck {
    asked: AtomicUsize,
}

impl LlmBackend for LoadingThenStuck {
    fn describe(&self) -> String {
        "a server loading, then stuck".to_owned()
    }

    fn complete(&self, _request: &LlmRequest, deltas: DeltaSink) -> LlmFuture {
        if self.asked.fetch_add(1, Ordering::SeqCst) == 0 {
            return Box::pin(async {
                Err(LlmError::Loading {
                    url: "http://127.0.0.1:9/v1".to_owned(),
                    detail: "Loading model".to_owned(),
                })
            });
        }
        deltas.send("Eve");
        Box::pin(std::future::pending())
    }
}

#[test]
fn a_request_that_times_out_on_a_server_that_loaded_says_it_timed_out() {
    let backend = Arc::new(LoadingThenStuck::default());
    let mut app = app(LlmPlugin {
        backend: BackendChoice::Custom(backend.clone()),
        retry: fast_retries(),
        ..default()
    });
    let id = submit(
        &mut app,
        LlmRequest {
            deadline: Some(Duration::from_millis(500)),
            stream: true,
            ..request("hello")
        },
    );
    let done = outcomes(&mut app, &[id]);
    assert_eq!(
        backend.asked.load(Ordering::SeqCst),
        2,
        "loaded, then asked"
    );
    assert!(
        matches!(done[&id].result, Err(LlmError::TimedOut(_))),
        "the server was ready when time ran out: {:?}",
        done[&id].result
    );
}

/// Answers every request, and panics when asked for its limits.
struct LimitsPanic;

impl LlmBackend for LimitsPanic {
    fn describe(&self) -> String {
        "a backend whose limits panic".to_owned()
    }

    fn complete(&self, _request: &LlmRequest, _deltas: DeltaSink) -> LlmFuture {
        Box::pin(async { Ok(LlmReply::text("Evening.")) })
    }

    fn limits(&self) -> LimitsFuture {
        panic!("no limits here")
    }
}

#[test]
fn a_backend_that_panics_telling_its_limits_still_answers() {
    let mut app = app(LlmPlugin {
        backend: BackendChoice::Custom(Arc::new(LimitsPanic)),
        ..default()
    });
    let ids: Vec<RequestId> = (0..3)
        .map(|i| submit(&mut app, request(&format!("hello {i}"))))
        .collect();
    let done = outcomes(&mut app, &ids);
    for id in &ids {
        let answer = done[id].result.as_ref().map(|reply| reply.text.as_str());
        assert_eq!(answer, Ok("Evening."), "{:?}", done[id].result);
    }
}
