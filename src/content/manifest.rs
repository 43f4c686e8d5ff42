//! The game file and mod manifests.

use std::collections::BTreeMap;

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

use super::VocabularyExtension;

/// The game file (`game.loom.json`): which mods load, in order.
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GameManifest {
    /// Mod ids to load, in load order. Each names a folder `mods/<id>/` holding a `mod.json`.
    pub mods: Vec<String>,
    /// Mods whose action groups come first in prompts, in this order; the rest follow alphabetically.
    #[serde(default)]
    pub action_group_order: Vec<String>,
}

/// A mod's manifest (`mods/<id>/mod.json`).
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModManifest {
    /// Letters, digits, `_` and `-`; equal to the mod's folder name.
    pub id: String,
    /// The mod's version, in semver (`1.2.0`).
    pub version: semver::Version,
    /// A human-readable name.
    pub name: String,
    /// What the mod adds, for people.
    #[serde(default)]
    pub description: Option<String>,
    /// Mods that must load before this one, with the versions this mod works with.
    #[serde(default)]
    pub dependencies: Vec<ModDependency>,
    /// Mod ids that must not be loaded together with this one.
    #[serde(default)]
    pub conflicts: Vec<String>,
    /// What this mod's actions are for, shown to the model above its action group (10–200 characters).
    #[serde(default)]
    pub action_purpose: Option<String>,
    /// When the model should consider this mod's actions (10–200 characters).
    #[serde(default)]
    pub action_consider_when: Option<String>,
    /// The files this mod contributes, relative to its folder.
    #[serde(default)]
    pub content: ModContent,
    /// Words this mod adds to the canonical narrative vocabularies.
    #[serde(default)]
    pub vocabulary: VocabularyExtension,
    /// Other words a command line may start with for this mod's commands, each
    /// with the words the commands start with: `{"take": "pick up", "grab": "pick up"}`.
    /// A smart actor's `UTTERANCE` "take the mug" then matches "pick up mug".
    #[serde(default)]
    pub verb_aliases: BTreeMap<String, String>,
}

/// One entry of a manifest's `dependencies`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModDependency {
    /// The id of the mod depended on.
    pub id: String,
    /// The versions accepted, as a semver range (`^1.0`, `>=0.3, <0.5`).
    #[serde(default = "any_version")]
    pub version: semver::VersionReq,
}

fn any_version() -> semver::VersionReq {
    semver::VersionReq::STAR
}

impl ModContent {
    /// Each listing with its field name (`actions`, `tasks`, …), in the order files load.
    pub fn lists(&self) -> [(&'static str, &[String]); 8] {
        [
            ("actions", &self.actions),
            ("actors", &self.actors),
            ("narrative", &self.narrative),
            ("prompts", &self.prompts),
            ("tags", &self.tags),
            ("tasks", &self.tasks),
            ("methods", &self.methods),
            ("abilities", &self.abilities),
        ]
    }
}

/// The content listing of a manifest: paths relative to the mod's folder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModContent {
    /// Action definition files (`actions/wait.action.json`).
    #[serde(default)]
    pub actions: Vec<String>,
    /// Smart-actor spec files (`actors/marta.actor.json`).
    #[serde(default)]
    pub actors: Vec<String>,
    /// Narrative context files (`narrative/lute.narrative.json`).
    #[serde(default)]
    pub narrative: Vec<String>,
    /// Prompt template files (`prompts/smart_actor.prompt.json`).
    #[serde(default)]
    pub prompts: Vec<String>,
    /// Tag files (`tags.json`), merged in load order into the [`TagIndex`](super::TagIndex).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Planning task files (`tasks/serve_drink.task.json`).
    #[serde(default)]
    pub tasks: Vec<String>,
    /// Refinement method files (`methods/serve_from_bar.method.json`).
    #[serde(default)]
    pub methods: Vec<String>,
    /// Ability files (`abilities/rent_room.ability.json`).
    #[serde(default)]
    pub abilities: Vec<String>,
}
