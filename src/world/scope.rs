//! Target scopes: named functions from an actor to the entities an action may target.

use std::collections::BTreeMap;
use std::sync::Arc;

use bevy::prelude::*;

use super::WorldView;

/// A scope function: the candidates for an actor, in a stable order.
///
/// It reads the world view and the actor alone: smart actors keep their offers while
/// the place model and the scopes stay the same ([`WorldViewChanges`](super::WorldViewChanges)),
/// so a scope that read anything else would not be asked again when that changed.
pub type ScopeFn = Arc<dyn Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync>;

/// A built-in scope: adds the candidates for an actor to a list, so offering actions
/// to many actors reuses one list.
pub(crate) type BuiltinScope = fn(&WorldView, Entity, &mut Vec<Entity>);

/// How far from an actor a scope reads: what must change for it to give something
/// else, which [`PlaceRevisions::changed_within`](super::PlaceRevisions::changed_within)
/// tells the last revision of. Ordered from nearest to farthest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum ScopeReach {
    /// The actor's place: who and what is in it, what they carry, and its exits.
    #[default]
    Place,
    /// That, and who and what is in each place its exits lead to.
    NextDoor,
    /// Anything in the view.
    Anywhere,
}

/// A scope as offering actions calls it.
#[derive(Clone, Copy)]
pub(crate) enum Scope<'a> {
    Builtin(BuiltinScope),
    Registered(&'a ScopeFn),
}

/// The target scopes actions may name, built-in and registered by the game.
#[derive(Resource, Clone)]
pub struct TargetScopes {
    /// Every scope by name, and how far it reads.
    scopes: BTreeMap<String, (ScopeFn, ScopeReach)>,
    /// The built-in scopes no registered scope has replaced, by name.
    builtin: BTreeMap<String, BuiltinScope>,
}

impl Default for TargetScopes {
    /// The built-in scopes of the place model:
    ///
    /// | scope | candidates |
    /// |---|---|
    /// | `self` | the actor |
    /// | `characters_here` | other characters in the actor's place |
    /// | `things_here` | things (not characters) in the actor's place, not carried |
    /// | `inventory` | what the actor carries |
    /// | `exits` | places reachable from the actor's place |
    /// | `things_next_door` | things (not characters) in the places reachable from the actor's, not carried |
    fn default() -> Self {
        use ScopeReach::{NextDoor, Place};
        let builtin: [(&str, ScopeReach, BuiltinScope); 6] = [
            ("self", Place, |_, actor, out| out.push(actor)),
            ("characters_here", Place, |view, actor, out| {
                here(view, actor, out, |e| {
                    e != actor && view.get(e).is_some_and(|v| v.character)
                });
            }),
            ("things_here", Place, |view, actor, out| {
                here(view, actor, out, |e| is_thing(view, e));
            }),
            ("inventory", Place, |view, actor, out| {
                out.extend_from_slice(view.carried_by(actor));
            }),
            ("exits", Place, |view, actor, out| {
                if let Some(place) = view.place_of(actor) {
                    out.extend_from_slice(view.exits(place));
                }
            }),
            ("things_next_door", NextDoor, |view, actor, out| {
                let Some(place) = view.place_of(actor) else {
                    return;
                };
                for &next_door in view.exits(place) {
                    in_place(view, next_door, out, |e| is_thing(view, e));
                }
            }),
        ];
        Self {
            scopes: builtin
                .iter()
                .map(|&(name, reach, fill)| {
                    let scope: ScopeFn = Arc::new(move |view: &WorldView, actor| {
                        let mut candidates = Vec::new();
                        fill(view, actor, &mut candidates);
                        candidates
                    });
                    (name.to_owned(), (scope, reach))
                })
                .collect(),
            builtin: builtin
                .iter()
                .map(|&(name, _, fill)| (name.to_owned(), fill))
                .collect(),
        }
    }
}

/// Adds to `out` what is in the actor's place and `keep` accepts.
fn here(view: &WorldView, actor: Entity, out: &mut Vec<Entity>, keep: impl Fn(Entity) -> bool) {
    if let Some(place) = view.place_of(actor) {
        in_place(view, place, out, keep);
    }
}

/// Adds to `out` what is in `place` and `keep` accepts.
fn in_place(view: &WorldView, place: Entity, out: &mut Vec<Entity>, keep: impl Fn(Entity) -> bool) {
    out.extend(view.occupants(place).iter().copied().filter(|&e| keep(e)));
}

/// Whether `entity` is a thing: neither a character nor a place.
fn is_thing(view: &WorldView, entity: Entity) -> bool {
    view.get(entity)
        .is_some_and(|v| !v.character && !v.is_place)
}

impl TargetScopes {
    /// Adds or replaces a scope, which may read anything in the view: an offer that
    /// uses it is made again whenever anything changes. One that reads less says so
    /// with [`insert_within`](Self::insert_within).
    pub fn insert(
        &mut self,
        name: impl Into<String>,
        scope: impl Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync + 'static,
    ) {
        self.insert_within(name, ScopeReach::Anywhere, scope);
    }

    /// Adds or replaces a scope that reads no farther from the actor than `reach`: an
    /// offer that uses it is made again only when something there changes. A scope
    /// that reads farther than it says gives actors offers that are out of date.
    pub fn insert_within(
        &mut self,
        name: impl Into<String>,
        reach: ScopeReach,
        scope: impl Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync + 'static,
    ) {
        let name = name.into();
        self.builtin.remove(&name);
        self.scopes.insert(name, (Arc::new(scope), reach));
    }

    /// A scope by name.
    pub fn get(&self, name: &str) -> Option<&ScopeFn> {
        self.scopes.get(name).map(|(scope, _)| scope)
    }

    /// How far from the actor the scope `name` reads ([`ScopeReach`]): the built-in
    /// scopes read the actor's place, but `things_next_door`, which reads the places
    /// one exit away too; a scope the game registered as far as it said when it
    /// registered it (the whole view, unless it said less); a name that is no scope
    /// reads nothing.
    pub fn reach(&self, name: &str) -> ScopeReach {
        self.scopes
            .get(name)
            .map_or(ScopeReach::Place, |&(_, reach)| reach)
    }

    /// A scope by name, built-in ones as such.
    pub(crate) fn scope(&self, name: &str) -> Option<Scope<'_>> {
        match self.builtin.get(name) {
            Some(&fill) => Some(Scope::Builtin(fill)),
            None => self.get(name).map(Scope::Registered),
        }
    }

    /// Whether a scope with this name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.scopes.contains_key(name)
    }

    /// Every scope name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.scopes.keys().map(String::as_str)
    }
}

/// Registers a game's own target scopes.
pub trait TargetScopeAppExt {
    /// Adds a scope that action definitions can name in `targets.*.scope`. Like
    /// every [`ScopeFn`], it reads only the view and the actor; it may read anything
    /// in the view, so an offer that uses it is made again whenever anything changes.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_loom::prelude::*;
    /// let mut app = App::new();
    /// app.add_plugins(WorldPlugin);
    /// // Everyone and everything anywhere that is tagged `wanted`.
    /// app.add_target_scope("wanted", |view: &WorldView, _actor: Entity| {
    ///     let mut wanted: Vec<Entity> =
    ///         view.iter().filter(|(e, _)| view.has_tag(*e, "wanted")).map(|(e, _)| e).collect();
    ///     wanted.sort_unstable();
    ///     wanted
    /// });
    /// ```
    fn add_target_scope(
        &mut self,
        name: impl Into<String>,
        scope: impl Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync + 'static,
    ) -> &mut Self;

    /// Adds a scope, as [`add_target_scope`](Self::add_target_scope) does, that reads
    /// no farther from the actor than `reach`: an actor whose actions use it keeps its
    /// offer while nothing changes there, as with the built-in scopes. A scope that
    /// reads farther than it says gives actors offers that are out of date.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_loom::prelude::*;
    /// let mut app = App::new();
    /// app.add_plugins(WorldPlugin);
    /// // Everyone in the actor's place who is asleep: it reads the actor's place alone.
    /// app.add_target_scope_within("sleepers_here", ScopeReach::Place, |view: &WorldView, actor: Entity| {
    ///     let Some(place) = view.place_of(actor) else { return Vec::new() };
    ///     view.occupants(place).iter().copied().filter(|&e| view.has_tag(e, "asleep")).collect()
    /// });
    /// ```
    fn add_target_scope_within(
        &mut self,
        name: impl Into<String>,
        reach: ScopeReach,
        scope: impl Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync + 'static,
    ) -> &mut Self;
}

impl TargetScopeAppExt for App {
    fn add_target_scope(
        &mut self,
        name: impl Into<String>,
        scope: impl Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync + 'static,
    ) -> &mut Self {
        self.add_target_scope_within(name, ScopeReach::Anywhere, scope)
    }

    fn add_target_scope_within(
        &mut self,
        name: impl Into<String>,
        reach: ScopeReach,
        scope: impl Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync + 'static,
    ) -> &mut Self {
        self.world_mut()
            .get_resource_or_init::<TargetScopes>()
            .insert_within(name, reach, scope);
        self
    }
}
