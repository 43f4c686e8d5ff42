//! The system sets every bevy_loom system runs in.

use bevy::prelude::*;

use crate::llm::LlmSystems;

/// The stages of a turn, chained in `Update` in this order. Put the game's own rule
/// systems between [`Decide`](Self::Decide) and [`Narrate`](Self::Narrate).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoomSystems {
    /// Turn and cadence bookkeeping, perception.
    Sense,
    /// Prompt assembly and submission.
    Think,
    /// Drain the bridge into [`LlmResponse`](crate::llm::LlmResponse) messages ([`LlmSystems::Receive`]).
    Receive,
    /// Parse and validate answers, advance plans; write
    /// [`ActionRequest`](super::ActionRequest)s.
    Decide,
    /// Turn reports into text.
    Narrate,
    /// Write memories.
    Remember,
}

/// Written by the game when a turn ends: eligible smart actors then think, and plans
/// that move by turns take their next step.
#[derive(Message, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnEnded;

/// The world view's systems: in `PreUpdate`, before
/// [`ContentSystems`](crate::content::ContentSystems), they tell the content layer which
/// target scope names exist, so actions naming others are rejected at load.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WorldSystems;

/// Orders the stages; every feature plugin calls it, so each works alone.
pub(crate) fn configure_loom_sets(app: &mut App) {
    app.configure_sets(Update, LlmSystems::Receive.in_set(LoomSystems::Receive))
        .configure_sets(
            Update,
            (
                LoomSystems::Sense,
                LoomSystems::Think,
                LoomSystems::Receive,
                LoomSystems::Decide,
                LoomSystems::Narrate,
                LoomSystems::Remember,
            )
                .chain(),
        );
}
