//! Smart actors: characters driven by a model, one decision per turn.
//!
//! **Layer:** a feature, on top of content, the transport, the world view and prompt
//! assembly; its systems gather from the ECS and call plain functions. It shares
//! nothing with narration but the world's [`Witnessed`].
//!
//! A [`SmartActor`] names an [`ActorSpec`]. When a turn
//! begins (a [`TurnEnded`] message, or the real-time cadence in
//! [`SmartActorSettings`]), each eligible actor is queued; in
//! [`LoomSystems::Think`] its prompt is assembled from its spec, what it perceives
//! and its available actions, and sent through the bridge. In
//! [`LoomSystems::Decide`] the answer is validated. A valid one becomes an
//! [`ActionRequest`], a [`StartPlan`] (a task) or an [`AbilityInvoked`], with an
//! [`ActorSpoke`] for its speech; words alone are an [`ActorSpoke`], nothing at all an
//! [`ActorPassed`]. An invalid one becomes a [`DecisionRejected`], then the configured
//! [`fallback`](SmartActorSettings::fallback) when there is one and it was offered;
//! otherwise the actor passes. In combat, an answer that chose no combat action makes
//! the actor hesitate ([`ActorHesitated`]), with no fallback. The plugin never changes
//! game state: the game's own systems carry out requests.

pub mod conversation;
mod decide;
pub mod memory;
mod messages;
mod mind;
mod plans;
mod prompt_cache;
mod remember;
mod scene;
mod think;
mod turns;

use std::collections::VecDeque;
use std::time::Duration;

use bevy::ecs::system::SystemParam;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;

pub use crate::world::{ActionRequest, TurnClock, TurnEnded};
pub use memory::{HistoryStore, MemoryEntry, MemoryError, MemoryQuery, MemoryScope, NewMemory};
pub use messages::{
    ActorHesitated, ActorPassed, ActorSpoke, ConversationUpdate, DecisionFallback,
    DecisionRejected, DecisionRequested, OfferTrimmed, PlayerSaid,
};
pub use mind::{ActorMind, PendingDecision, ThinkState};
pub use scene::{SceneDefinition, SceneEntity, SceneError, ScenePlace, SpawnedScene};

use crate::content::{ActionDefinition, ActorSpec, ContentRegistry, content_loaded};
use crate::llm::{LlmBridge, RequestId};
use crate::prompt::{BlockOptions, DecisionLimits, PromptBudgets};
use crate::prompt::{Decision, RejectionReason};
use crate::world::{
    AbilityInvoked, Character, LoomSystems, StartPlan, StopPlan, TargetScopes, Witnessed,
};

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

/// Who the player is talking with.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Conversation {
    /// The smart actor, while a conversation is open.
    pub with: Option<Entity>,
}

/// Put on a smart actor while it fights: it is offered only actions whose verb is one
/// of [`SmartActorSettings::combat_verbs`], and any answer that does not choose one
/// becomes a pass with an [`ActorHesitated`] line, so combat always advances. The
/// player's words to it are answered with those actions on offer, so talking to a
/// fighter does not stop it fighting (its reply is said even when it hesitates). An
/// answer that comes once it is put on is judged so, whenever it was asked.
#[derive(Component, Debug, Clone, Copy, Default, PartialEq, Eq, Reflect)]
#[reflect(Component)]
pub struct InCombat;

/// How smart actors are scheduled and prompted.
#[derive(Resource, Debug, Clone, PartialEq, Reflect)]
#[reflect(Resource, Default)]
pub struct SmartActorSettings {
    /// Also start a turn this often in real time; `None` waits for [`TurnEnded`] only.
    pub cadence: Option<Duration>,
    /// At most this many actors start thinking in one frame; the rest wait for the next.
    /// 0 holds every queued actor, the player's words to them too, until it is raised.
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
    /// Whether actors are offered the tasks their spec allows (`allowedTasks`), to
    /// take on as plans; off, they choose only actions.
    pub offer_tasks: bool,
    /// When actors are offered the abilities their spec allows (`allowedAbilities`).
    pub offer_abilities: AbilityOffers,
    /// Whether abilities go to the model server as tools, for servers with native tool
    /// calling (OpenAI, vLLM, llama.cpp started with `--jinja`, Ollama): a tool call
    /// comes back as an invocation, checked as one written in the answer. Off, the
    /// answer's schema carries them, which every server takes.
    pub abilities_as_tools: bool,
    /// Whether a smart actor that appears sends its system message (rules, persona,
    /// backstory, goals) to the model server at once, so that the server has read and
    /// cached it before the actor's first decision, which then reads only the rest:
    /// on a CPU a first prompt takes tens of seconds, spent while the game starts
    /// rather than in its first turn. Off by default: it pays when each actor keeps a
    /// server slot of its own (llama.cpp's `--parallel` with `LOOM_LLM_SLOTS`); actors
    /// sharing one slot lose most warm prefixes to the next actor's before they are used.
    pub warm_up: bool,
}

/// When smart actors are offered their abilities: told of them in an `<abilities>`
/// block, with the answers that invoke one or ask for what one needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Reflect)]
pub enum AbilityOffers {
    /// When they reply to the player: abilities are services asked for.
    #[default]
    InConversation,
    /// Whenever they think, but in a fight.
    Always,
    /// Never.
    Never,
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
            offer_tasks: true,
            offer_abilities: AbilityOffers::default(),
            abilities_as_tools: false,
            warm_up: false,
        }
    }
}

/// What smart actors recall from the [`HistoryStore`] when they think.
#[derive(Debug, Clone, PartialEq, Eq, Reflect)]
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
        crate::world::configure_loom_sets(app);
        crate::world::TurnClockPlugin::add_once(app);
        app.insert_resource(self.settings.clone())
            .init_resource::<ThinkQueue>()
            .init_resource::<prompt_cache::PromptCache>()
            .init_resource::<HistoryStore>()
            .init_resource::<Conversation>()
            .add_message::<PlayerSaid>()
            .add_message::<ConversationUpdate>()
            .add_message::<Witnessed>()
            .register_type::<SmartActor>()
            .register_type::<InCombat>()
            .register_type::<SmartActorSettings>()
            .add_message::<ActorHesitated>()
            .add_message::<ActorPassed>()
            .add_message::<ActionRequest>()
            .add_message::<AbilityInvoked>()
            .add_message::<StartPlan>()
            .add_message::<StopPlan>()
            .add_message::<ActorSpoke>()
            .add_message::<DecisionRejected>()
            .add_message::<DecisionRequested>()
            .add_message::<OfferTrimmed>()
            .add_systems(
                Update,
                (
                    turns::forget_departed_actors,
                    turns::ask_a_new_bridge,
                    turns::let_plans_decide,
                    remember::seed_memories.run_if(content_loaded),
                    turns::start_turns,
                    turns::hear_the_player,
                    plans::note_plan_endings,
                )
                    .chain()
                    .in_set(LoomSystems::Sense)
                    .after(crate::world::count_turns),
            )
            .add_systems(
                Update,
                // Actors queued before content loads wait for it rather than failing.
                (think::warm_up_new_actors, think::submit_decisions)
                    .chain()
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
    invoked: MessageWriter<'w, AbilityInvoked>,
    plans: MessageWriter<'w, StartPlan>,
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
    /// Each request out for an actor (a decision, or a warm-up) and whose it is.
    /// Hashed with bevy's fixed hasher: one insert an actor a turn, and a departed
    /// actor's requests are cancelled in the same order on every run.
    pending: HashMap<RequestId, Entity>,
    /// The [serial](LlmBridge::serial) of the bridge the requests went to: another
    /// one means the bridge was replaced.
    bridge: Option<u64>,
}

impl ThinkQueue {
    /// Cancels the decision `mind` waits on, if any, and takes that turn back
    /// ([`ActorMind::take_back_turn`]): its next turn goes on from its last answered
    /// one and tells again the notes this one told.
    fn cancel_pending(&mut self, mind: &mut ActorMind, bridge: &mut LlmBridge) {
        if let Some(pending) = mind.state.pending() {
            self.pending.remove(&pending.request);
            bridge.cancel(pending.request);
            mind.take_back_turn();
        }
    }

    /// Withdraws the decision `entity` (with `mind`) was queued for or waits on
    /// ([`cancel_pending`](Self::cancel_pending)): it is `Idle` again.
    fn withdraw(&mut self, entity: Entity, mind: &mut ActorMind, bridge: &mut LlmBridge) {
        self.waiting.retain(|&waiting| waiting != entity);
        self.cancel_pending(mind, bridge);
        mind.state = ThinkState::Idle;
    }
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
