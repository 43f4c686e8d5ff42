//! Starting and stopping plans: a [`StartPlan`] puts a [`Plan`] on its actor (ending
//! one running first, unless the model chose it), a [`StopPlan`] ends it, each
//! answered with [`PlanStarted`] or [`PlanFailed`].

use bevy::ecs::entity::{Entities, EntityHashMap, EntityHashSet};
use bevy::prelude::*;

use super::{
    BoundTask, MenuCache, Plan, PlanContext, PlanFacts, PlanFailure, PlanIds, PlanStarted,
    PlanWriters, Refinement,
};
use crate::content::ContentRegistry;
use crate::world::{
    ActionMenu, FollowingPlan, ParamValue, PlanFailed, PlanOrigin, StartPlan, StopPlan,
};

/// Ends the plan of each actor a [`StopPlan`] names, as failed with its reason and the
/// step handed to the game, if one was; of stops for one actor in one frame, the
/// first ends it.
pub(super) fn stop_plans(
    mut stops: MessageReader<StopPlan>,
    plans: Query<&Plan>,
    mut commands: Commands,
    mut failed: MessageWriter<PlanFailed>,
) {
    // The plan stays on its actor until the commands apply.
    let mut stopped = bevy::ecs::entity::EntityHashSet::default();
    for stop in stops.read() {
        let Ok(plan) = plans.get(stop.actor) else {
            continue;
        };
        if !stopped.insert(stop.actor) {
            continue;
        }
        failed.write(plan.ended(stop.actor, stop.reason.clone()));
        plan.take_off(stop.actor, &mut commands);
    }
}

/// Puts a [`Plan`] on each actor a [`StartPlan`] names, with its task's first
/// applicable method; a task that cannot start is a [`PlanFailed`] at once. A plan
/// started over one running ends that one first, as failed, unless the model chose it
/// (an answer read as the game put the plan on): that one fails instead. Starts that
/// come before content has loaded (a game's `Startup` systems) wait for it; one whose
/// actor or entity was spawned by a command not applied yet (spawned in the same
/// system that wrote the start) waits a frame for it.
pub(super) fn start_plans(
    context: PlanContext,
    (mut held, entities): (Starts, &Entities),
    actors: Query<(Option<&Plan>, Has<FollowingPlan>)>,
    mut commands: Commands,
    mut out: PlanWriters,
    mut ids: ResMut<PlanIds>,
    mut tasks: Local<MenuCache>,
) {
    let registry = &context.registry;
    let called_off = |start: StartPlan, reason: &str| {
        out.failed.write(PlanFailed {
            actor: start.actor,
            task_id: start.task_id,
            reason: reason.to_owned(),
            step: None,
            chosen_by: start.chosen_by,
        });
    };
    let (starts, waited) = held.take(registry.generation() > 0, called_off);
    if starts.is_empty() {
        return;
    }
    // Entities not spawned yet, whose spawn may be a command applied after this system.
    let unspawned =
        |entity: Entity| entities.contains(entity) && !entities.contains_spawned(entity);
    // The starts held this frame, and their actors: a later start for one waits too,
    // to replace it still.
    let (mut waiting, mut holding) = (Vec::new(), EntityHashSet::default());
    let frame = context.frame();
    let (tasks, _) = tasks.of(registry, ActionMenu::of_tasks);
    // The plans put on this frame, not yet in the world: a later start replaces them.
    let mut put_on: EntityHashMap<Plan> = EntityHashMap::default();
    for (number, start) in starts.iter().enumerate() {
        let named = start.params.iter().filter_map(|(_, value)| value.entity());
        let held = holding.contains(&start.actor);
        if number >= waited && (held || unspawned(start.actor) || named.into_iter().any(unspawned))
        {
            holding.insert(start.actor);
            waiting.push(start.clone());
            continue;
        }
        let now = actors.get(start.actor).ok();
        let running = now.and_then(|(plan, _)| plan);
        let replaced = put_on.get(&start.actor).or(running);
        let facts = frame.of(start.actor);
        let name = |entity| frame.name(entity);
        let spawned = commands.get_spawned_entity(start.actor).is_ok();
        let begun = match refused(start, replaced, spawned) {
            Some(reason) => Err(PlanFailure { reason, step: None }),
            None => begin(start, (registry, tasks, &facts, name), &mut ids),
        };
        match begun {
            Ok(mut plan) => {
                // The plan brings the hold it puts on: when the actor is not held now
                // (the game may have let go of its own hold while a plan ran), or the
                // plan it replaces brought the hold there is.
                let held = now.is_some_and(|(_, held)| held);
                plan.brought_hold = !held || replaced.is_some_and(|r| r.brought_hold);
                if let Some(replaced) = replaced {
                    let reason = format!("replaced by a new plan: `{}`", start.task_id);
                    out.failed.write(replaced.ended(start.actor, reason));
                }
                out.started.write(PlanStarted {
                    actor: start.actor,
                    task_id: start.task_id.clone(),
                    method_id: plan.method().unwrap_or_default().to_owned(),
                });
                put_on.insert(start.actor, plan);
            }
            Err(failure) => {
                out.failed.write(PlanFailed {
                    actor: start.actor,
                    task_id: start.task_id.clone(),
                    reason: failure.reason,
                    step: failure.step,
                    chosen_by: start.chosen_by,
                });
            }
        }
    }
    held.wait(waiting);
    for (actor, plan) in put_on {
        // A command of the game's applied first may despawn it: nobody is left to
        // follow the plan then.
        commands.entity(actor).try_insert(plan);
    }
}

/// Why `start` is refused before its task is looked at, over the plan it would
/// replace, if any: its actor is not `spawned`, or the model chose it over a plan.
fn refused(start: &StartPlan, replaced: Option<&Plan>, spawned: bool) -> Option<String> {
    // An actor on a plan is not asked to decide: a task the model chose comes from an
    // answer read as the plan was put on, which it does not replace.
    if let Some(followed) = replaced.filter(|_| start.chosen_by == PlanOrigin::Model) {
        return Some(format!(
            "the actor follows the plan `{}`: a task the model chose does not replace it (the answer came as the plan was put on)",
            super::task_id(followed)
        ));
    }
    (!spawned).then(|| {
        format!(
            "the actor {} is not in the world (despawned, or still not spawned a frame after the start)",
            start.actor
        )
    })
}

/// The plans to start: those that waited a frame for an entity's spawn, those written
/// before content had loaded, then those written since the last frame.
#[derive(bevy::ecs::system::SystemParam)]
pub(super) struct Starts<'w, 's> {
    written: MessageReader<'w, 's, StartPlan>,
    /// What calls off a start kept from an earlier frame; [`stop_plans`] ends the
    /// plans started.
    stops: MessageReader<'w, 's, StopPlan>,
    early: Local<'s, Vec<StartPlan>>,
    /// Starts held a frame for an entity spawned by a command not applied yet.
    waiting: Local<'s, Vec<StartPlan>>,
}

impl Starts<'_, '_> {
    /// Those to start now, and how many of them, first, waited a frame already; none
    /// until content has `loaded`, when they are kept. A [`StopPlan`] written while
    /// starts are kept (the frame content loads in too, or a start waits for a spawn)
    /// calls off its actor's starts kept from earlier frames, as it would end the plan
    /// they started: each is given to `called_off` with the stop's reason.
    fn take(
        &mut self,
        loaded: bool,
        mut called_off: impl FnMut(StartPlan, &str),
    ) -> (Vec<StartPlan>, usize) {
        // Read every frame, so that a stop written before a start was held is not
        // taken for one written after it.
        for stop in self.stops.read() {
            let stopped = (self.waiting).extract_if(.., |start| start.actor == stop.actor);
            stopped.for_each(|start| called_off(start, &stop.reason));
            let stopped = self.early.extract_if(.., |start| start.actor == stop.actor);
            stopped.for_each(|start| called_off(start, &stop.reason));
        }
        let written = self.written.read().cloned();
        if !loaded {
            self.early.extend(written);
            return (Vec::new(), 0);
        }
        let mut starts = std::mem::take(&mut *self.waiting);
        let waited = starts.len();
        starts.append(&mut self.early);
        starts.extend(written);
        (starts, waited)
    }

    /// Holds `starts` for the next frame: each waits for an entity's spawn.
    fn wait(&mut self, starts: Vec<StartPlan>) {
        *self.waiting = starts;
    }
}

/// The plan a [`StartPlan`] asks for, if its task is loaded, its parameters fit and a
/// method applies now.
fn begin<'n>(
    start: &StartPlan,
    (registry, tasks, facts, name): (
        &ContentRegistry,
        &ActionMenu,
        &impl PlanFacts,
        impl Fn(Entity) -> &'n str,
    ),
    ids: &mut PlanIds,
) -> Result<Plan, PlanFailure> {
    let failure = |reason: String| PlanFailure { reason, step: None };
    let task = registry
        .task(&start.task_id)
        .ok_or_else(|| failure(format!("task `{}` is not loaded", start.task_id)))?;
    let bound = BoundTask::new(task, start.params.iter().cloned()).map_err(failure)?;
    // An entity not there fails the plan now, not at the step that first needs it.
    let gone = (bound.params.iter())
        .filter_map(|(name, value)| Some((name, value.entity()?)))
        .find(|&(_, entity)| !facts.exists(entity));
    if let Some((name, entity)) = gone {
        return Err(failure(format!(
            "`{name}` is {entity}, which is not in the world (despawned, still not spawned a frame after the start, or without a DisplayName, Place, InPlace or CarriedBy)"
        )));
    }
    let targets: Vec<Entity> = (bound.params.iter())
        .filter_map(|(_, value)| value.entity())
        .collect();
    let values: std::collections::BTreeMap<String, serde_json::Value> = (bound.params.iter())
        .filter_map(|(name, value)| match value {
            ParamValue::Value(value) => Some((name.clone(), value.clone())),
            ParamValue::Entity(_) => None,
        })
        .collect();
    let command = (tasks.render(&start.task_id, &targets, name, &values))
        .unwrap_or_else(|| start.task_id.clone());
    let refinement = Refinement::start(bound, registry, facts)?;
    let method_id = refinement.method().unwrap_or_default();
    let method = ids.get(method_id);
    Ok(Plan {
        refinement,
        chosen_by: start.chosen_by,
        ids: (ids.get(&start.task_id), method),
        command,
        awaiting: None,
        stepped_in: None,
        brought_hold: true,
        number: ids.next_plan(),
    })
}
