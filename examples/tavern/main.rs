//! A headless tavern: smart NPCs take turns on real content, the game's own rule
//! system carries out what they choose and reports it, and narration weaves the
//! tavern's authored fragments into a line for each action. Prints a transcript.
//!
//! ```text
//! cargo run --example tavern -- [--turns N] [--seed S] [--show-prompt] [--no-tasks]
//!                               [--warm-up] [--content DIR] [--scene FILE]
//!                               [--interactive | --script FILE]
//! ```
//!
//! Marta may take on tasks (serving a drink, fetching from the cellar), carried out one
//! step a turn without asking the model; `--no-tasks` offers only actions. `--warm-up`
//! sends each smart actor's system message to the server as it appears. The run
//! ends with how many decisions each actor asked the model for, and fails when the
//! model server answered none of them.
//!
//! With `--interactive` each line you type is the player's for one turn (`@Marta, any
//! rooms?` starts a conversation, `okay, bye` ends it); `--script FILE` reads the
//! lines from a file instead. Either way the game runs until the lines run out.
//!
//! With `LOOM_LLM_URL` set it asks that server; otherwise the offline backend answers.

mod cli;
mod play;
mod print;
mod rules;
mod setup;

use std::process::ExitCode;

use cli::Options;
use play::{headless_tavern, play_turns, print};
use print::Printer;

fn main() -> ExitCode {
    let options = cli::arguments().and_then(|args| cli::parse(args.into_iter()));
    let played = options.and_then(|options| match options {
        Some(options) => run(options),
        None => {
            cli::print_usage(cli::USAGE);
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

/// Loads the content and the scene, then plays the turns.
fn run(options: Options) -> Result<(), String> {
    let play = setup::read_play(&options)?;
    let mut app = headless_tavern((&options, &play), Printer::stdout(), ())?;
    let turns = options.player.is_none().then_some(options.turns);
    let header = print::header(app.world(), &play.scene, (turns, options.seed));
    print(&mut app, &header);
    play_turns(&mut app, &options)?;
    let asked = print::decisions_asked(app.world());
    print(&mut app, &asked);
    print::nobody_answered(app.world()).map_or(Ok(()), Err)
}
