//! The messages smart actors read and write: turns, the player's words, requests for
//! the game, what actors said, and decisions asked for, rejected or passed.

use std::sync::Arc;

use bevy::prelude::*;

use super::RejectionReason;
use crate::llm::{ChatMessage, RequestId};
use crate::prompt::PromptSection;
use crate::world::{OfferedAbilities, OfferedActions};

/// A line the player's character says, written by the game. `@Name` or `talk to Name`
/// starts a conversation with a smart actor in the player's place, "okay, bye" ends it,
/// and while it is open every line goes to that actor, who replies instead of acting.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct PlayerSaid {
    /// The line as typed.
    pub text: String,
}

/// What happened to the player's conversation.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub enum ConversationUpdate {
    /// The player started talking with this actor.
    Started(Entity),
    /// The player said goodbye to this actor, or it left.
    Ended(Entity),
    /// A line addressed nobody the player can see, or more than one: what to tell the player.
    Notice(String),
}

/// A smart actor in combat passed its turn: its answer chose no combat action.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct ActorHesitated {
    /// Who hesitated.
    pub actor: Entity,
    /// A line for the transcript: "Brom hesitates."
    pub line: String,
    /// Why, when the answer was rejected; `None` when it chose to do nothing.
    pub reason: Option<RejectionReason>,
}

/// Trimming left out more than half of a smart actor's offer to fit its prompt budget
/// ([`PromptBudgets::total`](super::PromptBudgets::total)): it chooses from fewer actions than the world gives it.
/// Written once per actor, the first time, with a warning in the log; a larger budget,
/// or a shorter persona and action descriptions, leaves it more.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct OfferTrimmed {
    /// Whose offer.
    pub actor: Entity,
    /// How many actions it was offered.
    pub offered: usize,
    /// How many of them were left out.
    pub left_out: usize,
    /// The estimated tokens its offer had.
    pub budget: usize,
}

/// A smart actor's valid answer chose to do nothing and say nothing (`NONE`): it lets
/// the moment pass. Written so that every decision shows somewhere, a pass included.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct ActorPassed {
    /// Who passed.
    pub actor: Entity,
    /// Its private thought, when it gave one; may be empty.
    pub thought: String,
}

/// What a smart actor said aloud along with its decision.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct ActorSpoke {
    /// Who spoke.
    pub actor: Entity,
    /// The words.
    pub text: String,
}

/// A decision that could not be used: the actor passes its turn, or takes the
/// [`DecisionFallback`] action when one is configured and was offered.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct DecisionRejected {
    /// Whose decision.
    pub actor: Entity,
    /// Why it was rejected.
    pub reason: RejectionReason,
    /// The model's raw answer, empty when there was none.
    pub raw: String,
    /// The command requested instead ([`DecisionFallback::Action`]), if any.
    pub fallback: Option<String>,
}

impl DecisionRejected {
    /// A rejection with no answer to show and no fallback taken.
    pub fn without_answer(actor: Entity, reason: RejectionReason) -> Self {
        Self {
            actor,
            reason,
            raw: String::new(),
            fallback: None,
        }
    }
}

/// What a smart actor does when its decision is rejected (outside combat, where it
/// always hesitates).
#[derive(Debug, Clone, Default, PartialEq, Eq, Reflect)]
pub enum DecisionFallback {
    /// Nothing: it passes its turn.
    #[default]
    Pass,
    /// The first offered action with this id (`core:look_around`), as if it had chosen
    /// it; a pass when that action was not offered.
    Action(String),
}

/// A decision prompt that was sent: what the actor was asked, for transcripts and debugging.
#[derive(Message, Debug, Clone, PartialEq)]
pub struct DecisionRequested {
    /// Who is thinking.
    pub actor: Entity,
    /// The request's id; its [`LlmResponse`](crate::llm::LlmResponse) carries the same.
    pub request: RequestId,
    /// The prompt, shared with the request.
    pub messages: Arc<Vec<ChatMessage>>,
    /// What was offered, by index.
    pub offered: OfferedActions,
    /// The tasks offered, numbered after the actions.
    pub tasks: OfferedActions,
    /// The abilities offered.
    pub abilities: OfferedAbilities,
    /// Each part of the prompt and its estimated tokens, in order.
    pub sections: Vec<PromptSection>,
    /// The share of this prompt (in characters) that is an unchanged prefix of the
    /// actor's previous prompt: what a server with prompt caching need not read again.
    /// 0 for an actor's first prompt. Each actor's prompts are one append-only
    /// conversation ([`Transcript`](crate::prompt::Transcript)), so a warm turn reuses all of the last one.
    pub reused_prefix: f32,
    /// The ids of the memories it recalled, most relevant first
    /// ([`HistoryStore::get`](crate::actors::HistoryStore::get) has each).
    pub memories: smallvec::SmallVec<[u64; 8]>,
}
