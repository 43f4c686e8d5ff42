//! The answer contract of a decision: the kinds of answer an actor may give, how the
//! prompt promises them ([`DECISION_RULES`]), the JSON Schema that enforces them
//! ([`decision_schema`]), the parser that checks them against what was offered
//! ([`parse_decision`]), and the answers written without a model
//! ([`OfflineDecision`]). A new kind of answer is added here, in each of these four.
//!
//! Every answer is a small object whose keys say its kind, so a model writes few
//! tokens around its line (each one a step of generation, even when a grammar forces
//! it); the prompt shows them without spaces, which a model copies, and which saves
//! three more (an action with an 11-token line is 20 Llama tokens, where
//! `{"type": "ACTION", "action": 2, "speech": "..."}` was 30):
//!
//! | kind | written as | read as |
//! |---|---|---|
//! | act | `{"do": <index>, "say": "..."}` | [`Answer::Action`] |
//! | take on a task | `{"do": <a task's index>, "say": "..."}` | [`Answer::Task`] |
//! | name a command or task | `{"do": "<command>", "say": "..."}` | [`Answer::Utterance`] |
//! | say a line | `{"do": 0, "say": "..."}` | [`Answer::Color`] |
//! | invoke an ability | `{"use": "<id>", "inputs": {...}, "say": "..."}` | [`Answer::Invoke`] |
//! | ask for what is missing | `{"ask": "..."}` | [`Answer::Ask`] |
//! | pass | `{"do": 0, "say": ""}` | [`Answer::Pass`] |
//!
//! Any may carry a `thought`. An index written as text (`"do": "2"`) is read as the
//! index. The longer forms of earlier versions, with a `type`
//! (`{"type": "ACTION", "action": 2, "speech": "..."}`), are still read, so a prompt
//! template written for them keeps working. Under a schema offering abilities the
//! answer sits under [`ANSWER_FIELD`]. Offered actions are numbered from 1 and
//! offered tasks on after them ([`Choices`]), so an index names one choice whichever
//! it is. The prompt's rules promise the kinds every actor may give; taking on a task
//! is promised by the `<available_tasks>` block ([`TASK_ANSWER`]), only to an actor
//! offered tasks, and invoking and asking by the abilities offered
//! ([`Offer::abilities`]), whose inputs are checked by [`check_invocation`].

mod decision;
mod invoke;
mod offline;
mod parse;
mod schema;
mod streamed;
mod utterance;

pub use decision::{Answer, Decision, RejectionReason};
use invoke::invocation_chars;
pub use invoke::{ability_tools, check_invocation, inputs_schema, invoke_schema, tool_call_answer};
pub use offline::OfflineDecision;
pub(crate) use parse::answer_body;
pub use parse::parse_decision;
use parse::said_within;
pub use schema::decision_schema;
pub(crate) use streamed::StreamedAnswer;
pub use utterance::match_utterance;
use utterance::named_task;

use crate::content::{ActionDefinition, ContentRegistry};
use crate::world::{OfferedAbilities, OfferedActions};

/// How many choices of each kind an actor was offered. The prompt numbers them in one
/// run: the actions from 1, then the tasks on after them, so with 5 actions and 2
/// tasks the tasks are 6 and 7. Answers are checked against it, and the schema lists
/// exactly these numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Choices {
    /// How many actions were offered.
    pub actions: usize,
    /// How many tasks were offered.
    pub tasks: usize,
}

impl Choices {
    /// The number the prompt gives the offered task `position` (from 1).
    pub fn task_number(&self, position: usize) -> usize {
        self.actions + position
    }

    /// How many choices there are in all: the last index.
    pub fn total(&self) -> usize {
        self.actions + self.tasks
    }
}

impl From<usize> for Choices {
    /// Only actions: this many.
    fn from(actions: usize) -> Self {
        Self { actions, tasks: 0 }
    }
}

/// Everything a decision offered that its answer is checked against: the numbered
/// choices, and the abilities the actor may invoke. A number of actions or a
/// [`Choices`] is an offer without abilities.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offer<'a> {
    /// The actions and tasks, numbered in one run.
    pub choices: Choices,
    /// The abilities, by id: `INVOKE` names one of them, and `ASK` asks for what one
    /// needs.
    pub abilities: Option<&'a OfferedAbilities>,
    /// Whether the abilities go to the server as tools, called natively: the answer's
    /// schema then offers no `INVOKE` (a tool call stands for it).
    pub as_tools: bool,
}

impl Offer<'_> {
    /// The abilities offered, none when absent.
    pub fn abilities(&self) -> &OfferedAbilities {
        static NONE: std::sync::LazyLock<OfferedAbilities> =
            std::sync::LazyLock::new(OfferedAbilities::default);
        self.abilities.unwrap_or(&NONE)
    }
}

impl From<Choices> for Offer<'_> {
    /// These choices, and no ability.
    fn from(choices: Choices) -> Self {
        Self {
            choices,
            abilities: None,
            as_tools: false,
        }
    }
}

impl From<usize> for Offer<'_> {
    /// Only actions: this many.
    fn from(actions: usize) -> Self {
        Choices::from(actions).into()
    }
}

/// Reads a model's answer to a decision prompt: parsed and checked against the limits
/// and what was offered ([`parse_decision`]: the actions `offered`, the `tasks`
/// numbered after them, and the `abilities`), and an `UTTERANCE` resolved to the offered action it names
/// ([`match_utterance`], through actions `permitted` for the actor now), or else to
/// the offered task whose command it is word for word, so a valid
/// decision names an offered action or task by its position, or none.
pub fn read_decision(
    raw: &str,
    (offered, tasks, abilities): (&OfferedActions, &OfferedActions, &OfferedAbilities),
    registry: &ContentRegistry,
    permitted: impl Fn(&ActionDefinition) -> bool,
    limits: &DecisionLimits,
) -> Result<Decision, RejectionReason> {
    let choices = Choices {
        actions: offered.len(),
        tasks: tasks.len(),
    };
    let offer = Offer {
        choices,
        abilities: Some(abilities),
        as_tools: false,
    };
    let decision = parse_decision(raw, offer, limits)?;
    let Answer::Utterance { command, speech } = decision.answer else {
        return Ok(decision);
    };
    let answer = match match_utterance(&command, offered, registry, permitted) {
        Ok(index) => Answer::Action { index, speech },
        Err(reason) => match named_task(&command, tasks) {
            Some(position) => Answer::Task { position, speech },
            None => return Err(reason),
        },
    };
    Ok(Decision {
        answer,
        thought: decision.thought,
    })
}

/// The answer types a decision may have in the longer form (`{"type": "ACTION", ...}`),
/// which is still read.
pub const ANSWER_TYPES: [&str; 7] = [
    "ACTION",
    "TASK",
    "UTTERANCE",
    "COLOR",
    "INVOKE",
    "ASK",
    "NONE",
];

/// How to answer with a task, as the `<available_tasks>` block says it
/// ([`TASK_ANSWER`]); a macro, so the block's fixed text can take it in whole.
macro_rules! task_answer {
    () => {
        "To take one on, answer with its Index as \"do\"."
    };
}
pub(crate) use task_answer;

/// How to answer with a task, as the `<available_tasks>` block says it: only an actor
/// offered tasks reads it, so the rules of every other prompt stay as they are.
pub const TASK_ANSWER: &str = task_answer!();

/// How to answer with an ability or ask for what one needs, after the `<abilities>`
/// block: only an actor offered abilities reads it, so the rules of every other prompt
/// stay as they are.
pub const ABILITY_ANSWERS: &str = "To use one, answer {\"use\":\"<its id>\",\"inputs\":{\"<input>\":<its value>},\"say\":\"<what you say, or empty>\"}
To ask for what one needs, answer {\"ask\":\"<one short question>\"}";

/// How to use an ability or ask for what one needs, after the `<abilities>` block,
/// when the abilities go to the server as tools.
pub const ABILITY_TOOL_ANSWERS: &str = "To use one, call it as a tool with its inputs
To ask for what one needs, answer {\"ask\":\"<one short question>\"}";

/// The rules every decision prompt starts with; they never change, so servers can cache them.
pub const DECISION_RULES: &str = "You play one character in a game. Stay in character. You cannot change the world directly: the game carries out what you choose, if it can.
Answer with one JSON object on one line: {\"do\":<the Index of an offered action, or 0 for none>,\"say\":\"<a short line you say, or empty>\"}";

/// The instruction after the player's words, when the actor replies in a conversation.
pub const DECISION_REPLY: &str =
    "Reply to the player in character, with \"do\":0; this turn you take no action.";

/// The instruction after the player's words, when the actor replies in a fight: it is
/// offered its combat actions too, so talking to a fighter does not stop it fighting.
pub const DECISION_REPLY_IN_COMBAT: &str = "Reply to the player in character. You are in a fight: choose your action from those offered too.";

/// What the available-actions block says when nothing is offered (a reply in a
/// conversation, an actor in combat with no combat action): the answers left.
pub const NOTHING_OFFERED: &str = "(nothing to do right now: answer with \"do\":0)";

/// The field a schema-bound answer sits under when abilities are offered
/// ([`decision_schema`]); the parser reads an answer with or without it.
pub const ANSWER_FIELD: &str = "answer";

/// The field an answer's choice is in: an offered index, 0 for none, or a command.
const CHOICE_FIELD: &str = "do";

/// The field of the line an answer says aloud.
const LINE_FIELD: &str = "say";

/// The field naming the ability an answer invokes.
const ABILITY_FIELD: &str = "use";

/// The field of the question an answer asks.
const QUESTION_FIELD: &str = "ask";

/// Size limits on a decision answer, enforced when it is validated and announced in its schema.
#[derive(Debug, Clone, PartialEq, Eq, bevy::reflect::Reflect)]
pub struct DecisionLimits {
    /// The longest line said aloud (`speech`, `color`) or `utterance`, in characters.
    pub max_speech_chars: usize,
    /// The longest `thought`, in characters (the prompt does not ask for one).
    pub max_thought_chars: usize,
    /// The longest whole answer, in bytes.
    pub max_answer_bytes: usize,
    /// The most lines a line said aloud may have (the spec's `maxColorLines`); `None`
    /// for no limit, 0 for an actor that never speaks.
    pub max_color_lines: Option<u32>,
}

impl Default for DecisionLimits {
    fn default() -> Self {
        Self {
            max_speech_chars: 300,
            max_thought_chars: 500,
            max_answer_bytes: 4096,
            max_color_lines: None,
        }
    }
}

impl DecisionLimits {
    /// The most tokens a valid answer can take, even from a model whose vocabulary
    /// spends a token on every character: its longest line and the JSON around it.
    /// Decision requests ask for no more, so a model cannot ramble on past what the
    /// schema allows.
    pub fn max_answer_tokens(&self) -> u32 {
        self.max_answer_tokens_invoking(&OfferedAbilities::default())
    }

    /// [`max_answer_tokens`](Self::max_answer_tokens) with room to invoke the longest
    /// of `abilities`, its id and every input at its longest (a text without
    /// `maxLength`, as long as a line said): a long invocation is not cut off
    /// mid-answer. Never more than [`max_answer_bytes`](Self::max_answer_bytes), as no
    /// token is shorter than a byte.
    pub fn max_answer_tokens_invoking(&self, abilities: &OfferedAbilities) -> u32 {
        let invoking = (abilities.iter())
            .map(|ability| invocation_chars(ability, self.max_speech_chars))
            .max()
            .unwrap_or(0);
        let chars = (self.max_speech_chars)
            .saturating_add(ANSWER_OVERHEAD_CHARS)
            .saturating_add(invoking);
        let chars = match invoking {
            0 => chars,
            _ => chars.min(self.max_answer_bytes.max(self.max_speech_chars)),
        };
        u32::try_from(chars).unwrap_or(u32::MAX)
    }
}

/// The characters of a decision answer around its longest line, with room to spare:
/// `{"do": 12, "say": ""}`, the longer forms still read
/// (`{"type": "ACTION", "action": 12, "speech": ""}`), the `answer` wrapper, and the
/// spaces a grammar lets a model put between their parts.
const ANSWER_OVERHEAD_CHARS: usize = 96;
