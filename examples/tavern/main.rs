//! A headless tavern: smart NPCs take turns on real content, the game's own rule
//! system carries out what they choose and reports it, and narration weaves the
//! tavern's authored fragments into a line for each action. Prints a transcript.
//!
//! ```text
//! cargo run --example tavern -- [--turns N] [--seed S] [--show-prompt] [--no-tasks]
//!                               [--content DIR] [--scene FILE]
//!                               [--interactive | --script FILE]
//! ```
//!
//! Marta may take on tasks (serving a drink, fetching from the cellar), carried out one
//! step a turn without asking the model; `--no-tasks` offers only actions. The run
//! ends with how many decisions each actor asked the model for.
//!
//! With `--interactive` each line you type is the player's for one turn (`@Marta, any
//! rooms?` starts a conversation, `okay, bye` ends it); `--script FILE` reads the
//! lines from a file instead. Either way the game runs until the lines run out.
//!
//! With `LOOM_LLM_URL` set it asks that server; otherwise the offline backend answers.

mod cli;
mod print;
mod rules;
mod setup;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy_loom::prelude::*;
use bevy_loom::testing::{CONTENT_TIMEOUT, HeadlessApp, wait_for_content};

use cli::{Options, PlayerLines};
use print::{Printer, TranscriptPlugin, Turn};
use rules::{RulesPlugin, SceneOrder};

fn main() -> ExitCode {
    match cli::parse_args().and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// Loads the content and the scene, then plays the turns.
fn run(options: Options) -> Result<(), String> {
    let play = setup::read_play(&options)?;
    let actors = SmartActorSettings {
        offer_tasks: options.tasks,
        ..default()
    };
    let mut app = HeadlessApp::new(&play.content)
        .watch(cfg!(feature = "hot_reload"))
        .llm(setup::llm_plugin(options.seed))
        .actors(actors)
        .build();
    // A turn-based game: a plan takes one step a turn.
    app.insert_resource(PlanningSettings {
        cadence: PlanCadence::EveryTurn,
        ..default()
    });
    app.insert_non_send(Printer::stdout()).add_plugins((
        RulesPlugin,
        TranscriptPlugin {
            show_prompt: options.show_prompt,
        },
    ));
    wait_for_content(&mut app, CONTENT_TIMEOUT)
        .map_err(|error| format!("{}: {error}", play.content.display()))?;

    let spawned = setup::spawn_scene(app.world_mut(), &play)?;
    app.insert_resource(SceneOrder::new(&spawned));

    let header = print::header(app.world(), &play.scene, (options.turns, options.seed));
    let give_up = app.world().resource::<LlmBridge>().default_deadline() + Duration::from_secs(5);
    print(&mut app, &header);
    play_turns(&mut app, &options, give_up)?;
    let asked = print::decisions_asked(app.world());
    print(&mut app, &asked);
    Ok(())
}

/// Plays the turns: a fixed number, or one per line of the player's.
fn play_turns(app: &mut App, options: &Options, give_up: Duration) -> Result<(), String> {
    let mut lines: Box<dyn Iterator<Item = String>> = match &options.player {
        None => Box::new(std::iter::empty()),
        Some(PlayerLines::Stdin) => {
            print(
                app,
                "(type a line for each turn: `@Marta, any rooms?`; end with Ctrl-D)",
            );
            Box::new(std::io::stdin().lines().map_while(Result::ok))
        }
        Some(PlayerLines::Script(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("script {}: {e}", path.display()))?;
            Box::new(
                text.lines()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
                    .into_iter(),
            )
        }
    };
    let turns = if options.player.is_some() {
        u32::MAX
    } else {
        options.turns
    };
    for number in 1..=turns {
        if let Some(stopped) = app.world().non_send::<Printer>().stopped() {
            return stopped;
        }
        if options.player.is_some() {
            let Some(line) = lines.next() else {
                break;
            };
            print(app, &format!("\n-- Turn {number} --\n> {line}"));
            app.world_mut().write_message(PlayerSaid { text: line });
        } else {
            print(app, &format!("\n-- Turn {number} --"));
        }
        app.world_mut().resource_mut::<Turn>().open = true;
        app.world_mut().write_message(TurnEnded);
        let started = Instant::now();
        while app.world().resource::<Turn>().in_progress() {
            app.update();
            if let Some(stopped) = app.world().non_send::<Printer>().stopped() {
                return stopped;
            }
            if started.elapsed() > give_up {
                return Err("the model did not answer in time".into());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    app.world()
        .non_send::<Printer>()
        .stopped()
        .unwrap_or(Ok(()))
}

fn print(app: &mut App, text: &str) {
    app.world_mut().non_send_mut::<Printer>().line(text);
}
