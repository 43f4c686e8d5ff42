//! Content authored as data and loaded as Bevy assets: the game file, mod manifests,
//! action definitions, smart-actor specs and the prompt templates they name, checked at
//! load and gathered in the [`ContentRegistry`].
//!
//! **Layer:** content, the lowest: serde types, their loaders and load-time rules, the
//! registry, the linter. It imports no other bevy_loom module.
//!
//! ```text
//! assets/
//!   game.loom.json                  # { "mods": ["core", "items"] }
//!   mods/items/mod.json             # the manifest, with its content listing
//!   mods/items/actions/give.action.json
//!   mods/tavern/actors/marta.actor.json
//!   mods/core/prompts/smart_actor.prompt.json
//!   mods/tavern/tags.json           # tags of narrative keys, for memory recall
//!   mods/tavern/abilities/rent_room.ability.json
//! ```
//!
//! Every problem becomes a [`ContentError`] naming the file, the field (a JSON pointer)
//! and what to fix. A bad file or item is skipped and the rest still loads; a file that
//! becomes invalid while the game runs keeps its last valid version.

mod ability;
mod action;
mod actor;
mod aliases;
mod app_ext;
mod catalog;
mod error;
mod facts;
pub(crate) use facts::{ENTITY_FACTS, STATE_FACTS};
#[cfg(test)]
pub(crate) mod fixtures;
pub mod lint;
mod loader;
mod manifest;
mod method;
mod mod_folders;
mod mod_order;
mod narrative;
mod prompt_template;
mod references;
mod refinement;
mod registry;
mod scene;
mod tags;
mod task;
mod validate;

use std::collections::{BTreeSet, HashMap, HashSet};

use bevy::asset::{
    AssetLoadFailedEvent, AssetPath, AssetTrackingSystems, LoadState, UntypedAssetId,
};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::tasks::{IoTaskPool, Task, futures::check_ready};

pub use ability::{
    AbilityDefinition, AbilityInput, AbilityInputs, InputMode, InputSource, InputType,
    MAX_ABILITY_EXAMPLES,
};
pub use action::{
    ActionDefinition, ActionParameter, ActionTargets, Lifeline, TagRule, TargetRole, TargetSlot,
    action_namespace, template_placeholders, value_text,
};
pub use actor::{ActorHistory, ActorPolicy, ActorSpec, MemorySeed, Persona};
pub(crate) use aliases::command_words_are;
pub use aliases::{COMMAND_ARTICLES, VerbAlias, command_words, template_lead};
pub use app_ext::ContentAppExt;
pub use catalog::{CatalogItem, ContentCatalog};
pub use error::ContentError;
pub use loader::{
    ContentAsset, ContentLoader, ContentLoaderError, LARGEST_FILE, forbidden_character,
    parse_content,
};
pub use manifest::{GameManifest, ModContent, ModDependency, ModManifest};
pub use method::{
    BINDING_PREFIX, Binding, Condition, ConditionArena, ConditionFacts, ConditionalFailure,
    ConditionalStep, PrimitiveActionStep, RefinementMethod, RefinementStep, TaskStep,
};
pub use narrative::{
    CANONICAL_EFFECTS, CANONICAL_FAILURE_REASONS, CANONICAL_VERBS, FRAGMENT_PLACEHOLDERS, Fragment,
    FragmentPool, NarrativeContext, NarrativeVocabulary, POOL_MINIMUMS, POOL_RECOMMENDED,
    PoolMinimums, PoolShortfall, VocabularyExtension, is_vocabulary_word,
};
pub use prompt_template::PromptTemplate;
pub use registry::{ContentRegistry, ContentSources, LoadedMod, ModActionMetadata};
pub use scene::{MOST_CARRIERS, SceneDefinition, SceneEntity, ScenePlace};
pub use tags::{TagFile, TagIndex};
pub use task::{
    EntityParameter, FallbackBehavior, MAX_ENTITY_PARAMETERS, TaskDefinition, TaskParameter,
    ValueParameter, ValueType,
};
pub use validate::{
    MAX_NESTING, METADATA_LENGTH, TEXT_LIMITS, TextLimits, is_valid_mod_id, owning_mod,
};

/// Loads the game file, the mods it lists and their content, and keeps the
/// [`ContentRegistry`] up to date as files load, change or fail.
#[derive(Debug, Clone, Default)]
pub struct ContentPlugin {
    /// Where content is found and how it is named.
    pub settings: ContentSettings,
}

/// Where content is found, relative to the asset root. Read when the game file is
/// first requested, at startup.
#[derive(Resource, Debug, Clone, PartialEq, Eq, Reflect)]
#[reflect(Resource, Default)]
pub struct ContentSettings {
    /// The game file listing the mods to load.
    pub game_file: String,
    /// The manifest's file name inside each `mods/<id>/` folder (`mod.json` or `mod.ron`).
    pub manifest_file: String,
}

impl Default for ContentSettings {
    fn default() -> Self {
        Self {
            game_file: "game.loom.json".to_owned(),
            manifest_file: "mod.json".to_owned(),
        }
    }
}

impl Plugin for ContentPlugin {
    fn build(&self, app: &mut App) {
        assert!(
            app.is_plugin_added::<AssetPlugin>(),
            "ContentPlugin loads content through Bevy's assets: add AssetPlugin (or DefaultPlugins) before LoomPlugins"
        );
        app.insert_resource(self.settings.clone())
            .register_type::<ContentSettings>()
            .init_resource::<ContentRegistry>()
            .init_resource::<ContentFiles>()
            .init_resource::<TargetScopeNames>()
            .add_message::<ContentError>();
        app.init_content::<GameManifest>()
            .init_content::<ModManifest>()
            .init_content::<ActionDefinition>()
            .init_content::<ActorSpec>()
            .init_content::<NarrativeContext>()
            .init_content::<PromptTemplate>()
            .init_content::<TagFile>()
            .init_content::<TaskDefinition>()
            .init_content::<RefinementMethod>()
            .init_content::<AbilityDefinition>()
            .init_content::<SceneDefinition>();
        app.add_systems(
            PreUpdate,
            (
                request_content_files,
                (
                    note_changes::<GameManifest>,
                    note_changes::<ModManifest>,
                    note_changes::<ActionDefinition>,
                    note_changes::<ActorSpec>,
                    note_changes::<NarrativeContext>,
                    note_changes::<PromptTemplate>,
                    note_changes::<TagFile>,
                    note_changes::<TaskDefinition>,
                    note_changes::<RefinementMethod>,
                    note_changes::<AbilityDefinition>,
                ),
                collect_folder_scans,
                rebuild_registry,
            )
                .chain()
                .in_set(ContentSystems)
                .after(AssetTrackingSystems),
        );
    }
}

/// The system set that loads content and rebuilds the [`ContentRegistry`] (in `PreUpdate`).
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContentSystems;

/// The target scope names actions may use, published by the world layer; `None`
/// (no world layer) skips the unknown-scope check.
#[derive(Resource, Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetScopeNames(pub Option<BTreeSet<String>>);

/// Whether content has been loaded at least once: a run condition.
pub fn content_loaded(registry: Res<ContentRegistry>) -> bool {
    registry.generation() > 0
}

/// Handles of every requested content file, by asset path, and what changed since the last build.
#[derive(Resource, Default)]
struct ContentFiles {
    game: Option<Handle<GameManifest>>,
    mods: HashMap<String, Handle<ModManifest>>,
    actions: HashMap<String, Handle<ActionDefinition>>,
    actors: HashMap<String, Handle<ActorSpec>>,
    narratives: HashMap<String, Handle<NarrativeContext>>,
    prompts: HashMap<String, Handle<PromptTemplate>>,
    tags: HashMap<String, Handle<TagFile>>,
    tasks: HashMap<String, Handle<TaskDefinition>>,
    methods: HashMap<String, Handle<RefinementMethod>>,
    abilities: HashMap<String, Handle<AbilityDefinition>>,
    listings: Listings,
    /// Walks of mods' folders under way, by manifest path.
    scans: HashMap<String, Task<Vec<String>>>,
    /// The content files found in each mod's folder, by manifest path.
    found: HashMap<String, Vec<String>>,
    /// A walk of `mods/` for the mods' manifests under way, when the game file changed.
    mods_scan: Option<Task<Vec<String>>>,
    /// The manifests found in `mods/`, listed by the game file or not.
    mods_found: Vec<String>,
    changed: bool,
    /// The files the registry was last built from. Bevy tells of a stored asset a
    /// frame or more after it is stored, so a build may already hold the file an
    /// `Added` or `LoadedWithDependencies` event is about: such an event changes nothing.
    built: HashSet<UntypedAssetId>,
    reported: HashSet<ContentError>,
}

impl ContentFiles {
    fn ids(&self) -> impl Iterator<Item = UntypedAssetId> + '_ {
        self.game
            .iter()
            .map(|h| h.id().untyped())
            .chain(self.mods.values().map(|h| h.id().untyped()))
            .chain(self.actions.values().map(|h| h.id().untyped()))
            .chain(self.actors.values().map(|h| h.id().untyped()))
            .chain(self.narratives.values().map(|h| h.id().untyped()))
            .chain(self.prompts.values().map(|h| h.id().untyped()))
            .chain(self.tags.values().map(|h| h.id().untyped()))
            .chain(self.tasks.values().map(|h| h.id().untyped()))
            .chain(self.methods.values().map(|h| h.id().untyped()))
            .chain(self.abilities.values().map(|h| h.id().untyped()))
    }
}

/// Where each requested file was listed, and the paths the asset server refused.
#[derive(Default)]
struct Listings {
    by_path: HashMap<String, Listing>,
    /// Paths never requested again: Bevy refuses a path that leaves the asset folder
    /// or is absolute, and a handle it refused never loads nor fails.
    refused: HashSet<String>,
}

/// The game file or manifest that listed a file, and the field that lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listing {
    file: String,
    pointer: String,
}

impl Listing {
    fn new(file: &str, pointer: String) -> Self {
        Self {
            file: file.to_owned(),
            pointer,
        }
    }

    /// A problem with the listed file `path`, reported where it is listed: that is
    /// where the path is fixed.
    fn problem(&self, path: &str, what: &str, fix: &str) -> ContentError {
        ContentError::new(
            &self.file,
            &self.pointer,
            format!("`{path}`, listed here, {what}: {fix}"),
        )
    }
}

/// Requests the mods the game file lists and the files their manifests list. Runs when
/// a manifest was stored, not on its `AssetEvent`, which comes a frame later: the registry
/// must not be built from a manifest whose files were not requested yet.
fn request_content_files(
    settings: Res<ContentSettings>,
    server: Res<AssetServer>,
    mut files: ResMut<ContentFiles>,
    games: Res<Assets<GameManifest>>,
    manifests: Res<Assets<ModManifest>>,
    mut manifest_events: MessageReader<AssetEvent<ModManifest>>,
    mut errors: MessageWriter<ContentError>,
) {
    let files = &mut *files;
    let mut refused = Vec::new();
    for event in manifest_events.read() {
        if let AssetEvent::Modified { id } = event {
            // Look at its folder again, for files added since.
            files
                .found
                .retain(|path, _| files.mods.get(path).is_none_or(|h| h.id() != *id));
        }
    }
    if files.game.is_none() && !files.listings.refused.contains(&settings.game_file) {
        let path = settings.game_file.clone();
        match load_listed(&server, &path) {
            Ok(handle) => files.game = Some(handle),
            Err(why) => {
                // Nothing can load: build the empty registry, so loading settles.
                files.changed = true;
                files.listings.refused.insert(path.clone());
                refused.push(ContentError::new(
                    &path,
                    "",
                    format!("the asset server {why}: set `ContentSettings::game_file` to a path inside the asset folder"),
                ));
            }
        }
    }
    if games.is_changed()
        && let Some(game) = files.game.as_ref().and_then(|h| games.get(h))
    {
        // Every mod on disk, to tell of those the game file does not list.
        let walk = mod_folders::mod_manifests_in(
            (*server).clone(),
            "mods".to_owned(),
            settings.manifest_file.clone(),
        );
        files.mods_scan = Some(IoTaskPool::get().spawn(walk));
        let manifests = game.mods.iter().enumerate().map(|(index, id)| {
            (
                format!("mods/{id}/{}", settings.manifest_file),
                Listing::new(&settings.game_file, format!("/mods/{index}")),
            )
        });
        refused.extend(request(
            &server,
            &mut files.mods,
            &mut files.listings,
            manifests,
        ));
    }
    if manifests.is_changed() {
        refused.extend(request_listed(&server, files, &manifests));
    }
    // Each stored manifest's folder is walked once, and again after the manifest is
    // edited (its `Modified` event comes a frame after it is stored).
    for (path, handle) in &files.mods {
        if manifests.contains(handle)
            && !files.found.contains_key(path)
            && !files.scans.contains_key(path)
        {
            let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
            let walk = mod_folders::content_files_in((*server).clone(), folder.to_owned());
            files
                .scans
                .insert(path.clone(), IoTaskPool::get().spawn(walk));
        }
    }
    for problem in refused {
        error!("{problem}");
        errors.write(problem);
    }
}

/// Requests the files each stored manifest lists; returns a problem for each path the
/// asset server refused.
fn request_listed(
    server: &AssetServer,
    files: &mut ContentFiles,
    manifests: &Assets<ModManifest>,
) -> Vec<ContentError> {
    let mut refused = Vec::new();
    for (path, handle) in &files.mods {
        let Some(manifest) = manifests.get(handle) else {
            continue;
        };
        let content = &manifest.content;
        let mut listed = ManifestListing {
            server,
            manifest: path,
            listings: &mut files.listings,
            refused: &mut refused,
        };
        listed.request(&mut files.actions, "actions", &content.actions);
        listed.request(&mut files.actors, "actors", &content.actors);
        listed.request(&mut files.narratives, "narrative", &content.narrative);
        listed.request(&mut files.prompts, "prompts", &content.prompts);
        listed.request(&mut files.tags, "tags", &content.tags);
        listed.request(&mut files.tasks, "tasks", &content.tasks);
        listed.request(&mut files.methods, "methods", &content.methods);
        listed.request(&mut files.abilities, "abilities", &content.abilities);
    }
    refused
}

/// One manifest's listed files being requested.
struct ManifestListing<'a> {
    server: &'a AssetServer,
    /// The manifest's asset path.
    manifest: &'a str,
    listings: &'a mut Listings,
    refused: &'a mut Vec<ContentError>,
}

impl ManifestListing<'_> {
    /// Requests the files the manifest lists in `content.<field>`.
    fn request<A: Asset>(
        &mut self,
        handles: &mut HashMap<String, Handle<A>>,
        field: &'static str,
        paths: &[String],
    ) {
        let folder = self
            .manifest
            .rsplit_once('/')
            .map_or("", |(folder, _)| folder);
        let listed = in_folder(self.manifest, folder, field, paths);
        let refused = request(self.server, handles, self.listings, listed);
        self.refused.extend(refused);
    }
}

/// The paths of a manifest's listed files, which are relative to its folder, each with
/// where it is listed (`/content/<field>/<index>` in `manifest`).
fn in_folder<'a>(
    manifest: &'a str,
    folder: &'a str,
    field: &'static str,
    files: &'a [String],
) -> impl Iterator<Item = (String, Listing)> + 'a {
    files.iter().enumerate().map(move |(index, file)| {
        (
            format!("{folder}/{file}"),
            Listing::new(manifest, format!("/content/{field}/{index}")),
        )
    })
}

/// Loads each of `paths` not requested yet, keeping its handle and where it was
/// listed; returns a problem for each path the asset server refused.
fn request<A: Asset>(
    server: &AssetServer,
    handles: &mut HashMap<String, Handle<A>>,
    listings: &mut Listings,
    paths: impl Iterator<Item = (String, Listing)>,
) -> Vec<ContentError> {
    let mut refused = Vec::new();
    for (path, listing) in paths {
        if handles.contains_key(&path) || listings.refused.contains(&path) {
            continue;
        }
        match load_listed(server, &path) {
            Ok(handle) => {
                handles.insert(path.clone(), handle);
            }
            Err(why) => {
                refused.push(listing.problem(
                    &path,
                    &format!("was not loaded: the asset server {why}"),
                    "list a path inside the mod's folder",
                ));
                listings.refused.insert(path.clone());
            }
        }
        listings.by_path.insert(path, listing);
    }
    refused
}

/// Starts loading `path`, or says why the asset server will not: it cannot parse the
/// path, or refuses it (outside the asset folder, or absolute), which would leave a
/// handle that never loads nor fails.
fn load_listed<A: Asset>(server: &AssetServer, path: &str) -> Result<Handle<A>, String> {
    let asset_path = AssetPath::try_parse(path)
        .map_err(|error| format!("cannot read it as an asset path ({error})"))?
        .into_owned();
    let handle = server.load(asset_path);
    if server.get_load_state(handle.id()).is_none() {
        return Err("refused it: it leaves the asset folder or is absolute".to_owned());
    }
    Ok(handle)
}

fn note_changes<T: ContentAsset>(
    mut files: ResMut<ContentFiles>,
    mut events: MessageReader<AssetEvent<T>>,
    mut failures: MessageReader<AssetLoadFailedEvent<T>>,
    mut errors: MessageWriter<ContentError>,
) {
    let news = |event: &AssetEvent<T>| match event {
        AssetEvent::Added { id } | AssetEvent::LoadedWithDependencies { id } => {
            !files.built.contains(&id.untyped())
        }
        AssetEvent::Modified { .. } | AssetEvent::Removed { .. } => true,
        AssetEvent::Unused { .. } => false,
    };
    if events.read().any(news) {
        files.changed = true;
    }
    for failure in failures.read() {
        files.changed = true;
        let file = failure.path.path().to_string_lossy().replace('\\', "/");
        let problems = match &failure.error {
            bevy::asset::AssetLoadError::AssetLoaderError(error) => error
                .error()
                .downcast_ref::<ContentLoaderError>()
                .map(ContentLoaderError::problems),
            _ => None,
        }
        .unwrap_or_else(|| {
            // Not the file's content: it is missing, unreadable or of no content kind,
            // which is fixed where it is listed. Only the game file is listed nowhere.
            let problem = match files.listings.by_path.get(&file) {
                Some(listing) => listing.problem(
                    &file,
                    &format!("could not be loaded ({})", failure.error),
                    "create the file, or fix the path",
                ),
                None => ContentError::new(
                    file.clone(),
                    "",
                    format!(
                        "the game file could not be loaded ({}): create it, or set `ContentSettings::game_file` to its path",
                        failure.error
                    ),
                ),
            };
            vec![problem]
        });
        for problem in problems {
            errors.write(problem);
        }
    }
}

/// Keeps the content files found by finished walks of mods' folders; a walk that
/// found something new calls for a rebuild.
fn collect_folder_scans(mut files: ResMut<ContentFiles>) {
    let files = &mut *files;
    files.scans.retain(|path, scan| {
        let Some(found) = check_ready(scan) else {
            return true;
        };
        if files.found.get(path) != Some(&found) {
            files.changed = true;
        }
        files.found.insert(path.clone(), found);
        false
    });
    if let Some(found) = files.mods_scan.as_mut().and_then(check_ready) {
        files.mods_scan = None;
        if files.mods_found != found {
            files.changed = true;
            files.mods_found = found;
        }
    }
}

/// The stored content assets.
#[derive(SystemParam)]
struct ContentAssets<'w> {
    games: Res<'w, Assets<GameManifest>>,
    manifests: Res<'w, Assets<ModManifest>>,
    actions: Res<'w, Assets<ActionDefinition>>,
    actors: Res<'w, Assets<ActorSpec>>,
    narratives: Res<'w, Assets<NarrativeContext>>,
    prompts: Res<'w, Assets<PromptTemplate>>,
    tags: Res<'w, Assets<TagFile>>,
    tasks: Res<'w, Assets<TaskDefinition>>,
    methods: Res<'w, Assets<RefinementMethod>>,
    abilities: Res<'w, Assets<AbilityDefinition>>,
}

fn rebuild_registry(
    server: Res<AssetServer>,
    settings: Res<ContentSettings>,
    scopes: Res<TargetScopeNames>,
    assets: ContentAssets,
    mut files: ResMut<ContentFiles>,
    mut registry: ResMut<ContentRegistry>,
    mut errors: MessageWriter<ContentError>,
) {
    if scopes.is_changed() {
        files.changed = true;
    }
    if !files.changed {
        return;
    }
    // Only a file being loaded is waited for: one in no other state can never finish.
    let settled = files.scans.is_empty()
        && files.mods_scan.is_none()
        && !files
            .ids()
            .any(|id| matches!(server.get_load_state(id), Some(LoadState::Loading)));
    if !settled {
        return;
    }
    files.changed = false;
    // The files this build reads: Bevy marks a file loaded in the step that stores it.
    files.built = files
        .ids()
        .filter(|&id| matches!(server.get_load_state(id), Some(LoadState::Loaded)))
        .collect();
    let game = files
        .game
        .as_ref()
        .and_then(|h| assets.games.get(h))
        .map(|g| (settings.game_file.as_str(), g));
    let mod_list = loaded(&files.mods, &assets.manifests);
    let action_list = loaded(&files.actions, &assets.actions);
    let actor_list = loaded(&files.actors, &assets.actors);
    let narrative_list = loaded(&files.narratives, &assets.narratives);
    let prompt_list = loaded(&files.prompts, &assets.prompts);
    let tag_list = loaded(&files.tags, &assets.tags);
    let task_list = loaded(&files.tasks, &assets.tasks);
    let method_list = loaded(&files.methods, &assets.methods);
    let ability_list = loaded(&files.abilities, &assets.abilities);
    let mut on_disk: Vec<String> = files.found.values().flatten().cloned().collect();
    on_disk.sort();
    let sources = ContentSources {
        files_on_disk: &on_disk,
        mods_on_disk: &files.mods_found,
        game,
        mods: &mod_list,
        actions: &action_list,
        actors: &actor_list,
        narratives: &narrative_list,
        prompts: &prompt_list,
        tags: &tag_list,
        tasks: &task_list,
        methods: &method_list,
        abilities: &ability_list,
        scopes: scopes.0.as_ref(),
    };
    let mut built = ContentRegistry::rebuild(sources, &registry);
    built.set_generation(registry.generation() + 1);
    let current: HashSet<ContentError> = built.problems().iter().cloned().collect();
    for problem in built.problems() {
        if !files.reported.contains(problem) {
            error!("{problem}");
            errors.write(problem.clone());
        }
    }
    for warning in built.warnings() {
        if !registry.warnings().contains(warning) {
            warn!("{warning}");
        }
    }
    files.reported = current;
    *registry = built;
}

/// The loaded assets among `handles`, sorted by path so builds do not depend on hash order.
fn loaded<'a, T: Asset>(
    handles: &'a HashMap<String, Handle<T>>,
    assets: &'a Assets<T>,
) -> Vec<(&'a str, &'a T)> {
    let mut list: Vec<(&str, &T)> = handles
        .iter()
        .filter_map(|(path, handle)| assets.get(handle).map(|asset| (path.as_str(), asset)))
        .collect();
    list.sort_by(|a, b| a.0.cmp(b.0));
    list
}
