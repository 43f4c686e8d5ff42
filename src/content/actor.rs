//! Smart-actor specs: who a model-driven character is and what it may do.

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

/// A smart actor's spec (`mods/<mod>/actors/<name>.actor.json`).
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActorSpec {
    /// `mod:name`; the namespace is the id of the mod that owns the file.
    pub id: String,
    /// The character's name as others see it.
    pub name: String,
    /// A few words: "innkeeper of the Gilded Tankard".
    pub role: String,
    /// Lines of personality, voice and manner.
    #[serde(default)]
    pub persona: Vec<String>,
    /// What the character wants.
    #[serde(default)]
    pub goals: Vec<String>,
    /// What the character may do and how often it thinks.
    #[serde(default)]
    pub policy: ActorPolicy,
}

/// What a smart actor may do and how often it thinks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActorPolicy {
    /// Action ids it may be offered: exact ids (`items:give`), whole mods (`items:*`) or `*` for all.
    #[serde(default = "all_actions")]
    pub allowed_actions: Vec<String>,
    /// Turns to sit out after each decision; 0 thinks every turn.
    #[serde(default)]
    pub cooldown_turns: u32,
}

fn all_actions() -> Vec<String> {
    vec!["*".to_owned()]
}

impl Default for ActorPolicy {
    fn default() -> Self {
        Self {
            allowed_actions: all_actions(),
            cooldown_turns: 0,
        }
    }
}

impl ActorPolicy {
    /// Whether the policy lets the actor use the action with this id.
    pub fn allows(&self, action_id: &str) -> bool {
        self.allowed_actions.iter().any(|pattern| {
            pattern == "*"
                || pattern == action_id
                || pattern.strip_suffix(":*").is_some_and(|namespace| {
                    action_id
                        .split_once(':')
                        .is_some_and(|(own, _)| own == namespace)
                })
        })
    }
}
