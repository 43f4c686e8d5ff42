//! What changed in the place model, place by place, from one world view to the next:
//! what an actor perceives and is offered is kept while nothing around it changed.

use std::hash::BuildHasher;

use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use smallvec::SmallVec;

use super::{
    CarriedBy, Character, DisplayName, EntityView, Exits, ForgetGone, InPlace, Place, ScopeReach,
    Tags, TargetScopes, WorldView,
};

/// Tells a system what changed in the place model a [`WorldView`] is built from, place
/// by place, and whether the [`TargetScopes`] that read it changed
/// ([`PlaceRevisions`]): what an actor perceives and is offered can be kept while
/// nothing around its place changed.
///
/// Call [`watch`](Self::watch) every time the system runs, even when it has nothing
/// else to do, and [`revise`](Self::revise) with the frame's view when something is
/// to be built from it. Nothing is missed in frames in which the system does not
/// run at all: a change is found by its tick, a removal by comparing the view with
/// the last one revised.
#[derive(SystemParam)]
pub struct WorldViewChanges<'w, 's> {
    scopes: Res<'w, TargetScopes>,
    changed: Query<'w, 's, Entity, ViewComponentChanged>,
    pub(super) revisions: Local<'s, PlaceRevisions>,
}

/// The most entities noted changed, beyond twice those the last revision saw, before
/// everything counts as changed.
pub(super) const MOST_CHANGED_UNSEEN: usize = 128;

/// A component a [`WorldView`] is built from was added or changed.
type ViewComponentChanged = Or<(
    Changed<DisplayName>,
    Changed<Tags>,
    Changed<InPlace>,
    Changed<CarriedBy>,
    Changed<Character>,
    Changed<Place>,
    Changed<Exits>,
)>;

impl WorldViewChanges<'_, '_> {
    /// Notes what changed since this system last ran.
    pub fn watch(&mut self) {
        let revisions = &mut *self.revisions;
        revisions.everything_changed |= self.scopes.is_changed();
        revisions.changed.extend(self.changed.iter());
        // Entities that come and go while nothing revises (a game in which no actor
        // thinks for a while) would pile up: past twice what was seen, everything
        // changed is the same answer for less.
        if revisions.changed.len() > 2 * revisions.seen.len() + MOST_CHANGED_UNSEEN {
            revisions.everything_changed = true;
            revisions.changed.clear();
        }
    }

    /// What changed, place by place, up to `view`: the place model now.
    pub fn revise(&mut self, view: &WorldView) -> &PlaceRevisions {
        self.revisions.revise(view);
        &self.revisions
    }
}

/// When the place model last changed, everywhere and around each place, as
/// [`WorldViewChanges::revise`] numbers its revisions.
///
/// What the built-in target scopes and an actor's perception read around a place
/// (the place, who and what is in it and what they carry, and where its exits lead)
/// changed at [`changed_at`](Self::changed_at) that place; that or what is in the
/// places its exits lead to, at [`changed_within`](Self::changed_within) its
/// [`ScopeReach::NextDoor`]; anything at all changed at [`revision`](Self::revision).
#[derive(Debug, Default)]
pub struct PlaceRevisions {
    /// The last revision: it moves on when anything changed.
    revision: u64,
    /// When everything last changed: the first revision, or the scopes changed.
    everywhere: u64,
    /// When what is around each entity an actor may be in last changed.
    pub(super) places: EntityHashMap<u64>,
    /// When what is in a place its exits lead to last changed, for each place with
    /// exits.
    pub(super) next_door: EntityHashMap<u64>,
    /// When something in no place last changed.
    nowhere: u64,
    /// Each entity of the view as the last revision saw it.
    seen: EntityHashMap<Seen>,
    /// Entities changed since the last revision.
    pub(super) changed: EntityHashSet,
    /// Whether everything changed since then.
    pub(super) everything_changed: bool,
    /// When `places` and `next_door` look for entities gone.
    forget_gone: ForgetGone,
}

/// An entity of the view as a revision saw it: where it was, and enough of the rest
/// that a removed component shows (a name, tags or exits gone is one left empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    place: Option<Entity>,
    /// Who carries it: let go of in the place it was carried in, its place is the same.
    carried_by: Option<Entity>,
    is_place: bool,
    character: bool,
    /// A hash of its name: a name numbered again ("Guard (2)" now "Guard (1)") changes
    /// no component and no length.
    name: u64,
    tags: usize,
    exits: usize,
}

impl Seen {
    fn of(view: &WorldView, entity: Entity, v: &EntityView) -> Self {
        Self {
            place: view.place_of(entity),
            carried_by: v.carried_by,
            is_place: v.is_place,
            character: v.character,
            name: bevy::platform::hash::FixedHasher.hash_one(&*v.name),
            tags: v.tags.len(),
            exits: v.exits.len(),
        }
    }
}

impl PlaceRevisions {
    /// The last revision; never 0 once revised.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The revision at which what is around `place` (an actor's place; `None` for
    /// an actor in none) last changed.
    pub fn changed_at(&self, place: Option<Entity>) -> u64 {
        let around = match place {
            Some(place) => self.places.get(&place).copied().unwrap_or(0),
            None => self.nowhere,
        };
        around.max(self.everywhere)
    }

    /// The revision at which what a scope of this `reach` reads for an actor in
    /// `place` (`None`: in none) last changed.
    pub fn changed_within(&self, place: Option<Entity>, reach: ScopeReach) -> u64 {
        match reach {
            ScopeReach::Place => self.changed_at(place),
            ScopeReach::NextDoor => {
                let next_door = place.and_then(|place| self.next_door.get(&place));
                self.changed_at(place).max(next_door.copied().unwrap_or(0))
            }
            ScopeReach::Anywhere => self.revision,
        }
    }

    pub(super) fn revise(&mut self, view: &WorldView) {
        // A removal changes no tick: the view is compared with the last one even
        // when nothing was reported changed.
        let mut was_in: SmallVec<[Option<Entity>; 8]> = SmallVec::new();
        for (entity, v) in view.iter() {
            let now = Seen::of(view, entity, v);
            let was = self.seen.insert(entity, now);
            if was != Some(now) {
                self.changed.insert(entity);
                was_in.extend(was.map(|was| was.place));
            }
        }
        // What left the view, and the place it was in.
        let changed = &mut self.changed;
        self.seen.retain(|&entity, was| {
            let left = view.get(entity).is_none();
            if left {
                changed.insert(entity);
                was_in.push(was.place);
            }
            !left
        });
        if self.revision > 0 && self.changed.is_empty() && !self.everything_changed {
            return;
        }
        self.revision += 1;
        let revision = self.revision;
        if self.everything_changed || self.everywhere == 0 {
            self.everywhere = revision;
        }
        self.everything_changed = false;
        let mut around = |place: Option<Entity>| match place {
            Some(place) => {
                self.places.insert(place, revision);
            }
            None => self.nowhere = revision,
        };
        was_in.into_iter().for_each(&mut around);
        // A changed entity changed itself (it may be what others are in, a place or
        // not) and the place it is in.
        for &entity in &self.changed {
            around(Some(entity));
            if let Some(now) = self.seen.get(&entity) {
                around(now.place);
            }
        }
        // What is in a place changed when what is around it did: then so did what is
        // next door to each place with an exit to it. Whatever has exits to a changed
        // entity shows its name and tags: what is around it changed too (after, as
        // that is not what is in it).
        let mut shows_a_change: SmallVec<[Entity; 8]> = SmallVec::new();
        for (entity, v) in view.iter() {
            let changed_at = |exit: &Entity| self.places.get(exit).copied();
            if v.exits
                .iter()
                .any(|exit| changed_at(exit) == Some(revision))
            {
                self.next_door.insert(entity, revision);
            }
            if v.exits.iter().any(|exit| self.changed.contains(exit)) {
                shows_a_change.push(entity);
            }
        }
        for entity in shows_a_change {
            self.places.insert(entity, revision);
        }
        self.changed.clear();
        if (self.forget_gone).is_due(self.places.len() + self.next_door.len()) {
            self.forget_gone();
        }
    }

    /// Forgets when what is around an entity gone from the view last changed, unless
    /// something is still in it (an actor whose place was despawned asks for it): a
    /// game that spawns and despawns things every turn keeps these from piling up,
    /// and looking costs little however many come and go.
    fn forget_gone(&mut self) {
        let seen = &self.seen;
        let still_in: EntityHashSet = (seen.values())
            .filter_map(|now| now.place)
            .filter(|place| !seen.contains_key(place))
            .collect();
        let kept =
            |entity: &Entity, _: &mut u64| seen.contains_key(entity) || still_in.contains(entity);
        self.places.retain(kept);
        self.next_door.retain(kept);
        (self.forget_gone).looked(self.places.len() + self.next_door.len());
    }
}
