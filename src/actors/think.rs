//! Thinking: each queued actor's prompt is assembled from its spec, what it perceives,
//! what it recalls and what it is offered (trimmed to its budget, and kept while the
//! world around it does not change), and sent through the bridge.
//!
//! [`submit_decisions`] only gathers from the ECS and writes what comes of each actor;
//! the offer is chosen, weighed and shown in [`offer`], the turn's message and request
//! written in [`turn`].

mod abilities;
mod offer;
mod turn;
mod warm_up;

pub(super) use warm_up::warm_up_new_actors;

use bevy::platform::collections::HashMap;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use smallvec::SmallVec;

use super::mind::{FreshBudgets, Perceived};
use super::prompt_cache::PromptCache;
use super::{
    ActorMind, DecisionRejected, DecisionRequested, DecisionWriters, HistoryStore, InCombat,
    MemoryEntry, MemoryQuery, OfferTrimmed, PendingDecision, RejectionReason, SmartActor,
    SmartActorSettings, ThinkQueue, ThinkState,
};
use crate::content::{ActorSpec, ContentRegistry, PromptTemplate, TagIndex};
use crate::llm::{LlmBridge, LlmRequest};
use crate::prompt::{
    DecisionContext, DecisionLimits, PromptPart, TokenScale, TrimScratch, TurnPlan, TurnPrompt,
    ability_tools, fit_said, text_fingerprint,
};
use crate::world::{
    ActionMenu, ActionOffers, CarriedBy, InPlace, NarrativeKey, OfferedAbilities, OfferedActions,
    PlaceRevisions, Player, ScopeReach, TargetScopes, WorldView, WorldViewChanges, WorldViewQuery,
    write_surroundings,
};
use abilities::{offers_abilities, show_abilities};
pub(super) use offer::ShownOffer;
use turn::{
    decision_limits, decision_request, offline_decision, transcript_budget, write_turn_message,
};

/// Narrative keys, where each is and who carries it.
type KeyedQuery<'w, 's> = Query<
    'w,
    's,
    (
        &'static NarrativeKey,
        Option<&'static InPlace>,
        Option<&'static CarriedBy>,
    ),
>;

/// An actor's place, and the revision at which what is around it last changed
/// ([`PlaceRevisions::changed_at`]).
type Around = (Option<Entity>, u64);

/// What a smart actor thinks about: content, scopes, the place model and its memories.
#[derive(SystemParam)]
pub(super) struct Surroundings<'w, 's> {
    registry: Res<'w, ContentRegistry>,
    scopes: Res<'w, TargetScopes>,
    world: WorldViewQuery<'w, 's>,
    changes: WorldViewChanges<'w, 's>,
    history: Res<'w, HistoryStore>,
    keyed: KeyedQuery<'w, 's>,
    key_holders: Query<'w, 's, (Entity, &'static NarrativeKey)>,
    players: Query<'w, 's, Entity, With<Player>>,
    /// The prompt template of specs that name none.
    builtin: Local<'s, PromptTemplate>,
}

/// Assembles and sends the prompts of up to `max_new_thinkers_per_frame` queued smart
/// actors, each [`ThinkState::Queued`] → [`ThinkState::Waiting`].
pub(super) fn submit_decisions(
    settings: Res<SmartActorSettings>,
    surroundings: Surroundings,
    mut queue: ResMut<ThinkQueue>,
    mut bridge: ResMut<LlmBridge>,
    mut actors: Query<(&SmartActor, &mut ActorMind, Has<InCombat>)>,
    mut out: DecisionWriters,
    kept: Kept,
) {
    let Kept {
        mut cache,
        mut user,
    } = kept;
    let (cache, user) = (&mut *cache, &mut *user);
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
    let mut frame = Frame {
        registry: &registry,
        settings: &settings,
        scopes: &scopes,
        view: &view,
        revisions,
        offers: ActionOffers::new(&view, &scopes),
        history: &history,
        keyed: &keyed,
        held: keys_by_holder(&keyed, registry.tags()),
        key_holders: &key_holders,
        players: players.iter().collect(),
        with_key: None,
        remembered: SmallVec::new(),
        reaches: SmallVec::new(),
        plots: settings.recall.plots.iter().map(String::as_str).collect(),
        builtin: &builtin,
        trim: TrimScratch::default(),
        with_abilities: String::new(),
        perception_changes: String::new(),
    };
    for _ in 0..settings.max_new_thinkers_per_frame {
        let Some(entity) = queue.waiting.pop_front() else {
            break;
        };
        let Ok((actor, mind, fighting)) = actors.get_mut(entity) else {
            continue;
        };
        let mind = mind.into_inner();
        let Some((reply_to, asking_again)) = take_queued(&mut mind.state) else {
            continue;
        };
        let Some(spec) = registry.actor(&actor.spec) else {
            let reason = RejectionReason::UnknownSpec(actor.spec.clone());
            out.rejected
                .write(DecisionRejected::without_answer(entity, reason));
            continue;
        };
        let asked = Asked {
            entity,
            spec,
            spec_id: &actor.spec,
            fighting,
            reply_to,
            asking_again,
        };
        let thought = frame.think(&asked, mind, cache, &bridge, user);
        send(asked, thought, mind, &mut bridge, &mut queue, &mut out);
    }
}

/// Sends `thought`'s request: `asked` now waits on it.
fn send(
    asked: Asked<'_>,
    thought: Thought,
    mind: &mut ActorMind,
    bridge: &mut LlmBridge,
    queue: &mut ThinkQueue,
    out: &mut DecisionWriters,
) {
    if let Some(trimmed) = thought.trimmed {
        out.trimmed.write(trimmed);
    }
    let id = bridge.submit(thought.request);
    queue.pending.insert(id, asked.entity);
    mind.state = ThinkState::Waiting(PendingDecision {
        request: id,
        offered: thought.offered.clone(),
        tasks: thought.tasks.clone(),
        abilities: thought.abilities.clone(),
        fighting: asked.fighting,
        reply_to: asked.reply_to,
        asking_again: asked.asking_again,
        limits: thought.limits,
        cooldown: asked.spec.policy.cooldown_turns,
    });
    out.requested.write(DecisionRequested {
        actor: asked.entity,
        request: id,
        messages: thought.turn.messages,
        offered: thought.offered,
        tasks: thought.tasks,
        abilities: thought.abilities,
        sections: thought.turn.sections,
        reused_prefix: thought.turn.reused_prefix,
        memories: thought.memories,
    });
}

/// What a queued actor was queued with (what the player said to it, and whether it
/// is asked again); `None` for one not queued. A queued actor is left idle until its
/// request is sent, and stays so when its spec is not loaded.
fn take_queued(state: &mut ThinkState) -> Option<(Option<String>, bool)> {
    let ThinkState::Queued {
        reply_to,
        asking_again,
    } = state
    else {
        return None;
    };
    let queued = (reply_to.take(), *asking_again);
    *state = ThinkState::Idle;
    Some(queued)
}

/// What thinking keeps from frame to frame: what prompts share (with warming up), and
/// the buffer each actor's user message is written in.
#[derive(SystemParam)]
pub(super) struct Kept<'w, 's> {
    cache: ResMut<'w, PromptCache>,
    user: Local<'s, PromptPart>,
}

/// A queued actor about to think.
struct Asked<'a> {
    entity: Entity,
    spec: &'a ActorSpec,
    /// The spec's id as the actor names it.
    spec_id: &'a str,
    /// Whether it is in combat.
    fighting: bool,
    /// What the player said to it, to reply to.
    reply_to: Option<String>,
    /// Whether it is asked again after a context overflow.
    asking_again: bool,
}

/// What comes of an actor's thinking: its request and what the request is checked
/// against.
struct Thought {
    request: LlmRequest,
    /// The turn as the transcript sends it.
    turn: TurnPrompt,
    /// What it was offered, trimmed.
    offered: OfferedActions,
    /// The tasks it was offered.
    tasks: OfferedActions,
    /// The abilities it was offered.
    abilities: OfferedAbilities,
    limits: DecisionLimits,
    /// The ids of the memories it recalled.
    memories: SmallVec<[u64; 8]>,
    /// Its offer trimmed past half, reported once an actor.
    trimmed: Option<OfferTrimmed>,
}

/// What every actor thinking in one frame reads, and the working space they share.
struct Frame<'a, 'w, 's> {
    registry: &'a ContentRegistry,
    settings: &'a SmartActorSettings,
    scopes: &'a TargetScopes,
    view: &'a WorldView<'a>,
    revisions: &'a PlaceRevisions,
    offers: ActionOffers<'a>,
    history: &'a HistoryStore,
    keyed: &'a KeyedQuery<'w, 's>,
    /// The narrative keys each place holds and each character carries ([`keys_by_holder`]).
    held: HashMap<Entity, Vec<&'a str>>,
    key_holders: &'a Query<'w, 's, (Entity, &'static NarrativeKey)>,
    players: SmallVec<[Entity; 2]>,
    /// Entities by their narrative key: gathered when the first offer of the frame is
    /// weighed.
    with_key: Option<HashMap<&'a str, SmallVec<[Entity; 1]>>>,
    /// What the actor being weighed remembers.
    remembered: SmallVec<[Entity; 8]>,
    /// How far from an actor each menu of the frame reads, found once.
    reaches: SmallVec<[(ActionMenu, ScopeReach); 4]>,
    /// The plots every actor recalls memories of.
    plots: Vec<&'a str>,
    /// The prompt template of specs that name none.
    builtin: &'a PromptTemplate,
    /// What trimming each offer works in.
    trim: TrimScratch,
    /// The offer's block followed by the abilities block, for an actor offered
    /// abilities.
    with_abilities: String,
    /// What changed in an actor's perception since its transcript last showed it.
    perception_changes: String,
}

impl<'a> Frame<'a, '_, '_> {
    /// Assembles the prompt of `asked`, whose mind is `mind`, and the request that
    /// sends it; `user` is working space.
    fn think(
        &mut self,
        asked: &Asked<'_>,
        mind: &mut ActorMind,
        cache: &mut PromptCache,
        bridge: &LlmBridge,
        user: &mut PromptPart,
    ) -> Thought {
        let (settings, budgets) = (self.settings, &self.settings.budgets);
        let template = self.registry.prompt_for(asked.spec).unwrap_or(self.builtin);
        // Budgets are in the server's tokens; prompts are measured in estimates.
        let affinity = asked.entity.to_bits();
        let scale = TokenScale::from_tokens_per_char(bridge.tokens_per_char(Some(affinity)));
        let player_says = (asked.reply_to.as_deref())
            .map(|words| fit_said(words, scale.to_estimate(budgets.player_says)));
        let limits = decision_limits(asked.spec, &settings.limits);
        let recalled = self.recall(asked, scale);
        let memories: SmallVec<[&str; 8]> = recalled.iter().map(|m| m.text.as_str()).collect();
        let memory_ids: SmallVec<[u64; 8]> = recalled.iter().map(|m| m.id).collect();
        let place = self.view.place_of(asked.entity);
        // What is around the actor last changed then.
        let around = self.revisions.changed_at(place);
        self.perceive(asked.entity, &mut mind.perceived, around);
        let (seen, seen_fingerprint, cut) =
            mind.perceived.fitted(scale.to_estimate(budgets.perception));
        let next = self.offers(asked, &mut mind.shown_offer, cache, (place, around));
        let offered_abilities = self.offer_abilities(asked, cache);
        let as_tools = settings.abilities_as_tools;
        let system = cache.system(asked.spec, template, &limits);
        // The turn's context but its actions and note.
        let whole = DecisionContext {
            perception: seen,
            memories: &memories,
            player_says: player_says.as_deref(),
            fighting: asked.fighting,
            ..DecisionContext::default()
        };
        // Every store numbers its memories from 1: a conversation that showed another
        // store's (before a save was loaded, or a new game begun) starts again, or it
        // would take the new store's memories for ones it showed.
        let store = Some(self.history.instance());
        if std::mem::replace(&mut mind.memories_from, store) != store {
            mind.transcript.forget();
        }
        let context = bridge.context_per_slot(Some(affinity));
        // What a fresh prompt leaves the offer.
        let fresh_budgets = |whole: &DecisionContext<'_>, user: &mut PromptPart| {
            let answer = limits.max_answer_tokens_invoking(&offered_abilities);
            let room = transcript_budget(usize::MAX, context, answer);
            let prompt = (&*system.message.content, template, whole, user);
            let abilities = !offered_abilities.is_empty();
            FreshBudgets::of(settings, scale, (room, abilities), prompt)
        };
        let mut starting = !mind.transcript.continues(&system.message.content);
        if starting {
            mind.budgets = fresh_budgets(&whole, user);
        }
        let (note, fresh_note) = mind.notes.tell(&mut mind.notes_told);
        let mut next = Some(next);
        let mut trimmed;
        // A transcript that outgrew its budget starts again: its fresh prompt shows
        // the offer trimmed to what that prompt leaves it now (the memories and the
        // player's words grow), shown again when that is another budget.
        let (mut turn, abilities, tasks, answer_tokens) = loop {
            let budgets_now = (mind.budgets.actions, mind.budgets.tasks);
            let next = next.take().unwrap_or_default();
            let shown_offer = (&mut mind.shown_offer, budgets_now);
            let reported = mind.trimming_reported;
            trimmed = self.show(asked, shown_offer, reported, next, &recalled);
            let shown_offer = &mind.shown_offer;
            let perceived = (seen, seen_fingerprint);
            let mut shown = shown_offer.shown(&system.message.content, perceived, &memory_ids);
            let mut abilities = OfferedAbilities::default();
            if !offered_abilities.is_empty() {
                let block = &mut self.with_abilities;
                let budget = (mind.budgets.abilities, as_tools);
                abilities = show_abilities(block, shown_offer, &offered_abilities, budget);
                shown.actions_fingerprint = text_fingerprint(block);
                shown.actions = block;
            }
            let turn_context = DecisionContext {
                actions_block: shown.actions,
                note: note.as_deref(),
                ..whole
            };
            let answer_tokens = limits.max_answer_tokens_invoking(&abilities);
            let budget = transcript_budget(budgets.transcript, context, answer_tokens);
            let tasks = shown_offer.shown_tasks().clone();
            let changes = &mut self.perception_changes;
            let mut write = |plan: &TurnPlan, shown_perception: &str, user: &mut PromptPart| {
                let note = fresh_note.as_deref();
                // A perception cut to its budget may have lost a line that is still
                // true: it is said whole.
                let before = if cut { "" } else { shown_perception };
                let shown = (&turn_context, !tasks.is_empty());
                write_turn_message(user, template, plan, shown, (before, changes), note);
            };
            let transcript = &mut mind.transcript;
            let budget = scale.to_estimate(budget);
            if !starting
                && let Some(turn) = transcript.append_turn(&shown, budget, user, &mut write)
            {
                break (turn, abilities, tasks, answer_tokens);
            }
            if !std::mem::replace(&mut starting, true) {
                let fresh = fresh_budgets(&whole, user);
                if fresh != mind.budgets {
                    mind.budgets = fresh;
                    continue;
                }
            }
            let turn = transcript.fresh_turn(&shown, &system.sections, user, write);
            break (turn, abilities, tasks, answer_tokens);
        };
        if let Some(trimmed) = &trimmed {
            mind.trimming_reported = true;
            warn!(
                "smart actor {} ({}): {} of its {} offered actions were left out to fit {} \
                 estimated tokens; raise PromptBudgets::total or shorten its persona",
                asked.entity, asked.spec_id, trimmed.left_out, trimmed.offered, trimmed.budget
            );
        }
        let shown_offer = &mind.shown_offer;
        (turn.sections.iter_mut())
            .for_each(|section| section.tokens = scale.to_server(section.tokens));
        let offered = shown_offer.trimmed().clone();
        let offline = offline_decision(&system.name, (&offered, &tasks), (&abilities, as_tools));
        let schema = cache.schema((&offered, &tasks), (&abilities, as_tools), &limits);
        let mut request = decision_request(
            std::sync::Arc::clone(&turn.messages),
            schema,
            offline,
            answer_tokens,
            affinity,
            asked.reply_to.is_some(),
        );
        if as_tools && !abilities.is_empty() {
            request.tools = Some(std::sync::Arc::new(ability_tools(&abilities)));
        }
        Thought {
            request,
            turn,
            offered,
            tasks,
            abilities,
            limits,
            memories: memory_ids,
            trimmed,
        }
    }

    /// The memories `asked` recalls: by its spec's store, the settings' plots, and the
    /// narrative keys around it ([`context_tags`]).
    fn recall(&self, asked: &Asked<'_>, scale: TokenScale) -> Vec<&'a MemoryEntry> {
        let recall = &self.settings.recall;
        let tag_index = self.registry.tags();
        let context = context_tags(asked.entity, self.view, self.keyed, &self.held, tag_index);
        self.history.retrieve(&MemoryQuery {
            actor: asked.spec.store_key(),
            plots: &self.plots,
            tags: &context,
            k: recall.k,
            token_budget: scale.to_estimate(recall.token_budget),
        })
    }

    /// Writes again what `actor` perceives when what is `around` it changed since it
    /// last did.
    fn perceive(&self, actor: Entity, perceived: &mut Perceived, around: u64) {
        if perceived.is_older_than(around) {
            let revision = self.revisions.revision();
            perceived.rewrite(revision, |text| write_surroundings(text, self.view, actor));
        }
    }

    /// The abilities `asked` may invoke now: those its spec allows, when the settings
    /// offer them (in a conversation, by default), never in a fight.
    fn offer_abilities(&self, asked: &Asked<'_>, cache: &mut PromptCache) -> OfferedAbilities {
        let when = self.settings.offer_abilities;
        if !offers_abilities(when, asked.reply_to.is_some(), asked.fighting) {
            return OfferedAbilities::default();
        }
        let definitions = cache.abilities(self.registry, asked.spec).iter().cloned();
        OfferedAbilities::new(definitions, self.view, self.scopes, asked.entity)
    }
}

/// The narrative keys of what each place holds and each character carries, each
/// followed by its indexed tags: gathered once a frame for every actor there.
fn keys_by_holder<'k>(keyed: &'k KeyedQuery, index: &'k TagIndex) -> HashMap<Entity, Vec<&'k str>> {
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
    keyed: &'k KeyedQuery,
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
