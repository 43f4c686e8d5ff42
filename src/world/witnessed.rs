//! What characters in a place saw happen, in words.

use bevy::prelude::*;

/// Something that happened, told in words: `actor` did it, and everyone in the place
/// it happened witnessed it. Narration writes one for each report it narrates; a game
/// may write its own for scripted events. Smart actors among them remember it.
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
