//! What a model on this machine will feel like in a game: plays the tavern (its smart
//! actors deciding, narration on) against the server `LOOM_LLM_URL` names, or the
//! offline backend, and prints for each decision and each narration the prompt's
//! tokens, those the server served from its cache, those it read anew, the answer's
//! tokens, the time to the answer and to its first piece, and whether it was
//! answered, not sent as too slow for its deadline, or lost; then totals, medians,
//! and the speeds the bridge measured. It fails (exit code 1) when the server
//! answered none of the decisions, saying why.
//!
//! ```text
//! cargo run --release --example economy -- [--turns N] [--seed S] [--no-tasks]
//!                                          [--warm-up] [--show-prompt]
//!                                          [--content DIR] [--scene FILE]
//! ```

// Shared with the terminal tavern, which uses the rest of them.
#[allow(dead_code)]
#[path = "../tavern/cli.rs"]
mod cli;
mod ledger;
#[path = "../tavern/play.rs"]
mod play;
#[allow(dead_code)]
#[path = "../tavern/print.rs"]
mod print;
#[path = "../tavern/rules.rs"]
mod rules;
#[path = "../tavern/setup.rs"]
mod setup;

use std::process::ExitCode;

use bevy::prelude::*;
use bevy_loom::prelude::*;

use ledger::{Ledger, LedgerPlugin};
use play::{headless_tavern, play_turns, print};
use print::Printer;

const USAGE: &str = "usage: economy [--turns N] [--seed S] [--no-tasks] [--warm-up] [--show-prompt] [--content DIR] [--scene FILE]";

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

/// The tavern's options, without a player: the report is of the game's own turns;
/// `None` when they ask for the usage.
fn parse_args() -> Result<Option<cli::Options>, String> {
    let args = cli::arguments()?;
    if let Some(arg) =
        (args.iter()).find(|arg| ["--interactive", "--script"].contains(&arg.as_str()))
    {
        return Err(format!(
            "{arg} is for the terminal tavern: cargo run --example tavern -- {arg}"
        ));
    }
    cli::parse(args.into_iter()).map_err(|e| e.replace(cli::USAGE, USAGE))
}

fn run(options: cli::Options) -> Result<(), String> {
    let play = setup::read_play(&options)?;
    let mut app = headless_tavern((&options, &play), Printer::stdout(), LedgerPlugin)?;
    let header = print::header(
        app.world(),
        &play.scene,
        (Some(options.turns), options.seed),
    );
    print(&mut app, &header);
    play_turns(&mut app, &options)?;
    let tables = ledger::tables(&app.world().resource::<Ledger>().rows);
    print(&mut app, &tables);
    let speeds = measured_speeds(app.world());
    print(&mut app, &speeds);
    // Every row "lost" for a server that never answered is no economy to compare.
    print::nobody_answered(app.world()).map_or(Ok(()), Err)
}

/// The speeds the bridge measured of each model server.
fn measured_speeds(world: &World) -> String {
    let endpoints = world.resource::<LlmBridge>().endpoint_health();
    let lines: Vec<String> = (endpoints.iter())
        .map(|endpoint| {
            let speed = |rate: Option<f32>| rate.map_or("-".to_owned(), |r| format!("{r:.1}"));
            format!(
                "{}: reads {} prompt tokens/s, writes {} answer tokens/s",
                endpoint.endpoint,
                speed(endpoint.prompt_tokens_per_second),
                speed(endpoint.answer_tokens_per_second)
            )
        })
        .collect();
    format!("\nMeasured\n  {}", lines.join("\n  "))
}
