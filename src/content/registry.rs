//! The `ContentRegistry`: every valid piece of loaded content, looked up by id.

use std::collections::{BTreeSet, HashMap, HashSet};

use bevy::ecs::resource::Resource;

use super::aliases::resolve_aliases;
use super::mod_order::{resolve_mods, select_mods};
use super::references::{unknown_allowed_verbs, unknown_prompt, unknown_scopes, unknown_verb};
use super::{
    ActionDefinition, ActorSpec, ContentError, GameManifest, ModManifest, NarrativeContext,
    NarrativeVocabulary, PromptTemplate, TagFile, TagIndex, VerbAlias, action_namespace,
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
    actions: Vec<ActionDefinition>,
    action_index: HashMap<String, usize>,
    action_files: HashMap<String, String>,
    actors: HashMap<String, ActorSpec>,
    actor_files: HashMap<String, String>,
    narratives: HashMap<String, NarrativeContext>,
    narrative_files: HashMap<String, String>,
    prompts: HashMap<String, PromptTemplate>,
    prompt_files: HashMap<String, String>,
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
    /// The target scope names actions may use; `None` skips that check.
    pub scopes: Option<&'a BTreeSet<String>>,
    /// The content files found in the mods' folders, by asset path; each that its
    /// mod's manifest does not list is a warning. Empty skips that check.
    pub files_on_disk: &'a [String],
}

impl ContentRegistry {
    /// Builds a registry from loaded files, checking the rules that span files:
    /// dependencies (missing, version range, cycles), conflicts, duplicate ids,
    /// unknown scopes, verbs and prompt templates, and files no manifest lists.
    /// Whatever breaks a rule is skipped and reported; the rest is kept. Tag files
    /// merge into [`tags`](Self::tags), in load order.
    pub fn build(sources: ContentSources<'_>) -> Self {
        Self::rebuild(sources, &Self::default())
    }

    /// Like [`build`](Self::build), keeping from `previous` the last valid version of
    /// any file whose new version breaks a rule that spans files.
    pub fn rebuild<'a>(sources: ContentSources<'a>, previous: &'a ContentRegistry) -> Self {
        let Some((_, game)) = sources.game else {
            return Self::default();
        };
        let candidates = select_mods(game, sources.mods);
        let mut problems = Vec::new();
        let mut kept = resolve_mods(candidates.clone(), game, &mut problems);
        let fallbacks: Vec<(&str, &ModManifest)> = candidates
            .iter()
            .filter(|(file, _)| !kept.iter().any(|(k, _)| k == file))
            .filter_map(|&(file, current)| {
                previous
                    .mods
                    .iter()
                    .find(|m| m.file == file && &m.manifest != current)
                    .map(|m| (file, &m.manifest))
            })
            .collect();
        if !fallbacks.is_empty() {
            let substituted = candidates
                .iter()
                .map(|&(file, manifest)| {
                    fallbacks
                        .iter()
                        .copied()
                        .find(|(f, _)| *f == file)
                        .unwrap_or((file, manifest))
                })
                .collect();
            let mut second = Vec::new();
            kept = resolve_mods(substituted, game, &mut second);
            for (file, _) in &fallbacks {
                if kept.iter().any(|(k, _)| k == file) {
                    problems.push(kept_last_valid(file));
                }
            }
            for problem in second {
                if !problems.contains(&problem) {
                    problems.push(problem);
                }
            }
        }
        let candidates = kept;

        let mut registry = Self::default();
        for (file, manifest) in candidates {
            registry
                .mod_index
                .insert(manifest.id.to_ascii_lowercase(), registry.mods.len());
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
        let mut order: Vec<String> = Vec::new();
        for id in &game.action_group_order {
            let id = id.to_ascii_lowercase();
            if registry.mod_index.contains_key(&id) && !order.contains(&id) {
                order.push(id);
            }
        }
        let mut rest: Vec<String> = registry
            .mod_index
            .keys()
            .filter(|id| !order.contains(id))
            .cloned()
            .collect();
        rest.sort();
        order.extend(rest);
        registry.group_order = order;
        registry.groups_by_id = registry
            .mods
            .iter()
            .enumerate()
            .map(|(position, loaded)| {
                let id = &loaded.manifest.id;
                (id.clone(), (registry.group_rank(id), position))
            })
            .collect();

        // Listed actions and actors of loaded mods; the first file to claim an id keeps it.
        let listed: HashSet<String> = registry
            .mods
            .iter()
            .flat_map(|loaded| {
                let folder = loaded
                    .file
                    .rsplit_once('/')
                    .map_or("", |(folder, _)| folder);
                let content = &loaded.manifest.content;
                content
                    .actions
                    .iter()
                    .chain(&content.actors)
                    .chain(&content.narrative)
                    .chain(&content.prompts)
                    .chain(&content.tags)
                    .map(move |path| format!("{folder}/{path}"))
            })
            .collect();
        for loaded in &registry.mods {
            registry.vocabulary.extend(&loaded.manifest.vocabulary);
        }
        let vocabulary = registry.vocabulary.clone();
        let actions = accept_items(
            sources.actions,
            &listed,
            |file| previous.action_from_file(file),
            |file, action| {
                let mut found = unknown_scopes(file, action, sources.scopes);
                found.extend(unknown_verb(file, action, &vocabulary));
                found
            },
            &mut problems,
        );
        let actions = first_claims(&actions, "action", &registry, &mut problems, |a| &a.id);
        let mut actions: Vec<ActionDefinition> = actions
            .into_iter()
            .map(|(file, action)| {
                registry
                    .action_files
                    .insert(action.id.clone(), file.to_owned());
                action.clone()
            })
            .collect();
        actions.sort_by(|a, b| {
            registry
                .group_rank(a.namespace())
                .cmp(&registry.group_rank(b.namespace()))
                .then_with(|| a.id.cmp(&b.id))
        });
        registry.action_index = actions
            .iter()
            .enumerate()
            .map(|(i, a)| (a.id.clone(), i))
            .collect();
        registry.actions = actions;
        for loaded in &mut registry.mods {
            let id = &loaded.manifest.id;
            let own = registry
                .actions
                .iter()
                .filter(|action| action.namespace() == id);
            loaded.verb_aliases = resolve_aliases(
                &loaded.file,
                &loaded.manifest.verb_aliases,
                own,
                &mut problems,
            );
        }
        let prompts = accept_items(
            sources.prompts,
            &listed,
            |file| previous.prompt_from_file(file),
            |_, _| Vec::new(),
            &mut problems,
        );
        for (file, template) in
            first_claims(&prompts, "prompt template", &registry, &mut problems, |t| {
                &t.id
            })
        {
            registry
                .prompt_files
                .insert(template.id.clone(), file.to_owned());
            registry
                .prompts
                .insert(template.id.clone(), template.clone());
        }
        let prompt_ids = &registry.prompts;
        let actors = accept_items(
            sources.actors,
            &listed,
            |file| previous.actor_from_file(file),
            |file, actor| {
                let mut found = unknown_allowed_verbs(file, actor, &vocabulary);
                found.extend(unknown_prompt(file, actor, prompt_ids));
                found
            },
            &mut problems,
        );
        for (file, actor) in first_claims(&actors, "actor", &registry, &mut problems, |a| &a.id) {
            registry
                .actor_files
                .insert(actor.id.clone(), file.to_owned());
            registry.actors.insert(actor.id.clone(), actor.clone());
        }
        let narratives = accept_items(
            sources.narratives,
            &listed,
            |file| previous.narrative_from_file(file),
            |file, context| vocabulary.unknown_keys(file, context),
            &mut problems,
        );
        for (file, context) in
            first_claims(&narratives, "narrative", &registry, &mut problems, |n| {
                &n.key
            })
        {
            registry.warnings.extend(context.small_pools(file));
            registry
                .narrative_files
                .insert(context.key.clone(), file.to_owned());
            registry
                .narratives
                .insert(context.key.clone(), context.clone());
        }
        registry.merge_tags(sources.tags);
        registry.warn_unlisted(sources.files_on_disk, &listed);
        registry.problems = problems;
        registry
    }

    /// Merges the loaded mods' tag files into the tag index, in load order and each
    /// mod's listing order; a key no narrative file defines is a warning.
    fn merge_tags(&mut self, files: &[(&str, &TagFile)]) {
        for loaded in &self.mods {
            let folder = loaded
                .file
                .rsplit_once('/')
                .map_or("", |(folder, _)| folder);
            for listed in &loaded.manifest.content.tags {
                let path = format!("{folder}/{listed}");
                let Some(&(file, tags)) = files.iter().find(|(file, _)| *file == path) else {
                    // A file that failed to load was reported by its loader.
                    continue;
                };
                self.tags.extend(tags);
                for (field, list) in tags.lists() {
                    for key in list
                        .keys()
                        .filter(|key| !self.narratives.contains_key(*key))
                    {
                        self.warnings.push(ContentError::new(
                            file,
                            format!("/{field}/{}", super::validate::pointer_token(key)),
                            format!("no narrative file defines `{key}`: check the key's spelling; its tags only help an entity with that `NarrativeKey`"),
                        ));
                    }
                }
            }
        }
    }

    /// Warns of each content file in a loaded mod's folder that its manifest does not
    /// list: it never loads, and the author most likely meant it to.
    fn warn_unlisted(&mut self, on_disk: &[String], listed: &HashSet<String>) {
        for loaded in &self.mods {
            let Some((folder, _)) = loaded.file.rsplit_once('/') else {
                continue;
            };
            for file in on_disk.iter().filter(|file| !listed.contains(*file)) {
                let Some(inside) = file
                    .strip_prefix(folder)
                    .and_then(|rest| rest.strip_prefix('/'))
                else {
                    continue;
                };
                let name = inside.rsplit('/').next().unwrap_or(inside);
                let Some(field) = super::mod_folders::listing_field(name) else {
                    continue;
                };
                self.warnings.push(ContentError::new(
                    file,
                    "",
                    format!(
                        "no manifest lists this file, so it is not loaded: add \"{inside}\" to `content.{field}` in {}, or remove the file",
                        loaded.file
                    ),
                ));
            }
        }
    }

    /// The narrative context for an entity key (`tavern:lute`).
    pub fn narrative(&self, key: &str) -> Option<&NarrativeContext> {
        self.narratives.get(key)
    }

    /// Every narrative context, in no particular order.
    pub fn narratives(&self) -> impl Iterator<Item = &NarrativeContext> {
        self.narratives.values()
    }

    /// The asset path a narrative context was loaded from.
    pub fn narrative_file(&self, key: &str) -> Option<&str> {
        self.narrative_files.get(key).map(String::as_str)
    }

    /// The narrative context an asset path defined, if it is in use.
    pub fn narrative_from_file(&self, file: &str) -> Option<&NarrativeContext> {
        self.narrative_files
            .iter()
            .find(|(_, f)| *f == file)
            .and_then(|(key, _)| self.narrative(key))
    }

    /// The canonical vocabularies with the words loaded mods added.
    pub fn vocabulary(&self) -> &NarrativeVocabulary {
        &self.vocabulary
    }

    /// Things that load but deserve attention, such as fragment pools below the
    /// documented minimums; logged as warnings.
    pub fn warnings(&self) -> &[ContentError] {
        &self.warnings
    }

    /// Mods that loaded, in load order.
    pub fn mods(&self) -> &[LoadedMod] {
        &self.mods
    }

    /// A loaded mod by id, matched case-insensitively.
    pub fn get_mod(&self, id: &str) -> Option<&LoadedMod> {
        self.mod_index
            .get(&id.to_ascii_lowercase())
            .map(|&i| &self.mods[i])
    }

    /// The verb aliases of the mod that owns this action id (`items:give`), longest first.
    pub fn verb_aliases(&self, action_id: &str) -> &[VerbAlias] {
        self.get_mod(action_namespace(action_id))
            .map_or(&[], |loaded| loaded.verb_aliases.as_slice())
    }

    /// Whether a mod with this id loaded (case-insensitive).
    pub fn is_mod_loaded(&self, id: &str) -> bool {
        self.mods
            .iter()
            .any(|m| m.manifest.id.eq_ignore_ascii_case(id))
    }

    /// A mod's group rank and action metadata, looked up once per group in every prompt.
    pub fn action_group(&self, mod_id: &str) -> (usize, Option<&ModActionMetadata>) {
        match self.groups_by_id.get(mod_id) {
            Some(&(rank, position)) => (rank, Some(&self.mods[position].metadata)),
            None => (self.group_rank(mod_id), self.action_metadata(mod_id)),
        }
    }

    /// A mod's action metadata (case-insensitive id).
    pub fn action_metadata(&self, mod_id: &str) -> Option<&ModActionMetadata> {
        self.mods
            .iter()
            .find(|m| m.manifest.id.eq_ignore_ascii_case(mod_id))
            .map(|m| &m.metadata)
    }

    /// The position of a mod's action group in prompts: the game file's
    /// `actionGroupOrder` first, then alphabetical. Unknown mods come last.
    pub fn group_rank(&self, mod_id: &str) -> usize {
        self.group_order
            .iter()
            .position(|id| id.eq_ignore_ascii_case(mod_id))
            .unwrap_or(usize::MAX)
    }

    /// Every valid action, in prompt order (by group, then id).
    pub fn actions(&self) -> &[ActionDefinition] {
        &self.actions
    }

    /// An action by its `mod:action` id.
    pub fn action(&self, id: &str) -> Option<&ActionDefinition> {
        self.action_index.get(id).map(|&i| &self.actions[i])
    }

    /// The asset path an action was loaded from.
    pub fn action_file(&self, id: &str) -> Option<&str> {
        self.action_files.get(id).map(String::as_str)
    }

    /// An actor spec by its `mod:name` id.
    pub fn actor(&self, id: &str) -> Option<&ActorSpec> {
        self.actors.get(id)
    }

    /// Every actor spec, in no particular order.
    pub fn actors(&self) -> impl Iterator<Item = &ActorSpec> {
        self.actors.values()
    }

    /// The tags of narrative keys, from every loaded tag file.
    pub fn tags(&self) -> &TagIndex {
        &self.tags
    }

    /// A prompt template by its `mod:name` id.
    pub fn prompt(&self, id: &str) -> Option<&PromptTemplate> {
        self.prompts.get(id)
    }

    /// Every prompt template, in no particular order.
    pub fn prompts(&self) -> impl Iterator<Item = &PromptTemplate> {
        self.prompts.values()
    }

    /// The asset path a prompt template was loaded from.
    pub fn prompt_file(&self, id: &str) -> Option<&str> {
        self.prompt_files.get(id).map(String::as_str)
    }

    /// The prompt template an asset path defined, if it is in use.
    pub fn prompt_from_file(&self, file: &str) -> Option<&PromptTemplate> {
        self.prompt_files
            .iter()
            .find(|(_, f)| *f == file)
            .and_then(|(id, _)| self.prompt(id))
    }

    /// The prompt template a spec thinks with: the one its `promptId` names, or `None`
    /// for the built-in one ([`PromptTemplate::default`]).
    pub fn prompt_for(&self, spec: &ActorSpec) -> Option<&PromptTemplate> {
        spec.prompt_id.as_deref().and_then(|id| self.prompt(id))
    }

    /// Problems across files found when this registry was built.
    pub fn problems(&self) -> &[ContentError] {
        &self.problems
    }

    /// The action an asset path defined, if it is in use.
    pub fn action_from_file(&self, file: &str) -> Option<&ActionDefinition> {
        self.action_files
            .iter()
            .find(|(_, f)| *f == file)
            .and_then(|(id, _)| self.action(id))
    }

    /// The actor spec an asset path defined, if it is in use.
    pub fn actor_from_file(&self, file: &str) -> Option<&ActorSpec> {
        self.actor_files
            .iter()
            .find(|(_, f)| *f == file)
            .and_then(|(id, _)| self.actor(id))
    }

    /// Counts rebuilds; changes whenever the content in use changes.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub(crate) fn set_generation(&mut self, generation: u64) {
        self.generation = generation;
    }
}

/// The note that a file's last valid version stays in use.
fn kept_last_valid(file: &str) -> ContentError {
    ContentError::new(
        file,
        "",
        "kept the last valid version of this file until its problems are fixed",
    )
}

/// The listed items that pass `check`; an item that fails keeps its `previous`
/// version from the same file when that one still passes.
fn accept_items<'a, T: PartialEq>(
    items: &[(&'a str, &'a T)],
    listed: &HashSet<String>,
    previous: impl Fn(&str) -> Option<&'a T>,
    check: impl Fn(&str, &T) -> Vec<ContentError>,
    problems: &mut Vec<ContentError>,
) -> Vec<(&'a str, &'a T)> {
    let mut accepted = Vec::new();
    for &(file, item) in items {
        if !listed.contains(file) {
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
            problems.push(kept_last_valid(file));
            accepted.push((file, last));
        }
    }
    accepted
}

/// The items of loaded mods, skipping (and reporting) every later claim to an id already taken.
fn first_claims<'a, T>(
    items: &[(&'a str, &'a T)],
    kind: &str,
    registry: &ContentRegistry,
    problems: &mut Vec<ContentError>,
    id_of: impl Fn(&T) -> &str,
) -> Vec<(&'a str, &'a T)> {
    let mut claimed: HashMap<&str, &str> = HashMap::new();
    let mut kept = Vec::new();
    for &(file, item) in items {
        let id = id_of(item);
        if !registry.is_mod_loaded(action_namespace(id)) {
            continue;
        }
        if let Some(first) = claimed.get(id) {
            problems.push(ContentError::new(
                file,
                "/id",
                format!("duplicate {kind} id `{id}`, already defined in {first}: give this {kind} its own id"),
            ));
            continue;
        }
        claimed.insert(id, file);
        kept.push((file, item));
    }
    kept
}
