//! Refining a task into primitive actions, one step at a time.

use super::bind::{BoundTask, PlanFacts, PlannedAction, bind_action, bind_task, condition_data};
use crate::content::{
    ConditionArena, ConditionalFailure, ContentRegistry, FallbackBehavior, RefinementMethod,
    RefinementStep,
};

/// Where a step is in its method: its index in each list of steps from the method's
/// own, and the branch taken at each conditional step on the way. Displayed as the
/// step's JSON pointer: `/steps/0/thenSteps/1`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct StepPath(smallvec::SmallVec<[(usize, bool); 4]>);

impl StepPath {
    fn of(cursor: &[Cursor]) -> Self {
        let levels = cursor.iter();
        Self(
            levels
                .map(|level| (level.index, level.branch != Some(false)))
                .collect(),
        )
    }
}

impl StepPath {
    /// The index of the method's own step it is in, from 0.
    pub fn top_level(&self) -> usize {
        self.0.first().map_or(0, |&(index, _)| index)
    }
}

impl std::fmt::Display for StepPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("/steps")?;
        let last = self.0.len().saturating_sub(1);
        for (depth, &(index, then)) in self.0.iter().enumerate() {
            write!(f, "/{index}")?;
            if depth < last {
                f.write_str(if then { "/thenSteps" } else { "/elseSteps" })?;
            }
        }
        Ok(())
    }
}

/// Why a plan failed, and at which step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanFailure {
    /// What went wrong, for the game, a log and the next prompt.
    pub reason: String,
    /// The method and the JSON pointer of the step, when a step failed.
    pub step: Option<(String, String)>,
}

/// What a plan does next.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanStep {
    /// Ask the game to carry out this action, then [`report`](Refinement::report) how it went.
    Act(PlannedAction),
    /// Every step is done.
    Done,
    /// The plan cannot go on.
    Failed(PlanFailure),
}

/// A task being carried out: the method chosen for it and where in its steps the plan
/// is, with the methods of the tasks its steps run.
#[derive(Debug, Clone, PartialEq)]
pub struct Refinement {
    /// The task, then each task a step of the one before runs.
    frames: Vec<Frame>,
    /// The step last handed out, when its outcome is awaited.
    awaiting: bool,
    /// How many actions were carried out.
    done: usize,
    failed: Option<PlanFailure>,
}

/// One task of a plan, and where its method is.
#[derive(Debug, Clone, PartialEq)]
struct Frame {
    task: BoundTask,
    method: String,
    /// The plan's actions done when the task began: its own are those done since.
    started: usize,
    /// Methods of the task already tried and failed.
    tried: Vec<String>,
    /// The step within the method: an index in its steps, then, inside a conditional
    /// step, the branch taken and an index in it, and so on.
    cursor: Vec<Cursor>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Cursor {
    index: usize,
    /// For a conditional step: whether its condition held, once decided.
    branch: Option<bool>,
}

impl Refinement {
    /// Starts `task` with the first of its methods (in preference order) whose
    /// applicability holds now; an error when none does.
    pub fn start(
        task: BoundTask,
        registry: &ContentRegistry,
        facts: &impl PlanFacts,
    ) -> Result<Self, PlanFailure> {
        let frame = choose_method(task, Vec::new(), (0, 0), registry, facts)
            .map_err(|reason| PlanFailure { reason, step: None })?;
        Ok(Self {
            frames: vec![frame],
            awaiting: false,
            done: 0,
            failed: None,
        })
    }

    /// The task the plan carries out.
    pub fn task(&self) -> Option<&BoundTask> {
        self.frames.first().map(|frame| &frame.task)
    }

    /// The method carrying out the innermost task now.
    pub fn method(&self) -> Option<&str> {
        self.frames.last().map(|frame| frame.method.as_str())
    }

    /// How many actions were carried out so far.
    pub fn actions_done(&self) -> usize {
        self.done
    }

    /// What to do next, deciding conditional steps and binding targets by the world as
    /// it is now. Until its outcome is [reported](Self::report), the same action is
    /// handed out again.
    pub fn next_step(&mut self, registry: &ContentRegistry, facts: &impl PlanFacts) -> PlanStep {
        // Each pass moves into or out of one step; a method has finitely many, nesting is
        // bounded at load, and a replan tries each method once.
        loop {
            if let Some(failure) = &self.failed {
                return PlanStep::Failed(failure.clone());
            }
            let Some(frame) = self.frames.last_mut() else {
                return PlanStep::Done;
            };
            let Some(method) = registry.method(&frame.method) else {
                let reason = format!("method `{}` is no longer loaded", frame.method);
                self.fail(reason, None);
                continue;
            };
            let Some(steps) = current(method, &frame.cursor) else {
                let reason = format!("method `{}` changed while it ran", frame.method);
                self.fail(reason, None);
                continue;
            };
            let Some(cursor) = frame.cursor.last().copied() else {
                self.frames.clear();
                continue;
            };
            let Some(step) = steps.get(cursor.index) else {
                self.leave_step_list();
                continue;
            };
            match step {
                RefinementStep::PrimitiveAction(step) => {
                    match bind_action(step, &frame.task, registry, facts) {
                        Ok(mut action) => {
                            action.step = StepPath::of(&frame.cursor);
                            self.awaiting = true;
                            return PlanStep::Act(action);
                        }
                        Err(reason) => self.step_failed(reason, registry, facts),
                    }
                }
                RefinementStep::Conditional(conditional) => {
                    let done = self.done - frame.started;
                    let data = condition_data(&frame.task, &frame.tried, done, facts);
                    match conditional.condition.holds(&data) {
                        Ok(holds) => {
                            if let Some(last) = frame.cursor.last_mut() {
                                last.branch = Some(holds);
                            }
                            frame.cursor.push(Cursor {
                                index: 0,
                                branch: None,
                            });
                        }
                        Err(error) => {
                            let at = pointer(&frame.cursor);
                            let reason =
                                format!("the condition at {at} cannot be decided: {error}");
                            self.step_failed(reason, registry, facts);
                        }
                    }
                }
                RefinementStep::Task(step) => {
                    let bound = bind_task(step, &frame.task, registry);
                    let tried = Vec::new();
                    match bound.and_then(|task| {
                        choose_method(task, tried, (self.done, self.done), registry, facts)
                    }) {
                        Ok(sub) => self.frames.push(sub),
                        Err(reason) => self.step_failed(reason, registry, facts),
                    }
                }
            }
        }
    }

    /// How the plan ended, when it has: failed, or with every step done. Read without
    /// the world: a plan with a step left (an action, a conditional or a task step to
    /// decide) has not ended, nor has one whose method is no longer what it ran.
    pub fn ended(&self, registry: &ContentRegistry) -> Option<PlanStep> {
        if let Some(failure) = &self.failed {
            return Some(PlanStep::Failed(failure.clone()));
        }
        // Out of each list of steps as `next_step` leaves it: at its end, leaving
        // it moves past the step around it (a conditional, or a task's step).
        let mut past = 0;
        for frame in self.frames.iter().rev() {
            if frame.cursor.is_empty() {
                return Some(PlanStep::Done);
            }
            let method = registry.method(&frame.method)?;
            for depth in (1..=frame.cursor.len()).rev() {
                let steps = current(method, &frame.cursor[..depth])?;
                if frame.cursor[depth - 1].index + past < steps.len() {
                    return None;
                }
                past = 1;
            }
        }
        Some(PlanStep::Done)
    }

    /// How the action last handed out by [`next_step`](Self::next_step) went: the plan
    /// goes on after a success, and a failure (with the game's reason) is handled as the
    /// method's or the enclosing conditional step's fallback says.
    pub fn report(
        &mut self,
        outcome: Result<(), String>,
        registry: &ContentRegistry,
        facts: &impl PlanFacts,
    ) {
        match outcome {
            Ok(()) => self.report_done(),
            Err(reason) => self.report_failed(reason, registry, facts),
        }
    }

    /// The action last handed out was carried out: the plan goes on after it.
    pub fn report_done(&mut self) {
        if std::mem::take(&mut self.awaiting) {
            self.done += 1;
            self.advance();
        }
    }

    /// The action last handed out failed for `reason`, handled as the method's or the
    /// enclosing conditional step's fallback says.
    pub fn report_failed(
        &mut self,
        reason: String,
        registry: &ContentRegistry,
        facts: &impl PlanFacts,
    ) {
        if std::mem::take(&mut self.awaiting) {
            self.step_failed(reason, registry, facts);
        }
    }

    /// Moves past the current step.
    fn advance(&mut self) {
        if let Some(cursor) = self.frames.last_mut().and_then(|f| f.cursor.last_mut()) {
            cursor.index += 1;
            cursor.branch = None;
        }
    }

    /// At the end of a list of steps: out of the conditional step it is a branch of, or
    /// out of the method, back to the task step that ran it.
    fn leave_step_list(&mut self) {
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        frame.cursor.pop();
        if frame.cursor.is_empty() {
            self.frames.pop();
        }
        self.advance();
    }

    /// The current step failed for `reason` (or, a conditional step, its condition
    /// could not be decided), as [`failed_at`](Self::failed_at) handles it.
    fn step_failed(&mut self, reason: String, registry: &ContentRegistry, facts: &impl PlanFacts) {
        let at = self.step_pointer();
        self.failed_at((reason, at), registry, facts);
    }

    /// The current step failed for `reason`, the failure having started at the step
    /// `at` (itself, or a step of the task it ran): the innermost conditional step,
    /// itself or around it, that says what its failure does decides, or else the
    /// method's fallback. A task that fails fails the task step that ran it, which is
    /// decided in its turn, up to the plan's own task.
    fn failed_at(
        &mut self,
        (reason, at): (String, (String, String)),
        registry: &ContentRegistry,
        facts: &impl PlanFacts,
    ) {
        self.awaiting = false;
        let Some(frame) = self.frames.last() else {
            return;
        };
        let method = registry.method(&frame.method);
        let deciding = method.and_then(|m| deciding_conditional(m, &frame.cursor));
        let handled = if let Some((on_failure, depth)) = deciding {
            // Out of its branch, to the conditional step itself.
            if let Some(frame) = self.frames.last_mut() {
                frame.cursor.truncate(depth);
            }
            match on_failure {
                ConditionalFailure::Skip => FallbackBehavior::Continue,
                ConditionalFailure::Fail => FallbackBehavior::Fail,
                ConditionalFailure::Replan => FallbackBehavior::Replan,
            }
        } else {
            let task = registry.task(&frame.task.task_id);
            (method.and_then(|m| m.fallback_behavior))
                .or(task.map(|t| t.fallback_behavior))
                .unwrap_or_default()
        };
        match handled {
            FallbackBehavior::Fail => self.task_failed((reason, at), registry, facts),
            FallbackBehavior::Continue => self.advance(),
            FallbackBehavior::Replan => self.replan((reason, at), registry, facts),
        }
    }

    /// The innermost task failed for `reason`, at the step `at`: the task step that
    /// ran it fails in its turn; the plan's own task, the plan.
    fn task_failed(
        &mut self,
        (reason, at): (String, (String, String)),
        registry: &ContentRegistry,
        facts: &impl PlanFacts,
    ) {
        if self.frames.len() > 1 {
            self.frames.pop();
            self.failed_at((reason, at), registry, facts);
        } else {
            self.fail(reason, Some(at));
        }
    }

    /// Tries the innermost task's next applicable method, the step `at` having failed;
    /// when none is left, the task fails ([`task_failed`](Self::task_failed)).
    fn replan(
        &mut self,
        (reason, at): (String, (String, String)),
        registry: &ContentRegistry,
        facts: &impl PlanFacts,
    ) {
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        let (task, mut tried) = (frame.task.clone(), std::mem::take(&mut frame.tried));
        tried.push(frame.method.clone());
        let actions = (frame.started, self.done);
        match choose_method(task, tried, actions, registry, facts) {
            Ok(again) => *frame = again,
            Err(none_left) => {
                self.task_failed((format!("{reason}; {none_left}"), at), registry, facts);
            }
        }
    }

    fn fail(&mut self, reason: String, step: Option<(String, String)>) {
        self.failed = Some(PlanFailure { reason, step });
    }

    /// The method and pointer of the current step.
    fn step_pointer(&self) -> (String, String) {
        self.frames.last().map_or_else(Default::default, |frame| {
            (frame.method.clone(), pointer(&frame.cursor))
        })
    }
}

/// The JSON pointer of the step a cursor is at.
fn pointer(cursor: &[Cursor]) -> String {
    StepPath::of(cursor).to_string()
}

/// The list of steps the cursor's last level indexes.
fn current<'m>(method: &'m RefinementMethod, cursor: &[Cursor]) -> Option<&'m [RefinementStep]> {
    let mut steps = method.steps.as_slice();
    for level in cursor.iter().take(cursor.len().saturating_sub(1)) {
        let RefinementStep::Conditional(conditional) = steps.get(level.index)? else {
            return None;
        };
        steps = match level.branch? {
            true => &conditional.then_steps,
            false => &conditional.else_steps,
        };
    }
    Some(steps)
}

/// The `onFailure` of the innermost conditional step that has one, of the one the
/// cursor is at (its condition could not be decided) and those whose branch it is in,
/// and how deep a cursor at that conditional step is.
fn deciding_conditional(
    method: &RefinementMethod,
    cursor: &[Cursor],
) -> Option<(ConditionalFailure, usize)> {
    (1..=cursor.len()).rev().find_map(|depth| {
        let steps = current(method, &cursor[..depth])?;
        match steps.get(cursor[depth - 1].index)? {
            RefinementStep::Conditional(conditional) => Some((conditional.on_failure?, depth)),
            _ => None,
        }
    })
}

/// `task` with the first of its methods not `tried` whose applicability holds now, the
/// plan's actions done being `started` when the task began and `done` now (the task's
/// own, `task.state.actionsDone`, are those since). A method whose applicability
/// cannot be decided does not apply; when none is left, the error names each method
/// and why it does not.
fn choose_method(
    task: BoundTask,
    tried: Vec<String>,
    (started, done): (usize, usize),
    registry: &ContentRegistry,
    facts: &impl PlanFacts,
) -> Result<Frame, String> {
    let Some(definition) = registry.task(&task.task_id) else {
        return Err(format!("task `{}` is not loaded", task.task_id));
    };
    // The world is read once, when the first method with an applicability is weighed.
    let arena = ConditionArena::default();
    let mut read = None;
    let chosen = registry.methods_of(definition).find(|method| {
        if tried.contains(&method.refinement_method_id) {
            return false;
        }
        let Some(applicability) = &method.applicability else {
            return true;
        };
        let own = done - started;
        let facts =
            read.get_or_insert_with(|| arena.facts(&condition_data(&task, &tried, own, facts)));
        applicability.holds_for(facts).unwrap_or(false)
    });
    let Some(method) = chosen else {
        // Each method passed over, and why: weighed again only now none applies.
        let why_not: Vec<String> = (registry.methods_of(definition))
            .map(|method| {
                let id = &method.refinement_method_id;
                if tried.contains(id) {
                    return format!("`{id}` was tried");
                }
                let holds = (method.applicability.as_ref())
                    .zip(read.as_ref())
                    .map(|(applicability, facts)| applicability.holds_for(facts));
                match holds {
                    Some(Err(error)) => {
                        format!("the applicability of `{id}` cannot be decided: {error}")
                    }
                    _ => format!("`{id}` does not apply (its applicability does not hold)"),
                }
            })
            .collect();
        return Err(if why_not.is_empty() {
            format!("task `{}` has no method loaded", task.task_id)
        } else {
            format!(
                "no method of `{}` is left that applies now: {}",
                task.task_id,
                why_not.join("; ")
            )
        });
    };
    Ok(Frame {
        method: method.refinement_method_id.clone(),
        task,
        started,
        tried,
        cursor: vec![Cursor {
            index: 0,
            branch: None,
        }],
    })
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::HashMap;

    use bevy::prelude::Entity;
    use serde_json::{Value, json};

    use super::*;
    use crate::content::{
        ActionDefinition, ContentSources, GameManifest, ModManifest, RefinementMethod,
        TaskDefinition,
    };
    use crate::world::ParamValue;

    fn entity(n: u32) -> Entity {
        Entity::from_raw_u32(n).expect("a valid index")
    }

    const CUSTOMER: u32 = 1;
    const MUG: u32 = 2;

    /// The world a test plan reads: what the actor carries, and which entities exist.
    struct World {
        carries: RefCell<Vec<&'static str>>,
        names: RefCell<HashMap<Entity, &'static str>>,
    }

    impl World {
        fn new() -> Self {
            let names =
                HashMap::from([(entity(CUSTOMER), "Traveler"), (entity(MUG), "mug of ale")]);
            Self {
                carries: RefCell::new(Vec::new()),
                names: RefCell::new(names),
            }
        }
    }

    impl PlanFacts for World {
        fn actor(&self) -> Value {
            json!({ "name": "Marta", "carries": *self.carries.borrow() })
        }
        fn world(&self) -> Value {
            json!({ "cellarLocked": true })
        }
        fn entity(&self, entity: Entity) -> Option<Value> {
            let names = self.names.borrow();
            names.get(&entity).map(|name| json!({ "name": name }))
        }
    }

    fn parse<T: serde::de::DeserializeOwned>(value: Value) -> T {
        serde_json::from_value(value).expect("test content parses")
    }

    fn primitive(action: &str, bindings: Value) -> Value {
        json!({ "stepType": "primitive_action", "actionId": action, "targetBindings": bindings })
    }

    fn pick_up() -> Value {
        primitive("items:pick_up", json!({ "item": "task.params.drink" }))
    }

    fn give() -> Value {
        primitive(
            "items:give",
            json!({ "item": "task.params.drink", "recipient": "task.params.customer" }),
        )
    }

    fn wait() -> Value {
        primitive("core:wait", json!({}))
    }

    /// A task step that fetches the drink ([`fetching`]).
    fn fetch() -> Value {
        json!({ "stepType": "task", "taskId": "tavern:fetch", "parameterBindings": { "drink": "task.params.drink" } })
    }

    /// `tavern:fetch`'s method: wait, then pick the drink up.
    fn fetching() -> (&'static str, &'static str, Value) {
        method(
            "tavern:fetching",
            "tavern:fetch",
            json!([wait(), pick_up()]),
        )
    }

    /// `carrying`: whether the actor carries the drink task's drink.
    fn carrying() -> Value {
        json!({ "in": [{ "var": "task.params.drink.name" }, { "var": "actor.carries" }] })
    }

    /// The method `id` of `task`, with these `steps` and nothing else.
    fn method(
        id: &'static str,
        task: &'static str,
        steps: Value,
    ) -> (&'static str, &'static str, Value) {
        (id, task, json!({ "steps": steps }))
    }

    /// A registry whose one method of `tavern:serve` picks the drink up and gives it,
    /// and fails the plan when a step fails.
    fn picked_up_and_given() -> ContentRegistry {
        by_hand(json!([pick_up(), give()]))
    }

    /// A registry whose one method of `tavern:serve` takes these `steps`, and fails
    /// the plan when a step fails.
    fn by_hand(steps: Value) -> ContentRegistry {
        registry("fail", &[method("tavern:by_hand", "tavern:serve", steps)])
    }

    /// A registry with `core:wait`, `items:pick_up`, `items:give` (with a `quietly`
    /// parameter), the task `tavern:serve` (customer, drink; falling back on
    /// `task_fallback` when a step fails) and `tavern:fetch` (drink), and `methods`
    /// (id, task, extra fields).
    fn registry(task_fallback: &str, methods: &[(&str, &str, Value)]) -> ContentRegistry {
        // `tavern:fetch` needs a method to load.
        let mut methods = methods.to_vec();
        if !methods.iter().any(|(_, task, _)| *task == "tavern:fetch") {
            methods.push(method(
                "tavern:fetch_later",
                "tavern:fetch",
                json!([wait()]),
            ));
        }
        let methods = methods.as_slice();
        let game: GameManifest = parse(json!({ "mods": ["core", "items", "tavern"] }));
        let manifest = |id: &str| -> ModManifest {
            parse(
                json!({ "id": id, "version": "1.0.0", "name": id, "content": {
                "actions": ["a.action.json"],
                "tasks": ["serve.task.json", "fetch.task.json"],
                "methods": methods.iter().map(|(id, _, _)| format!("{}.method.json", id.replace(':', "_"))).collect::<Vec<_>>()
            } }),
            )
        };
        let mods = [manifest("core"), manifest("items"), manifest("tavern")];
        let mod_files = [
            "mods/core/mod.json",
            "mods/items/mod.json",
            "mods/tavern/mod.json",
        ];
        let actions: Vec<ActionDefinition> = vec![
            parse(
                json!({ "id": "core:wait", "name": "Wait", "description": "d", "template": "wait" }),
            ),
            parse(
                json!({ "id": "items:pick_up", "name": "Pick up", "description": "d", "template": "pick up {item}",
                "targets": { "primary": { "scope": "things_here", "placeholder": "item" } } }),
            ),
            parse(
                json!({ "id": "items:give", "name": "Give", "description": "d", "template": "give {item} to {recipient}",
                "targets": { "primary": { "scope": "inventory", "placeholder": "item" },
                             "secondary": { "scope": "characters_here", "placeholder": "recipient" } },
                "parameters": { "quietly": { "default": false }, "words": { "default": "here" } } }),
            ),
        ];
        let action_files = [
            "mods/core/a.action.json",
            "mods/items/a.action.json",
            "mods/items/a.action.json",
        ];
        let serve: TaskDefinition = parse(json!({
            "id": "tavern:serve", "name": "Serve", "description": "d", "template": "serve {customer} {drink}",
            "parameters": [
                { "name": "customer", "entity": { "scope": "characters_here" } },
                { "name": "drink", "entity": { "scope": "things_here" } }
            ],
            "fallbackBehavior": task_fallback
        }));
        let fetch: TaskDefinition = parse(json!({
            "id": "tavern:fetch", "name": "Fetch", "description": "d", "template": "fetch {drink}",
            "parameters": [{ "name": "drink", "entity": { "scope": "things_here" } }]
        }));
        let methods: Vec<(String, RefinementMethod)> = methods
            .iter()
            .map(|(id, task, extra)| {
                let mut method = json!({ "refinementMethodId": id, "taskId": task });
                if let (Some(method), Value::Object(extra)) =
                    (method.as_object_mut(), extra.clone())
                {
                    method.extend(extra);
                }
                (
                    format!("mods/tavern/{}.method.json", id.replace(':', "_")),
                    parse(method),
                )
            })
            .collect();
        let mod_refs: Vec<(&str, &ModManifest)> = mod_files.iter().copied().zip(&mods).collect();
        let action_refs: Vec<(&str, &ActionDefinition)> =
            action_files.iter().copied().zip(&actions).collect();
        // Two actions share a file name only in this test; each keeps its own id.
        let task_refs = [
            ("mods/tavern/serve.task.json", &serve),
            ("mods/tavern/fetch.task.json", &fetch),
        ];
        let method_refs: Vec<(&str, &RefinementMethod)> =
            methods.iter().map(|(f, m)| (f.as_str(), m)).collect();
        let registry = ContentRegistry::build(ContentSources {
            game: Some(("game.loom.json", &game)),
            mods: &mod_refs,
            actions: &action_refs,
            tasks: &task_refs,
            methods: &method_refs,
            ..ContentSources::default()
        });
        assert_eq!(registry.problems(), [], "the test content is valid");
        registry
    }

    fn serve() -> BoundTask {
        BoundTask {
            task_id: "tavern:serve".to_owned(),
            params: vec![
                ("customer".to_owned(), ParamValue::Entity(entity(CUSTOMER))),
                ("drink".to_owned(), ParamValue::Entity(entity(MUG))),
            ],
        }
    }

    /// The action ids a plan hands out while every step succeeds, and how it ends.
    fn run(
        plan: &mut Refinement,
        registry: &ContentRegistry,
        world: &World,
    ) -> (Vec<String>, PlanStep) {
        let mut acted = Vec::new();
        for _ in 0..20 {
            match plan.next_step(registry, world) {
                PlanStep::Act(action) => {
                    acted.push(action.action_id.to_string());
                    plan.report(Ok(()), registry, world);
                }
                end => return (acted, end),
            }
        }
        panic!("the plan never ended: {acted:?}");
    }

    /// A plan of `tavern:serve` started in a fresh test world.
    fn start(registry: &ContentRegistry) -> (Refinement, World) {
        let world = World::new();
        let plan = Refinement::start(serve(), registry, &world).expect("starts");
        (plan, world)
    }

    /// The id of the action the plan's next step takes.
    fn next_action(plan: &mut Refinement, registry: &ContentRegistry, world: &World) -> String {
        act(plan.next_step(registry, world)).action_id.to_string()
    }

    /// The failure `step` is, or a panic saying `why` it should be one.
    fn failed(step: PlanStep, why: &str) -> PlanFailure {
        match step {
            PlanStep::Failed(failure) => failure,
            other => panic!("{why}: expected a failure, got {other:?}"),
        }
    }

    fn act(step: PlanStep) -> PlannedAction {
        match step {
            PlanStep::Act(action) => action,
            other => panic!("expected an action, got {other:?}"),
        }
    }

    #[test]
    fn the_first_applicable_method_runs_its_steps_with_targets_bound() {
        let registry = registry(
            "fail",
            &[
                (
                    "tavern:never",
                    "tavern:serve",
                    json!({ "applicability": { "var": "world.open" }, "steps": [wait()] }),
                ),
                method("tavern:by_hand", "tavern:serve", json!([pick_up(), give()])),
            ],
        );
        let world = World::new();
        let mut plan = Refinement::start(serve(), &registry, &world).expect("a method applies");
        assert_eq!(plan.method(), Some("tavern:by_hand"));
        let first = act(plan.next_step(&registry, &world));
        assert_eq!(first.targets[..], [entity(MUG)], "the pick-up's item");
        assert_eq!(
            act(plan.next_step(&registry, &world)),
            first,
            "the same action until reported"
        );
        plan.report(Ok(()), &registry, &world);
        let second = act(plan.next_step(&registry, &world));
        assert_eq!(
            second.targets[..],
            [entity(MUG), entity(CUSTOMER)],
            "the give's item and recipient, in slot order"
        );
        assert_eq!(
            second.parameters["quietly"],
            json!(false),
            "the action's defaults"
        );
        plan.report(Ok(()), &registry, &world);
        assert_eq!(plan.next_step(&registry, &world), PlanStep::Done);
        assert_eq!(plan.actions_done(), 2);
    }

    #[test]
    fn a_conditional_step_is_decided_by_the_world_when_it_is_reached() {
        let registry = by_hand(json!([
            wait(),
            { "stepType": "conditional", "condition": { "!": carrying() }, "thenSteps": [pick_up()] },
            give()
        ]));
        let (mut plan, world) = start(&registry);
        // When the plan started Marta carried nothing; by the conditional she carries the mug.
        act(plan.next_step(&registry, &world));
        world.carries.borrow_mut().push("mug of ale");
        plan.report(Ok(()), &registry, &world);
        let (acted, end) = run(&mut plan, &registry, &world);
        assert_eq!(acted, ["items:give"], "no pick-up: she already carries it");
        assert_eq!(end, PlanStep::Done);

        world.carries.borrow_mut().clear();
        let mut plan = Refinement::start(serve(), &registry, &world).expect("starts");
        let (acted, _) = run(&mut plan, &registry, &world);
        assert_eq!(acted, ["core:wait", "items:pick_up", "items:give"]);
    }

    #[test]
    fn a_failed_step_fails_the_plan_naming_the_step() {
        let registry = picked_up_and_given();
        let (mut plan, world) = start(&registry);
        act(plan.next_step(&registry, &world));
        plan.report(Err("the mug is nailed down".to_owned()), &registry, &world);
        let failure = failed(plan.next_step(&registry, &world), "the plan fails");
        assert_eq!(failure.reason, "the mug is nailed down");
        assert_eq!(
            failure.step,
            Some(("tavern:by_hand".to_owned(), "/steps/0".to_owned()))
        );
    }

    #[test]
    fn continue_goes_on_with_the_next_step() {
        let registry = registry(
            "fail",
            &[(
                "tavern:by_hand",
                "tavern:serve",
                json!({ "fallbackBehavior": "continue", "steps": [wait(), give()] }),
            )],
        );
        let (mut plan, world) = start(&registry);
        act(plan.next_step(&registry, &world));
        plan.report(Err("interrupted".to_owned()), &registry, &world);
        assert_eq!(next_action(&mut plan, &registry, &world), "items:give");
    }

    #[test]
    fn replan_tries_the_next_method_and_fails_when_none_is_left() {
        // The task's own fallback applies to methods that name none.
        let registry = registry(
            "replan",
            &[
                method("tavern:a_first", "tavern:serve", json!([pick_up(), give()])),
                method("tavern:b_second", "tavern:serve", json!([wait(), give()])),
            ],
        );
        let (mut plan, world) = start(&registry);
        assert_eq!(next_action(&mut plan, &registry, &world), "items:pick_up");
        plan.report(
            Err("the cellar door is locked".to_owned()),
            &registry,
            &world,
        );
        assert_eq!(plan.method(), Some("tavern:b_second"));
        assert_eq!(next_action(&mut plan, &registry, &world), "core:wait");
        plan.report(Err("still locked".to_owned()), &registry, &world);
        let failure = failed(plan.next_step(&registry, &world), "no method is left");
        assert!(
            failure
                .reason
                .starts_with("still locked; no method of `tavern:serve` is left"),
            "{}",
            failure.reason
        );
    }

    #[test]
    fn a_method_whose_applicability_cannot_be_decided_is_named() {
        let registry = registry(
            "fail",
            &[(
                "tavern:sums",
                "tavern:serve",
                json!({ "applicability": { "+": ["many", 1] }, "steps": [wait()] }),
            )],
        );
        let world = World::new();
        let failure = Refinement::start(serve(), &registry, &world).expect_err("none applies");
        assert!(
            failure.reason.contains("`tavern:sums`")
                && failure.reason.contains("cannot be decided"),
            "{}",
            failure.reason
        );
    }

    #[test]
    fn when_no_method_applies_each_is_named_with_why() {
        let registry = registry(
            "replan",
            &[
                method("tavern:a_first", "tavern:serve", json!([pick_up()])),
                (
                    "tavern:b_at_the_bar",
                    "tavern:serve",
                    json!({ "applicability": { "in": ["behind_bar", { "var": "actor.tags" }] },
                            "steps": [wait()] }),
                ),
            ],
        );
        let (mut plan, world) = start(&registry);
        act(plan.next_step(&registry, &world));
        plan.report(Err("no mug".to_owned()), &registry, &world);
        let failure = failed(plan.next_step(&registry, &world), "none is left");
        assert_eq!(
            failure.reason,
            "no mug; no method of `tavern:serve` is left that applies now: \
             `tavern:a_first` was tried; `tavern:b_at_the_bar` does not apply (its \
             applicability does not hold)"
        );
    }

    #[test]
    fn a_method_chosen_on_a_replan_reads_the_actions_done() {
        let registry = registry(
            "replan",
            &[
                method("tavern:a_first", "tavern:serve", json!([pick_up(), give()])),
                (
                    "tavern:b_after_one",
                    "tavern:serve",
                    json!({ "applicability": { ">": [{ "var": "task.state.actionsDone" }, 0] },
                            "steps": [wait()] }),
                ),
            ],
        );
        let (mut plan, world) = start(&registry);
        act(plan.next_step(&registry, &world));
        plan.report(Ok(()), &registry, &world);
        act(plan.next_step(&registry, &world));
        plan.report(Err("the customer left".to_owned()), &registry, &world);
        assert_eq!(
            plan.method(),
            Some("tavern:b_after_one"),
            "one action was done"
        );
    }

    /// `task.state` is the task's own: a task step's task begins with no action done,
    /// whatever the plan did before it.
    #[test]
    fn a_task_steps_task_counts_its_own_actions_done() {
        let registry = registry(
            "fail",
            &[
                method("tavern:by_hand", "tavern:serve", json!([wait(), fetch()])),
                (
                    "tavern:a_fresh",
                    "tavern:fetch",
                    json!({ "applicability": { "==": [{ "var": "task.state.actionsDone" }, 0] },
                            "steps": [pick_up()] }),
                ),
                method("tavern:b_later", "tavern:fetch", json!([wait()])),
            ],
        );
        let (mut plan, world) = start(&registry);
        let (acted, end) = run(&mut plan, &registry, &world);
        assert_eq!(acted, ["core:wait", "items:pick_up"]);
        assert_eq!(end, PlanStep::Done);
        assert_eq!(plan.actions_done(), 2, "the plan counts them all");
    }

    #[test]
    fn a_conditional_may_skip_the_rest_of_itself() {
        let registry = by_hand(json!([
            { "stepType": "conditional", "condition": true, "thenSteps": [pick_up(), wait()], "onFailure": "skip" },
            give()
        ]));
        let (mut plan, world) = start(&registry);
        act(plan.next_step(&registry, &world));
        plan.report(Err("no mug".to_owned()), &registry, &world);
        assert_eq!(
            next_action(&mut plan, &registry, &world),
            "items:give",
            "the wait is skipped too"
        );
    }

    #[test]
    fn a_conditional_that_says_nothing_of_failure_leaves_it_to_the_method() {
        let conditional = |then_steps: Value| json!({ "stepType": "conditional", "condition": true, "thenSteps": then_steps });
        // The method replans: the locked door of the first sends her the second way.
        let content = registry(
            "fail",
            &[
                (
                    "tavern:a_first",
                    "tavern:serve",
                    json!({ "fallbackBehavior": "replan", "steps": [conditional(json!([pick_up()]))] }),
                ),
                method("tavern:b_second", "tavern:serve", json!([wait()])),
            ],
        );
        let (mut plan, world) = start(&content);
        assert_eq!(next_action(&mut plan, &content, &world), "items:pick_up");
        plan.report(Err("the door is locked".to_owned()), &content, &world);
        assert_eq!(plan.method(), Some("tavern:b_second"));
        // The method goes on: the next step of the branch, then the one after it.
        let content = registry(
            "fail",
            &[(
                "tavern:by_hand",
                "tavern:serve",
                json!({ "fallbackBehavior": "continue",
                        "steps": [conditional(json!([pick_up(), wait()])), give()] }),
            )],
        );
        let (mut plan, world) = start(&content);
        act(plan.next_step(&content, &world));
        plan.report(Err("no mug".to_owned()), &content, &world);
        let (acted, end) = run(&mut plan, &content, &world);
        assert_eq!(
            (acted, end),
            (
                vec!["core:wait".to_owned(), "items:give".to_owned()],
                PlanStep::Done
            )
        );
        // An outer conditional that says decides for the inner one that does not.
        let registry = by_hand(json!([
            { "stepType": "conditional", "condition": true, "onFailure": "skip",
              "thenSteps": [conditional(json!([pick_up(), wait()]))] },
            give()
        ]));
        let (mut plan, world) = start(&registry);
        act(plan.next_step(&registry, &world));
        plan.report(Err("no mug".to_owned()), &registry, &world);
        assert_eq!(next_action(&mut plan, &registry, &world), "items:give");
    }

    #[test]
    fn a_replan_with_no_method_left_names_the_step_that_failed() {
        let registry = by_hand(json!([
            wait(),
            { "stepType": "conditional", "condition": true, "thenSteps": [pick_up()], "onFailure": "replan" }
        ]));
        let (mut plan, world) = start(&registry);
        act(plan.next_step(&registry, &world));
        plan.report(Ok(()), &registry, &world);
        act(plan.next_step(&registry, &world));
        plan.report(Err("no mug".to_owned()), &registry, &world);
        let failure = failed(plan.next_step(&registry, &world), "no other method");
        assert_eq!(
            failure.step,
            Some((
                "tavern:by_hand".to_owned(),
                "/steps/1/thenSteps/0".to_owned()
            ))
        );
    }

    #[test]
    fn a_condition_that_cannot_be_decided_is_a_conditional_failure() {
        let registry = by_hand(json!([
            // Arithmetic on text is NaN, which JSON Logic throws.
            { "stepType": "conditional", "condition": { "+": ["many", 1] }, "thenSteps": [wait()], "onFailure": "replan" }
        ]));
        let (mut plan, world) = start(&registry);
        let failure = failed(
            plan.next_step(&registry, &world),
            "an undecidable condition replans, and no other method is left",
        );
        assert!(
            failure
                .reason
                .starts_with("the condition at /steps/0 cannot be decided"),
            "{}",
            failure.reason
        );
        assert!(
            failure
                .reason
                .contains("no method of `tavern:serve` is left"),
            "{}",
            failure.reason
        );
    }

    #[test]
    fn a_task_step_runs_the_other_task_then_goes_on() {
        let registry = registry(
            "fail",
            &[
                fetching(),
                method("tavern:by_hand", "tavern:serve", json!([fetch(), give()])),
            ],
        );
        let (mut plan, world) = start(&registry);
        let (acted, end) = run(&mut plan, &registry, &world);
        assert_eq!(acted, ["core:wait", "items:pick_up", "items:give"]);
        assert_eq!(end, PlanStep::Done);
    }

    /// A task step whose task fails is a failed step of the method that ran it: that
    /// method's conditional or fallback decides, not the plan's end.
    #[test]
    fn a_task_that_fails_is_a_failed_step_for_the_method_that_ran_it() {
        let skipped = json!([
            { "stepType": "conditional", "condition": true, "thenSteps": [fetch()], "onFailure": "skip" },
            give()
        ]);
        let continued = json!({ "fallbackBehavior": "continue", "steps": [fetch(), give()] });
        for (how, extra) in [
            ("skip", json!({ "steps": skipped })),
            ("continue", continued),
        ] {
            let registry = registry(
                "fail",
                &[fetching(), ("tavern:by_hand", "tavern:serve", extra)],
            );
            let (mut plan, world) = start(&registry);
            assert_eq!(next_action(&mut plan, &registry, &world), "core:wait");
            plan.report(Ok(()), &registry, &world);
            assert_eq!(next_action(&mut plan, &registry, &world), "items:pick_up");
            plan.report(Err("no mug".to_owned()), &registry, &world);
            assert_eq!(
                next_action(&mut plan, &registry, &world),
                "items:give",
                "{how}"
            );
        }
    }

    /// A failure that ends the plan through the tasks around it names the step where
    /// it started, also when it went up as a replan with no method left.
    #[test]
    fn a_plan_failed_through_a_task_step_names_the_step_that_failed() {
        let (_, _, mut fetching) = fetching();
        fetching["fallbackBehavior"] = json!("replan");
        let registry = registry(
            "fail",
            &[
                ("tavern:fetching", "tavern:fetch", fetching),
                method("tavern:by_hand", "tavern:serve", json!([fetch(), give()])),
            ],
        );
        let (mut plan, world) = start(&registry);
        act(plan.next_step(&registry, &world));
        plan.report(Ok(()), &registry, &world);
        act(plan.next_step(&registry, &world));
        plan.report(Err("no mug".to_owned()), &registry, &world);
        let failure = failed(plan.next_step(&registry, &world), "both fail");
        assert!(failure.reason.starts_with("no mug; "), "{}", failure.reason);
        assert_eq!(
            failure.step,
            Some(("tavern:fetching".to_owned(), "/steps/1".to_owned()))
        );
    }

    #[test]
    fn a_plan_has_ended_once_its_last_step_inside_a_branch_and_a_task_is_reported() {
        let registry = registry(
            "fail",
            &[
                fetching(),
                method(
                    "tavern:by_hand",
                    "tavern:serve",
                    json!([
                        give(),
                        { "stepType": "conditional", "condition": true, "thenSteps": [
                            fetch()
                        ] }
                    ]),
                ),
            ],
        );
        let (mut plan, world) = start(&registry);
        let mut ends = Vec::new();
        for _ in 0..3 {
            assert_eq!(plan.ended(&registry), None, "a step is left");
            act(plan.next_step(&registry, &world));
            assert_eq!(plan.ended(&registry), None, "its step is out");
            plan.report(Ok(()), &registry, &world);
            ends.push(plan.ended(&registry));
        }
        assert_eq!(
            ends,
            [None, None, Some(PlanStep::Done)],
            "the conditional and the task step are still to decide after the first step"
        );
        assert_eq!(plan.next_step(&registry, &world), PlanStep::Done);

        // A step refused past its fallbacks ends the plan as failed.
        let (mut plan, world) = start(&registry);
        act(plan.next_step(&registry, &world));
        plan.report(Err("no mug".to_owned()), &registry, &world);
        let failure = failed(plan.ended(&registry).expect("ended"), "refused");
        assert_eq!(failure.reason, "no mug");
    }

    #[test]
    fn a_target_gone_mid_plan_fails_its_step() {
        let registry = picked_up_and_given();
        let (mut plan, world) = start(&registry);
        act(plan.next_step(&registry, &world));
        plan.report(Ok(()), &registry, &world);
        world.names.borrow_mut().remove(&entity(CUSTOMER));
        let failure = failed(plan.next_step(&registry, &world), "the customer left");
        assert_eq!(failure.reason, "`customer` is gone");
    }

    #[test]
    fn a_method_unloaded_while_its_plan_runs_fails_the_plan_cleanly() {
        let before = picked_up_and_given();
        let after = registry(
            "fail",
            &[method("tavern:by_tray", "tavern:serve", json!([give()]))],
        );
        let world = World::new();
        let mut plan = Refinement::start(serve(), &before, &world).expect("starts");
        act(plan.next_step(&before, &world));
        plan.report(Ok(()), &before, &world);
        let failure = failed(
            plan.next_step(&after, &world),
            "the content changed under the plan",
        );
        assert_eq!(
            failure.reason,
            "method `tavern:by_hand` is no longer loaded"
        );
    }

    #[test]
    fn a_step_overrides_only_the_parameters_it_names() {
        let mut step = give();
        step["parameters"] = json!({ "quietly": true });
        let registry = registry(
            "fail",
            &[("tavern:by_hand", "tavern:serve", json!({ "steps": [step] }))],
        );
        let (mut plan, world) = start(&registry);
        let action = act(plan.next_step(&registry, &world));
        assert_eq!(action.parameters["quietly"], json!(true));
        assert_eq!(
            action.parameters["words"],
            json!("here"),
            "the default stays"
        );
    }
}
