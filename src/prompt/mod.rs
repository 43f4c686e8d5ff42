//! Prompt assembly as pure functions of plain data; nothing here touches the ECS.
//!
//! The prompt layer sits above content, the LLM transport and the world view, and
//! below the features. It owns:
//! - the available-actions block, written from the world's offer
//!   ([`AvailableAction`](crate::world::AvailableAction)) as it is;
//! - the abilities block ([`write_abilities_block`]) and its rule ([`INVOKE_OR_ASK`]);
//! - the decision prompt ([`decision_prompt`]) and the narrator prompt;
//! - the [`answer`] contract: the kinds of answer, their JSON Schema, the parser and
//!   the offline writer;
//! - token budgets ([`PromptBudgets`], [`trim_mask`]) and each actor's append-only
//!   conversation with the model ([`Transcript`]).

pub mod answer;

mod abilities_block;
mod actions_block;
mod budget;
mod decision;
mod narration;
mod tokens;
mod transcript;

pub use abilities_block::{
    INVOKE_OR_ASK, render_abilities_block, write_abilities_block, write_abilities_block_within,
};
pub use actions_block::{
    BlockOptions, render_available_actions, render_available_tasks, write_available_actions,
    write_available_tasks,
};
pub use answer::{
    ABILITY_ANSWERS, ABILITY_TOOL_ANSWERS, ANSWER_FIELD, ANSWER_TYPES, Answer, Choices,
    DECISION_REPLY, DECISION_REPLY_IN_COMBAT, DECISION_RULES, Decision, DecisionLimits,
    NOTHING_OFFERED, Offer, OfflineDecision, RejectionReason, TASK_ANSWER, ability_tools,
    decision_schema, match_utterance, parse_decision, read_decision,
};
pub(crate) use answer::{StreamedAnswer, answer_body};
pub use budget::{PromptBudgets, fit_lines, fit_said, fit_words, task_trim_mask, trim_mask};
pub(crate) use budget::{TrimScratch, trim_mask_with};
pub use decision::{
    DECISION_QUESTION, DecisionContext, DecisionPrompt, PromptPart, PromptSection, decision_prompt,
    decision_system_prompt, decision_user_prompt, write_decision_user_prompt,
};
pub use narration::{NARRATOR_RULES, narration_user_message};
pub use tokens::{TokenScale, estimate_tokens};
pub use transcript::{Shown, Transcript, TurnPlan, TurnPrompt, text_fingerprint};
