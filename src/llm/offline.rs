//! The offline backend: deterministic answers with no network and no model.

use std::collections::HashMap;
use std::sync::Mutex;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde_json::json;

use super::{DeltaSink, LlmBackend, LlmFuture, LlmReply, LlmRequest, RequestIntent};

/// Answers without a model, for examples, tests and games running with no server.
///
/// **This is not a language model.** A decision request gets one of the offered
/// actions, picked at random from a seed and the request's text, with a stock line
/// fitting the action's mod (a stock reply when nothing is offered); a narration request gets the line the offline weaver
/// wrote from the same fragments; a text request gets a fixed sentence. The same seed and the same requests
/// in the same order always give the same answers.
#[derive(Debug, Default)]
pub struct OfflineBackend {
    seed: u64,
    /// How often each prompt was seen, so a repeated prompt gets a fresh answer.
    repeats: Mutex<HashMap<u64, u64>>,
}

/// Stock lines by the offered action's mod.
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
/// Stock replies when nothing is offered: the player is talking with the character.
const REPLIES: &[&str] = &[
    "Is that so?",
    "Ask me again after supper.",
    "I'll think on it.",
    "Hm. Go on.",
    "Can't say I know.",
];

impl OfflineBackend {
    /// An offline backend whose choices follow from this seed.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            repeats: Mutex::default(),
        }
    }

    /// The answer to a request: the same seed and the same sequence of requests
    /// always give the same answers.
    pub fn answer(&self, request: &LlmRequest) -> String {
        let fingerprint = request_fingerprint(request);
        let repeat = match self.repeats.lock() {
            Ok(mut repeats) => {
                let seen = repeats.entry(fingerprint).or_default();
                *seen += 1;
                *seen
            }
            Err(_) => 0,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.seed ^ fingerprint ^ repeat.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        match &request.intent {
            RequestIntent::Decision { actor, offered } => {
                // As `IndexedRandom::choose` picks from a slice.
                let chosen = (!offered.is_empty())
                    .then(|| offered.choice(rng.random_range(..offered.len())))
                    .flatten();
                let Some(choice) = chosen else {
                    // Nothing to do: it is asked for words, as in a conversation.
                    let reply = REPLIES[rng.random_range(0..REPLIES.len())];
                    return json!({ "type": "COLOR", "color": reply, "thought": format!("{actor} answers.") })
                        .to_string();
                };
                let namespace = choice.action_id.split(':').next().unwrap_or_default();
                let lines = LINES
                    .iter()
                    .find(|(mod_id, _)| *mod_id == namespace)
                    .map_or(OTHER_LINES, |(_, lines)| *lines);
                let thought = format!("{actor} decides to {}.", choice.command);
                // Now and then a character acts without a word, naming the command.
                if rng.random_range(0..4) == 0 {
                    return json!({ "type": "UTTERANCE", "utterance": choice.command, "thought": thought })
                        .to_string();
                }
                let line = lines[rng.random_range(0..lines.len())];
                json!({ "type": "ACTION", "action": choice.index, "speech": line, "thought": thought })
                    .to_string()
            }
            RequestIntent::Narration { offline } => offline.clone(),
            _ => "Nothing stirs.".to_owned(),
        }
    }
}

impl LlmBackend for OfflineBackend {
    fn describe(&self) -> String {
        format!("offline (seed {}, not a language model)", self.seed)
    }

    fn complete(&self, request: &LlmRequest, deltas: DeltaSink) -> LlmFuture {
        let text = self.answer(request);
        if request.stream {
            deltas.send(&text);
        }
        Box::pin(async move { Ok(LlmReply::text(text)) })
    }
}

/// A stable 64-bit FNV-1a hash of the request's messages.
fn request_fingerprint(request: &LlmRequest) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for message in request.messages.iter() {
        for byte in message
            .role
            .bytes()
            .chain([0])
            .chain(message.content.bytes())
            .chain([0])
        {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}
