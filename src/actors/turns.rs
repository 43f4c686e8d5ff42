//! Who thinks when: a turn queues every eligible actor, the player's words queue the
//! actor they are for (in place of its own action), and actors that left are forgotten.

use std::time::Duration;

use bevy::prelude::*;

use super::conversation;
use super::{
    ActorMind, Conversation, ConversationUpdate, PlayerSaid, SmartActor, SmartActorSettings,
    ThinkQueue, TurnClock, TurnEnded,
};
use crate::llm::{LlmBridge, RequestId};
use crate::world::{DisplayName, InPlace, Player};

/// Cancels the requests of actors that were despawned or stopped being smart actors:
/// nobody is left to act on their answers.
pub(super) fn forget_departed_actors(
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

pub(super) fn start_turns(
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
        if mind.state.ready_for(clock.turn) && mind.queue(None) {
            queue.waiting.push_back(entity);
        }
    }
}

/// Reads the player's lines: starts and ends conversations, and has the actor talked
/// with reply to each line, in place of its own action this turn.
pub(super) fn hear_the_player(
    mut lines: MessageReader<PlayerSaid>,
    mut conversation: ResMut<Conversation>,
    mut events: MessageWriter<ConversationUpdate>,
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
            events.write(ConversationUpdate::Ended(with));
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
                    events.write(ConversationUpdate::Ended(with));
                }
                continue;
            }
            conversation::PlayerLine::Ambiguous => {
                events.write(ConversationUpdate::Notice(
                    conversation::BE_SPECIFIC.to_owned(),
                ));
                continue;
            }
            conversation::PlayerLine::Unknown(name) => {
                events.write(ConversationUpdate::Notice(format!(
                    "Nobody here is called {name}."
                )));
                continue;
            }
            conversation::PlayerLine::Addressed { actor, utterance } => {
                let to = visible[actor];
                if conversation.with != Some(to) {
                    if let Some(previous) = conversation.with {
                        events.write(ConversationUpdate::Ended(previous));
                    }
                    conversation.with = Some(to);
                    events.write(ConversationUpdate::Started(to));
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
        if let Some(pending) = mind.state.pending() {
            queue.pending.remove(&pending.request);
            bridge.cancel(pending.request);
            mind.transcript.unanswered();
        }
        if mind.queue(Some(utterance)) {
            queue.waiting.push_front(to);
        }
    }
}
