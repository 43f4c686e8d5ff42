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
    /// How the character talks: "brisk, warm, calls everyone 'love'".
    #[serde(default)]
    pub voice: Option<String>,
    /// A few words for who the character is: "shrewd", "motherly".
    #[serde(default)]
    pub traits: Vec<String>,
    /// What the character never does, whatever happens.
    #[serde(default)]
    pub taboos: Vec<String>,
    /// Where the character comes from: a static block for tone and motivation.
    #[serde(default)]
    pub backstory: Option<String>,
    /// What the character always remembers: pinned into its memory when it first
    /// appears, and recalled in every prompt while in scope.
    #[serde(default)]
    pub memory_seeds: Vec<MemorySeed>,
    /// What the character may do and how often it thinks.
    #[serde(default)]
    pub policy: ActorPolicy,
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
    /// Turns to sit out after each decision; 0 thinks every turn.
    #[serde(default)]
    pub cooldown_turns: u32,
    /// Canonical verbs it may use (actions name theirs in `verb`); empty for any.
    #[serde(default)]
    pub allowed_verbs: Vec<String>,
    /// The longest line it may say, in characters; the game's limit when absent.
    #[serde(default)]
    pub max_utterance_length: Option<usize>,
}

fn all_actions() -> Vec<String> {
    vec!["*".to_owned()]
}

impl Default for ActorPolicy {
    fn default() -> Self {
        Self {
            allowed_actions: all_actions(),
            cooldown_turns: 0,
            allowed_verbs: Vec::new(),
            max_utterance_length: None,
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
    fn memory_seeds_need_their_own_ids_and_some_text() {
        let problems = parse_content::<ActorSpec>(
            br#"{"id": "tavern:marta", "name": "Marta", "role": "innkeeper",
                 "memorySeeds": [{"id": "key", "text": "The key is mine."},
                                 {"id": "key", "text": " "}]}"#,
            "mods/tavern/actors/marta.actor.json",
        )
        .expect_err("a duplicate seed id and an empty seed are refused");
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(pointers, ["/memorySeeds/1/id", "/memorySeeds/1/text"]);
    }
}
