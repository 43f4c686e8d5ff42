//! The decision prompt: stable rules and persona first, then what the actor perceives,
//! then the available actions; and the JSON schema its answer must follow.

use serde_json::{Value, json};

use crate::content::ActorSpec;

/// Size limits on a decision answer, enforced when it is validated and announced in its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionLimits {
    /// The longest `speech`, in characters.
    pub max_speech_chars: usize,
    /// The longest `thought`, in characters.
    pub max_thought_chars: usize,
    /// The longest whole answer, in bytes.
    pub max_answer_bytes: usize,
}

impl Default for DecisionLimits {
    fn default() -> Self {
        Self {
            max_speech_chars: 300,
            max_thought_chars: 500,
            max_answer_bytes: 4096,
        }
    }
}

/// A chat message, as every chat-completion API takes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: "system".to_owned(),
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: "user".to_owned(),
            content: content.into(),
        }
    }
}

/// The rules every decision prompt starts with; they never change, so servers can cache them.
pub const DECISION_RULES: &str = "You play one character in a game. Each turn you choose one of the actions offered to you, or none.
Stay in character. You cannot change the world directly: the game carries out the action you choose, if it can.
Answer with exactly one JSON object and nothing else:
{\"action\": <the Index number of one offered action, or null to do nothing>, \"speech\": \"<what you say aloud, or an empty string>\", \"thought\": \"<a short private thought>\"}";

/// The messages of a decision prompt for one actor.
///
/// The system message holds what stays the same turn after turn (the rules and the
/// persona); the user message holds what changes (perception and actions), last.
pub fn decision_messages(
    spec: &ActorSpec,
    perception: &str,
    actions_block: &str,
    limits: &DecisionLimits,
) -> Vec<ChatMessage> {
    let mut system = String::with_capacity(1024);
    system.push_str(DECISION_RULES);
    system.push_str(&format!(
        "\nKeep speech under {} characters and thought under {} characters.\n\n<character>\nYou are {}, {}.\n",
        limits.max_speech_chars, limits.max_thought_chars, spec.name, spec.role
    ));
    for line in &spec.persona {
        system.push_str("- ");
        system.push_str(line);
        system.push('\n');
    }
    system.push_str("</character>\n");
    if !spec.goals.is_empty() {
        system.push_str("\n<goals>\n");
        for goal in &spec.goals {
            system.push_str("- ");
            system.push_str(goal);
            system.push('\n');
        }
        system.push_str("</goals>\n");
    }
    let user = format!(
        "<perception>\n{perception}\n</perception>\n\n{actions_block}\n\nWhat do you do? Answer with the JSON object only."
    );
    vec![
        ChatMessage::system(system.trim_end()),
        ChatMessage::user(user),
    ]
}

/// The JSON schema of a decision answer: `action` is one of the offered indices or
/// null, and the strings carry their size limits.
pub fn decision_schema(offered: impl IntoIterator<Item = usize>, limits: &DecisionLimits) -> Value {
    let mut choices: Vec<Value> = offered.into_iter().map(Value::from).collect();
    choices.push(Value::Null);
    json!({
        "type": "object",
        "properties": {
            "action": { "enum": choices },
            "speech": { "type": "string", "maxLength": limits.max_speech_chars },
            "thought": { "type": "string", "maxLength": limits.max_thought_chars }
        },
        "required": ["action", "speech", "thought"],
        "additionalProperties": false
    })
}
