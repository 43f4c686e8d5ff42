//! The world view: what an actor perceives and can act on.
//!
//! A minimal place model ([`Place`], [`InPlace`], [`CarriedBy`], [`DisplayName`],
//! [`Character`], [`Tags`], [`Exits`]) is snapshotted into a [`WorldView`]; named
//! [`TargetScopes`] turn it into candidates for action targets, and
//! [`available_actions`] combines definitions, scopes and tag rules into numbered commands.

mod available;
mod components;
mod perception;
mod scope;
mod view;

use std::collections::HashSet;

use bevy::prelude::*;

pub use available::{AvailableAction, available_actions, render_command};
pub use components::{CarriedBy, Character, DisplayName, Exits, InPlace, Place, Tags};
pub use perception::describe_surroundings;
pub use scope::{ScopeFn, TargetScopeAppExt, TargetScopes};
pub use view::{EntityView, WorldView, WorldViewQuery};

use crate::content::{ContentError, ContentRegistry, ContentSystems};

/// Registers the place model and the target scopes, and rejects actions that name
/// a scope nobody registered.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorldPlugin;

impl Plugin for WorldPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<TargetScopes>()
            .add_message::<ContentError>()
            .register_type::<Place>()
            .register_type::<Exits>()
            .register_type::<InPlace>()
            .register_type::<CarriedBy>()
            .register_type::<DisplayName>()
            .register_type::<Character>()
            .register_type::<Tags>()
            .add_systems(PreUpdate, reject_unknown_scopes.after(ContentSystems));
    }
}

fn reject_unknown_scopes(
    registry: Option<ResMut<ContentRegistry>>,
    scopes: Res<TargetScopes>,
    mut checked: Local<u64>,
    mut reported: Local<HashSet<ContentError>>,
    mut errors: MessageWriter<ContentError>,
) {
    let Some(mut registry) = registry else { return };
    if registry.generation() == *checked {
        return;
    }
    *checked = registry.generation();
    let mut rejected = Vec::new();
    for action in registry.actions() {
        for (role, slot) in action.target_slots() {
            if !scopes.contains(&slot.scope) {
                let known = scopes.names().collect::<Vec<_>>().join(", ");
                let file = registry
                    .action_file(&action.id)
                    .unwrap_or_default()
                    .to_owned();
                rejected.push((
                    action.id.clone(),
                    ContentError::new(
                        file,
                        format!("/targets/{}/scope", role.field()),
                        format!("unknown scope `{}`: use one of {known}, or register it with `add_target_scope`", slot.scope),
                    ),
                ));
                break;
            }
        }
    }
    // The registry is rebuilt whenever a file changes; report each problem once.
    let current: HashSet<ContentError> = rejected
        .iter()
        .map(|(_, problem)| problem.clone())
        .collect();
    for (id, problem) in rejected {
        if !reported.contains(&problem) {
            error!("{problem}");
            errors.write(problem.clone());
        }
        registry.reject_action(&id, problem);
    }
    *reported = current;
}
