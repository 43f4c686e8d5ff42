//! Smart actors: characters driven by a model, one decision per turn.
//!
//! A [`SmartActor`] names an [`ActorSpec`]. When a turn
//! begins (a [`TurnEnded`] message, or the real-time cadence in
//! [`SmartActorSettings`]), each eligible actor is queued; in
//! [`LoomSystems::Think`] its prompt is assembled from its spec, what it perceives
//! and its available actions, and sent through the bridge. In
//! [`LoomSystems::Decide`] the answer is validated: a valid one becomes an
//! [`ActionRequest`] (and an [`ActorSpoke`] for its speech), anything else a
//! [`DecisionRejected`] and the actor passes. The plugin never changes game state:
//! the game's own systems carry out requests.

mod budget;
pub mod conversation;
mod decide;
mod decision;
pub mod memory;
mod messages;
mod prompt_cache;
mod remember;
mod scene;
mod think;
mod transcript;
mod turns;
mod utterance;

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

pub use budget::{Lifeline, OfferLine, PromptBudgets, drop_order, fit_lines, fit_words, trim_mask};
pub use decision::{ANSWER_TYPES, Answer, Decision, RejectionReason, parse_decision};
pub use memory::{HistoryStore, MemoryEntry, MemoryError, MemoryQuery, MemoryScope, NewMemory};
pub use messages::{
    ActionRequest, ActorHesitated, ActorPassed, ActorSpoke, ConversationEvent, DecisionFallback,
    DecisionRejected, DecisionRequested, OfferTrimmed, PlayerSaid, TurnEnded,
};
pub use scene::{SceneDefinition, SceneEntity, SceneError, ScenePlace, SpawnedScene};
pub use transcript::{Shown, Transcript, TurnPlan, TurnPrompt, text_fingerprint};
pub use utterance::match_utterance;

use crate::LoomSystems;
use crate::content::{ActionDefinition, ActorSpec, ContentRegistry, content_loaded};
use crate::llm::{LlmBridge, OfferedChoice, OfferedChoices, RequestId};
use crate::prompt::{ActionLine, ActionList, BlockLine, BlockOptions, DecisionLimits};
use crate::world::{AvailableAction, Character, OfferedActions, TargetScopes};

// The prompt layer renders what the world layer offers.
impl ActionLine for AvailableAction<'_> {
    fn index(&self) -> usize {
        self.index
    }
    fn action_id(&self) -> &str {
        self.action_id
    }
    fn command(&self) -> &str {
        self.command
    }
    fn description(&self) -> &str {
        self.description
    }
}

// The block reads an actor's offer in place.
impl ActionList for OfferedActions {
    fn len(&self) -> usize {
        OfferedActions::len(self)
    }
    fn line(&self, position: usize) -> BlockLine<'_> {
        let action = self.get(position + 1).unwrap_or(AvailableAction {
            index: position + 1,
            action_id: "",
            targets: &[],
            command: "",
            description: "",
        });
        block_line(action)
    }

    fn lines(&self) -> impl Iterator<Item = BlockLine<'_>> {
        self.iter().map(block_line)
    }
}

/// An offered action's line in the block.
fn block_line(action: AvailableAction<'_>) -> BlockLine<'_> {
    BlockLine {
        index: action.index,
        action_id: action.action_id,
        command: action.command,
        description: action.description,
    }
}

// A decision request shares what the actor was offered.
impl OfferedChoices for OfferedActions {
    fn len(&self) -> usize {
        OfferedActions::len(self)
    }
    fn choice(&self, position: usize) -> Option<OfferedChoice<'_>> {
        self.get(position + 1).map(|action| OfferedChoice {
            index: action.index,
            action_id: action.action_id,
            command: action.command,
        })
    }
}

/// Marks a character as driven by a model, naming its spec by id (`tavern:marta`).
#[derive(Component, Debug, Clone, PartialEq, Eq, Reflect)]
#[reflect(Component)]
#[require(Character, ActorMind)]
pub struct SmartActor {
    /// The `mod:name` id of its [`ActorSpec`].
    pub spec: String,
}

impl SmartActor {
    /// A smart actor driven by the spec with this id.
    pub fn new(spec: impl Into<String>) -> Self {
        Self { spec: spec.into() }
    }
}

/// A smart actor's turn bookkeeping.
#[derive(Component, Debug, Clone, Default)]
pub struct ActorMind {
    /// The first turn it may think again.
    pub next_turn: u64,
    /// The request it is waiting on, if any.
    pub pending: Option<RequestId>,
    /// What it was offered for the pending request.
    pub offered: OfferedActions,
    queued: bool,
    cooldown: u32,
    /// Whether the pending decision was asked for in combat.
    fighting: bool,
    /// What the player said to it, to reply to instead of acting.
    reply_to: Option<String>,
    /// What the pending request replies to, to ask again with.
    replying_to: Option<String>,
    /// Whether the pending request asks again from a fresh prompt, after the server
    /// found the last one too long for its context: it is asked again only once.
    asked_again: bool,
    /// The limits its pending decision is checked against.
    limits: DecisionLimits,
    /// Its conversation with the model so far.
    transcript: Transcript,
    /// Why its last answer was not used, for its next prompt.
    note: Option<String>,
    /// The estimated tokens its offer may take, set when its transcript starts, so an
    /// unchanged world keeps the same offer from turn to turn.
    actions_budget: usize,
    /// The last offer it was shown, and how.
    shown_offer: think::ShownOffer,
    /// What it last perceived, and the place model's revision then
    /// ([`PlaceRevisions::revision`]); 0 before it perceived anything.
    perceived: (u64, String),
    /// Whether an [`OfferTrimmed`] was written for it.
    trimming_reported: bool,
}

/// Who the player is talking with.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Conversation {
    /// The smart actor, while a conversation is open.
    pub with: Option<Entity>,
}

/// Put on a smart actor while it fights: it is offered only actions whose verb is one
/// of [`SmartActorSettings::combat_verbs`], and any answer that does not choose one
/// becomes a pass with an [`ActorHesitated`] line, so combat always advances.
#[derive(Component, Debug, Clone, Copy, Default, PartialEq, Eq, Reflect)]
#[reflect(Component)]
pub struct InCombat;

impl ActorMind {
    /// Whether the actor is queued to think or waiting for an answer.
    pub fn is_thinking(&self) -> bool {
        self.queued || self.pending.is_some()
    }
}

/// The turn count: one per [`TurnEnded`] (or cadence tick) so far.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnClock {
    /// The current turn; 0 before the first.
    pub turn: u64,
}

/// How smart actors are scheduled and prompted.
#[derive(Resource, Debug, Clone, PartialEq)]
pub struct SmartActorSettings {
    /// Also start a turn this often in real time; `None` waits for [`TurnEnded`] only.
    pub cadence: Option<Duration>,
    /// At most this many actors start thinking in one frame; the rest wait for the next.
    pub max_new_thinkers_per_frame: usize,
    /// When the available actions are grouped by mod.
    pub block: BlockOptions,
    /// Size limits on answers.
    pub limits: DecisionLimits,
    /// What actors recall when they think.
    pub recall: RecallSettings,
    /// The verbs an actor [`InCombat`] may use (actions name theirs in `verb`).
    pub combat_verbs: Vec<String>,
    /// What an actor does when its decision is rejected.
    pub fallback: DecisionFallback,
    /// How many estimated tokens prompts and their parts may take.
    pub budgets: PromptBudgets,
}

impl Default for SmartActorSettings {
    fn default() -> Self {
        Self {
            cadence: None,
            max_new_thinkers_per_frame: 8,
            block: BlockOptions::default(),
            limits: DecisionLimits::default(),
            recall: RecallSettings::default(),
            combat_verbs: vec!["attack".to_owned(), "flee".to_owned()],
            fallback: DecisionFallback::Pass,
            budgets: PromptBudgets::default(),
        }
    }
}

/// What smart actors recall from the [`HistoryStore`] when they think.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallSettings {
    /// Ranked memories per prompt, besides pinned seeds.
    pub k: usize,
    /// The most estimated tokens the memories may take in a prompt.
    pub token_budget: usize,
    /// The plots now current: their memories are everyone's.
    pub plots: Vec<String>,
}

impl Default for RecallSettings {
    fn default() -> Self {
        Self {
            k: 4,
            token_budget: 200,
            plots: Vec::new(),
        }
    }
}

/// Schedules smart actors, prompts them and validates their decisions.
#[derive(Debug, Clone, Default)]
pub struct SmartActorPlugin {
    /// Scheduling and prompting settings, copied into a resource that may change at run time.
    pub settings: SmartActorSettings,
}

impl Plugin for SmartActorPlugin {
    fn build(&self, app: &mut App) {
        crate::configure_loom_sets(app);
        app.insert_resource(self.settings.clone())
            .init_resource::<TurnClock>()
            .init_resource::<ThinkQueue>()
            .init_resource::<HistoryStore>()
            .init_resource::<Conversation>()
            .add_message::<PlayerSaid>()
            .add_message::<ConversationEvent>()
            .add_message::<crate::narration::NarrationText>()
            .register_type::<SmartActor>()
            .register_type::<InCombat>()
            .add_message::<ActorHesitated>()
            .add_message::<ActorPassed>()
            .add_message::<TurnEnded>()
            .add_message::<ActionRequest>()
            .add_message::<ActorSpoke>()
            .add_message::<DecisionRejected>()
            .add_message::<DecisionRequested>()
            .add_message::<OfferTrimmed>()
            .add_systems(
                Update,
                (
                    turns::forget_departed_actors,
                    remember::seed_memories.run_if(content_loaded),
                    turns::start_turns,
                    turns::hear_the_player,
                )
                    .chain()
                    .in_set(LoomSystems::Sense),
            )
            .add_systems(
                Update,
                // Actors queued before content loads wait for it rather than failing.
                think::submit_decisions
                    .run_if(content_loaded)
                    .in_set(LoomSystems::Think),
            )
            .add_systems(Update, decide::apply_decisions.in_set(LoomSystems::Decide))
            .add_systems(
                Update,
                remember::remember_what_was_witnessed.in_set(LoomSystems::Remember),
            );
    }

    fn finish(&self, app: &mut App) {
        let world = app.world();
        let needs = [
            (
                world.contains_resource::<ContentRegistry>(),
                "ContentPlugin",
            ),
            (world.contains_resource::<TargetScopes>(), "WorldPlugin"),
            (world.contains_resource::<LlmBridge>(), "LlmPlugin"),
            (
                world.contains_resource::<Time>(),
                "TimePlugin (part of MinimalPlugins and DefaultPlugins)",
            ),
        ];
        for (present, plugin) in needs {
            assert!(
                present,
                "SmartActorPlugin needs {plugin}: add LoomPlugins, or the missing plugin, to the app"
            );
        }
    }
}

/// Where decisions and their outcomes are written.
#[derive(SystemParam)]
struct DecisionWriters<'w> {
    requested: MessageWriter<'w, DecisionRequested>,
    requests: MessageWriter<'w, ActionRequest>,
    spoke: MessageWriter<'w, ActorSpoke>,
    rejected: MessageWriter<'w, DecisionRejected>,
    hesitated: MessageWriter<'w, ActorHesitated>,
    passed: MessageWriter<'w, ActorPassed>,
    trimmed: MessageWriter<'w, OfferTrimmed>,
}

/// Actors waiting to think, in the order they became eligible, and requests in flight.
#[derive(Resource, Debug, Default)]
struct ThinkQueue {
    waiting: VecDeque<Entity>,
    pending: HashMap<RequestId, Entity>,
}

/// Whether an actor may be offered an action: its policy's actions and verbs, and in
/// combat only the combat verbs.
fn permits(
    spec: &ActorSpec,
    combat_verbs: &[String],
    fighting: bool,
    action: &ActionDefinition,
) -> bool {
    let verb = action.verb.as_deref();
    spec.policy.allows(&action.id)
        && spec.policy.allows_verb(verb)
        && (!fighting || verb.is_some_and(|verb| combat_verbs.iter().any(|c| c == verb)))
}
