//! Scenes as data: places, entities, tags, who is where and which are smart actors.
//! Spawning one into the world is the smart actors' work ([`SceneDefinition::spawn`]).

use std::collections::{HashMap, HashSet};

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

use super::error::{did_you_mean, known_ids};
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
            if place.id.trim().is_empty() {
                problems.push(blank_id(file, &format!("/places/{index}")));
            } else if ids.insert(&place.id, true).is_some() {
                problems.push(ContentError::new(
                    file,
                    format!("/places/{index}/id"),
                    format!("duplicate id `{}`", place.id),
                ));
            }
            problems.extend(name_problem(file, &format!("/places/{index}"), &place.name));
        }
        for (index, entity) in self.entities.iter().enumerate() {
            if entity.id.trim().is_empty() {
                problems.push(blank_id(file, &format!("/entities/{index}")));
            } else if ids.contains_key(entity.id.as_str()) {
                // The first of that id keeps it: a place stays a place.
                problems.push(ContentError::new(
                    file,
                    format!("/entities/{index}/id"),
                    format!("duplicate id `{}`", entity.id),
                ));
            } else {
                ids.insert(&entity.id, false);
            }
            let at = format!("/entities/{index}");
            problems.extend(name_problem(file, &at, &entity.name));
        }
        let mut listed: HashSet<&str> = HashSet::new();
        for (index, place) in self.places.iter().enumerate() {
            listed.clear();
            for (exit_index, exit) in place.exits.iter().enumerate() {
                let message = if ids.get(exit.as_str()) != Some(&true) {
                    format!("`{exit}` is not a place of this scene")
                } else if *exit == place.id {
                    format!("an exit from `{exit}` to itself: list the places it leads to")
                } else if !listed.insert(exit) {
                    format!("`{exit}` is listed twice: list each exit once")
                } else {
                    continue;
                };
                let pointer = format!("/places/{index}/exits/{exit_index}");
                problems.push(ContentError::new(file, pointer, message));
            }
        }
        problems.extend(self.entity_problems(file, &ids));
        problems
    }
}

/// An id (at `at`'s `/id`) that is blank: nothing can name what it identifies.
fn blank_id(file: &str, at: &str) -> ContentError {
    let message = "the id is blank: give it an id, which exits and `carriedBy` name it by";
    ContentError::new(file, format!("{at}/id"), message)
}

/// A display name (at `at`'s `/name`) that cannot stand in a line of a prompt: a blank
/// one, which names nothing, or one holding a line break, which the actors'
/// perception would read as a line of its own.
fn name_problem(file: &str, at: &str, name: &str) -> Option<ContentError> {
    let message = if name.trim().is_empty() {
        "the name is blank: name it as the characters will see it".to_owned()
    } else if name.contains(['\n', '\r']) {
        format!("the name {name:?} holds a line break: write it on one line")
    } else {
        return None;
    };
    Some(ContentError::new(file, format!("{at}/name"), message))
}

impl SceneDefinition {
    /// Where each entity is and what it may be: in one known place or carried by a
    /// character, one player, smart actors and the player are characters. `ids` says
    /// of each scene id whether it is a place.
    fn entity_problems(&self, file: &str, ids: &HashMap<&str, bool>) -> Vec<ContentError> {
        let mut problems = Vec::new();
        let characters: HashSet<&str> = (self.entities.iter())
            .filter(|entity| entity.character)
            .map(|entity| entity.id.as_str())
            .collect();
        let is_character = |id: &str| characters.contains(id);
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
        problems.extend(self.carrying_problems(file));
        problems
    }

    /// Entities carried by themselves, through others or not, each circle once at its
    /// first entity; and those carried through more than [`MOST_CARRIERS`], each
    /// chain once where it gets too deep: either would be in no place. One walk up
    /// each chain, however long (a file may hold a chain of thousands).
    fn carrying_problems(&self, file: &str) -> Vec<ContentError> {
        let mut first_index: HashMap<&str, usize> = HashMap::new();
        for (index, entity) in self.entities.iter().enumerate() {
            first_index.entry(entity.id.as_str()).or_insert(index);
        }
        let carrier_of = |index: usize| {
            let carrier = self.entities[index].carried_by.as_deref()?;
            first_index.get(carrier).copied()
        };
        let mut state = vec![Carrying::Unseen; self.entities.len()];
        let mut problems = Vec::new();
        let mut path: Vec<usize> = Vec::new();
        for start in 0..self.entities.len() {
            path.clear();
            let mut at = Some(start);
            // Walk up until a known entity, one on this walk (a circle), or the top.
            let mut above = loop {
                let Some(index) = at else { break Some(0) };
                match state[index] {
                    Carrying::Unseen => {}
                    Carrying::Carriers(carriers) => break Some(carriers + 1),
                    Carrying::NoPlace => break None,
                    Carrying::Walking => {
                        let from = path.iter().position(|&i| i == index).unwrap_or(0);
                        problems.push(self.circle(file, &path[from..]));
                        break None;
                    }
                }
                state[index] = Carrying::Walking;
                path.push(index);
                at = carrier_of(index);
            };
            // Down again, each entity one carrier more than the one carrying it.
            for &index in path.iter().rev() {
                state[index] = match above {
                    Some(carriers) => Carrying::Carriers(carriers),
                    None => Carrying::NoPlace,
                };
                if above == Some(MOST_CARRIERS + 1) {
                    problems.push(self.too_deep(file, index));
                }
                above = above.map(|carriers| carriers + 1);
            }
        }
        // In the order of the entities they are at.
        problems.sort_by_key(|&(index, _)| index);
        problems.into_iter().map(|(_, problem)| problem).collect()
    }

    /// The problem of a circle of carriers (in order, each carried by the next): told
    /// from its first entity.
    fn circle(&self, file: &str, circle: &[usize]) -> (usize, ContentError) {
        let first = (0..circle.len()).min_by_key(|&i| circle[i]).unwrap_or(0);
        let id = |i: usize| {
            self.entities[circle[(first + i) % circle.len()]]
                .id
                .as_str()
        };
        let mut said = format!("`{}` is carried by", id(0));
        for i in 1..circle.len() {
            said.push_str(&format!(" `{}`, who is carried by", id(i)));
        }
        let message = match circle.len() {
            1 => format!(
                "{said} `{}`, so it is in no place: give it a `place` instead",
                id(0)
            ),
            _ => format!(
                "{said} `{}`, so none of them is in any place: give one a `place` instead",
                id(0)
            ),
        };
        let at = circle[first];
        (
            at,
            ContentError::new(file, format!("/entities/{at}/carriedBy"), message),
        )
    }

    /// The problem of the entity at `index`, carried through one carrier more than
    /// [`MOST_CARRIERS`].
    fn too_deep(&self, file: &str, index: usize) -> (usize, ContentError) {
        let entity = &self.entities[index];
        let carrier = entity.carried_by.as_deref().unwrap_or_default();
        let problem = ContentError::new(
            file,
            format!("/entities/{index}/carriedBy"),
            format!(
                "`{}` is carried by `{carrier}` through {} carriers in all, and an entity is found in its place through at most {MOST_CARRIERS}: give one of them a `place`",
                entity.id,
                MOST_CARRIERS + 1
            ),
        );
        (index, problem)
    }
}

/// The most carriers an entity is found in its place through: a mug carried by Marta,
/// who rides a horse, is in the horse's place through two. Deeper is a scene problem
/// ([`SceneDefinition`]'s check), and the world finds no place for it.
pub const MOST_CARRIERS: usize = 8;

/// Where the walk up an entity's carriers got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Carrying {
    Unseen,
    /// On the walk under way.
    Walking,
    /// In a place through this many carriers.
    Carriers(usize),
    /// In a circle of carriers, or carried by one.
    NoPlace,
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
            let ids = || registry.actors().map(|spec| spec.id.as_str());
            problems.push(ContentError::new(
                file,
                format!("/entities/{index}/smartActor"),
                format!(
                    "no loaded actor spec has the key `{key}`{} ({}): fix the key, or list the spec's file in its mod's `content.actors` and fix the errors reported for it",
                    did_you_mean(key, ids()),
                    known_ids(ids(), "no spec is loaded")
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::fixtures::{parsed, pointers};

    const FILE: &str = "scenes/tavern.scene.json";

    fn scene(entities: serde_json::Value) -> SceneDefinition {
        let places = json!([
            { "id": "hall", "name": "the hall", "exits": ["cellar"], "narrative": "tavern:hall" },
            { "id": "cellar", "name": "the cellar", "exits": ["hall"] }
        ]);
        parsed(json!({ "places": places, "entities": entities }), json!({}))
    }

    #[test]
    fn a_valid_scene_has_no_problem() {
        let entities = json!([
            { "id": "marta", "name": "Marta", "place": "hall", "character": true, "smartActor": "tavern:marta" },
            { "id": "you", "name": "you", "place": "hall", "character": true, "player": true },
            { "id": "mug", "name": "mug", "carriedBy": "marta" }
        ]);
        assert_eq!(scene(entities).check(FILE), []);
    }

    #[test]
    fn ids_are_unique_and_exits_and_places_name_places() {
        let mut bad = scene(json!([
            { "id": "mug", "name": "a mug", "place": "hall" },
            { "id": "mug", "name": "mug", "place": "attic" }
        ]));
        bad.places[1].exits.push("mug".to_owned());
        let problems = bad.check(FILE);
        assert_eq!(
            pointers(&problems),
            ["/entities/1/id", "/places/1/exits/1", "/entities/1/place"]
        );
        // An entity whose id is a place's: that one duplicate, and the place is still
        // a place for its exits and what is in it.
        let hall_again = scene(json!([
            { "id": "mug", "name": "a mug", "place": "hall" },
            { "id": "hall", "name": "a hall", "place": "cellar" }
        ]));
        assert_eq!(pointers(&hall_again.check(FILE)), ["/entities/1/id"]);
    }

    #[test]
    fn an_exit_leads_elsewhere_and_once() {
        let mut bad = scene(json!([]));
        bad.places[0].exits = vec!["hall".into(), "cellar".into(), "cellar".into()];
        let problems = bad.check(FILE);
        assert_eq!(
            pointers(&problems),
            ["/places/0/exits/0", "/places/0/exits/2"]
        );
        assert!(
            problems[0].message.contains("itself"),
            "{}",
            problems[0].message
        );
        assert!(
            problems[1].message.contains("twice"),
            "{}",
            problems[1].message
        );
    }

    #[test]
    fn ids_and_names_are_not_blank() {
        let mut bad = scene(json!([{ "id": " ", "name": "", "place": "hall" }]));
        bad.places[1].id = String::new();
        bad.places[0].exits.clear();
        bad.places[1].exits.clear();
        bad.places[1].name = "  ".to_owned();
        let problems = bad.check(FILE);
        assert_eq!(
            pointers(&problems),
            [
                "/places/1/id",
                "/places/1/name",
                "/entities/0/id",
                "/entities/0/name"
            ]
        );
        assert!(problems[1].message.contains("blank"), "{problems:#?}");
    }

    #[test]
    fn a_name_is_one_line() {
        let mut bad = scene(json!([
            { "id": "mug", "name": "a mug\nYou carry: the crown", "place": "hall" }
        ]));
        bad.places[1].name = "the cellar\r\nbelow the inn".to_owned();
        let problems = bad.check(FILE);
        assert_eq!(pointers(&problems), ["/places/1/name", "/entities/0/name"]);
        assert!(
            problems[1].to_string().contains("write it on one line"),
            "{problems:?}"
        );
    }

    #[test]
    fn an_entity_is_in_one_place_or_carried_by_a_character() {
        let problems = scene(json!([
            { "id": "bench", "name": "bench", "place": "hall" },
            { "id": "mug", "name": "mug", "carriedBy": "bench" },
            { "id": "lute", "name": "lute", "place": "hall", "carriedBy": "bench" },
            { "id": "cup", "name": "cup" }
        ]))
        .check(FILE);
        assert_eq!(
            pointers(&problems),
            ["/entities/1/carriedBy", "/entities/2", "/entities/3"]
        );
    }

    #[test]
    fn nobody_carries_itself_even_through_others() {
        let problems = scene(json!([
            { "id": "marta", "name": "Marta", "character": true, "carriedBy": "marta" },
            { "id": "brom", "name": "Brom", "character": true, "carriedBy": "silas" },
            { "id": "silas", "name": "Silas", "character": true, "carriedBy": "brom" },
            { "id": "mug", "name": "mug", "carriedBy": "silas" },
            { "id": "vesk", "name": "Vesk", "character": true, "place": "hall" },
            { "id": "cat", "name": "cat", "character": true, "carriedBy": "vesk" }
        ]))
        .check(FILE);
        assert_eq!(
            pointers(&problems),
            ["/entities/0/carriedBy", "/entities/1/carriedBy"],
            "once for each circle, at its first entity"
        );
        assert!(
            problems[1]
                .message
                .contains("`brom` is carried by `silas`, who is carried by `brom`"),
            "{}",
            problems[1]
        );
    }

    /// A chain of `carriers` characters, each carried by the next and the last in
    /// the hall, and a mug the first carries: the mug is in the hall through them all.
    fn chain(carriers: usize) -> SceneDefinition {
        let mut entities = vec![json!({ "id": "mug", "name": "mug", "carriedBy": "c0" })];
        entities.extend((0..carriers).map(|n| {
            let id = format!("c{n}");
            match n + 1 < carriers {
                true => json!({ "id": id, "name": id, "character": true, "carriedBy": format!("c{}", n + 1) }),
                false => json!({ "id": id, "name": id, "character": true, "place": "hall" }),
            }
        }));
        scene(serde_json::Value::Array(entities))
    }

    #[test]
    fn nothing_is_carried_through_more_than_eight() {
        assert_eq!(
            chain(MOST_CARRIERS).check(FILE),
            [],
            "eight carriers are fine"
        );
        let problems = chain(MOST_CARRIERS + 1).check(FILE);
        assert_eq!(pointers(&problems), ["/entities/0/carriedBy"]);
        assert!(
            problems[0]
                .message
                .contains("`mug` is carried by `c0` through 9 carriers"),
            "{}",
            problems[0]
        );
        // A chain of thousands is told once, where it gets too deep, and checked in
        // one walk up it (each step used to look at every step below it again).
        let long = chain(3_000);
        let problems = long.check(FILE);
        assert_eq!(pointers(&problems), ["/entities/2991/carriedBy"], "c2990");
        // Items hanging from a circle are no circle of their own, however long.
        let mut circled = chain(3_000);
        circled.entities[3_000].place = None;
        circled.entities[3_000].carried_by = Some("c0".to_owned());
        let problems = circled.check(FILE);
        assert_eq!(pointers(&problems), ["/entities/1/carriedBy"]);
        assert!(problems[0].message.contains("none of them is in any place"));
    }

    #[test]
    fn one_player_and_smart_actors_are_characters() {
        let problems = scene(json!([
            { "id": "a", "name": "a", "place": "hall", "player": true },
            { "id": "b", "name": "b", "place": "hall", "character": true, "player": true, "smartActor": "tavern:b" },
            { "id": "c", "name": "c", "place": "hall", "smartActor": "tavern:c" }
        ]))
        .check(FILE);
        assert_eq!(
            pointers(&problems),
            [
                "/entities/0/player",
                "/entities/1/player",
                "/entities/1/player",
                "/entities/2/smartActor"
            ]
        );
        assert!(problems[1].message.contains("not a smart actor"));
        assert!(problems[2].message.contains("one player"));
    }

    #[test]
    fn keys_are_checked_against_the_loaded_content() {
        let scene = scene(json!([
            { "id": "marta", "name": "Marta", "place": "hall", "character": true, "smartActor": "tavern:marta" }
        ]));
        let registry = ContentRegistry::default();
        let actors = scene.check_actor_keys(&registry, FILE);
        assert_eq!(pointers(&actors), ["/entities/0/smartActor"]);
        assert!(actors[0].message.contains("no spec is loaded"));
        let narratives = scene.check_narrative_keys(&registry, FILE);
        assert_eq!(pointers(&narratives), ["/places/0/narrative"]);
    }
}
