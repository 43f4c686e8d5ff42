//! The abilities one actor may invoke now: each with the entities that may fill its
//! entity inputs, found by their scopes and tag rules as an action's targets are. The
//! prompt describes them, the answer's schema lists the names, and an invocation is
//! checked against them.

use std::sync::Arc;

use bevy::prelude::*;

use serde_json::Number;

use super::names::{made, tell_apart};
use super::{TargetScopes, WorldView};
use crate::content::{AbilityDefinition, InputType};

/// An input's value, checked: what the game gets in an invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputValue {
    /// An entity, found among those its scope offered.
    Entity(Entity),
    /// A whole number within its range.
    Integer(i64),
    /// A number within its range.
    Number(Number),
    /// Text within its length.
    Text(String),
    /// One of its choices, as the ability spells it.
    Choice(String),
}

/// A smart actor invoked an ability with these inputs, checked against what it was
/// offered (an entity among those its scope offered, a number in its range, text
/// within its length, a choice among its choices). Carry it out by your game's rules,
/// refusing what no longer makes sense, and report back with an
/// [`ActionReport`](super::ActionReport), as for an action, so narration tells it.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct AbilityInvoked {
    /// Who invokes it.
    pub actor: Entity,
    /// The ability's `mod:ability` id.
    pub ability: String,
    /// Each input given, by name, in the ability's order.
    pub inputs: Vec<(String, InputValue)>,
}

impl AbilityInvoked {
    /// The input with this name, when it was given.
    pub fn input(&self, name: &str) -> Option<&InputValue> {
        (self.inputs.iter())
            .find(|(given, _)| given == name)
            .map(|(_, value)| value)
    }
}

/// One ability an actor may invoke now.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedAbility {
    /// Its definition.
    pub definition: Arc<AbilityDefinition>,
    /// Each entity input's candidates now, in the definition's order (the required
    /// inputs first): the input's name, and each entity that may fill it with its name,
    /// sorted by name.
    pub candidates: Vec<(String, Vec<(Entity, String)>)>,
}

/// The most candidates an entity input lists: the first its scope gives. Each is a
/// name in the answer's schema (and in the tools, which a server reads as prompt).
pub const MAX_ENTITY_CANDIDATES: usize = 32;

impl OfferedAbility {
    /// `definition` as offered to `actor` in `view`: each entity input's candidates
    /// from its scope in `scopes`, those its tag rules accept (the first
    /// [`MAX_ENTITY_CANDIDATES`] of them in the scope's order: a scope gives the
    /// likeliest first). `None` when a required
    /// entity input has no candidate (or names no scope): it cannot be invoked now.
    pub fn new(
        definition: Arc<AbilityDefinition>,
        view: &WorldView,
        scopes: &TargetScopes,
        actor: Entity,
    ) -> Option<Self> {
        let mut candidates = Vec::new();
        for (input, required) in definition.all_inputs() {
            if input.kind != InputType::Entity {
                continue;
            }
            let scope = input.scope.as_deref().and_then(|name| scopes.get(name));
            let mut found: Vec<(Entity, String)> = scope
                .map(|scope| scope(view, actor))
                .unwrap_or_default()
                .into_iter()
                .filter(|&entity| input.accepts(|tag| view.has_tag(entity, tag)))
                .take(MAX_ENTITY_CANDIDATES)
                .map(|entity| (entity, view.name(entity).to_owned()))
                .collect();
            if required && found.is_empty() {
                return None;
            }
            // Namesakes numbered in the order their entities were made, as the view
            // numbers them, and past the labels of what the actor perceives.
            let made = |entity: &Entity| made(*entity, view.get(*entity).map_or(0, |v| v.age));
            found
                .sort_by(|(a, one), (b, other)| one.cmp(other).then_with(|| made(a).cmp(&made(b))));
            let place = view.place_of(actor);
            let here = (place.into_iter()).flat_map(|place| view.occupants(place));
            let carried = view.carried_by(actor);
            tell_apart(&mut found, here.chain(carried).map(|&e| view.name(e)));
            candidates.push((input.name.clone(), found));
        }
        Some(Self {
            definition,
            candidates,
        })
    }

    /// Its id: `tavern:rent_room`.
    pub fn id(&self) -> &str {
        &self.definition.id
    }

    /// The entities that may fill the entity input `input` now, with their names;
    /// none for an input that is not an entity.
    pub fn candidates(&self, input: &str) -> &[(Entity, String)] {
        (self.candidates.iter())
            .find(|(name, _)| name == input)
            .map_or(&[], |(_, found)| found)
    }
}

/// The abilities one actor may invoke now, in the order its prompt describes them.
/// Cloning it shares it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OfferedAbilities(Arc<[OfferedAbility]>);

impl OfferedAbilities {
    /// Each of `definitions` that `actor` can invoke now ([`OfferedAbility::new`]), in
    /// their order.
    pub fn new(
        definitions: impl IntoIterator<Item = Arc<AbilityDefinition>>,
        view: &WorldView,
        scopes: &TargetScopes,
        actor: Entity,
    ) -> Self {
        let offered = definitions
            .into_iter()
            .filter_map(|definition| OfferedAbility::new(definition, view, scopes, actor));
        Self(offered.collect())
    }

    /// The first `count` of them.
    #[must_use]
    pub fn first(&self, count: usize) -> Self {
        if count >= self.len() {
            return self.clone();
        }
        Self(self.0[..count].iter().cloned().collect())
    }

    /// The offered ability with this id.
    pub fn get(&self, id: &str) -> Option<&OfferedAbility> {
        self.0.iter().find(|ability| ability.id() == id)
    }

    /// Every offered ability.
    pub fn iter(&self) -> std::slice::Iter<'_, OfferedAbility> {
        self.0.iter()
    }

    /// How many are offered.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<OfferedAbility> for OfferedAbilities {
    fn from_iter<I: IntoIterator<Item = OfferedAbility>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a OfferedAbilities {
    type Item = &'a OfferedAbility;
    type IntoIter = std::slice::Iter<'a, OfferedAbility>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::json;

    use super::*;
    use crate::world::EntityView;

    fn entity(n: u32) -> Entity {
        Entity::from_raw_u32(n).expect("a valid index")
    }

    /// The inn (1) with Marta (2), the Traveler (3) and Brom (4), people, and a mug (5).
    fn inn() -> WorldView<'static> {
        let person = |name: &str| EntityView {
            name: Cow::Owned(name.to_owned()),
            tags: Cow::Owned(["person".to_owned()].into()),
            place: Some(entity(1)),
            character: true,
            ..Default::default()
        };
        WorldView::new([
            (
                entity(1),
                EntityView {
                    name: "the inn".into(),
                    is_place: true,
                    ..Default::default()
                },
            ),
            (entity(2), person("Marta")),
            (entity(3), person("Traveler")),
            (entity(4), person("Brom")),
            (
                entity(5),
                EntityView {
                    name: "mug".into(),
                    place: Some(entity(1)),
                    ..Default::default()
                },
            ),
        ])
    }

    fn ability(inputs: serde_json::Value) -> Arc<AbilityDefinition> {
        let definition = json!({ "id": "tavern:rent_room", "description": "d", "what": "w",
                                 "when": "w", "inputs": inputs });
        Arc::new(serde_json::from_value(definition).expect("an ability"))
    }

    #[test]
    fn entity_inputs_are_filled_from_their_scope_and_tags_by_name() {
        let view = inn();
        let scopes = TargetScopes::default();
        let rent = ability(json!({
            "required": [{ "name": "nights", "type": "integer" }],
            "optional": [{ "name": "guest", "type": "entity", "scope": "characters_here",
                           "requiredTags": ["person"] }]
        }));
        let offered = OfferedAbility::new(rent, &view, &scopes, entity(2)).expect("offered");
        let guests: Vec<&str> = (offered.candidates("guest").iter())
            .map(|(_, name)| name.as_str())
            .collect();
        assert_eq!(guests, ["Brom", "Traveler"], "others here, by name");
        assert!(offered.candidates("nights").is_empty(), "not an entity");
    }

    #[test]
    fn candidates_of_one_name_are_told_apart() {
        let mut records: Vec<(Entity, EntityView<'static>)> = inn()
            .iter()
            .map(|(entity, view)| (entity, view.clone()))
            .collect();
        // Two more mugs, the same name as the first; a guest named as one would be.
        for (n, name) in [(6, "mug"), (7, "mug"), (8, "mug (2)")] {
            records.push((
                entity(n),
                EntityView {
                    name: name.into(),
                    place: Some(entity(1)),
                    ..Default::default()
                },
            ));
        }
        let view = WorldView::new(records);
        let wash = ability(json!({
            "required": [{ "name": "what", "type": "entity", "scope": "things_here" }]
        }));
        let offered =
            OfferedAbility::new(wash, &view, &TargetScopes::default(), entity(2)).expect("offered");
        let mut names: Vec<(u32, &str)> = (offered.candidates("what").iter())
            .map(|(entity, name)| (entity.index_u32(), name.as_str()))
            .collect();
        names.sort_unstable();
        let mugs: std::collections::BTreeSet<&str> = names[..3].iter().map(|n| n.1).collect();
        assert_eq!(
            mugs,
            ["mug (1)", "mug (3)", "mug (4)"].into(),
            "each mug numbered, past the name another has: {names:?}"
        );
        assert_eq!(names[3], (8, "mug (2)"), "a name of its own is kept");
    }

    /// A character called `name` in the place of index `place`.
    fn character_at(name: &'static str, place: u32) -> EntityView<'static> {
        EntityView {
            name: name.into(),
            place: Some(entity(place)),
            character: true,
            ..Default::default()
        }
    }

    /// Namesakes in two places, which the view does not number, are numbered among
    /// the candidates of a scope that reaches both.
    #[test]
    fn candidates_of_one_name_from_two_places_are_told_apart() {
        let view = WorldView::new([
            (entity(1), EntityView::default()),
            (entity(2), EntityView::default()),
            (entity(10), character_at("Ada", 1)),
            (entity(11), character_at("Ada", 2)),
        ]);
        assert_eq!(
            (view.name(entity(10)), view.name(entity(11))),
            ("Ada", "Ada")
        );
        let mut scopes = TargetScopes::default();
        scopes.insert("townsfolk", |_, _| vec![entity(10), entity(11)]);
        let summon = ability(json!({
            "required": [{ "name": "who", "type": "entity", "scope": "townsfolk" }]
        }));
        let offered = OfferedAbility::new(summon, &view, &scopes, entity(1)).expect("offered");
        let mut named: Vec<&str> = (offered.candidates("who").iter())
            .map(|(_, name)| name.as_str())
            .collect();
        named.sort_unstable();
        assert_eq!(named, ["Ada (1)", "Ada (2)"]);
    }

    /// Two Adas here, perceived "Ada (1)" and "Ada (2)", and one in each of two other
    /// places: a scope of the two away names them past the Adas here, so that no
    /// label of one prompt means two people.
    #[test]
    fn candidates_are_numbered_past_the_namesakes_the_actor_perceives() {
        let at = character_at;
        let view = WorldView::new([
            (entity(1), EntityView::default()),
            (entity(2), EntityView::default()),
            (entity(3), EntityView::default()),
            (entity(9), at("Xan", 1)),
            (entity(10), at("Ada", 1)),
            (entity(11), at("Ada", 1)),
            (entity(12), at("Ada", 2)),
            (entity(13), at("Ada", 3)),
        ]);
        let mut scopes = TargetScopes::default();
        scopes.insert("away", |_, _| vec![entity(13), entity(12)]);
        let summon = ability(json!({
            "required": [{ "name": "who", "type": "entity", "scope": "away" }]
        }));
        let offered = OfferedAbility::new(summon, &view, &scopes, entity(9)).expect("offered");
        let named: Vec<(u32, &str)> = (offered.candidates("who").iter())
            .map(|(entity, name)| (entity.index_u32(), name.as_str()))
            .collect();
        assert_eq!(named, [(12, "Ada (3)"), (13, "Ada (4)")]);
    }

    #[test]
    fn an_entity_input_lists_the_first_candidates_its_scope_gives() {
        // A town of 50 people, whom the game's scope lists farthest first.
        let people: Vec<(Entity, EntityView<'static>)> = (10..60)
            .map(|n| {
                let name = Cow::Owned(format!("villager {n}"));
                let person = EntityView {
                    name,
                    character: true,
                    ..Default::default()
                };
                (entity(n), person)
            })
            .collect();
        let view = WorldView::new(people);
        let mut scopes = TargetScopes::default();
        scopes.insert("townsfolk", |_, _| (10..60).rev().map(entity).collect());
        let summon = ability(json!({
            "required": [{ "name": "who", "type": "entity", "scope": "townsfolk" }]
        }));
        let offered = OfferedAbility::new(summon, &view, &scopes, entity(1)).expect("offered");
        let named: Vec<&str> = (offered.candidates("who").iter())
            .map(|(_, name)| name.as_str())
            .collect();
        let first: Vec<String> = (60 - MAX_ENTITY_CANDIDATES..60)
            .map(|n| format!("villager {n}"))
            .collect();
        assert_eq!(named, first, "the scope's first, by name");
    }

    #[test]
    fn an_ability_whose_required_entity_has_no_candidate_is_not_offered() {
        let view = inn();
        let scopes = TargetScopes::default();
        let needs_a_lute = ability(json!({
            "required": [{ "name": "lute", "type": "entity", "scope": "inventory" }]
        }));
        let free = ability(json!({}));
        let offered =
            OfferedAbilities::new([needs_a_lute, Arc::clone(&free)], &view, &scopes, entity(2));
        assert_eq!(offered.len(), 1);
        let kept = offered.get("tavern:rent_room").expect("one offered");
        assert!(
            Arc::ptr_eq(&kept.definition, &free),
            "the one needing nothing"
        );
        let unknown = ability(json!({
            "required": [{ "name": "x", "type": "entity", "scope": "the_moon" }]
        }));
        assert!(OfferedAbility::new(unknown, &view, &scopes, entity(2)).is_none());
    }
}
