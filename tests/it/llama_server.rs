//! Against a real llama.cpp server (llama-cpp-python's OpenAI-compatible server) with
//! a tiny random-weights model the test writes itself: it writes gibberish, but the
//! server really tokenizes, streams and enforces JSON schemas.
//!
//! `.ci/run` installs the server and sets `LOOM_LLAMA_PYTHON`; elsewhere these tests
//! skip with a message unless that Python has `llama_cpp.server` and `gguf`. Under CI
//! (`CI` set) a missing server fails instead of skipping.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy_loom::llm::{
    ChatMessage, LlmBridge, LlmRequest, OpenAiBackend, OpenAiSettings, SamplingOptions,
    SchemaFormat,
};
use bevy_loom::prelude::*;
use bevy_loom::prompt::parse_decision;
use bevy_loom::prompt::{Choices, DecisionLimits, decision_schema};

use crate::support::{run_turn, tavern_app_configured};

/// A running server, stopped when dropped.
struct LlamaServer {
    child: Child,
    base_url: String,
    _dir: tempfile::TempDir,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the server, or says why not: `None` skips the test (outside CI).
fn llama_server() -> Option<LlamaServer> {
    let python = std::env::var("LOOM_LLAMA_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let usable = Command::new(&python)
        .args(["-c", "import llama_cpp.server, gguf"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !usable {
        let why = format!(
            "no llama.cpp server: `{python}` cannot import llama_cpp.server and gguf; \
             run .ci/run once, or set LOOM_LLAMA_PYTHON to a Python that has them"
        );
        assert!(std::env::var("CI").is_err(), "{why}");
        eprintln!("skipped: {why}");
        return None;
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
    let model = dir.path().join("tiny.gguf");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/llama/tiny_model.py");
    let written = Command::new(&python)
        .arg(&script)
        .arg(&model)
        .status()
        .expect("run the model writer");
    assert!(written.success(), "tiny_model.py failed");
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("an address")
        .port();
    let log = std::fs::File::create(dir.path().join("server.log")).expect("a log file");
    let child = Command::new(&python)
        .args([
            "-m",
            "llama_cpp.server",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .args(["--n_ctx", "16384", "--model"])
        .arg(&model)
        .stdout(log.try_clone().expect("the log"))
        .stderr(log)
        .spawn()
        .expect("start the llama.cpp server");
    let server = LlamaServer {
        child,
        base_url: format!("http://127.0.0.1:{port}/v1"),
        _dir: dir,
    };
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        let log =
            std::fs::read_to_string(server._dir.path().join("server.log")).unwrap_or_default();
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the server did not start:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(server)
}

fn backend(server: &LlamaServer) -> OpenAiSettings {
    OpenAiSettings {
        base_url: server.base_url.clone(),
        model: "tiny".into(),
        // llama-cpp-python's server takes the schema as `json_object`.
        schema_format: SchemaFormat::JsonObject,
        ..OpenAiSettings::default()
    }
}

/// Sends one request and waits for its outcome and pieces.
fn ask(server: &LlamaServer, request: LlmRequest) -> (String, Vec<String>) {
    let backend = OpenAiBackend::new(backend(server)).expect("a backend");
    let mut bridge = LlmBridge::new(
        Arc::new(backend),
        Duration::from_secs(120),
        SamplingOptions::default(),
    );
    bridge.submit(request);
    let started = Instant::now();
    let (mut pieces, mut done) = (Vec::new(), Vec::new());
    while done.is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "no answer from the server"
        );
        std::thread::sleep(Duration::from_millis(5));
        done.extend(bridge.drain());
        pieces.extend(bridge.drain_deltas().into_iter().map(|d| d.text));
    }
    let reply = done.remove(0).result.expect("an answer");
    (reply.text, pieces)
}

fn limits() -> DecisionLimits {
    DecisionLimits {
        max_speech_chars: 40,
        max_thought_chars: 40,
        ..DecisionLimits::default()
    }
}

#[test]
fn the_server_answers_a_decision_that_passes_validation_and_streams() {
    let Some(server) = llama_server() else { return };
    let decision = LlmRequest {
        messages: vec![
            ChatMessage::system("Choose an action."),
            ChatMessage::user("[Index: 1] wait\n[Index: 2] greet Brom\n[Index: 3] look around"),
        ]
        .into(),
        schema: Some(decision_schema(3, &limits()).into()),
        sampling: SamplingOptions {
            max_tokens: Some(400),
            temperature: Some(0.8),
            ..SamplingOptions::default()
        },
        ..LlmRequest::default()
    };
    for _ in 0..3 {
        let (text, _) = ask(&server, decision.clone());
        let parsed = parse_decision(&text, 3, &limits());
        assert!(
            parsed.is_ok(),
            "the schema keeps the answer valid: {text} → {parsed:?}"
        );
    }
    let (text, pieces) = ask(
        &server,
        LlmRequest {
            stream: true,
            ..decision
        },
    );
    assert!(pieces.len() > 1, "a streamed answer comes in pieces");
    assert_eq!(pieces.concat(), text);
}

#[test]
fn the_model_chooses_a_task_under_the_schema() {
    let Some(server) = llama_server() else { return };
    // Two tasks numbered after one action, and no line to say: the schema leaves the
    // model an action, a task or nothing.
    let choices = Choices {
        actions: 1,
        tasks: 2,
    };
    let limits = DecisionLimits {
        max_color_lines: Some(0),
        ..limits()
    };
    let mut answers = Vec::new();
    for seed in 1..=12 {
        let decision = LlmRequest {
            messages: vec![
                ChatMessage::system("Choose an action or a task."),
                ChatMessage::user(
                    "<available_actions>\n[Index: 1] Command: \"wait\"\n</available_actions>\n\
                     <available_tasks>\n[Index: 2] Command: \"serve Brom mug of ale\"\n\
                     [Index: 3] Command: \"fetch bottle of wine from the cellar\"\n</available_tasks>",
                ),
            ]
            .into(),
            schema: Some(decision_schema(choices, &limits).into()),
            sampling: SamplingOptions {
                max_tokens: Some(200),
                temperature: Some(1.0),
                seed: Some(seed),
                ..SamplingOptions::default()
            },
            ..LlmRequest::default()
        };
        let (text, _) = ask(&server, decision);
        let parsed = parse_decision(&text, choices, &limits);
        let decision = parsed.unwrap_or_else(|reason| {
            panic!("the schema keeps the answer valid: {text} → {reason}")
        });
        answers.push((text, decision.answer));
    }
    let task = answers.iter().find_map(|(text, answer)| match answer {
        Answer::Task { position, speech } => Some((text, *position, speech)),
        _ => None,
    });
    let Some((text, position, speech)) = task else {
        panic!("no seed chose a task: {answers:?}");
    };
    assert!((1..=2).contains(&position), "{text}");
    assert!(speech.is_empty(), "no line may be said: {text}");
}

#[test]
fn every_answer_under_an_abilities_schema_validates() {
    let Some(server) = llama_server() else { return };
    let ability =
        |value: serde_json::Value| -> std::sync::Arc<bevy_loom::content::AbilityDefinition> {
            std::sync::Arc::new(serde_json::from_value(value).expect("an ability"))
        };
    let rent = ability(serde_json::json!({
        "id": "tavern:rent_room", "description": "d", "what": "Rents a room.",
        "when": "Asked for a room.",
        "inputs": {
            "required": [{ "name": "nights", "type": "integer", "min": 1, "max": 14 }],
            "optional": [
                { "name": "guest", "type": "entity", "scope": "characters_here" },
                { "name": "note", "type": "text", "maxLength": 30 }
            ]
        }
    }));
    let pour = ability(serde_json::json!({
        "id": "tavern:pour_drink", "description": "d", "what": "Pours a drink.",
        "when": "Asked for a drink.",
        "inputs": { "mode": "implicit", "optional": [
            { "name": "drink", "type": "choice", "choices": ["ale", "stout", "wine"] },
            { "name": "rounds", "type": "integer", "min": 1, "max": 5 }
        ] }
    }));
    let traveler = bevy::prelude::Entity::from_raw_u32(3).expect("an index");
    let abilities: bevy_loom::world::OfferedAbilities = [
        bevy_loom::world::OfferedAbility {
            definition: rent,
            candidates: vec![("guest".to_owned(), vec![(traveler, "Traveler".to_owned())])],
        },
        bevy_loom::world::OfferedAbility {
            definition: pour,
            candidates: Vec::new(),
        },
    ]
    .into_iter()
    .collect();
    let offer = bevy_loom::prompt::Offer {
        choices: Choices::default(),
        abilities: Some(&abilities),
        as_tools: false,
    };
    let mut kinds = std::collections::BTreeSet::new();
    for seed in 1..=12 {
        let decision = LlmRequest {
            messages: vec![
                ChatMessage::system("You are an innkeeper. Answer the guest."),
                ChatMessage::user("<player_says>\nA room, and a drink.\n</player_says>"),
            ]
            .into(),
            schema: Some(decision_schema(offer, &limits()).into()),
            sampling: SamplingOptions {
                max_tokens: Some(400),
                temperature: Some(1.0),
                seed: Some(seed),
                ..SamplingOptions::default()
            },
            ..LlmRequest::default()
        };
        let (text, _) = ask(&server, decision);
        let decision = parse_decision(&text, offer, &limits()).unwrap_or_else(|reason| {
            panic!("the schema keeps the answer valid: {text} → {reason}")
        });
        kinds.insert(match decision.answer {
            Answer::Invoke { ability, .. } => ability,
            other => format!("{other:?}")
                .split([' ', '('])
                .next()
                .unwrap_or("?")
                .to_owned(),
        });
    }
    assert!(
        kinds.iter().any(|kind| kind.starts_with("tavern:")),
        "no seed invoked an ability: {kinds:?}"
    );
}

#[test]
fn the_tavern_plays_three_turns_against_the_server_without_rejections() {
    let Some(server) = llama_server() else { return };
    let llm = LlmPlugin {
        backend: BackendChoice::OpenAi(backend(&server)),
        settings: LlmSettings {
            deadline: Duration::from_secs(120),
            sampling: SamplingOptions {
                max_tokens: Some(400),
                ..SamplingOptions::default()
            },
        },
        ..LlmPlugin::default()
    };
    let actors = SmartActorSettings {
        limits: limits(),
        ..SmartActorSettings::default()
    };
    let (mut app, _) = tavern_app_configured(llm, actors);
    for turn in 1..=3 {
        let log = run_turn(&mut app);
        assert!(log.rejected.is_empty(), "turn {turn}: {:#?}", log.rejected);
        assert!(!log.prompts.is_empty());
        // Four characters a token is far off for this model's vocabulary (about five
        // times as many tokens); after the first answers a prompt's figures are the
        // server's own count.
        for prompt in &log.prompts {
            let figured: usize = prompt.sections.iter().map(|s| s.tokens).sum();
            let counted = log
                .responses
                .iter()
                .find(|response| response.id == prompt.request)
                .and_then(|response| response.result.as_ref().ok()?.usage)
                .expect("the server reports usage")
                .prompt_tokens as f64;
            let off = (figured as f64 - counted).abs() / counted;
            if turn == 1 {
                assert!(
                    off > 0.05,
                    "uncalibrated: {figured} figured, {counted} counted"
                );
            } else {
                assert!(
                    off <= 0.05,
                    "turn {turn}: {figured} figured, {counted} counted by the server"
                );
            }
        }
    }
}
