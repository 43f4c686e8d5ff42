//! The tavern's command line: which content and scene to play, for how many turns,
//! and where the player's lines come from.

use std::io::Write;
use std::num::{IntErrorKind, ParseIntError};
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub const USAGE: &str = "usage: tavern [--turns N] [--seed S] [--show-prompt] [--no-tasks] [--warm-up] [--content DIR] [--scene FILE] [--interactive | --script FILE]";

/// What the command line asked for.
#[derive(Clone)]
pub struct Options {
    pub content: PathBuf,
    pub scene: PathBuf,
    pub turns: u32,
    pub seed: u64,
    pub show_prompt: bool,
    /// Whether smart actors may take on tasks (plans) as well as actions.
    pub tasks: bool,
    /// Whether smart actors send their system message ahead when they appear.
    pub warm_up: bool,
    /// Where the player's lines come from, if the player speaks.
    pub player: Option<PlayerLines>,
}

/// Where the player's lines come from.
#[derive(Clone)]
pub enum PlayerLines {
    Stdin,
    Script(PathBuf),
}

/// The process's arguments (without the program's name), or the message to print when
/// one is not valid text.
pub fn arguments() -> Result<Vec<String>, String> {
    let args = std::env::args_os().skip(1).map(|arg| {
        arg.into_string().map_err(|arg| {
            format!(
                "the argument `{}` is not valid text: give the file or folder a name in UTF-8",
                arg.to_string_lossy()
            )
        })
    });
    args.collect()
}

/// Prints `usage`, asked for with `--help`: a reader that went away (`--help | head
/// -0`) read all it wanted.
pub fn print_usage(usage: &str) {
    _ = writeln!(std::io::stdout(), "{usage}");
}

/// The player's lines read from `reader`, a line each turn: a line break ends one,
/// with or without a carriage return before it, and a byte that is not UTF-8 reads
/// as `�`. An error is the message to print.
pub fn player_lines(reader: impl std::io::BufRead) -> impl Iterator<Item = Result<String, String>> {
    reader.split(b'\n').map(|line| {
        let line = line.map_err(|error| format!("reading the player's lines: {error}"))?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        Ok(String::from_utf8_lossy(line).into_owned())
    })
}

/// `text` as the whole number `option` takes, or the message that says what is wrong.
fn whole_number<N: FromStr<Err = ParseIntError>>(option: &str, text: &str) -> Result<N, String> {
    text.trim().parse().map_err(|error: ParseIntError| {
        let problem = match error.kind() {
            IntErrorKind::Empty => return format!("{option} needs a whole number\n{USAGE}"),
            IntErrorKind::PosOverflow => "is too large",
            _ => "is not a whole number (0 or more)",
        };
        format!("{option}: `{text}` {problem}\n{USAGE}")
    })
}

/// Reads the options from `args` (without the program's name): `None` when they ask
/// for the usage.
pub fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options {
        content: Path::new(env!("CARGO_MANIFEST_DIR")).join("assets"),
        scene: PathBuf::from("scenes/tavern.scene.json"),
        turns: 5,
        seed: 0,
        show_prompt: false,
        tasks: true,
        warm_up: false,
        player: None,
    };
    let mut turns_given = false;
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--content" => options.content = PathBuf::from(value("--content")?),
            "--scene" => options.scene = PathBuf::from(value("--scene")?),
            "--turns" => {
                options.turns = whole_number("--turns", &value("--turns")?)?;
                turns_given = true;
            }
            "--seed" => options.seed = whole_number("--seed", &value("--seed")?)?,
            "--show-prompt" => options.show_prompt = true,
            "--no-tasks" => options.tasks = false,
            "--warm-up" => options.warm_up = true,
            "--interactive" | "--script" => {
                if let Some(given) = &options.player {
                    let given = match given {
                        PlayerLines::Stdin => "--interactive",
                        PlayerLines::Script(_) => "--script",
                    };
                    return Err(if given == arg {
                        format!("{arg} is given twice: give it once\n{USAGE}")
                    } else {
                        format!(
                            "--interactive and --script are two ways to play: give one\n{USAGE}"
                        )
                    });
                }
                options.player = Some(match arg.as_str() {
                    "--script" => PlayerLines::Script(PathBuf::from(value("--script")?)),
                    _ => PlayerLines::Stdin,
                });
            }
            "--help" | "-h" => return Ok(None),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if turns_given && options.player.is_some() {
        return Err(format!(
            "--turns is for a game without a player: with --interactive or --script, each \
             line is a turn until the lines run out\n{USAGE}"
        ));
    }
    Ok(Some(options))
}
