//! Prompts as pure functions of plain data: the available-actions block, the
//! decision prompt and the schema of its answer, the narrator prompt. Nothing here touches the ECS.

mod actions_block;
mod decision;
mod narration;
mod tokens;

pub(crate) use actions_block::Measuring;
pub use actions_block::{
    ActionCatalog, ActionLine, ActionList, BlockLine, BlockOptions, render_available_actions,
    write_available_actions,
};
pub use decision::{
    ANSWER_FIELD, DECISION_QUESTION, DECISION_REPLY, DECISION_RULES, DecisionContext,
    DecisionLimits, DecisionPrompt, NOTHING_OFFERED, PromptPart, PromptSection, decision_prompt,
    decision_schema, decision_system_prompt, decision_user_prompt, write_decision_user_prompt,
};
pub use narration::{NARRATOR_RULES, narration_user_message};
pub(crate) use tokens::tokens_of_chars;
pub use tokens::{TokenScale, estimate_tokens};
