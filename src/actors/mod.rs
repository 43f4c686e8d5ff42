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
mod decision;
pub mod memory;
mod prompt_cache;
mod scene;
mod transcript;
mod utterance;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use smallvec::SmallVec;

pub use budget::{Lifeline, OfferLine, PromptBudgets, drop_order, fit_lines, fit_words, trim_mask};
pub use decision::{ANSWER_TYPES, Answer, Decision, RejectionReason, parse_decision};
pub use memory::{HistoryStore, MemoryEntry, MemoryError, MemoryQuery, MemoryScope, NewMemory};
pub use scene::{SceneDefinition, SceneEntity, SceneError, ScenePlace, SpawnedScene};
pub use transcript::{Shown, Transcript, TurnPlan, TurnPrompt, text_fingerprint};
pub use utterance::match_utterance;

use crate::LoomSystems;
use crate::content::{
    ActionDefinition, ActorSpec, ContentRegistry, PromptTemplate, TagIndex, content_loaded,
    register_content_asset,
};
use crate::llm::{
    ChatMessage, LlmBridge, LlmError, LlmRequest, LlmResponse, OfferedChoice, OfferedChoices,
    Priority, RequestId, RequestIntent, SamplingOptions,
};
use crate::prompt::{
    ActionCatalog, ActionLine, ActionList, BlockLine, BlockOptions, DecisionContext,
    DecisionLimits, PromptPart, PromptSection, TokenScale, estimate_tokens,
    write_available_actions, write_decision_user_prompt,
};
use crate::world::{
    ActionMenu, ActionOffers, AvailableAction, CarriedBy, Character, DisplayName, InPlace,
    NarrativeKey, OfferedActions, Player, TargetScopes, WorldView, WorldViewChanges,
    WorldViewQuery, write_surroundings,
};
use prompt_cache::PromptCache;

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
    shown_offer: ShownOffer,
    /// What it last perceived, and the place model's revision then
    /// ([`PlaceRevisions::revision`]); 0 before it perceived anything.
    perceived: (u64, String),
    /// Whether an [`OfferTrimmed`] was written for it.
    trimming_reported: bool,
}

/// The last offer an actor was shown, trimmed to its budget and written as a block:
/// the same offer next turn is shown the same way without trimming or writing it again.
#[derive(Debug, Clone, Default)]
struct ShownOffer {
    /// Whether an offer was shown yet.
    shown: bool,
    /// The offer as made, before trimming.
    offered: OfferedActions,
    /// The menu it was made from and the place model's revision then
    /// ([`PlaceRevisions::revision`]): an offer is made from the menu and the world
    /// view alone, so while the menu is the same and nothing it reads changed
    /// ([`PlaceRevisions::changed_at`] the actor's place, for the built-in scopes) it
    /// is not made again. `None` when it was not made from a menu (a reply's empty
    /// offer).
    made_from: Option<(ActionMenu, u64)>,
    /// The budget it was trimmed to.
    budget: usize,
    /// Which of its actions were left out.
    mask: Vec<bool>,
    /// The offer without them.
    trimmed: OfferedActions,
    /// Its available-actions block, and the block's [`text_fingerprint`].
    block: String,
    block_fingerprint: u64,
}

impl ShownOffer {
    /// Whether it shows `offered` within `budget`: the same offer, shared, as
    /// [`ActionOffers::offer_again`] gives it back unchanged. Such an offer comes from
    /// the same menu, which the prompt cache drops on any change of content or
    /// settings, so its block is still the one they would write; or it is empty, and
    /// the empty block is always the same text.
    fn shows(&self, offered: &OfferedActions, budget: usize) -> bool {
        self.shown && self.offered.shares(offered) && self.budget == budget
    }

    /// Shows `offered` within `budget`, trimmed by `relevance` and `lifeline`
    /// ([`trim_mask`]) when its block (from `catalog` with `options`) does not fit
    /// whole. The same offer and budget as last time are trimmed the same way, so an
    /// unchanged world keeps its prompt. Returns how many of its actions were left out.
    fn show(
        &mut self,
        offered: OfferedActions,
        budget: usize,
        catalog: &impl ActionCatalog,
        options: &BlockOptions,
        relevance: impl Fn(&AvailableAction<'_>) -> u32,
        lifeline: impl Fn(&AvailableAction<'_>) -> Option<Lifeline>,
    ) -> usize {
        let write = |shown: &mut Self| {
            shown.trimmed = offered.clone();
            shown.trimmed.leave_out(&shown.mask);
            shown.block.clear();
            write_available_actions(&mut shown.block, &shown.trimmed, catalog, options);
        };
        // The same offer made again from a menu built again (content or settings
        // changed) keeps its mask, unless its block no longer fits: another layout, or
        // longer mod metadata. From the same menu, an offer not shared is another.
        let made_again = !self.offered.made_from_one_menu(&offered) && self.offered == offered;
        let kept = self.shown && self.budget == budget && made_again && {
            write(self);
            estimate_tokens(&self.block) <= budget
        };
        if !kept {
            self.mask = trim_mask(&offered, budget, relevance, lifeline, catalog, options);
            write(self);
        }
        self.block_fingerprint = text_fingerprint(&self.block);
        self.offered = offered;
        self.shown = true;
        self.budget = budget;
        self.mask.iter().filter(|&&left_out| left_out).count()
    }
}

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
pub enum ConversationEvent {
    /// The player started talking with this actor.
    Started(Entity),
    /// The player said goodbye to this actor, or it left.
    Ended(Entity),
    /// A line addressed nobody the player can see, or more than one: what to tell the player.
    Notice(String),
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
/// ([`PromptBudgets::total`]): it chooses from fewer actions than the world gives it.
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

impl ActorMind {
    /// Whether the actor is queued to think or waiting for an answer.
    pub fn is_thinking(&self) -> bool {
        self.queued || self.pending.is_some()
    }
}

/// Written by the game when a turn ends; eligible smart actors then think.
#[derive(Message, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnEnded;

/// The turn count: one per [`TurnEnded`] (or cadence tick) so far.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnClock {
    /// The current turn; 0 before the first.
    pub turn: u64,
}

/// A validated request for the game to carry out.
///
/// It was valid when offered; the world may have moved on while the model thought,
/// so check it against your rules before you carry it out (and refuse if it no
/// longer makes sense).
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct ActionRequest {
    /// Who acts.
    pub actor: Entity,
    /// The action definition's `mod:action` id.
    pub action_id: String,
    /// The targets, in slot order.
    pub targets: Vec<Entity>,
    /// The command as offered: "give mug of ale to Marta".
    pub command: String,
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

/// What a smart actor does when its decision is rejected (outside combat, where it
/// always hesitates).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    /// The request's id; its [`LlmResponse`] carries the same.
    pub request: RequestId,
    /// The prompt, shared with the request.
    pub messages: Arc<Vec<ChatMessage>>,
    /// What was offered, by index.
    pub offered: OfferedActions,
    /// Each part of the prompt and its estimated tokens, in order.
    pub sections: Vec<PromptSection>,
    /// The share of this prompt (in characters) that is an unchanged prefix of the
    /// actor's previous prompt: what a server with prompt caching need not read again.
    /// 0 for an actor's first prompt. Each actor's prompts are one append-only
    /// conversation ([`Transcript`]), so a warm turn reuses all of the last one.
    pub reused_prefix: f32,
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
        register_content_asset::<SceneDefinition>(app);
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
            .add_message::<TurnEnded>()
            .add_message::<ActionRequest>()
            .add_message::<ActorSpoke>()
            .add_message::<DecisionRejected>()
            .add_message::<DecisionRequested>()
            .add_message::<OfferTrimmed>()
            .add_systems(
                Update,
                (
                    forget_departed_actors,
                    seed_memories.run_if(content_loaded),
                    start_turns,
                    hear_the_player,
                )
                    .chain()
                    .in_set(LoomSystems::Sense),
            )
            .add_systems(
                Update,
                // Actors queued before content loads wait for it rather than failing.
                submit_decisions
                    .run_if(content_loaded)
                    .in_set(LoomSystems::Think),
            )
            .add_systems(Update, apply_decisions.in_set(LoomSystems::Decide))
            .add_systems(
                Update,
                remember_what_was_witnessed.in_set(LoomSystems::Remember),
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

/// What a smart actor thinks about: content, scopes, the place model and its memories.
#[derive(SystemParam)]
struct Surroundings<'w, 's> {
    registry: Res<'w, ContentRegistry>,
    scopes: Res<'w, TargetScopes>,
    world: WorldViewQuery<'w, 's>,
    changes: WorldViewChanges<'w, 's>,
    history: Res<'w, HistoryStore>,
    keyed: Query<
        'w,
        's,
        (
            &'static NarrativeKey,
            Option<&'static InPlace>,
            Option<&'static CarriedBy>,
        ),
    >,
    key_holders: Query<'w, 's, (Entity, &'static NarrativeKey)>,
    players: Query<'w, 's, Entity, With<Player>>,
    /// The prompt template of specs that name none.
    builtin: Local<'s, PromptTemplate>,
}

/// Where decisions and their outcomes are written.
#[derive(SystemParam)]
struct DecisionWriters<'w> {
    requested: MessageWriter<'w, DecisionRequested>,
    requests: MessageWriter<'w, ActionRequest>,
    spoke: MessageWriter<'w, ActorSpoke>,
    rejected: MessageWriter<'w, DecisionRejected>,
    hesitated: MessageWriter<'w, ActorHesitated>,
    trimmed: MessageWriter<'w, OfferTrimmed>,
}

/// Actors waiting to think, in the order they became eligible, and requests in flight.
#[derive(Resource, Debug, Default)]
struct ThinkQueue {
    waiting: VecDeque<Entity>,
    pending: HashMap<RequestId, Entity>,
}

/// Cancels the requests of actors that were despawned or stopped being smart actors:
/// nobody is left to act on their answers.
fn forget_departed_actors(
    mut departed: RemovedComponents<SmartActor>,
    mut queue: ResMut<ThinkQueue>,
    mut bridge: ResMut<LlmBridge>,
) {
    for entity in departed.read() {
        queue.waiting.retain(|&waiting| waiting != entity);
        let cancelled: Vec<RequestId> = queue
            .pending
            .iter()
            .filter(|&(_, &actor)| actor == entity)
            .map(|(&id, _)| id)
            .collect();
        for id in cancelled {
            queue.pending.remove(&id);
            bridge.cancel(id);
        }
    }
}

fn start_turns(
    mut turns: MessageReader<TurnEnded>,
    settings: Res<SmartActorSettings>,
    time: Res<Time>,
    mut since_cadence: Local<Duration>,
    mut clock: ResMut<TurnClock>,
    mut queue: ResMut<ThinkQueue>,
    mut actors: Query<(Entity, &mut ActorMind), With<SmartActor>>,
) {
    let mut started = turns.read().count() as u64;
    if let Some(cadence) = settings.cadence.filter(|c| !c.is_zero()) {
        *since_cadence += time.delta();
        while *since_cadence >= cadence {
            *since_cadence -= cadence;
            started += 1;
        }
    }
    if started == 0 {
        return;
    }
    clock.turn += started;
    for (entity, mut mind) in &mut actors {
        if mind.pending.is_none() && !mind.queued && clock.turn >= mind.next_turn {
            mind.queued = true;
            queue.waiting.push_back(entity);
        }
    }
}

/// Pins each spec's `memorySeeds` and `history.seeds` into the history, under its store
/// key, when one of its actors is first seen, when content is loaded again (a spec
/// edited on disk), and when the game puts in another [`HistoryStore`] (a save
/// loaded): a seed the store already holds, same source and text, is not added again.
fn seed_memories(
    registry: Res<ContentRegistry>,
    clock: Res<TurnClock>,
    mut history: ResMut<HistoryStore>,
    mut seeded: Local<bevy::platform::collections::HashSet<String>>,
    mut store: Local<Option<memory::StoreInstance>>,
    actors: Query<&SmartActor>,
    arrived: Query<(), Added<SmartActor>>,
) {
    // Only a new actor, newly loaded specs or another store can need seeding.
    let replaced = *store != Some(history.instance());
    *store = Some(history.instance());
    let renewed = registry.is_changed() || replaced;
    if !renewed && arrived.is_empty() {
        return;
    }
    if renewed {
        seeded.clear();
    }
    for actor in &actors {
        if seeded.contains(&actor.spec) {
            continue;
        }
        let Some(spec) = registry.actor(&actor.spec) else {
            continue;
        };
        for seed in spec.seeds() {
            let source = format!("seed {}/{}", spec.id, seed.id);
            let held = history
                .entries()
                .iter()
                .any(|entry| entry.source == source && entry.text == seed.text);
            if held {
                continue;
            }
            history.append(NewMemory {
                text: seed.text.clone(),
                tags: seed.tags.clone(),
                scope: Some(match &seed.plot {
                    Some(plot) => MemoryScope::Plot(plot.clone()),
                    None => MemoryScope::Actor(spec.store_key().to_owned()),
                }),
                turn: clock.turn,
                source,
                pinned: true,
            });
        }
        seeded.insert(actor.spec.clone());
    }
}

/// Reads the player's lines: starts and ends conversations, and has the actor talked
/// with reply to each line, in place of its own action this turn.
fn hear_the_player(
    mut lines: MessageReader<PlayerSaid>,
    mut conversation: ResMut<Conversation>,
    mut events: MessageWriter<ConversationEvent>,
    mut queue: ResMut<ThinkQueue>,
    mut bridge: ResMut<LlmBridge>,
    player: Query<&InPlace, With<Player>>,
    mut actors: Query<(
        Entity,
        &SmartActor,
        &DisplayName,
        &mut ActorMind,
        Option<&InPlace>,
    )>,
) {
    for line in lines.read() {
        let here = player.iter().next().map(|p| p.0);
        let visible: Vec<Entity> = actors
            .iter()
            .filter(|(.., place)| here.is_some() && place.map(|p| p.0) == here)
            .map(|(entity, ..)| entity)
            .collect();
        // A conversation ends when its actor is no longer here.
        if let Some(with) = conversation.with.filter(|with| !visible.contains(with)) {
            conversation.with = None;
            events.write(ConversationEvent::Ended(with));
        }
        let named: Vec<(String, String)> = visible
            .iter()
            .filter_map(|&entity| actors.get(entity).ok())
            .map(|(_, actor, name, ..)| (name.0.clone(), actor.spec.clone()))
            .collect();
        let addressable: Vec<conversation::Addressable<'_>> = named
            .iter()
            .map(|(label, key)| conversation::Addressable { label, key })
            .collect();
        let (to, utterance) = match conversation::read_player_line(&line.text, &addressable) {
            conversation::PlayerLine::Goodbye => {
                if let Some(with) = conversation.with.take() {
                    events.write(ConversationEvent::Ended(with));
                }
                continue;
            }
            conversation::PlayerLine::Ambiguous => {
                events.write(ConversationEvent::Notice(
                    conversation::BE_SPECIFIC.to_owned(),
                ));
                continue;
            }
            conversation::PlayerLine::Unknown(name) => {
                events.write(ConversationEvent::Notice(format!(
                    "Nobody here is called {name}."
                )));
                continue;
            }
            conversation::PlayerLine::Addressed { actor, utterance } => {
                let to = visible[actor];
                if conversation.with != Some(to) {
                    if let Some(previous) = conversation.with {
                        events.write(ConversationEvent::Ended(previous));
                    }
                    conversation.with = Some(to);
                    events.write(ConversationEvent::Started(to));
                }
                (to, utterance)
            }
            conversation::PlayerLine::Plain(text) => match conversation.with {
                Some(with) => (with, text),
                None => continue,
            },
        };
        let Ok((.., mut mind, _)) = actors.get_mut(to) else {
            continue;
        };
        // The reply takes the place of whatever the actor was about to do; the
        // conversation goes on from its last answered turn.
        if let Some(pending) = mind.pending.take() {
            queue.pending.remove(&pending);
            bridge.cancel(pending);
            mind.transcript.unanswered();
            mind.asked_again = false;
        }
        mind.reply_to = Some(utterance);
        if !mind.queued {
            mind.queued = true;
            queue.waiting.push_front(to);
        }
    }
}

fn submit_decisions(
    settings: Res<SmartActorSettings>,
    surroundings: Surroundings,
    mut queue: ResMut<ThinkQueue>,
    mut bridge: ResMut<LlmBridge>,
    mut actors: Query<(&SmartActor, &mut ActorMind, Has<InCombat>)>,
    mut out: DecisionWriters,
    mut cache: Local<PromptCache>,
) {
    // Every frame: a change seen only in a frame in which nobody thinks still counts.
    cache.refresh(&surroundings.registry, &settings);
    let Surroundings {
        registry,
        scopes,
        world,
        mut changes,
        history,
        keyed,
        key_holders,
        players,
        builtin,
    } = surroundings;
    // Offers and perceptions are made from the world view and the target scopes.
    changes.watch();
    if queue.waiting.is_empty() {
        return;
    }
    let view = WorldView::from_query(&world);
    let revisions = changes.revise(&view);
    let revision = revisions.revision();
    let mut offers = ActionOffers::new(&view, &scopes);
    let plots: Vec<&str> = settings.recall.plots.iter().map(String::as_str).collect();
    let tag_index = registry.tags();
    let held = keys_by_holder(&keyed, tag_index);
    // What makes an offered action relevant to an actor: a player among its targets,
    // or a target whose narrative key its recalled memories are tagged with.
    // Gathered when the first offer of the frame is weighed.
    let players: SmallVec<[Entity; 2]> = players.iter().collect();
    let mut with_key: Option<HashMap<&str, SmallVec<[Entity; 1]>>> = None;
    let mut remembered: SmallVec<[Entity; 8]> = SmallVec::new();
    // Whether each menu of the frame reads only the built-in scopes, found once.
    let mut builtin_only: SmallVec<[(ActionMenu, bool); 4]> = SmallVec::new();
    let budgets = &settings.budgets;
    // Each actor's user message is written here; the buffers serve every actor of
    // the frame.
    let mut user = PromptPart::default();
    let mut memories: Vec<&str> = Vec::new();
    let mut memory_ids: Vec<u64> = Vec::new();
    for _ in 0..settings.max_new_thinkers_per_frame {
        let Some(entity) = queue.waiting.pop_front() else {
            break;
        };
        let Ok((actor, mind, fighting)) = actors.get_mut(entity) else {
            continue;
        };
        let mind = mind.into_inner();
        mind.queued = false;
        let Some(spec) = registry.actor(&actor.spec) else {
            out.rejected.write(DecisionRejected {
                actor: entity,
                reason: RejectionReason::UnknownSpec(actor.spec.clone()),
                raw: String::new(),
                fallback: None,
            });
            continue;
        };
        let template = registry.prompt_for(spec).unwrap_or(&builtin);
        // Budgets are in the server's tokens; prompts are measured in estimates.
        let affinity = entity.to_bits();
        let scale = TokenScale::from_tokens_per_char(bridge.tokens_per_char(Some(affinity)));
        let reply_to = mind.reply_to.take();
        let player_says = reply_to
            .as_deref()
            .map(|words| fit_words(words, scale.to_estimate(budgets.player_says)));
        let limits = DecisionLimits {
            max_speech_chars: spec.policy.speech_limit(settings.limits.max_speech_chars),
            max_color_lines: spec
                .policy
                .color_line_limit(settings.limits.max_color_lines),
            ..settings.limits.clone()
        };
        let context = context_tags(entity, &view, &keyed, &held, tag_index);
        let recalled = history.retrieve(&MemoryQuery {
            actor: spec.store_key(),
            plots: &plots,
            tags: &context,
            k: settings.recall.k,
            token_budget: scale.to_estimate(settings.recall.token_budget),
        });
        memories.clear();
        memories.extend(recalled.iter().map(|m| m.text.as_str()));
        memory_ids.clear();
        memory_ids.extend(recalled.iter().map(|m| m.id));
        // What is around the actor last changed then; anything at all, at `revision`.
        let around = revisions.changed_at(view.place_of(entity));
        let (perceived_at, perception) = &mut mind.perceived;
        if *perceived_at < around {
            *perceived_at = revision;
            perception.clear();
            write_surroundings(perception, &view, entity);
        }
        let seen = fit_lines(&mind.perceived.1, scale.to_estimate(budgets.perception));
        let shown_offer = &mut mind.shown_offer;
        let offered = if reply_to.is_some() {
            shown_offer.made_from = None;
            OfferedActions::default()
        } else {
            let menu = cache.menu(&registry, spec, fighting, &settings.combat_verbs);
            let builtin = match builtin_only.iter().find(|(known, _)| known.shares(menu)) {
                Some(&(_, builtin)) => builtin,
                None => {
                    let builtin = menu.reads_only_builtin_scopes(&scopes);
                    builtin_only.push((menu.clone(), builtin));
                    builtin
                }
            };
            let changed_at = if builtin { around } else { revision };
            match &shown_offer.made_from {
                Some((made, at)) if made.shares(menu) && *at >= changed_at => {
                    shown_offer.offered.clone()
                }
                _ => {
                    shown_offer.made_from = Some((menu.clone(), revision));
                    offers.offer_again(menu, entity, &shown_offer.offered)
                }
            }
        };
        let system = cache.system(spec, template, &limits);
        // The offer gets what the rest of a fresh prompt leaves of the budget, fixed
        // for the life of the transcript.
        if !mind.transcript.continues(&system.message.content) {
            user.text.clear();
            user.sections.clear();
            write_decision_user_prompt(
                &mut user,
                template,
                &DecisionContext {
                    perception: seen,
                    memories: &memories,
                    player_says: player_says.as_deref(),
                    ..DecisionContext::default()
                },
            );
            let rest = estimate_tokens(&system.message.content) + estimate_tokens(&user.text);
            mind.actions_budget = scale.to_estimate(budgets.total).saturating_sub(rest);
        }
        let for_actions = mind.actions_budget;
        let shown_offer = &mut mind.shown_offer;
        if !shown_offer.shows(&offered, for_actions) {
            let with_key = with_key.get_or_insert_with(|| {
                let mut with_key: HashMap<&str, SmallVec<[Entity; 1]>> = HashMap::new();
                for (entity, key) in &key_holders {
                    with_key.entry(key.0.as_str()).or_default().push(entity);
                }
                with_key
            });
            remembered.clear();
            let tags = recalled.iter().flat_map(|memory| &memory.tags);
            remembered.extend(
                tags.filter_map(|tag| with_key.get(tag.as_str()))
                    .flatten()
                    .copied(),
            );
            let relevance = |action: &AvailableAction<'_>| {
                let player = action.targets.iter().any(|target| players.contains(target));
                let known = action.targets.iter().any(|t| remembered.contains(t));
                2 * u32::from(player) + u32::from(known)
            };
            let lifeline = |action: &AvailableAction<'_>| {
                registry.action(action.action_id).and_then(Lifeline::of)
            };
            let count = offered.len();
            let left_out = shown_offer.show(
                offered,
                for_actions,
                &*registry,
                &settings.block,
                relevance,
                lifeline,
            );
            if left_out * 2 > count && !mind.trimming_reported {
                mind.trimming_reported = true;
                warn!(
                    "smart actor {entity} ({}): {left_out} of its {count} offered actions were \
                     left out to fit {for_actions} estimated tokens; raise \
                     PromptBudgets::total or shorten its persona",
                    actor.spec
                );
                out.trimmed.write(OfferTrimmed {
                    actor: entity,
                    offered: count,
                    left_out,
                    budget: for_actions,
                });
            }
        }
        let offered = mind.shown_offer.trimmed.clone();
        let block = mind.shown_offer.block.as_str();
        let shown = Shown {
            system: &system.message.content,
            actions: block,
            actions_fingerprint: mind.shown_offer.block_fingerprint,
            perception: seen,
            memories: &memory_ids,
        };
        let note = mind.note.take();
        // A transcript starts again before it outgrows its budget, or the context a
        // server said one of its slots holds, with room for the answer.
        let mut transcript_budget = budgets.transcript;
        if let Some(context) = bridge.context_per_slot(Some(affinity)) {
            let room = context.saturating_sub(limits.max_answer_tokens()) as usize;
            transcript_budget = transcript_budget.min(room);
        }
        let mut turn = mind.transcript.next_turn(
            &shown,
            &system.sections,
            scale.to_estimate(transcript_budget),
            |plan| {
                let new_memories: Vec<&str>;
                let context = match plan {
                    TurnPlan::Fresh => DecisionContext {
                        perception: seen,
                        memories: &memories,
                        player_says: player_says.as_deref(),
                        actions_block: block,
                        note: None,
                    },
                    TurnPlan::Append {
                        actions,
                        perception,
                        memories: new,
                    } => {
                        new_memories = new.iter().map(|&i| memories[i]).collect();
                        DecisionContext {
                            perception: if *perception { seen } else { "" },
                            memories: &new_memories,
                            player_says: player_says.as_deref(),
                            actions_block: if *actions { block } else { SAME_ACTIONS },
                            note: note.as_deref(),
                        }
                    }
                };
                user.text.clear();
                user.sections.clear();
                write_decision_user_prompt(&mut user, template, &context);
                (
                    Arc::from(user.text.as_str()),
                    std::mem::take(&mut user.sections),
                )
            },
        );
        for section in &mut turn.sections {
            section.tokens = scale.to_server(section.tokens);
        }
        let name = Arc::clone(&system.name);
        let request = LlmRequest {
            messages: Arc::clone(&turn.messages),
            schema: Some(cache.schema(&offered, &limits)),
            intent: RequestIntent::Decision {
                actor: name,
                offered: Arc::new(offered.clone()),
            },
            sampling: SamplingOptions {
                max_tokens: Some(limits.max_answer_tokens()),
                ..SamplingOptions::default()
            },
            // Each actor's requests go to the same server (and slot), which keeps
            // its prompt prefix.
            affinity: Some(affinity),
            // The player waits for a reply; background thinking can wait.
            priority: if reply_to.is_some() {
                Priority::Dialogue
            } else {
                Priority::Background
            },
            ..default()
        };
        let id = bridge.submit(request);
        queue.pending.insert(id, entity);
        mind.pending = Some(id);
        mind.replying_to = reply_to;
        mind.cooldown = spec.policy.cooldown_turns;
        mind.offered = offered.clone();
        mind.fighting = fighting;
        mind.limits = limits;
        out.requested.write(DecisionRequested {
            actor: entity,
            request: id,
            messages: turn.messages,
            offered,
            sections: turn.sections,
            reused_prefix: turn.reused_prefix,
        });
    }
}

/// What an appended turn says in place of an offer that did not change.
const SAME_ACTIONS: &str =
    "<available_actions>\nThe same actions as before, with the same numbers.\n</available_actions>";

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

/// The narrative keys of what each place holds and each character carries, each
/// followed by its indexed tags: gathered once a frame for every actor there.
fn keys_by_holder<'k>(
    keyed: &'k Query<(&NarrativeKey, Option<&InPlace>, Option<&CarriedBy>)>,
    index: &'k TagIndex,
) -> HashMap<Entity, Vec<&'k str>> {
    let mut held: HashMap<Entity, Vec<&str>> = HashMap::new();
    for (key, in_place, carried) in keyed {
        let tags = index.tags_of(&key.0);
        for holder in [in_place.map(|p| p.0), carried.map(|c| c.0)]
            .into_iter()
            .flatten()
        {
            let words = held.entry(holder).or_default();
            words.push(&key.0);
            words.extend(tags.iter().map(String::as_str));
        }
    }
    held
}

/// The words an actor's memories are recalled by: the narrative keys around it (its
/// own, its place's, and those of everything in that place or carried by it) and
/// their tags in the content's [`TagIndex`].
fn context_tags<'k>(
    actor: Entity,
    view: &WorldView,
    keyed: &'k Query<(&NarrativeKey, Option<&InPlace>, Option<&CarriedBy>)>,
    held: &HashMap<Entity, Vec<&'k str>>,
    index: &'k TagIndex,
) -> Vec<&'k str> {
    let place = view.place_of(actor);
    let mut tags: Vec<&str> = Vec::new();
    for holder in [Some(actor), place].into_iter().flatten() {
        tags.extend(held.get(&holder).into_iter().flatten().copied());
        if let Ok((key, ..)) = keyed.get(holder) {
            tags.push(&key.0);
            tags.extend(index.tags_of(&key.0).iter().map(String::as_str));
        }
    }
    tags.sort_unstable();
    tags.dedup();
    tags
}

/// Writes what each smart actor witnessed into its memory (under its spec's store
/// key): the narration of every action in its place, and what others there said.
fn remember_what_was_witnessed(
    registry: Res<ContentRegistry>,
    clock: Res<TurnClock>,
    mut history: ResMut<HistoryStore>,
    mut narrated: MessageReader<crate::narration::NarrationText>,
    mut spoke: MessageReader<ActorSpoke>,
    actors: Query<(Entity, &SmartActor, Option<&InPlace>)>,
    about: Query<(
        Option<&NarrativeKey>,
        Option<&InPlace>,
        Option<&DisplayName>,
    )>,
) {
    let key = |entity: Entity| about.get(entity).ok()?.0.map(|k| k.0.clone());
    // An actor whose spec is not loaded never thinks; its memories wait under its id.
    let store_key = |actor: &SmartActor| {
        let key = registry
            .actor(&actor.spec)
            .map_or(actor.spec.as_str(), |spec| spec.store_key());
        MemoryScope::Actor(key.to_owned())
    };
    let place_of = |entity: Entity| about.get(entity).ok()?.1.map(|p| p.0);
    let witnesses = |place: Option<Entity>| {
        actors
            .iter()
            .filter(move |(_, _, in_place)| place.is_some() && in_place.map(|p| p.0) == place)
    };
    for text in narrated.read().filter(|t| t.is_final) {
        let report = &text.report;
        let place = place_of(report.actor);
        let mut tags: Vec<String> = [
            Some(report.actor),
            report.object,
            report.indirect_object,
            report.instrument,
            place,
        ]
        .into_iter()
        .flatten()
        .filter_map(key)
        .collect();
        tags.sort_unstable();
        tags.dedup();
        for (_, actor, _) in witnesses(place) {
            history.append(NewMemory {
                text: text.text.clone(),
                tags: tags.clone(),
                scope: Some(store_key(actor)),
                turn: clock.turn,
                source: "witnessed".to_owned(),
                pinned: false,
            });
        }
    }
    for line in spoke.read() {
        let place = place_of(line.actor);
        let speaker = about
            .get(line.actor)
            .ok()
            .and_then(|(_, _, name)| name)
            .map_or("Someone", |n| n.0.as_str());
        let heard = format!("{speaker} said: \"{}\"", line.text);
        let tags: Vec<String> = [Some(line.actor), place]
            .into_iter()
            .flatten()
            .filter_map(key)
            .collect();
        for (listener, actor, _) in witnesses(place) {
            if listener == line.actor {
                continue;
            }
            history.append(NewMemory {
                text: heard.clone(),
                tags: tags.clone(),
                scope: Some(store_key(actor)),
                turn: clock.turn,
                source: "heard".to_owned(),
                pinned: false,
            });
        }
    }
}

fn apply_decisions(
    settings: Res<SmartActorSettings>,
    clock: Res<TurnClock>,
    registry: Res<ContentRegistry>,
    mut responses: MessageReader<LlmResponse>,
    mut queue: ResMut<ThinkQueue>,
    mut actors: Query<(&mut ActorMind, Option<&SmartActor>, Option<&DisplayName>)>,
    mut out: DecisionWriters,
) {
    for response in responses.read() {
        let Some(entity) = queue.pending.remove(&response.id) else {
            continue;
        };
        // An actor despawned while thinking has nobody to act for.
        let Ok((mut mind, actor, name)) = actors.get_mut(entity) else {
            continue;
        };
        if mind.pending != Some(response.id) {
            continue;
        }
        mind.pending = None;
        let asked_again = std::mem::take(&mut mind.asked_again);
        let replying_to = mind.replying_to.take();
        match &response.result {
            // The answer stays in the actor's conversation with the model, used or not.
            Ok(reply) => mind.transcript.answered(&reply.text),
            Err(LlmError::ContextExceeded { .. }) => mind.transcript.forget(),
            // The server still holds what it read of the conversation.
            Err(_) => mind.transcript.unanswered(),
        }
        if let Err(LlmError::ContextExceeded { detail, .. }) = &response.result
            && !asked_again
        {
            info!("smart actor {entity}: {detail}; asking again from a fresh prompt");
            mind.asked_again = true;
            mind.reply_to = mind.reply_to.take().or(replying_to);
            if !mind.queued {
                mind.queued = true;
                queue.waiting.push_front(entity);
            }
            continue;
        }
        mind.next_turn = clock.turn + 1 + u64::from(mind.cooldown);
        let offered = std::mem::take(&mut mind.offered);
        let spec = actor.and_then(|actor| registry.actor(&actor.spec));
        let raw = response
            .result
            .as_ref()
            .map_or("", |reply| reply.text.as_str());
        let decision = match &response.result {
            Ok(_) => parse_decision(raw, offered.len(), &mind.limits).and_then(|decision| {
                let Answer::Utterance(line) = &decision.answer else {
                    return Ok(decision);
                };
                let permitted = |action: &ActionDefinition| {
                    spec.is_some_and(|spec| {
                        permits(spec, &settings.combat_verbs, mind.fighting, action)
                    })
                };
                let index = match_utterance(line, &offered, &registry, permitted)?;
                Ok(Decision {
                    answer: Answer::Action {
                        index,
                        speech: String::new(),
                    },
                    thought: decision.thought,
                })
            }),
            Err(error) => {
                warn!("smart actor {entity} gets no decision: {error}");
                Err(RejectionReason::NoAnswer(error.clone()))
            }
        };
        let chosen = decision
            .as_ref()
            .ok()
            .and_then(Decision::action)
            .and_then(|index| offered.get(index));
        // Combat always advances: anything but a combat action is a pass.
        let hesitates = mind.fighting && chosen.is_none();
        if hesitates {
            out.hesitated.write(ActorHesitated {
                actor: entity,
                line: format!("{} hesitates.", name.map_or("Someone", |n| n.0.as_str())),
                reason: decision.as_ref().err().cloned(),
            });
        }
        let decision = match decision {
            Ok(decision) => decision,
            Err(reason) => {
                if response.result.is_ok() {
                    warn!("smart actor {entity}: decision rejected: {reason}");
                    mind.note = Some(format!("Your last answer was not used: {reason}."));
                }
                let fallback = match &settings.fallback {
                    DecisionFallback::Action(id) if !mind.fighting => {
                        offered.iter().find(|a| a.action_id == id.as_str())
                    }
                    _ => None,
                };
                if let Some(fallback) = fallback {
                    out.requests.write(request_for(entity, &fallback));
                }
                out.rejected.write(DecisionRejected {
                    actor: entity,
                    reason,
                    raw: raw.to_owned(),
                    fallback: fallback.map(|f| f.command.to_owned()),
                });
                continue;
            }
        };
        if hesitates {
            continue;
        }
        if let Some(chosen) = chosen {
            out.requests.write(request_for(entity, &chosen));
        }
        let speech = decision.speech();
        if !speech.is_empty() {
            out.spoke.write(ActorSpoke {
                actor: entity,
                text: speech.to_owned(),
            });
        }
    }
}

/// The request to carry out an offered action.
fn request_for(actor: Entity, action: &AvailableAction) -> ActionRequest {
    ActionRequest {
        actor,
        action_id: action.action_id.to_string(),
        targets: action.targets.to_vec(),
        command: action.command.to_owned(),
    }
}
