//! Prompts as pure functions of plain data: the available-actions block, the
//! decision prompt and the schema of its answer. Nothing here touches the ECS.

mod actions_block;
mod decision;

pub use actions_block::{
    ActionCatalog, ActionLine, BlockOptions, render_available_actions, write_available_actions,
};
pub use decision::{
    DECISION_RULES, DecisionLimits, DecisionPrompt, decision_prompt, decision_schema,
};
