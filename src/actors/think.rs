//! Thinking: each queued actor's prompt is assembled from its spec, what it perceives,
//! what it recalls and what it is offered (trimmed to its budget, and kept while the
//! world around it does not change), and sent through the bridge.

use std::collections::HashMap;
use std::sync::Arc;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use smallvec::SmallVec;

use super::prompt_cache::PromptCache;
use super::{
    ActorMind, DecisionRejected, DecisionRequested, DecisionWriters, HistoryStore, InCombat,
    MemoryQuery, OfferTrimmed, PendingDecision, RejectionReason, SmartActor, SmartActorSettings,
    ThinkQueue, ThinkState,
};
use crate::content::{ContentRegistry, PromptTemplate, TagIndex};
use crate::llm::{LlmBridge, LlmRequest, Priority, SamplingOptions};
use crate::prompt::{
    BlockOptions, DecisionContext, DecisionLimits, Lifeline, OfflineDecision, PromptPart, Shown,
    TokenScale, TurnPlan, estimate_tokens, fit_lines, fit_words, text_fingerprint, trim_mask,
    write_available_actions, write_decision_user_prompt,
};
use crate::world::{
    ActionMenu, ActionOffers, AvailableAction, CarriedBy, InPlace, NarrativeKey, OfferedActions,
    Player, TargetScopes, WorldView, WorldViewChanges, WorldViewQuery, write_surroundings,
};

/// The last offer an actor was shown, trimmed to its budget and written as a block:
/// the same offer next turn is shown the same way without trimming or writing it again.
#[derive(Debug, Clone, Default)]
pub(super) struct ShownOffer {
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
    /// ([`trim_mask`]) when its block (from `registry` with `options`) does not fit
    /// whole. The same offer and budget as last time are trimmed the same way, so an
    /// unchanged world keeps its prompt. Returns how many of its actions were left out.
    fn show(
        &mut self,
        offered: OfferedActions,
        budget: usize,
        registry: &ContentRegistry,
        options: &BlockOptions,
        relevance: impl Fn(&AvailableAction<'_>) -> u32,
        lifeline: impl Fn(&AvailableAction<'_>) -> Option<Lifeline>,
    ) -> usize {
        let write = |shown: &mut Self| {
            shown.trimmed = offered.clone();
            shown.trimmed.leave_out(&shown.mask);
            shown.block.clear();
            write_available_actions(&mut shown.block, &shown.trimmed, registry, options);
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
            self.mask = trim_mask(&offered, budget, relevance, lifeline, registry, options);
            write(self);
        }
        self.block_fingerprint = text_fingerprint(&self.block);
        self.offered = offered;
        self.shown = true;
        self.budget = budget;
        self.mask.iter().filter(|&&left_out| left_out).count()
    }
}

/// What a smart actor thinks about: content, scopes, the place model and its memories.
#[derive(SystemParam)]
pub(super) struct Surroundings<'w, 's> {
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

pub(super) fn submit_decisions(
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
        let ThinkState::Queued {
            reply_to,
            asking_again,
        } = &mut mind.state
        else {
            continue;
        };
        let (reply_to, asking_again) = (reply_to.take(), *asking_again);
        // Until its request is sent; an actor whose spec is not loaded stays so.
        mind.state = ThinkState::Idle;
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
                &registry,
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
            offline: Some(Arc::new(OfflineDecision {
                actor: name,
                offered: offered.clone(),
            })),
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
        mind.state = ThinkState::Waiting(PendingDecision {
            request: id,
            offered: offered.clone(),
            fighting,
            reply_to,
            asking_again,
            limits,
            cooldown: spec.policy.cooldown_turns,
        });
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
