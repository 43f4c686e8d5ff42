//! The actions an actor can take right now: definitions × scope-resolved targets × tag rules.

use std::sync::Arc;

use bevy::prelude::*;

use super::{TargetScopes, WorldView};
use crate::content::{ActionDefinition, ContentRegistry};

/// One action an actor may take, with its targets chosen and its command rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvailableAction {
    /// Its number in the prompt, from 1.
    pub index: usize,
    /// The definition's `mod:action` id, shared by every combination of its targets.
    pub action_id: Arc<str>,
    /// The chosen targets in slot order: primary, secondary, tertiary.
    pub targets: Vec<Entity>,
    /// The rendered command: "give mug of ale to Marta".
    pub command: String,
    /// The definition's description, shared like the id.
    pub description: Arc<str>,
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
        let slots = action.target_slots().count();
        let mut candidates: Vec<Vec<(Entity, &str)>> = Vec::with_capacity(slots);
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
            candidates.push(
                scope_cache[position]
                    .1
                    .iter()
                    .filter(|&&e| slot.accepts(|tag| view.has_tag(e, tag)))
                    .map(|&e| (e, view.name(e)))
                    .collect(),
            );
        }
        if candidates.len() != slots {
            continue;
        }
        let template = CommandTemplate::parse(action);
        let (id, description): (Arc<str>, Arc<str>) = (
            action.id.as_str().into(),
            action.description.as_str().into(),
        );
        let mut chosen = Vec::with_capacity(slots);
        for_each_combination(&candidates, &mut chosen, &mut |targets| {
            offered.push(AvailableAction {
                index: offered.len() + 1,
                action_id: Arc::clone(&id),
                targets: targets.iter().map(|&(entity, _)| entity).collect(),
                command: template.render(targets),
                description: Arc::clone(&description),
            });
        });
    }
    offered
}

fn for_each_combination<'a>(
    candidates: &[Vec<(Entity, &'a str)>],
    chosen: &mut Vec<(Entity, &'a str)>,
    emit: &mut impl FnMut(&[(Entity, &'a str)]),
) {
    let Some((first, rest)) = candidates.split_first() else {
        emit(chosen);
        return;
    };
    for &candidate in first {
        if chosen.iter().any(|&(entity, _)| entity == candidate.0) {
            continue;
        }
        chosen.push(candidate);
        for_each_combination(rest, chosen, emit);
        chosen.pop();
    }
}

/// A template split once into text and target references, rendered per combination.
struct CommandTemplate<'a> {
    pieces: Vec<Piece<'a>>,
    length: usize,
}

enum Piece<'a> {
    Text(std::borrow::Cow<'a, str>),
    Target(usize),
}

impl<'a> CommandTemplate<'a> {
    fn parse(action: &'a ActionDefinition) -> Self {
        let mut pieces = Vec::new();
        let mut rest = action.template.as_str();
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else { break };
            pieces.push(Piece::Text(rest[..open].into()));
            let name = &after[..close];
            let slot = action
                .target_slots()
                .position(|(_, slot)| slot.placeholder == name);
            pieces.push(match (slot, action.parameters.get(name)) {
                (Some(slot), _) => Piece::Target(slot),
                (None, Some(parameter)) => Piece::Text(parameter.default_text().into()),
                (None, None) => Piece::Text(rest[open..open + close + 2].into()),
            });
            rest = &after[close + 1..];
        }
        pieces.push(Piece::Text(rest.into()));
        let length = pieces
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => text.len(),
                Piece::Target(_) => 16,
            })
            .sum();
        Self { pieces, length }
    }

    fn render(&self, targets: &[(Entity, &str)]) -> String {
        let mut command = String::with_capacity(self.length);
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => command.push_str(text),
                Piece::Target(slot) => {
                    command.push_str(targets.get(*slot).map_or("something", |&(_, name)| name))
                }
            }
        }
        command
    }
}

/// Fills a template: target placeholders with display names, parameters with their defaults.
pub fn render_command(action: &ActionDefinition, targets: &[Entity], view: &WorldView) -> String {
    let named: Vec<(Entity, &str)> = targets.iter().map(|&e| (e, view.name(e))).collect();
    CommandTemplate::parse(action).render(&named)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;
    use crate::content::{ContentSources, GameManifest, ModManifest};
    use crate::world::EntityView;

    fn entity(n: u32) -> Entity {
        Entity::from_raw_u32(n).expect("a valid index")
    }

    fn view() -> WorldView {
        let record = |name: &str,
                      tags: &[&str],
                      place: Option<u32>,
                      carried_by: Option<u32>,
                      character: bool| EntityView {
            name: name.to_owned(),
            tags: tags
                .iter()
                .map(|t| (*t).to_owned())
                .collect::<BTreeSet<_>>(),
            place: place.map(entity),
            carried_by: carried_by.map(entity),
            character,
            ..default()
        };
        let mut hall = record("the hall", &[], None, None, false);
        hall.is_place = true;
        hall.exits = vec![entity(2)];
        let mut yard = record("the yard", &[], None, None, false);
        yard.is_place = true;
        WorldView::new([
            (entity(1), hall),
            (entity(2), yard),
            (
                entity(10),
                record("Marta", &["person"], Some(1), None, true),
            ),
            (
                entity(11),
                record("Brom", &["person", "guard"], Some(1), None, true),
            ),
            (entity(12), record("Ada", &["person"], Some(1), None, true)),
            (
                entity(20),
                record("mug", &["portable"], Some(1), None, false),
            ),
            (entity(21), record("bench", &["seat"], Some(1), None, false)),
            (
                entity(22),
                record("key", &["portable"], None, Some(10), false),
            ),
            (
                entity(23),
                record("cart", &["portable"], Some(2), None, false),
            ),
        ])
    }

    fn registry(actions: &[serde_json::Value]) -> ContentRegistry {
        let mut manifests: Vec<ModManifest> = ["core", "items"]
            .iter()
            .map(|id| {
                serde_json::from_value(json!({ "id": id, "version": "1.0.0", "name": id }))
                    .expect("manifest")
            })
            .collect();
        let definitions: Vec<ActionDefinition> = actions
            .iter()
            .map(|a| serde_json::from_value(a.clone()).expect("action"))
            .collect();
        let game = GameManifest {
            mods: vec!["core".into(), "items".into()],
            action_group_order: vec![],
        };
        let files: Vec<String> = definitions
            .iter()
            .map(|d| format!("mods/{}/actions/{}.action.json", d.namespace(), d.name))
            .collect();
        for manifest in &mut manifests {
            let folder = format!("mods/{}/", manifest.id);
            manifest.content.actions = files
                .iter()
                .filter_map(|f| f.strip_prefix(&folder).map(str::to_owned))
                .collect();
        }
        let mods = [
            ("mods/core/mod.json", &manifests[0]),
            ("mods/items/mod.json", &manifests[1]),
        ];
        let actions: Vec<(&str, &ActionDefinition)> =
            files.iter().map(String::as_str).zip(&definitions).collect();
        ContentRegistry::build(ContentSources {
            narratives: &[],
            game: Some(("game.loom.json", &game)),
            mods: &mods,
            actions: &actions,
            actors: &[],
            scopes: None,
            ..ContentSources::default()
        })
    }

    fn commands(offered: &[AvailableAction]) -> Vec<(usize, &str)> {
        offered
            .iter()
            .map(|a| (a.index, a.command.as_str()))
            .collect()
    }

    #[test]
    fn combinations_pass_tag_rules_render_and_number_in_stable_order() {
        let registry = registry(&[
            json!({ "id": "items:give", "name": "Give", "description": "Hand over", "template": "give {item} to {whom}",
                    "targets": { "primary": { "scope": "inventory", "placeholder": "item" },
                                 "secondary": { "scope": "characters_here", "placeholder": "whom", "forbiddenTags": ["guard"] } } }),
            json!({ "id": "items:take", "name": "Take", "description": "Pick up", "template": "pick up {item} {manner}",
                    "targets": { "primary": { "scope": "things_here", "placeholder": "item", "requiredTags": ["portable"] } },
                    "parameters": { "manner": { "default": "quietly" } } }),
            json!({ "id": "core:go", "name": "Go", "description": "Leave", "template": "go to {place}",
                    "targets": { "primary": { "scope": "exits", "placeholder": "place" } } }),
            json!({ "id": "core:sit", "name": "Sit", "description": "Rest", "template": "sit", "actor": { "requiredTags": ["tired"] } }),
        ]);
        let offered = available_actions(
            &registry,
            &view(),
            &TargetScopes::default(),
            entity(10),
            |_| true,
        );
        assert_eq!(
            commands(&offered),
            [
                (1, "go to the yard"),
                (2, "give key to Ada"),
                (3, "pick up mug quietly")
            ],
            "core before items (alphabetical), the guard and the tired-only action left out"
        );
        assert_eq!(offered[1].targets, [entity(22), entity(12)]);
        assert_eq!(&*offered[1].action_id, "items:give");
    }

    #[test]
    fn one_entity_never_fills_two_slots_and_policy_filters() {
        let registry = registry(&[
            json!({ "id": "core:introduce", "name": "Introduce", "description": "Introduce people", "template": "introduce {a} to {b}",
                    "targets": { "primary": { "scope": "characters_here", "placeholder": "a" },
                                 "secondary": { "scope": "characters_here", "placeholder": "b" } } }),
            json!({ "id": "items:wave", "name": "Wave", "description": "Wave", "template": "wave" }),
        ]);
        let offered = available_actions(
            &registry,
            &view(),
            &TargetScopes::default(),
            entity(10),
            |id| id.starts_with("core:"),
        );
        assert_eq!(
            commands(&offered),
            [(1, "introduce Ada to Brom"), (2, "introduce Brom to Ada")]
        );
    }

    #[test]
    fn a_game_scope_and_an_unknown_scope() {
        let registry = registry(&[
            json!({ "id": "core:salute", "name": "Salute", "description": "Salute", "template": "salute {who}",
                    "targets": { "primary": { "scope": "guards_here", "placeholder": "who" } } }),
        ]);
        let mut scopes = TargetScopes::default();
        assert!(
            available_actions(&registry, &view(), &scopes, entity(10), |_| true).is_empty(),
            "an unknown scope offers nothing"
        );
        scopes.insert("guards_here", |view: &WorldView, actor: Entity| {
            let Some(place) = view.place_of(actor) else {
                return Vec::new();
            };
            view.occupants(place)
                .iter()
                .copied()
                .filter(|&e| view.has_tag(e, "guard"))
                .collect()
        });
        let offered = available_actions(&registry, &view(), &scopes, entity(10), |_| true);
        assert_eq!(commands(&offered), [(1, "salute Brom")]);
    }

    #[test]
    fn perception_names_who_and_what_is_here() {
        let text = crate::world::describe_surroundings(&view(), entity(10));
        assert_eq!(
            text,
            "You are in the hall.\nHere with you: Ada, Brom.\nYou see: bench, mug.\nYou carry: key.\nExits: the yard."
        );
    }
}
