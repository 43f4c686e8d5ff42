//! The actions an actor can take right now: definitions × scope-resolved targets × tag rules.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use smallvec::SmallVec;

use super::{TargetScopes, WorldView};
use crate::content::{ActionDefinition, ContentRegistry};

/// The targets of an offered action, in slot order: at most three, kept inline.
pub type ChosenTargets = SmallVec<[Entity; 3]>;

/// One action an actor may take, with its targets chosen and its command rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvailableAction {
    /// Its number in the prompt, from 1.
    pub index: usize,
    /// The definition's `mod:action` id, shared by every combination of its targets.
    pub action_id: Arc<str>,
    /// The chosen targets in slot order: primary, secondary, tertiary.
    pub targets: ChosenTargets,
    /// The rendered command: "give mug of ale to Marta", shared by every actor offered
    /// the same action on the same targets from one [`ActionOffers`].
    pub command: Arc<str>,
    /// The definition's description, shared like the id.
    pub description: Arc<str>,
}

/// Every action `actor` may take, numbered from 1 in a stable order: the
/// registry's action order (by group, then id), then targets by name.
///
/// `allowed` filters action ids (an actor's policy). A combination is offered only
/// when the actor passes the action's tag rule, every target passes its slot's,
/// and no entity fills two slots. Unknown scopes offer nothing.
///
/// To offer actions to many actors, build an [`ActionMenu`] once and offer from it
/// through one [`ActionOffers`] per world view.
pub fn available_actions(
    registry: &ContentRegistry,
    view: &WorldView,
    scopes: &TargetScopes,
    actor: Entity,
    allowed: impl Fn(&str) -> bool,
) -> Vec<AvailableAction> {
    ActionMenu::new(registry)
        .filtered(|action| allowed(&action.id))
        .offer(view, scopes, actor)
}

/// Some of a registry's actions, ready to offer to many actors: each template parsed
/// and each id and description shared once, instead of once per actor.
///
/// It holds copies of what it needs, so it stays valid when the registry changes;
/// build a new one when [`ContentRegistry::generation`] moves on to offer the new
/// content. Cloning or [filtering](Self::filtered) one shares its actions.
#[derive(Debug, Clone, Default)]
pub struct ActionMenu {
    actions: Vec<Arc<MenuAction>>,
}

#[derive(Debug)]
struct MenuAction {
    /// Tells menu actions apart, for [`ActionOffers`]' rendered commands: the same for
    /// every menu sharing this action, never reused.
    key: u64,
    definition: ActionDefinition,
    id: Arc<str>,
    description: Arc<str>,
    template: CommandTemplate,
}

/// The next [`MenuAction::key`].
static NEXT_MENU_ACTION: AtomicU64 = AtomicU64::new(0);

impl ActionMenu {
    /// Every action of the registry, in its order.
    pub fn new(registry: &ContentRegistry) -> Self {
        let actions = registry
            .actions()
            .iter()
            .map(|action| {
                Arc::new(MenuAction {
                    key: NEXT_MENU_ACTION.fetch_add(1, Ordering::Relaxed),
                    definition: action.clone(),
                    id: action.id.as_str().into(),
                    description: action.description.as_str().into(),
                    template: CommandTemplate::parse(action),
                })
            })
            .collect();
        Self { actions }
    }

    /// The actions `keep` accepts (an actor's policy), in the same order, shared with this menu.
    #[must_use]
    pub fn filtered(&self, keep: impl Fn(&ActionDefinition) -> bool) -> Self {
        Self {
            actions: self
                .actions
                .iter()
                .filter(|action| keep(&action.definition))
                .cloned()
                .collect(),
        }
    }

    /// How many action definitions it holds.
    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// Every action `actor` may take, as [`available_actions`] describes.
    pub fn offer(
        &self,
        view: &WorldView,
        scopes: &TargetScopes,
        actor: Entity,
    ) -> Vec<AvailableAction> {
        let mut offered = Vec::new();
        ActionOffers::new(view, scopes).offer_into(self, actor, &mut offered);
        offered
    }
}

/// Offers actions from one world view to many actors, as [`available_actions`]
/// describes: each command is rendered once however many actors are offered it, and
/// working space is reused from one actor to the next. Make one per world view (a
/// frame's): commands name their targets as the view does.
pub struct ActionOffers<'v> {
    view: &'v WorldView<'v>,
    scopes: &'v TargetScopes,
    /// Rendered commands by menu action and targets.
    commands: HashMap<(u64, ChosenTargets), Arc<str>>,
    /// Each scope's candidates for the actor being offered, by scope name.
    scoped: Vec<(&'v str, Vec<Entity>)>,
    /// Every slot's candidates for the action being offered, one slot after the other.
    candidates: Vec<(Entity, &'v str)>,
    offered: Vec<AvailableAction>,
    command: String,
}

impl<'v> ActionOffers<'v> {
    /// Offers from this view, with these scopes.
    pub fn new(view: &'v WorldView<'v>, scopes: &'v TargetScopes) -> Self {
        Self {
            view,
            scopes,
            commands: HashMap::default(),
            scoped: Vec::new(),
            candidates: Vec::new(),
            offered: Vec::new(),
            command: String::new(),
        }
    }

    /// Every action of `menu` that `actor` may take.
    pub fn offer(&mut self, menu: &ActionMenu, actor: Entity) -> Arc<[AvailableAction]> {
        let mut offered = std::mem::take(&mut self.offered);
        self.offer_into(menu, actor, &mut offered);
        let shared = offered.drain(..).collect();
        self.offered = offered;
        shared
    }

    fn offer_into(&mut self, menu: &ActionMenu, actor: Entity, offered: &mut Vec<AvailableAction>) {
        let view = self.view;
        self.scoped.clear();
        'actions: for action in &menu.actions {
            let definition = &action.definition;
            if !definition.actor.accepts(|tag| view.has_tag(actor, tag)) {
                continue;
            }
            self.candidates.clear();
            let mut ends: SmallVec<[usize; 3]> = SmallVec::new();
            for (_, slot) in definition.target_slots() {
                let scoped = match self.scoped.iter().position(|(name, _)| *name == slot.scope) {
                    Some(position) => &self.scoped[position].1,
                    None => {
                        let Some((name, scope)) = self.scopes.get_key_value(&slot.scope) else {
                            continue 'actions;
                        };
                        self.scoped.push((name, scope(view, actor)));
                        &self.scoped[self.scoped.len() - 1].1
                    }
                };
                self.candidates.extend(
                    scoped
                        .iter()
                        .filter(|&&e| slot.accepts(|tag| view.has_tag(e, tag)))
                        .map(|&e| (e, view.name(e))),
                );
                ends.push(self.candidates.len());
            }
            let mut start = 0;
            let mut lists: SmallVec<[&[(Entity, &str)]; 3]> = SmallVec::new();
            for &end in &ends {
                lists.push(&self.candidates[start..end]);
                start = end;
            }
            let (commands, command) = (&mut self.commands, &mut self.command);
            let mut chosen = SmallVec::new();
            for_each_combination(&lists, &mut chosen, &mut |targets| {
                let entities: ChosenTargets = targets.iter().map(|&(entity, _)| entity).collect();
                let command = commands
                    .entry((action.key, entities.clone()))
                    .or_insert_with(|| {
                        command.clear();
                        action.template.render_into(command, targets);
                        command.as_str().into()
                    });
                offered.push(AvailableAction {
                    index: offered.len() + 1,
                    action_id: Arc::clone(&action.id),
                    targets: entities,
                    command: Arc::clone(command),
                    description: Arc::clone(&action.description),
                });
            });
        }
    }
}

fn for_each_combination<'a>(
    candidates: &[&[(Entity, &'a str)]],
    chosen: &mut SmallVec<[(Entity, &'a str); 3]>,
    emit: &mut impl FnMut(&[(Entity, &'a str)]),
) {
    let Some((first, rest)) = candidates.split_first() else {
        emit(chosen);
        return;
    };
    for &candidate in *first {
        if chosen.iter().any(|&(entity, _)| entity == candidate.0) {
            continue;
        }
        chosen.push(candidate);
        for_each_combination(rest, chosen, emit);
        chosen.pop();
    }
}

/// A template split once into text and target references, rendered per combination.
#[derive(Debug, Clone)]
struct CommandTemplate {
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone)]
enum Piece {
    Text(Box<str>),
    Target(usize),
}

impl CommandTemplate {
    fn parse(action: &ActionDefinition) -> Self {
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
        pieces.retain(|piece| !matches!(piece, Piece::Text(text) if text.is_empty()));
        Self { pieces }
    }

    fn render_into(&self, command: &mut String, targets: &[(Entity, &str)]) {
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => command.push_str(text),
                Piece::Target(slot) => {
                    command.push_str(targets.get(*slot).map_or("something", |&(_, name)| name));
                }
            }
        }
    }
}

/// Fills a template: target placeholders with display names, parameters with their defaults.
pub fn render_command(action: &ActionDefinition, targets: &[Entity], view: &WorldView) -> String {
    let named: Vec<(Entity, &str)> = targets.iter().map(|&e| (e, view.name(e))).collect();
    let mut command = String::new();
    CommandTemplate::parse(action).render_into(&mut command, &named);
    command
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

    fn view() -> WorldView<'static> {
        let record = |name: &str,
                      tags: &[&str],
                      place: Option<u32>,
                      carried_by: Option<u32>,
                      character: bool| EntityView {
            name: name.to_owned().into(),
            tags: std::borrow::Cow::Owned(
                tags.iter()
                    .map(|t| (*t).to_owned())
                    .collect::<BTreeSet<_>>(),
            ),
            place: place.map(entity),
            carried_by: carried_by.map(entity),
            character,
            ..default()
        };
        let mut hall = record("the hall", &[], None, None, false);
        hall.is_place = true;
        hall.exits = vec![entity(2)].into();
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
        })
    }

    fn commands(offered: &[AvailableAction]) -> Vec<(usize, &str)> {
        offered.iter().map(|a| (a.index, &*a.command)).collect()
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
        assert_eq!(*offered[1].targets, [entity(22), entity(12)]);
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
