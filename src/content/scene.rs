//! Scenes as data: places, entities, tags, who is where and which are smart actors.
//! Spawning one into the world is the smart actors' work ([`SceneDefinition::spawn`]).

use std::collections::HashMap;

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

use super::{ContentAsset, ContentError, ContentRegistry};

/// A scene file (`scenes/tavern.scene.json`).
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SceneDefinition {
    /// A title for transcripts.
    #[serde(default)]
    pub name: String,
    /// The places of the scene.
    pub places: Vec<ScenePlace>,
    /// Characters, furniture and items.
    #[serde(default)]
    pub entities: Vec<SceneEntity>,
}

/// A place in a scene.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenePlace {
    /// Unique within the scene; entities refer to it.
    pub id: String,
    /// Its display name: "the common room".
    pub name: String,
    /// Its tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Ids of places reachable from here.
    #[serde(default)]
    pub exits: Vec<String>,
    /// The key of its narrative context (`tavern:common_room`).
    #[serde(default)]
    pub narrative: Option<String>,
}

/// A character, piece of furniture or item in a scene.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SceneEntity {
    /// Unique within the scene.
    pub id: String,
    /// Its display name: "Marta", "oak bench".
    pub name: String,
    /// Its tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The id of the place it is in (for anything not carried).
    #[serde(default)]
    pub place: Option<String>,
    /// The id of the character carrying it.
    #[serde(default)]
    pub carried_by: Option<String>,
    /// Whether it is a character (a person or creature).
    #[serde(default)]
    pub character: bool,
    /// The id of the actor spec that drives it (its actor key), making it a smart
    /// actor; without one a character is a plain NPC and never calls a model.
    #[serde(default)]
    pub smart_actor: Option<String>,
    /// Whether it is the player's character (at most one).
    #[serde(default)]
    pub player: bool,
    /// The key of its narrative context (`tavern:lute`).
    #[serde(default)]
    pub narrative: Option<String>,
}

impl ContentAsset for SceneDefinition {
    const EXTENSIONS: &'static [&'static str] = &["scene.json", "scene.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems = Vec::new();
        let mut ids: HashMap<&str, bool> = HashMap::new();
        for (index, place) in self.places.iter().enumerate() {
            if ids.insert(&place.id, true).is_some() {
                problems.push(ContentError::new(
                    file,
                    format!("/places/{index}/id"),
                    format!("duplicate id `{}`", place.id),
                ));
            }
        }
        for (index, entity) in self.entities.iter().enumerate() {
            if ids.insert(&entity.id, false).is_some() {
                problems.push(ContentError::new(
                    file,
                    format!("/entities/{index}/id"),
                    format!("duplicate id `{}`", entity.id),
                ));
            }
        }
        for (index, place) in self.places.iter().enumerate() {
            for (exit_index, exit) in place.exits.iter().enumerate() {
                if ids.get(exit.as_str()) != Some(&true) {
                    problems.push(ContentError::new(
                        file,
                        format!("/places/{index}/exits/{exit_index}"),
                        format!("`{exit}` is not a place of this scene"),
                    ));
                }
            }
        }
        let is_character = |id: &str| self.entities.iter().any(|e| e.id == id && e.character);
        for (index, entity) in self.entities.iter().enumerate() {
            match (&entity.place, &entity.carried_by) {
                (Some(place), None) if ids.get(place.as_str()) != Some(&true) => {
                    problems.push(ContentError::new(
                        file,
                        format!("/entities/{index}/place"),
                        format!("`{place}` is not a place of this scene"),
                    ))
                }
                (None, Some(carrier)) if !is_character(carrier) => {
                    problems.push(ContentError::new(
                        file,
                        format!("/entities/{index}/carriedBy"),
                        format!("`{carrier}` is not a character of this scene"),
                    ))
                }
                (Some(_), Some(_)) | (None, None) => problems.push(ContentError::new(
                    file,
                    format!("/entities/{index}"),
                    "give exactly one of `place` or `carriedBy`",
                )),
                _ => {}
            }
            if entity.player && !entity.character {
                problems.push(ContentError::new(
                    file,
                    format!("/entities/{index}/player"),
                    "only a character can be the player: add \"character\": true",
                ));
            }
            if entity.player && entity.smart_actor.is_some() {
                problems.push(ContentError::new(
                    file,
                    format!("/entities/{index}/player"),
                    "the player is not a smart actor: remove `smartActor` or `player`",
                ));
            }
            if entity.player && self.entities[..index].iter().any(|e| e.player) {
                problems.push(ContentError::new(
                    file,
                    format!("/entities/{index}/player"),
                    "a scene has one player: set `player` on one entity only",
                ));
            }
            if entity.smart_actor.is_some() && !entity.character {
                problems.push(ContentError::new(
                    file,
                    format!("/entities/{index}/smartActor"),
                    "only a character can be a smart actor: add \"character\": true",
                ));
            }
        }
        problems
    }
}

/// Loaded ids for an error message: sorted, the first few; `none` when there are none.
fn known_ids<'a>(ids: impl Iterator<Item = &'a str>, none: &str) -> String {
    const SHOWN: usize = 8;
    let mut ids: Vec<&str> = ids.collect();
    if ids.is_empty() {
        return none.to_owned();
    }
    ids.sort_unstable();
    let more = ids.len().saturating_sub(SHOWN);
    ids.truncate(SHOWN);
    let mut text = format!("loaded: {}", ids.join(", "));
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

impl SceneDefinition {
    /// The scene's actor keys that name no loaded spec, each a problem at the
    /// entity's `smartActor` in `file`. Scenes load apart from the mods, so call this
    /// once content has loaded ([`content_loaded`](crate::content::content_loaded)),
    /// before [`spawn`](Self::spawn): an actor whose spec is missing would only pass
    /// its turns.
    pub fn check_actor_keys(&self, registry: &ContentRegistry, file: &str) -> Vec<ContentError> {
        let mut problems = Vec::new();
        for (index, entity) in self.entities.iter().enumerate() {
            let Some(key) = entity
                .smart_actor
                .as_deref()
                .filter(|key| registry.actor(key).is_none())
            else {
                continue;
            };
            problems.push(ContentError::new(
                file,
                format!("/entities/{index}/smartActor"),
                format!(
                    "no loaded actor spec has the key `{key}` ({}): fix the key, or list the spec's file in its mod's `content.actors` and fix the errors reported for it",
                    known_ids(
                        registry.actors().map(|spec| spec.id.as_str()),
                        "no spec is loaded"
                    )
                ),
            ));
        }
        problems
    }

    /// The scene's narrative keys (of places and entities) that no loaded narrative
    /// file defines, each a problem at its `narrative` in `file`. Call it with
    /// [`check_actor_keys`](Self::check_actor_keys): narration would describe such an
    /// entity by its name alone, without the fragments its author meant it to have.
    pub fn check_narrative_keys(
        &self,
        registry: &ContentRegistry,
        file: &str,
    ) -> Vec<ContentError> {
        let places = self
            .places
            .iter()
            .enumerate()
            .map(|(index, place)| (format!("/places/{index}/narrative"), &place.narrative));
        let entities = self
            .entities
            .iter()
            .enumerate()
            .map(|(index, entity)| (format!("/entities/{index}/narrative"), &entity.narrative));
        places
            .chain(entities)
            .filter_map(|(pointer, key)| {
                let key = key.as_deref().filter(|key| registry.narrative(key).is_none())?;
                Some(ContentError::new(
                    file,
                    pointer,
                    format!(
                        "no loaded narrative file defines the key `{key}` ({}): fix the key, or list its file in its mod's `content.narrative` and fix the errors reported for it",
                        known_ids(
                            registry.narratives().map(|context| context.key.as_str()),
                            "no narrative file is loaded"
                        )
                    ),
                ))
            })
            .collect()
    }
}
