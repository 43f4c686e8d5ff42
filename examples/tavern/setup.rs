//! What the tavern and its windowed scene share: the content and scene the options
//! name, the model server the environment names, and the scene spawned once its keys
//! are checked against the loaded content.

use std::path::PathBuf;

use bevy::prelude::*;
use bevy_loom::actors::SpawnedScene;
use bevy_loom::content::parse_content;
use bevy_loom::llm::{LlmEnvironment, SamplingOptions};
use bevy_loom::prelude::*;

use super::cli::Options;

/// The content folder and the scene the options name, the scene parsed.
pub struct Play {
    pub content: PathBuf,
    pub scene: SceneDefinition,
    pub scene_path: PathBuf,
}

/// Finds the content folder and reads the scene; an error says which file and why.
pub fn read_play(options: &Options) -> Result<Play, String> {
    let content = options
        .content
        .canonicalize()
        .map_err(|e| format!("content folder {}: {e}", options.content.display()))?;
    let scene_path = if options.scene.is_absolute() || options.scene.exists() {
        options.scene.clone()
    } else {
        content.join(&options.scene)
    };
    let bytes =
        std::fs::read(&scene_path).map_err(|e| format!("scene {}: {e}", scene_path.display()))?;
    let scene: SceneDefinition =
        parse_content(&bytes, &scene_path.to_string_lossy()).map_err(|problems| {
            let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
            lines.join("\n")
        })?;
    Ok(Play {
        content,
        scene,
        scene_path,
    })
}

/// The backend the `LOOM_LLM_*` variables name (a server, a cassette to replay or to
/// record to), or the offline backend seeded with `seed`; sampling seeded with `seed`
/// too. Settings that cannot work (a URL without `http://`, a misspelt provider) are
/// an error that says what to fix.
pub fn llm_plugin(seed: u64) -> Result<LlmPlugin, String> {
    let from_environment = LlmPlugin {
        backend: BackendChoice::FromEnv,
        ..default()
    };
    (from_environment.validate())
        .map_err(|error| format!("the model server settings cannot work: {error}"))?;
    let backend = seeded(
        BackendChoice::from_environment(&LlmEnvironment::process()),
        seed,
    );
    Ok(LlmPlugin {
        backend,
        settings: LlmSettings {
            sampling: SamplingOptions {
                seed: Some(seed),
                ..LlmSettings::default().sampling
            },
            ..default()
        },
        ..default()
    })
}

/// `choice` with its offline backend seeded with `seed`, recorded or not.
fn seeded(choice: BackendChoice, seed: u64) -> BackendChoice {
    match choice {
        BackendChoice::Offline { .. } => BackendChoice::Offline { seed },
        BackendChoice::Record { backend, cassette } => BackendChoice::Record {
            backend: Box::new(seeded(*backend, seed)),
            cassette,
        },
        named => named,
    }
}

/// Spawns the scene once its keys are checked against the loaded content: every actor
/// key must name a loaded spec, and an entity whose narrative key names no file is
/// narrated by its name alone (a warning).
pub fn spawn_scene(world: &mut World, play: &Play) -> Result<SpawnedScene, String> {
    let path = play.scene_path.to_string_lossy();
    let registry = world.resource::<ContentRegistry>();
    let unbound = play.scene.check_actor_keys(registry, &path);
    if !unbound.is_empty() {
        let lines: Vec<String> = unbound.iter().map(ToString::to_string).collect();
        return Err(lines.join("\n"));
    }
    for problem in play.scene.check_narrative_keys(registry, &path) {
        eprintln!("warning: {problem}");
    }
    let spawned = play
        .scene
        .spawn(&mut world.commands())
        .map_err(|e| e.to_string())?;
    world.flush();
    Ok(spawned)
}
