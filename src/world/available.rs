//! The actions an actor can take right now: definitions × scope-resolved targets × tag rules.

use bevy::prelude::*;

use super::{TargetScopes, WorldView};
use crate::content::{ActionDefinition, ContentRegistry};
use crate::prompt::ActionLine;

/// One action an actor may take, with its targets chosen and its command rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvailableAction {
    /// Its number in the prompt, from 1.
    pub index: usize,
    /// The definition's `mod:action` id.
    pub action_id: String,
    /// The chosen targets in slot order: primary, secondary, tertiary.
    pub targets: Vec<Entity>,
    /// The rendered command: "give mug of ale to Marta".
    pub command: String,
    /// The definition's description.
    pub description: String,
}

impl ActionLine for AvailableAction {
    fn index(&self) -> usize {
        self.index
    }
    fn action_id(&self) -> &str {
        &self.action_id
    }
    fn command(&self) -> &str {
        &self.command
    }
    fn description(&self) -> &str {
        &self.description
    }
}

/// Every action `actor` may take, numbered from 1 in a stable order: the
/// registry's action order (by group, then id), then targets by name.
///
/// `allowed` filters action ids (an actor's policy). A combination is offered only
/// when the actor passes the action's tag rule, every target passes its slot's,
/// and no entity fills two slots. Unknown scopes offer nothing.
pub fn available_actions(
    registry: &ContentRegistry,
    view: &WorldView,
    scopes: &TargetScopes,
    actor: Entity,
    allowed: impl Fn(&str) -> bool,
) -> Vec<AvailableAction> {
    let mut offered = Vec::new();
    let mut scope_cache: Vec<(&str, Vec<Entity>)> = Vec::new();
    for action in registry.actions() {
        if !allowed(&action.id) || !action.actor.accepts(|tag| view.has_tag(actor, tag)) {
            continue;
        }
        let mut candidates: Vec<Vec<Entity>> = Vec::with_capacity(3);
        for (_, slot) in action.target_slots() {
            let position = match scope_cache.iter().position(|(name, _)| *name == slot.scope) {
                Some(position) => position,
                None => {
                    let Some(scope) = scopes.get(&slot.scope) else {
                        break;
                    };
                    scope_cache.push((&slot.scope, scope(view, actor)));
                    scope_cache.len() - 1
                }
            };
            let resolved = &scope_cache[position].1;
            candidates.push(
                resolved
                    .iter()
                    .copied()
                    .filter(|&e| slot.accepts(|tag| view.has_tag(e, tag)))
                    .collect(),
            );
        }
        if candidates.len() != action.target_slots().count() {
            continue;
        }
        for_each_combination(
            &candidates,
            &mut Vec::with_capacity(candidates.len()),
            &mut |targets| {
                offered.push(AvailableAction {
                    index: offered.len() + 1,
                    action_id: action.id.clone(),
                    targets: targets.to_vec(),
                    command: render_command(action, targets, view),
                    description: action.description.clone(),
                });
            },
        );
    }
    offered
}

fn for_each_combination(
    candidates: &[Vec<Entity>],
    chosen: &mut Vec<Entity>,
    emit: &mut impl FnMut(&[Entity]),
) {
    let Some((first, rest)) = candidates.split_first() else {
        emit(chosen);
        return;
    };
    for &entity in first {
        if chosen.contains(&entity) {
            continue;
        }
        chosen.push(entity);
        for_each_combination(rest, chosen, emit);
        chosen.pop();
    }
}

/// Fills a template: target placeholders with display names, parameters with their defaults.
pub fn render_command(action: &ActionDefinition, targets: &[Entity], view: &WorldView) -> String {
    let mut command = String::with_capacity(action.template.len() + 16);
    let mut rest = action.template.as_str();
    while let Some(open) = rest.find('{') {
        command.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            command.push_str(&rest[open..]);
            return command;
        };
        let name = &after[..close];
        let slot_target = action
            .target_slots()
            .zip(targets)
            .find(|((_, slot), _)| slot.placeholder == name)
            .map(|(_, &entity)| entity);
        match (slot_target, action.parameters.get(name)) {
            (Some(entity), _) => command.push_str(view.name(entity)),
            (None, Some(parameter)) => command.push_str(&parameter.default_text()),
            (None, None) => command.push_str(&rest[open..open + close + 2]),
        }
        rest = &after[close + 1..];
    }
    command.push_str(rest);
    command
}
