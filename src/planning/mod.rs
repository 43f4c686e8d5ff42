//! Planning: a task chosen by a model (or started by the game) is refined by one of its
//! methods into primitive actions, carried out one step at a time under the game's
//! rules.
//!
//! **Layer:** features. The refinement itself is [`Refinement`], a plain state machine
//! over the [`ContentRegistry`] and what the world says now ([`PlanFacts`]): it picks
//! the first applicable method, decides conditional steps when they are reached, binds
//! each action's targets to the task's parameters and applies the method's fallbacks
//! when a step fails. The systems only relay (`start` starts and stops plans, `steps`
//! hands out their steps and hears how each went):
//!
//! 1. [`StartPlan`] (from the game, or a smart actor's answer) puts a [`Plan`] on the
//!    actor and writes [`PlanStarted`] (one written before content has loaded waits
//!    for it);
//! 2. each frame (or once a turn, by [`PlanningSettings::cadence`]), in
//!    [`LoomSystems::Decide`], a plan with no step out hands the game its next step as
//!    an [`ActionRequest`] whose `plan` names the step, and writes [`PlanStepIssued`];
//! 3. the game carries it out as any request and writes its [`ActionReport`], naming
//!    the step ([`ActionReport::for_step`]) or with the verb the step's action
//!    declares: the next such report for that actor is the step's outcome (another of
//!    its doings meanwhile is not), or the step fails after
//!    [`PlanningSettings::step_timeout`];
//! 4. the plan ends with [`PlanCompleted`] or [`PlanFailed`] (with the reason and the
//!    step), and its component is removed: in the frame its last step's report comes
//!    (whatever the cadence: its actor decides again at the next turn), or when its
//!    next step is to be handed out and none is left; [`StopPlan`] ends it early, as
//!    failed.
//!    Despawning the actor ends it with the actor; an entity parameter not in the
//!    world as it starts fails it at once, and a bound target gone since fails the step
//!    that needs it.
//!
//! While a plan runs its actor carries [`FollowingPlan`], and a smart actor is not asked
//! to decide: the plan decides for it, until it ends or the player's words interrupt, or
//! a fight (`InCombat`) stops it. Its next prompt then says how the plan ended.

mod bind;
mod facts;
mod refine;
mod start;
mod steps;

use std::sync::Arc;
use std::time::Duration;

use bevy::prelude::*;

pub use bind::{BoundTask, PlanFacts, PlannedAction};
use facts::FrameWorld;
pub use facts::{WorldFacts, describe};
pub use refine::{PlanFailure, PlanStep, Refinement, StepPath};
use start::{start_plans, stop_plans};
use steps::{Awaiting, advance_plans, hear_reports};

use crate::content::{ContentRegistry, content_loaded};
use crate::world::{
    ActionMenu, ActionReport, ActionRequest, FollowingPlan, LoomSystems, PlanStepRef,
    WorldViewQuery,
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
    /// Once the last step was reported on and the plan took none this turn (since the
    /// [`TurnClock`](crate::world::TurnClock) last moved on: a
    /// [`TurnEnded`](crate::world::TurnEnded), or a tick of the smart actors' real-time
    /// cadence): a turn-based game, one step a turn. A plan started during a turn
    /// takes its first step in it, in the frame it starts (whichever frame of
    /// the turn its smart actor's answer came in); one started before any turn ended
    /// waits for the first.
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
    /// The task's command, with its parameters named: "serve Traveler mug of ale".
    command: String,
    /// The step handed to the game and not reported on yet.
    awaiting: Option<Awaiting>,
    /// The [turn](crate::world::TurnClock) it last handed the game a step in: by turns
    /// ([`PlanCadence::EveryTurn`]) it takes one a turn.
    stepped_in: Option<u64>,
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
        crate::world::TurnClockPlugin::add_once(app);
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

fn task_id(plan: &Plan) -> String {
    // Kept beside the refinement, which lets its task go once it is done.
    plan.ids.0.to_string()
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

/// The task and method ids, step pointers and verbs plan steps name, each kept once: the
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
