//! A decision as the answer contract reads it: the kinds of answer
//! ([`Answer`]) an actor gives, and why an answer is rejected ([`RejectionReason`]),
//! each reason worded to say what to fix.

use thiserror::Error;

use crate::llm::LlmError;
use crate::world::InputValue;

/// A valid decision: what the actor answered, and its private thought, if it gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The answer.
    pub answer: Answer,
    /// A private thought; may be empty.
    pub thought: String,
}

/// One of the answers of the decision contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `{"do": <index>, "say": "..."}` (`ACTION` in the longer form): the offered
    /// action with this index (from 1), with what the actor says as it acts (may be
    /// empty).
    Action {
        /// The chosen index.
        index: usize,
        /// Words said along with it.
        speech: String,
    },
    /// `{"do": <a task's index>, "say": "..."}` (`TASK`): the offered task at this
    /// position among the tasks (from 1; the prompt numbers it on after the actions,
    /// [`Choices::task_number`](super::Choices::task_number)), with what the actor says as it sets about it (may be
    /// empty).
    Task {
        /// Its position among the offered tasks.
        position: usize,
        /// Words said along with it.
        speech: String,
    },
    /// `{"do": "<command>", "say": "..."}` (`UTTERANCE`): a player-like command line,
    /// still to be matched against the offered commands and tasks
    /// ([`read_decision`](super::read_decision)), with what the actor says as it acts
    /// (may be empty).
    Utterance {
        /// The command as written.
        command: String,
        /// Words said along with it.
        speech: String,
    },
    /// `{"do": 0, "say": "..."}` (`COLOR`): a short in-character line with no
    /// mechanical effect.
    Color(String),
    /// `{"use": "<id>", "inputs": {...}, "say": "..."}` (`INVOKE`): the offered ability
    /// with this id, with its inputs checked ([`check_invocation`](super::check_invocation))
    /// and what the actor says as it does it (may be empty).
    Invoke {
        /// The ability's id.
        ability: String,
        /// Each input given, by name, in the ability's order.
        inputs: Vec<(String, InputValue)>,
        /// Words said along with it.
        speech: String,
    },
    /// `{"ask": "..."}` (`ASK`): a short question for an input an ability needs and
    /// nobody gave; said aloud, it keeps the conversation open for the answer.
    Ask(String),
    /// `{"do": 0, "say": ""}` (`NONE`): the actor does nothing this turn.
    Pass,
}

impl Decision {
    /// The chosen index, for an `ACTION` answer.
    pub fn action(&self) -> Option<usize> {
        match self.answer {
            Answer::Action { index, .. } => Some(index),
            _ => None,
        }
    }

    /// The chosen task's position among the offered tasks, for a `TASK` answer.
    pub fn task(&self) -> Option<usize> {
        match self.answer {
            Answer::Task { position, .. } => Some(position),
            _ => None,
        }
    }

    /// What the actor says aloud: an `ACTION`'s, `TASK`'s or `INVOKE`'s speech, a
    /// `COLOR` line or an `ASK` question; empty otherwise.
    pub fn speech(&self) -> &str {
        match &self.answer {
            Answer::Action { speech, .. }
            | Answer::Task { speech, .. }
            | Answer::Utterance { speech, .. }
            | Answer::Invoke { speech, .. }
            | Answer::Color(speech)
            | Answer::Ask(speech) => speech,
            Answer::Pass => "",
        }
    }
}

/// Why an answer was rejected. The actor passes its turn, or takes the configured
/// fallback (`DecisionFallback` of smart actors), instead.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RejectionReason {
    /// The answer is not one JSON object.
    #[error("the answer is not a JSON object ({0})")]
    NotAnObject(String),
    /// `type` is not one of [`ANSWER_TYPES`](super::ANSWER_TYPES).
    #[error(
        "`type` must be \"ACTION\", \"TASK\", \"UTTERANCE\", \"COLOR\", \"INVOKE\", \"ASK\" or \"NONE\", not {0}"
    )]
    UnknownType(String),
    /// The answer lacks the field its type needs.
    #[error("{} {answer} answer needs `{field}`", article(answer))]
    MissingField {
        /// The answer's type.
        answer: &'static str,
        /// The field it lacks.
        field: &'static str,
    },
    /// `action` is not an index.
    #[error("`action` must be an index number, not {0}")]
    BadAction(String),
    /// `task` is not an index.
    #[error("`task` must be an index number, not {0}")]
    BadTask(String),
    /// `do` is neither an index, 0 nor a command.
    #[error("`do` must be an offered Index, 0 for none, or an offered Command, not {0}")]
    BadChoice(String),
    /// The answer names no choice: no `do`, nor any other answer's field.
    #[error("the answer needs `do`: the Index of an offered action, or 0 for none")]
    NoChoice,
    /// `action` (or `do`) names an index that was not offered.
    #[error("{}", action_not_offered(*index, *offered))]
    NotOffered {
        /// The index the model named.
        index: u64,
        /// How many actions were offered.
        offered: usize,
    },
    /// `task` names an index that is no offered task.
    #[error("{}", task_not_offered(*index, *first, *last))]
    TaskNotOffered {
        /// The index the model named.
        index: u64,
        /// The first task's index.
        first: usize,
        /// The last task's index; below `first` when no task was offered.
        last: usize,
    },
    /// A text field is not a string.
    #[error("`{0}` must be a string")]
    NotAString(&'static str),
    /// A field is longer than its limit.
    #[error("`{field}` is {length} characters long; the limit is {max}")]
    TooLong {
        /// `speech`, `color`, `utterance` or `thought`.
        field: &'static str,
        /// Its length in characters.
        length: usize,
        /// The limit.
        max: usize,
    },
    /// A spoken line has more lines than the actor's `maxColorLines`.
    #[error("`{field}` has {lines} lines; the limit is {max}")]
    TooManyLines {
        /// `speech` or `color`.
        field: &'static str,
        /// Its lines.
        lines: usize,
        /// The limit.
        max: u32,
    },
    /// The whole answer is larger than the limit.
    #[error("the answer is {length} bytes long; the limit is {max}")]
    AnswerTooLarge {
        /// Its size in bytes.
        length: usize,
        /// The limit.
        max: usize,
    },
    /// An `UTTERANCE` names no command of the loaded content.
    #[error("\"{0}\" is not a command: answer with one of the offered commands, word for word")]
    UnknownCommand(String),
    /// An `UTTERANCE` uses a verb the actor's policy (or combat) does not allow.
    #[error("\"{line}\" uses `{verb}`, which this actor may not use now")]
    VerbNotAllowed {
        /// The line.
        line: String,
        /// The verb of the command it names.
        verb: String,
    },
    /// An `UTTERANCE` is a command, but none that was offered (a target not here, say).
    #[error("\"{0}\" was not offered: answer with one of the offered commands, word for word")]
    CommandNotOffered(String),
    /// An `UTTERANCE` matches more than one offered command.
    #[error("\"{line}\" matches {count} offered commands: name one exactly")]
    AmbiguousCommand {
        /// The line.
        line: String,
        /// How many it matches.
        count: usize,
    },
    /// An invocation names an ability that was not offered.
    #[error("{}", ability_not_offered(ability, offered))]
    AbilityNotOffered {
        /// The ability named.
        ability: String,
        /// The abilities offered, by id; empty when none was.
        offered: String,
    },
    /// An invocation's `inputs` is not an object.
    #[error("the inputs of `{ability}` must be an object of inputs by name, not {found}")]
    BadInputs {
        /// The ability.
        ability: String,
        /// What was given.
        found: String,
    },
    /// An invocation gives an input its ability does not have.
    #[error("`{ability}` has no input `{input}`: its inputs are {known}")]
    UnknownInput {
        /// The ability.
        ability: String,
        /// The input named.
        input: String,
        /// Its inputs' names.
        known: String,
    },
    /// An invocation leaves out an input its ability requires: the actor should have
    /// asked for it.
    #[error(
        "`{ability}` needs `{input}`, which was not given: when the player has not said it and it cannot be inferred, ask for it with an \"ask\" answer instead of invoking"
    )]
    MissingInput {
        /// The ability.
        ability: String,
        /// The required input left out.
        input: String,
    },
    /// An invocation gives an input a value its ability does not take.
    #[error("input `{input}` of `{ability}` {problem}")]
    BadInput {
        /// The ability.
        ability: String,
        /// The input.
        input: String,
        /// What is wrong with its value.
        problem: String,
    },
    /// The model gave no answer.
    #[error("no answer from the model: {0}")]
    NoAnswer(LlmError),
    /// The server stopped the answer at the request's token limit, unfinished: why it
    /// could not be read.
    #[error(
        "the answer was cut off at the token limit before it was complete ({0}); a model that reasons before it answers spends the tokens on that: turn its thinking off, or ask for a short `thought`"
    )]
    CutOff(String),
    /// The offered action, task or ability chosen may no longer be taken: the actor's
    /// spec, or the content, changed while it decided.
    #[error("`{0}` may no longer be taken: what this actor may do changed while it decided")]
    NoLongerAllowed(String),
    /// The offered action, task or ability chosen names an entity no longer in the
    /// world (despawned while the actor decided): the command, or the ability's id.
    #[error("`{0}` can no longer be done: something it names is gone")]
    Gone(String),
    /// The actor's spec is not loaded, so it could not think.
    #[error(
        "actor spec `{0}` is not loaded: check the SmartActor's spec id and the content errors"
    )]
    UnknownSpec(String),
}

/// Why an invocation's `ability` names none offered, when `offered` were (by id).
fn ability_not_offered(ability: &str, offered: &str) -> String {
    if offered.is_empty() {
        format!("ability `{ability}` was not offered: no ability was, so answer without one")
    } else {
        format!("ability `{ability}` was not offered (the abilities were {offered})")
    }
}

/// The article before an answer type: "an ACTION", "a COLOR".
fn article(answer: &str) -> &'static str {
    if answer.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    }
}

/// Why an answer's `index` names no action, when `offered` were.
fn action_not_offered(index: u64, offered: usize) -> String {
    if offered == 0 {
        format!("action {index} was not offered: no action was, so answer with \"do\": 0")
    } else {
        format!("action {index} was not offered (the choices were 1 to {offered})")
    }
}

/// Why a `TASK` answer's `index` names no task, when the offered tasks are numbered
/// `first..=last`.
fn task_not_offered(index: u64, first: usize, last: usize) -> String {
    if last < first {
        format!(
            "task {index} was not offered: no task was offered, so answer with an offered action's Index"
        )
    } else {
        format!("task {index} was not offered (the tasks were {first} to {last})")
    }
}
