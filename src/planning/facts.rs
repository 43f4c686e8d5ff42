//! What plan conditions read, from the world view: the actor and each entity a task
//! names, described by name, tags, place and what they carry, and what the game says of
//! the world ([`WorldFacts`]).

use bevy::prelude::*;
use serde_json::{Map, Value};

use super::PlanFacts;
use crate::world::WorldView;

/// What the game tells plan conditions about the world, as `world` in JSON Logic:
/// `{"var": "world.cellarLocked"}`. Empty unless the game fills it.
#[derive(Resource, Debug, Clone, Default, PartialEq)]
pub struct WorldFacts(pub Map<String, Value>);

/// An actor's surroundings as plan conditions read them, from a [`WorldView`].
pub struct ViewFacts<'a> {
    /// The world view of this frame.
    pub view: &'a WorldView<'a>,
    /// The actor carrying out the plan.
    pub actor: Entity,
    /// What the game says of the world.
    pub world: &'a WorldFacts,
}

impl PlanFacts for ViewFacts<'_> {
    fn actor(&self) -> Value {
        describe(self.view, self.actor).unwrap_or(Value::Null)
    }

    fn world(&self) -> Value {
        Value::Object(self.world.0.clone())
    }

    fn entity(&self, entity: Entity) -> Option<Value> {
        let mut described = describe(self.view, entity)?;
        let here = self.view.place_of(entity) == self.view.place_of(self.actor);
        if let Value::Object(fields) = &mut described {
            fields.insert("here".to_owned(), Value::Bool(here));
        }
        Some(described)
    }

    fn exists(&self, entity: Entity) -> bool {
        self.view.get(entity).is_some()
    }
}

/// An entity as conditions read it: `name`, `tags`, `place` (its place's name, where it
/// is or its carrier is), `carries` (the names of what it carries), `carriedTags` (their
/// tags, each once) and `carriedBy` (its carrier's name); `None` when it is gone.
pub fn describe(view: &WorldView, entity: Entity) -> Option<Value> {
    let seen = view.get(entity)?;
    let carried = view.carried_by(entity);
    let mut carried_tags: Vec<&str> = (carried.iter())
        .filter_map(|&thing| view.get(thing))
        .flat_map(|thing| thing.tags.iter().map(String::as_str))
        .collect();
    carried_tags.sort_unstable();
    carried_tags.dedup();
    let strings = |items: Vec<&str>| Value::Array(items.into_iter().map(Value::from).collect());
    let names = |entities: &[Entity]| strings(entities.iter().map(|&e| view.name(e)).collect());
    let place = view
        .place_of(entity)
        .map_or(Value::Null, |p| view.name(p).into());
    let carrier = seen.carried_by.map_or(Value::Null, |c| view.name(c).into());
    Some(Value::Object(Map::from_iter([
        ("name".to_owned(), Value::from(seen.name.as_ref())),
        (
            "tags".to_owned(),
            strings(seen.tags.iter().map(String::as_str).collect()),
        ),
        ("place".to_owned(), place),
        ("carries".to_owned(), names(carried)),
        ("carriedTags".to_owned(), strings(carried_tags)),
        ("carriedBy".to_owned(), carrier),
    ])))
}
