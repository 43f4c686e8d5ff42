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

/// The turn count: one per [`TurnEnded`] so far, and one per tick of a real-time
/// cadence that starts turns without one (the smart actors' `cadence`). The turns
/// that ended are counted in [`LoomSystems::Sense`], before the smart actors' turns
/// start: a `TurnEnded` written later in the frame counts in the next. A game may set
/// it (a saved game loaded); that starts no smart actor's turn, though a plan that
/// moves by turns takes its step of the turn it shows.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnClock {
    /// The current turn; 0 before the first.
    pub turn: u64,
}

/// Counts the turns: every feature plugin that follows them adds it, so each works
/// alone and all count the same turns.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TurnClockPlugin;

impl Plugin for TurnClockPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<TurnClock>()
            .init_resource::<TurnsEnded>()
            .add_message::<TurnEnded>()
            .add_systems(Update, count_turns.in_set(LoomSystems::Sense));
    }
}

impl TurnClockPlugin {
    /// Adds the plugin to `app` unless it is there.
    pub(crate) fn add_once(app: &mut App) {
        if !app.is_plugin_added::<Self>() {
            app.add_plugins(Self);
        }
    }
}

/// How many turns ended since the frame before ([`count_turns`]): what starts the
/// smart actors' turns, whatever the game sets the clock to.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TurnsEnded(pub u64);

/// Moves the clock on by the turns that ended since it last ran.
pub(crate) fn count_turns(
    mut turns: MessageReader<TurnEnded>,
    mut clock: ResMut<TurnClock>,
    mut ended: ResMut<TurnsEnded>,
) {
    ended.0 = turns.read().count() as u64;
    if ended.0 > 0 {
        clock.turn = clock.turn.saturating_add(ended.0);
    }
}

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
