//! Prompt templates: the fixed text of a smart actor's decision prompt, as content.

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

/// The fixed text of a decision prompt (`mods/<mod>/prompts/<name>.prompt.json`), named
/// by an actor spec's `promptId`. Everything else in the prompt — the character, its
/// perception, memories and actions — is filled in around it.
///
/// Its [`Default`] is the built-in template a spec without `promptId` thinks with:
/// [`DECISION_RULES`](crate::prompt::DECISION_RULES),
/// [`DECISION_QUESTION`](crate::prompt::DECISION_QUESTION) and
/// [`DECISION_REPLY`](crate::prompt::DECISION_REPLY), with an empty id no spec can name
/// (and no `reply_in_combat`, so the built-in one).
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptTemplate {
    /// `mod:name`; the namespace is the id of the mod that owns the file.
    pub id: String,
    /// The rules the system message starts with: what the model plays and the answer's form.
    pub rules: String,
    /// The last line of the user message, asking for the decision.
    pub question: String,
    /// The instruction after what the player said, in a conversation.
    pub reply: String,
    /// The instruction after what the player said to an actor in a fight, which is
    /// offered its combat actions with its reply; without it, the built-in
    /// [`DECISION_REPLY_IN_COMBAT`](crate::prompt::DECISION_REPLY_IN_COMBAT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_in_combat: Option<String>,
}
