//! The `ContentRegistry`: every valid piece of loaded content, looked up by id.

use std::collections::BTreeSet;

// Looked up by id for every offer: Bevy's foldhash map hashes short ids faster than SipHash.
use bevy::platform::collections::HashMap;

use bevy::ecs::resource::Resource;

use super::aliases::resolve_aliases;
use super::catalog::CatalogItem;
use super::mod_order::{group_order, load_order, unknown_groups};
use super::references::{
    Loaded, misfiled, unknown_allowed_ids, unknown_allowed_verbs, unknown_input_scopes,
    unknown_prompt, unknown_scopes, unknown_tag_keys, unknown_verb, unlisted_files, unlisted_mods,
};
use super::refinement::{Known, method_order, method_problems, settle, unknown_parameter_scopes};
use super::{
    AbilityDefinition, ActionDefinition, ActorSpec, ContentCatalog, ContentError, GameManifest,
    ModManifest, NarrativeContext, NarrativeVocabulary, PromptTemplate, RefinementMethod, TagFile,
    TagIndex, TaskDefinition, VerbAlias, action_namespace,
};

/// A mod's action metadata, resolved once per load for every prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModActionMetadata {
    /// The mod id as its manifest spells it.
    pub mod_id: String,
    /// `actionPurpose`, when the manifest has it.
    pub purpose: Option<String>,
    /// `actionConsiderWhen`, when the manifest has it.
    pub consider_when: Option<String>,
}

/// A mod that passed every check, with where it came from.
#[derive(Debug, Clone)]
pub struct LoadedMod {
    /// The manifest's asset path.
    pub file: String,
    /// The manifest.
    pub manifest: ModManifest,
    /// Its action metadata.
    pub metadata: ModActionMetadata,
    /// Its `verbAliases` that apply, longest alias first.
    pub verb_aliases: Vec<VerbAlias>,
}

/// Everything that loaded and passed validation. Rebuilt whenever a content file
/// changes; a file that became invalid keeps its last valid version.
#[derive(Resource, Debug, Default, Clone)]
pub struct ContentRegistry {
    mods: Vec<LoadedMod>,
    mod_index: HashMap<String, usize>,
    group_order: Vec<String>,
    /// Group rank and mod position by the manifest's own spelling of the id, for prompts.
    groups_by_id: HashMap<String, (usize, usize)>,
    /// In prompt order: by group, then id.
    actions: ContentCatalog<ActionDefinition>,
    actors: ContentCatalog<ActorSpec>,
    narratives: ContentCatalog<NarrativeContext>,
    prompts: ContentCatalog<PromptTemplate>,
    tasks: ContentCatalog<TaskDefinition>,
    methods: ContentCatalog<RefinementMethod>,
    abilities: ContentCatalog<AbilityDefinition>,
    /// Each task's method ids, most preferred first.
    method_order: HashMap<String, Vec<String>>,
    tags: TagIndex,
    vocabulary: NarrativeVocabulary,
    problems: Vec<ContentError>,
    warnings: Vec<ContentError>,
    generation: u64,
}

/// The loaded files a registry is built from, each with its asset path.
#[derive(Debug, Default, Clone, Copy)]
pub struct ContentSources<'a> {
    /// The game file and its path, when it loaded.
    pub game: Option<(&'a str, &'a GameManifest)>,
    /// Mod manifests that loaded.
    pub mods: &'a [(&'a str, &'a ModManifest)],
    /// Action definitions that loaded.
    pub actions: &'a [(&'a str, &'a ActionDefinition)],
    /// Actor specs that loaded.
    pub actors: &'a [(&'a str, &'a ActorSpec)],
    /// Narrative context files that loaded.
    pub narratives: &'a [(&'a str, &'a NarrativeContext)],
    /// Prompt templates that loaded.
    pub prompts: &'a [(&'a str, &'a PromptTemplate)],
    /// Tag files that loaded.
    pub tags: &'a [(&'a str, &'a TagFile)],
    /// Planning task files that loaded.
    pub tasks: &'a [(&'a str, &'a TaskDefinition)],
    /// Refinement method files that loaded.
    pub methods: &'a [(&'a str, &'a RefinementMethod)],
    /// Ability files that loaded.
    pub abilities: &'a [(&'a str, &'a AbilityDefinition)],
    /// The target scope names actions may use; `None` skips that check.
    pub scopes: Option<&'a BTreeSet<String>>,
    /// The content files found in the mods' folders, by asset path; each that its
    /// mod's manifest does not list is a warning. Empty skips that check.
    pub files_on_disk: &'a [String],
    /// The manifests found in `mods/`, by asset path (`mods/smithy/mod.json`); each
    /// that the game file does not list is a warning. Empty skips that check.
    pub mods_on_disk: &'a [String],
}

impl ContentRegistry {
    /// Builds a registry from loaded files, checking the rules that span files:
    /// dependencies (missing, version range, cycles), conflicts, duplicate ids,
    /// unknown scopes, verbs and prompt templates, files no manifest lists, and mods
    /// the game file does not list.
    /// Whatever breaks a rule is skipped and reported; the rest is kept. Tag files
    /// merge into [`tags`](Self::tags), in load order.
    pub fn build(sources: ContentSources<'_>) -> Self {
        Self::rebuild(sources, &Self::default())
    }

    /// Like [`build`](Self::build), keeping from `previous` the last valid version of
    /// any file whose new version breaks a rule that spans files.
    pub fn rebuild<'a>(sources: ContentSources<'a>, previous: &'a ContentRegistry) -> Self {
        let Some((game_path, game)) = sources.game else {
            return Self::default();
        };
        let mut problems = Vec::new();
        let previous_mods: Vec<(&str, &ModManifest)> = previous
            .mods
            .iter()
            .map(|loaded| (loaded.file.as_str(), &loaded.manifest))
            .collect();
        let mods = load_order(game, sources.mods, &previous_mods, &mut problems);
        let mut registry = Self::with_mods(game, mods);
        let listed = listed_files(&registry.mods);
        let vocabulary = registry.vocabulary.clone();
        let is_loaded = |id: &str| registry.is_mod_loaded(action_namespace(id));
        let mut actions = gather(
            sources.actions,
            &listed,
            &previous.actions,
            |file, action| {
                let mut found = unknown_scopes(file, action, sources.scopes);
                found.extend(unknown_verb(file, action, &vocabulary));
                found
            },
            is_loaded,
            &mut problems,
        );
        actions.sort_by(|a, b| {
            registry
                .group_rank(a.namespace())
                .cmp(&registry.group_rank(b.namespace()))
                .then_with(|| a.id.cmp(&b.id))
        });
        registry.actions = actions;
        registry.resolve_verb_aliases(&mut problems);
        let is_loaded = |id: &str| registry.is_mod_loaded(action_namespace(id));
        let no_rule = |_: &str, _: &PromptTemplate| Vec::new();
        let prompts = gather(
            sources.prompts,
            &listed,
            &previous.prompts,
            no_rule,
            is_loaded,
            &mut problems,
        );
        let actors = gather(
            sources.actors,
            &listed,
            &previous.actors,
            |file, actor| {
                let mut found = unknown_allowed_verbs(file, actor, &vocabulary);
                found.extend(unknown_prompt(file, actor, &prompts));
                found
            },
            is_loaded,
            &mut problems,
        );
        let narratives = gather(
            sources.narratives,
            &listed,
            &previous.narratives,
            |file, context| vocabulary.unknown_keys(file, context),
            is_loaded,
            &mut problems,
        );
        let mut tasks = gather(
            sources.tasks,
            &listed,
            &previous.tasks,
            |file, task| unknown_parameter_scopes(file, task, sources.scopes),
            is_loaded,
            &mut problems,
        );
        // Checked against the tasks and actions now, so that an edit breaking a rule
        // across files keeps the method's last valid version; `settle` checks them
        // again as it leaves out tasks.
        let known = Known {
            tasks: &tasks,
            actions: &registry.actions,
            is_loaded: &|namespace| registry.is_mod_loaded(namespace),
        };
        let mut methods = gather(
            sources.methods,
            &listed,
            &previous.methods,
            |file, method| method_problems(file, method, &known),
            is_loaded,
            &mut problems,
        );
        let abilities = gather(
            sources.abilities,
            &listed,
            &previous.abilities,
            |file, ability| unknown_input_scopes(file, ability, sources.scopes),
            is_loaded,
            &mut problems,
        );
        settle(
            &mut tasks,
            &mut methods,
            &registry.actions,
            &|namespace| registry.is_mod_loaded(namespace),
            &mut problems,
        );
        (registry.prompts, registry.actors) = (prompts, actors);
        registry.method_order = method_order(&tasks, &methods);
        (registry.tasks, registry.methods) = (tasks, methods);
        registry.abilities = abilities;
        let unknown = registry.unknown_policy_ids();
        registry.warnings.extend(unknown);
        registry.narratives = narratives;
        for (file, context) in registry.narratives.iter_with_files() {
            registry.warnings.extend(context.small_pools(file));
        }
        registry.merge_tags(sources.tags);
        for loaded in &registry.mods {
            let unlisted = unlisted_files(&loaded.file, sources.files_on_disk, &listed);
            registry.warnings.extend(unlisted);
            let wrong_kind = misfiled(&loaded.file, &loaded.manifest.content);
            registry.warnings.extend(wrong_kind);
        }
        let loaded: Vec<&str> = registry
            .mods
            .iter()
            .map(|m| m.manifest.id.as_str())
            .collect();
        let unknown = unknown_groups(game_path, &game.action_group_order, &loaded);
        registry.warnings.extend(unknown);
        let unlisted = unlisted_mods(game_path, &game.mods, sources.mods_on_disk);
        registry.warnings.extend(unlisted);
        registry.problems = problems;
        registry
    }

    /// Warnings for the ids specs' policies allow that name nothing loaded
    /// ([`unknown_allowed_ids`]), once the actions, tasks, abilities and specs are in.
    fn unknown_policy_ids(&self) -> Vec<ContentError> {
        let actions: Vec<&str> = self.actions.iter().map(|a| a.id.as_str()).collect();
        let tasks: Vec<&str> = self.tasks.iter().map(|t| t.id.as_str()).collect();
        let abilities: Vec<&str> = self.abilities.iter().map(|a| a.id.as_str()).collect();
        let mods: Vec<&str> = self.mods.iter().map(|m| m.manifest.id.as_str()).collect();
        let loaded = Loaded {
            is_loaded: [
                &|id| self.actions.contains(id),
                &|id| self.tasks.contains(id),
                &|id| self.abilities.contains(id),
            ],
            ids: [&actions, &tasks, &abilities],
            mods: &mods,
        };
        (self.actors.iter_with_files())
            .flat_map(|(file, actor)| unknown_allowed_ids(file, actor, &loaded))
            .collect()
    }

    /// A registry of these mods, in load order, with their action groups ordered and
    /// their vocabularies merged, and no other content yet.
    fn with_mods(game: &GameManifest, mods: Vec<(&str, &ModManifest)>) -> Self {
        let mut registry = Self::default();
        for (file, manifest) in mods {
            registry
                .mod_index
                .insert(manifest.id.to_ascii_lowercase(), registry.mods.len());
            registry.vocabulary.extend(&manifest.vocabulary);
            registry.mods.push(LoadedMod {
                file: file.to_owned(),
                metadata: ModActionMetadata {
                    mod_id: manifest.id.clone(),
                    purpose: manifest.action_purpose.clone(),
                    consider_when: manifest.action_consider_when.clone(),
                },
                manifest: manifest.clone(),
                verb_aliases: Vec::new(),
            });
        }
        let ids = registry.mods.iter().map(|m| m.manifest.id.as_str());
        registry.group_order = group_order(&game.action_group_order, ids);
        registry.groups_by_id = registry
            .mods
            .iter()
            .enumerate()
            .map(|(position, loaded)| {
                let id = &loaded.manifest.id;
                (id.clone(), (registry.group_rank(id), position))
            })
            .collect();
        registry
    }

    /// Resolves each loaded mod's `verbAliases` against its own actions.
    fn resolve_verb_aliases(&mut self, problems: &mut Vec<ContentError>) {
        for loaded in &mut self.mods {
            let id = &loaded.manifest.id;
            let own = self
                .actions
                .iter()
                .filter(|action| action.namespace() == id);
            loaded.verb_aliases =
                resolve_aliases(&loaded.file, &loaded.manifest.verb_aliases, own, problems);
        }
    }

    /// Merges the loaded mods' tag files into the tag index, in load order and each
    /// mod's listing order; a key no narrative file defines is a warning.
    fn merge_tags(&mut self, files: &[(&str, &TagFile)]) {
        for loaded in &self.mods {
            let folder = folder_of(&loaded.file);
            for listed in &loaded.manifest.content.tags {
                let path = format!("{folder}/{listed}");
                let Some(&(file, tags)) = files.iter().find(|(file, _)| *file == path) else {
                    // A file that failed to load was reported by its loader.
                    continue;
                };
                self.tags.extend(tags);
                let narratives = &self.narratives;
                let unknown = unknown_tag_keys(file, tags, |key| narratives.contains(key));
                self.warnings.extend(unknown);
            }
        }
    }
}

/// The folder of a manifest's asset path: `mods/items` for `mods/items/mod.json`.
fn folder_of(manifest: &str) -> &str {
    manifest.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// Every file the loaded mods' manifests list, as asset paths.
fn listed_files(mods: &[LoadedMod]) -> Listed {
    let paths = mods.iter().flat_map(|loaded| {
        let folder = folder_of(&loaded.file);
        let lists = loaded.manifest.content.lists();
        lists
            .into_iter()
            .flat_map(|(_, paths)| paths)
            .map(move |path| format!("{folder}/{path}"))
    });
    let mut listed = Listed::default();
    for path in paths {
        let next = listed.len();
        listed.entry(path).or_insert(next);
    }
    listed
}

/// The files the loaded mods list, each with its place in the load order: the mods'
/// order, then each mod's listing order.
pub(super) type Listed = HashMap<String, usize>;

/// One kind's catalog: its listed items that pass `check` (see [`accept_items`]), less
/// those of mods that did not load; a later claim to an id already taken is reported.
fn gather<'a, T: CatalogItem + Clone + PartialEq>(
    items: &[(&'a str, &'a T)],
    listed: &Listed,
    previous: &'a ContentCatalog<T>,
    check: impl Fn(&str, &T) -> Vec<ContentError>,
    is_loaded: impl Fn(&str) -> bool,
    problems: &mut Vec<ContentError>,
) -> ContentCatalog<T> {
    let last: HashMap<&str, &T> = previous.iter_with_files().collect();
    let accepted = accept_items(
        items,
        listed,
        |file| last.get(file).copied(),
        &check,
        problems,
    );
    let mut accepted: Vec<(&str, &T)> = (accepted.into_iter())
        .filter(|(_, item)| is_loaded(item.id()))
        .collect();
    // In load order: the first claim to an id is the earlier mod's.
    accepted.sort_by_key(|(file, _)| listed.get(*file));
    // An id two files claim stays with the one that held it, edited or not: a new
    // file or an edit taking another's id is the one refused, and it keeps its last
    // version when it has one. The catalog keeps the files' order.
    let held = |file: &str, item: &T| last.get(file).is_some_and(|last| last.id() == item.id());
    let (holders, others): (Vec<_>, Vec<_>) =
        (accepted.iter().enumerate()).partition(|(_, (file, item))| held(file, item));
    let reordered = !holders.is_empty() && !others.is_empty();
    let mut catalog = ContentCatalog::default();
    let mut position: HashMap<String, usize> = HashMap::default();
    for (index, &(file, item)) in holders.into_iter().chain(others) {
        let inserted = match catalog.insert(file, item.clone()) {
            Ok(()) => Some(item),
            Err(duplicate) => {
                problems.push(duplicate);
                let valid = |last: &&&T| check(file, last).is_empty() && is_loaded(last.id());
                let kept = last.get(file).filter(valid);
                kept.filter(|last| catalog.insert(file, (**last).clone()).is_ok())
                    .inspect(|_| problems.push(ContentError::kept_last_valid(file)))
                    .copied()
            }
        };
        if let Some(item) = inserted.filter(|_| reordered) {
            position.insert(item.id().to_owned(), index);
        }
    }
    if reordered {
        catalog.sort_by(|a, b| position.get(a.id()).cmp(&position.get(b.id())));
    }
    catalog
}

/// The listed items that pass `check`; an item that fails keeps its `previous`
/// version from the same file when that one still passes.
fn accept_items<'a, T: PartialEq>(
    items: &[(&'a str, &'a T)],
    listed: &Listed,
    previous: impl Fn(&str) -> Option<&'a T>,
    check: impl Fn(&str, &T) -> Vec<ContentError>,
    problems: &mut Vec<ContentError>,
) -> Vec<(&'a str, &'a T)> {
    let mut accepted = Vec::new();
    for &(file, item) in items {
        if !listed.contains_key(file) {
            continue;
        }
        let found = check(file, item);
        if found.is_empty() {
            accepted.push((file, item));
            continue;
        }
        problems.extend(found);
        if let Some(last) =
            previous(file).filter(|last| *last != item && check(file, last).is_empty())
        {
            problems.push(ContentError::kept_last_valid(file));
            accepted.push((file, last));
        }
    }
    accepted
}

mod lookup;
#[cfg(test)]
mod tests;
