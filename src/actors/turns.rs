//! Who thinks when: a turn queues every eligible actor (not one [following a
//! plan](crate::world::FollowingPlan); a fight stops the plan, and a plan that starts
//! withdraws the decision its actor was about to make), the player's words queue the
//! actor they are for (in place of its own action), and actors that left are forgotten.

use std::time::Duration;

use bevy::prelude::*;

use super::conversation;
use super::{
    ActorMind, Conversation, ConversationUpdate, InCombat, PlayerSaid, SmartActor,
    SmartActorSettings, ThinkQueue, ThinkState, TurnClock,
};
use crate::llm::{LlmBridge, RequestId};
use crate::world::{
    DisplayName, FollowingPlan, Player, StopPlan, TurnsEnded, WhereItIs, Whereabouts, Witnessed,
    WorldView, WorldViewQuery, place_of, printable, prompt_name,
};

/// Why a fight stops a plan, as the actor's next prompt tells it.
pub(super) const FIGHT_STOPS_PLAN: &str = "a fight broke out";

/// Cancels the requests of actors that were despawned or stopped being smart actors:
/// nobody is left to act on their answers. One that is still there (its mind kept)
/// goes back to `Idle`, with the turn it was asked taken back, so it thinks again on
/// the next turn once it is a smart actor again. A conversation with one ends.
pub(super) fn forget_departed_actors(
    mut departed: RemovedComponents<SmartActor>,
    mut queue: ResMut<ThinkQueue>,
    mut bridge: ResMut<LlmBridge>,
    mut minds: Query<&mut ActorMind>,
    (mut conversation, mut updates): (ResMut<Conversation>, MessageWriter<ConversationUpdate>),
) {
    for entity in departed.read() {
        if conversation.with == Some(entity) {
            conversation.with = None;
            updates.write(ConversationUpdate::Ended(entity));
        }
        match minds.get_mut(entity) {
            Ok(mut mind) if mind.is_thinking() => queue.withdraw(entity, &mut mind, &mut bridge),
            Ok(_) => {}
            // Despawned: its place in the queue too.
            Err(_) => queue.waiting.retain(|&waiting| waiting != entity),
        }
        // Its requests still out, as the queue knows them: a despawned actor's
        // decision, a warm-up.
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

/// Queues again the actors waiting on a bridge that was replaced (a game that inserts
/// a new [`LlmBridge`], to change servers): the old one's answers never come. Each
/// one's turn is taken back, and it is asked again, before those queued since, as it
/// was asked (what the player said to it, whether it was asking again). An answer the
/// old bridge passed on before the new one is seen, in the frame it was replaced, is
/// not applied.
pub(super) fn ask_a_new_bridge(
    mut queue: ResMut<ThinkQueue>,
    bridge: Res<LlmBridge>,
    mut minds: Query<&mut ActorMind>,
) {
    let serial = bridge.serial();
    if queue.bridge.replace(serial) == Some(serial) {
        return;
    }
    let mut lost: Vec<(RequestId, Entity)> = (queue.pending)
        .extract_if(|&id, _| !bridge.issued(id))
        .collect();
    // The first asked goes first.
    lost.sort_unstable();
    let mut asked_again = 0;
    for &(id, entity) in lost.iter().rev() {
        let Ok(mut mind) = minds.get_mut(entity) else {
            continue;
        };
        // A warm-up's answer was never going to be read.
        let ThinkState::Waiting(pending) = &mut mind.state else {
            continue;
        };
        if pending.request != id {
            continue;
        }
        let reply_to = pending.reply_to.take();
        let asking_again = pending.asking_again;
        mind.take_back_turn();
        mind.state = ThinkState::Queued {
            reply_to,
            asking_again,
        };
        queue.waiting.push_front(entity);
        asked_again += 1;
    }
    if asked_again > 0 {
        warn!(
            "the LLM bridge was replaced: {asked_again} smart actors waiting on the old one's answers ask the new one"
        );
    }
}

/// Actors a plan was put on since the last frame, out of combat.
type NewlyPlanned = (Added<FollowingPlan>, Without<InCombat>);

/// A plan put on an actor ([`FollowingPlan`] added) decides for it from then on: the
/// decision it was queued for or waits on is withdrawn, its request cancelled and the
/// turn taken back, unless it answers the player or fights. Seen the frame after the
/// plan lands: an answer read in the very frame a plan starts is applied, as one
/// that came just before it, but for a task it chose, which does not replace the plan.
pub(super) fn let_plans_decide(
    mut queue: ResMut<ThinkQueue>,
    mut bridge: ResMut<LlmBridge>,
    mut planned: Query<(Entity, &mut ActorMind), NewlyPlanned>,
) {
    for (entity, mut mind) in &mut planned {
        if mind.is_thinking() && mind.words_unanswered().is_none() {
            queue.withdraw(entity, &mut mind, &mut bridge);
        }
    }
}

/// A smart actor a turn may queue: its mind, and whether a plan decides for it and
/// whether it fights.
type TurnTaker = (
    Entity,
    &'static mut ActorMind,
    Has<FollowingPlan>,
    Has<InCombat>,
);

/// The real-time cadence's clock: the frame's time, and how long since the cadence
/// last fired.
#[derive(bevy::ecs::system::SystemParam)]
pub(super) struct CadenceClock<'w, 's> {
    time: Res<'w, Time>,
    since: Local<'s, Duration>,
}

impl CadenceClock<'_, '_> {
    /// How many times `cadence` fired this frame (none for no cadence).
    fn fired(&mut self, cadence: Option<Duration>) -> u64 {
        let Some(cadence) = cadence.filter(|c| !c.is_zero()) else {
            return 0;
        };
        *self.since += self.time.delta();
        fire(&mut self.since, cadence)
    }
}

/// How many times `cadence` (not zero) fits in the time `since` it last fired, which
/// keeps what is left: counted by division, as a cadence far shorter than a frame
/// fires many times.
fn fire(since: &mut Duration, cadence: Duration) -> u64 {
    let (time, cadence) = (since.as_nanos(), cadence.as_nanos().max(1));
    let left = u64::try_from(time % cadence).unwrap_or(u64::MAX);
    *since = Duration::from_nanos(left);
    u64::try_from(time / cadence).unwrap_or(u64::MAX)
}

/// Starts the turns that ended since the last frame and the real-time cadence's,
/// moving the clock on by the cadence's: queues every actor ready to think.
pub(super) fn start_turns(
    settings: Res<SmartActorSettings>,
    mut cadence: CadenceClock,
    (mut clock, ended): (ResMut<TurnClock>, Res<TurnsEnded>),
    mut queue: ResMut<ThinkQueue>,
    mut actors: Query<TurnTaker, With<SmartActor>>,
    mut stops: MessageWriter<StopPlan>,
) {
    let fired = cadence.fired(settings.cadence);
    if fired > 0 {
        clock.turn = clock.turn.saturating_add(fired);
    }
    // A game that sets the clock (a saved game loaded) starts no turn by it.
    if ended.0 == 0 && fired == 0 {
        return;
    }
    for (entity, mut mind, following_plan, fighting) in &mut actors {
        // A plan decides for the actor until it ends; a fight stops it.
        if following_plan {
            if !fighting {
                continue;
            }
            stops.write(StopPlan {
                actor: entity,
                reason: FIGHT_STOPS_PLAN.to_owned(),
            });
        }
        if mind.state.ready_for(clock.turn) && mind.queue(None) {
            queue.waiting.push_back(entity);
        }
    }
}

/// A smart actor the player may talk to: its spec, name, mind, and where it is.
type Listener = (
    Entity,
    &'static SmartActor,
    Option<&'static DisplayName>,
    &'static mut ActorMind,
    WhereItIs,
);

/// What the player calls a smart actor: its name, or without one its key.
fn label<'a>(actor: &'a SmartActor, name: Option<&'a DisplayName>) -> &'a str {
    name.map_or(&actor.spec, |name| &name.0)
}

/// Whether two of the `visible` actors share a name.
fn namesakes(visible: &[conversation::Visible<'_>]) -> bool {
    let mut labels = bevy::platform::collections::HashSet::new();
    // Alike as prompts show them, as the view tells them apart ("Marta" and "Marta ").
    !visible
        .iter()
        .all(|seen| labels.insert(prompt_name(seen.name.label.into())))
}

/// Names the `visible` actors that share a name as `view` numbers them, as the actors
/// perceive them ("Guard (1)", "Guard (2)"): the player can tell each apart.
fn number_namesakes<'a>(visible: &mut [conversation::Visible<'a>], view: &'a WorldView<'_>) {
    for seen in visible {
        // One without a name keeps its key.
        let shown = view.get(seen.entity).map(|v| &*v.name);
        let Some(numbered) = shown.filter(|name| !name.is_empty()) else {
            continue;
        };
        if *prompt_name(seen.name.label.into()) != *numbered {
            seen.name.label = numbered;
        }
    }
}

/// Reads the player's lines: starts and ends conversations, and has the actor talked
/// with reply to each line, in place of its own action this turn.
pub(super) fn hear_the_player(
    mut lines: MessageReader<PlayerSaid>,
    (mut conversation, mut updates): (ResMut<Conversation>, MessageWriter<ConversationUpdate>),
    mut queue: ResMut<ThinkQueue>,
    mut bridge: ResMut<LlmBridge>,
    player: Query<(Entity, WhereItIs, Option<&DisplayName>), With<Player>>,
    (mut witnessed, whereabouts): (MessageWriter<Witnessed>, Whereabouts),
    // The listeners, and the world view that numbers namesakes among them.
    (mut actors, views): (Query<Listener>, WorldViewQuery),
) {
    for line in lines.read() {
        // Where the player is: carried, where the one carrying it is.
        let speaker = player.iter().next();
        let here = speaker.and_then(|(_, at, _)| place_of(at, &whereabouts));
        let mut visible: Vec<conversation::Visible<'_>> = actors
            .iter()
            .filter(|&(.., at)| here.is_some() && place_of(at, &whereabouts) == here)
            .map(|(entity, actor, name, ..)| conversation::Visible {
                entity,
                name: conversation::Addressable {
                    label: label(actor, name),
                    key: &actor.spec,
                },
            })
            .collect();
        // Built only for namesakes, to name them as the view does.
        let view = namesakes(&visible).then(|| WorldView::from_query(&views));
        if let Some(view) = &view {
            number_namesakes(&mut visible, view);
        }
        // What a terminal or a paste brings along is no part of what was said.
        let heard = conversation::hear(&printable(&line.text), conversation.with, &visible);
        conversation.with = heard.with;
        updates.write_batch(heard.updates);
        let Some((to, said)) = heard.reply else {
            continue;
        };
        let Ok((_, actor, name, mut mind, _)) = actors.get_mut(to) else {
            continue;
        };
        // Everyone there hears it, and remembers it (the one spoken to beyond its
        // conversation with the model, which restarts when it grows too long).
        if let Some((player, _, player_name)) = speaker.filter(|_| !said.trim().is_empty()) {
            let player_name = player_name.map_or("Someone", |n| n.0.as_str());
            let text = format!("{player_name} said to {}: \"{said}\"", label(actor, name));
            witnessed.write(Witnessed::new(player, text).at(here).involving([to]));
        }
        // The reply takes the place of whatever the actor was about to do, and answers
        // what the player said to it since its last reply too; the conversation goes
        // on from its last answered turn.
        let said = mind.to_answer(said);
        queue.cancel_pending(&mut mind, &mut bridge);
        // At the front, even when the turn queued it already.
        if !mind.queue(Some(said)) {
            queue.waiting.retain(|&waiting| waiting != to);
        }
        queue.waiting.push_front(to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cadence_fires_as_often_as_it_fits_and_keeps_the_rest() {
        let mut since = Duration::from_millis(4_500);
        assert_eq!(fire(&mut since, Duration::from_secs(2)), 2);
        assert_eq!(since, Duration::from_millis(500));
        assert_eq!(fire(&mut since, Duration::from_secs(2)), 0);
        assert_eq!(since, Duration::from_millis(500));
        // A nanosecond's cadence over a second's frame: a billion turns, counted at once.
        let mut since = Duration::from_secs(1);
        assert_eq!(fire(&mut since, Duration::from_nanos(1)), 1_000_000_000);
        assert_eq!(since, Duration::ZERO);
    }

    /// The player's labels of two Martas, one named with a space after, numbered as
    /// the view numbers them; an actor without a name keeps its key.
    #[test]
    fn namesakes_are_labelled_as_the_view_numbers_them() {
        use crate::world::EntityView;
        use conversation::{Addressable, Visible};
        let entity = |n| Entity::from_raw_u32(n).expect("a valid index");
        let here = |name: &'static str| EntityView {
            name: name.into(),
            place: Some(entity(1)),
            character: true,
            ..default()
        };
        let view = WorldView::new([
            (entity(1), EntityView::default()),
            (entity(10), here("Marta")),
            (entity(11), here("Marta ")),
            (entity(12), here("")),
        ]);
        let visible = |n: u32, label: &'static str| Visible {
            entity: entity(n),
            name: Addressable { label, key: label },
        };
        let mut seen = [
            visible(10, "Marta"),
            visible(11, "Marta "),
            visible(12, "tavern:tom"),
        ];
        assert!(namesakes(&seen));
        number_namesakes(&mut seen, &view);
        let labels = seen.map(|seen| seen.name.label);
        assert_eq!(labels, ["Marta (1)", "Marta (2)", "tavern:tom"]);
        assert!(!namesakes(&[
            visible(10, "Marta"),
            visible(12, "tavern:tom")
        ]));
    }
}
