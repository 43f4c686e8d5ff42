//! Target scopes: named functions from an actor to the entities an action may target.

use std::collections::BTreeMap;
use std::sync::Arc;

use bevy::prelude::*;

use super::WorldView;

/// A scope function: the candidates for an actor, in a stable order.
pub type ScopeFn = Arc<dyn Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync>;

/// The target scopes actions may name, built-in and registered by the game.
#[derive(Resource, Clone)]
pub struct TargetScopes {
    scopes: BTreeMap<String, ScopeFn>,
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
    fn default() -> Self {
        let mut scopes = Self {
            scopes: BTreeMap::new(),
        };
        scopes.insert("self", |_: &WorldView, actor| vec![actor]);
        scopes.insert("characters_here", |view: &WorldView, actor| {
            here(view, actor, |e| {
                e != actor && view.get(e).is_some_and(|v| v.character)
            })
        });
        scopes.insert("things_here", |view: &WorldView, actor| {
            here(view, actor, |e| {
                view.get(e).is_some_and(|v| !v.character && !v.is_place)
            })
        });
        scopes.insert("inventory", |view: &WorldView, actor| {
            view.carried_by(actor).to_vec()
        });
        scopes.insert("exits", |view: &WorldView, actor| {
            view.place_of(actor)
                .map(|place| view.exits(place).to_vec())
                .unwrap_or_default()
        });
        scopes
    }
}

fn here(view: &WorldView, actor: Entity, keep: impl Fn(Entity) -> bool) -> Vec<Entity> {
    let Some(place) = view.place_of(actor) else {
        return Vec::new();
    };
    let occupants = view.occupants(place);
    let mut here = Vec::with_capacity(occupants.len());
    here.extend(occupants.iter().copied().filter(|&e| keep(e)));
    here
}

impl TargetScopes {
    /// Adds or replaces a scope.
    pub fn insert(
        &mut self,
        name: impl Into<String>,
        scope: impl Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync + 'static,
    ) {
        self.scopes.insert(name.into(), Arc::new(scope));
    }

    /// A scope by name.
    pub fn get(&self, name: &str) -> Option<&ScopeFn> {
        self.scopes.get(name)
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
    /// Adds a scope that action definitions can name in `targets.*.scope`.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use bevy_loom::prelude::*;
    /// let mut app = App::new();
    /// app.add_plugins(WorldPlugin);
    /// // Everyone in the actor's place who is asleep.
    /// app.add_target_scope("sleepers_here", |view: &WorldView, actor: Entity| {
    ///     let Some(place) = view.place_of(actor) else { return Vec::new() };
    ///     view.occupants(place).iter().copied().filter(|&e| view.has_tag(e, "asleep")).collect()
    /// });
    /// ```
    fn add_target_scope(
        &mut self,
        name: impl Into<String>,
        scope: impl Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync + 'static,
    ) -> &mut Self;
}

impl TargetScopeAppExt for App {
    fn add_target_scope(
        &mut self,
        name: impl Into<String>,
        scope: impl Fn(&WorldView, Entity) -> Vec<Entity> + Send + Sync + 'static,
    ) -> &mut Self {
        self.world_mut()
            .get_resource_or_init::<TargetScopes>()
            .insert(name, scope);
        self
    }
}
