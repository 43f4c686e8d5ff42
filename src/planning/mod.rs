//! Planning: a task chosen by a model (or started by the game) is refined by one of its
//! methods into primitive actions, carried out one step at a time under the game's
//! rules.
//!
//! **Layer:** features. The refinement itself is [`Refinement`], a plain state machine
//! over the [`ContentRegistry`](crate::content::ContentRegistry) and what the world says
//! now ([`PlanFacts`]): it picks the first applicable method, decides conditional steps
//! when they are reached, binds each action's targets to the task's parameters and
//! applies the method's fallbacks when a step fails.

mod refine;

pub use refine::{
    BoundTask, ParamValue, PlanFacts, PlanFailure, PlanStep, PlannedAction, Refinement,
};
