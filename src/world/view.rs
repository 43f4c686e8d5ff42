//! A plain-data snapshot of what the place model says, built once per frame that needs it.

use std::borrow::Cow;
use std::collections::BTreeSet;

use bevy::ecs::entity::EntityHashMap;
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

/// Tells a system whether the place model a [`WorldView`] is built from, or the
/// [`TargetScopes`] that read it, changed since the system last ran: one of its
/// components added, changed or removed, an entity with one despawned, or a scope
/// added. What is built from a view and the scopes alone (an actor's offer, what it
/// perceives) can be kept while the [`revision`](Self::revision) stays the same.
#[derive(SystemParam)]
pub struct WorldViewChanges<'w, 's> {
    scopes: Res<'w, TargetScopes>,
    changed: Query<'w, 's, (), ViewComponentChanged>,
    removed: ViewComponentsRemoved<'w, 's>,
    revision: Local<'s, u64>,
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
    /// Whether any was removed since the last call. Every reader is read to its end,
    /// so that what it saw is not seen again.
    fn any(&mut self) -> bool {
        let removed = [
            self.names.read().count(),
            self.tags.read().count(),
            self.places.read().count(),
            self.carriers.read().count(),
            self.characters.read().count(),
            self.is_places.read().count(),
            self.exits.read().count(),
        ];
        removed.iter().any(|&count| count > 0)
    }
}

impl WorldViewChanges<'_, '_> {
    /// The place model's revision as this system sees it: a number that moves on
    /// whenever the place model changed since the system last ran, and is never 0.
    ///
    /// Ask every time the system runs, even when it has nothing else to do: a
    /// removal is seen only in the frame it happens and the next.
    pub fn revision(&mut self) -> u64 {
        let removed = self.removed.any();
        if *self.revision == 0 || self.scopes.is_changed() || removed || !self.changed.is_empty() {
            *self.revision += 1;
        }
        *self.revision
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
