//! Playing the tavern's turns: each opens with `TurnEnded` (and the player's line,
//! when the player speaks) and lasts until its decisions, rules and narration are done.

use std::time::{Duration, Instant};

use bevy::app::Plugins;
use bevy::prelude::*;
use bevy_loom::prelude::*;
use bevy_loom::testing::{CONTENT_TIMEOUT, HeadlessApp, wait_for_content};

use super::cli::{Options, PlayerLines, player_lines};
use super::print::{self, Printer, TranscriptPlugin, Turn};
use super::rules::{RulesPlugin, SceneOrder};
use super::setup::{self, Play};

/// How long a turn may go on with nothing asked of the model before it is stuck.
const STALLED: Duration = Duration::from_secs(5);
/// How long a turn waits on the model with no answer before the player is told so.
const QUIET: Duration = Duration::from_secs(3);

/// The tavern without a window, with `plugins` of the caller's, its content loaded and
/// its scene spawned, printing its transcript with `printer`.
pub fn headless_tavern<M>(
    (options, play): (&Options, &Play),
    printer: Printer,
    plugins: impl Plugins<M>,
) -> Result<App, String> {
    let actors = SmartActorSettings {
        offer_tasks: options.tasks,
        warm_up: options.warm_up,
        ..default()
    };
    let mut app = HeadlessApp::new(&play.content)
        .watch(cfg!(feature = "hot_reload"))
        .llm(setup::llm_plugin(options.seed)?)
        .actors(actors)
        .build();
    // A turn-based game: a plan takes one step a turn.
    app.insert_resource(PlanningSettings {
        cadence: PlanCadence::EveryTurn,
        ..default()
    });
    // What the bridge warns of, on stderr (a cassette that could not be written, a
    // server with fewer slots than set); what an actor's turn came to is the
    // transcript's to say. A content problem is told once, by the transcript as a
    // content error or warning with what to fix, not again by the content's log nor
    // by the asset server (with a backtrace, under RUST_BACKTRACE).
    let log = bevy::log::LogPlugin {
        level: bevy::log::Level::WARN,
        filter: "wgpu=error,bevy_asset::server=off,bevy_loom::content=off,\
                 bevy_loom::actors=error,bevy_loom::narration=error"
            .to_owned(),
        ..default()
    };
    app.insert_non_send(printer).add_plugins((
        log,
        RulesPlugin,
        TranscriptPlugin {
            show_prompt: options.show_prompt,
        },
        plugins,
    ));
    wait_for_content(&mut app, CONTENT_TIMEOUT)
        .map_err(|error| format!("{}: {error}", play.content.display()))?;
    for warning in print::content_warnings(app.world()) {
        print(&mut app, &warning);
    }
    let spawned = setup::spawn_scene(app.world_mut(), play)?;
    app.insert_resource(SceneOrder::new(&spawned));
    Ok(app)
}

/// Plays the turns: a fixed number, or one per line of the player's.
pub fn play_turns(app: &mut App, options: &Options) -> Result<(), String> {
    let mut lines: Box<dyn Iterator<Item = Result<String, String>>> = match &options.player {
        None => Box::new(std::iter::empty()),
        Some(PlayerLines::Stdin) => {
            print(
                app,
                "(type a line for each turn: `@Marta, any rooms?`; end with Ctrl-D)",
            );
            Box::new(player_lines(std::io::stdin().lock()))
        }
        Some(PlayerLines::Script(path)) => {
            // Read whole before play: a file that cannot be read is told at once.
            let script =
                std::fs::read(path).map_err(|e| format!("script {}: {e}", path.display()))?;
            Box::new(player_lines(std::io::Cursor::new(script)))
        }
    };
    // With a player, a turn a line until the lines run out.
    let turns = if options.player.is_some() {
        u32::MAX
    } else {
        options.turns
    };
    // The first wait on the model long enough to wonder about is explained, once: a
    // model on a CPU, or a server that does not answer.
    let mut told_waiting = false;
    for number in 1..=turns {
        if let Some(stopped) = app.world().non_send::<Printer>().stopped() {
            return stopped;
        }
        if options.player.is_some() {
            let Some(line) = lines.next().transpose()? else {
                break;
            };
            // Echoed as the crate hears it: without what content may not hold either
            // (a script's escape, a mark that reorders the line).
            let echoed: String = (line.chars())
                .filter(|&c| bevy_loom::content::forbidden_character(c).is_none())
                .collect();
            print(app, &format!("\n-- Turn {number} --\n> {echoed}"));
            app.world_mut().write_message(PlayerSaid { text: line });
        } else {
            print(app, &format!("\n-- Turn {number} --"));
        }
        app.world_mut().resource_mut::<Turn>().open = true;
        app.world_mut().write_message(TurnEnded);
        // Every request to the model ends, answered or not, so a turn ends unless
        // something waits for what no request will bring.
        let mut idle_since: Option<Instant> = None;
        let (began, outcomes) = (Instant::now(), outcomes(app));
        while app.world().resource::<Turn>().in_progress() {
            app.update();
            if let Some(stopped) = app.world().non_send::<Printer>().stopped() {
                return stopped;
            }
            let waiting = !app.world().resource::<LlmBridge>().is_idle();
            if !told_waiting
                && waiting
                && began.elapsed() > QUIET
                && self::outcomes(app) == outcomes
            {
                told_waiting = true;
                let notice = waiting_notice(app.world().resource::<LlmBridge>());
                print(app, &notice);
            }
            if !waiting {
                if idle_since.get_or_insert_with(Instant::now).elapsed() > STALLED {
                    return Err(format!(
                        "turn {number} did not end, and nothing waits on the model"
                    ));
                }
            } else {
                idle_since = None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    app.world()
        .non_send::<Printer>()
        .stopped()
        .unwrap_or(Ok(()))
}

/// How many requests to the model have ended, answered or not.
fn outcomes(app: &App) -> u64 {
    let stats = app.world().resource::<LlmStats>();
    stats.completed + stats.failed + stats.cancelled + stats.timed_out + stats.too_slow
}

/// What the player is told when the model has not answered for a while: what it
/// waits on, and why the server last failed, if it did.
fn waiting_notice(bridge: &LlmBridge) -> String {
    let seconds = QUIET.as_secs();
    let mut notice = format!(
        "(waiting for the model: no answer yet after {seconds} s from {}",
        bridge.backend_description()
    );
    let health = bridge.endpoint_health();
    if let Some(failure) = health.iter().find_map(|h| h.last_failure.as_deref()) {
        notice.push_str("; it last failed: ");
        notice.push_str(failure);
    } else if health.iter().any(|h| h.loading) {
        notice.push_str("; it is not ready: loading its model, or not accepting connections yet");
    }
    notice.push(')');
    notice
}

pub fn print(app: &mut App, text: &str) {
    app.world_mut().non_send_mut::<Printer>().line(text);
}
