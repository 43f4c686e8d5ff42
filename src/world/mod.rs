//! The world view: what an actor perceives and can act on.
//!
//! **Layer:** the world view, above content and the transport: it owns the offer, one
//! plain type ([`AvailableAction`] in [`OfferedActions`]) that prompts show and answers
//! are checked against, and the turn's stages ([`LoomSystems`]) every feature runs in.
//!
//! A minimal place model ([`Place`], [`InPlace`], [`CarriedBy`], [`DisplayName`],
//! [`Character`], [`Tags`], [`Exits`]) is snapshotted into a [`WorldView`]; named
//! [`TargetScopes`] turn it into candidates for action targets, and
//! [`available_actions`] combines definitions, scopes and tag rules into numbered
//! commands, an actor's [`OfferedActions`]. To offer to many actors in a frame, an
//! [`ActionMenu`] (built once per content generation) offers through [`ActionOffers`].

mod abilities;
mod acting;
mod available;
mod components;
mod gone;
mod names;
mod offered;
mod perception;
mod revisions;
mod schedule;
mod scope;
mod view;
mod witnessed;

use bevy::prelude::*;

pub use abilities::{
    AbilityInvoked, InputValue, MAX_ENTITY_CANDIDATES, OfferedAbilities, OfferedAbility,
};
pub use acting::{
    ActionReport, ActionRequest, ActionTargets, EffectReport, Outcome, ParamValue, PlanCompleted,
    PlanFailed, PlanOrigin, PlanStepRef, StartPlan, StopPlan,
};
#[cfg(test)]
pub(crate) use available::tests::{offer_to_go, registry as registry_of_actions};
pub use available::{
    ActionMenu, ActionOffers, MOST_TARGET_COMBINATIONS, available_actions, render_command,
};
pub use components::{
    CarriedBy, Character, DisplayName, Exits, FollowingPlan, InPlace, NarrativeKey, Place, Player,
    Tags,
};
pub(crate) use components::{WhereItIs, Whereabouts, place_of};
pub(crate) use gone::ForgetGone;
pub(crate) use names::{as_shown, into_printable, one_line, printable, prompt_name, push_as_text};
pub use offered::{AvailableAction, OfferedActions, OfferedIter};
pub use perception::{
    PERCEPTION_CHANGES, describe_surroundings, write_perception_changes, write_surroundings,
};
pub use revisions::{PlaceRevisions, WorldViewChanges};
pub(crate) use schedule::configure_loom_sets;
pub use schedule::{LoomSystems, TurnClock, TurnEnded, WorldSystems};
pub(crate) use schedule::{TurnClockPlugin, TurnsEnded, count_turns};
pub use scope::{ScopeFn, ScopeReach, TargetScopeAppExt, TargetScopes};
pub use view::{EntityView, WorldView, WorldViewQuery};
pub use witnessed::Witnessed;

use crate::content::{ContentSystems, TargetScopeNames};

/// Registers the place model and the target scopes, and tells the content layer
/// which scope names exist so that actions naming others are rejected at load.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorldPlugin;

impl Plugin for WorldPlugin {
    fn build(&self, app: &mut App) {
        configure_loom_sets(app);
        TurnClockPlugin::add_once(app);
        app.init_resource::<TargetScopes>()
            .register_type::<Place>()
            .register_type::<Exits>()
            .register_type::<InPlace>()
            .register_type::<CarriedBy>()
            .register_type::<DisplayName>()
            .register_type::<Character>()
            .register_type::<Tags>()
            .register_type::<Player>()
            .register_type::<FollowingPlan>()
            .register_type::<NarrativeKey>()
            .init_resource::<TargetScopeNames>()
            .add_message::<Witnessed>()
            .add_message::<ActionRequest>()
            .add_message::<AbilityInvoked>()
            .add_message::<ActionReport>()
            .add_message::<PlanCompleted>()
            .add_message::<PlanFailed>()
            .add_message::<StartPlan>()
            .add_message::<StopPlan>()
            .add_systems(PreUpdate, publish_scope_names.in_set(WorldSystems))
            .configure_sets(PreUpdate, WorldSystems.before(ContentSystems));
    }
}

/// Tells the content layer which scope names exist, so actions naming others are rejected at load.
fn publish_scope_names(scopes: Res<TargetScopes>, mut names: ResMut<TargetScopeNames>) {
    if scopes.is_changed() {
        names.0 = Some(scopes.names().map(str::to_owned).collect());
    }
}
