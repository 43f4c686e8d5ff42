//! What characters in a place saw happen, in words.

use bevy::prelude::*;

/// Something that happened, told in words: `actor` did it, and everyone in the place
/// it happened witnessed it. Narration writes one for each report it narrates; a game
/// may write its own for scripted events ([`Witnessed::new`]). Smart actors among them
/// remember it.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct Witnessed {
    /// Who did it.
    pub actor: Entity,
    /// Where it happened; `None` for wherever `actor` is when it is remembered.
    pub place: Option<Entity>,
    /// The others it involved (objects, targets, instruments), for recall by topic.
    pub involved: Vec<Entity>,
    /// What happened, as the witnesses remember it.
    pub text: String,
}

impl Witnessed {
    /// `text`, told of what `actor` did, witnessed wherever `actor` is when it is
    /// remembered.
    pub fn new(actor: Entity, text: impl Into<String>) -> Self {
        Self {
            actor,
            place: None,
            involved: Vec::new(),
            text: text.into(),
        }
    }

    /// Where it happened, whoever is there when it is remembered.
    #[must_use]
    pub fn at(mut self, place: Option<Entity>) -> Self {
        self.place = place;
        self
    }

    /// The others it involved.
    #[must_use]
    pub fn involving(mut self, involved: impl IntoIterator<Item = Entity>) -> Self {
        self.involved.extend(involved);
        self
    }
}
