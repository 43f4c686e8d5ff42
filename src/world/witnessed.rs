//! What characters in a place saw happen, in words.

use bevy::prelude::*;

/// Something that happened where `actor` is, told in words: everyone in that place
/// witnessed it. Narration writes one for each report it narrates; a game may write
/// its own for scripted events. Smart actors there remember it.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct Witnessed {
    /// Who did it; the witnesses are those in its place.
    pub actor: Entity,
    /// The others it involved (objects, targets, instruments), for recall by topic.
    pub involved: Vec<Entity>,
    /// What happened, as the witnesses remember it.
    pub text: String,
}
