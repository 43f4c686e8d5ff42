//! The tavern's rules: each requested action, and each ability invoked (renting a
//! room, pouring a drink, playing a song), is carried out or refused against the world
//! as it is when the turn resolves, and reported back to the plugin. An action these
//! rules do not know is refused, never taken as done.

use std::collections::HashMap;

use bevy::prelude::*;
use bevy_loom::actors::{ActorMind, SpawnedScene};
use bevy_loom::narration::EffectReport;
use bevy_loom::prelude::*;

use super::print::Turn;

/// The failure reason of an action the tavern's rules do not know.
pub const UNKNOWN_ACTION: &str = "unknown_action";

/// Carries out each turn's requests between the plugin's decisions and its narration.
pub struct RulesPlugin;

impl Plugin for RulesPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(
            Update,
            (
                fill_purses,
                requests_for_services
                    .after(LoomSystems::Decide)
                    .before(resolve_turn),
                resolve_turn
                    .after(LoomSystems::Decide)
                    .before(LoomSystems::Narrate),
            ),
        );
    }
}

/// Scene entities in the order the scene lists them: requests are carried out, and
/// the transcript printed, in that order.
#[derive(Resource, Default)]
pub struct SceneOrder(HashMap<Entity, usize>);

impl SceneOrder {
    pub fn new(spawned: &SpawnedScene) -> Self {
        let order = spawned.order.iter().enumerate();
        Self(
            order
                .filter_map(|(i, id)| spawned.entities.get(id).map(|&e| (e, i)))
                .collect(),
        )
    }

    pub fn rank(&self, entity: Entity) -> usize {
        self.0.get(&entity).copied().unwrap_or(usize::MAX)
    }
}

/// The coins a character can pay with; the player starts with a few.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Purse(pub u32);

/// What renting a room costs a night.
const COINS_A_NIGHT: u32 = 1;

/// The coins the player comes in with.
pub const PLAYERS_COINS: u32 = 5;

/// The player comes in with a few coins.
fn fill_purses(mut commands: Commands, players: Query<Entity, (With<Player>, Without<Purse>)>) {
    for player in &players {
        commands.entity(player).insert(Purse(PLAYERS_COINS));
    }
}

/// Each ability invoked becomes a request the turn carries out with the rest: the
/// ability's id as its action, who it is for (the guest named, else the player) as its
/// target, its inputs as parameters, and a command that says what it does.
fn requests_for_services(
    mut invoked: MessageReader<AbilityInvoked>,
    mut turn: ResMut<Turn>,
    names: Query<&DisplayName>,
    player: Query<Entity, With<Player>>,
) {
    for invocation in invoked.read() {
        let guest = match invocation.input("guest") {
            Some(InputValue::Entity(guest)) => Some(*guest),
            _ => player.iter().next(),
        };
        let name = |entity: Option<Entity>| {
            let name = entity.and_then(|e| names.get(e).ok());
            name.map_or("someone", |n| n.0.as_str()).to_owned()
        };
        let text = |input: &str| match invocation.input(input) {
            Some(InputValue::Choice(text) | InputValue::Text(text)) => Some(text.clone()),
            _ => None,
        };
        let (command, parameters) = match invocation.ability.as_str() {
            "tavern:rent_room" => {
                let nights = match invocation.input("nights") {
                    Some(InputValue::Integer(nights)) => *nights,
                    _ => 1,
                };
                let plural = if nights == 1 { "night" } else { "nights" };
                (
                    format!("rent {} a room for {nights} {plural}", name(guest)),
                    [("nights".to_owned(), serde_json::json!(nights))].into(),
                )
            }
            "tavern:pour_drink" => {
                let drink = text("drink").unwrap_or_else(|| "ale".to_owned());
                (
                    format!("pour {} a mug of {drink}", name(guest)),
                    [("drink".to_owned(), serde_json::json!(drink))].into(),
                )
            }
            "tavern:play_song" => match text("song") {
                Some(song) => (format!("play \"{song}\""), Default::default()),
                None => ("play a song".to_owned(), Default::default()),
            },
            other => (format!("use {other}"), Default::default()),
        };
        turn.requests.push(ActionRequest {
            actor: invocation.actor,
            action_id: invocation.ability.as_str().into(),
            targets: guest.into_iter().collect(),
            command,
            parameters,
            plan: None,
        });
    }
}

/// A request as the rules judged it: its report, and why it was refused, if it was.
pub struct Verdict {
    pub request: ActionRequest,
    pub report: ActionReport,
    pub refusal: Option<String>,
}

/// Everyone acts at once: once no smart actor is still thinking, the turn's requests
/// are carried out in scene order, each checked against the world as it is by then —
/// the model proposed, the game disposes.
pub fn resolve_turn(world: &mut World) {
    if !world.resource::<Turn>().open {
        return;
    }
    let mut minds = world.query::<&ActorMind>();
    if minds.iter(world).any(ActorMind::is_thinking) {
        return;
    }
    let mut requests = std::mem::take(&mut world.resource_mut::<Turn>().requests);
    let order = world.resource::<SceneOrder>();
    requests.sort_by_key(|r| order.rank(r.actor));
    let verdicts: Vec<Verdict> = requests
        .into_iter()
        .map(|request| {
            let verdict = judge(world, request);
            world.write_message(verdict.report.clone());
            verdict
        })
        .collect();
    let mut turn = world.resource_mut::<Turn>();
    turn.verdicts = verdicts;
    turn.open = false;
    turn.resolved = true;
}

/// Carries out one request, or refuses it, and says so in its report.
pub fn judge(world: &mut World, request: ActionRequest) -> Verdict {
    let verb = world
        .get_resource::<ContentRegistry>()
        .and_then(|registry| registry.action(&request.action_id))
        .and_then(|action| action.verb.clone())
        .or_else(|| service_verb(&request.action_id).map(str::to_owned))
        .unwrap_or_else(|| {
            request
                .action_id
                .rsplit(':')
                .next()
                .unwrap_or("act")
                .to_owned()
        });
    // Where it happens, whoever sees it: those in the room an actor leaves see it go.
    let here = world.get::<InPlace>(request.actor).map(|place| place.0);
    let mut report = (ActionReport::new(request.actor, verb))
        .for_step(request.plan.clone())
        .at(here);
    report.object = request.targets.first().copied();
    report.indirect_object = request.targets.get(1).copied();
    let refusal = match carry_out(world, &request, here) {
        Ok(done) => {
            if let Some(object) = done.object {
                // The thing handed over, to the one the service was for.
                report.indirect_object = report.object.filter(|&target| target != object);
                report.object = Some(object);
            }
            report.new_state = done.new_state.map(str::to_owned);
            report.effects = done.effects;
            None
        }
        Err(refusal) => {
            report = report.failed(refusal.reason);
            Some(refusal.why)
        }
    };
    Verdict {
        request,
        report,
        refusal,
    }
}

/// What carrying out a request changed, for its report.
#[derive(Default)]
struct Done {
    new_state: Option<&'static str>,
    effects: Vec<EffectReport>,
    /// What it was done to, when that is not its target: the key handed over.
    object: Option<Entity>,
}

/// The verb narration tells a service with: a room's key and a drink are given, a song
/// is the lute used.
fn service_verb(ability: &str) -> Option<&'static str> {
    match ability {
        "tavern:rent_room" | "tavern:pour_drink" => Some("give"),
        "tavern:play_song" => Some("use"),
        _ => None,
    }
}

/// Why the game refused a request: a failure reason, and words for the transcript.
struct Refusal {
    reason: &'static str,
    why: String,
}

fn refuse(reason: &'static str, why: &str) -> Refusal {
    Refusal {
        reason,
        why: why.to_owned(),
    }
}

/// One request by an actor `here`, checked against the world as it is now.
fn carry_out(
    world: &mut World,
    request: &ActionRequest,
    here: Option<Entity>,
) -> Result<Done, Refusal> {
    let actor = request.actor;
    // Someone or something despawned since the request was made is not here.
    let mut named = std::iter::once(actor).chain(request.targets.iter().copied());
    if named.any(|entity| world.get_entity(entity).is_err()) {
        return Err(refuse("not_here", "someone or something it names is gone"));
    }
    let target = request.targets.first().copied();
    let mut done = Done::default();
    match &*request.action_id {
        "items:pick_up" | "items:drop" | "items:give" => return move_item(world, request, here),
        "positioning:sit_down" => {
            tag(world, actor, "sitting", true);
            tag(world, actor, BEHIND_BAR, false);
            let effect = EffectReport::new("position_change", "sit_down");
            done.effects.push(match target {
                Some(seat) => effect.target(seat),
                None => effect,
            });
        }
        "positioning:stand_up" => {
            tag(world, actor, "sitting", false);
            done.effects
                .push(EffectReport::new("position_change", "stand_up"));
        }
        "combat:draw_weapon" => tag(world, actor, "armed", true),
        "core:go" | "combat:flee" => {
            let destination = target.ok_or_else(|| refuse("not_here", "it names nowhere to go"))?;
            if has_tag(world, destination, LOCKED) {
                return Err(refuse(LOCKED, "the door is locked"));
            }
            tag(world, actor, "sitting", false);
            tag(world, actor, BEHIND_BAR, false);
            world.entity_mut(actor).insert(InPlace(destination));
            let mut exit = EffectReport::new("position_change", "exit");
            if let Some(left) = here {
                exit = exit.target(left);
            }
            done.effects.push(exit);
            done.effects
                .push(EffectReport::new("position_change", "enter").target(destination));
        }
        "tavern:rent_room" => {
            let guest = target.ok_or_else(|| refuse("not_here", "nobody to rent it to"))?;
            let nights = (request.parameters.get("nights"))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(1) as u32;
            let cost = nights * COINS_A_NIGHT;
            let coins = world.get::<Purse>(guest).map_or(0, |purse| purse.0);
            if coins < cost {
                return Err(refuse(
                    "refused",
                    &format!("the guest has {coins} coins, and {nights} nights cost {cost}"),
                ));
            }
            world.entity_mut(guest).insert(Purse(coins - cost));
            let key = world.spawn((
                DisplayName("key to the room upstairs".to_owned()),
                Tags::new(["portable", "key"]),
                CarriedBy(guest),
            ));
            done.object = Some(key.id());
            done.new_state = Some("carried");
        }
        "tavern:pour_drink" => {
            let guest = target.ok_or_else(|| refuse("not_here", "nobody to pour for"))?;
            if !has_tag(world, actor, BEHIND_BAR) {
                return Err(refuse("not_here", "drinks are poured from behind the bar"));
            }
            let drink = (request.parameters.get("drink"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or("ale");
            let mug = world.spawn((
                DisplayName(format!("mug of {drink}")),
                Tags::new(["portable", "drink"]),
                CarriedBy(guest),
            ));
            done.object = Some(mug.id());
            done.new_state = Some("carried");
        }
        "tavern:play_song" => {
            let mut carried = world.query::<(Entity, &CarriedBy, &Tags)>();
            let lute = (carried.iter(world))
                .find(|(_, by, tags)| by.0 == actor && tags.has("instrument"))
                .map(|(lute, ..)| lute);
            done.object = Some(lute.ok_or_else(|| refuse("not_held", "they hold no instrument"))?);
        }
        "tavern:unlock" => {
            let door = target.ok_or_else(|| refuse("not_here", "it names no door"))?;
            if !has_tag(world, door, LOCKED) {
                return Err(refuse("already_open", "it is not locked"));
            }
            if !carries_a_key(world, actor) {
                return Err(refuse("no_key", "they carry no key"));
            }
            tag(world, door, LOCKED, false);
            done.new_state = Some("unlocked");
        }
        // Close to the bar is behind it, where drinks are poured; close to anything
        // else is out from behind it.
        "positioning:get_close" => {
            let at_bar = target.is_some_and(|target| has_tag(world, target, "bar"));
            tag(world, actor, BEHIND_BAR, at_bar);
        }
        // Done as soon as asked: nothing the tavern keeps track of changes.
        "core:wait"
        | "core:look_around"
        | "items:examine"
        | "positioning:step_back"
        | "conversation:greet"
        | "conversation:ask_about"
        | "conversation:tell_story"
        | "combat:attack" => {}
        unknown => {
            return Err(Refusal {
                reason: UNKNOWN_ACTION,
                why: format!(
                    "the tavern's rules do not know `{unknown}`; a game's rules must carry out every action its content offers"
                ),
            });
        }
    }
    Ok(done)
}

/// Picking up, dropping and giving an item: it must be where the rules expect it.
fn move_item(
    world: &mut World,
    request: &ActionRequest,
    here: Option<Entity>,
) -> Result<Done, Refusal> {
    let actor = request.actor;
    let item = request
        .targets
        .first()
        .copied()
        .ok_or_else(|| refuse("not_here", "it names nothing to act on"))?;
    let new_state = match &*request.action_id {
        "items:pick_up" => {
            if here.is_none() || world.get::<InPlace>(item).map(|p| p.0) != here {
                return Err(refuse("not_here", "it is no longer here"));
            }
            world
                .entity_mut(item)
                .remove::<InPlace>()
                .insert(CarriedBy(actor));
            "carried"
        }
        "items:drop" => {
            if world.get::<CarriedBy>(item).map(|c| c.0) != Some(actor) {
                return Err(refuse("not_held", "they no longer hold it"));
            }
            let place = here.ok_or_else(|| refuse("blocked", "there is nowhere to drop it"))?;
            world
                .entity_mut(item)
                .remove::<CarriedBy>()
                .insert(InPlace(place));
            "here"
        }
        _ => {
            let recipient = *request
                .targets
                .get(1)
                .ok_or_else(|| refuse("not_here", "nobody to give it to"))?;
            if world.get::<CarriedBy>(item).map(|c| c.0) != Some(actor) {
                return Err(refuse("not_held", "they no longer hold it"));
            }
            if here.is_none() || world.get::<InPlace>(recipient).map(|p| p.0) != here {
                return Err(refuse("not_here", "they are no longer here"));
            }
            world.entity_mut(item).insert(CarriedBy(recipient));
            "carried"
        }
    };
    Ok(Done {
        new_state: Some(new_state),
        ..Done::default()
    })
}

/// The tag of a place whose door is locked: nobody goes in until it is unlocked.
const LOCKED: &str = "locked";

/// The tag of a character close to the bar, where drinks are poured.
const BEHIND_BAR: &str = "behind_bar";

fn has_tag(world: &World, entity: Entity, tag: &str) -> bool {
    world.get::<Tags>(entity).is_some_and(|tags| tags.has(tag))
}

/// Whether `actor` carries something tagged `key`.
fn carries_a_key(world: &mut World, actor: Entity) -> bool {
    let mut carried = world.query::<(&CarriedBy, &Tags)>();
    carried
        .iter(world)
        .any(|(by, tags)| by.0 == actor && tags.has("key"))
}

fn tag(world: &mut World, entity: Entity, tag: &str, on: bool) {
    if let Some(mut tags) = world.get_mut::<Tags>(entity) {
        if on {
            tags.0.insert(tag.to_owned());
        } else {
            tags.0.remove(tag);
        }
    }
}
