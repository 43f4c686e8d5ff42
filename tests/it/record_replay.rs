//! Record a scene once, replay it with no server: the same transcript every time.

use std::path::Path;

use bevy_loom::llm::{ChatMessage, LlmError, LlmRequest, SamplingOptions, request_key};
use bevy_loom::prelude::*;

use crate::support::{run_turn, tavern_app};

/// The commands and speech of `turns` turns, in a stable order, and how many
/// decisions were asked for.
fn transcript(backend: BackendChoice, turns: usize) -> (Vec<Vec<String>>, usize) {
    let (mut app, _) = tavern_app(backend);
    let mut asked = 0;
    let lines = (0..turns)
        .map(|_| {
            let log = run_turn(&mut app);
            assert!(log.rejected.is_empty(), "{:#?}", log.rejected);
            asked += log.prompts.len();
            let mut lines: Vec<String> = log.requests.iter().map(|r| r.command.clone()).collect();
            lines.extend(log.spoke.iter().map(|s| format!("says {}", s.text)));
            lines.sort();
            lines
        })
        .collect();
    (lines, asked)
}

fn recorded(cassette: &Path) -> BackendChoice {
    BackendChoice::Record {
        backend: Box::new(BackendChoice::Offline { seed: 11 }),
        cassette: cassette.to_path_buf(),
    }
}

#[test]
fn a_replayed_scene_repeats_the_recorded_transcript() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let cassette = dir.path().join("tavern.jsonl");
    let (live, asked) = transcript(recorded(&cassette), 4);
    let lines = std::fs::read_to_string(&cassette).expect("the cassette");
    assert_eq!(lines.lines().count(), asked, "one line per decision");
    assert!(
        asked <= 3 + 2 + 3 + 2,
        "at most each actor every turn, Brom every other: {asked}"
    );
    for _ in 0..2 {
        assert_eq!(
            transcript(
                BackendChoice::Replay {
                    cassette: cassette.clone()
                },
                4
            ),
            (live.clone(), asked)
        );
    }
}

#[test]
fn a_request_missing_from_the_cassette_fails_clearly() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let cassette = dir.path().join("one-turn.jsonl");
    transcript(recorded(&cassette), 1);
    let (mut app, scene) = tavern_app(BackendChoice::Replay {
        cassette: cassette.clone(),
    });
    // The scene changed since recording: Marta holds the ale, so her prompt differs.
    let marta = scene.entities["marta"];
    app.world_mut()
        .entity_mut(scene.entities["ale"])
        .remove::<InPlace>()
        .insert(CarriedBy(marta));
    let log = run_turn(&mut app);
    let rejection = log
        .rejected
        .iter()
        .find(|r| r.actor == marta)
        .expect("Marta's request was not recorded");
    match &rejection.reason {
        RejectionReason::NoAnswer(LlmError::NotRecorded {
            cassette: named, ..
        }) => {
            assert!(named.ends_with("one-turn.jsonl"));
            assert!(
                rejection
                    .reason
                    .to_string()
                    .contains("record the scene again")
            );
        }
        other => panic!("expected NotRecorded, got {other:?}"),
    }
}

#[test]
fn an_unreadable_cassette_fails_every_request_and_names_the_line() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let cassette = dir.path().join("broken.jsonl");
    std::fs::write(&cassette, "{\"key\": \"x\"}\n").expect("write");
    let (mut app, _) = tavern_app(BackendChoice::Replay { cassette });
    let log = run_turn(&mut app);
    assert_eq!(log.rejected.len(), 3);
    assert!(log.rejected.iter().all(|r| matches!(&r.reason,
        RejectionReason::NoAnswer(LlmError::Setup(m)) if m.contains("broken.jsonl line 1"))));
}

#[test]
fn the_key_covers_what_the_model_sees_and_nothing_else() {
    let request = LlmRequest {
        messages: vec![ChatMessage::user("Greet the traveler.")].into(),
        sampling: SamplingOptions {
            temperature: Some(0.5),
            ..Default::default()
        },
        ..Default::default()
    };
    let key = request_key("tiny", &request);
    // Pinned: a cassette recorded before keeps replaying only while its keys do.
    assert_eq!(
        key,
        "346dc6920bc0af767685088d98581edb03b117c4db139cf9e7cb36ed267ad4c4"
    );
    let streamed = LlmRequest {
        stream: true,
        deadline: Some(std::time::Duration::from_secs(1)),
        ..request.clone()
    };
    assert_eq!(
        key,
        request_key("tiny", &streamed),
        "how it is asked does not change what is asked"
    );
    assert_ne!(key, request_key("other-model", &request));
    let hotter = LlmRequest {
        sampling: SamplingOptions {
            temperature: Some(0.9),
            ..Default::default()
        },
        ..request.clone()
    };
    assert_ne!(key, request_key("tiny", &hotter));
    let with_schema = LlmRequest {
        schema: Some(serde_json::json!({ "type": "object" }).into()),
        ..request
    };
    assert_ne!(key, request_key("tiny", &with_schema));
}

/// Answers every request by calling the tavern's `rent_room` for two nights.
struct RentsARoom;

impl bevy_loom::llm::LlmBackend for RentsARoom {
    fn describe(&self) -> String {
        "a model that rents rooms".to_owned()
    }

    fn complete(
        &self,
        _request: &LlmRequest,
        _deltas: bevy_loom::llm::DeltaSink,
    ) -> bevy_loom::llm::LlmFuture {
        let call = bevy_loom::llm::ToolCall {
            name: "tavern__rent_room".to_owned(),
            arguments: serde_json::json!({ "nights": 2 }),
        };
        Box::pin(async move {
            Ok(bevy_loom::llm::LlmReply {
                tool_calls: vec![call],
                cut_off: true,
                ..Default::default()
            })
        })
    }
}

#[test]
fn a_recorded_tool_call_is_replayed_and_the_tools_offered_are_part_of_the_key() {
    use bevy_loom::llm::{DeltaSink, LlmBackend, RecordingBackend, ReplayBackend, ToolSpec};
    use futures_lite::future::block_on;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let cassette = dir.path().join("tools.jsonl");
    let rent = ToolSpec {
        name: "tavern__rent_room".to_owned(),
        description: "Rents a room.".to_owned(),
        parameters: serde_json::json!({ "type": "object" }),
    };
    let request = LlmRequest {
        messages: vec![ChatMessage::user("A room for two nights, please.")].into(),
        tools: Some(std::sync::Arc::new(vec![rent])),
        ..Default::default()
    };
    let recording = RecordingBackend::new(std::sync::Arc::new(RentsARoom), &cassette)
        .expect("a cassette to record to");
    let answered = block_on(recording.complete(&request, DeltaSink::discard()));
    let replay = ReplayBackend::open(&cassette).expect("the cassette recorded");
    let replayed = block_on(replay.complete(&request, DeltaSink::discard()));
    assert_eq!(
        replayed, answered,
        "the call comes back as it was made, and cut off where it was"
    );
    let without_tools = LlmRequest {
        tools: None,
        ..request.clone()
    };
    assert_ne!(
        request_key("tiny", &request),
        request_key("tiny", &without_tools),
        "other tools offered, another request"
    );
}
