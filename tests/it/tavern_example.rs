//! The tavern example's rules and printer on a headless app: an action its rules do
//! not know is refused and reported as failed, a `NONE` answer shows as a pass, a
//! rejection's reason is told whole once, and a reader that goes away stops the
//! printing without an error.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bevy::prelude::*;
use bevy_loom::actors::SpawnedScene;
use bevy_loom::prelude::*;
use bevy_loom::testing::HeadlessApp;
use serde_json::json;

use crate::support::{
    FixedBackend, action, content_dir, game, manifest, update_until, wait_for_content,
};

#[allow(dead_code)]
#[path = "../../examples/tavern/cli.rs"]
mod cli;
#[allow(dead_code)]
#[path = "../../examples/tavern/print.rs"]
mod print;
#[allow(dead_code)]
#[path = "../../examples/tavern/rules.rs"]
mod rules;

/// A mod whose only action, `dance:jig`, the tavern's rules do not know, and Vesk,
/// who may take it.
fn dance_mod() -> Vec<(&'static str, String)> {
    vec![
        game(&["dance"]),
        (
            "mods/dance/mod.json",
            manifest(
                "dance",
                json!({ "content": {
                    "actions": ["actions/jig.action.json"],
                    "actors": ["actors/vesk.actor.json"]
                } }),
            ),
        ),
        (
            "mods/dance/actions/jig.action.json",
            action(
                "dance:jig",
                json!({ "name": "Jig", "template": "dance a jig" }),
            ),
        ),
        (
            "mods/dance/actors/vesk.actor.json",
            json!({ "id": "dance:vesk", "persona": { "name": "Vesk", "role": "a dancer" } })
                .to_string(),
        ),
    ]
}

/// A writer whose text the test can read afterwards.
#[derive(Clone, Default)]
struct Transcript(Arc<Mutex<Vec<u8>>>);

impl Transcript {
    fn text(&self) -> String {
        let bytes = self.0.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl Write for Transcript {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A writer whose reader has gone away, as stdout piped into `head` once it exits.
struct ClosedPipe;

impl Write for ClosedPipe {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::ErrorKind::BrokenPipe.into())
    }

    fn flush(&mut self) -> io::Result<()> {
        Err(io::ErrorKind::BrokenPipe.into())
    }
}

/// Every report the rules wrote.
#[derive(Resource, Default)]
struct Reports(Vec<ActionReport>);

fn record_reports(mut reports: ResMut<Reports>, mut written: MessageReader<ActionReport>) {
    reports.0.extend(written.read().cloned());
}

/// Plays one tavern turn on the dance mod, Vesk answering `answer`, printing to `out`;
/// returns the app after the turn.
fn play_turn(answer: &str, out: Box<dyn Write>) -> App {
    let content = content_dir(&dance_mod());
    let mut app = HeadlessApp::new(content.path())
        .llm(LlmPlugin {
            backend: FixedBackend::choice(answer),
            ..default()
        })
        .build();
    app.insert_non_send(print::Printer::new(out))
        .add_plugins((
            rules::RulesPlugin,
            print::TranscriptPlugin { show_prompt: false },
        ))
        .init_resource::<rules::SceneOrder>()
        .init_resource::<Reports>()
        .add_systems(Last, record_reports);
    wait_for_content(&mut app);
    let world = app.world_mut();
    let room = world.spawn((Place, DisplayName("the floor".into()))).id();
    spawn_dancer(world, "Vesk", room);
    play_next_turn(&mut app);
    app
}

/// A dancer of Vesk's spec named `name`, on the floor `room`.
fn spawn_dancer(world: &mut World, name: &str, room: Entity) {
    world.spawn((
        SmartActor::new("dance:vesk"),
        Character,
        DisplayName(name.into()),
        Tags::default(),
        InPlace(room),
    ));
}

/// Plays the next turn, until it is printed.
fn play_next_turn(app: &mut App) {
    let world = app.world_mut();
    world.resource_mut::<print::Turn>().open = true;
    world.write_message(TurnEnded);
    update_until(app, "the turn to be printed", |app| {
        !app.world().resource::<print::Turn>().in_progress()
    });
}

#[test]
fn an_action_the_rules_do_not_know_is_refused_and_reported_as_failed() {
    let transcript = Transcript::default();
    let app = play_turn(
        r#"{"action": 1, "speech": "Watch this.", "thought": ""}"#,
        Box::new(transcript.clone()),
    );
    let reports = &app.world().resource::<Reports>().0;
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(reports[0].outcome, Outcome::Failure);
    assert_eq!(
        reports[0].failure_reason.as_deref(),
        Some(rules::UNKNOWN_ACTION)
    );
    let text = transcript.text();
    assert!(
        text.starts_with(
            "Vesk: dance a jig — \"Watch this.\" (the game refuses: the tavern's rules do not know `dance:jig`"
        ),
        "{text}"
    );
}

#[test]
fn a_none_answer_prints_as_a_pass() {
    let transcript = Transcript::default();
    let _app = play_turn(r#"{"do": 0, "say": ""}"#, Box::new(transcript.clone()));
    assert_eq!(transcript.text(), "Vesk lets the moment pass.\n");
}

#[test]
fn words_said_over_several_lines_print_on_one() {
    let transcript = Transcript::default();
    let _app = play_turn(
        r#"{"do": 0, "say": "Evening.\n\n  Drink?"}"#,
        Box::new(transcript.clone()),
    );
    assert_eq!(transcript.text(), "Vesk passes — \"Evening. Drink?\"\n");
}

#[test]
fn a_rejection_told_before_is_told_in_short() {
    let transcript = Transcript::default();
    let mut app = play_turn("no answer of the contract", Box::new(transcript.clone()));
    // Another dancer joins for the second turn: its reason is its own to be told.
    let world = app.world_mut();
    let floor = world
        .query_filtered::<Entity, With<Place>>()
        .single(world)
        .expect("one place");
    spawn_dancer(world, "Mira", floor);
    play_next_turn(&mut app);
    let text = transcript.text();
    let mut lines: Vec<&str> = text.lines().collect();
    let whole =
        |line: &str, who: &str| line.starts_with(&format!("{who} passes (rejected: the answer"));
    let first = lines.remove(0);
    assert!(whole(first, "Vesk"), "{text}");
    assert!(
        first.ends_with("; the model wrote \"no answer of the contract\")"),
        "what the model wrote, told once: {first}"
    );
    lines.sort_unstable();
    let [mira, vesk] = lines[..] else {
        panic!("a line for each of them: {text}");
    };
    assert!(whole(mira, "Mira"), "{text}");
    assert_eq!(vesk, "Vesk passes (rejected: as before)");
}

#[test]
fn a_reader_that_went_away_stops_the_printing_without_an_error() {
    let app = play_turn(r#"{"do": 0, "say": ""}"#, Box::new(ClosedPipe));
    let printer = app.world().non_send::<print::Printer>();
    assert_eq!(printer.stopped(), Some(Ok(())));
}

#[test]
fn another_write_error_stops_the_printing_with_it() {
    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::StorageFull.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut printer = print::Printer::new(Box::new(Full));
    assert_eq!(printer.stopped(), None);
    printer.line("Vesk lets the moment pass.");
    assert!(
        matches!(printer.stopped(), Some(Err(message)) if message.starts_with("cannot print the transcript")),
        "{:?}",
        printer.stopped()
    );
}

/// The tavern scene under the example's rules and printer, every smart actor answering
/// with the `backend`, tasks offered or not and plans taking a step a turn; prints to
/// `out`.
fn tavern(backend: BackendChoice, tasks: bool, out: Box<dyn Write>) -> (App, SpawnedScene) {
    let llm = LlmPlugin {
        backend,
        ..default()
    };
    tavern_with(llm, tasks, out)
}

/// [`tavern`], with these model server settings.
fn tavern_with(llm: LlmPlugin, tasks: bool, out: Box<dyn Write>) -> (App, SpawnedScene) {
    let (mut app, scene) = crate::support::tavern_app_configured(
        llm,
        SmartActorSettings {
            offer_tasks: tasks,
            ..default()
        },
    );
    app.insert_resource(PlanningSettings {
        cadence: PlanCadence::EveryTurn,
        ..default()
    })
    .insert_resource(rules::SceneOrder::new(&scene))
    .insert_non_send(print::Printer::new(out));
    // The app has run (its content loaded): its plugins are built by hand.
    rules::RulesPlugin.build(&mut app);
    print::TranscriptPlugin { show_prompt: false }.build(&mut app);
    (app, scene)
}

/// Plays one turn as the example does: it ends once its transcript is printed.
fn play(app: &mut App) {
    app.world_mut().resource_mut::<print::Turn>().open = true;
    app.world_mut().write_message(TurnEnded);
    update_until(app, "the turn to be printed", |app| {
        !app.world().resource::<print::Turn>().in_progress()
    });
}

#[test]
fn fetching_from_the_locked_cellar_replans_to_the_method_with_the_key() {
    let transcript = Transcript::default();
    let (mut app, scene) = tavern(
        FixedBackend::choice(r#"{"do": 0, "say": ""}"#),
        true,
        Box::new(transcript.clone()),
    );
    let (marta, wine, cellar) = (
        scene.entities["marta"],
        scene.entities["wine"],
        scene.entities["cellar"],
    );
    let fetch = StartPlan::new(marta, "tavern:fetch_from_storeroom")
        .entity("item", wine)
        .entity("storeroom", cellar);
    app.world_mut().write_message(fetch);
    for _ in 0..6 {
        play(&mut app);
    }
    let text = transcript.text();
    let plan_lines = ["Marta —", "Marta has", "Marta gives up"];
    let steps: Vec<&str> = (text.lines())
        .filter(|line| plan_lines.iter().any(|start| line.starts_with(start)))
        .collect();
    assert_eq!(
        steps,
        [
            "Marta — fetch bottle of wine from the cellar, step 1 of 2: go to the cellar (the game refuses: the door is locked)",
            "Marta — fetch bottle of wine from the cellar, step 1 of 3: unlock the cellar",
            "Marta — fetch bottle of wine from the cellar, step 2 of 3: go to the cellar",
            "Marta — fetch bottle of wine from the cellar, step 3 of 3: pick up bottle of wine",
            "Marta has done it: fetch bottle of wine from the cellar",
        ],
        "{text}"
    );
    assert_eq!(app.world().get::<CarriedBy>(wine).map(|c| c.0), Some(marta));
    assert_eq!(app.world().get::<InPlace>(marta).map(|p| p.0), Some(cellar));
}

#[test]
fn with_tasks_the_innkeeper_asks_the_model_less_over_ten_turns() {
    let asked = |tasks: bool| {
        let transcript = Transcript::default();
        let backend = BackendChoice::Offline { seed: 0 };
        let (mut app, scene) = tavern(backend, tasks, Box::new(transcript.clone()));
        for _ in 0..10 {
            play(&mut app);
        }
        let line = print::decisions_asked(app.world());
        let text = transcript.text();
        let marta = scene.entities["marta"];
        (line, text, marta)
    };
    let (with_tasks, text, _) = asked(true);
    let (without, plain, _) = asked(false);
    assert!(text.contains("Marta takes on: "), "{text}");
    assert!(!plain.contains("takes on"), "{plain}");
    assert!(
        text.contains(", step 2 of 4: pick up mug of "),
        "the plan's progress: {text}"
    );
    let all = |line: &str| -> usize {
        let count = line.rsplit_once('(').expect("a total").1;
        count
            .split(' ')
            .next()
            .expect("a number")
            .parse()
            .expect("a number")
    };
    assert!(all(&with_tasks) < all(&without), "{with_tasks} / {without}");
}

#[test]
fn asked_for_a_room_marta_asks_how_long_and_the_game_takes_the_coin_and_hands_over_a_key() {
    let transcript = Transcript::default();
    let innkeeper = crate::abilities::Innkeeper::default();
    let backend = BackendChoice::Custom(Arc::new(innkeeper));
    let (mut app, scene) = tavern(backend, false, Box::new(transcript.clone()));
    let traveler = scene.entities["player"];
    let say = |app: &mut App, line: &str| {
        app.world_mut().write_message(PlayerSaid {
            text: line.to_owned(),
        });
        play(app);
    };
    say(&mut app, "@Marta, I'd like a room");
    let text = transcript.text();
    assert!(
        text.contains("Marta (to you): \"For how many nights?\""),
        "{text}"
    );
    say(&mut app, "Just two nights, please.");
    let text = transcript.text();
    assert!(
        text.contains("Marta: rent Traveler a room for 2 nights — \"Two nights it is.\""),
        "{text}"
    );
    let world = app.world_mut();
    assert_eq!(
        world.get::<rules::Purse>(traveler),
        Some(&rules::Purse(rules::PLAYERS_COINS - 2)),
        "two nights, two coins"
    );
    let mut carried = world.query::<(&DisplayName, &CarriedBy)>();
    let keys: Vec<&str> = (carried.iter(world))
        .filter(|(_, by)| by.0 == traveler)
        .map(|(name, _)| name.0.as_str())
        .collect();
    assert_eq!(keys, ["key to the room upstairs"]);
}

#[test]
fn a_count_the_command_line_cannot_take_says_what_is_wrong() {
    let parse = |args: &[&str]| cli::parse(args.iter().map(|arg| (*arg).to_owned()));
    let error = |args: &[&str]| parse(args).err().expect("refused");
    assert!(error(&["--turns", "abc"]).starts_with("--turns: `abc` is not a whole number"));
    assert!(error(&["--turns", "-1"]).starts_with("--turns: `-1` is not a whole number"));
    let huge = error(&["--seed", "99999999999999999999"]);
    assert!(
        huge.starts_with("--seed: `99999999999999999999` is too large"),
        "{huge}"
    );
    assert!(error(&["--turns", ""]).starts_with("--turns needs a whole number"));
    assert!(error(&["--turns"]).starts_with("--turns needs a value"));
    let both = error(&["--interactive", "--script", "lines.txt"]);
    assert!(both.starts_with("--interactive and --script"), "{both}");
    let twice = error(&["--script", "a.txt", "--script", "b.txt"]);
    assert!(twice.starts_with("--script is given twice"), "{twice}");
    let Ok(Some(options)) = parse(&["--turns", " 3 ", "--seed", "7"]) else {
        panic!("valid options refused");
    };
    assert_eq!((options.turns, options.seed), (3, 7));
}

#[test]
fn help_is_asked_for_by_an_option_not_by_a_value() {
    let parse = |args: &[&str]| cli::parse(args.iter().map(|arg| (*arg).to_owned()));
    assert!(matches!(parse(&["--turns", "2", "--help"]), Ok(None)));
    assert!(matches!(parse(&["-h"]), Ok(None)));
    let Ok(Some(options)) = parse(&["--script", "-h"]) else {
        panic!("a script named -h is a script");
    };
    assert!(
        matches!(options.player, Some(cli::PlayerLines::Script(path)) if path.as_os_str() == "-h")
    );
}

/// The player's lines, typed or from a script, are read whatever their encoding and
/// line ends: a byte that is not UTF-8 (Latin-1's `é`) shows as `�` instead of ending
/// the game.
#[test]
fn the_players_lines_are_read_whatever_their_encoding() {
    let typed: &[u8] = b"@Marta, caf\xe9?\r\nokay, bye\n\nend";
    let lines: Vec<String> = cli::player_lines(typed)
        .collect::<Result<_, _>>()
        .expect("read");
    assert_eq!(lines, ["@Marta, caf\u{FFFD}?", "okay, bye", "", "end"]);
}

#[test]
fn a_game_of_no_turns_says_no_decision_was_asked() {
    let (app, _) = tavern(
        BackendChoice::Offline { seed: 0 },
        true,
        Box::new(Transcript::default()),
    );
    assert_eq!(
        print::decisions_asked(app.world()),
        "\nDecisions asked of the model: none"
    );
}

#[test]
fn a_game_whose_server_answered_nothing_says_so_and_what_to_check() {
    let refused = crate::support::RefusedPort::new();
    let server = bevy_loom::llm::OpenAiSettings {
        base_url: refused.base_url(),
        ..default()
    };
    let llm = LlmPlugin {
        backend: BackendChoice::OpenAi(server),
        // Refused at once, not waited for as a server still starting.
        retry: bevy_loom::llm::RetryPolicy {
            startup_grace: Duration::ZERO,
            ..default()
        },
        ..default()
    };
    let (mut app, _) = tavern_with(llm, true, Box::new(Transcript::default()));
    assert_eq!(
        print::nobody_answered(app.world()),
        None,
        "nothing asked yet"
    );
    // An answer to another request (a warm-up, a narration) answers no decision.
    app.world_mut().write_message(bevy_loom::llm::LlmResponse {
        id: bevy_loom::llm::RequestId(u64::MAX),
        result: Ok(bevy_loom::llm::LlmReply::default()),
        latency: Duration::ZERO,
        first_token: None,
        retries: 0,
    });
    play(&mut app);
    let said = print::nobody_answered(app.world()).expect("no decision was answered");
    assert!(
        said.starts_with("The model server answered none of the 3 decisions asked of it")
            && said.contains(&refused.base_url()),
        "{said}"
    );
}

#[test]
fn a_game_whose_server_answered_says_nothing_more() {
    let (mut app, _) = tavern(
        BackendChoice::Offline { seed: 0 },
        true,
        Box::new(Transcript::default()),
    );
    play(&mut app);
    assert_eq!(print::nobody_answered(app.world()), None);
}

#[test]
fn the_contents_warnings_are_told() {
    let (app, _) = tavern(
        BackendChoice::Offline { seed: 0 },
        true,
        Box::new(Transcript::default()),
    );
    assert_eq!(print::content_warnings(app.world()), Vec::<String>::new());
    let mut files = dance_mod();
    files[3].1 = json!({ "id": "dance:vesk", "persona": { "name": "Vesk", "role": "a dancer" },
                         "policy": { "allowedActions": ["dance:reel"] } })
    .to_string();
    let content = content_dir(&files);
    let mut app = HeadlessApp::new(content.path()).build();
    wait_for_content(&mut app);
    let told = print::content_warnings(app.world());
    assert_eq!(told.len(), 1, "{told:#?}");
    assert!(
        told[0].starts_with("content warning: mods/dance/actors/vesk.actor.json at /policy/allowedActions/0: no loaded action has the id `dance:reel`"),
        "{told:#?}"
    );
}

/// The example rules check a request against the world as it is: an item gone, or one
/// the actor no longer carries, is refused, not carried out (nor a panic).
#[test]
fn the_rules_refuse_an_item_gone_or_not_held() {
    let mut world = World::new();
    let room = world.spawn((Place, DisplayName("the floor".into()))).id();
    let vesk = world
        .spawn((Character, DisplayName("Vesk".into()), InPlace(room)))
        .id();
    let nowhere = world.spawn((Character, DisplayName("Ghost".into()))).id();
    let mug = world.spawn((DisplayName("mug".into()), InPlace(room))).id();
    let request = |actor: Entity, action: &str, item: Entity| ActionRequest {
        actor,
        action_id: action.into(),
        targets: [item].into_iter().collect(),
        command: format!("{action} it"),
        parameters: Default::default(),
        plan: None,
    };
    let reason = |world: &mut World, request: ActionRequest| {
        let verdict = rules::judge(world, request);
        (verdict.report.failure_reason, verdict.refusal.is_some())
    };
    // Dropping a mug she does not carry.
    let dropped = reason(&mut world, request(vesk, "items:drop", mug));
    assert_eq!(dropped, (Some("not_held".to_owned()), true));
    assert_eq!(world.get::<InPlace>(mug), Some(&InPlace(room)));
    // Picking up from nowhere what is nowhere.
    let loose = world.spawn(DisplayName("feather".into())).id();
    let picked = reason(&mut world, request(nowhere, "items:pick_up", loose));
    assert_eq!(picked, (Some("not_here".to_owned()), true));
    // Anything with a mug gone.
    world.despawn(mug);
    for action in ["items:pick_up", "items:drop", "items:give"] {
        let gone = reason(&mut world, request(vesk, action, mug));
        assert_eq!(gone, (Some("not_here".to_owned()), true), "{action}");
    }
}
