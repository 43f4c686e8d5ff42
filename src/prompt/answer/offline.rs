//! Decisions written without a model, for the offline backend: valid answers of the
//! contract, picked by a simple policy.

use std::sync::Arc;

use rand::{Rng, RngExt};
use serde_json::json;

use super::{ABILITY_FIELD, CHOICE_FIELD, LINE_FIELD};
use crate::content::{AbilityInput, InputType};
use crate::llm::OfflineAnswer;
use crate::world::{OfferedAbilities, OfferedAbility, OfferedActions};

/// How the offline backend answers a decision request: one of the offered actions,
/// picked at random, with a stock line fitting the action's mod; now and then the
/// action's command in place of its index; when tasks are offered, one time in three a
/// task; when abilities are offered (in a conversation, by default), one time in two
/// one of them, its required inputs filled within their rules (a candidate, a number
/// in range, one of the choices); a stock reply (a line alone) when nothing is
/// offered, as when the player is talking with the character. Not a language model:
/// every answer it writes is valid, so examples and tests play on with no server.
#[derive(Debug, Clone)]
pub struct OfflineDecision {
    /// The actor's name, for its thought.
    pub actor: Arc<str>,
    /// The actions it was offered.
    pub offered: OfferedActions,
    /// The tasks it was offered, numbered after the actions.
    pub tasks: OfferedActions,
    /// The abilities it may invoke in its answer; none when they are offered as tools,
    /// which only a server calls.
    pub abilities: OfferedAbilities,
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
/// Stock lines for invoking an ability.
const INVOKE_LINES: &[&str] = &["Let me see to that.", "That can be done.", "Right away."];
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
        // Only with abilities or tasks offered is a die cast for them, so an actor
        // offered none answers as it always has.
        let abilities = &self.abilities;
        if !abilities.is_empty() && rng.random_range(0..2) == 0 {
            let ability = &abilities.iter().as_slice()[rng.random_range(..abilities.len())];
            let line = INVOKE_LINES[rng.random_range(0..INVOKE_LINES.len())];
            let thought = format!("{actor} sees to it: {}.", ability.id());
            let inputs = offline_inputs(ability, rng);
            return json!({ ABILITY_FIELD: ability.id(), "inputs": inputs, LINE_FIELD: line, "thought": thought })
                .to_string();
        }
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

/// Values for the required inputs of `ability`, each within its rules: a candidate's
/// name, a number within its range (from 1 when it has none), text within its
/// length, one of its choices.
fn offline_inputs(ability: &OfferedAbility, rng: &mut dyn Rng) -> serde_json::Value {
    let mut inputs = serde_json::Map::new();
    for (input, _) in ability
        .definition
        .all_inputs()
        .filter(|(_, required)| *required)
    {
        let value = match input.kind {
            InputType::Entity => {
                let candidates = ability.candidates(&input.name);
                if candidates.is_empty() {
                    continue;
                }
                json!(candidates[rng.random_range(..candidates.len())].1)
            }
            InputType::Integer => {
                let (least, most) = range(input);
                let least = least.ceil();
                let most = most.floor().max(least);
                json!(rng.random_range(least as i64..=most as i64))
            }
            InputType::Number => {
                let (least, most) = range(input);
                json!(least + (most - least) * rng.random::<f64>())
            }
            InputType::Text => {
                let most = input.max_length.unwrap_or(usize::MAX);
                json!("as you think best".chars().take(most).collect::<String>())
            }
            InputType::Choice => {
                if input.choices.is_empty() {
                    continue;
                }
                json!(input.choices[rng.random_range(..input.choices.len())])
            }
        };
        inputs.insert(input.name.clone(), value);
    }
    serde_json::Value::Object(inputs)
}

/// The range a number input's value is picked from: its own, or from 1 (or its
/// least) to 3 more, within what it allows.
fn range(input: &AbilityInput) -> (f64, f64) {
    let least = (input.min).unwrap_or_else(|| input.max.map_or(1.0, |most| most.min(1.0)));
    let most = input.max.unwrap_or(least + 3.0);
    (least, most.max(least))
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    use super::*;
    use crate::prompt::{Answer, DecisionLimits, parse_decision};
    use crate::world::InputValue;

    /// Offered a room to rent for a guest, some nights, a kind of room, a note and a
    /// price: every answer that invokes it gives each required input within its rules.
    #[test]
    fn an_ability_offered_is_invoked_with_its_inputs_within_their_rules() {
        let definition = serde_json::from_value(json!({
            "id": "tavern:rent_room", "description": "d", "what": "Rents a room.", "when": "Asked.",
            "inputs": {
                "required": [
                    { "name": "guest", "type": "entity", "scope": "characters_here" },
                    { "name": "nights", "type": "integer", "min": 1, "max": 14 },
                    { "name": "room", "type": "choice", "choices": ["attic", "cellar"] },
                    { "name": "note", "type": "text", "maxLength": 5 },
                    { "name": "price", "type": "number", "max": 0.5 }
                ],
                "optional": [{ "name": "meal", "type": "choice", "choices": ["stew"] }]
            }
        }))
        .expect("an ability");
        let guest = bevy::prelude::Entity::from_raw_u32(7).expect("a valid index");
        let abilities: OfferedAbilities = [OfferedAbility {
            definition: Arc::new(definition),
            candidates: vec![("guest".to_owned(), vec![(guest, "Ada (2)".to_owned())])],
        }]
        .into_iter()
        .collect();
        let decision = OfflineDecision {
            actor: "Marta".into(),
            offered: OfferedActions::default(),
            tasks: OfferedActions::default(),
            abilities: abilities.clone(),
        };
        let offer = super::super::Offer {
            choices: super::super::Choices::default(),
            abilities: Some(&abilities),
            as_tools: false,
        };
        let mut invoked = 0;
        for seed in 0..40 {
            let raw = decision.write(&mut ChaCha8Rng::seed_from_u64(seed));
            let parsed = parse_decision(&raw, offer, &DecisionLimits::default())
                .unwrap_or_else(|reason| panic!("{raw} is rejected: {reason}"));
            let Answer::Invoke {
                ability, inputs, ..
            } = parsed.answer
            else {
                continue;
            };
            invoked += 1;
            assert_eq!(ability, "tavern:rent_room");
            let names: Vec<&str> = inputs.iter().map(|(name, _)| name.as_str()).collect();
            assert_eq!(names, ["guest", "nights", "room", "note", "price"], "{raw}");
            assert_eq!(inputs[0].1, InputValue::Entity(guest));
        }
        assert!(
            (10..=30).contains(&invoked),
            "one time in two: {invoked} of 40"
        );
    }

    #[test]
    fn with_nothing_offered_it_replies_with_a_valid_line() {
        let decision = OfflineDecision {
            actor: "Marta".into(),
            offered: OfferedActions::default(),
            tasks: OfferedActions::default(),
            abilities: OfferedAbilities::default(),
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
