//! A plan's steps: each handed to the game as an [`ActionRequest`] naming it, and
//! settled by the game's [`ActionReport`] on it, or failed once the game took too long.

use std::sync::Arc;
use std::time::Duration;

use bevy::prelude::*;

use super::facts::FrameWorld;
use super::{
    MenuCache, Plan, PlanCadence, PlanContext, PlanIds, PlanStep, PlanStepIssued, PlanWriters,
    PlannedAction, task_id,
};
use crate::content::{ActionDefinition, ContentRegistry};
use crate::world::{
    ActionMenu, ActionReport, ActionRequest, Outcome, PlanCompleted, PlanFailed, PlanStepRef,
    TurnClock,
};

/// A step handed to the game: what reports on it, and since when.
#[derive(Debug, Clone)]
pub(super) struct Awaiting {
    pub(super) step: PlanStepRef,
    /// The canonical verb its action declares: a report that names no step is the
    /// step's only with it (none is, when the action declares no verb).
    verb: Option<Arc<str>>,
    /// When it was handed out, in [`Time`]'s elapsed time.
    since: Duration,
}

impl Awaiting {
    /// Whether `report` is this step's outcome: it names this step, or it names none
    /// and has the verb the step's action declares. Another of the actor's doings
    /// meanwhile (an ability it used in a conversation, say) is not.
    fn is_reported_by(&self, report: &ActionReport) -> bool {
        match &report.plan {
            Some(step) => *step == self.step,
            None => self.verb.as_deref() == Some(report.verb.as_str()),
        }
    }
}

/// Hands the game the next step of each plan with none out, or ends the plan.
pub(super) fn advance_plans(
    context: PlanContext,
    clock: Res<TurnClock>,
    mut plans: Query<(Entity, &mut Plan)>,
    mut commands: Commands,
    mut out: PlanWriters,
    mut actions: Local<MenuCache>,
    mut ids: ResMut<PlanIds>,
) {
    let PlanContext {
        settings,
        time,
        registry,
        ..
    } = &context;
    let (by_turns, turn) = (settings.cadence == PlanCadence::EveryTurn, clock.turn);
    // Before a turn ends none is under way, to take a step in.
    if by_turns && turn == 0 {
        return;
    }
    // By turns, one step a turn: a plan started during a turn takes its first in
    // it, whichever frame of the turn the plan started in.
    let mut ready = (plans.iter_mut())
        .filter(|(_, plan)| plan.awaiting.is_none())
        .filter(|(_, plan)| !by_turns || plan.stepped_in != Some(turn))
        .peekable();
    if ready.peek().is_none() {
        return;
    }
    let frame = context.frame();
    let (menu, rebuilt) = actions.of(registry, ActionMenu::new);
    if rebuilt {
        ids.shared.clear();
        ids.pointers.clear();
    }
    for (actor, mut plan) in ready {
        let facts = frame.of(actor);
        let plan = &mut *plan;
        match plan.refinement.next_step(registry, &facts) {
            PlanStep::Act(action) => {
                let step = step_ref(plan, &action, registry, &mut ids);
                let definition = registry.action(&action.action_id);
                let verb = definition
                    .and_then(|a| a.verb.as_deref())
                    .map(|v| ids.get(v));
                let request = request_for(actor, action, step.clone(), (definition, menu), &frame);
                out.issued.write(PlanStepIssued {
                    actor,
                    step: step.clone(),
                });
                out.requests.write(request);
                plan.awaiting = Some(Awaiting {
                    step,
                    verb,
                    since: time.elapsed(),
                });
                plan.stepped_in = Some(turn);
            }
            end => end_plan(
                (actor, plan),
                end,
                (&mut out.completed, &mut out.failed),
                &mut commands,
            ),
        }
    }
}

/// Ends `actor`'s plan as `end` says (done or failed): tells the game, and takes the
/// plan off its actor.
fn end_plan(
    (actor, plan): (Entity, &Plan),
    end: PlanStep,
    (completed, failed): (
        &mut MessageWriter<PlanCompleted>,
        &mut MessageWriter<PlanFailed>,
    ),
    commands: &mut Commands,
) {
    match end {
        PlanStep::Act(_) => return,
        PlanStep::Done => {
            completed.write(PlanCompleted {
                actor,
                task_id: task_id(plan),
                actions: plan.actions_done(),
                chosen_by: plan.chosen_by,
            });
        }
        PlanStep::Failed(failure) => {
            failed.write(PlanFailed {
                actor,
                task_id: task_id(plan),
                reason: failure.reason,
                step: failure.step,
                chosen_by: plan.chosen_by,
            });
        }
    }
    plan.take_off(actor, commands);
}

/// Which step of `plan` the action is, its ids shared through `ids`.
fn step_ref(
    plan: &mut Plan,
    action: &PlannedAction,
    registry: &ContentRegistry,
    ids: &mut PlanIds,
) -> PlanStepRef {
    let method = plan.refinement.method().unwrap_or_default();
    if *plan.ids.1 != *method {
        plan.ids.1 = ids.get(method);
    }
    // Counted as the method is loaded now: its file may have been edited since.
    let method_steps = registry.method(method).map_or(0, |m| m.steps.len());
    PlanStepRef {
        plan: plan.number,
        task_id: Arc::clone(&plan.ids.0),
        method_id: Arc::clone(&plan.ids.1),
        step: ids.pointer(&action.step),
        number: plan.actions_done() + 1,
        progress: (action.step.top_level() + 1, method_steps),
    }
}

/// The request for a plan's action (`definition`, when loaded): its command rendered
/// with the world's names, and the parameters whose value is not the action's default.
fn request_for(
    actor: Entity,
    action: PlannedAction,
    step: PlanStepRef,
    (definition, menu): (Option<&ActionDefinition>, &ActionMenu),
    frame: &FrameWorld,
) -> ActionRequest {
    let targets = action.targets;
    let name = |entity| frame.name(entity);
    let command = (menu.render(&action.action_id, &targets, name, &action.parameters))
        .unwrap_or_else(|| action.action_id.to_string());
    let parameters = (action.parameters.into_iter())
        .filter(|(name, value)| {
            let default = definition.and_then(|d| d.parameters.get(name));
            default.is_none_or(|d| d.default != *value)
        })
        .collect();
    ActionRequest {
        actor,
        action_id: action.action_id,
        targets,
        command,
        parameters,
        plan: Some(step),
    }
}

/// The outcome of each plan's step out: the next [`ActionReport`] for its actor that
/// reports on it ([`Awaiting::is_reported_by`]), or a failure once the game took
/// longer than [`PlanningSettings::step_timeout`]. A plan that ends with it (its
/// last step done, or failed past its fallbacks) ends now: the game hears of it in
/// this frame, and the actor decides again at the next turn.
pub(super) fn hear_reports(
    context: PlanContext,
    mut reports: MessageReader<ActionReport>,
    mut plans: Query<(Entity, &mut Plan)>,
    (mut completed, mut failed): (MessageWriter<PlanCompleted>, MessageWriter<PlanFailed>),
    mut commands: Commands,
) {
    let PlanContext {
        settings,
        time,
        registry,
        ..
    } = &context;
    let frame = context.frame();
    // The step out settled: the plan goes on, or ends now.
    let mut settle = |actor: Entity, plan: &mut Plan, outcome: Result<(), String>| {
        plan.awaiting = None;
        match outcome {
            Ok(()) => plan.refinement.report_done(),
            Err(reason) => (plan.refinement).report_failed(reason, registry, &frame.of(actor)),
        }
        if let Some(end) = plan.refinement.ended(registry) {
            let writers = (&mut completed, &mut failed);
            end_plan((actor, plan), end, writers, &mut commands);
        }
    };
    // Reports naming a step first: within one frame, a step's own report is its
    // outcome before another of the actor's doings with the step's verb.
    let mut heard: Vec<&ActionReport> = reports.read().collect();
    heard.sort_by_key(|report| report.plan.is_none());
    for report in heard {
        let Ok((actor, mut plan)) = plans.get_mut(report.actor) else {
            continue;
        };
        // Not the step's: another of the actor's doings, or a second report in one
        // frame (the step already heard).
        if !(plan.awaiting.as_ref()).is_some_and(|awaiting| awaiting.is_reported_by(report)) {
            continue;
        }
        settle(actor, &mut plan, outcome_of(report));
    }
    let now = time.elapsed();
    for (actor, mut plan) in &mut plans {
        let late = (plan.awaiting.as_ref())
            .filter(|awaiting| now.saturating_sub(awaiting.since) > settings.step_timeout);
        if let Some(late) = late {
            // What the game should have written is for its developer, not the actor.
            let verb = late.verb.as_deref().map_or_else(
                || " naming the step with `for_step` (its action declares no verb)".to_owned(),
                |verb| format!(" with the verb `{verb}`, or one naming the step with `for_step`"),
            );
            warn!(
                "plan step {} of {actor} got no `ActionReport`{verb} within {:?} \
                 (`PlanningSettings::step_timeout`)",
                late.step.step, settings.step_timeout
            );
            let reason = format!(
                "the game did not report on the step within {:?} (`PlanningSettings::step_timeout`)",
                settings.step_timeout
            );
            settle(actor, &mut plan, Err(reason));
        }
    }
}

/// A report as a step's outcome: its failure reason, when it failed.
fn outcome_of(report: &ActionReport) -> Result<(), String> {
    match report.outcome {
        Outcome::Success => Ok(()),
        Outcome::Failure => Err(report
            .failure_reason
            .clone()
            .unwrap_or_else(|| format!("the game refused `{}`", report.verb))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_whose_action_declares_no_verb_is_settled_only_by_a_report_naming_it() {
        let step = PlanStepRef {
            plan: 1,
            task_id: "tavern:serve".into(),
            method_id: "tavern:serve_by_hand".into(),
            step: "/steps/0".into(),
            number: 1,
            progress: (1, 2),
        };
        let marta = Entity::from_raw_u32(2).expect("a valid index");
        let awaiting = |verb: Option<&str>| Awaiting {
            step: step.clone(),
            verb: verb.map(Arc::from),
            since: Duration::ZERO,
        };
        let named = ActionReport::new(marta, "pour").for_step(Some(step.clone()));
        // Something else she did meanwhile: a room rented in a conversation.
        let rented = ActionReport::new(marta, "rent_room");
        let poured = ActionReport::new(marta, "pour");
        let verbless = awaiting(None);
        assert!(verbless.is_reported_by(&named));
        assert!(
            !verbless.is_reported_by(&rented),
            "not just any report of hers"
        );
        let pouring = awaiting(Some("pour"));
        assert!(pouring.is_reported_by(&named) && pouring.is_reported_by(&poured));
        assert!(!pouring.is_reported_by(&rented));
    }
}
