#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod actors;
pub mod content;
pub mod llm;
pub mod narration;
pub mod overlay;
pub mod planning;
pub mod prompt;
pub mod testing;
pub mod world;

pub use world::LoomSystems;

use bevy::app::{PluginGroup, PluginGroupBuilder};

/// Everything a game usually imports.
pub mod prelude {
    pub use crate::actors::{
        ActionRequest, ActorHesitated, ActorMind, ActorPassed, ActorSpoke, Conversation,
        ConversationUpdate, DecisionFallback, DecisionRejected, DecisionRequested, HistoryStore,
        InCombat, OfferTrimmed, PlayerSaid, SmartActor, SmartActorPlugin, SmartActorSettings,
        TurnClock, TurnEnded,
    };
    pub use crate::content::{
        ActionDefinition, ActorSpec, ContentAppExt, ContentError, ContentPlugin, ContentRegistry,
        ContentSettings, ModManifest, SceneDefinition, content_loaded,
    };
    pub use crate::llm::{
        BackendChoice, LlmBridge, LlmDelta, LlmPlugin, LlmRequest, LlmResponse, LlmSettings,
        LlmStats, LlmSystems, Priority,
    };
    pub use crate::narration::{
        ActionReport, EffectReport, NarrationPlugin, NarrationRequested, NarrationSettings,
        NarrationSource, NarrationText, Outcome, Verbosity,
    };
    pub use crate::planning::{
        ParamValue, Plan, PlanCadence, PlanCompleted, PlanFailed, PlanOrigin, PlanStarted,
        PlanStepIssued, PlanningPlugin, PlanningSettings, StartPlan, StopPlan, WorldFacts,
    };
    pub use crate::prompt::{Answer, PromptBudgets, RejectionReason};
    pub use crate::world::{
        AbilityInvoked, AvailableAction, CarriedBy, Character, DisplayName, Exits, FollowingPlan,
        InPlace, InputValue, NarrativeKey, OfferedActions, Place, Player, ScopeReach, Tags,
        TargetScopeAppExt, Witnessed, WorldPlugin, WorldView,
    };
    pub use crate::{LoomPlugins, LoomSystems};
}

/// The bevy_loom plugins a game runs: content, world view, the LLM bridge, smart
/// actors, narration and planning. The debug overlay's are added on their own:
/// [`overlay::DebugLogPlugin`], or `overlay::LoomDebugOverlayPlugin` (with the
/// `overlay` feature), which adds it.
///
/// Configure one with `.set(...)`:
/// `LoomPlugins.set(LlmPlugin { backend: BackendChoice::Offline { seed: 7 }, ..default() })`.
pub struct LoomPlugins;

impl PluginGroup for LoomPlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(content::ContentPlugin::default())
            .add(world::WorldPlugin)
            .add(llm::LlmPlugin::default())
            .add(actors::SmartActorPlugin::default())
            .add(narration::NarrationPlugin::default())
            .add(planning::PlanningPlugin::default())
    }
}
