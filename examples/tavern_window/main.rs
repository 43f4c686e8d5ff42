//! The tavern in a window: its places as rooms, every character a labelled token that
//! moves when it changes place, a speech line over a character when it speaks, and the
//! narration below, with the debug overlay on F12 (Tab picks an actor). The same game
//! as the `tavern` example, with the same rules, on the offline backend unless
//! `LOOM_LLM_URL` names a server. A turn starts every few seconds, once the last one
//! is resolved.
//!
//! ```text
//! cargo run --example tavern_window --features overlay -- [--turns N] [--seed S] [--no-tasks]
//!     [--warm-up] [--content DIR] [--scene FILE] [--show-overlay] [--frames N [--screenshot FILE.png]]
//! ```
//!
//! `--frames N` quits after N frames; with `--screenshot`, it first saves the window
//! as a PNG. `--show-overlay` starts with the overlay shown.

// Shared with the terminal tavern, which uses the rest of them.
#[allow(dead_code)]
#[path = "../tavern/cli.rs"]
mod cli;
#[allow(dead_code)]
#[path = "../tavern/print.rs"]
mod print;
#[path = "../tavern/rules.rs"]
mod rules;
mod scene;
#[path = "../tavern/setup.rs"]
mod setup;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy::render::view::window::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use bevy::window::WindowResolution;
use bevy_loom::overlay::LoomDebugOverlayPlugin;
use bevy_loom::prelude::*;

use print::{Printer, TranscriptPlugin, Turn};
use rules::{RulesPlugin, SceneOrder};
use scene::{PlaceOrder, ScenePlugin, Transcript};

const USAGE: &str = "usage: tavern_window [--turns N] [--seed S] [--no-tasks] [--warm-up] [--content DIR] [--scene FILE] [--show-overlay] [--frames N [--screenshot FILE.png]]";

/// Seconds between the starts of two turns, so each can be watched.
const SECONDS_PER_TURN: f32 = 3.0;

/// What the command line asked for.
struct WindowOptions {
    play: cli::Options,
    /// Quit after this many frames.
    frames: Option<u32>,
    /// Save the window here first.
    screenshot: Option<PathBuf>,
    show_overlay: bool,
}

fn main() -> ExitCode {
    let played = parse_args().and_then(|options| match options {
        Some(options) => run(options),
        None => {
            cli::print_usage(USAGE);
            Ok(())
        }
    });
    match played {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// The window's own options, then the tavern's; turns go on without `--turns`. `None`
/// when they ask for the usage.
fn parse_args() -> Result<Option<WindowOptions>, String> {
    let mut args = cli::arguments()?.into_iter();
    let mut rest = Vec::new();
    let (mut frames, mut screenshot, mut show_overlay) = (None, None, false);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--frames" => {
                let count = value("--frames")?;
                let parsed = count.trim().parse();
                let problem =
                    |_| format!("--frames: `{count}` is not a whole number (0 or more)\n{USAGE}");
                frames = Some(parsed.map_err(problem)?);
            }
            "--screenshot" => {
                let path = PathBuf::from(value("--screenshot")?);
                let png = path
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("png"));
                if !png {
                    let path = path.display();
                    return Err(format!("--screenshot: `{path}` must end in .png\n{USAGE}"));
                }
                screenshot = Some(path);
            }
            "--show-overlay" => show_overlay = true,
            "--interactive" | "--script" | "--show-prompt" => {
                return Err(format!(
                    "{arg} is for the terminal tavern: cargo run --example tavern -- {arg}"
                ));
            }
            "--help" | "-h" => return Ok(None),
            // The tavern's options that take a value: the value is no option.
            "--content" | "--scene" | "--turns" | "--seed" => {
                let given = value(&arg)?;
                rest.extend([arg, given]);
            }
            _ => rest.push(arg),
        }
    }
    if screenshot.is_some() && frames.is_none() {
        return Err(format!("--screenshot needs --frames N\n{USAGE}"));
    }
    let endless = !rest.iter().any(|arg| arg == "--turns");
    let play = cli::parse(rest.into_iter()).map_err(|e| e.replace(cli::USAGE, USAGE))?;
    let Some(mut play) = play else {
        return Ok(None);
    };
    if endless {
        play.turns = u32::MAX;
    }
    Ok(Some(WindowOptions {
        play,
        frames,
        screenshot,
        show_overlay,
    }))
}

fn run(options: WindowOptions) -> Result<(), String> {
    let play = setup::read_play(&options.play)?;
    let transcript = Transcript::default();
    let mut app = App::new();
    app.add_plugins((
        DefaultPlugins
            .set(AssetPlugin {
                file_path: play.content.to_string_lossy().into_owned(),
                watch_for_changes_override: Some(cfg!(feature = "hot_reload")),
                ..default()
            })
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title: format!("bevy_loom — {}", play.scene.name),
                    resolution: WindowResolution::new(1280, 720),
                    ..default()
                }),
                ..default()
            }),
        LoomPlugins
            .set(setup::llm_plugin(options.play.seed)?)
            .set(SmartActorPlugin {
                settings: SmartActorSettings {
                    offer_tasks: options.play.tasks,
                    warm_up: options.play.warm_up,
                    ..default()
                },
            }),
        LoomDebugOverlayPlugin {
            visible: options.show_overlay,
            ..default()
        },
        RulesPlugin,
        TranscriptPlugin { show_prompt: false },
        ScenePlugin,
    ))
    // A turn-based game: a plan takes one step a turn.
    .insert_resource(PlanningSettings {
        cadence: PlanCadence::EveryTurn,
        ..default()
    })
    .insert_non_send(Printer::new(Box::new(transcript.writer())))
    .insert_resource(transcript)
    .insert_resource(Turns {
        left: options.play.turns,
        number: 0,
        started_at: None,
    })
    .insert_resource(Frames {
        left: options.frames,
        screenshot: options.screenshot,
    })
    .insert_resource(ToSpawn(Some((play, options.play))))
    .add_systems(Update, spawn_when_loaded.run_if(content_loaded))
    .add_systems(
        Update,
        next_turn
            .before(LoomSystems::Sense)
            .run_if(resource_exists::<SceneOrder>),
    )
    .add_systems(Last, count_frames);
    match app.run() {
        AppExit::Success => Ok(()),
        AppExit::Error(code) => Err(format!("the window closed with an error ({code})")),
    }
}

/// The scene to spawn once the content is loaded, and the options it is played with.
#[derive(Resource)]
struct ToSpawn(Option<(setup::Play, cli::Options)>);

/// Spawns the scene the first frame the content is loaded, and prints the header; a
/// scene that does not fit the content quits with why.
fn spawn_when_loaded(world: &mut World) {
    let Some((play, options)) = world.resource_mut::<ToSpawn>().0.take() else {
        return;
    };
    match setup::spawn_scene(world, &play) {
        Ok(spawned) => {
            let places = (play.scene.places.iter())
                .filter_map(|place| spawned.entities.get(&place.id).copied())
                .collect();
            world.insert_resource(PlaceOrder(places));
            world.insert_resource(SceneOrder::new(&spawned));
            let header = print::header(world, &play.scene, (Some(options.turns), options.seed));
            world.non_send_mut::<Printer>().line(&header);
        }
        Err(why) => {
            eprintln!("{why}");
            world.write_message(AppExit::error());
        }
    }
}

/// How many turns are left to play, and when the current one started.
#[derive(Resource)]
struct Turns {
    left: u32,
    number: u32,
    started_at: Option<f32>,
}

/// Starts the next turn once the last one is resolved and some seconds have passed.
fn next_turn(
    time: Res<Time>,
    mut turns: ResMut<Turns>,
    mut turn: ResMut<Turn>,
    mut ended: MessageWriter<TurnEnded>,
    mut printer: NonSendMut<Printer>,
) {
    let now = time.elapsed_secs();
    let due = turns
        .started_at
        .is_none_or(|started| now - started >= SECONDS_PER_TURN);
    if turns.left == 0 || turn.in_progress() || !due {
        return;
    }
    turns.left -= 1;
    turns.number += 1;
    turns.started_at = Some(now);
    printer.line(&format!("-- Turn {} --", turns.number));
    turn.open = true;
    ended.write(TurnEnded);
}

/// Frames left before quitting, and where to save the window first.
#[derive(Resource)]
struct Frames {
    left: Option<u32>,
    screenshot: Option<PathBuf>,
}

/// Counts down `--frames`: then saves the screenshot and quits once it is written (with
/// an error when it could not be), or quits at once without one.
fn count_frames(
    mut frames: ResMut<Frames>,
    mut commands: Commands,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(left) = frames.left.as_mut() else {
        return;
    };
    *left = left.saturating_sub(1);
    if *left > 0 {
        return;
    }
    frames.left = None;
    match frames.screenshot.take() {
        Some(path) => {
            // It is written anew, and there only once saved: an old one does not
            // stand for it (a clock or a file system's coarse times could).
            if let Err(error) = std::fs::remove_file(&path)
                && error.kind() != std::io::ErrorKind::NotFound
            {
                eprintln!("the screenshot cannot replace {}: {error}", path.display());
                exit.write(AppExit::error());
                return;
            }
            let mut save = save_to_disk(path.clone());
            let saved = move |captured: On<ScreenshotCaptured>,
                              mut exit: MessageWriter<AppExit>| {
                // It logs why it could not save, and goes on.
                save(captured);
                if path.is_file() {
                    exit.write(AppExit::Success);
                } else {
                    eprintln!("the screenshot could not be saved to {}", path.display());
                    exit.write(AppExit::error());
                }
            };
            commands.spawn(Screenshot::primary_window()).observe(saved);
        }
        None => {
            exit.write(AppExit::Success);
        }
    }
}

/// What the transcript printer writes: to the terminal, and line by line into the
/// window's narration log.
impl Transcript {
    fn writer(&self) -> TranscriptWriter {
        TranscriptWriter {
            lines: Arc::clone(&self.lines),
            pending: Vec::new(),
            printing: true,
        }
    }
}

struct TranscriptWriter {
    lines: Arc<Mutex<Vec<String>>>,
    pending: Vec<u8>,
    /// Whether stdout still takes what is written.
    printing: bool,
}

impl Write for TranscriptWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        // The window's log is kept whatever becomes of stdout (`| head` closes it):
        // once it fails, only the log is written.
        if self.printing {
            self.printing = std::io::stdout().write_all(bytes).is_ok();
        }
        self.pending.extend_from_slice(bytes);
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..end]).into_owned();
            let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
            lines.push(line);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.printing {
            self.printing = std::io::stdout().flush().is_ok();
        }
        Ok(())
    }
}
