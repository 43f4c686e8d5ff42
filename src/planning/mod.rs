//! Planning: a task chosen by a model (or started by the game) is refined by one of its
//! methods into primitive actions, carried out one step at a time under the game's
//! rules.
//!
//! **Layer:** features. The refinement itself is [`Refinement`], a plain state machine
//! over the [`ContentRegistry`] and what the world says now ([`PlanFacts`]): it picks
//! the first applicable method, decides conditional steps when they are reached, binds
//! each action's targets to the task's parameters and applies the method's fallbacks
//! when a step fails. The systems here only relay:
//!
//! 1. [`StartPlan`] (from the game, or a smart actor's answer) puts a [`Plan`] on the
//!    actor and writes [`PlanStarted`] (one written before content has loaded waits
//!    for it);
//! 2. each frame (or each [`TurnEnded`], by [`PlanningSettings::cadence`]), in
//!    [`LoomSystems::Decide`], a plan with no step out hands the game its next step as
//!    an [`ActionRequest`] whose `plan` names the step, and writes [`PlanStepIssued`];
//! 3. the game carries it out as any request and writes its [`ActionReport`], naming
//!    the step ([`ActionReport::for_step`]) or with the verb the step's action
//!    declares: the next such report for that actor is the step's outcome (another of
//!    its doings meanwhile is not), or the step fails after
//!    [`PlanningSettings::step_timeout`];
//! 4. the plan ends with [`PlanCompleted`] or [`PlanFailed`] (with the reason and the
//!    step), and its component is removed; [`StopPlan`] ends it early, as failed.
//!    Despawning the actor ends it with the actor; a bound target that is gone fails
//!    the step that needs it.
//!
//! While a plan runs its actor carries [`FollowingPlan`], and a smart actor is not asked
//! to decide: the plan decides for it, until it ends or the player's words interrupt, or
//! a fight (`InCombat`) stops it. Its next prompt then says how the plan ended.

mod facts;
mod refine;

use std::sync::Arc;
use std::time::Duration;

use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;

use facts::FrameWorld;
pub use facts::{WorldFacts, describe};
pub use refine::{
    BoundTask, PlanFacts, PlanFailure, PlanStep, PlannedAction, Refinement, StepPath,
};

use crate::content::{ContentRegistry, content_loaded};
use crate::world::{
    ActionMenu, ActionReport, ActionRequest, FollowingPlan, LoomSystems, Outcome, PlanStepRef,
    TurnEnded, WorldViewQuery,
};
pub use crate::world::{ParamValue, PlanCompleted, PlanFailed, PlanOrigin, StartPlan, StopPlan};

/// Carries out plans: [`StartPlan`] in, [`ActionRequest`]s out, [`ActionReport`]s back.
#[derive(Debug, Clone, Default)]
pub struct PlanningPlugin {
    /// How plans move; copied into the [`PlanningSettings`] resource.
    pub settings: PlanningSettings,
}

/// How plans move; may change while the game runs.
#[derive(Resource, Debug, Clone, PartialEq, Reflect)]
#[reflect(Resource, Default)]
pub struct PlanningSettings {
    /// When a plan takes its next step.
    pub cadence: PlanCadence,
    /// How long the game may take to report on a step before the step fails.
    pub step_timeout: Duration,
}

impl Default for PlanningSettings {
    fn default() -> Self {
        Self {
            cadence: PlanCadence::EveryFrame,
            step_timeout: Duration::from_secs(30),
        }
    }
}

/// When plans take their next step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Reflect)]
pub enum PlanCadence {
    /// In any frame, once the last step was reported on: a real-time game.
    #[default]
    EveryFrame,
    /// In a frame with a [`TurnEnded`], once the last step was reported on: a
    /// turn-based game, one step a turn.
    EveryTurn,
}

/// A plan started.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct PlanStarted {
    /// Who carries it out.
    pub actor: Entity,
    /// The task.
    pub task_id: String,
    /// The method chosen for it.
    pub method_id: String,
}

/// A plan handed the game a step: the [`ActionRequest`] written beside it carries the
/// same `step`, with the command.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct PlanStepIssued {
    /// Who carries it out.
    pub actor: Entity,
    /// The step.
    pub step: PlanStepRef,
}

/// A step handed to the game: what reports on it, and since when.
#[derive(Debug, Clone)]
struct Awaiting {
    step: PlanStepRef,
    /// The canonical verb its action declares: a report that names no step is the
    /// step's only with it (any, when the action declares none).
    verb: Option<String>,
    /// When it was handed out, in [`Time`]'s elapsed time.
    since: Duration,
}

impl Awaiting {
    /// Whether `report` is this step's outcome: it names this step, or it names none
    /// and has the step's verb. Another of the actor's doings meanwhile (an ability it
    /// used in a conversation, say) is not.
    fn is_reported_by(&self, report: &ActionReport) -> bool {
        match &report.plan {
            Some(step) => *step == self.step,
            None => (self.verb.as_deref()).is_none_or(|verb| verb == report.verb),
        }
    }
}

/// The plan an actor is carrying out: readable by the game and debug views; removed when
/// it completes or fails. It brings [`FollowingPlan`] with it, so smart actors are not
/// asked to decide while it runs.
#[derive(Component, Debug, Clone)]
#[require(FollowingPlan)]
pub struct Plan {
    refinement: Refinement,
    chosen_by: PlanOrigin,
    /// The task's and the current method's ids, shared by the steps' requests.
    ids: (Arc<str>, Arc<str>),
    /// How many steps the current method has.
    method_steps: usize,
    /// The task's command, with its parameters named: "serve Traveler mug of ale".
    command: String,
    /// The step handed to the game and not reported on yet.
    awaiting: Option<Awaiting>,
    /// Whether it put [`FollowingPlan`] on its actor, which had none: it takes it off
    /// when it ends. A game's own hold on an actor outlives the plan.
    brought_hold: bool,
    /// Its number among the plans started ([`PlanStepRef::plan`]).
    number: u64,
}

impl Plan {
    /// The task and its parameters.
    pub fn task(&self) -> Option<&BoundTask> {
        self.refinement.task()
    }

    /// The method carrying out the innermost task now.
    pub fn method(&self) -> Option<&str> {
        self.refinement.method()
    }

    /// How many of its actions the game carried out.
    pub fn actions_done(&self) -> usize {
        self.refinement.actions_done()
    }

    /// The step handed to the game and not reported on yet.
    pub fn awaiting(&self) -> Option<&PlanStepRef> {
        self.awaiting.as_ref().map(|awaiting| &awaiting.step)
    }

    /// Who chose the task.
    pub fn chosen_by(&self) -> PlanOrigin {
        self.chosen_by
    }

    /// Takes the plan off `actor`, and the [`FollowingPlan`] it brought.
    fn take_off(&self, actor: Entity, commands: &mut Commands) {
        let mut actor = commands.entity(actor);
        if self.brought_hold {
            actor.try_remove::<(Plan, FollowingPlan)>();
        } else {
            actor.try_remove::<Plan>();
        }
    }

    /// The plan of `actor`, ended early for `reason`: with the step handed to the
    /// game, if one was.
    fn ended(&self, actor: Entity, reason: String) -> PlanFailed {
        let step =
            (self.awaiting()).map(|step| (step.method_id.to_string(), step.step.to_string()));
        PlanFailed {
            actor,
            task_id: task_id(self),
            reason,
            step,
            chosen_by: self.chosen_by,
        }
    }

    /// The task's command as it started, its entity parameters named: "serve
    /// Traveler mug of ale from long bar".
    pub fn command(&self) -> &str {
        &self.command
    }
}

impl Plugin for PlanningPlugin {
    fn build(&self, app: &mut App) {
        crate::world::configure_loom_sets(app);
        app.insert_resource(self.settings.clone())
            .register_type::<PlanningSettings>()
            .init_resource::<WorldFacts>()
            .init_resource::<PlanIds>()
            .add_message::<StartPlan>()
            .add_message::<PlanStarted>()
            .add_message::<PlanStepIssued>()
            .add_message::<PlanCompleted>()
            .add_message::<PlanFailed>()
            .add_message::<StopPlan>()
            .add_message::<ActionRequest>()
            .add_message::<ActionReport>()
            .add_message::<TurnEnded>()
            .add_systems(
                Update,
                (
                    (
                        stop_plans.run_if(content_loaded),
                        start_plans,
                        advance_plans.run_if(content_loaded),
                    )
                        .chain()
                        .in_set(LoomSystems::Decide),
                    hear_reports.in_set(LoomSystems::Narrate),
                ),
            );
    }
}

/// What plans read besides themselves.
#[derive(bevy::ecs::system::SystemParam)]
struct PlanContext<'w, 's> {
    settings: Res<'w, PlanningSettings>,
    time: Res<'w, Time>,
    registry: Res<'w, ContentRegistry>,
    world: WorldViewQuery<'w, 's>,
    world_facts: Res<'w, WorldFacts>,
}

impl<'w, 's> PlanContext<'w, 's> {
    /// The world of this frame, as plans read it.
    fn frame(&self) -> FrameWorld<'_, 'w, 's> {
        FrameWorld::new(&self.world, &self.world_facts)
    }
}

/// The messages planning writes.
#[derive(bevy::ecs::system::SystemParam)]
struct PlanWriters<'w> {
    started: MessageWriter<'w, PlanStarted>,
    issued: MessageWriter<'w, PlanStepIssued>,
    completed: MessageWriter<'w, PlanCompleted>,
    failed: MessageWriter<'w, PlanFailed>,
    requests: MessageWriter<'w, ActionRequest>,
}

/// Ends the plan of each actor a [`StopPlan`] names, as failed with its reason and the
/// step handed to the game, if one was.
fn stop_plans(
    mut stops: MessageReader<StopPlan>,
    plans: Query<&Plan>,
    mut commands: Commands,
    mut failed: MessageWriter<PlanFailed>,
) {
    for stop in stops.read() {
        let Ok(plan) = plans.get(stop.actor) else {
            continue;
        };
        failed.write(plan.ended(stop.actor, stop.reason.clone()));
        plan.take_off(stop.actor, &mut commands);
    }
}

/// Puts a [`Plan`] on each actor a [`StartPlan`] names, with its task's first
/// applicable method; a task that cannot start is a [`PlanFailed`] at once. A plan
/// started over one running ends that one first, as failed. Starts that come before
/// content has loaded (a game's `Startup` systems) wait for it.
fn start_plans(
    context: PlanContext,
    mut starts: Starts,
    actors: Query<(Option<&Plan>, Has<FollowingPlan>)>,
    mut commands: Commands,
    mut out: PlanWriters,
    mut ids: ResMut<PlanIds>,
    mut tasks: Local<MenuCache>,
) {
    let registry = &context.registry;
    let starts = starts.take(registry.generation() > 0);
    if starts.is_empty() {
        return;
    }
    let frame = context.frame();
    let (tasks, _) = tasks.of(registry, ActionMenu::of_tasks);
    // The plans put on this frame, not yet in the world: a later start replaces them.
    let mut put_on: EntityHashMap<Plan> = EntityHashMap::default();
    for start in &starts {
        let facts = frame.of(start.actor);
        let name = |entity| frame.name(entity);
        let begun = match commands.get_spawned_entity(start.actor) {
            Ok(_) => begin(start, (registry, tasks, &facts, name), &mut ids),
            Err(_) => Err(PlanFailure {
                reason: format!(
                    "the actor {} is not in the world (despawned, or its spawn not applied yet)",
                    start.actor
                ),
                step: None,
            }),
        };
        match begun {
            Ok(mut plan) => {
                let now = actors.get(start.actor).ok();
                let running = now.and_then(|(plan, _)| plan);
                let replaced = put_on.get(&start.actor).or(running);
                plan.brought_hold = match replaced {
                    Some(replaced) => {
                        let reason = format!("replaced by a new plan: `{}`", start.task_id);
                        out.failed.write(replaced.ended(start.actor, reason));
                        replaced.brought_hold
                    }
                    None => !now.is_some_and(|(_, held)| held),
                };
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
    for (actor, plan) in put_on {
        // A command of the game's applied first may despawn it: nobody is left to
        // follow the plan then.
        commands.entity(actor).try_insert(plan);
    }
}

/// The plans to start: those written before content had loaded, then those written
/// since the last frame.
#[derive(bevy::ecs::system::SystemParam)]
struct Starts<'w, 's> {
    written: MessageReader<'w, 's, StartPlan>,
    early: Local<'s, Vec<StartPlan>>,
}

impl Starts<'_, '_> {
    /// Those to start now; none until content has `loaded`, when they are kept.
    fn take(&mut self, loaded: bool) -> Vec<StartPlan> {
        let written = self.written.read().cloned();
        if !loaded {
            self.early.extend(written);
            return Vec::new();
        }
        let mut starts = std::mem::take(&mut *self.early);
        starts.extend(written);
        starts
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
    let targets: Vec<Entity> = (bound.params.iter())
        .filter_map(|(_, value)| value.entity())
        .collect();
    let command =
        (tasks.render(&start.task_id, &targets, name)).unwrap_or_else(|| start.task_id.clone());
    let refinement = Refinement::start(bound, registry, facts)?;
    let method_id = refinement.method().unwrap_or_default();
    let method_steps = registry.method(method_id).map_or(0, |m| m.steps.len());
    let method = ids.get(method_id);
    Ok(Plan {
        refinement,
        chosen_by: start.chosen_by,
        ids: (ids.get(&start.task_id), method),
        method_steps,
        command,
        awaiting: None,
        brought_hold: true,
        number: ids.next_plan(),
    })
}

/// Hands the game the next step of each plan with none out, or ends the plan.
fn advance_plans(
    context: PlanContext,
    mut turns: MessageReader<TurnEnded>,
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
    let turn_ended = turns.read().count() > 0;
    if settings.cadence == PlanCadence::EveryTurn && !turn_ended {
        return;
    }
    let mut ready = plans
        .iter_mut()
        .filter(|(_, plan)| plan.awaiting.is_none())
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
                let verb = registry
                    .action(&action.action_id)
                    .and_then(|a| a.verb.clone());
                let request = request_for(actor, action, step.clone(), (registry, menu), &frame);
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
            }
            PlanStep::Done => {
                out.completed.write(PlanCompleted {
                    actor,
                    task_id: task_id(plan),
                    actions: plan.actions_done(),
                    chosen_by: plan.chosen_by,
                });
                plan.take_off(actor, &mut commands);
            }
            PlanStep::Failed(failure) => {
                out.failed.write(PlanFailed {
                    actor,
                    task_id: task_id(plan),
                    reason: failure.reason,
                    step: failure.step,
                    chosen_by: plan.chosen_by,
                });
                plan.take_off(actor, &mut commands);
            }
        }
    }
}

fn task_id(plan: &Plan) -> String {
    // Kept beside the refinement, which lets its task go once it is done.
    plan.ids.0.to_string()
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
        plan.method_steps = registry.method(method).map_or(0, |m| m.steps.len());
    }
    PlanStepRef {
        plan: plan.number,
        task_id: Arc::clone(&plan.ids.0),
        method_id: Arc::clone(&plan.ids.1),
        step: ids.pointer(&action.step),
        number: plan.actions_done() + 1,
        progress: (action.step.top_level() + 1, plan.method_steps),
    }
}

/// A menu of the registry's actions or tasks, built again when the content changes, so
/// each command template is parsed once per content generation.
#[derive(Default)]
struct MenuCache {
    /// The content generation it was built from; `None` before it was.
    generation: Option<u64>,
    menu: ActionMenu,
}

impl MenuCache {
    /// The menu `build` makes of `registry`, and whether it was built just now.
    fn of(
        &mut self,
        registry: &ContentRegistry,
        build: fn(&ContentRegistry) -> ActionMenu,
    ) -> (&ActionMenu, bool) {
        let rebuilt = self.generation != Some(registry.generation());
        if rebuilt {
            self.menu = build(registry);
            self.generation = Some(registry.generation());
        }
        (&self.menu, rebuilt)
    }
}

/// The task and method ids and step pointers plan steps name, each kept once: the
/// requests of every plan share them, so a frame's thousand steps allocate none.
#[derive(Resource, Default)]
struct PlanIds {
    /// How many plans were started.
    started: u64,
    shared: bevy::platform::collections::HashSet<Arc<str>>,
    /// Each step's JSON pointer, by where the step is: written once.
    pointers: bevy::platform::collections::HashMap<StepPath, Arc<str>>,
}

impl PlanIds {
    /// The number of a plan starting now: one more than the last.
    fn next_plan(&mut self) -> u64 {
        self.started += 1;
        self.started
    }

    /// The shared JSON pointer of the step at `path`.
    fn pointer(&mut self, path: &StepPath) -> Arc<str> {
        if let Some(pointer) = self.pointers.get(path) {
            return Arc::clone(pointer);
        }
        let pointer = self.get(&path.to_string());
        self.pointers.insert(path.clone(), Arc::clone(&pointer));
        pointer
    }

    fn get(&mut self, id: &str) -> Arc<str> {
        if let Some(shared) = self.shared.get(id) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = id.into();
        self.shared.insert(Arc::clone(&shared));
        shared
    }
}

/// The request for a plan's action: its command rendered with the world's names, and the
/// parameters whose value is not the action's default.
fn request_for(
    actor: Entity,
    action: PlannedAction,
    step: PlanStepRef,
    (registry, menu): (&ContentRegistry, &ActionMenu),
    frame: &FrameWorld,
) -> ActionRequest {
    let targets = action.targets;
    let command = (menu.render(&action.action_id, &targets, |e| frame.name(e)))
        .unwrap_or_else(|| action.action_id.to_string());
    // Most actions have no parameters: their definition is not looked up again.
    let definition = (!action.parameters.is_empty())
        .then(|| registry.action(&action.action_id))
        .flatten();
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
/// longer than [`PlanningSettings::step_timeout`].
fn hear_reports(
    context: PlanContext,
    mut reports: MessageReader<ActionReport>,
    mut plans: Query<(Entity, &mut Plan)>,
) {
    let PlanContext {
        settings,
        time,
        registry,
        ..
    } = &context;
    let frame = context.frame();
    let fail = |actor: Entity, plan: &mut Plan, reason: String| {
        plan.awaiting = None;
        plan.refinement
            .report_failed(reason, registry, &frame.of(actor));
    };
    for report in reports.read() {
        let Ok((actor, mut plan)) = plans.get_mut(report.actor) else {
            continue;
        };
        // Not the step's: another of the actor's doings, or a second report in one
        // frame (the step already heard).
        if !(plan.awaiting.as_ref()).is_some_and(|awaiting| awaiting.is_reported_by(report)) {
            continue;
        }
        match outcome_of(report) {
            Ok(()) => {
                plan.awaiting = None;
                plan.refinement.report_done();
            }
            Err(reason) => fail(actor, &mut plan, reason),
        }
    }
    let now = time.elapsed();
    for (actor, mut plan) in &mut plans {
        let late = (plan.awaiting.as_ref())
            .filter(|awaiting| now.saturating_sub(awaiting.since) > settings.step_timeout);
        if let Some(late) = late {
            // What the game should have written is for its developer, not the actor.
            let verb = late.verb.as_deref().map_or_else(String::new, |verb| {
                format!(" with the verb `{verb}`, or one naming the step with `for_step`")
            });
            warn!(
                "plan step {} of {actor} got no `ActionReport`{verb} within {:?} \
                 (`PlanningSettings::step_timeout`)",
                late.step.step, settings.step_timeout
            );
            let reason = format!(
                "the game did not report on the step within {:?} (`PlanningSettings::step_timeout`)",
                settings.step_timeout
            );
            fail(actor, &mut plan, reason);
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
