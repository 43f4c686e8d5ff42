//! The actions an actor can take right now: definitions × scope-resolved targets × tag rules.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bevy::prelude::*;
use smallvec::SmallVec;

use super::offered::Offered;
use super::scope::{Scope, ScopeReach};
use super::{OfferedActions, TargetScopes, WorldView};
use crate::content::{ActionDefinition, ContentRegistry, Lifeline, value_text};
use serde_json::Value;

/// Every action `actor` may take, numbered from 1 in a stable order: the
/// registry's action order (by group, then id), then targets by name.
///
/// `allowed` filters action ids (an actor's policy). A combination is offered only
/// when the actor passes the action's tag rule, every target passes its slot's,
/// and no entity fills two slots. Unknown scopes offer nothing. An action offers at
/// most [`MOST_TARGET_COMBINATIONS`] combinations, the first in that order.
///
/// To offer actions to many actors, build an [`ActionMenu`] once and offer from it
/// through one [`ActionOffers`] per world view.
pub fn available_actions(
    registry: &ContentRegistry,
    view: &WorldView,
    scopes: &TargetScopes,
    actor: Entity,
    allowed: impl Fn(&str) -> bool,
) -> OfferedActions {
    ActionMenu::new(registry)
        .filtered(|action| allowed(&action.id))
        .offer(view, scopes, actor)
}

/// The most target combinations of one action offered to one actor: the first in
/// the offer's order. Two or three slots over a crowd multiply (three slots over 100
/// characters are 970,200 combinations), and a prompt shows a few dozen lines; past
/// this the offer would stall the frame making lines no prompt shows. The first
/// action capped for an actor logs a warning naming it, once per menu.
pub const MOST_TARGET_COMBINATIONS: usize = 1_000;

/// Some of a registry's actions, ready to offer to many actors: each template parsed
/// once, instead of once per actor.
///
/// It holds copies of what it needs, so it stays valid when the registry changes;
/// build a new one when [`ContentRegistry::generation`] moves on to offer the new
/// content. Cloning or [filtering](Self::filtered) one shares its actions.
#[derive(Debug, Clone, Default)]
pub struct ActionMenu {
    actions: Arc<[Arc<MenuAction>]>,
    /// Every scope the actions' slots name, each once.
    scopes: Arc<[String]>,
}

#[derive(Debug)]
pub(super) struct MenuAction {
    pub(super) definition: ActionDefinition,
    /// What it is to an actor that must not be stuck: none for a task.
    pub(super) lifeline: Option<Lifeline>,
    template: CommandTemplate,
    /// Each slot's scope, by its position in the menu's `scopes`.
    slot_scopes: SmallVec<[usize; 3]>,
    /// Whether it offered an actor more than [`MOST_TARGET_COMBINATIONS`] (and said so).
    capped: AtomicBool,
}

impl ActionMenu {
    /// Every action of the registry, in its order.
    pub fn new(registry: &ContentRegistry) -> Self {
        Self::of(registry.actions(), ActionDefinition::lifeline)
    }

    /// A menu of these definitions, in this order, each a [`Lifeline`] as `lifeline`
    /// tells.
    fn of(
        definitions: &[ActionDefinition],
        lifeline: impl Fn(&ActionDefinition) -> Option<Lifeline>,
    ) -> Self {
        let mut scopes: Vec<String> = Vec::new();
        let actions = definitions
            .iter()
            .map(|action| {
                let slot_scopes = action
                    .target_slots()
                    .map(|(_, slot)| {
                        scopes
                            .iter()
                            .position(|scope| *scope == slot.scope)
                            .unwrap_or_else(|| {
                                scopes.push(slot.scope.clone());
                                scopes.len() - 1
                            })
                    })
                    .collect();
                Arc::new(MenuAction {
                    definition: action.clone(),
                    lifeline: lifeline(action),
                    template: CommandTemplate::parse(action),
                    slot_scopes,
                    capped: AtomicBool::new(false),
                })
            })
            .collect();
        Self {
            actions,
            scopes: scopes.into(),
        }
    }

    /// Every task of the registry, offered the way actions are
    /// ([`TaskDefinition::as_action`](crate::content::TaskDefinition::as_action)): its
    /// entity parameters are the targets, its command the task's template. In prompt
    /// order, as actions: by mod group, then id.
    pub fn of_tasks(registry: &ContentRegistry) -> Self {
        let mut tasks: Vec<ActionDefinition> = registry.tasks().map(|t| t.as_action()).collect();
        tasks.sort_by(|a, b| {
            let rank = |task: &ActionDefinition| registry.group_rank(task.namespace());
            rank(a).cmp(&rank(b)).then_with(|| a.id.cmp(&b.id))
        });
        // A task is pursued, not a way to wait or to leave.
        Self::of(&tasks, |_| None)
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
            scopes: Arc::clone(&self.scopes),
        }
    }

    /// How many action definitions it holds.
    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// How far from an actor the scopes its actions name read ([`ScopeReach`]): the
    /// farthest of them, so that what it offers an actor changes only when
    /// [`PlaceRevisions::changed_within`](super::PlaceRevisions::changed_within) that
    /// reach of the actor's place moves on.
    pub fn reach(&self, scopes: &TargetScopes) -> ScopeReach {
        // Its own actions' scopes: a filtered menu shares the list of the menu it was
        // filtered from.
        (self.actions.iter())
            .flat_map(|action| &action.slot_scopes)
            .map(|&scope| scopes.reach(&self.scopes[scope]))
            .max()
            .unwrap_or_default()
    }

    /// Whether the two are one menu, shared: true of a clone, false of a menu built
    /// again or filtered, even with the same actions.
    pub fn shares(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.actions, &other.actions)
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// The command of the action `action_id` on `targets` (in slot order, each named by
    /// `name`), with the parameters' `values` (the defaults for those it does not
    /// hold), its template parsed once for the menu: as [`render_command`] writes it.
    /// `None` for an action the menu does not hold.
    pub fn render<'n>(
        &self,
        action_id: &str,
        targets: &[Entity],
        name: impl Fn(Entity) -> &'n str,
        values: &BTreeMap<String, Value>,
    ) -> Option<String> {
        let action = self.actions.iter().find(|a| a.definition.id == action_id)?;
        let named: SmallVec<[(Entity, &str); 3]> = targets.iter().map(|&e| (e, name(e))).collect();
        // Allocated once, at its length.
        let length = action.template.rendered_len(&named, values);
        let mut command = String::with_capacity(length);
        action.template.render_into(&mut command, &named, values);
        Some(command)
    }

    /// Every action `actor` may take, as [`available_actions`] describes.
    pub fn offer(&self, view: &WorldView, scopes: &TargetScopes, actor: Entity) -> OfferedActions {
        ActionOffers::new(view, scopes).offer(self, actor)
    }
}

/// Offers actions from one world view to many actors, as [`available_actions`]
/// describes, reusing its working space from one actor to the next.
pub struct ActionOffers<'v> {
    view: &'v WorldView<'v>,
    scopes: &'v TargetScopes,
    /// The scope names of the menu last offered from; `functions` and `scoped`
    /// follow them.
    names: Arc<[String]>,
    /// Each of those scopes, looked up once per menu; `None` for an unknown name.
    functions: Vec<Option<Scope<'v>>>,
    /// What a built-in scope adds candidates to.
    found: Vec<Entity>,
    /// Each scope's candidates, named, for the actor being offered.
    scoped: Vec<Scoped<'v>>,
    /// Slot candidates narrowed by their slot's tag rules, one slot after the other.
    narrowed: Vec<(Entity, &'v str)>,
    /// The offer being built, and its commands' text.
    offered: Vec<Offered>,
    commands: String,
}

/// A scope's candidates for one actor, with their names.
#[derive(Default)]
struct Scoped<'v> {
    /// The actor they are for; `None` before any.
    actor: Option<Entity>,
    /// Whether the scope exists.
    known: bool,
    candidates: Vec<(Entity, &'v str)>,
}

/// Where a slot's candidates are: all of a scope's, or a range of the narrowed ones.
#[derive(Clone, Copy)]
enum SlotCandidates {
    Scope(usize),
    Narrowed(usize, usize),
}

impl<'v> ActionOffers<'v> {
    /// Offers from this view, with these scopes.
    pub fn new(view: &'v WorldView<'v>, scopes: &'v TargetScopes) -> Self {
        Self {
            view,
            scopes,
            names: Arc::new([]),
            functions: Vec::new(),
            found: Vec::new(),
            scoped: Vec::new(),
            narrowed: Vec::new(),
            offered: Vec::new(),
            commands: String::new(),
        }
    }

    /// Every action of `menu` that `actor` may take.
    pub fn offer(&mut self, menu: &ActionMenu, actor: Entity) -> OfferedActions {
        self.offer_again(menu, actor, &OfferedActions::default())
    }

    /// Every action of `menu` that `actor` may take, as [`offer`](Self::offer) gives
    /// them; when that is exactly `last` (from the same menu, the same actions with
    /// the same targets and commands), `last` itself, shared. An actor whose
    /// surroundings did not change gets its last offer back without a new copy, and
    /// [`OfferedActions::shares`] tells the caller that nothing changed.
    pub fn offer_again(
        &mut self,
        menu: &ActionMenu,
        actor: Entity,
        last: &OfferedActions,
    ) -> OfferedActions {
        self.build(menu, actor);
        let (offered, commands) = (&self.offered, &self.commands);
        if last.is(&menu.actions, offered, commands) || (offered.is_empty() && last.is_empty()) {
            return last.clone();
        }
        // Copied out, so the buffers serve every actor.
        OfferedActions::from_parts(&menu.actions, offered, commands)
    }

    /// Builds the offer of `menu` to `actor` in `offered` and `commands`.
    fn build(&mut self, menu: &ActionMenu, actor: Entity) {
        let view = self.view;
        if !Arc::ptr_eq(&self.names, &menu.scopes) {
            self.names = Arc::clone(&menu.scopes);
            let scopes = self.scopes;
            self.functions = menu.scopes.iter().map(|name| scopes.scope(name)).collect();
            self.scoped.clear();
            self.scoped.resize_with(menu.scopes.len(), Scoped::default);
        }
        let mut offered = std::mem::take(&mut self.offered);
        let mut commands = std::mem::take(&mut self.commands);
        offered.clear();
        commands.clear();
        // Looked up once, not once for each tag of each action's rule.
        let actor_tags = view.get(actor).map(|v| &*v.tags);
        let has =
            |tags: Option<&BTreeSet<String>>, tag: &str| tags.is_some_and(|t| t.contains(tag));
        'actions: for (position, action) in menu.actions.iter().enumerate() {
            let definition = &action.definition;
            if !definition.actor.accepts(|tag| has(actor_tags, tag)) {
                continue;
            }
            self.narrowed.clear();
            let mut slots: SmallVec<[SlotCandidates; 3]> = SmallVec::new();
            for ((_, slot), &scope) in definition.target_slots().zip(&action.slot_scopes) {
                if !self.resolve(scope, actor) {
                    continue 'actions;
                }
                if slot.required_tags.is_empty() && slot.forbidden_tags.is_empty() {
                    slots.push(SlotCandidates::Scope(scope));
                    continue;
                }
                let start = self.narrowed.len();
                self.narrowed
                    .extend(self.scoped[scope].candidates.iter().filter(|&&(e, _)| {
                        let tags = view.get(e).map(|v| &*v.tags);
                        slot.accepts(|tag| has(tags, tag))
                    }));
                slots.push(SlotCandidates::Narrowed(start, self.narrowed.len()));
            }
            let lists: SmallVec<[&[(Entity, &str)]; 3]> = slots
                .iter()
                .map(|&slot| match slot {
                    SlotCandidates::Scope(scope) => self.scoped[scope].candidates.as_slice(),
                    SlotCandidates::Narrowed(start, end) => &self.narrowed[start..end],
                })
                .collect();
            let mut chosen = SmallVec::new();
            let mut left = MOST_TARGET_COMBINATIONS;
            let all = for_each_combination(&lists, &mut chosen, &mut left, &mut |targets| {
                let start = commands.len();
                action
                    .template
                    .render_into(&mut commands, targets, NO_VALUES);
                let mut entities = [Entity::PLACEHOLDER; 3];
                for (entity, &(target, _)) in entities.iter_mut().zip(targets) {
                    *entity = target;
                }
                offered.push(Offered {
                    action: position as u32,
                    targets: entities,
                    slots: targets.len() as u8,
                    command: (start as u32, commands.len() as u32),
                });
            });
            if all.is_break() && !action.capped.swap(true, Ordering::Relaxed) {
                warn!(
                    "action `{}` has more than {MOST_TARGET_COMBINATIONS} target combinations \
                     for {} ({actor}): only the first {MOST_TARGET_COMBINATIONS} are offered; \
                     narrow its slots' scopes or tag rules",
                    definition.id,
                    view.name(actor),
                );
            }
        }
        self.offered = offered;
        self.commands = commands;
    }

    /// Finds the candidates of the menu's scope `scope` for `actor`, once per actor;
    /// `false` when no scope has its name.
    fn resolve(&mut self, scope: usize, actor: Entity) -> bool {
        let view = self.view;
        let Some(scoped) = self.scoped.get_mut(scope) else {
            return false;
        };
        if scoped.actor == Some(actor) {
            return scoped.known;
        }
        scoped.actor = Some(actor);
        scoped.candidates.clear();
        let function = self.functions.get(scope).copied().flatten();
        scoped.known = function.is_some();
        let named = |e: &Entity| (*e, view.name(*e));
        match function {
            Some(Scope::Builtin(fill)) => {
                self.found.clear();
                fill(view, actor, &mut self.found);
                scoped.candidates.extend(self.found.iter().map(named));
            }
            Some(Scope::Registered(function)) => {
                scoped
                    .candidates
                    .extend(function(view, actor).iter().map(named));
            }
            None => {}
        }
        scoped.known
    }
}

/// Emits each combination of one candidate a slot, no entity in two slots, while
/// `left` lasts; breaks at the first one past it.
fn for_each_combination<'a>(
    candidates: &[&[(Entity, &'a str)]],
    chosen: &mut SmallVec<[(Entity, &'a str); 3]>,
    left: &mut usize,
    emit: &mut impl FnMut(&[(Entity, &'a str)]),
) -> ControlFlow<()> {
    let mut emit_one = |targets: &[(Entity, &'a str)]| {
        let Some(fewer) = left.checked_sub(1) else {
            return ControlFlow::Break(());
        };
        *left = fewer;
        emit(targets);
        ControlFlow::Continue(())
    };
    // Most actions have one slot, or none.
    if chosen.is_empty()
        && let [only] = candidates
    {
        return only
            .iter()
            .try_for_each(|&candidate| emit_one(&[candidate]));
    }
    let Some((first, rest)) = candidates.split_first() else {
        return emit_one(chosen);
    };
    for &candidate in *first {
        if chosen.iter().any(|&(entity, _)| entity == candidate.0) {
            continue;
        }
        chosen.push(candidate);
        let flow = for_each_combination(rest, chosen, left, emit);
        chosen.pop();
        flow?;
    }
    ControlFlow::Continue(())
}

/// What a command says for a target it has no entity for.
const SOMETHING: &str = "something";

/// A template split once into text and target references, rendered per combination.
#[derive(Debug, Clone)]
struct CommandTemplate {
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone)]
enum Piece {
    Text(Box<str>),
    Target(usize),
    /// A parameter, by name, and its default as text.
    Parameter(Box<str>, Box<str>),
}

/// No parameter's value: each at its default.
const NO_VALUES: &BTreeMap<String, Value> = &BTreeMap::new();

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
                (None, Some(parameter)) => {
                    Piece::Parameter(name.into(), parameter.default_text().into())
                }
                (None, None) => Piece::Text(rest[open..open + close + 2].into()),
            });
            rest = &after[close + 1..];
        }
        pieces.push(Piece::Text(rest.into()));
        pieces.retain(|piece| !matches!(piece, Piece::Text(text) if text.is_empty()));
        Self { pieces }
    }

    /// The length of the command [`render_into`](Self::render_into) writes.
    fn rendered_len(&self, targets: &[(Entity, &str)], values: &BTreeMap<String, Value>) -> usize {
        let length = |piece: &Piece| match piece {
            Piece::Text(text) => text.len(),
            Piece::Target(slot) => targets
                .get(*slot)
                .map_or(SOMETHING.len(), |&(_, name)| name.len()),
            Piece::Parameter(name, default) => values
                .get(&**name)
                .map_or(default.len(), |value| value_text(value).len()),
        };
        self.pieces.iter().map(length).sum()
    }

    /// Writes the command for `targets` (in slot order, with their names) and the
    /// parameters' `values`, each one missing at its default.
    fn render_into(
        &self,
        command: &mut String,
        targets: &[(Entity, &str)],
        values: &BTreeMap<String, Value>,
    ) {
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => command.push_str(text),
                Piece::Target(slot) => {
                    command.push_str(targets.get(*slot).map_or(SOMETHING, |&(_, name)| name));
                }
                Piece::Parameter(name, default) => match values.get(&**name) {
                    Some(value) => command.push_str(&value_text(value)),
                    None => command.push_str(default),
                },
            }
        }
    }
}

/// Fills a template: target placeholders with display names, parameters with their defaults.
pub fn render_command(action: &ActionDefinition, targets: &[Entity], view: &WorldView) -> String {
    let named: Vec<(Entity, &str)> = targets.iter().map(|&e| (e, view.name(e))).collect();
    let mut command = String::new();
    CommandTemplate::parse(action).render_into(&mut command, &named, NO_VALUES);
    command
}

#[cfg(test)]
pub(crate) mod tests {
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

    pub(crate) fn registry(actions: &[serde_json::Value]) -> ContentRegistry {
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

    fn commands(offered: &OfferedActions) -> Vec<(usize, &str)> {
        offered.iter().map(|a| (a.index, a.command)).collect()
    }

    #[test]
    fn things_next_door_are_in_the_places_one_exit_away_and_reach_that_far() {
        let scopes = TargetScopes::default();
        let Some(Scope::Builtin(next_door)) = scopes.scope("things_next_door") else {
            panic!("a built-in scope");
        };
        let mut found = Vec::new();
        next_door(&view(), entity(10), &mut found);
        assert_eq!(
            found,
            [entity(23)],
            "the cart in the yard, not the hall's mug"
        );
        found.clear();
        next_door(&view(), entity(23), &mut found);
        assert_eq!(found, [], "the yard has no exits");
        assert_eq!(scopes.reach("things_here"), ScopeReach::Place);
        assert_eq!(scopes.reach("things_next_door"), ScopeReach::NextDoor);
        assert_eq!(scopes.reach("no_such_scope"), ScopeReach::Place);
        let mut registered = TargetScopes::default();
        registered.insert("things_here", |_: &WorldView, _| Vec::new());
        assert_eq!(registered.reach("things_here"), ScopeReach::Anywhere);
        // A scope registered with its reach reads as far as it said, replaced or not.
        registered.insert_within("things_here", ScopeReach::NextDoor, |_: &WorldView, _| {
            Vec::new()
        });
        registered.insert_within("sleepers_here", ScopeReach::Place, |_: &WorldView, _| {
            Vec::new()
        });
        assert_eq!(registered.reach("things_here"), ScopeReach::NextDoor);
        assert_eq!(registered.reach("sleepers_here"), ScopeReach::Place);
        registered.insert("sleepers_here", |_: &WorldView, _| Vec::new());
        assert_eq!(registered.reach("sleepers_here"), ScopeReach::Anywhere);

        // A menu reaches as far as its farthest action, a filtered one as its own.
        let registry = registry(&[
            json!({ "id": "items:fetch", "name": "Fetch", "description": "Fetch", "template": "fetch {item}",
                    "targets": { "primary": { "scope": "things_next_door", "placeholder": "item" } } }),
            json!({ "id": "core:wait", "name": "Wait", "description": "Wait", "template": "wait" }),
        ]);
        let menu = ActionMenu::new(&registry);
        assert_eq!(menu.reach(&scopes), ScopeReach::NextDoor);
        let waiting = menu.filtered(|action| action.id == "core:wait");
        assert_eq!(waiting.reach(&scopes), ScopeReach::Place);
        assert_eq!(ActionMenu::default().reach(&scopes), ScopeReach::Place);
    }

    /// A command rendered for a plan's step says the step's parameters, not the
    /// action's defaults; one the step leaves out says its default.
    #[test]
    fn a_command_says_the_parameters_it_is_given() {
        let registry = registry(&[json!({
            "id": "items:take", "name": "Take", "description": "Pick up",
            "template": "pick up {item} {manner}, {count} times",
            "targets": { "primary": { "scope": "things_here", "placeholder": "item" } },
            "parameters": { "manner": { "default": "quietly" }, "count": { "default": 1 } }
        })]);
        let menu = ActionMenu::new(&registry);
        let name = |_: Entity| "mug";
        let values = BTreeMap::from([
            ("manner".to_owned(), json!("with a flourish")),
            ("count".to_owned(), json!(2)),
        ]);
        let rendered = |values: &BTreeMap<String, serde_json::Value>| {
            menu.render("items:take", &[entity(22)], name, values)
        };
        assert_eq!(
            rendered(&values).as_deref(),
            Some("pick up mug with a flourish, 2 times")
        );
        assert_eq!(
            rendered(&BTreeMap::new()).as_deref(),
            Some("pick up mug quietly, 1 times"),
            "the defaults"
        );
    }

    /// Two mugs on the table and two guests called Ada: an actor is offered, and
    /// perceives, each apart.
    #[test]
    fn namesakes_here_are_offered_and_perceived_apart() {
        let registry = registry(&[
            json!({ "id": "items:take", "name": "Take", "description": "Pick up", "template": "take {item}",
                    "targets": { "primary": { "scope": "things_here", "placeholder": "item" } } }),
            json!({ "id": "core:greet", "name": "Greet", "description": "Greet", "template": "greet {whom}",
                    "targets": { "primary": { "scope": "characters_here", "placeholder": "whom" } } }),
        ]);
        let in_hall = |name: &str, character: bool| EntityView {
            name: name.to_owned().into(),
            place: Some(entity(1)),
            character,
            ..default()
        };
        let hall = EntityView {
            name: "the hall".into(),
            is_place: true,
            ..default()
        };
        let view = WorldView::new([
            (entity(1), hall),
            (entity(10), in_hall("Marta", true)),
            (entity(11), in_hall("Ada", true)),
            (entity(12), in_hall("Ada", true)),
            (entity(20), in_hall("mug", false)),
            (entity(21), in_hall("mug", false)),
        ]);
        let offered = available_actions(
            &registry,
            &view,
            &TargetScopes::default(),
            entity(10),
            |_| true,
        );
        let commands: Vec<&str> = offered.iter().map(|a| a.command).collect();
        assert_eq!(
            commands,
            [
                "greet Ada (1)",
                "greet Ada (2)",
                "take mug (1)",
                "take mug (2)"
            ]
        );
        let mut perceived = String::new();
        crate::world::write_surroundings(&mut perceived, &view, entity(10));
        assert!(
            perceived.contains("Ada (1), Ada (2)") && perceived.contains("mug (1), mug (2)"),
            "{perceived}"
        );
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
        let give = offered.get(2).expect("a second action");
        assert_eq!(give.targets, [entity(22), entity(12)]);
        assert_eq!(give.action_id, "items:give");
        assert_eq!(give.description, "Hand over");
        let ways_out = [Some(Lifeline::Leave), None, None];
        assert!(
            offered.lifelines().eq(ways_out),
            "going to the yard is a way to leave"
        );
        assert_eq!(offered.get(0), None, "numbered from 1");
        assert_eq!(offered.get(4), None);
        assert_eq!(
            offered.iter().rev().map(|a| a.index).collect::<Vec<_>>(),
            [3, 2, 1]
        );
        let mut fewer = offered.clone();
        fewer.leave_out(&[true, false]);
        assert_eq!(
            commands(&fewer),
            [(1, "give key to Ada"), (2, "pick up mug quietly")],
            "numbered again; a short mask keeps the rest"
        );
        assert!(
            fewer.lifelines().eq([None, None]),
            "the way to leave left out"
        );
        assert_eq!(offered.len(), 3, "the offer it was cloned from keeps all");
        // Trimmed into an offer of its own: the same actions, numbered again.
        let mut own = fewer.clone();
        drop(fewer);
        own.clone_leaving_out(&offered, &[false, true]);
        assert_eq!(
            commands(&own),
            [(1, "go to the yard"), (2, "pick up mug quietly")]
        );
        // An offer still held elsewhere is not written over.
        let held = own.clone();
        own.clone_leaving_out(&offered, &[false, false, true]);
        assert_eq!(
            commands(&own),
            [(1, "go to the yard"), (2, "give key to Ada")]
        );
        assert_eq!(
            commands(&held),
            [(1, "go to the yard"), (2, "pick up mug quietly")]
        );
        own.clone_leaving_out(&offered, &[]);
        assert!(own.shares(&offered), "nothing left out: shared");
        own.clone_leaving_out(&OfferedActions::default(), &[true]);
        assert!(own.is_empty());
    }

    /// Slots over a crowd multiply: an action offers its first
    /// [`MOST_TARGET_COMBINATIONS`] combinations, in order, and is marked as capped;
    /// one under the cap offers all of its own.
    #[test]
    fn an_action_offers_at_most_its_first_thousand_combinations() {
        let registry = registry(&[
            json!({ "id": "core:greet", "name": "Greet", "description": "Wave", "template": "greet {whom}",
                    "targets": { "primary": { "scope": "characters_here", "placeholder": "whom" } } }),
            json!({ "id": "core:introduce", "name": "Introduce", "description": "Make known",
                    "template": "introduce {one} to {other} and {third}",
                    "targets": { "primary": { "scope": "characters_here", "placeholder": "one" },
                                 "secondary": { "scope": "characters_here", "placeholder": "other" },
                                 "tertiary": { "scope": "characters_here", "placeholder": "third" } } }),
        ]);
        // 100 characters in the hall: the actor and 99 others, so 941,094 ways to
        // introduce three of them.
        let hall = EntityView {
            name: "the hall".into(),
            is_place: true,
            ..default()
        };
        let crowd = (100..200).map(|n| {
            let person = EntityView {
                name: format!("person {n}").into(),
                place: Some(entity(1)),
                character: true,
                ..default()
            };
            (entity(n), person)
        });
        let view = WorldView::new(std::iter::once((entity(1), hall)).chain(crowd));
        let menu = ActionMenu::new(&registry);
        let offered = menu.offer(&view, &TargetScopes::default(), entity(100));
        let count = |id: &str| offered.iter().filter(|a| a.action_id == id).count();
        assert_eq!(count("core:greet"), 99, "under the cap: every one");
        assert_eq!(count("core:introduce"), MOST_TARGET_COMBINATIONS);
        let introductions: Vec<&str> = (offered.iter())
            .filter(|a| a.action_id == "core:introduce")
            .map(|a| a.command)
            .collect();
        assert_eq!(
            introductions[..3],
            [
                "introduce person 101 to person 102 and person 103",
                "introduce person 101 to person 102 and person 104",
                "introduce person 101 to person 102 and person 105",
            ],
            "the first in order, no one twice"
        );
        assert_eq!(
            introductions.last(),
            Some(&"introduce person 101 to person 112 and person 132"),
            "ten runs of the third slot (97 each), then 30 of the next: 102 to 111, 113 to 132"
        );
        let capped: Vec<bool> = (menu.actions.iter())
            .map(|action| action.capped.load(Ordering::Relaxed))
            .collect();
        assert_eq!(capped, [false, true], "only the capped action is marked");
    }

    /// A one-line offer, for tests elsewhere that need one: Marta's, of `core:go` to
    /// the yard.
    pub(crate) fn offer_to_go() -> OfferedActions {
        let content = registry(&[
            json!({ "id": "core:go", "name": "Go", "description": "Leave", "template": "go to {place}",
                    "targets": { "primary": { "scope": "exits", "placeholder": "place" } } }),
        ]);
        available_actions(
            &content,
            &view(),
            &TargetScopes::default(),
            entity(10),
            |_| true,
        )
    }

    /// `items:take` on what is here and `core:go` through an exit.
    fn take_and_go() -> ContentRegistry {
        registry(&[
            json!({ "id": "items:take", "name": "Take", "description": "Pick up", "template": "pick up {item}",
                    "targets": { "primary": { "scope": "things_here", "placeholder": "item" } } }),
            json!({ "id": "core:go", "name": "Go", "description": "Leave", "template": "go to {place}",
                    "targets": { "primary": { "scope": "exits", "placeholder": "place" } } }),
        ])
    }

    /// Runs `test` with offers of [`take_and_go`]'s menu in [`view`].
    fn with_take_and_go(test: impl FnOnce(&mut ActionOffers<'_>, &ActionMenu, &ContentRegistry)) {
        let content = take_and_go();
        let menu = ActionMenu::new(&content);
        let view = view();
        let scopes = TargetScopes::default();
        test(&mut ActionOffers::new(&view, &scopes), &menu, &content);
    }

    #[test]
    fn an_offer_made_again_is_equal_and_another_offer_is_not() {
        with_take_and_go(|offers, menu, content| {
            let marta = offers.offer(menu, entity(10));
            let again = offers.offer(menu, entity(10));
            assert_eq!(marta, again);
            assert!(!marta.shares(&again), "made again, not shared");
            // Ada, in the same hall, is offered the same actions on the same targets.
            let ada = offers.offer(menu, entity(12));
            assert_eq!(commands(&ada), commands(&marta));
            assert_eq!(marta, ada);
            let mut fewer = marta.clone();
            fewer.retain(|action| action.action_id != "core:go");
            assert_ne!(marta, fewer);
            // A menu built again offers the same; another menu's actions are others.
            let rebuilt = ActionMenu::new(content);
            assert_eq!(offers.offer(&rebuilt, entity(10)), marta);
            let renamed = registry(&[
                json!({ "id": "items:grab", "name": "Grab", "description": "Pick up", "template": "pick up {item}",
                    "targets": { "primary": { "scope": "things_here", "placeholder": "item" } } }),
                json!({ "id": "core:go", "name": "Go", "description": "Leave", "template": "go to {place}",
                    "targets": { "primary": { "scope": "exits", "placeholder": "place" } } }),
            ]);
            let grab = offers.offer(&ActionMenu::new(&renamed), entity(10));
            assert_eq!(commands(&grab), commands(&marta));
            assert_ne!(grab, marta);
            assert_ne!(OfferedActions::default(), marta);
        });
    }

    #[test]
    fn an_offer_made_again_unchanged_is_the_last_one_shared() {
        with_take_and_go(|offers, menu, content| {
            let marta = offers.offer(menu, entity(10));
            assert!(!marta.is_empty());
            let again = offers.offer_again(menu, entity(10), &marta);
            assert!(
                again.shares(&marta),
                "nothing changed: the same offer, shared"
            );
            let fresh = offers.offer(menu, entity(10));
            assert!(
                !fresh.shares(&marta) && fresh == marta,
                "offer makes a new one"
            );
            // What differs gets a new offer, as `offer` would make it.
            let mut fewer = marta.clone();
            fewer.retain(|action| action.action_id != "core:go");
            let whole = offers.offer_again(menu, entity(10), &fewer);
            assert!(!whole.shares(&fewer));
            assert_eq!(whole, marta);
            let from_rebuilt = offers.offer_again(&ActionMenu::new(content), entity(10), &marta);
            assert!(!from_rebuilt.shares(&marta), "another menu's offer");
            assert_eq!(from_rebuilt, marta);
            // The yard holds a cart and leads nowhere: another offer.
            let yard = offers.offer_again(menu, entity(2), &marta);
            assert!(!yard.shares(&marta));
            assert_eq!(commands(&yard), commands(&offers.offer(menu, entity(2))));
            assert!(OfferedActions::default().shares(&OfferedActions::default()));
            assert!(!marta.shares(&OfferedActions::default()));
        });
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
    fn a_game_scope_replaces_a_built_in_one_of_the_same_name() {
        let registry = registry(&[
            json!({ "id": "core:go", "name": "Go", "description": "Leave", "template": "go to {place}",
                    "targets": { "primary": { "scope": "exits", "placeholder": "place" } } }),
        ]);
        let mut scopes = TargetScopes::default();
        let built_in = available_actions(&registry, &view(), &scopes, entity(10), |_| true);
        assert_eq!(commands(&built_in), [(1, "go to the yard")]);
        // Every place, not only the ones next door.
        scopes.insert("exits", |_: &WorldView, _| vec![entity(1), entity(2)]);
        let offered = available_actions(&registry, &view(), &scopes, entity(10), |_| true);
        assert_eq!(
            commands(&offered),
            [(1, "go to the hall"), (2, "go to the yard")]
        );
        assert_eq!(
            scopes
                .get("exits")
                .map(|exits| exits(&view(), entity(10)).len()),
            Some(2)
        );
    }

    #[test]
    fn perception_names_who_and_what_is_here() {
        let text = crate::world::describe_surroundings(&view(), entity(10));
        assert_eq!(
            text,
            "You are in the hall.\nHere with you: Ada, Brom.\nYou see: bench, mug.\nYou carry: key.\nExits: the yard."
        );
    }

    #[test]
    fn tasks_are_offered_like_actions_with_their_entities_as_targets() {
        fn parse<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
            serde_json::from_value(value).expect("content")
        }
        let manifest: ModManifest = parse(
            json!({ "id": "items", "version": "1.0.0", "name": "Items",
            "content": { "actions": ["wait.action.json"], "tasks": ["serve.task.json", "rest.task.json"],
                         "methods": ["serve.method.json", "rest.method.json"] } }),
        );
        let game = GameManifest {
            mods: vec!["items".into()],
            action_group_order: vec![],
        };
        let wait: ActionDefinition = parse(
            json!({ "id": "items:wait", "name": "Wait", "description": "d", "template": "wait" }),
        );
        let serve: crate::content::TaskDefinition = parse(json!({
            "id": "items:serve", "name": "Serve", "description": "bring a drink",
            "template": "serve {customer} the {drink}, {rounds} round",
            "parameters": [
                { "name": "customer", "entity": { "scope": "characters_here", "forbiddenTags": ["guard"] } },
                { "name": "drink", "entity": { "scope": "things_here", "requiredTags": ["portable"] } },
                { "name": "rounds", "value": { "type": "integer", "default": 1 } }
            ]
        }));
        let method: crate::content::RefinementMethod = parse(json!({
            "refinementMethodId": "items:serve_slowly", "taskId": "items:serve",
            "steps": [{ "stepType": "primitive_action", "actionId": "items:wait" }]
        }));
        let rest: crate::content::TaskDefinition = parse(json!({
            "id": "items:rest", "name": "Rest", "description": "rest a while", "template": "rest"
        }));
        let rest_method: crate::content::RefinementMethod = parse(json!({
            "refinementMethodId": "items:rest_a_while", "taskId": "items:rest",
            "steps": [{ "stepType": "primitive_action", "actionId": "items:wait" }]
        }));
        let registry = ContentRegistry::build(ContentSources {
            game: Some(("game.loom.json", &game)),
            mods: &[("mods/items/mod.json", &manifest)],
            actions: &[("mods/items/wait.action.json", &wait)],
            tasks: &[
                ("mods/items/serve.task.json", &serve),
                ("mods/items/rest.task.json", &rest),
            ],
            methods: &[
                ("mods/items/serve.method.json", &method),
                ("mods/items/rest.method.json", &rest_method),
            ],
            ..ContentSources::default()
        });
        assert_eq!(registry.problems(), []);
        let offered =
            ActionMenu::of_tasks(&registry).offer(&view(), &TargetScopes::default(), entity(10));
        assert_eq!(
            commands(&offered),
            [(1, "rest"), (2, "serve Ada the mug, 1 round")],
            "Brom is a guard, the bench is not portable"
        );
        let task = offered.get(2).expect("offered");
        assert_eq!(
            (task.action_id, task.targets),
            ("items:serve", &[entity(12), entity(20)][..])
        );
        assert_eq!(task.description, "bring a drink");
        // A task with no target is pursued, not a way to wait; the action is one.
        assert!(offered.lifelines().eq([None, None]));
        let actions =
            ActionMenu::new(&registry).offer(&view(), &TargetScopes::default(), entity(10));
        assert!(actions.lifelines().eq([Some(Lifeline::Wait)]));
    }
}
