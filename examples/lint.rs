//! Lints a content folder's narrative: missing verbs and failure reasons per entity,
//! pools below the minimum and recommended sizes, variety per verb, verb coverage and
//! content errors, including those of the scenes in its `scenes/` folder (keys that
//! name no loaded actor spec or narrative file), and warnings such as content files no
//! manifest lists, tasks no actor spec may be offered and method steps whose action no
//! actor spec may take. Put it in a game's CI.
//!
//! ```text
//! cargo run --example lint -- [CONTENT DIR]     # default: this crate's assets/
//! ```
//!
//! Exits with 1 when there are content errors, 2 when the folder cannot be loaded or
//! the arguments are wrong, 0 otherwise (small pools and unlisted files are only
//! warnings).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bevy_loom::content::lint::{lint_narrative, lint_scene};
use bevy_loom::prelude::*;
use bevy_loom::testing::registry_from_folder;

const USAGE: &str = "usage: lint [CONTENT DIR]";

fn main() -> ExitCode {
    if std::env::args_os()
        .skip(1)
        .any(|arg| arg == "--help" || arg == "-h")
    {
        // A reader that went away (`--help | head -0`) read all it wanted.
        _ = writeln!(std::io::stdout(), "{USAGE}");
        return ExitCode::SUCCESS;
    }
    let folder = match parse_args() {
        Ok(folder) => folder,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let (registry, load_errors) = match load(&folder) {
        Ok(loaded) => loaded,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let scene_errors = match lint_scenes(&folder, &registry) {
        Ok(errors) => errors,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let report = lint_narrative(&registry)
        .with_load_errors(load_errors)
        .with_load_errors(scene_errors);
    let mut text = format!("{report}\n");
    // Pools below the minimum are listed above, by entity.
    let warnings: Vec<&ContentError> = (registry.warnings().iter())
        .filter(|w| {
            !report
                .entities
                .iter()
                .any(|e| e.file == w.file && e.small_pools.iter().any(|p| p.pointer == w.pointer))
        })
        .collect();
    if !warnings.is_empty() {
        text.push_str(&format!("\nwarnings ({}):\n", warnings.len()));
        for warning in warnings {
            text.push_str(&format!("  {warning}\n"));
        }
    }
    // A reader that stopped early (`lint | head`) is no error of the content's.
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("cannot print the report: {error}");
            ExitCode::from(2)
        }
        _ if report.has_errors() => ExitCode::FAILURE,
        _ => ExitCode::SUCCESS,
    }
}

/// The folder to lint: any path the system can name, in UTF-8 or not.
fn parse_args() -> Result<PathBuf, String> {
    let mut args = std::env::args_os().skip(1);
    let folder = match args.next() {
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("assets"),
        Some(flag) if flag.as_encoded_bytes().starts_with(b"-") => {
            let flag = flag.to_string_lossy();
            return Err(format!("unknown option `{flag}`\n{USAGE}"));
        }
        Some(folder) => PathBuf::from(folder),
    };
    if let Some(extra) = args.next() {
        let extra = extra.to_string_lossy();
        return Err(format!("unexpected argument `{extra}`\n{USAGE}"));
    }
    Ok(folder)
}

/// Loads the folder headlessly, as a game would, and returns the registry and every
/// content error written on the way.
fn load(folder: &Path) -> Result<(ContentRegistry, Vec<ContentError>), String> {
    let content = folder
        .canonicalize()
        .map_err(|e| format!("content folder {}: {e}", folder.display()))?;
    let game_file = ContentSettings::default().game_file;
    if !content.join(&game_file).is_file() {
        return Err(format!(
            "{} has no {game_file}: is it a content folder?",
            content.display()
        ));
    }
    registry_from_folder(&content).map_err(|error| format!("{}: {error}", content.display()))
}

/// The problems of every scene file in the folder's `scenes/`, sorted by file; none
/// when there is no such folder.
fn lint_scenes(folder: &Path, registry: &ContentRegistry) -> Result<Vec<ContentError>, String> {
    let scenes = folder.join("scenes");
    if !scenes.is_dir() {
        return Ok(Vec::new());
    }
    let entries =
        std::fs::read_dir(&scenes).map_err(|e| format!("scenes in {}: {e}", scenes.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.ends_with(".scene.json") || name.ends_with(".scene.ron"))
        })
        .collect();
    files.sort();
    let mut errors = Vec::new();
    for path in files {
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        errors.extend(lint_scene(&bytes, &format!("scenes/{name}"), registry));
    }
    Ok(errors)
}
