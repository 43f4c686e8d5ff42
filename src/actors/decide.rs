//! Deciding: an answer is parsed and checked against what was offered; a valid one
//! becomes an [`ActionRequest`] and what the actor said, anything else a
//! [`DecisionRejected`] and the fallback. An answer that never came keeps the
//! conversation; a prompt too long for the server's context is asked once more, fresh.

use bevy::prelude::*;

use super::{
    ActionRequest, ActorHesitated, ActorMind, ActorPassed, ActorSpoke, Decision, DecisionFallback,
    DecisionRejected, DecisionWriters, RejectionReason, SmartActor, SmartActorSettings, ThinkQueue,
    TurnClock, permits,
};
use crate::content::{ActionDefinition, ContentRegistry};
use crate::llm::{LlmError, LlmResponse};
use crate::prompt::read_decision;
use crate::world::{AvailableAction, DisplayName};

pub(super) fn apply_decisions(
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
            Ok(_) => {
                let permitted = |action: &ActionDefinition| {
                    spec.is_some_and(|spec| {
                        permits(spec, &settings.combat_verbs, mind.fighting, action)
                    })
                };
                read_decision(raw, &offered, &registry, permitted, &mind.limits)
            }
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
        } else if chosen.is_none() {
            out.passed.write(ActorPassed {
                actor: entity,
                thought: decision.thought,
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
