//! Tag files: explicit tags for narrative keys, the extra words an actor's memories
//! are recalled by.

use std::collections::{BTreeMap, HashMap};

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

/// A tag file (`mods/<mod>/tags.json`): tags for places, items and actors, by their
/// narrative key (`tavern:cellar`).
///
/// ```json
/// { "places": { "tavern:cellar": ["cellar", "wine"] },
///   "items": { "tavern:key": ["cellar"] },
///   "actors": { "tavern:silas": ["secret"] } }
/// ```
#[derive(Asset, TypePath, Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TagFile {
    /// Tags of places.
    #[serde(default)]
    pub places: BTreeMap<String, Vec<String>>,
    /// Tags of items.
    #[serde(default)]
    pub items: BTreeMap<String, Vec<String>>,
    /// Tags of actors.
    #[serde(default)]
    pub actors: BTreeMap<String, Vec<String>>,
}

impl TagFile {
    /// Each list with its field name: `places`, `items`, `actors`.
    pub fn lists(&self) -> [(&'static str, &BTreeMap<String, Vec<String>>); 3] {
        [
            ("places", &self.places),
            ("items", &self.items),
            ("actors", &self.actors),
        ]
    }
}

/// Every loaded tag file merged, in load order: the tags of each narrative key.
///
/// A smart actor recalls memories by the narrative keys around it and by their tags
/// here, so a memory tagged `cellar` comes back when the cellar key is at hand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagIndex {
    tags: HashMap<String, Vec<String>>,
}

impl TagIndex {
    /// The tags of a narrative key, in the order they were first given; empty for a
    /// key no tag file names.
    pub fn tags_of(&self, key: &str) -> &[String] {
        self.tags.get(key).map_or(&[], Vec::as_slice)
    }

    /// Adds a file's tags: each key gets those it does not have yet, after its own.
    pub fn extend(&mut self, file: &TagFile) {
        for (_, list) in file.lists() {
            for (key, tags) in list {
                let known = self.tags.entry(key.clone()).or_default();
                for tag in tags {
                    if !known.contains(tag) {
                        known.push(tag.clone());
                    }
                }
            }
        }
    }

    /// The keys that have tags, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.tags.keys().map(String::as_str)
    }

    /// Whether no key has tags.
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(json: serde_json::Value) -> TagFile {
        serde_json::from_value(json).expect("a tag file")
    }

    #[test]
    fn files_merge_in_order_without_repeating_a_tag() {
        let mut index = TagIndex::default();
        index.extend(&file(serde_json::json!({
            "places": { "tavern:cellar": ["cellar", "wine"] },
            "items": { "tavern:key": ["cellar"] }
        })));
        index.extend(&file(serde_json::json!({
            "places": { "tavern:cellar": ["dark", "wine"] },
            "actors": { "tavern:silas": ["secret"] }
        })));
        assert_eq!(index.tags_of("tavern:cellar"), ["cellar", "wine", "dark"]);
        assert_eq!(index.tags_of("tavern:key"), ["cellar"]);
        assert_eq!(index.tags_of("tavern:silas"), ["secret"]);
        assert!(index.tags_of("tavern:street").is_empty());
        let mut keys: Vec<&str> = index.keys().collect();
        keys.sort_unstable();
        assert_eq!(keys, ["tavern:cellar", "tavern:key", "tavern:silas"]);
    }
}
