//! The minimal place model the built-in scopes understand.

use std::collections::BTreeSet;

use bevy::prelude::*;

/// A location: a room, a street. Characters and things are [`InPlace`] in it.
#[derive(Component, Debug, Clone, Default, Reflect)]
#[reflect(Component)]
pub struct Place;

/// Places reachable from this one.
#[derive(Component, Debug, Clone, Default, Reflect)]
#[reflect(Component)]
pub struct Exits(pub Vec<Entity>);

/// The place an entity is in.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Reflect)]
#[reflect(Component)]
pub struct InPlace(pub Entity);

/// The character carrying this thing; carried things are not [`InPlace`].
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Reflect)]
#[reflect(Component)]
pub struct CarriedBy(pub Entity);

/// Where an entity is, as a query reads it: its [`InPlace`] and its [`CarriedBy`].
pub(crate) type WhereItIs = (Option<&'static InPlace>, Option<&'static CarriedBy>);

/// Where entities are ([`WhereItIs`]), read for each carrier in turn by [`place_of`].
pub(crate) type Whereabouts<'w, 's> = Query<'w, 's, WhereItIs>;

/// The place an entity is in, as the world view finds it: its carrier's (a carrier's
/// carrier, through at most [`MOST_CARRIERS`](crate::content::MOST_CARRIERS)) when it
/// is carried, else its own; given where it is (its
/// [`InPlace`] and [`CarriedBy`]) and `whereabouts` for its carriers.
pub(crate) fn place_of(
    (in_place, carried_by): (Option<&InPlace>, Option<&CarriedBy>),
    whereabouts: &Whereabouts,
) -> Option<Entity> {
    let (mut in_place, mut carried_by) = (in_place.copied(), carried_by.copied());
    // Its own whereabouts, then each carrier's.
    for _ in 0..=crate::content::MOST_CARRIERS {
        let Some(CarriedBy(carrier)) = carried_by else {
            return in_place.map(|place| place.0);
        };
        let (place, carrier) = whereabouts.get(carrier).ok()?;
        (in_place, carried_by) = (place.copied(), carrier.copied());
    }
    None
}

/// The name prompts and commands use for an entity: "Marta", "mug of ale".
#[derive(Component, Debug, Clone, PartialEq, Eq, Reflect)]
#[reflect(Component)]
pub struct DisplayName(pub String);

/// An actor carrying out a plan: smart actors are not asked to decide while it is on,
/// unless they are in combat or the player talks to them, and a decision one was
/// queued for or waits on when it comes is withdrawn. Planning keeps it with the
/// plan's component and takes it off when the plan ends; a game may put it on any actor
/// to hold its decisions, and a plan that ends leaves the game's hold on. The hold is
/// one marker: the game's is the one on the actor as a plan starts (put on while a
/// plan that brought its own runs, it goes with that plan), and taking it off while a
/// plan runs lets the plan's next replacement bring its own.
#[derive(Component, Debug, Clone, Copy, Default, Reflect)]
#[reflect(Component)]
pub struct FollowingPlan;

/// The player's character: narration speaks of its actions in the second person.
#[derive(Component, Debug, Clone, Copy, Default, Reflect)]
#[reflect(Component)]
pub struct Player;

/// The narrative context an entity is described with: the `key` of a loaded
/// [`NarrativeContext`](crate::content::NarrativeContext) (`tavern:lute`).
#[derive(Component, Debug, Clone, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component)]
pub struct NarrativeKey(pub String);

/// A person or creature that can act and be acted on.
#[derive(Component, Debug, Clone, Copy, Default, Reflect)]
#[reflect(Component)]
pub struct Character;

/// Free-form tags that action rules test: `portable`, `seat`, `sitting`.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq, Reflect)]
#[reflect(Component)]
pub struct Tags(pub BTreeSet<String>);

impl Tags {
    /// Tags from a list of names.
    pub fn new<S: Into<String>>(tags: impl IntoIterator<Item = S>) -> Self {
        Self(tags.into_iter().map(Into::into).collect())
    }

    /// Whether the tag is present.
    pub fn has(&self, tag: &str) -> bool {
        self.0.contains(tag)
    }
}
