//! Decisions written without a model, for the offline backend: valid answers of the
//! contract, picked by a simple policy.

use std::sync::Arc;

use rand::{Rng, RngExt};
use serde_json::json;

use super::{CHOICE_FIELD, LINE_FIELD};
use crate::llm::OfflineAnswer;
use crate::world::OfferedActions;

/// How the offline backend answers a decision request: one of the offered actions,
/// picked at random, with a stock line fitting the action's mod; now and then the
/// action's command in place of its index; when tasks are offered, one time in three a
/// task; a stock reply (a line alone) when nothing is offered, as when the player is
/// talking with the character. Not a language model:
/// every answer it writes is valid, so examples and tests play on with no server.
#[derive(Debug, Clone)]
pub struct OfflineDecision {
    /// The actor's name, for its thought.
    pub actor: Arc<str>,
    /// The actions it was offered.
    pub offered: OfferedActions,
    /// The tasks it was offered, numbered after the actions.
    pub tasks: OfferedActions,
}

/// Stock lines by the offered action's mod (the shipped mods'), and for any other.
const LINES: &[(&str, &[&str])] = &[
    (
        "conversation",
        &[
            "Well met.",
            "Have you heard the news?",
            "Pull up a chair and listen.",
        ],
    ),
    (
        "items",
        &[
            "This might come in handy.",
            "Careful with that.",
            "Here, take a look.",
        ],
    ),
    (
        "positioning",
        &[
            "Mind if I join you?",
            "Give me some room.",
            "My feet are killing me.",
        ],
    ),
    (
        "combat",
        &["You asked for this!", "Stand back!", "Not another step."],
    ),
    ("core", &["Hm.", "Quiet night.", "Let's see what happens."]),
];
const OTHER_LINES: &[&str] = &["Hm.", "Right, then.", "Let's see."];
/// Stock lines for setting about a task.
const TASK_LINES: &[&str] = &["Leave it to me.", "Coming right up.", "I'll see to it."];
/// Stock replies when nothing is offered: the player is talking with the character.
const REPLIES: &[&str] = &[
    "Is that so?",
    "Ask me again after supper.",
    "I'll think on it.",
    "Hm. Go on.",
    "Can't say I know.",
];

impl OfflineAnswer for OfflineDecision {
    fn write(&self, rng: &mut dyn Rng) -> String {
        let actor = &self.actor;
        let offered = &self.offered;
        let tasks = &self.tasks;
        // Only with tasks offered is a die cast for them, so an actor offered none
        // answers as it always has.
        if !tasks.is_empty() && rng.random_range(0..3) == 0 {
            let position = rng.random_range(..tasks.len()) + 1;
            if let Some(task) = tasks.get(position) {
                let line = TASK_LINES[rng.random_range(0..TASK_LINES.len())];
                let thought = format!("{actor} sets about it: {}.", task.command);
                let index = offered.len() + position;
                return json!({ CHOICE_FIELD: index, LINE_FIELD: line, "thought": thought })
                    .to_string();
            }
        }
        // As `IndexedRandom::choose` picks from a slice.
        let chosen = (!offered.is_empty())
            .then(|| offered.get(rng.random_range(..offered.len()) + 1))
            .flatten();
        let Some(choice) = chosen else {
            // Nothing to do: it is asked for words, as in a conversation.
            let reply = REPLIES[rng.random_range(0..REPLIES.len())];
            let thought = format!("{actor} answers.");
            return json!({ CHOICE_FIELD: 0, LINE_FIELD: reply, "thought": thought }).to_string();
        };
        let namespace = choice.action_id.split(':').next().unwrap_or_default();
        let lines = LINES
            .iter()
            .find(|(mod_id, _)| *mod_id == namespace)
            .map_or(OTHER_LINES, |(_, lines)| *lines);
        let thought = format!("{actor} decides to {}.", choice.command);
        // Now and then a character acts without a word, naming the command.
        if rng.random_range(0..4) == 0 {
            return json!({ CHOICE_FIELD: choice.command, "thought": thought }).to_string();
        }
        let line = lines[rng.random_range(0..lines.len())];
        json!({ CHOICE_FIELD: choice.index, LINE_FIELD: line, "thought": thought }).to_string()
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    use super::*;
    use crate::prompt::{Answer, DecisionLimits, parse_decision};

    #[test]
    fn with_nothing_offered_it_replies_with_a_valid_line() {
        let decision = OfflineDecision {
            actor: "Marta".into(),
            offered: OfferedActions::default(),
            tasks: OfferedActions::default(),
        };
        for seed in 0..20 {
            let raw = decision.write(&mut ChaCha8Rng::seed_from_u64(seed));
            let parsed = parse_decision(&raw, 0, &DecisionLimits::default())
                .unwrap_or_else(|reason| panic!("{raw} is rejected: {reason}"));
            assert!(
                matches!(&parsed.answer, Answer::Color(line) if REPLIES.contains(&line.as_str())),
                "{raw}"
            );
            assert_eq!(parsed.thought, "Marta answers.");
        }
    }
}
