//! Smart-actor specs: who a model-driven character is and what it may do.

use std::collections::BTreeMap;

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::de::{MapAccess, Visitor, value::MapAccessDeserializer};
use serde::{Deserialize, Deserializer, Serialize};

/// A smart actor's spec (`mods/<mod>/actors/<name>.actor.json`).
///
/// ```json
/// {
///   "id": "tavern:brom",
///   "promptId": "core:smart_actor",
///   "persona": {
///     "name": "Brom",
///     "role": "the town guard, off duty",
///     "voice": "gruff, a word where others use a sentence",
///     "traits": ["suspicious", "tired"],
///     "goals": ["Enjoy a quiet drink after a long watch."],
///     "taboos": ["Draw steel on an unarmed man."],
///     "lines": ["Slow to anger and slower to forgive."]
///   },
///   "properties": { "temperament": "watchful", "patience": "low" },
///   "backstory": "Twenty years on the night watch.",
///   "memorySeeds": [{ "id": "oath", "text": "I swore to keep the peace.", "tags": ["tavern:brom"] }],
///   "history": { "storeKey": "tavern:brom", "seeds": [{ "id": "brawl", "text": "Last winter's brawl.", "tags": ["brawl"] }] },
///   "policy": { "allowedVerbs": ["wait", "attack"], "maxUtteranceLength": 80, "cooldownTurns": 1, "maxColorLines": 1 }
/// }
/// ```
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActorSpec {
    /// `mod:name`; the namespace is the id of the mod that owns the file. Scenes bind
    /// an entity to the spec by this id (its actor key).
    pub id: String,
    /// The prompt template the actor thinks with (`core:smart_actor`), loaded from a
    /// mod's `content.prompts`; the built-in one when absent.
    #[serde(default)]
    pub prompt_id: Option<String>,
    /// Who the character is: name, role, voice, traits, goals, taboos and free lines.
    #[serde(deserialize_with = "persona_object")]
    pub persona: Persona,
    /// Narrative attributes (`temperament: skittish`), shown to the model in one line,
    /// sorted by name. They never change game state.
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
    /// Where the character comes from: a static block for tone and motivation.
    #[serde(default)]
    pub backstory: Option<String>,
    /// What the character always remembers: pinned into its memory when it first
    /// appears, and recalled in every prompt while in scope.
    #[serde(default)]
    pub memory_seeds: Vec<MemorySeed>,
    /// Where the character's memories are kept, and more pinned seeds.
    #[serde(default)]
    pub history: Option<ActorHistory>,
    /// What the character may do and how often it thinks.
    #[serde(default)]
    pub policy: ActorPolicy,
}

/// Who a smart actor is, as its prompt describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Persona {
    /// The character's name as others see it.
    pub name: String,
    /// A few words: "innkeeper of the Gilded Tankard".
    pub role: String,
    /// How the character talks: "brisk, warm, calls everyone 'love'".
    #[serde(default)]
    pub voice: Option<String>,
    /// A few words for who the character is: "shrewd", "motherly".
    #[serde(default)]
    pub traits: Vec<String>,
    /// What the character wants.
    #[serde(default)]
    pub goals: Vec<String>,
    /// What the character never does, whatever happens.
    #[serde(default)]
    pub taboos: Vec<String>,
    /// Free lines of personality and manner.
    #[serde(default)]
    pub lines: Vec<String>,
}

/// Reads `persona` from an object only. Serde reads a struct from a list too, field by
/// field, so the old form `"persona": ["line", "line"]` would pass for a name and a role.
fn persona_object<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Persona, D::Error> {
    struct PersonaObject;
    impl<'de> Visitor<'de> for PersonaObject {
        type Value = Persona;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a persona object")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Persona, A::Error> {
            Persona::deserialize(MapAccessDeserializer::new(map))
        }
    }
    const FIELDS: &[&str] = &[
        "name", "role", "voice", "traits", "goals", "taboos", "lines",
    ];
    deserializer.deserialize_struct("Persona", FIELDS, PersonaObject)
}

/// Where a smart actor's memories are stored, and seeds to start them with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActorHistory {
    /// The key the actor's memories are stored under in the
    /// [`HistoryStore`](crate::actors::HistoryStore); the spec's id when absent.
    /// Specs that share a key share their memories.
    #[serde(default)]
    pub store_key: Option<String>,
    /// Memories pinned like `memorySeeds`; ids are unique across both lists.
    #[serde(default)]
    pub seeds: Vec<MemorySeed>,
}

impl ActorSpec {
    /// The key the actor's memories are stored and recalled under: `history.storeKey`,
    /// or the spec's id.
    pub fn store_key(&self) -> &str {
        self.history
            .as_ref()
            .and_then(|history| history.store_key.as_deref())
            .unwrap_or(&self.id)
    }

    /// Every seed the actor starts with: `memorySeeds`, then `history.seeds`.
    pub fn seeds(&self) -> impl Iterator<Item = &MemorySeed> {
        self.memory_seeds
            .iter()
            .chain(self.history.iter().flat_map(|history| &history.seeds))
    }
}

/// A memory a character starts with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemorySeed {
    /// A name for the seed, unique within the spec.
    pub id: String,
    /// What is remembered.
    pub text: String,
    /// What it is about: keys of places, items and actors.
    #[serde(default)]
    pub tags: Vec<String>,
    /// A plot id to make it everyone's memory while that plot is current; the
    /// character's own when absent.
    #[serde(default)]
    pub plot: Option<String>,
}

/// What a smart actor may do and how often it thinks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActorPolicy {
    /// Action ids it may be offered: exact ids (`items:give`), whole mods (`items:*`) or `*` for all.
    #[serde(default = "all_actions")]
    pub allowed_actions: Vec<String>,
    /// Planning task ids it may be offered, in the same forms: `tavern:serve_drink`,
    /// `tavern:*` or `*`; none when absent.
    #[serde(default)]
    pub allowed_tasks: Vec<String>,
    /// Ability ids it may invoke, in the same forms: `tavern:rent_room`, `tavern:*` or
    /// `*`; none when absent.
    #[serde(default)]
    pub allowed_abilities: Vec<String>,
    /// Turns to sit out after each decision; 0 thinks every turn.
    #[serde(default)]
    pub cooldown_turns: u32,
    /// Canonical verbs it may use (actions name theirs in `verb`); empty for any.
    #[serde(default)]
    pub allowed_verbs: Vec<String>,
    /// The longest line it may say, in characters; the game's limit when absent.
    #[serde(default)]
    pub max_utterance_length: Option<usize>,
    /// The most lines a spoken COLOR reply may have; the game's limit when absent,
    /// and 0 allows none.
    #[serde(default)]
    pub max_color_lines: Option<u32>,
}

fn all_actions() -> Vec<String> {
    vec!["*".to_owned()]
}

impl Default for ActorPolicy {
    fn default() -> Self {
        Self {
            allowed_actions: all_actions(),
            allowed_tasks: Vec::new(),
            allowed_abilities: Vec::new(),
            cooldown_turns: 0,
            allowed_verbs: Vec::new(),
            max_utterance_length: None,
            max_color_lines: None,
        }
    }
}

impl ActorPolicy {
    /// Whether the policy lets the actor use an action with this verb: any verb when
    /// `allowedVerbs` is empty, else only those listed (and no action without a verb).
    pub fn allows_verb(&self, verb: Option<&str>) -> bool {
        self.allowed_verbs.is_empty()
            || verb.is_some_and(|verb| self.allowed_verbs.iter().any(|v| v == verb))
    }

    /// The longest line the actor may say: its own limit, within the game's.
    pub fn speech_limit(&self, game_limit: usize) -> usize {
        self.max_utterance_length
            .map_or(game_limit, |own| own.min(game_limit))
    }

    /// The most lines a line the actor says may have: its own limit, within the
    /// game's; `None` when neither sets one.
    pub fn color_line_limit(&self, game_limit: Option<u32>) -> Option<u32> {
        match (self.max_color_lines, game_limit) {
            (Some(own), Some(game)) => Some(own.min(game)),
            (own, game) => own.or(game),
        }
    }

    /// Whether the policy lets the actor use the action with this id.
    pub fn allows(&self, action_id: &str) -> bool {
        self.allowed_actions
            .iter()
            .any(|p| id_matches(p, action_id))
    }

    /// Whether the policy lets the actor be offered the task with this id.
    pub fn allows_task(&self, task_id: &str) -> bool {
        self.allowed_tasks.iter().any(|p| id_matches(p, task_id))
    }

    /// Whether the policy lets the actor invoke the ability with this id.
    pub fn allows_ability(&self, ability_id: &str) -> bool {
        (self.allowed_abilities.iter()).any(|p| id_matches(p, ability_id))
    }
}

/// Whether `id` (`mod:name`) matches `pattern`: the same id, `mod:*` or `*`.
fn id_matches(pattern: &str, id: &str) -> bool {
    pattern == "*"
        || pattern == id
        || pattern
            .strip_suffix(":*")
            .is_some_and(|namespace| id.split_once(':').is_some_and(|(own, _)| own == namespace))
}

#[cfg(test)]
mod tests {
    use crate::content::{ActorPolicy, ActorSpec, parse_content};

    #[test]
    fn allowed_verbs_and_the_utterance_limit_narrow_the_policy() {
        let open = ActorPolicy::default();
        assert!(open.allows_verb(Some("attack")) && open.allows_verb(None));
        assert_eq!(open.speech_limit(300), 300);
        let guard = ActorPolicy {
            allowed_verbs: vec!["attack".into(), "wait".into()],
            max_utterance_length: Some(40),
            ..ActorPolicy::default()
        };
        assert!(guard.allows_verb(Some("wait")));
        assert!(!guard.allows_verb(Some("give")));
        assert!(
            !guard.allows_verb(None),
            "an action without a verb is not allowed"
        );
        assert_eq!((guard.speech_limit(300), guard.speech_limit(20)), (40, 20));
    }

    #[test]
    fn the_color_line_limit_is_the_smaller_of_the_actor_s_and_the_game_s() {
        let terse = ActorPolicy {
            max_color_lines: Some(1),
            ..ActorPolicy::default()
        };
        assert_eq!(
            (
                terse.color_line_limit(Some(3)),
                terse.color_line_limit(Some(0)),
                terse.color_line_limit(None)
            ),
            (Some(1), Some(0), Some(1))
        );
        assert_eq!(ActorPolicy::default().color_line_limit(Some(3)), Some(3));
        assert_eq!(ActorPolicy::default().color_line_limit(None), None);
    }

    const FILE: &str = "mods/island/actors/troop.actor.json";

    #[test]
    fn a_spec_groups_its_persona_and_names_its_store_key_prompt_and_properties() {
        let spec = parse_content::<ActorSpec>(
            br#"{
                "id": "island:troop",
                "promptId": "core:smart_actor",
                "persona": {
                    "name": "the monkey troop", "role": "observer",
                    "voice": "chattering, curious, fast",
                    "traits": ["mischievous", "territorial"],
                    "goals": ["protect the grove"], "taboos": ["leave the grove at night"],
                    "lines": ["Treats outsiders as noisy weather."]
                },
                "properties": { "temperament": "skittish", "patience": "low" },
                "memorySeeds": [{ "id": "grove-oath", "text": "The grove is sacred.", "tags": ["grove"] }],
                "history": {
                    "storeKey": "island:monkey-troop",
                    "seeds": [{ "id": "canopy-raid", "text": "A lantern was stolen.", "tags": ["beach"] }]
                },
                "policy": { "allowedVerbs": ["wait"], "maxUtteranceLength": 80, "cooldownTurns": 1, "maxColorLines": 1 }
            }"#,
            FILE,
        )
        .expect("a valid spec");
        assert_eq!(spec.persona.name, "the monkey troop");
        assert_eq!(spec.persona.lines, ["Treats outsiders as noisy weather."]);
        assert_eq!(spec.prompt_id.as_deref(), Some("core:smart_actor"));
        assert_eq!(spec.store_key(), "island:monkey-troop");
        assert_eq!(
            spec.properties.keys().collect::<Vec<_>>(),
            ["patience", "temperament"]
        );
        let seeds: Vec<&str> = spec.seeds().map(|seed| seed.id.as_str()).collect();
        assert_eq!(seeds, ["grove-oath", "canopy-raid"]);
        assert_eq!(spec.policy.max_color_lines, Some(1));

        let plain = parse_content::<ActorSpec>(
            br#"{"id": "island:parrot", "persona": {"name": "Polly", "role": "a parrot"}}"#,
            "mods/island/actors/parrot.actor.json",
        )
        .expect("only the id, name and role are required");
        assert_eq!(plain.store_key(), "island:parrot", "the id by default");
        assert!(plain.prompt_id.is_none() && plain.properties.is_empty());
    }

    #[test]
    fn the_spec_the_readme_shows_is_valid() {
        let readme = include_str!("../../README.md");
        let (_, rest) = readme
            .split_once("A smart-actor spec says")
            .expect("the README shows a spec");
        let (_, rest) = rest.split_once("```json\n").expect("in a JSON block");
        let (json, _) = rest.split_once("```").expect("a closed block");
        let spec =
            parse_content::<ActorSpec>(json.as_bytes(), "mods/tavern/actors/brom.actor.json")
                .unwrap_or_else(|problems| panic!("{problems:#?}"));
        assert_eq!(spec.store_key(), "tavern:brom");
    }

    #[test]
    fn the_old_flat_spec_is_refused_with_where_its_fields_went() {
        let flat = parse_content::<ActorSpec>(
            br#"{"id": "island:troop", "name": "the troop", "role": "observer",
                 "persona": ["Chatters."]}"#,
            FILE,
        )
        .expect_err("`name` is no longer a top-level field");
        assert_eq!(flat.len(), 1);
        assert!(
            flat[0].message.contains("unknown field `name`"),
            "{}",
            flat[0].message
        );
        assert!(
            flat[0].message.contains("`persona.lines`"),
            "{}",
            flat[0].message
        );

        let list = parse_content::<ActorSpec>(
            br#"{"id": "island:troop", "persona": ["Chatters."]}"#,
            FILE,
        )
        .expect_err("`persona` is an object now");
        assert_eq!(list[0].pointer, "/persona");
        assert!(
            list[0].message.contains("invalid type: sequence"),
            "{}",
            list[0].message
        );
        assert!(
            list[0].message.contains("`persona.lines`"),
            "{}",
            list[0].message
        );
    }

    #[test]
    fn the_persona_reads_from_ron_and_reports_its_own_fields() {
        let spec = parse_content::<ActorSpec>(
            br#"(id: "island:troop", persona: (name: "the troop", role: "observer", lines: ["Chatters."]),
                 properties: {"temperament": "skittish"}, history: (storeKey: "island:monkeys"))"#,
            "mods/island/actors/troop.actor.ron",
        )
        .expect("a RON spec");
        assert_eq!(
            (spec.persona.lines.len(), spec.store_key()),
            (1, "island:monkeys")
        );
        let typo = parse_content::<ActorSpec>(
            br#"{"id": "island:troop", "persona": {"name": "the troop", "role": "observer", "trait": []}}"#,
            FILE,
        )
        .expect_err("an unknown persona field");
        assert_eq!(typo[0].pointer, "/persona/trait");
    }

    #[test]
    fn seed_ids_are_unique_across_memory_seeds_and_history_seeds() {
        let problems = parse_content::<ActorSpec>(
            br#"{"id": "island:troop", "persona": {"name": "the troop", "role": "observer"},
                 "memorySeeds": [{"id": "raid", "text": "A raid."}],
                 "history": {"storeKey": " ", "seeds": [{"id": "oath", "text": "An oath."},
                                                        {"id": "raid", "text": "Another raid."}]},
                 "properties": {"mood": ""}}"#,
            FILE,
        )
        .expect_err("a seed id used twice, an empty store key and property are refused");
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/properties/mood",
                "/history/storeKey",
                "/history/seeds/1/id"
            ]
        );
        assert!(
            problems[2].message.contains("`history.seeds`"),
            "{}",
            problems[2].message
        );
    }

    #[test]
    fn memory_seeds_need_their_own_ids_and_some_text() {
        let problems = parse_content::<ActorSpec>(
            br#"{"id": "tavern:marta", "persona": {"name": "Marta", "role": "innkeeper"},
                 "memorySeeds": [{"id": "key", "text": "The key is mine."},
                                 {"id": "key", "text": " "}]}"#,
            "mods/tavern/actors/marta.actor.json",
        )
        .expect_err("a duplicate seed id and an empty seed are refused");
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(pointers, ["/memorySeeds/1/id", "/memorySeeds/1/text"]);
    }
}
