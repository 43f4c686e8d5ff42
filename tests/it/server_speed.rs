//! The bridge learns how fast a server is and sends only what can finish: a request
//! its measured speed cannot answer by the requester's deadline is not sent; one
//! without a deadline of its own waits its turn in the queue without being late; and
//! as many requests run side by side as the server says it has slots.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bevy::prelude::default;
use bevy_loom::llm::{
    BreakerSettings, BreakerState, ChatMessage, DeltaSink, LimitsFuture, LlmBackend, LlmBridge,
    LlmError, LlmFuture, LlmReply, LlmRequest, LlmResponse, RetryPolicy, ServerLimits,
    ServerTimings, TokenUsage,
};
use bevy_loom::prelude::*;

/// Long enough for any machine to answer a few requests that take no time.
const GIVE_UP: Duration = Duration::from_secs(60);

/// A server that reads four characters a token, 20 prompt tokens a second and writes
/// 10 answer tokens a second (20 of them, or 1 when asked for one, as a warm-up is),
/// as its `timings` say, while answering after `takes` of real time (a warm-up at
/// once); it says it has `slots` slots, and counts the requests it was sent and
/// how many it held at once.
struct MeasuredServer {
    takes: Duration,
    /// While set, it fails every request as a server down does (HTTP 502).
    failing: AtomicBool,
    slots: Option<u32>,
    sent: AtomicUsize,
    running: Arc<AtomicUsize>,
    most_at_once: Arc<AtomicUsize>,
}

impl MeasuredServer {
    fn new(takes: Duration, slots: Option<u32>) -> Arc<Self> {
        Arc::new(Self {
            takes,
            failing: AtomicBool::new(false),
            slots,
            sent: AtomicUsize::new(0),
            running: Arc::default(),
            most_at_once: Arc::default(),
        })
    }
}

impl LlmBackend for MeasuredServer {
    fn describe(&self) -> String {
        "a measured server".to_owned()
    }

    fn complete(&self, request: &LlmRequest, _deltas: DeltaSink) -> LlmFuture {
        self.sent.fetch_add(1, Ordering::SeqCst);
        if self.failing.load(Ordering::SeqCst) {
            return Box::pin(async {
                Err(LlmError::Status {
                    status: 502,
                    retry_after: None,
                    body: "down".to_owned(),
                })
            });
        }
        let chars: usize = (request.messages.iter())
            .map(|message| message.content.chars().count())
            .sum();
        let prompt_tokens = (chars / 4) as u64;
        // A warm-up (one token) writes its token at once.
        let warm_up = request.sampling.max_tokens == Some(1);
        let answer_tokens = if warm_up { 1 } else { 20 };
        let (running, most, takes) = (
            Arc::clone(&self.running),
            Arc::clone(&self.most_at_once),
            if warm_up { Duration::ZERO } else { self.takes },
        );
        Box::pin(async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(takes).await;
            running.fetch_sub(1, Ordering::SeqCst);
            Ok(LlmReply {
                text: "Evening.".to_owned(),
                usage: Some(TokenUsage {
                    prompt_tokens,
                    completion_tokens: answer_tokens,
                    cached_tokens: Some(0),
                }),
                timings: Some(ServerTimings {
                    prompt_tokens,
                    prompt: Duration::from_secs_f64(prompt_tokens as f64 / 20.0),
                    answer_tokens,
                    answer: Duration::from_millis(100 * answer_tokens),
                }),
                ..LlmReply::default()
            })
        })
    }

    fn limits(&self) -> LimitsFuture {
        let slots = self.slots;
        Box::pin(async move {
            slots.map(|slots| ServerLimits {
                context_per_slot: Some(8192),
                slots: Some(slots),
            })
        })
    }
}

fn bridge(server: &Arc<MeasuredServer>, deadline: Duration, concurrency: usize) -> LlmBridge {
    let plugin = LlmPlugin {
        concurrency_per_endpoint: concurrency,
        settings: LlmSettings {
            deadline,
            ..default()
        },
        ..default()
    };
    let endpoint: Arc<dyn LlmBackend> = server.clone();
    LlmBridge::start(vec![endpoint], &plugin)
}

fn request(prompt_chars: usize, deadline: Option<Duration>) -> LlmRequest {
    LlmRequest {
        messages: Arc::new(vec![ChatMessage::user("x".repeat(prompt_chars))]),
        deadline,
        ..LlmRequest::default()
    }
}

fn outcomes(bridge: &mut LlmBridge, count: usize) -> Vec<LlmResponse> {
    let started = Instant::now();
    let mut arrived = Vec::new();
    while arrived.len() < count {
        arrived.extend(bridge.drain());
        assert!(
            started.elapsed() < GIVE_UP,
            "gave up waiting: {} of {count} outcomes arrived",
            arrived.len()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    arrived
}

#[test]
fn a_request_the_server_cannot_answer_by_its_deadline_is_not_sent() {
    let server = MeasuredServer::new(Duration::ZERO, None);
    let mut bridge = bridge(&server, Duration::from_secs(60), 1);
    // Before any answer the speed is unknown, and a request goes whatever its deadline.
    bridge.submit(request(400, Some(Duration::from_secs(2))));
    let first = outcomes(&mut bridge, 1);
    assert!(first[0].result.is_ok(), "{:?}", first[0].result);
    let health = &bridge.endpoint_health()[0];
    assert_eq!(
        (
            health.prompt_tokens_per_second,
            health.answer_tokens_per_second
        ),
        (Some(20.0), Some(10.0))
    );

    // 4,000 characters are 1,000 tokens: 50 s to read, then 2 s to write the usual
    // answer, with 2 s to do it in.
    let narration = bridge.submit(request(4000, Some(Duration::from_secs(2))));
    let skipped = outcomes(&mut bridge, 1);
    assert_eq!(skipped[0].id, narration);
    match &skipped[0].result {
        Err(LlmError::TooSlow { predicted, left }) => {
            assert_eq!(*predicted, Duration::from_secs(52));
            assert!(*left <= Duration::from_secs(2), "{left:?}");
            let said = skipped[0].result.as_ref().unwrap_err().to_string();
            assert!(said.contains("longer deadline"), "{said}");
        }
        other => panic!("expected TooSlow, got {other:?}"),
    }
    assert_eq!(server.sent.load(Ordering::SeqCst), 1, "it was never sent");

    // Without a deadline of its own the same request goes: its deadline is the
    // bridge's, stretched to what the server needs.
    bridge.submit(request(4000, None));
    let waited = outcomes(&mut bridge, 1);
    assert!(waited[0].result.is_ok(), "{:?}", waited[0].result);
    assert_eq!(server.sent.load(Ordering::SeqCst), 2);
}

#[test]
fn waiting_in_the_queue_does_not_count_against_the_bridges_deadline() {
    // One at a time, each answer 50 ms: the last of 12 waits over half a second for
    // its turn, longer than the bridge's deadline of 300 ms, and is answered all the same.
    let server = MeasuredServer::new(Duration::from_millis(50), None);
    let mut bridge = bridge(&server, Duration::from_millis(300), 1);
    for _ in 0..12 {
        bridge.submit(request(40, None));
    }
    let arrived = outcomes(&mut bridge, 12);
    for response in &arrived {
        assert!(response.result.is_ok(), "{:?}", response.result);
    }
    let last = arrived.iter().map(|r| r.latency).max().unwrap_or_default();
    assert!(last > Duration::from_millis(300), "it did wait: {last:?}");
}

#[test]
fn as_many_requests_run_at_once_as_the_server_has_slots() {
    let server = MeasuredServer::new(Duration::from_millis(100), Some(3));
    // Configured for one at a time; the server says it has three slots.
    let mut bridge = bridge(&server, Duration::from_secs(60), 1);
    for _ in 0..9 {
        bridge.submit(request(40, None));
    }
    let arrived = outcomes(&mut bridge, 9);
    assert!(arrived.iter().all(|response| response.result.is_ok()));
    assert_eq!(server.most_at_once.load(Ordering::SeqCst), 3);
}

#[test]
fn a_warm_up_that_measured_only_the_reading_speed_leaves_a_cold_prompt_its_time() {
    // The bridge's deadline is shorter than the server takes to answer a decision.
    let server = MeasuredServer::new(Duration::from_millis(600), None);
    let mut bridge = bridge(&server, Duration::from_millis(300), 1);
    // A warm-up: too few answer tokens to measure the writing speed.
    let mut warm_up = request(400, None);
    warm_up.sampling.max_tokens = Some(1);
    bridge.submit(warm_up);
    assert!(outcomes(&mut bridge, 1)[0].result.is_ok());
    let health = &bridge.endpoint_health()[0];
    assert_eq!(
        (
            health.prompt_tokens_per_second,
            health.answer_tokens_per_second
        ),
        (Some(20.0), None)
    );
    // Its first decision cannot be predicted; its deadline is stretched as before
    // anything was measured.
    bridge.submit(request(4000, None));
    let decided = outcomes(&mut bridge, 1);
    assert!(decided[0].result.is_ok(), "{:?}", decided[0].result);
}

#[test]
fn a_probe_not_sent_as_too_slow_lets_the_next_request_probe() {
    let server = MeasuredServer::new(Duration::ZERO, None);
    let plugin = LlmPlugin {
        concurrency_per_endpoint: 1,
        retry: RetryPolicy {
            max_retries: 0,
            ..default()
        },
        breaker: BreakerSettings {
            failures_to_open: 2,
            open_for: Duration::from_secs(1),
        },
        ..default()
    };
    let endpoint: Arc<dyn LlmBackend> = server.clone();
    let mut bridge = LlmBridge::start(vec![endpoint], &plugin);
    // Its speed measured, then down twice: the breaker opens for a second.
    bridge.submit(request(400, None));
    assert!(outcomes(&mut bridge, 1)[0].result.is_ok());
    server.failing.store(true, Ordering::SeqCst);
    bridge.submit(request(40, None));
    bridge.submit(request(40, None));
    assert!(outcomes(&mut bridge, 2).iter().all(|r| r.result.is_err()));
    server.failing.store(false, Ordering::SeqCst);
    let health = &bridge.endpoint_health()[0];
    assert_eq!(health.breaker, BreakerState::Open);
    std::thread::sleep(plugin.breaker.open_for + Duration::from_millis(100));

    // The first request after the open period is its probe, and too slow to send.
    bridge.submit(request(4000, Some(Duration::from_secs(2))));
    let skipped = outcomes(&mut bridge, 1);
    assert!(
        matches!(skipped[0].result, Err(LlmError::TooSlow { .. })),
        "{:?}",
        skipped[0].result
    );
    // The next probes the server in its place, which answers and closes the breaker.
    bridge.submit(request(40, None));
    let probed = outcomes(&mut bridge, 1);
    assert!(probed[0].result.is_ok(), "{:?}", probed[0].result);
    assert_eq!(bridge.endpoint_health()[0].breaker, BreakerState::Closed);
}
