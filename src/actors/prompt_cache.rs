//! What smart actors' prompts share, kept from frame to frame: each spec's system
//! message, the actions and tasks its policy lets it be offered, and the answer schema
//! for each number of offered actions and tasks. A frame in which many actors think
//! builds each of these once instead of once per actor.

use std::sync::Arc;

use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use serde_json::Value;

use super::SmartActorSettings;
use crate::content::{AbilityDefinition, ActorSpec, ContentRegistry, PromptTemplate};
use crate::llm::ChatMessage;
use crate::prompt::{
    Choices, DecisionLimits, Offer, PromptSection, decision_schema, decision_system_prompt,
};
use crate::world::{ActionMenu, OfferedAbilities, OfferedActions};

/// The shared parts of decision prompts. Everything in it follows from the content,
/// the [`SmartActorSettings`] and an actor's limits, so it is dropped whenever the
/// content or the settings change. One for every system that builds prompts.
#[derive(Resource, Default)]
pub(super) struct PromptCache {
    /// The content generation the entries were built from; `None` before any.
    generation: Option<u64>,
    /// By spec id: its system message for each limits it was asked with.
    systems: HashMap<String, Vec<(DecisionLimits, SharedSystem)>>,
    /// Every action of the content.
    actions: Option<ActionMenu>,
    /// By spec id: the actions its policy allows, out of combat and in it, shared
    /// with `actions`.
    menus: HashMap<String, [Option<ActionMenu>; 2]>,
    /// Every task of the content, offered as actions are.
    tasks: Option<ActionMenu>,
    /// By spec id: the tasks its policy allows, shared with `tasks`.
    task_menus: HashMap<String, ActionMenu>,
    /// Every ability of the content, shared by the specs that allow it.
    all_abilities: Option<Vec<Arc<AbilityDefinition>>>,
    /// By spec id: the abilities its policy allows, in load order.
    abilities: HashMap<String, Vec<Arc<AbilityDefinition>>>,
    /// By limits: the answer schema for each number of offered actions and tasks.
    schemas: Vec<(DecisionLimits, HashMap<Choices, Arc<Value>>)>,
}

/// A spec's system message and its sections, shared by every actor of the spec.
pub(super) struct SharedSystem {
    /// The spec's name, as requests give it.
    pub name: Arc<str>,
    /// The message; cloning it shares its text.
    pub message: ChatMessage,
    /// Its sections and their estimated tokens.
    pub sections: Vec<PromptSection>,
}

impl PromptCache {
    /// Forgets everything when the content (hot reload bumps its generation) or the
    /// settings (limits, combat verbs) changed since the last frame: call it every
    /// frame, or a change made in a frame that builds no prompt goes unseen.
    pub fn refresh(&mut self, registry: &Res<ContentRegistry>, settings: &Res<SmartActorSettings>) {
        let generation = registry.generation();
        if self.generation != Some(generation) || registry.is_changed() || settings.is_changed() {
            self.systems.clear();
            self.actions = None;
            self.menus.clear();
            self.tasks = None;
            self.task_menus.clear();
            self.all_abilities = None;
            self.abilities.clear();
            self.schemas.clear();
            self.generation = Some(generation);
        }
    }

    /// The system message for an actor of `spec` answering within `limits`, from the
    /// spec's prompt template.
    pub fn system(
        &mut self,
        spec: &ActorSpec,
        template: &PromptTemplate,
        limits: &DecisionLimits,
    ) -> &SharedSystem {
        let built = self.systems.entry_ref(spec.id.as_str()).or_default();
        let position = match built.iter().position(|(seen, _)| seen == limits) {
            Some(position) => position,
            None => {
                let part = decision_system_prompt(spec, template, limits);
                built.push((
                    limits.clone(),
                    SharedSystem {
                        name: spec.persona.name.as_str().into(),
                        message: ChatMessage::system(part.text),
                        sections: part.sections,
                    },
                ));
                built.len() - 1
            }
        };
        &built[position].1
    }

    /// The actions an actor of `spec` may be offered, in combat (only those whose verb
    /// is one of `combat_verbs`) or not.
    pub fn menu(
        &mut self,
        registry: &ContentRegistry,
        spec: &ActorSpec,
        fighting: bool,
        combat_verbs: &[String],
    ) -> &ActionMenu {
        let actions = self
            .actions
            .get_or_insert_with(|| ActionMenu::new(registry));
        let menus = self.menus.entry_ref(spec.id.as_str()).or_default();
        menus[usize::from(fighting)].get_or_insert_with(|| {
            actions.filtered(|action| super::permits(spec, combat_verbs, fighting, action))
        })
    }

    /// The tasks an actor of `spec` may be offered (its policy's `allowedTasks`).
    pub fn task_menu(&mut self, registry: &ContentRegistry, spec: &ActorSpec) -> &ActionMenu {
        let tasks = self
            .tasks
            .get_or_insert_with(|| ActionMenu::of_tasks(registry));
        self.task_menus
            .entry_ref(spec.id.as_str())
            .or_insert_with(|| tasks.filtered(|task| spec.policy.allows_task(&task.id)))
    }

    /// The abilities an actor of `spec` may invoke (its policy's `allowedAbilities`).
    pub fn abilities(
        &mut self,
        registry: &ContentRegistry,
        spec: &ActorSpec,
    ) -> &[Arc<AbilityDefinition>] {
        let all = (self.all_abilities)
            .get_or_insert_with(|| registry.abilities().cloned().map(Arc::new).collect());
        self.abilities
            .entry_ref(spec.id.as_str())
            .or_insert_with(|| {
                (all.iter())
                    .filter(|ability| spec.policy.allows_ability(&ability.id))
                    .cloned()
                    .collect()
            })
    }

    /// The answer schema for these offered actions (numbered from 1) and tasks
    /// (numbered after them), and these abilities (as tools or not), within `limits`.
    /// Only a schema without abilities is kept: one with them names the entities
    /// around one actor now.
    pub fn schema(
        &mut self,
        (offered, tasks): (&OfferedActions, &OfferedActions),
        (abilities, as_tools): (&OfferedAbilities, bool),
        limits: &DecisionLimits,
    ) -> Arc<Value> {
        let choices = Choices {
            actions: offered.len(),
            tasks: tasks.len(),
        };
        if !abilities.is_empty() {
            let offer = Offer {
                choices,
                abilities: Some(abilities),
                as_tools,
            };
            return Arc::new(decision_schema(offer, limits));
        }
        let position = match self.schemas.iter().position(|(seen, _)| seen == limits) {
            Some(position) => position,
            None => {
                self.schemas.push((limits.clone(), HashMap::new()));
                self.schemas.len() - 1
            }
        };
        let by_choices = &mut self.schemas[position].1;
        let schema = (by_choices.entry(choices))
            .or_insert_with(|| Arc::new(decision_schema(choices, limits)));
        Arc::clone(schema)
    }
}
