//! Streaming in both dialects — OpenAI's server-sent events and Ollama's NDJSON —
//! against servers on 127.0.0.1: pieces arrive in order, then exactly one outcome.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use bevy::prelude::*;
use bevy_loom::llm::{
    ChatMessage, LlmBackend, LlmBridge, LlmDelta, LlmError, LlmRequest, LlmResponse, OllamaBackend,
    OllamaSettings, OpenAiBackend, OpenAiSettings, ResponseLimits, SamplingOptions, TokenUsage,
};
use bevy_loom::prelude::*;
use futures_lite::StreamExt;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use crate::support::serve;

/// Request bodies the server received.
type Seen = Arc<Mutex<Vec<Value>>>;

/// A server that records each JSON body and answers with `pieces`, a short pause
/// between each, so they cross the wire separately.
fn streaming_server(pieces: Vec<String>) -> (Runtime, String, Seen) {
    let seen: Seen = Arc::default();
    let router = Router::new()
        .fallback(
            |State((seen, pieces)): State<(Seen, Vec<String>)>, body: Bytes| async move {
                if let Ok(value) = serde_json::from_slice(&body) {
                    seen.lock().expect("the record").push(value);
                }
                let chunks =
                    futures_lite::stream::unfold(pieces.into_iter(), |mut rest| async move {
                        let piece = rest.next()?;
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        Some((Ok::<_, std::io::Error>(Bytes::from(piece)), rest))
                    });
                Body::from_stream(chunks)
            },
        )
        .with_state((seen.clone(), pieces));
    let (runtime, root) = serve(router);
    (runtime, root, seen)
}

fn sse(chunks: &[Value], done: bool) -> Vec<String> {
    let mut lines: Vec<String> = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    if done {
        lines.push("data: [DONE]\n\n".to_owned());
    }
    lines
}

fn openai_chunk(text: &str) -> Value {
    json!({ "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": { "content": text } }] })
}

fn ndjson(lines: &[Value]) -> Vec<String> {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn ollama_line(text: &str) -> Value {
    json!({ "model": "tiny", "message": { "role": "assistant", "content": text }, "done": false })
}

fn request(stream: bool) -> LlmRequest {
    LlmRequest {
        messages: vec![ChatMessage::user("Greet the traveler.")].into(),
        schema: Some(
            json!({ "type": "object", "properties": { "speech": { "type": "string" } } }).into(),
        ),
        sampling: SamplingOptions {
            max_tokens: Some(64),
            stop: vec!["\n\n".into()],
            ..default()
        },
        stream,
        ..default()
    }
}

/// Submits one request and collects its pieces and its outcomes until one arrives.
fn run(backend: impl LlmBackend, request: LlmRequest) -> (Vec<LlmDelta>, Vec<LlmResponse>) {
    let mut bridge = LlmBridge::new(
        Arc::new(backend),
        Duration::from_secs(10),
        SamplingOptions::default(),
    );
    let id = bridge.submit(request);
    let started = Instant::now();
    let (mut deltas, mut done) = (Vec::new(), Vec::new());
    while done.is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "gave up waiting for the outcome"
        );
        std::thread::sleep(Duration::from_millis(1));
        done.extend(bridge.drain());
        deltas.extend(bridge.drain_deltas());
    }
    // Exactly one: once the bridge is idle nothing more can come, and an outcome sent
    // just as it went idle is in the next drain.
    while !bridge.is_idle() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "gave up waiting for the bridge to be idle"
        );
        std::thread::sleep(Duration::from_millis(1));
        done.extend(bridge.drain());
    }
    done.extend(bridge.drain());
    assert_eq!(done.len(), 1, "exactly one outcome: {done:?}");
    assert_eq!(done[0].id, id);
    assert!(deltas.iter().all(|d| d.id == id));
    (deltas, done)
}

fn openai(root: &str) -> OpenAiBackend {
    OpenAiBackend::new(OpenAiSettings {
        base_url: format!("{root}/v1"),
        model: "tiny".into(),
        ..default()
    })
    .expect("a backend")
}

fn ollama(root: &str) -> OllamaBackend {
    OllamaBackend::new(OllamaSettings {
        base_url: root.to_owned(),
        model: "tiny".into(),
        keep_alive: Some("5m".into()),
        ..default()
    })
    .expect("a backend")
}

#[test]
fn openai_server_sent_events_arrive_in_order_then_one_outcome() {
    let mut chunks: Vec<Value> = ["Wel", "come, ", "traveler."].map(openai_chunk).to_vec();
    chunks.push(json!({
        "choices": [],
        "usage": { "prompt_tokens": 12, "completion_tokens": 3 },
        // llama.cpp's, on the last chunk.
        "timings": { "prompt_n": 12, "prompt_ms": 60.0, "predicted_n": 3, "predicted_ms": 90.0 }
    }));
    let (_server, root, seen) = streaming_server(sse(&chunks, true));
    let (deltas, done) = run(openai(&root), request(true));
    let pieces: Vec<&str> = deltas.iter().map(|d| d.text.as_str()).collect();
    assert_eq!(pieces, ["Wel", "come, ", "traveler."]);
    let reply = done[0].result.as_ref().expect("an answer");
    assert_eq!(reply.text, "Welcome, traveler.");
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            prompt_tokens: 12,
            completion_tokens: 3,
            ..TokenUsage::default()
        })
    );
    let timings = reply.timings.expect("the server's timings");
    assert_eq!(
        (timings.prompt_tokens, timings.prompt, timings.answer_tokens),
        (12, Duration::from_millis(60), 3)
    );
    assert!(
        done[0]
            .first_token
            .is_some_and(|first| first <= done[0].latency)
    );
    let body = &seen.lock().expect("the record")[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stop"], json!(["\n\n"]));
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["properties"]["speech"]["type"],
        "string"
    );
}

#[test]
fn ollama_ndjson_arrives_in_order_then_one_outcome() {
    let mut lines: Vec<Value> = ["Wel", "come, ", "traveler."].map(ollama_line).to_vec();
    lines.push(
        json!({ "model": "tiny", "message": { "role": "assistant", "content": "" }, "done": true,
                       "prompt_eval_count": 9, "eval_count": 4 }),
    );
    let (_server, root, seen) = streaming_server(ndjson(&lines));
    let (deltas, done) = run(ollama(&root), request(true));
    let pieces: Vec<&str> = deltas.iter().map(|d| d.text.as_str()).collect();
    assert_eq!(pieces, ["Wel", "come, ", "traveler."]);
    let reply = done[0].result.as_ref().expect("an answer");
    assert_eq!(reply.text, "Welcome, traveler.");
    assert_eq!(
        reply.usage,
        Some(TokenUsage {
            prompt_tokens: 9,
            completion_tokens: 4,
            ..TokenUsage::default()
        })
    );
    let body = &seen.lock().expect("the record")[0];
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["format"]["properties"]["speech"]["type"], "string",
        "Ollama takes the schema as `format`"
    );
    assert_eq!(body["options"]["num_predict"], 64);
    assert_eq!(body["options"]["stop"], json!(["\n\n"]));
    assert_eq!(body["keep_alive"], "5m");
}

#[test]
fn ollama_without_streaming_answers_whole() {
    let answer = json!({ "model": "tiny", "message": { "role": "assistant", "content": "Evening." }, "done": true,
                         "prompt_eval_count": 5, "eval_count": 2 });
    let (_server, root, _) = streaming_server(vec![answer.to_string()]);
    let (deltas, done) = run(ollama(&root), request(false));
    assert!(deltas.is_empty());
    assert_eq!(
        done[0].result.as_ref().map(|r| r.text.as_str()),
        Ok("Evening.")
    );
}

#[test]
fn a_stream_cut_short_fails_once_in_both_dialects() {
    let (_openai_server, openai_root, _) = streaming_server(sse(&[openai_chunk("Wel")], false));
    let (_, done) = run(openai(&openai_root), request(true));
    assert!(
        matches!(&done[0].result, Err(LlmError::InvalidResponse(m)) if m.contains("[DONE]")),
        "{done:?}"
    );

    let (_ollama_server, ollama_root, _) = streaming_server(ndjson(&[ollama_line("Wel")]));
    let (_, done) = run(ollama(&ollama_root), request(true));
    assert!(
        matches!(&done[0].result, Err(LlmError::InvalidResponse(m)) if m.contains("done")),
        "{done:?}"
    );
}

#[test]
fn an_ollama_error_line_is_reported() {
    let (_server, root, _) =
        streaming_server(ndjson(&[json!({ "error": "model 'tiny' not found" })]));
    let (_, done) = run(ollama(&root), request(true));
    assert!(
        matches!(&done[0].result, Err(LlmError::InvalidResponse(m)) if m.contains("model 'tiny' not found"))
    );
}

#[test]
fn a_llama_cpp_error_event_mid_stream_is_reported() {
    // llama.cpp's server (before late 2025) sends an error as an `error:` event, then
    // `data: [DONE]`.
    let error = json!({ "code": 400, "type": "exceed_context_size_error",
        "message": "the request exceeds the available context size, try increasing it" });
    let mut pieces = sse(&[openai_chunk("Wel")], false);
    pieces.push(format!("error: {error}\n\n"));
    pieces.push("data: [DONE]\n\n".to_owned());
    let (_server, root, _) = streaming_server(pieces);
    let (_, done) = run(openai(&root), request(true));
    assert!(
        matches!(&done[0].result, Err(LlmError::ContextExceeded { .. })),
        "{done:?}"
    );
}

/// Pieces reach the ECS as `LlmDelta` messages before the `LlmResponse`, while frames keep running.
#[test]
fn the_app_receives_pieces_then_the_outcome_while_frames_run() {
    #[derive(Resource, Default)]
    struct Heard(Vec<String>);
    fn listen(
        mut heard: ResMut<Heard>,
        mut deltas: MessageReader<LlmDelta>,
        mut done: MessageReader<LlmResponse>,
    ) {
        heard
            .0
            .extend(deltas.read().map(|d| format!("delta:{}", d.text)));
        heard.0.extend(done.read().map(|r| {
            format!(
                "done:{}",
                r.result.as_ref().map_or("error", |r| r.text.as_str())
            )
        }));
    }
    let lines = ndjson(&[
        ollama_line("Wel"),
        ollama_line("come."),
        json!({ "done": true, "message": { "content": "" } }),
    ]);
    let (_server, root, _) = streaming_server(lines);
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        LlmPlugin {
            backend: BackendChoice::Ollama(OllamaSettings {
                base_url: root,
                ..default()
            }),
            ..default()
        },
    ))
    .init_resource::<Heard>()
    .add_systems(Update, listen.after(LoomSystems::Receive));
    app.finish();
    app.cleanup();
    app.world_mut()
        .resource_mut::<LlmBridge>()
        .submit(request(true));
    let (started, mut frames) = (Instant::now(), 0u32);
    while !app
        .world()
        .resource::<Heard>()
        .0
        .iter()
        .any(|h| h.starts_with("done:"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "gave up waiting for the outcome"
        );
        app.update();
        frames += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        app.world().resource::<Heard>().0,
        ["delta:Wel", "delta:come.", "done:Welcome."]
    );
    assert!(frames > 1, "frames ran while the answer streamed in");
}

/// A server that answers every request with `status` and a body that never ends,
/// `prefix` then `filler` over and over.
fn endless_server(
    status: axum::http::StatusCode,
    prefix: &'static str,
    filler: &'static str,
) -> (Runtime, String) {
    let router = Router::new().fallback(move || async move {
        let chunks = futures_lite::stream::once(Bytes::from(prefix))
            .chain(futures_lite::stream::repeat_with(move || {
                Bytes::from(filler.repeat(64 * 1024 / filler.len()))
            }))
            .map(Ok::<_, std::io::Error>);
        (status, Body::from_stream(chunks))
    });
    serve(router)
}

fn limited_openai(root: &str, limits: ResponseLimits) -> OpenAiBackend {
    OpenAiBackend::new(OpenAiSettings {
        base_url: format!("{root}/v1"),
        model: "tiny".into(),
        limits,
        ..default()
    })
    .expect("a backend")
}

fn small_limits() -> ResponseLimits {
    ResponseLimits {
        body_bytes: 1 << 20,
        line_bytes: 128 << 10,
        error_body_bytes: 1 << 10,
    }
}

#[test]
fn a_streamed_line_that_never_ends_fails_at_the_line_limit() {
    let (_server, root) = endless_server(axum::http::StatusCode::OK, "data: ", "a");
    let (_, done) = run(limited_openai(&root, small_limits()), request(true));
    let result = &done[0].result;
    assert!(
        matches!(result, Err(LlmError::TooLarge { setting: "line_bytes", limit, .. }) if *limit == 128 << 10),
        "{result:?}"
    );
    let message = result.clone().expect_err("too large").to_string();
    assert!(message.contains("limits.line_bytes"), "{message}");
}

#[test]
fn a_stream_that_never_ends_fails_at_the_body_limit() {
    let line = "data: {\"choices\":[{\"delta\":{\"content\":\"la \"}}]}\n\n";
    let (_server, root) = endless_server(axum::http::StatusCode::OK, "", line);
    let (deltas, done) = run(limited_openai(&root, small_limits()), request(true));
    let result = &done[0].result;
    assert!(
        matches!(
            result,
            Err(LlmError::TooLarge {
                setting: "body_bytes",
                ..
            })
        ),
        "{result:?}"
    );
    assert!(
        !deltas.is_empty(),
        "the pieces before the limit reached the game"
    );
}

#[test]
fn an_answer_larger_than_the_body_limit_fails_with_or_without_a_length() {
    let text = "la ".repeat(700_000);
    let body =
        json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": text } }] })
            .to_string();
    let announced = body.clone();
    let (_with_length, with_length) = serve(Router::new().fallback(move || {
        let body = announced.clone();
        async move {
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                body,
            )
        }
    }));
    let (_chunked, chunked) = serve(Router::new().fallback(move || {
        let chunks: Vec<Result<Bytes, std::io::Error>> = body
            .as_bytes()
            .chunks(64 << 10)
            .map(|chunk| Ok(Bytes::copy_from_slice(chunk)))
            .collect();
        async move { Body::from_stream(futures_lite::stream::iter(chunks)) }
    }));
    for root in [with_length, chunked] {
        let (_, done) = run(limited_openai(&root, small_limits()), request(false));
        let result = &done[0].result;
        assert!(
            matches!(result, Err(LlmError::TooLarge { setting: "body_bytes", limit, .. }) if *limit == 1 << 20),
            "{root}: {result:?}"
        );
    }
}

/// A server on 127.0.0.1 that reads each request's head and answers every one with
/// `answer`, as raw bytes, then closes the connection: an answer no well-behaved
/// server library would send. Dropping the runtime stops it.
fn raw_server(answer: &'static [u8]) -> (Runtime, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (runtime, listener, root) = crate::support::local_listener();
    runtime.spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            // The request's head and body arrive before the client reads.
            let mut request = vec![0; 64 << 10];
            let _ = stream.read(&mut request).await;
            let _ = stream.write_all(answer).await;
            let _ = stream.shutdown().await;
        }
    });
    (runtime, root)
}

#[test]
fn an_announced_length_past_any_memory_is_not_reserved() {
    // With no limit of its own, the game takes the server's word for nothing: the
    // answer that never came is an error, not an allocation of 8 EiB.
    let (_server, root) = raw_server(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
          Content-Length: 9223372036854775808\r\n\r\n{\"choices\"",
    );
    let limits = ResponseLimits {
        body_bytes: usize::MAX,
        ..small_limits()
    };
    let (_, done) = run(limited_openai(&root, limits), request(false));
    let result = &done[0].result;
    assert!(matches!(result, Err(LlmError::BrokeOff(_))), "{result:?}");
}

#[test]
fn only_the_start_of_an_error_body_is_read() {
    let (_server, root) = endless_server(
        axum::http::StatusCode::BAD_REQUEST,
        "the model fell over: ",
        "x",
    );
    let limits = ResponseLimits {
        error_body_bytes: 100,
        ..small_limits()
    };
    let (_, done) = run(limited_openai(&root, limits), request(false));
    match &done[0].result {
        Err(LlmError::Status { status, body, .. }) => {
            assert_eq!(*status, 400);
            let start = "the model fell over: ";
            let read = format!("{start}{}", "x".repeat(100 - start.len()));
            assert_eq!(*body, read, "the body's first `error_body_bytes`, no more");
        }
        other => panic!("expected the status, got {other:?}"),
    }
}

#[test]
fn lines_split_anywhere_across_chunks_arrive_whole() {
    let pieces: Vec<String> = (0..40).map(|i| format!("piece {i}; ")).collect();
    let chunks: Vec<Value> = pieces.iter().map(|p| openai_chunk(p)).collect();
    let whole: String = sse(&chunks, true).concat();
    // Odd cuts: many lines in one chunk, one line over many chunks, cuts inside "\n\n".
    let mut cut = Vec::new();
    let mut rest = whole.as_str();
    for size in [3usize, 1, 700, 17, 2, 1500].iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (head, tail) = rest.split_at((*size).min(rest.len()));
        cut.push(head.to_owned());
        rest = tail;
    }
    let (_server, root, _) = streaming_server(cut);
    let (deltas, done) = run(openai(&root), request(true));
    let received: Vec<&str> = deltas.iter().map(|d| d.text.as_str()).collect();
    assert_eq!(received, pieces);
    assert_eq!(
        done[0].result.as_ref().map(|r| r.text.clone()),
        Ok(pieces.concat())
    );
}

#[test]
fn a_stream_stopped_at_the_token_limit_is_marked_cut_off_in_both_dialects() {
    let mut last = openai_chunk("Wel");
    last["choices"][0]["finish_reason"] = json!("length");
    let (_openai_server, openai_root, _) = streaming_server(sse(&[last], true));
    let (_, done) = run(openai(&openai_root), request(true));
    assert!(
        matches!(&done[0].result, Ok(reply) if reply.cut_off),
        "{done:?}"
    );

    let mut end = ollama_line("");
    end["done"] = json!(true);
    end["done_reason"] = json!("length");
    let (_ollama_server, ollama_root, _) = streaming_server(ndjson(&[ollama_line("Wel"), end]));
    let (_, done) = run(ollama(&ollama_root), request(true));
    assert!(
        matches!(&done[0].result, Ok(reply) if reply.cut_off),
        "{done:?}"
    );
}
