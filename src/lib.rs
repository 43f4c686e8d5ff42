#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod actors;
pub mod content;
pub mod llm;
pub mod prompt;
pub mod world;

use bevy::app::{PluginGroup, PluginGroupBuilder};
use bevy::prelude::*;

/// Everything a game usually imports.
pub mod prelude {
    pub use crate::actors::{
        ActionRequest, ActorMind, ActorSpoke, DecisionRejected, DecisionRequested, RejectionReason,
        SceneDefinition, SmartActor, SmartActorPlugin, SmartActorSettings, TurnClock, TurnEnded,
    };
    pub use crate::content::{
        ActionDefinition, ActorSpec, ContentError, ContentPlugin, ContentRegistry, ContentSettings,
        ModManifest, content_loaded,
    };
    pub use crate::llm::{
        BackendChoice, LlmBridge, LlmPlugin, LlmRequest, LlmResponse, LlmSettings,
    };
    pub use crate::world::{
        AvailableAction, CarriedBy, Character, DisplayName, Exits, InPlace, Place, Tags,
        TargetScopeAppExt, WorldPlugin, WorldView,
    };
    pub use crate::{LoomPlugins, LoomSystems};
}

/// The stages of a turn, chained in `Update` in this order. Put the game's own rule
/// systems between [`Decide`](Self::Decide) and [`Narrate`](Self::Narrate).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoomSystems {
    /// Turn and cadence bookkeeping, perception.
    Sense,
    /// Prompt assembly and submission.
    Think,
    /// Drain the bridge into [`LlmResponse`](llm::LlmResponse) messages.
    Receive,
    /// Parse and validate answers; write [`ActionRequest`](actors::ActionRequest)s.
    Decide,
    /// Turn reports into text.
    Narrate,
    /// Write memories.
    Remember,
}

pub(crate) fn configure_loom_sets(app: &mut App) {
    app.configure_sets(
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

/// Every bevy_loom plugin: content, world view, the LLM bridge and smart actors.
///
/// Configure one with `.set(...)`:
/// `LoomPlugins.set(LlmPlugin { settings: LlmSettings { backend: BackendChoice::Offline { seed: 7 }, ..default() } })`.
pub struct LoomPlugins;

impl PluginGroup for LoomPlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(content::ContentPlugin::default())
            .add(world::WorldPlugin)
            .add(llm::LlmPlugin::default())
            .add(actors::SmartActorPlugin::default())
    }
}
