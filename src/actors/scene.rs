//! Spawning a scene file's places and entities as world entities, with a smart actor
//! on each that names a spec. The scene types are content ([`crate::content::scene`]).

use std::collections::HashMap;

use bevy::prelude::*;
use thiserror::Error;

use super::SmartActor;
use crate::content::{ContentAsset, ContentError};
pub use crate::content::{SceneDefinition, SceneEntity, ScenePlace};
use crate::world::{
    CarriedBy, Character, DisplayName, Exits, InPlace, NarrativeKey, Place, Player, Tags,
};

/// The entities a scene spawned, by scene id.
#[derive(Debug, Clone, Default)]
pub struct SpawnedScene {
    /// Scene id → entity, for places and entities alike.
    pub entities: HashMap<String, Entity>,
    /// Entity ids in the order the scene lists them.
    pub order: Vec<String>,
}

/// Why a scene could not be spawned.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SceneError {
    /// The scene file has problems.
    #[error("the scene has problems: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<ContentError>),
}

impl SceneDefinition {
    /// Spawns the scene's places and entities with this crate's world components,
    /// and a [`SmartActor`] on each entity that names a spec.
    pub fn spawn(&self, commands: &mut Commands) -> Result<SpawnedScene, SceneError> {
        let problems = self.check("scene");
        if !problems.is_empty() {
            return Err(SceneError::Invalid(problems));
        }
        let mut spawned = SpawnedScene::default();
        for place in &self.places {
            let entity = commands
                .spawn((
                    Place,
                    DisplayName(place.name.clone()),
                    Tags::new(place.tags.iter().cloned()),
                ))
                .id();
            if let Some(key) = &place.narrative {
                commands.entity(entity).insert(NarrativeKey(key.clone()));
            }
            spawned.entities.insert(place.id.clone(), entity);
        }
        for place in &self.places {
            let exits = place
                .exits
                .iter()
                .filter_map(|id| spawned.entities.get(id).copied())
                .collect();
            commands
                .entity(spawned.entities[&place.id])
                .insert(Exits(exits));
        }
        for entity in &self.entities {
            let id = commands
                .spawn((
                    DisplayName(entity.name.clone()),
                    Tags::new(entity.tags.iter().cloned()),
                ))
                .id();
            if entity.character {
                commands.entity(id).insert(Character);
            }
            if let Some(spec) = &entity.smart_actor {
                commands.entity(id).insert(SmartActor::new(spec.clone()));
            }
            if entity.player {
                commands.entity(id).insert(Player);
            }
            if let Some(key) = &entity.narrative {
                commands.entity(id).insert(NarrativeKey(key.clone()));
            }
            spawned.entities.insert(entity.id.clone(), id);
            spawned.order.push(entity.id.clone());
        }
        for entity in &self.entities {
            let id = spawned.entities[&entity.id];
            if let Some(place) = entity.place.as_ref().and_then(|p| spawned.entities.get(p)) {
                commands.entity(id).insert(InPlace(*place));
            }
            if let Some(carrier) = entity
                .carried_by
                .as_ref()
                .and_then(|c| spawned.entities.get(c))
            {
                commands.entity(id).insert(CarriedBy(*carrier));
            }
        }
        Ok(spawned)
    }
}
