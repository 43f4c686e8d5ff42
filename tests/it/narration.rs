//! Narration on a headless app: every report ends in exactly one final text, from the
//! model when it answers well and in time, from the offline weave otherwise.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bevy::prelude::*;
use bevy_loom::llm::{DeltaSink, LlmBackend, LlmError, LlmFuture, LlmReply, LlmRequest};
use bevy_loom::prelude::*;
use bevy_loom::testing::HeadlessApp;
use serde_json::json;
use tokio::sync::Notify;

use crate::support::{content_dir, game, manifest, update_until, wait_for_content};

/// How a test backend answers narration requests.
#[derive(Clone, Copy)]
enum Answer {
    /// Streams "You " and "nod.", then ends with the whole text.
    Streamed,
    /// Streams its thinking (`<think>…</think>`) before "You nod.", as a reasoning
    /// model does when the server does not take it apart.
    StreamedThinking,
    /// A client error, which the bridge does not retry.
    Refused,
    /// Never answers.
    Never,
    /// Answers with JSON instead of prose.
    Json,
    /// Stopped at the token limit halfway through a sentence.
    CutOff,
}

struct TestBackend(Answer);

impl LlmBackend for TestBackend {
    fn describe(&self) -> String {
        "narration test backend".to_owned()
    }

    fn complete(&self, request: &LlmRequest, deltas: DeltaSink) -> LlmFuture {
        match self.0 {
            Answer::Streamed => {
                if request.stream {
                    deltas.send("You ");
                    deltas.send("nod.");
                }
                Box::pin(async { Ok(LlmReply::text("You nod.")) })
            }
            Answer::StreamedThinking => {
                let pieces = [
                    "<th", "ink>", "Be brief", ".</think", ">\n\n", "You ", "nod.",
                ];
                if request.stream {
                    pieces.into_iter().for_each(|piece| deltas.send(piece));
                }
                let whole = pieces.concat();
                Box::pin(async move { Ok(LlmReply::text(whole)) })
            }
            Answer::Refused => Box::pin(async {
                Err(LlmError::Status {
                    status: 400,
                    retry_after: None,
                    body: "bad request".to_owned(),
                })
            }),
            Answer::Never => Box::pin(std::future::pending()),
            Answer::Json => Box::pin(async { Ok(LlmReply::text("{\"text\": \"You nod.\"}")) }),
            Answer::CutOff => Box::pin(async {
                let reply =
                    LlmReply::text("<think>Second person, one sentence.</think>You claim the");
                Ok(LlmReply {
                    cut_off: true,
                    ..reply
                })
            }),
        }
    }
}

/// Every narration text written, in order.
#[derive(Resource, Default)]
struct Narrated(Vec<NarrationText>);

fn record(mut narrated: ResMut<Narrated>, mut texts: MessageReader<NarrationText>) {
    narrated.0.extend(texts.read().cloned());
}

impl Narrated {
    fn finals(&self) -> Vec<&NarrationText> {
        self.0.iter().filter(|t| t.is_final).collect()
    }
}

struct Scene {
    app: App,
    player: Entity,
    marta: Entity,
    mug: Entity,
    _content: tempfile::TempDir,
}

/// A mug with authored fragments, the player and Marta, narrated with these settings.
fn scene(answer: Option<Answer>, settings: NarrationSettings) -> Scene {
    let backend = answer.map(|answer| Arc::new(TestBackend(answer)) as Arc<dyn LlmBackend>);
    scene_with(backend, settings)
}

/// [`scene`], narrated by `backend` (offline without one).
fn scene_with(backend: Option<Arc<dyn LlmBackend>>, settings: NarrationSettings) -> Scene {
    let mug = json!({
        "key": "test:mug",
        "traits": ["chipped rim", "smells of hops", "dented pewter", "foam on the lip", "warm from the hearth"],
        "state_variants": { "carried": ["held close", "sloshing gently"] },
        "action_fragments": {
            "take": { "core": ["you lift the mug", "you take the mug"], "color": ["foam spills over", "it is still warm"] }
        }
    });
    let content = content_dir(&[
        game(&["test"]),
        (
            "mods/test/mod.json",
            manifest(
                "test",
                json!({ "content": { "narrative": ["narrative/mug.narrative.json"] } }),
            ),
        ),
        ("mods/test/narrative/mug.narrative.json", mug.to_string()),
    ]);
    let use_model = backend.is_some();
    let backend = match backend {
        Some(backend) => BackendChoice::Custom(backend),
        None => BackendChoice::Offline { seed: 0 },
    };
    let mut app = HeadlessApp::new(content.path())
        .llm(LlmPlugin {
            backend,
            ..default()
        })
        .narration(NarrationPlugin {
            settings: NarrationSettings {
                use_model,
                ..settings
            },
            ..default()
        })
        .build();
    app.init_resource::<Narrated>()
        .add_systems(Update, record.after(LoomSystems::Narrate));
    wait_for_content(&mut app);
    let world = app.world_mut();
    let room = world
        .spawn((Place, DisplayName("the common room".into())))
        .id();
    let player = world
        .spawn((
            Player,
            Character,
            DisplayName("Traveler".into()),
            InPlace(room),
        ))
        .id();
    let marta = world
        .spawn((Character, DisplayName("Marta".into()), InPlace(room)))
        .id();
    let mug = world
        .spawn((
            DisplayName("mug of ale".into()),
            NarrativeKey("test:mug".into()),
            InPlace(room),
        ))
        .id();
    Scene {
        app,
        player,
        marta,
        mug,
        _content: content,
    }
}

impl Scene {
    fn reports(&self) -> Vec<ActionReport> {
        vec![
            ActionReport::new(self.player, "take")
                .object(self.mug)
                .new_state("carried"),
            ActionReport::new(self.marta, "greet").object(self.player),
            ActionReport::new(self.player, "take")
                .object(self.mug)
                .failed("not_here"),
            ActionReport::new(self.marta, "wait"),
        ]
    }

    /// Writes the reports and updates until each has a final text, then a few frames more.
    fn narrate(&mut self) -> Vec<NarrationText> {
        for report in self.reports() {
            self.app.world_mut().write_message(report);
        }
        let count = self.reports().len();
        update_until(&mut self.app, "every report to be narrated", |app| {
            app.world().resource::<Narrated>().finals().len() >= count
        });
        for _ in 0..5 {
            self.app.update();
        }
        self.app.world().resource::<Narrated>().0.clone()
    }
}

#[test]
fn what_was_said_of_entities_gone_is_forgotten() {
    let mut scene = scene(None, NarrationSettings::default());
    // A new mug each turn, taken, narrated, and gone.
    for turn in 0..200 {
        let world = scene.app.world_mut();
        let mug = world
            .spawn((
                DisplayName(format!("mug {turn}")),
                NarrativeKey("test:mug".into()),
            ))
            .id();
        world.write_message(ActionReport::new(scene.marta, "take").object(mug));
        scene.app.update();
        scene.app.world_mut().despawn(mug);
    }
    scene.app.update();
    let narrated = scene.app.world().resource::<Narrated>().finals().len();
    assert_eq!(narrated, 200, "every take was narrated");
    let remembered = (scene.app.world())
        .resource::<bevy_loom::narration::Narrator>()
        .remembered();
    assert!(remembered < 100, "{remembered} entities' picks kept");
}

fn finals(texts: &[NarrationText]) -> Vec<&NarrationText> {
    texts.iter().filter(|t| t.is_final).collect()
}

/// Each report has exactly one final text, in report order.
fn assert_one_final_each(scene: &Scene, texts: &[NarrationText]) {
    let finals = finals(texts);
    let reports = scene.reports();
    assert_eq!(finals.len(), reports.len(), "{texts:#?}");
    for (text, report) in finals.iter().zip(&reports) {
        assert_eq!(*text.report, *report);
    }
}

/// The offline texts for the same reports with the same seed.
fn offline_texts() -> Vec<String> {
    let mut scene = scene(None, NarrationSettings::default());
    let texts = scene.narrate();
    assert_one_final_each(&scene, &texts);
    finals(&texts)
        .iter()
        .map(|t| {
            assert_eq!(t.source, NarrationSource::Offline);
            t.text.clone()
        })
        .collect()
}

#[test]
fn without_a_model_every_report_is_woven_offline_from_its_fragments() {
    let texts = offline_texts();
    let core = ["You lift the mug", "You take the mug"];
    assert!(core.iter().any(|c| texts[0].starts_with(c)), "{texts:?}");
    let state = [
        "The mug of ale held close.",
        "The mug of ale sloshing gently.",
    ];
    assert!(state.iter().any(|s| texts[0].contains(s)), "{texts:?}");
    assert_eq!(texts[1], "Marta greets Traveler.");
    assert!(
        texts[2].starts_with("That doesn't work. The mug of ale — "),
        "{texts:?}"
    );
    assert_eq!(texts[3], "Marta waits.");
}

#[test]
fn a_refused_request_falls_back_to_the_same_offline_weave() {
    let expected = offline_texts();
    let mut scene = scene(Some(Answer::Refused), NarrationSettings::default());
    let texts = scene.narrate();
    assert_one_final_each(&scene, &texts);
    for (text, offline) in finals(&texts).iter().zip(&expected) {
        assert_eq!(&text.text, offline);
        let NarrationSource::Fallback { reason } = &text.source else {
            panic!("a refused request falls back, got {:?}", text.source);
        };
        assert!(reason.contains("400"), "{reason}");
    }
}

/// A deadline too long to add to a clock ("never give up") is waited on as the longest
/// wait, not added as it is: adding it overflowed the narration's clock and panicked.
#[test]
fn a_deadline_too_long_to_add_is_waited_on_without_overflow() {
    let expected = offline_texts();
    let settings = NarrationSettings {
        deadline: Duration::MAX,
        ..default()
    };
    let mut scene = scene(Some(Answer::Refused), settings);
    let texts = scene.narrate();
    assert_one_final_each(&scene, &texts);
    for (text, offline) in finals(&texts).iter().zip(&expected) {
        assert_eq!(&text.text, offline);
    }
}

#[test]
fn a_model_that_misses_the_deadline_is_replaced_by_the_offline_weave() {
    let expected = offline_texts();
    let settings = NarrationSettings {
        deadline: Duration::from_millis(50),
        ..default()
    };
    let mut scene = scene(Some(Answer::Never), settings);
    let texts = scene.narrate();
    assert_one_final_each(&scene, &texts);
    for (text, offline) in finals(&texts).iter().zip(&expected) {
        assert_eq!(&text.text, offline);
        assert!(
            matches!(&text.source, NarrationSource::Fallback { reason } if reason.contains("NarrationSettings::deadline")),
            "{:?}",
            text.source
        );
    }
    assert_eq!(
        scene
            .app
            .world()
            .resource::<bevy_loom::narration::Narrator>()
            .waiting(),
        0
    );
}

/// A game that changes servers inserts a new bridge: narrations asked of the old one,
/// whose answers never come, are told offline at once, not at their deadline.
#[test]
fn narrations_asked_of_a_replaced_bridge_are_told_offline_at_once() {
    let expected = offline_texts();
    let mut scene = scene(Some(Answer::Never), NarrationSettings::default());
    // Made before the old one is asked anything, as a game may keep a second ready.
    let new = bevy_loom::llm::LlmBridge::new(
        Arc::new(TestBackend(Answer::Streamed)),
        Duration::from_secs(30),
        default(),
    );
    for report in scene.reports() {
        scene.app.world_mut().write_message(report);
    }
    scene.app.update();
    scene.app.world_mut().insert_resource(new);
    scene.app.update();
    let narrated = scene.app.world().resource::<Narrated>();
    let finals = narrated.finals();
    assert_eq!(
        finals.len(),
        expected.len(),
        "all told in the frame it was seen"
    );
    for (text, offline) in finals.iter().zip(&expected) {
        assert_eq!(&text.text, offline);
        assert!(
            matches!(&text.source, NarrationSource::Fallback { reason } if reason.contains("replaced")),
            "{:?}",
            text.source
        );
    }
}

/// What `answer` streams of the scene's first report, piece by piece, then its final
/// text, each with whether it is the final one; every report ends in one final text.
fn first_report_streamed(answer: Answer) -> (Vec<(String, bool)>, Vec<NarrationText>) {
    let mut scene = scene(Some(answer), NarrationSettings::default());
    let texts = scene.narrate();
    assert_one_final_each(&scene, &texts);
    let first = (texts.iter())
        .filter(|t| *t.report == scene.reports()[0])
        .map(|t| (t.text.clone(), t.is_final))
        .collect();
    (first, texts)
}

/// "You nod.", streamed in two pieces, then whole.
fn you_nod_in_pieces() -> Vec<(String, bool)> {
    [("You ", false), ("nod.", false), ("You nod.", true)]
        .map(|(text, is_final)| (text.to_owned(), is_final))
        .to_vec()
}

#[test]
fn a_streamed_answer_arrives_in_pieces_then_one_final_text() {
    let (first, texts) = first_report_streamed(Answer::Streamed);
    assert_eq!(first, you_nod_in_pieces());
    assert!(
        finals(&texts)
            .iter()
            .all(|t| t.source == NarrationSource::Model)
    );
}

#[test]
fn a_reasoning_models_thinking_is_not_streamed_to_the_player() {
    let (first, _) = first_report_streamed(Answer::StreamedThinking);
    assert_eq!(first, you_nod_in_pieces());
}

#[test]
fn an_answer_that_is_not_prose_falls_back() {
    let expected = offline_texts();
    let mut scene = scene(Some(Answer::Json), NarrationSettings::default());
    let texts = scene.narrate();
    assert_one_final_each(&scene, &texts);
    for (text, offline) in finals(&texts).iter().zip(&expected) {
        assert_eq!(&text.text, offline);
        assert!(
            matches!(&text.source, NarrationSource::Fallback { reason } if reason.contains("JSON")),
            "{:?}",
            text.source
        );
    }
}

#[test]
fn an_answer_cut_off_at_the_token_limit_falls_back() {
    let expected = offline_texts();
    let mut scene = scene(Some(Answer::CutOff), NarrationSettings::default());
    let texts = scene.narrate();
    assert_one_final_each(&scene, &texts);
    for (text, offline) in finals(&texts).iter().zip(&expected) {
        assert_eq!(&text.text, offline, "not the half sentence");
        assert!(
            matches!(&text.source, NarrationSource::Fallback { reason } if reason.contains("token limit")),
            "{:?}",
            text.source
        );
    }
}

#[test]
fn a_default_state_line_names_who_took_the_item() {
    let mut scene = scene(None, NarrationSettings::default());
    let (player, marta, mug) = (scene.player, scene.marta, scene.mug);
    for actor in [marta, player] {
        scene.app.world_mut().write_message(
            ActionReport::new(actor, "take")
                .object(mug)
                .new_state("in_inventory"),
        );
    }
    update_until(&mut scene.app, "both takes to be narrated", |app| {
        app.world().resource::<Narrated>().finals().len() >= 2
    });
    let narrated = scene.app.world().resource::<Narrated>();
    let finals = narrated.finals();
    let text_for = |actor: Entity| {
        finals
            .iter()
            .find(|t| t.report.actor == actor)
            .map(|t| t.text.as_str())
            .expect("a final text")
    };
    let by_marta = text_for(marta);
    assert!(by_marta.contains("Marta has the mug of ale."), "{by_marta}");
    assert!(!by_marta.contains("you have"), "{by_marta}");
    let by_player = text_for(player);
    assert!(
        by_player.contains("You have the mug of ale."),
        "{by_player}"
    );
}

/// A thing with a narrative key and no display name is told as "someone", as anything
/// without a name is: not "the someone".
#[test]
fn a_thing_without_a_name_is_someone() {
    let mut scene = scene(None, NarrationSettings::default());
    let marta = scene.marta;
    let nameless = (scene.app.world_mut())
        .spawn(NarrativeKey("test:mug".into()))
        .id();
    (scene.app.world_mut()).write_message(ActionReport::new(marta, "take").object(nameless));
    update_until(&mut scene.app, "the take to be narrated", |app| {
        !app.world().resource::<Narrated>().finals().is_empty()
    });
    let narrated = scene.app.world().resource::<Narrated>();
    let text = &narrated.finals()[0].text;
    assert!(text.contains("someone"), "{text}");
    assert!(!text.to_lowercase().contains("the someone"), "{text}");
}

/// Answers "You nod." and keeps what each request said.
#[derive(Default)]
struct Recording(std::sync::Mutex<Vec<String>>);

impl LlmBackend for Recording {
    fn describe(&self) -> String {
        "narration test backend that keeps its requests".to_owned()
    }

    fn complete(&self, request: &LlmRequest, _: DeltaSink) -> LlmFuture {
        let said = request.messages.iter().map(|m| &*m.content);
        if let Ok(mut requests) = self.0.lock() {
            requests.push(said.collect::<Vec<_>>().join("\n"));
        }
        Box::pin(async { Ok(LlmReply::text("You nod.")) })
    }
}

/// The narrator reads names as prompts show them, the exits' too: words no one sees
/// (tag characters) do not reach it.
#[test]
fn the_narrator_reads_no_hidden_words_in_names() {
    let recording = Arc::new(Recording::default());
    let backend = Arc::clone(&recording) as Arc<dyn LlmBackend>;
    let mut scene = scene_with(Some(backend), NarrationSettings::default());
    let hidden = "\u{E006F}\u{E0062}\u{E0065}\u{E0079}";
    let world = scene.app.world_mut();
    let cellar = world
        .spawn((Place, DisplayName(format!("the cellar{hidden}"))))
        .id();
    let room = world
        .get::<InPlace>(scene.marta)
        .expect("Marta is in the room")
        .0;
    world.entity_mut(room).insert(Exits(vec![cellar]));
    world
        .entity_mut(scene.mug)
        .insert(DisplayName(format!("mug{hidden}")));
    world.write_message(ActionReport::new(scene.marta, "take").object(scene.mug));
    update_until(&mut scene.app, "the take to be narrated", |app| {
        !app.world().resource::<Narrated>().finals().is_empty()
    });
    let requests = recording.0.lock().expect("not poisoned");
    let asked = requests.first().expect("the narrator was asked");
    assert!(
        asked.contains("the cellar") && asked.contains("mug"),
        "{asked}"
    );
    assert!(!asked.contains('\u{E006F}'), "{asked:?}");
}

/// Streams "You " and "nod." to every request but the first, which answers only once
/// released, and the same then.
#[derive(Default)]
struct FirstHeld {
    asked: AtomicUsize,
    released: Arc<Notify>,
}

impl LlmBackend for FirstHeld {
    fn describe(&self) -> String {
        "narration test backend that holds its first request".to_owned()
    }

    fn complete(&self, request: &LlmRequest, deltas: DeltaSink) -> LlmFuture {
        let first = self.asked.fetch_add(1, Ordering::SeqCst) == 0;
        let released = Arc::clone(&self.released);
        let stream = request.stream;
        Box::pin(async move {
            if first {
                released.notified().await;
            }
            if stream {
                deltas.send("You ");
                deltas.send("nod.");
            }
            Ok(LlmReply::text("You nod."))
        })
    }
}

#[test]
fn reports_are_told_in_the_order_they_came_whichever_answer_comes_first() {
    let backend = Arc::new(FirstHeld::default());
    let mut scene = scene_with(Some(backend.clone()), NarrationSettings::default());
    let reports = scene.reports();
    for report in &reports {
        scene.app.world_mut().write_message(report.clone());
    }
    update_until(&mut scene.app, "the later reports' answers", |app| {
        app.world().resource::<LlmStats>().completed >= 3
    });
    scene.app.update();
    let told = scene.app.world().resource::<Narrated>();
    assert!(
        told.0.is_empty(),
        "nothing is told before the first report's answer: {:#?}",
        told.0
    );
    backend.released.notify_one();
    let count = reports.len();
    update_until(&mut scene.app, "every report to be narrated", |app| {
        app.world().resource::<Narrated>().finals().len() >= count
    });
    let told = &scene.app.world().resource::<Narrated>().0;
    // Each report's pieces, then its final text, the reports in their order.
    let expected: Vec<(ActionReport, String, bool)> = (reports.iter())
        .flat_map(|report| {
            let held = [("You nod.", false), ("You nod.", true)];
            let streamed = [("You ", false), ("nod.", false), ("You nod.", true)];
            // The first streams as it comes; the others' pieces came while it was
            // told, and show as one when their turn comes.
            let pieces = if *report == reports[0] {
                &streamed[..]
            } else {
                &held[..]
            };
            pieces
                .iter()
                .map(|(text, is_final)| (report.clone(), (*text).to_owned(), *is_final))
                .collect::<Vec<_>>()
        })
        .collect();
    let told: Vec<(ActionReport, String, bool)> = (told.iter())
        .map(|text| ((*text.report).clone(), text.text.clone(), text.is_final))
        .collect();
    assert_eq!(told, expected);
}

#[test]
fn a_streamed_answer_stops_showing_once_it_is_longer_than_allowed() {
    let expected = offline_texts();
    let settings = NarrationSettings {
        max_chars: 6,
        ..default()
    };
    let mut scene = scene(Some(Answer::Streamed), settings);
    let texts = scene.narrate();
    assert_one_final_each(&scene, &texts);
    let first = &scene.reports()[0];
    let told: Vec<(&str, bool)> = (texts.iter())
        .filter(|text| *text.report == *first)
        .map(|text| (text.text.as_str(), text.is_final))
        .collect();
    // "You nod." is 8 characters: its second piece is not shown, and the whole text
    // is refused for the offline weave.
    assert_eq!(told, [("You ", false), (expected[0].as_str(), true)]);
}
