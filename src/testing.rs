//! Helpers for testing a game that uses bevy_loom, and for tools that load content
//! headlessly: a headless loom app, content loaded from a folder with a timeout, and a
//! registry built from files written into a temporary folder.
//!
//! Loading goes through the real `AssetServer`, as in a game, so a test sees the same
//! [`ContentError`]s a player would. Nothing here panics: a folder that cannot be
//! written or content that does not finish loading is a [`TestingError`].
//!
//! ```
//! use bevy_loom::testing::registry_from_files;
//!
//! let manifest = r#"{
//!     "id": "core", "version": "1.0.0", "name": "Core",
//!     "actionPurpose": "Everyday actions.", "actionConsiderWhen": "Whenever nothing else fits.",
//!     "content": { "actions": ["actions/wait.action.json"] }
//! }"#;
//! let wait = r#"{ "id": "core:wait", "name": "Wait", "description": "Let time pass", "template": "wait" }"#;
//! let (registry, errors) = registry_from_files(&[
//!     ("game.loom.json", r#"{ "mods": ["core"] }"#),
//!     ("mods/core/mod.json", manifest),
//!     ("mods/core/actions/wait.action.json", wait),
//! ])?;
//! assert!(errors.is_empty(), "{errors:?}");
//! assert_eq!(registry.action("core:wait").map(|a| a.template.as_str()), Some("wait"));
//! # Ok::<(), bevy_loom::testing::TestingError>(())
//! ```

use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use bevy::app::PluginsState;
use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use tempfile::TempDir;

use crate::LoomPlugins;
use crate::actors::{SmartActorPlugin, SmartActorSettings};
use crate::content::{ContentError, ContentRegistry};
use crate::llm::{BackendChoice, LlmPlugin};
use crate::narration::NarrationPlugin;

/// How long the helpers here wait for content before they give up.
pub const CONTENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Updates after the first build of the registry, so that problems reported a frame
/// or two later (a file that failed, a folder walk) are seen too.
const SETTLING_UPDATES: usize = 3;

/// What went wrong while preparing or loading test content.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestingError {
    /// The content registry was not built within the time given.
    #[error(
        "content did not finish loading in {waited:?}: check that the app has AssetPlugin rooted at the content folder and ContentPlugin (or LoomPlugins), that it was finished (`App::finish`), and give a slow disk a longer timeout"
    )]
    ContentTimeout {
        /// How long it waited.
        waited: Duration,
    },
    /// A temporary content folder could not be created.
    #[error("could not create a temporary content folder: {0}")]
    TemporaryFolder(#[source] std::io::Error),
    /// A file's path is absolute or leaves the content folder.
    #[error(
        "`{}` is not inside the content folder: give a relative path without `..`",
        .0.display()
    )]
    OutsideFolder(PathBuf),
    /// A file could not be written.
    #[error("could not write `{}`: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Builds a headless app with every loom plugin, loading content from a folder:
/// `MinimalPlugins`, `AssetPlugin` rooted at the folder and [`LoomPlugins`].
///
/// The model is the offline backend with seed 0 unless [`llm`](Self::llm) says
/// otherwise, so a test neither reads the environment nor reaches a server. Every
/// [`ContentError`] written is kept in the [`ContentErrorLog`] resource.
#[derive(Debug, Clone)]
pub struct HeadlessApp {
    root: PathBuf,
    watch: bool,
    llm: LlmPlugin,
    actors: SmartActorSettings,
    narration: NarrationPlugin,
}

impl HeadlessApp {
    /// An app on the content in `root`, not watched for changes.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            watch: false,
            llm: LlmPlugin {
                backend: BackendChoice::Offline { seed: 0 },
                ..default()
            },
            actors: SmartActorSettings::default(),
            narration: NarrationPlugin::default(),
        }
    }

    /// Whether to reload files edited on disk (needs Bevy's `file_watcher` feature).
    #[must_use]
    pub fn watch(mut self, watch: bool) -> Self {
        self.watch = watch;
        self
    }

    /// The LLM bridge's plugin: the backend, how it is scheduled, the deadline and sampling.
    #[must_use]
    pub fn llm(mut self, plugin: LlmPlugin) -> Self {
        self.llm = plugin;
        self
    }

    /// The smart actors' settings.
    #[must_use]
    pub fn actors(mut self, settings: SmartActorSettings) -> Self {
        self.actors = settings;
        self
    }

    /// The narration plugin: its seed, repetition window and settings.
    #[must_use]
    pub fn narration(mut self, plugin: NarrationPlugin) -> Self {
        self.narration = plugin;
        self
    }

    /// The app, not yet finished nor updated: add your own plugins and systems, then
    /// call [`wait_for_content`], which finishes it.
    pub fn build(self) -> App {
        let mut app = App::new();
        app.add_plugins((
            MinimalPlugins,
            AssetPlugin {
                file_path: self.root.to_string_lossy().into_owned(),
                watch_for_changes_override: Some(self.watch),
                ..default()
            },
            LoomPlugins
                .set(self.llm)
                .set(SmartActorPlugin {
                    settings: self.actors,
                })
                .set(self.narration),
        ))
        .init_resource::<ContentErrorLog>()
        .add_systems(Last, record_content_errors);
        app
    }

    /// The app, updated until its content has loaded ([`wait_for_content`] with
    /// [`CONTENT_TIMEOUT`]).
    pub fn load(self) -> Result<App, TestingError> {
        let mut app = self.build();
        wait_for_content(&mut app, CONTENT_TIMEOUT)?;
        Ok(app)
    }
}

/// Every [`ContentError`] written since the app started, in order.
#[derive(Resource, Debug, Clone, Default)]
pub struct ContentErrorLog(pub Vec<ContentError>);

/// Keeps each [`ContentError`] in the [`ContentErrorLog`]; [`HeadlessApp`] runs it in
/// `Last`, where every error of the frame has been written.
pub fn record_content_errors(
    mut log: ResMut<ContentErrorLog>,
    mut errors: MessageReader<ContentError>,
) {
    log.0.extend(errors.read().cloned());
}

/// Updates `app` until its [`ContentRegistry`] has been built once (its generation is
/// above 0: every requested file loaded or failed), or returns
/// [`TestingError::ContentTimeout`] once `timeout` has passed instead of hanging.
///
/// First finishes the app's plugins (`App::finish`, `App::cleanup`) where that was
/// not done yet. Sleeps a millisecond between updates so the asset server's threads
/// get a core.
pub fn wait_for_content(app: &mut App, timeout: Duration) -> Result<(), TestingError> {
    let started = Instant::now();
    finish_plugins(app, started, timeout)?;
    loop {
        let loaded = app
            .world()
            .get_resource::<ContentRegistry>()
            .is_some_and(|registry| registry.generation() > 0);
        if loaded {
            return Ok(());
        }
        let waited = started.elapsed();
        if waited >= timeout {
            return Err(TestingError::ContentTimeout { waited });
        }
        app.update();
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Finishes the app's plugins as `App::run` does, waiting for plugins still building.
fn finish_plugins(app: &mut App, started: Instant, timeout: Duration) -> Result<(), TestingError> {
    while app.plugins_state() == PluginsState::Adding {
        let waited = started.elapsed();
        if waited >= timeout {
            return Err(TestingError::ContentTimeout { waited });
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if app.plugins_state() == PluginsState::Ready {
        app.finish();
    }
    if app.plugins_state() == PluginsState::Finished {
        app.cleanup();
    }
    Ok(())
}

/// Loads the content in `folder` once in a [`HeadlessApp`] and returns the registry
/// and every [`ContentError`] reported on the way, as a game would see them.
pub fn registry_from_folder(
    folder: &Path,
) -> Result<(ContentRegistry, Vec<ContentError>), TestingError> {
    let mut app = HeadlessApp::new(folder).load()?;
    for _ in 0..SETTLING_UPDATES {
        app.update();
    }
    let registry = app.world().resource::<ContentRegistry>().clone();
    let errors = std::mem::take(&mut app.world_mut().resource_mut::<ContentErrorLog>().0);
    Ok((registry, errors))
}

/// Writes `files` (a path relative to the folder, its text) into a temporary folder
/// and loads it with [`registry_from_folder`].
pub fn registry_from_files(
    files: &[(impl AsRef<Path>, impl AsRef<[u8]>)],
) -> Result<(ContentRegistry, Vec<ContentError>), TestingError> {
    let folder = content_folder(files)?;
    registry_from_folder(folder.path())
}

/// A fresh temporary folder holding `files` (a path relative to the folder, its
/// text); it is removed when the returned value is dropped.
pub fn content_folder(
    files: &[(impl AsRef<Path>, impl AsRef<[u8]>)],
) -> Result<TempDir, TestingError> {
    let folder = tempfile::tempdir().map_err(TestingError::TemporaryFolder)?;
    for (path, text) in files {
        write_file(folder.path(), path.as_ref(), text.as_ref())?;
    }
    Ok(folder)
}

/// Writes one file under `root`, creating its folders; `path` must be relative and
/// stay inside `root`.
pub fn write_file(root: &Path, path: &Path, text: &[u8]) -> Result<(), TestingError> {
    let inside = path.components().next().is_some()
        && path.components().all(|c| matches!(c, Component::Normal(_)));
    if !inside {
        return Err(TestingError::OutsideFolder(path.to_owned()));
    }
    let full = root.join(path);
    let written = match full.parent() {
        Some(parent) => std::fs::create_dir_all(parent),
        None => Ok(()),
    }
    .and_then(|()| std::fs::write(&full, text));
    written.map_err(|source| TestingError::Write { path: full, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::ContentPlugin;

    #[test]
    fn content_that_never_loads_is_a_timeout_error_not_a_hang() {
        // Without ContentPlugin nothing ever builds the registry.
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, AssetPlugin::default()))
            .init_resource::<ContentRegistry>();
        let timeout = Duration::from_millis(20);
        let error = wait_for_content(&mut app, timeout).expect_err("nothing loads");
        assert!(
            matches!(error, TestingError::ContentTimeout { .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("ContentPlugin"), "{error}");
    }

    #[test]
    fn an_app_without_a_registry_times_out_too() {
        let mut app = App::new();
        app.add_plugins(MinimalPlugins);
        let error = wait_for_content(&mut app, Duration::ZERO).expect_err("no registry");
        assert!(matches!(error, TestingError::ContentTimeout { .. }));
    }

    #[test]
    fn a_folder_without_a_game_file_loads_with_one_error() {
        let folder = content_folder(&[("mods/core/mod.json", "{}")]).expect("a folder");
        let mut app = App::new();
        app.add_plugins((
            MinimalPlugins,
            AssetPlugin {
                file_path: folder.path().to_string_lossy().into_owned(),
                ..default()
            },
            ContentPlugin::default(),
        ))
        .init_resource::<ContentErrorLog>()
        .add_systems(Last, record_content_errors);
        wait_for_content(&mut app, CONTENT_TIMEOUT).expect("loading settles");
        let errors = &app.world().resource::<ContentErrorLog>().0;
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert_eq!(errors[0].file, "game.loom.json");
    }

    #[test]
    fn paths_outside_the_folder_are_refused() {
        for path in ["../escape.json", "/etc/escape.json", ""] {
            let written = content_folder(&[(path, "{}")]);
            assert!(
                matches!(written, Err(TestingError::OutsideFolder(_))),
                "{path}: {written:?}"
            );
        }
    }

    #[test]
    fn files_are_written_with_their_folders() {
        let folder =
            content_folder(&[("mods/core/actions/wait.action.json", "{}")]).expect("a folder");
        let text =
            std::fs::read_to_string(folder.path().join("mods/core/actions/wait.action.json"));
        assert_eq!(text.ok().as_deref(), Some("{}"));
    }
}
