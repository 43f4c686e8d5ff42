//! A plain-data snapshot of what the place model says, built once per frame that needs it.

use std::borrow::Cow;
use std::collections::BTreeSet;

use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::ecs::query::Has;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use super::{CarriedBy, Character, DisplayName, Exits, InPlace, Place, Tags, TargetScopes};

/// One entity as the world view sees it: its name, tags and exits borrowed from the
/// world when the view is built [from a query](WorldView::from_query), owned when built
/// by hand.
#[derive(Debug, Clone, Default)]
pub struct EntityView<'a> {
    /// Its [`DisplayName`]; empty when it has none.
    pub name: Cow<'a, str>,
    /// Its [`Tags`].
    pub tags: Cow<'a, BTreeSet<String>>,
    /// The place it is in.
    pub place: Option<Entity>,
    /// Who carries it.
    pub carried_by: Option<Entity>,
    /// Whether it is a [`Character`].
    pub character: bool,
    /// Whether it is a [`Place`].
    pub is_place: bool,
    /// Places reachable from it, when it is a place.
    pub exits: Cow<'a, [Entity]>,
}

/// What the place model holds, as plain data that scope functions read.
///
/// Lists come sorted by display name (then entity), so everything built from a view
/// has a stable order. A view built from a query borrows the world's names and tags
/// for the frame instead of copying them.
#[derive(Debug, Clone, Default)]
pub struct WorldView<'a> {
    entities: EntityHashMap<EntityView<'a>>,
    occupants: EntityHashMap<Vec<Entity>>,
    carried: EntityHashMap<Vec<Entity>>,
}

/// The components a [`WorldView`] is built from.
pub type WorldViewQuery<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        Option<&'static DisplayName>,
        Option<&'static Tags>,
        Option<&'static InPlace>,
        Option<&'static CarriedBy>,
        Has<Character>,
        Has<Place>,
        Option<&'static Exits>,
    ),
    Or<(
        With<DisplayName>,
        With<Place>,
        With<InPlace>,
        With<CarriedBy>,
    )>,
>;

/// Tells a system what changed in the place model a [`WorldView`] is built from, place
/// by place, and whether the [`TargetScopes`] that read it changed: what is built
/// from a view and the scopes (an actor's offer, what it perceives) can be kept while
/// nothing it reads changed.
///
/// Call [`watch`](Self::watch) every time the system runs, even when it has nothing
/// else to do: a change is seen only in the frame it happens, a removal in that
/// frame and the next. Call [`revise`](Self::revise) with the frame's view when
/// something is to be built from it.
#[derive(SystemParam)]
pub struct WorldViewChanges<'w, 's> {
    scopes: Res<'w, TargetScopes>,
    changed: Query<'w, 's, Entity, ViewComponentChanged>,
    removed: ViewComponentsRemoved<'w, 's>,
    revisions: Local<'s, PlaceRevisions>,
}

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

/// The components a [`WorldView`] is built from, as they are removed.
#[derive(SystemParam)]
pub struct ViewComponentsRemoved<'w, 's> {
    names: RemovedComponents<'w, 's, DisplayName>,
    tags: RemovedComponents<'w, 's, Tags>,
    places: RemovedComponents<'w, 's, InPlace>,
    carriers: RemovedComponents<'w, 's, CarriedBy>,
    characters: RemovedComponents<'w, 's, Character>,
    is_places: RemovedComponents<'w, 's, Place>,
    exits: RemovedComponents<'w, 's, Exits>,
}

impl ViewComponentsRemoved<'_, '_> {
    /// Adds the entities that lost one since the last call. Every reader is read to
    /// its end, so that what it saw is not seen again.
    fn read_into(&mut self, entities: &mut EntityHashSet) {
        entities.extend(self.names.read());
        entities.extend(self.tags.read());
        entities.extend(self.places.read());
        entities.extend(self.carriers.read());
        entities.extend(self.characters.read());
        entities.extend(self.is_places.read());
        entities.extend(self.exits.read());
    }
}

impl WorldViewChanges<'_, '_> {
    /// Notes what changed since the system last ran.
    pub fn watch(&mut self) {
        let revisions = &mut *self.revisions;
        revisions.everything_changed |= self.scopes.is_changed();
        revisions.changed.extend(self.changed.iter());
        self.removed.read_into(&mut revisions.changed);
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
/// (the place, who and what is in it and what they carry, and the places its exits
/// lead to) changed at [`changed_at`](Self::changed_at) that place; anything at all
/// changed at [`revision`](Self::revision).
#[derive(Debug, Default)]
pub struct PlaceRevisions {
    /// The last revision: it moves on when anything changed.
    revision: u64,
    /// When everything last changed: the first revision, or the scopes changed.
    everywhere: u64,
    /// When what is around each place last changed.
    places: EntityHashMap<u64>,
    /// When something in no place last changed.
    nowhere: u64,
    /// Where each entity of the view was at the last revision, and whether it is a place.
    located: EntityHashMap<(Option<Entity>, bool)>,
    /// Entities changed since the last revision.
    changed: EntityHashSet,
    /// Whether everything changed since then.
    everything_changed: bool,
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

    fn revise(&mut self, view: &WorldView) {
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
        // Each changed entity changed where it was and where it is; a changed place
        // changed itself and the places whose exits show it.
        let mut changed_places: Vec<Entity> = Vec::new();
        for entity in self.changed.drain() {
            let was = self.located.get(&entity).copied();
            let is = view
                .get(entity)
                .map(|v| (view.place_of(entity), v.is_place));
            if let Some((place, _)) = was {
                around(place);
            }
            if let Some((place, _)) = is {
                around(place);
            }
            if was.is_some_and(|(_, place)| place) || is.is_some_and(|(_, place)| place) {
                around(Some(entity));
                changed_places.push(entity);
            }
        }
        if !changed_places.is_empty() {
            for (place, v) in view.iter() {
                if v.is_place && v.exits.iter().any(|exit| changed_places.contains(exit)) {
                    around(Some(place));
                }
            }
        }
        // Where everything is now: a carried thing moves with its carrier.
        self.located.clear();
        self.located.extend(
            view.iter()
                .map(|(entity, v)| (entity, (view.place_of(entity), v.is_place))),
        );
    }
}

impl<'a> WorldView<'a> {
    /// Builds a view from entity records.
    pub fn new(records: impl IntoIterator<Item = (Entity, EntityView<'a>)>) -> Self {
        let records = records.into_iter();
        // A query's upper bound is its matching entities: sized once, never regrown.
        let (lower, upper) = records.size_hint();
        let mut entities: EntityHashMap<EntityView<'a>> =
            EntityHashMap::with_capacity(upper.unwrap_or(lower));
        entities.extend(records);
        let mut occupants: EntityHashMap<Vec<(&str, Entity)>> = EntityHashMap::default();
        let mut carried: EntityHashMap<Vec<(&str, Entity)>> = EntityHashMap::default();
        for (&entity, view) in entities.iter() {
            let key = (&*view.name, entity);
            if let Some(carrier) = view.carried_by {
                carried.entry(carrier).or_default().push(key);
            } else if let Some(place) = view.place {
                occupants.entry(place).or_default().push(key);
            }
        }
        let sorted = |lists: EntityHashMap<Vec<(&str, Entity)>>| -> EntityHashMap<Vec<Entity>> {
            lists
                .into_iter()
                .map(|(owner, mut list)| {
                    list.sort_unstable();
                    (owner, list.into_iter().map(|(_, entity)| entity).collect())
                })
                .collect()
        };
        let occupants = sorted(occupants);
        let carried = sorted(carried);
        Self {
            entities,
            occupants,
            carried,
        }
    }

    /// Builds a view from the world's place-model components, borrowing them.
    pub fn from_query(query: &'a WorldViewQuery) -> Self {
        Self::new(query.iter().map(
            |(entity, name, tags, place, carrier, character, is_place, exits)| {
                (
                    entity,
                    EntityView {
                        name: name.map_or(Cow::Borrowed(""), |n| Cow::Borrowed(&n.0)),
                        tags: tags.map_or_else(Cow::default, |t| Cow::Borrowed(&t.0)),
                        place: place.map(|p| p.0),
                        carried_by: carrier.map(|c| c.0),
                        character,
                        is_place,
                        exits: exits.map_or(Cow::Borrowed(&[]), |e| Cow::Borrowed(&e.0)),
                    },
                )
            },
        ))
    }

    /// Every entity of the view, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Entity, &EntityView<'a>)> {
        self.entities.iter().map(|(&entity, view)| (entity, view))
    }

    /// One entity, if the view has it.
    pub fn get(&self, entity: Entity) -> Option<&EntityView<'a>> {
        self.entities.get(&entity)
    }

    /// Its display name, or "something" when it has none.
    pub fn name(&self, entity: Entity) -> &str {
        self.entities
            .get(&entity)
            .map(|v| &*v.name)
            .filter(|n| !n.is_empty())
            .unwrap_or("something")
    }

    /// Whether the entity has the tag.
    pub fn has_tag(&self, entity: Entity, tag: &str) -> bool {
        self.entities
            .get(&entity)
            .is_some_and(|v| v.tags.contains(tag))
    }

    /// The place an entity is in, following who carries it.
    pub fn place_of(&self, entity: Entity) -> Option<Entity> {
        let mut current = entity;
        for _ in 0..8 {
            let view = self.entities.get(&current)?;
            match (view.place, view.carried_by) {
                (_, Some(carrier)) => current = carrier,
                (place, None) => return place,
            }
        }
        None
    }

    /// Entities directly in a place (not carried), sorted by name.
    pub fn occupants(&self, place: Entity) -> &[Entity] {
        self.occupants.get(&place).map_or(&[], Vec::as_slice)
    }

    /// Things a character carries, sorted by name.
    pub fn carried_by(&self, carrier: Entity) -> &[Entity] {
        self.carried.get(&carrier).map_or(&[], Vec::as_slice)
    }

    /// Places reachable from a place.
    pub fn exits(&self, place: Entity) -> &[Entity] {
        self.entities.get(&place).map_or(&[], |v| &v.exits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// When each place last changed, and the last revision, as a system sees them.
    #[derive(Resource, Default)]
    struct Seen {
        /// Whether the system revises this frame, or only watches.
        revise: bool,
        revision: u64,
        around: EntityHashMap<u64>,
        nowhere: u64,
    }

    fn revise(
        mut changes: WorldViewChanges,
        world: WorldViewQuery,
        places: Query<Entity, With<Place>>,
        mut seen: ResMut<Seen>,
    ) {
        changes.watch();
        if !seen.revise {
            return;
        }
        let view = WorldView::from_query(&world);
        let revisions = changes.revise(&view);
        seen.revision = revisions.revision();
        seen.around = places
            .iter()
            .map(|place| (place, revisions.changed_at(Some(place))))
            .collect();
        seen.nowhere = revisions.changed_at(None);
    }

    /// Updates once; returns the revision and when places `a`, `b`, `c` last changed.
    fn update(app: &mut App, [a, b, c]: [Entity; 3]) -> (u64, [u64; 3]) {
        app.update();
        let seen = app.world().resource::<Seen>();
        (seen.revision, [a, b, c].map(|place| seen.around[&place]))
    }

    fn named(name: &str) -> DisplayName {
        DisplayName(name.to_owned())
    }

    #[test]
    fn a_change_is_seen_where_it_was_and_where_it_is_and_next_door() {
        let mut app = App::new();
        app.init_resource::<TargetScopes>()
            .insert_resource(Seen {
                revise: true,
                ..Seen::default()
            })
            .add_systems(Update, revise);
        let world = app.world_mut();
        // a → b → c.
        let c = world.spawn((Place, named("cellar"))).id();
        let b = world.spawn((Place, named("bar"), Exits(vec![c]))).id();
        let a = world.spawn((Place, named("attic"), Exits(vec![b]))).id();
        let places = [a, b, c];
        let bob = world.spawn((Character, named("Bob"), InPlace(a))).id();
        let ring = world.spawn((named("ring"), CarriedBy(bob))).id();
        let crate_ = world.spawn((named("crate"), InPlace(c))).id();
        let stone = world.spawn((named("stone"), InPlace(a))).id();
        let lost = world.spawn(named("lost thing")).id();

        assert_eq!(
            update(&mut app, places),
            (1, [1, 1, 1]),
            "everything is new"
        );
        assert_eq!(update(&mut app, places), (1, [1, 1, 1]), "nothing changed");

        app.world_mut()
            .entity_mut(crate_)
            .insert(named("old crate"));
        assert_eq!(update(&mut app, places), (2, [1, 1, 2]), "only where it is");

        app.world_mut().entity_mut(bob).insert(InPlace(b));
        assert_eq!(
            update(&mut app, places),
            (3, [3, 3, 2]),
            "where he was and is"
        );

        app.world_mut().entity_mut(ring).insert(named("gold ring"));
        assert_eq!(
            update(&mut app, places),
            (4, [3, 4, 2]),
            "a carried thing is where its carrier went"
        );

        app.world_mut().entity_mut(c).insert(named("wine cellar"));
        assert_eq!(
            update(&mut app, places),
            (5, [3, 5, 5]),
            "a place, and the places whose exits show it"
        );

        app.world_mut().despawn(stone);
        assert_eq!(update(&mut app, places), (6, [6, 5, 5]), "despawned");

        app.world_mut().entity_mut(ring).remove::<CarriedBy>();
        assert_eq!(
            update(&mut app, places),
            (7, [6, 7, 5]),
            "a component removed: the ring is in no place now"
        );
        assert_eq!(app.world().resource::<Seen>().nowhere, 7);

        app.world_mut()
            .entity_mut(lost)
            .insert(named("found thing"));
        assert_eq!(update(&mut app, places), (8, [6, 7, 5]), "in no place");

        // Changes in frames that only watch are seen when the system revises again.
        app.world_mut().resource_mut::<Seen>().revise = false;
        app.world_mut().entity_mut(crate_).insert(InPlace(a));
        app.update();
        app.world_mut().despawn(bob);
        app.update();
        app.world_mut().resource_mut::<Seen>().revise = true;
        assert_eq!(
            update(&mut app, places),
            (9, [9, 9, 9]),
            "the crate moved from c to a, Bob left b"
        );

        app.world_mut()
            .resource_mut::<TargetScopes>()
            .insert("everyone", |_: &WorldView, _| Vec::new());
        assert_eq!(
            update(&mut app, places),
            (10, [10, 10, 10]),
            "new scopes change everything"
        );
    }
}
