//! The game's side of an action: what an actor asks the game to carry out
//! ([`ActionRequest`], from a smart actor's decision or a plan's step), what happened
//! when it did ([`ActionReport`], which narration tells and plans advance on), and the
//! tasks plans carry out ([`StartPlan`], from the game or a smart actor's answer, and
//! how a plan ends). Every feature shares them; the game's own rules sit between.

use bevy::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How an action ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It happened.
    #[default]
    Success,
    /// The game refused or it did not work; see the report's `failure_reason`.
    Failure,
}

/// Something that changed as a side effect of an action: a character stepping down
/// from a table, a door swinging open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectReport {
    /// What kind of change: `position_change`, `state_change`, `inventory_change`.
    pub kind: String,
    /// The canonical effect (`step_down`, `sit_down`, `enter`): the key narration
    /// looks up in `effect_fragments`.
    pub action: String,
    /// The entity the effect happened to or at (the bench sat on, the room entered).
    pub target: Option<Entity>,
    /// Where it came from (the table stepped down from, the room left).
    pub from: Option<Entity>,
}

impl EffectReport {
    /// An effect of this kind and canonical action.
    pub fn new(kind: impl Into<String>, action: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            action: action.into(),
            target: None,
            from: None,
        }
    }

    /// Where the effect happened.
    #[must_use]
    pub fn target(mut self, target: Entity) -> Self {
        self.target = Some(target);
        self
    }

    /// Where it came from.
    #[must_use]
    pub fn from(mut self, from: Entity) -> Self {
        self.from = Some(from);
        self
    }
}

/// What happened when an action was carried out, written by the game after it
/// executes an [`ActionRequest`] or a player's command.
/// Narration turns each report into exactly one final
/// [`NarrationText`](crate::narration::NarrationText).
///
/// Narration reads the entities a report names (their names, fragments, whether one
/// is the player, and the place it happened, whose characters witness it) in
/// [`LoomSystems::Narrate`](crate::LoomSystems::Narrate) of the frame the report is
/// read. The place is the report's [`at`](Self::at), or the one its actor is in then:
/// name where the actor acted when you move it as you report (a character that
/// leaves is seen leaving by those it left). An entity despawned before then is told
/// as "someone": despawn a killed character after that set, or a frame later.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_loom::world::{ActionReport, EffectReport};
/// # let (marta, mug, bench) = (Entity::PLACEHOLDER, Entity::PLACEHOLDER, Entity::PLACEHOLDER);
/// let report = ActionReport::new(marta, "take")
///     .object(mug)
///     .new_state("carried")
///     .effect(EffectReport::new("position_change", "stand_up").from(bench));
/// let refused = ActionReport::new(marta, "take").object(mug).failed("not_here");
/// ```
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct ActionReport {
    /// Who acted.
    pub actor: Entity,
    /// The canonical verb (`take`, `give`, `greet`).
    pub verb: String,
    /// What it was done to.
    pub object: Option<Entity>,
    /// To whom or what, for verbs with two targets ("give X to Y").
    pub indirect_object: Option<Entity>,
    /// With what ("unlock X with Y").
    pub instrument: Option<Entity>,
    /// Whether it happened.
    pub outcome: Outcome,
    /// Why it failed: a canonical failure reason (`locked`, `not_here`).
    pub failure_reason: Option<String>,
    /// The object's state afterwards (or the actor's, without an object): a key of its
    /// `state_variants` (`carried`, `sitting`).
    pub new_state: Option<String>,
    /// Side effects.
    pub effects: Vec<EffectReport>,
    /// Free text to pass along as it is: words read aloud, a note's content.
    pub text: Option<String>,
    /// The plan step it reports on: the request's [`plan`](ActionRequest::plan), so
    /// that no other report of the actor's is taken for the step's outcome
    /// ([`for_step`](Self::for_step)). A report naming no step is a step's outcome
    /// when it has the verb the step's action declares.
    pub plan: Option<PlanStepRef>,
    /// Where it happened, whose characters witness it; `None` for the place its actor
    /// is in when it is narrated. Set it when the action moved its actor: the place
    /// it left ([`at`](Self::at)).
    pub place: Option<Entity>,
}

impl ActionReport {
    /// A successful action by `actor` with this canonical verb.
    pub fn new(actor: Entity, verb: impl Into<String>) -> Self {
        Self {
            actor,
            verb: verb.into(),
            object: None,
            indirect_object: None,
            instrument: None,
            outcome: Outcome::Success,
            failure_reason: None,
            new_state: None,
            effects: Vec::new(),
            text: None,
            plan: None,
            place: None,
        }
    }

    /// The plan step it reports on: the request's `plan`.
    #[must_use]
    pub fn for_step(mut self, step: Option<PlanStepRef>) -> Self {
        self.plan = step;
        self
    }

    /// Where it happened: the place its actor acted in, when it is not there any
    /// more once the report is narrated (it left).
    #[must_use]
    pub fn at(mut self, place: Option<Entity>) -> Self {
        self.place = place;
        self
    }

    /// What it was done to.
    #[must_use]
    pub fn object(mut self, object: Entity) -> Self {
        self.object = Some(object);
        self
    }

    /// The second target.
    #[must_use]
    pub fn indirect_object(mut self, indirect_object: Entity) -> Self {
        self.indirect_object = Some(indirect_object);
        self
    }

    /// The instrument.
    #[must_use]
    pub fn instrument(mut self, instrument: Entity) -> Self {
        self.instrument = Some(instrument);
        self
    }

    /// The action failed for this canonical reason.
    #[must_use]
    pub fn failed(mut self, reason: impl Into<String>) -> Self {
        self.outcome = Outcome::Failure;
        self.failure_reason = Some(reason.into());
        self
    }

    /// The object's (or actor's) state afterwards.
    #[must_use]
    pub fn new_state(mut self, state: impl Into<String>) -> Self {
        self.new_state = Some(state.into());
        self
    }

    /// A side effect.
    #[must_use]
    pub fn effect(mut self, effect: EffectReport) -> Self {
        self.effects.push(effect);
        self
    }

    /// Free text to pass along.
    #[must_use]
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }
}

/// An action's targets in slot order (primary, secondary, tertiary): at most three,
/// kept inline. Build one with `ActionTargets::from_slice(&[item, recipient])`.
pub type ActionTargets = smallvec::SmallVec<[Entity; 3]>;

/// A validated request for the game to carry out.
///
/// It was valid when offered; the world may have moved on while the model thought,
/// so check it against your rules before you carry it out (and refuse if it no
/// longer makes sense).
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct ActionRequest {
    /// Who acts.
    pub actor: Entity,
    /// The action definition's `mod:action` id, shared with the content it came from.
    pub action_id: std::sync::Arc<str>,
    /// The targets, in slot order.
    pub targets: ActionTargets,
    /// The command as offered: "give mug of ale to Marta".
    pub command: String,
    /// The action's parameters whose value here is not their default: a plan step's
    /// overrides. Empty when every default applies (always, for a smart actor's decision).
    pub parameters: std::collections::BTreeMap<String, serde_json::Value>,
    /// The plan step it carries out, when a plan asked for it; its [`ActionReport`]
    /// advances the plan (name the step in it with
    /// [`ActionReport::for_step`]).
    pub plan: Option<PlanStepRef>,
}

/// The plan step an [`ActionRequest`] carries out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanStepRef {
    /// Which plan it is of: each plan started has a number of its own, so a late
    /// report of a plan since replaced or stopped is not taken for a later one's.
    pub plan: u64,
    /// The task the plan carries out (`tavern:serve_drink`).
    pub task_id: std::sync::Arc<str>,
    /// The method whose step this is (`tavern:serve_by_hand`).
    pub method_id: std::sync::Arc<str>,
    /// The step's JSON pointer in the method (`/steps/1`).
    pub step: std::sync::Arc<str>,
    /// Which action of the plan this is, from 1.
    pub number: usize,
    /// Where the step is in its method: its place among the method's steps, from 1
    /// (an action inside a conditional step counts as that step), and how many steps
    /// the method has. `(2, 4)` is "step 2 of 4".
    pub progress: (usize, usize),
}

/// Who chose a plan's task: the one a failed plan is handed back to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Reflect)]
pub enum PlanOrigin {
    /// The game started it.
    #[default]
    Game,
    /// A smart actor's answer chose it.
    Model,
}

/// A plan carried out every step.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct PlanCompleted {
    /// Who carried it out.
    pub actor: Entity,
    /// The task.
    pub task_id: String,
    /// How many actions it took.
    pub actions: usize,
    /// Who chose the task.
    pub chosen_by: PlanOrigin,
}

/// A plan could not go on; its task is handed back to whoever chose it.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct PlanFailed {
    /// Who carried it out.
    pub actor: Entity,
    /// The task.
    pub task_id: String,
    /// Why: the game's failure reason, a target that is gone, no method left that applies.
    pub reason: String,
    /// The method and the JSON pointer of the step that failed, when one did.
    pub step: Option<(String, String)>,
    /// Who chose the task.
    pub chosen_by: PlanOrigin,
}

/// The value of one task parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// An entity parameter's entity.
    Entity(Entity),
    /// A value parameter's value.
    Value(Value),
}

impl ParamValue {
    /// The entity, for an entity parameter's value.
    pub fn entity(&self) -> Option<Entity> {
        match self {
            Self::Entity(entity) => Some(*entity),
            Self::Value(_) => None,
        }
    }
}

/// Starts a task for an actor, replacing any plan it has. Written by the game, or by
/// smart actors for an answer that chose a task, which replaces no plan: an actor on one
/// is not asked to decide, and a start of the model's over one fails.
#[derive(Message, Debug, Clone, PartialEq)]
pub struct StartPlan {
    /// Who carries it out.
    pub actor: Entity,
    /// The task's `mod:task` id.
    pub task_id: String,
    /// Its parameters; value parameters left out take their defaults.
    pub params: Vec<(String, ParamValue)>,
    /// Who chose it.
    pub chosen_by: PlanOrigin,
}

impl StartPlan {
    /// `actor` carries out `task_id`, as the game chose.
    pub fn new(actor: Entity, task_id: impl Into<String>) -> Self {
        Self {
            actor,
            task_id: task_id.into(),
            params: Vec::new(),
            chosen_by: PlanOrigin::Game,
        }
    }

    /// With the entity parameter `name` bound to `entity`.
    #[must_use]
    pub fn entity(mut self, name: impl Into<String>, entity: Entity) -> Self {
        self.params.push((name.into(), ParamValue::Entity(entity)));
        self
    }

    /// With the value parameter `name` set to `value`.
    #[must_use]
    pub fn value(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.params
            .push((name.into(), ParamValue::Value(value.into())));
        self
    }
}

/// Ends an actor's plan before it is done, as [`PlanFailed`] with this reason: the
/// game's say, or smart actors' when a fight breaks out around one following a plan.
/// Written before content has loaded, it calls off the actor's [`StartPlan`]s written
/// in earlier frames, each answered with a [`PlanFailed`] with this reason (as once
/// loaded, a stop and a start of one frame leave the start's plan running).
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct StopPlan {
    /// Whose plan.
    pub actor: Entity,
    /// Why it stops, for the game, a log and the actor's next prompt.
    pub reason: String,
}
