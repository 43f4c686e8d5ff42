//! How the registry is read: each kind of content by id, by the file that defined it,
//! or all of it in order, and what its build found wrong.

use super::{ContentRegistry, LoadedMod, ModActionMetadata};
use crate::content::{
    AbilityDefinition, ActionDefinition, ActorSpec, ContentError, NarrativeContext,
    NarrativeVocabulary, PromptTemplate, RefinementMethod, TagIndex, TaskDefinition, VerbAlias,
    action_namespace,
};

impl ContentRegistry {
    /// The narrative context for an entity key (`tavern:lute`).
    pub fn narrative(&self, key: &str) -> Option<&NarrativeContext> {
        self.narratives.get(key)
    }

    /// Every narrative context, in load order.
    pub fn narratives(&self) -> impl Iterator<Item = &NarrativeContext> {
        self.narratives.iter()
    }

    /// The asset path a narrative context was loaded from.
    pub fn narrative_file(&self, key: &str) -> Option<&str> {
        self.narratives.file_of(key)
    }

    /// The narrative context an asset path defined, if it is in use.
    pub fn narrative_from_file(&self, file: &str) -> Option<&NarrativeContext> {
        self.narratives.defined_in(file)
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
        self.actions.as_slice()
    }

    /// An action by its `mod:action` id.
    pub fn action(&self, id: &str) -> Option<&ActionDefinition> {
        self.actions.get(id)
    }

    /// The asset path an action was loaded from.
    pub fn action_file(&self, id: &str) -> Option<&str> {
        self.actions.file_of(id)
    }

    /// An actor spec by its `mod:name` id.
    pub fn actor(&self, id: &str) -> Option<&ActorSpec> {
        self.actors.get(id)
    }

    /// Every actor spec, in load order.
    pub fn actors(&self) -> impl Iterator<Item = &ActorSpec> {
        self.actors.iter()
    }

    /// A planning task by its `mod:task` id.
    pub fn task(&self, id: &str) -> Option<&TaskDefinition> {
        self.tasks.get(id)
    }

    /// Every planning task, in load order.
    pub fn tasks(&self) -> impl Iterator<Item = &TaskDefinition> {
        self.tasks.iter()
    }

    /// The asset path a task was loaded from.
    pub fn task_file(&self, id: &str) -> Option<&str> {
        self.tasks.file_of(id)
    }

    /// An ability by its `mod:ability` id.
    pub fn ability(&self, id: &str) -> Option<&AbilityDefinition> {
        self.abilities.get(id)
    }

    /// Every ability, in load order.
    pub fn abilities(&self) -> impl Iterator<Item = &AbilityDefinition> {
        self.abilities.iter()
    }

    /// The asset path an ability was loaded from.
    pub fn ability_file(&self, id: &str) -> Option<&str> {
        self.abilities.file_of(id)
    }

    /// A refinement method by its `mod:method` id.
    pub fn method(&self, id: &str) -> Option<&RefinementMethod> {
        self.methods.get(id)
    }

    /// Every refinement method, in load order.
    pub fn methods(&self) -> impl Iterator<Item = &RefinementMethod> {
        self.methods.iter()
    }

    /// The asset path a refinement method was loaded from.
    pub fn method_file(&self, id: &str) -> Option<&str> {
        self.methods.file_of(id)
    }

    /// The methods of a task, most preferred first: those its `methods` lists, in its
    /// order, then the rest whose `taskId` names it, in id order.
    pub fn methods_of<'a>(
        &'a self,
        task: &'a TaskDefinition,
    ) -> impl Iterator<Item = &'a RefinementMethod> + 'a {
        let order = self.method_order.get(&task.id).into_iter().flatten();
        order.filter_map(|id| self.methods.get(id))
    }

    /// The tags of narrative keys, from every loaded tag file.
    pub fn tags(&self) -> &TagIndex {
        &self.tags
    }

    /// A prompt template by its `mod:name` id.
    pub fn prompt(&self, id: &str) -> Option<&PromptTemplate> {
        self.prompts.get(id)
    }

    /// Every prompt template, in load order.
    pub fn prompts(&self) -> impl Iterator<Item = &PromptTemplate> {
        self.prompts.iter()
    }

    /// The asset path a prompt template was loaded from.
    pub fn prompt_file(&self, id: &str) -> Option<&str> {
        self.prompts.file_of(id)
    }

    /// The prompt template an asset path defined, if it is in use.
    pub fn prompt_from_file(&self, file: &str) -> Option<&PromptTemplate> {
        self.prompts.defined_in(file)
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
        self.actions.defined_in(file)
    }

    /// The actor spec an asset path defined, if it is in use.
    pub fn actor_from_file(&self, file: &str) -> Option<&ActorSpec> {
        self.actors.defined_in(file)
    }

    /// Counts rebuilds; changes whenever the content in use changes.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub(crate) fn set_generation(&mut self, generation: u64) {
        self.generation = generation;
    }
}
