//! LLM bridge benchmarks: throughput and added latency against plain `reqwest` on a
//! local OpenAI-compatible stub server, and the frame cost of many pending requests.
//!
//! Run with `cargo bench --bench bridge`. Tuned for a small (2-core) machine: the
//! whole run takes about two minutes. Besides criterion's figures it prints, once
//! before the benchmarks, the p50/p99 of 500 sequential requests each way and the
//! throughput of batches run alternately each way (robust to load that comes and goes).
//!
//! How the game thread waits between empty drains matters on two cores, where the
//! stub server, the bridge's thread and the draining thread compete for them:
//! - `bridge_1000` drains spinning on `yield_now`, like the latency benchmarks;
//! - `bridge_1000_frame_drain` drains once a 60 fps frame (16.7 ms), as a game does,
//!   and times each batch to its last outcome's arrival, so the frame's length does
//!   not count;
//! - `bridge_1000_instant_backend` has no HTTP at all: what the bridge itself costs;
//! - `reqwest_1000x4_own_thread` is plain `reqwest` on a thread of its own, drained
//!   like `bridge_1000_frame_drain`: the same hand-over between threads, no bridge;
//! - `openai_backend_1000x4` calls the backend directly, like `reqwest_1000x4`.
//!
//! The stub server runs on the first core and everything else on the second (Linux and
//! Windows; set `LOOM_BENCH_UNPINNED=1` to let the kernel place the threads). Left
//! to itself on a 2-core virtual machine, the kernel often wakes the client's thread
//! on the server's core while the other core idles: a client on a thread of its own
//! (the bridge's, or plain `reqwest`'s) then measured 0.78–0.91 of the same client on
//! the benchmark's thread, from one run to the next; pinned, every way measures the
//! client's own work.
//!
//! Waking the draining thread often costs throughput too, since every wake-up
//! preempts the bridge: a 10 µs sleep (~60 µs with timer slack, ~15,000 wake-ups a
//! second) cost 20–45 %, and the printed figures show a 1 ms sleep (a game at 1,000
//! fps) beside a 60 fps frame. The 10 µs sleep is used only for the second row of the
//! latency percentiles.
//!
//! The figures printed once are skipped under `--profile-time` and as a test.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::http::header;
use axum::routing::post;
use axum::serve::ListenerExt;
use bevy::MinimalPlugins;
use bevy::app::App;
use bevy_loom::llm::{
    BackendChoice, ChatMessage, DeltaSink, LlmBackend, LlmBridge, LlmFuture, LlmPlugin, LlmReply,
    LlmRequest, LlmResponse, LlmSettings, OpenAiBackend, OpenAiSettings, SamplingOptions,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

/// Requests per throughput iteration: at about 30,000 a second, a batch lasts longer
/// than a 60 fps frame, so the few requests slowed at its start (the server's core
/// waking from the idle end of the last frame) weigh little. With batches of 200, the
/// ways that drain once a frame measured 0.80-0.88 of plain `reqwest` run back to back.
const BATCH: usize = 1000;
/// Requests at a time for plain `reqwest`: the bridge's default `concurrency_per_endpoint`.
const CONCURRENCY: usize = 4;
/// Sequential requests each way for the printed percentiles.
const LATENCY_SAMPLES: usize = 500;
/// Rounds of one batch each way, for the printed throughput.
const THROUGHPUT_ROUNDS: usize = 60;
/// Rounds run first and not counted.
const WARM_UP_ROUNDS: usize = 3;
/// Requests in flight for the frame-cost benchmark.
const PENDING: usize = 1000;

/// The stub server's one answer: a small, fixed chat completion.
const COMPLETION: &str = r#"{"id":"chatcmpl-bench","object":"chat.completion","created":0,"model":"local-model","choices":[{"index":0,"message":{"role":"assistant","content":"The innkeeper nods and slides a key across the counter."},"finish_reason":"stop"}],"usage":{"prompt_tokens":24,"completion_tokens":12,"total_tokens":36}}"#;

// ---------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------

/// The stub server, started once and kept for the whole run.
struct Server {
    base_url: String,
    _runtime: tokio::runtime::Runtime,
}

/// An OpenAI-compatible stub on 127.0.0.1, on its own one-worker Tokio runtime on
/// the first core ([`pin_to_core`]).
fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        // The benchmark's thread, first here, and every client thread it starts later.
        machine();
        pin_to_core(1);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .on_thread_start(|| pin_to_core(0))
            .thread_name("bench-stub-server")
            .enable_all()
            .build()
            .expect("the server runtime starts");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("a local port is free");
        let address = listener.local_addr().expect("the listener has an address");
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let router = Router::new().route("/v1/chat/completions", post(completions));
        runtime.spawn(async move { axum::serve(listener, router).await });
        Server {
            base_url: format!("http://{address}/v1"),
            _runtime: runtime,
        }
    })
}

/// Keeps the calling thread, and the threads it starts from now on, on core `index`:
/// the stub server on the first, the client side on the second. Skipped with fewer
/// than two cores, or when `LOOM_BENCH_UNPINNED` is set.
fn pin_to_core(index: usize) {
    if std::env::var_os("LOOM_BENCH_UNPINNED").is_some() {
        return;
    }
    let cores = &machine().1;
    if cores.len() >= 2 {
        core_affinity::set_for_current(cores[index]);
    }
}

/// The machine's core count and cores, read before any thread is pinned (a pinned
/// thread sees only its own core).
fn machine() -> &'static (usize, Vec<core_affinity::CoreId>) {
    static MACHINE: OnceLock<(usize, Vec<core_affinity::CoreId>)> = OnceLock::new();
    MACHINE.get_or_init(|| {
        (
            std::thread::available_parallelism().map_or(0, usize::from),
            core_affinity::get_core_ids().unwrap_or_default(),
        )
    })
}

/// Whether the threads were pinned, for the printed figures.
fn placement() -> &'static str {
    if std::env::var_os("LOOM_BENCH_UNPINNED").is_some() {
        "threads placed by the kernel"
    } else {
        "server on core 0, client side on core 1"
    }
}

/// Reads the request body (so the connection is reused) and answers at once.
async fn completions(body: Bytes) -> ([(header::HeaderName, &'static str); 1], &'static str) {
    black_box(body);
    ([(header::CONTENT_TYPE, "application/json")], COMPLETION)
}

fn messages() -> Vec<ChatMessage> {
    vec![
        ChatMessage::system("You are the innkeeper of the Gilded Loom. Answer in one sentence."),
        ChatMessage::user("The traveller asks for a room for the night."),
    ]
}

/// What the bridge submits.
fn llm_request() -> LlmRequest {
    LlmRequest {
        messages: messages().into(),
        ..LlmRequest::default()
    }
}

/// The JSON body `OpenAiBackend` sends for [`llm_request`] with default sampling.
fn request_body() -> Value {
    json!({
        "model": OpenAiSettings::default().model,
        "messages": messages(),
        "stream": false,
    })
}

/// A backend for the stub server.
fn openai_backend() -> OpenAiBackend {
    OpenAiBackend::new(OpenAiSettings {
        base_url: server().base_url.clone(),
        ..OpenAiSettings::default()
    })
    .expect("the OpenAI backend builds")
}

/// A bridge over the stub server, with the crate's default concurrency (4).
fn bridge() -> LlmBridge {
    LlmBridge::new(
        Arc::new(openai_backend()),
        Duration::from_secs(10),
        SamplingOptions::default(),
    )
}

/// The same client the backend builds, for the plain-`reqwest` side.
fn plain_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(OpenAiSettings::default().timeout)
        .build()
        .expect("the HTTP client builds")
}

fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the client runtime starts")
}

fn chat_url() -> String {
    format!("{}/chat/completions", server().base_url)
}

/// One plain request: send, read the body as JSON, take the answer's text.
async fn plain_request(client: &reqwest::Client, url: &str, body: &Value) {
    let value: Value = client
        .post(url)
        .json(body)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .expect("the stub answers")
        .json()
        .await
        .expect("the stub answers JSON");
    let text = value
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .expect("the stub answers a chat completion");
    black_box(text);
}

/// `n` plain requests, [`CONCURRENCY`] at a time (that many worker loops, joined).
async fn plain_batch(client: &reqwest::Client, url: &str, body: &Value, n: usize) {
    let next = AtomicUsize::new(0);
    let worker = || async {
        while next.fetch_add(1, Ordering::Relaxed) < n {
            plain_request(client, url, body).await;
        }
    };
    let (first, second) = (
        futures_lite::future::zip(worker(), worker()),
        futures_lite::future::zip(worker(), worker()),
    );
    const _: () = assert!(CONCURRENCY == 4, "the join above runs four workers");
    futures_lite::future::zip(first, second).await;
}

/// `n` requests straight through [`OpenAiBackend`], no bridge, [`CONCURRENCY`] at a
/// time like [`plain_batch`]: what the backend adds to plain `reqwest`.
async fn backend_batch(backend: &OpenAiBackend, request: &LlmRequest, n: usize) {
    let next = AtomicUsize::new(0);
    let worker = || async {
        while next.fetch_add(1, Ordering::Relaxed) < n {
            let reply = backend
                .complete(request, DeltaSink::discard())
                .await
                .expect("the stub answers");
            black_box(reply);
        }
    };
    futures_lite::future::zip(
        futures_lite::future::zip(worker(), worker()),
        futures_lite::future::zip(worker(), worker()),
    )
    .await;
}

/// Plain `reqwest` on a thread of its own, like the bridge's: the game thread asks for
/// a batch and drains each answer from a channel as it comes.
struct PlainThread {
    batches: std::sync::mpsc::Sender<usize>,
    answers: std::sync::mpsc::Receiver<Instant>,
}

impl PlainThread {
    fn start() -> Self {
        let (batches, batch_receiver) = std::sync::mpsc::channel::<usize>();
        let (answer_sender, answers) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("plain-reqwest".to_owned())
            .spawn(move || {
                let runtime = current_thread_runtime();
                let client = plain_client();
                let (url, body) = (chat_url(), request_body());
                for n in batch_receiver {
                    let next = AtomicUsize::new(0);
                    let worker = || async {
                        while next.fetch_add(1, Ordering::Relaxed) < n {
                            plain_request(&client, &url, &body).await;
                            let _ = answer_sender.send(Instant::now());
                        }
                    };
                    runtime.block_on(futures_lite::future::zip(
                        futures_lite::future::zip(worker(), worker()),
                        futures_lite::future::zip(worker(), worker()),
                    ));
                }
            })
            .expect("the plain reqwest thread starts");
        Self { batches, answers }
    }

    /// `n` requests, from asking to the last answer's arrival, draining as `wait` says.
    fn batch(&self, n: usize, wait: Wait) -> Duration {
        let start = Instant::now();
        self.batches.send(n).expect("the plain reqwest thread runs");
        let mut last = start;
        let mut done = 0;
        while done < n {
            let before = done;
            for arrived in self.answers.try_iter() {
                last = last.max(arrived);
                done += 1;
            }
            if done == before {
                wait.wait();
            }
        }
        last - start
    }
}

fn check(response: &LlmResponse) {
    if let Err(error) = &response.result {
        panic!("the bridge failed a request: {error}");
    }
    black_box(response);
}

/// What the game thread does between empty drains.
#[derive(Clone, Copy, Debug)]
enum Wait {
    /// `std::thread::yield_now()`: spins, lowest latency, takes a core.
    Yield,
    /// A sleep; Linux's default 50 µs timer slack comes on top.
    Sleep(Duration),
}

/// A 10 µs sleep: ~60 µs in practice, so ~15,000 wake-ups a second.
const SHORT_SLEEP: Wait = Wait::Sleep(Duration::from_micros(10));
/// A 60 fps frame: a game draining once a frame.
const FRAME_SLEEP: Wait = Wait::Sleep(Duration::from_micros(16_667));
/// A 1 ms sleep: a game at 1,000 fps, for comparison.
const MILLISECOND_SLEEP: Wait = Wait::Sleep(Duration::from_millis(1));

impl Wait {
    fn wait(self) {
        match self {
            Self::Yield => std::thread::yield_now(),
            Self::Sleep(duration) => std::thread::sleep(duration),
        }
    }
}

/// How long a batch took.
struct BatchTimes {
    /// From the first submit until the last outcome was drained.
    drained: Duration,
    /// From the first submit until the last outcome reached the bridge's channel
    /// (each outcome's own `latency` after its submit), whatever the drainer's cadence.
    arrived: Duration,
}

/// Submits `n` requests and drains until all `n` outcomes arrived.
fn bridge_batch(bridge: &mut LlmBridge, request: &LlmRequest, n: usize, wait: Wait) -> BatchTimes {
    let start = Instant::now();
    // Taken just after each submit, so at or after the bridge's own timestamp.
    let mut submitted = Vec::with_capacity(n);
    let first = bridge.submit(request.clone());
    submitted.push(Instant::now());
    for _ in 1..n {
        bridge.submit(request.clone());
        submitted.push(Instant::now());
    }
    let mut arrived = start;
    let mut done = 0;
    while done < n {
        let outcomes = bridge.drain();
        if outcomes.is_empty() {
            wait.wait();
            continue;
        }
        for response in &outcomes {
            check(response);
            let index = usize::try_from(response.id.0 - first.0).expect("a small index");
            arrived = arrived.max(submitted[index] + response.latency);
        }
        done += outcomes.len();
    }
    BatchTimes {
        drained: start.elapsed(),
        arrived: arrived - start,
    }
}

/// One request through the bridge, from submit to its outcome being drained.
fn bridge_single(bridge: &mut LlmBridge, request: &LlmRequest, wait: Wait) {
    let id = bridge.submit(request.clone());
    loop {
        let outcomes = bridge.drain();
        if let Some(response) = outcomes.iter().find(|r| r.id == id) {
            check(response);
            return;
        }
        assert!(outcomes.is_empty(), "only one request is in flight");
        wait.wait();
    }
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[Duration], percent: usize) -> Duration {
    let rank = (percent * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// Whether to print the figures taken once: under `cargo bench` (`--bench`), but not
/// under `--profile-time`, so a profile holds only the benchmark asked for, nor as a
/// test (`cargo test --benches`).
fn print_figures() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|arg| arg == "--bench") && !args.iter().any(|arg| arg == "--profile-time")
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

// ---------------------------------------------------------------------------
// 0. Figures printed once: latency percentiles, interleaved throughput
// ---------------------------------------------------------------------------

/// 500 sequential requests each way, interleaved so drift hits both alike; prints
/// p50/p99 of each and the bridge's added p99, for both ways of waiting.
fn print_latency_percentiles(_: &mut Criterion) {
    if !print_figures() {
        return;
    }
    let runtime = current_thread_runtime();
    let client = plain_client();
    let (url, body) = (chat_url(), request_body());
    let request = llm_request();
    let cores = machine().0;
    println!(
        "\nbridge/added_latency percentiles ({LATENCY_SAMPLES} sequential requests each way, {cores} cores, {}):",
        placement()
    );
    for wait in [Wait::Yield, SHORT_SLEEP] {
        let mut bridge = bridge();
        for _ in 0..50 {
            runtime.block_on(plain_request(&client, &url, &body));
            bridge_single(&mut bridge, &request, wait);
        }
        let mut plain = Vec::with_capacity(LATENCY_SAMPLES);
        let mut bridged = Vec::with_capacity(LATENCY_SAMPLES);
        for _ in 0..LATENCY_SAMPLES {
            let start = Instant::now();
            runtime.block_on(plain_request(&client, &url, &body));
            plain.push(start.elapsed());
            let start = Instant::now();
            bridge_single(&mut bridge, &request, wait);
            bridged.push(start.elapsed());
        }
        plain.sort_unstable();
        bridged.sort_unstable();
        let (plain_p50, plain_p99) = (percentile(&plain, 50), percentile(&plain, 99));
        let (bridge_p50, bridge_p99) = (percentile(&bridged, 50), percentile(&bridged, 99));
        println!(
            "  drain wait {wait:?}: reqwest p50 {:8.1} µs  p99 {:8.1} µs | bridge p50 {:8.1} µs  p99 {:8.1} µs | added p50 {:+8.1} µs  p99 {:+8.1} µs",
            micros(plain_p50),
            micros(plain_p99),
            micros(bridge_p50),
            micros(bridge_p99),
            micros(bridge_p50) - micros(plain_p50),
            micros(bridge_p99) - micros(plain_p99),
        );
    }
    println!();
}

/// CPU time and time waiting for a CPU, per thread name, from Linux's
/// `/proc/self/task/*/schedstat`; empty elsewhere.
fn thread_times() -> BTreeMap<String, (u64, u64, u64)> {
    let mut times = BTreeMap::new();
    let main = std::process::id().to_string();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return times;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let name = if task.file_name().to_string_lossy() == main {
            "bench thread (drains)".to_owned()
        } else {
            std::fs::read_to_string(path.join("comm"))
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        let stat = std::fs::read_to_string(path.join("schedstat")).unwrap_or_default();
        let mut fields = stat
            .split_whitespace()
            .map(|f| f.parse::<u64>().unwrap_or(0));
        let status = std::fs::read_to_string(path.join("status")).unwrap_or_default();
        let switches = status
            .lines()
            .filter(|line| line.contains("ctxt_switches"))
            .filter_map(|line| line.split_whitespace().last()?.parse::<u64>().ok())
            .sum::<u64>();
        if let (Some(cpu), Some(waiting)) = (fields.next(), fields.next()) {
            let entry = times.entry(name).or_insert((0, 0, 0));
            entry.0 += cpu;
            entry.1 += waiting;
            entry.2 += switches;
        }
    }
    times
}

/// One way of running batches, for the interleaved figures.
struct Way<'a> {
    name: &'static str,
    batch: Box<dyn FnMut() -> Duration + 'a>,
    batches: Vec<Duration>,
    /// Per round: plain `reqwest`'s batch time over this way's, the same round.
    ratios: Vec<f64>,
    /// Nanoseconds on a CPU and waiting for one, and context switches, per thread,
    /// over all batches.
    threads: BTreeMap<String, (u64, u64, u64)>,
}

impl<'a> Way<'a> {
    fn new(name: &'static str, batch: impl FnMut() -> Duration + 'a) -> Self {
        Self {
            name,
            batch: Box::new(batch),
            batches: Vec::with_capacity(THROUGHPUT_ROUNDS),
            ratios: Vec::with_capacity(THROUGHPUT_ROUNDS),
            threads: BTreeMap::new(),
        }
    }

    fn run(&mut self) {
        let before = thread_times();
        let took = (self.batch)();
        self.batches.push(took);
        for (name, (cpu, waiting, switches)) in thread_times() {
            let (cpu_before, waiting_before, switches_before) =
                before.get(&name).copied().unwrap_or((0, 0, 0));
            let entry = self.threads.entry(name).or_insert((0, 0, 0));
            entry.0 += cpu.saturating_sub(cpu_before);
            entry.1 += waiting.saturating_sub(waiting_before);
            entry.2 += switches.saturating_sub(switches_before);
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    values[values.len() / 2]
}

/// [`THROUGHPUT_ROUNDS`] rounds of one batch of [`BATCH`] each way, the order turning
/// each round, so a load that comes and goes hits every way alike. Prints each way's
/// median rate, the median of its per-round ratios to plain `reqwest` (the robust
/// figure on a shared machine), and each thread's CPU time per request.
fn print_interleaved_throughput(_: &mut Criterion) {
    if !print_figures() {
        return;
    }
    let runtime = current_thread_runtime();
    let client = plain_client();
    let (url, body) = (chat_url(), request_body());
    let request = llm_request();
    let (mut spinning, mut gentle, mut hasty) = (bridge(), bridge(), bridge());
    let backend = openai_backend();
    let threaded = PlainThread::start();
    let mut ways = [
        Way::new("reqwest, 4 at a time", || {
            let start = Instant::now();
            runtime.block_on(plain_batch(&client, &url, &body, BATCH));
            start.elapsed()
        }),
        Way::new("reqwest on its own thread, drained at 60 fps", || {
            threaded.batch(BATCH, FRAME_SLEEP)
        }),
        Way::new("OpenAiBackend alone, 4 at a time", || {
            let start = Instant::now();
            runtime.block_on(backend_batch(&backend, &request, BATCH));
            start.elapsed()
        }),
        Way::new("bridge, drained with yield_now", || {
            bridge_batch(&mut spinning, &request, BATCH, Wait::Yield).drained
        }),
        Way::new("bridge, drained at 60 fps, to last arrival", || {
            bridge_batch(&mut gentle, &request, BATCH, FRAME_SLEEP).arrived
        }),
        Way::new("bridge, drained every 1 ms, to last arrival", || {
            bridge_batch(&mut hasty, &request, BATCH, MILLISECOND_SLEEP).arrived
        }),
    ];
    for _ in 0..WARM_UP_ROUNDS {
        for way in &mut ways {
            (way.batch)();
        }
    }
    for round in 0..THROUGHPUT_ROUNDS {
        let count = ways.len();
        for offset in 0..count {
            ways[(round + offset) % count].run();
        }
        let plain = ways[0].batches[round].as_secs_f64();
        for way in &mut ways {
            way.ratios.push(plain / way.batches[round].as_secs_f64());
        }
    }
    let cores = machine().0;
    println!(
        "bridge/throughput_vs_reqwest interleaved ({THROUGHPUT_ROUNDS} rounds of {BATCH} requests each way, {cores} cores, {}; medians):",
        placement()
    );
    let requests = (THROUGHPUT_ROUNDS * BATCH) as f64;
    for way in &mut ways {
        let mut rates: Vec<f64> = way
            .batches
            .iter()
            .map(|batch| BATCH as f64 / batch.as_secs_f64())
            .collect();
        println!(
            "  {:46} {:8.0} req/s  {:.3} of reqwest (per-round ratio)",
            way.name,
            median(&mut rates),
            median(&mut way.ratios),
        );
        for (thread, (cpu, waiting, switches)) in &way.threads {
            if *cpu as f64 / requests >= 100.0 {
                println!(
                    "      {thread:24} on CPU {:5.1} µs/req, waiting for a CPU {:5.1} µs/req, {:4.2} context switches/req",
                    *cpu as f64 / requests / 1e3,
                    *waiting as f64 / requests / 1e3,
                    *switches as f64 / requests,
                );
            }
        }
    }
    println!();
}

// ---------------------------------------------------------------------------
// 1. bridge/throughput_vs_reqwest
// ---------------------------------------------------------------------------

/// Answers at once, without a server: what the bridge itself costs a request.
struct InstantBackend;

impl LlmBackend for InstantBackend {
    fn describe(&self) -> String {
        "instant (benchmark)".to_owned()
    }

    fn complete(&self, _request: &LlmRequest, _deltas: DeltaSink) -> LlmFuture {
        Box::pin(std::future::ready(Ok(LlmReply::text(
            "The innkeeper nods and slides a key across the counter.",
        ))))
    }
}

/// Criterion's total over `iterations` batches, timed as `pick` says.
fn timed_batches(
    iterations: u64,
    mut batch: impl FnMut() -> BatchTimes,
    pick: fn(BatchTimes) -> Duration,
) -> Duration {
    (0..iterations).map(|_| pick(batch())).sum()
}

fn throughput_vs_reqwest(c: &mut Criterion) {
    let runtime = current_thread_runtime();
    let client = plain_client();
    let (url, body) = (chat_url(), request_body());
    let request = llm_request();
    let (mut spinning, mut gentle) = (bridge(), bridge());
    let backend = openai_backend();
    let threaded = PlainThread::start();
    let mut instant = LlmBridge::new(
        Arc::new(InstantBackend),
        Duration::from_secs(10),
        SamplingOptions::default(),
    );

    let mut group = c.benchmark_group("bridge/throughput_vs_reqwest");
    group
        .throughput(Throughput::Elements(BATCH as u64))
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    group.bench_function("reqwest_1000x4", |b| {
        b.iter(|| runtime.block_on(plain_batch(&client, &url, &body, BATCH)));
    });
    // Plain `reqwest` on a thread of its own, drained like `bridge_1000_frame_drain`.
    group.bench_function("reqwest_1000x4_own_thread", |b| {
        b.iter_custom(|iterations| {
            (0..iterations)
                .map(|_| threaded.batch(BATCH, FRAME_SLEEP))
                .sum()
        });
    });
    // The backend without the bridge, on the benchmark's thread like `reqwest_1000x4`.
    group.bench_function("openai_backend_1000x4", |b| {
        b.iter(|| runtime.block_on(backend_batch(&backend, &request, BATCH)));
    });
    // Submit to last outcome drained, the drainer spinning on `yield_now`.
    group.bench_function("bridge_1000", |b| {
        b.iter_custom(|iterations| {
            timed_batches(
                iterations,
                || bridge_batch(&mut spinning, &request, BATCH, Wait::Yield),
                |times| times.drained,
            )
        });
    });
    // Submit to last outcome arrived, the drainer draining once a 60 fps frame.
    group.bench_function("bridge_1000_frame_drain", |b| {
        b.iter_custom(|iterations| {
            timed_batches(
                iterations,
                || bridge_batch(&mut gentle, &request, BATCH, FRAME_SLEEP),
                |times| times.arrived,
            )
        });
    });
    // No HTTP at all: the bridge's own cost per request.
    group.bench_function("bridge_1000_instant_backend", |b| {
        b.iter_custom(|iterations| {
            timed_batches(
                iterations,
                || bridge_batch(&mut instant, &request, BATCH, Wait::Yield),
                |times| times.drained,
            )
        });
    });
    group.finish();
}

// ---------------------------------------------------------------------------
// 2. bridge/added_latency
// ---------------------------------------------------------------------------

fn added_latency(c: &mut Criterion) {
    let runtime = current_thread_runtime();
    let client = plain_client();
    let (url, body) = (chat_url(), request_body());
    let request = llm_request();
    let mut bridge = bridge();

    let mut group = c.benchmark_group("bridge/added_latency");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("reqwest_single", |b| {
        b.iter(|| runtime.block_on(plain_request(&client, &url, &body)));
    });
    group.bench_function("bridge_single", |b| {
        b.iter(|| bridge_single(&mut bridge, &request, Wait::Yield));
    });
    group.finish();
}

// ---------------------------------------------------------------------------
// 3. bridge/update_with_1000_in_flight
// ---------------------------------------------------------------------------

/// A backend whose answers never come.
struct NeverBackend;

impl LlmBackend for NeverBackend {
    fn describe(&self) -> String {
        "never (benchmark)".to_owned()
    }

    fn complete(&self, _request: &LlmRequest, _deltas: DeltaSink) -> LlmFuture {
        Box::pin(std::future::pending())
    }
}

fn never_app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        LlmPlugin {
            backend: BackendChoice::Custom(Arc::new(NeverBackend)),
            concurrency_per_endpoint: PENDING,
            settings: LlmSettings {
                deadline: Duration::from_secs(3600),
                ..Default::default()
            },
            ..Default::default()
        },
    ));
    app.finish();
    app.cleanup();
    app.update();
    app
}

fn update_with_pending(c: &mut Criterion) {
    let mut idle = never_app();
    let mut busy = never_app();
    {
        let mut bridge = busy.world_mut().resource_mut::<LlmBridge>();
        for _ in 0..PENDING {
            bridge.submit(llm_request());
        }
        bridge.flush();
    }
    // Let the bridge's thread dispatch all of them before measuring.
    let start = Instant::now();
    while busy.world().resource::<LlmBridge>().running() < PENDING {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the bridge dispatches {PENDING} requests"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    busy.update();

    let mut group = c.benchmark_group("bridge/update_with_1000_in_flight");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.bench_function("0_in_flight", |b| b.iter(|| idle.update()));
    group.bench_function("1000_in_flight", |b| b.iter(|| busy.update()));
    group.finish();

    let bridge = busy.world().resource::<LlmBridge>();
    assert_eq!(
        (bridge.in_flight(), bridge.running()),
        (PENDING, PENDING),
        "every request stayed pending"
    );
}

criterion_group!(
    benches,
    print_latency_percentiles,
    print_interleaved_throughput,
    throughput_vs_reqwest,
    added_latency,
    update_with_pending
);
criterion_main!(benches);
