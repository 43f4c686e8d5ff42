//! What plan conditions read, from the world view: the actor and each entity a task
//! names, described by name, tags, place and what they carry, and what the game says of
//! the world ([`WorldFacts`]).

use std::cell::OnceCell;

use bevy::prelude::*;
use serde_json::{Map, Value};

use super::PlanFacts;
use crate::content::ENTITY_FACTS;
use crate::world::{WorldView, WorldViewQuery};

/// What the game tells plan conditions about the world, as `world` in JSON Logic:
/// `{"var": "world.cellarLocked"}`. Empty unless the game fills it.
#[derive(Resource, Debug, Clone, Default, PartialEq)]
pub struct WorldFacts(pub Map<String, Value>);

/// The world of one frame as plans read it: the place model's components, snapshotted
/// into a [`WorldView`] only when a condition needs one (a step that only binds targets
/// and renders a command reads the components directly).
pub(super) struct FrameWorld<'a, 'w, 's> {
    pub query: &'a WorldViewQuery<'w, 's>,
    pub view: OnceCell<WorldView<'a>>,
    pub facts: &'a WorldFacts,
}

impl<'a, 'w, 's> FrameWorld<'a, 'w, 's> {
    pub fn new(query: &'a WorldViewQuery<'w, 's>, facts: &'a WorldFacts) -> Self {
        Self {
            query,
            view: OnceCell::new(),
            facts,
        }
    }

    fn view(&self) -> &WorldView<'a> {
        self.view.get_or_init(|| WorldView::from_query(self.query))
    }

    /// An entity's display name, as [`WorldView::name`] gives it.
    pub fn name(&self, entity: Entity) -> &'a str {
        let query: &'a WorldViewQuery<'w, 's> = self.query;
        (query.display_name(entity))
            .filter(|name| !name.is_empty())
            .unwrap_or("something")
    }

    /// `actor`'s surroundings, as plan conditions read them.
    pub fn of(&self, actor: Entity) -> ViewFacts<'_, 'a, 'w, 's> {
        ViewFacts { world: self, actor }
    }
}

/// One actor's surroundings as plan conditions read them.
pub(super) struct ViewFacts<'f, 'a, 'w, 's> {
    world: &'f FrameWorld<'a, 'w, 's>,
    actor: Entity,
}

impl PlanFacts for ViewFacts<'_, '_, '_, '_> {
    fn actor(&self) -> Value {
        describe(self.world.view(), self.actor).unwrap_or(Value::Null)
    }

    fn world(&self) -> Value {
        Value::Object(self.world.facts.0.clone())
    }

    fn entity(&self, entity: Entity) -> Option<Value> {
        let view = self.world.view();
        let mut described = describe(view, entity)?;
        let here = view.place_of(entity) == view.place_of(self.actor);
        if let Value::Object(fields) = &mut described {
            fields.insert("here".to_owned(), Value::Bool(here));
        }
        Some(described)
    }

    fn exists(&self, entity: Entity) -> bool {
        self.world.query.contains(entity)
    }
}

/// An entity as conditions read it: `id` (its own, which no other entity has while it
/// is there), `name` ("something" without one), `tags`, `place` (its place's name,
/// where it is or its carrier is), `carries` (the names of what it carries) and
/// `carriedIds` (their ids), `carriedTags` (their tags, each once) and `carriedBy` (its
/// carrier's name); `None` when it is gone. Names may be shared: "the drink is the
/// actor's" is `{"in": [{"var": "task.params.drink.id"}, {"var": "actor.carriedIds"}]}`.
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
    let ids = Value::Array(carried.iter().map(|&e| id(e)).collect());
    let place = view
        .place_of(entity)
        .map_or(Value::Null, |p| view.name(p).into());
    let carrier = seen.carried_by.map_or(Value::Null, |c| view.name(c).into());
    // By the names method conditions are checked against when content loads.
    let tags = strings(seen.tags.iter().map(String::as_str).collect());
    let facts = [
        id(entity),
        Value::from(view.name(entity)),
        tags,
        place,
        names(carried),
        ids,
        strings(carried_tags),
        carrier,
    ];
    let named = ENTITY_FACTS.iter().map(|&name| name.to_owned()).zip(facts);
    Some(Value::Object(Map::from_iter(named)))
}

/// An entity's `id` in conditions: its index and generation, as Bevy writes them
/// ("12v1").
fn id(entity: Entity) -> Value {
    Value::from(entity.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::EntityView;
    use serde_json::json;

    #[test]
    fn entities_are_told_apart_by_id_and_named_as_the_view_names_them() {
        let [marta, mug, thing] = [1, 2, 3].map(|i| Entity::from_raw_u32(i).expect("valid"));
        let carried = |name: &'static str| EntityView {
            name: name.into(),
            carried_by: Some(marta),
            ..EntityView::default()
        };
        let view = WorldView::new([
            (
                marta,
                EntityView {
                    name: "Marta".into(),
                    character: true,
                    ..EntityView::default()
                },
            ),
            (mug, carried("mug of ale")),
            (thing, carried("")),
        ]);
        let actor = describe(&view, marta).expect("there");
        assert_eq!(actor["id"], json!(marta.to_string()));
        // In the order the view holds them: by name, the unnamed first.
        assert_eq!(actor["carries"], json!(["something", "mug of ale"]));
        assert_eq!(
            actor["carriedIds"],
            json!([thing.to_string(), mug.to_string()])
        );
        let unnamed = describe(&view, thing).expect("there");
        assert_eq!(unnamed["name"], json!("something"), "as `carries` names it");
        assert_eq!(unnamed["carriedBy"], json!("Marta"));
    }
}
