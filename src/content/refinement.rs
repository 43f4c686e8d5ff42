//! Planning rules across files, checked when the registry is built: a method's steps
//! must name loaded actions and tasks, bind every target to one of its task's entity
//! parameters by the action's own placeholder names, and override only parameters the
//! action defines; every task needs a method; tasks may not run themselves, nor nest
//! deeper than [`MAX_NESTING`].

use std::collections::BTreeSet;

use bevy::platform::collections::HashMap;

use super::error::did_you_mean;
use super::facts::{facts_read, unknown_fact};
use super::references::unknown_scope;
use super::validate::pointer_token;
use super::{
    ActionDefinition, Binding, Condition, ContentCatalog, ContentError, MAX_NESTING,
    RefinementMethod, RefinementStep, TaskDefinition, TaskParameter, ValueType, action_namespace,
};

/// What a method's steps are checked against.
pub(super) struct Known<'a> {
    pub tasks: &'a ContentCatalog<TaskDefinition>,
    pub actions: &'a ContentCatalog<ActionDefinition>,
    pub is_loaded: &'a dyn Fn(&str) -> bool,
}

impl Known<'_> {
    /// The loaded task `id` most likely misspells, as a message's hint.
    fn task_hint(&self, id: &str) -> String {
        did_you_mean(id, self.tasks.iter().map(|task| task.id.as_str()))
    }
}

/// Task parameters whose scope nobody registered.
pub(super) fn unknown_parameter_scopes(
    file: &str,
    task: &TaskDefinition,
    scopes: Option<&BTreeSet<String>>,
) -> Vec<ContentError> {
    let Some(scopes) = scopes else {
        return Vec::new();
    };
    let parameters = task.parameters.iter().enumerate();
    parameters
        .filter_map(|(index, p)| p.entity.as_ref().map(|entity| (index, entity)))
        .filter_map(|(index, entity)| {
            let pointer = || format!("/parameters/{index}/entity/scope");
            unknown_scope(file, pointer, &entity.scope, scopes)
        })
        .collect()
}

/// Removes from `tasks` and `methods` whatever breaks a planning rule across files,
/// reporting each in `problems`, until what is left keeps every rule.
pub(super) fn settle(
    tasks: &mut ContentCatalog<TaskDefinition>,
    methods: &mut ContentCatalog<RefinementMethod>,
    actions: &ContentCatalog<ActionDefinition>,
    is_loaded: &dyn Fn(&str) -> bool,
    problems: &mut Vec<ContentError>,
) {
    loop {
        let known = Known {
            tasks,
            actions,
            is_loaded,
        };
        let mut found = Vec::new();
        let mut bad_methods: BTreeSet<String> = BTreeSet::new();
        for (file, method) in methods.iter_with_files() {
            let mut own = method_problems(file, method, &known);
            if !own.is_empty() {
                bad_methods.insert(method.refinement_method_id.clone());
                found.append(&mut own);
            }
        }
        if bad_methods.is_empty()
            && let Some((id, problem)) = cycle_or_too_deep(tasks, methods)
        {
            bad_methods.insert(id);
            found.push(problem);
        }
        methods.retain(|_, method| !bad_methods.contains(&method.refinement_method_id));
        let mut bad_tasks = BTreeSet::new();
        for (file, task) in tasks.iter_with_files() {
            if !methods.iter().any(|method| method.task_id == task.id) {
                bad_tasks.insert(task.id.clone());
                found.push(ContentError::new(
                    file,
                    "/methods",
                    format!(
                        "task `{}` has no refinement method: write a method whose `taskId` is `{}` and list its file in its mod's `content.methods` (or fix the problems reported for its methods)",
                        task.id, task.id
                    ),
                ));
            }
        }
        tasks.retain(|_, task| !bad_tasks.contains(&task.id));
        let settled = found.is_empty();
        problems.append(&mut found);
        if settled {
            break;
        }
    }
    for (file, task) in tasks.iter_with_files() {
        problems.extend(unknown_listed_methods(file, task, methods));
    }
}

/// Each task's method ids, most preferred first: those it lists, in its order, then the
/// rest whose `taskId` names it, in id order. Found once, when the registry is built.
pub(super) fn method_order(
    tasks: &ContentCatalog<TaskDefinition>,
    methods: &ContentCatalog<RefinementMethod>,
) -> HashMap<String, Vec<String>> {
    let mut unlisted: HashMap<&str, Vec<&str>> = HashMap::default();
    for method in methods {
        let listed = tasks
            .get(&method.task_id)
            .is_some_and(|task| task.methods.contains(&method.refinement_method_id));
        if !listed {
            let ids = unlisted.entry(method.task_id.as_str()).or_default();
            ids.push(&method.refinement_method_id);
        }
    }
    tasks
        .iter()
        .map(|task| {
            let listed = (task.methods.iter())
                .filter(|id| methods.get(id).is_some_and(|m| m.task_id == task.id))
                .cloned();
            let mut rest = unlisted.remove(task.id.as_str()).unwrap_or_default();
            rest.sort_unstable();
            let order = listed.chain(rest.into_iter().map(str::to_owned)).collect();
            (task.id.clone(), order)
        })
        .collect()
}

/// A task's `methods` entries that name no loaded method, or a method of another task.
fn unknown_listed_methods(
    file: &str,
    task: &TaskDefinition,
    methods: &ContentCatalog<RefinementMethod>,
) -> Vec<ContentError> {
    let mut found = Vec::new();
    for (index, id) in task.methods.iter().enumerate() {
        let problem = match methods.get(id) {
            None => format!(
                "no loaded refinement method has the id `{id}`: fix the id, list the method's file in its mod's `content.methods`, or fix the problems reported for it"
            ),
            Some(method) if method.task_id != task.id => format!(
                "refinement method `{id}` carries out `{}`, not this task: remove it from this list",
                method.task_id
            ),
            Some(_) => continue,
        };
        found.push(ContentError::new(
            file,
            format!("/methods/{index}"),
            problem,
        ));
    }
    found
}

/// Every problem with one method's references to tasks and actions.
pub(super) fn method_problems(
    file: &str,
    method: &RefinementMethod,
    known: &Known<'_>,
) -> Vec<ContentError> {
    let Some(task) = known.tasks.get(&method.task_id) else {
        let hint = known.task_hint(&method.task_id);
        return vec![ContentError::new(
            file,
            "/taskId",
            format!(
                "no loaded task has the id `{}`{hint}: fix the id, or list the task's file in its mod's `content.tasks` and fix the errors reported for it",
                method.task_id
            ),
        )];
    };
    let mut found = Vec::new();
    let mut check = StepCheck {
        file,
        task,
        known,
        found: &mut found,
    };
    if let Some(applicability) = &method.applicability {
        check.condition(applicability, "/applicability");
    }
    check.steps(&method.steps, "/steps");
    found
}

/// The steps of one method being checked against its task and what is loaded.
struct StepCheck<'a, 'k> {
    file: &'a str,
    task: &'a TaskDefinition,
    known: &'a Known<'k>,
    found: &'a mut Vec<ContentError>,
}

impl StepCheck<'_, '_> {
    fn problem(&mut self, pointer: String, message: String) {
        self.found
            .push(ContentError::new(self.file, pointer, message));
    }

    fn steps(&mut self, steps: &[RefinementStep], pointer: &str) {
        for (index, step) in steps.iter().enumerate() {
            let at = format!("{pointer}/{index}");
            match step {
                RefinementStep::PrimitiveAction(step) => {
                    self.action_step(
                        &step.action_id,
                        &step.target_bindings,
                        &step.parameters,
                        &at,
                    );
                }
                RefinementStep::Task(step) => {
                    self.task_step(
                        &step.task_id,
                        &step.parameter_bindings,
                        &step.parameters,
                        &at,
                    );
                }
                RefinementStep::Conditional(step) => {
                    self.condition(&step.condition, &format!("{at}/condition"));
                    self.steps(&step.then_steps, &format!("{at}/thenSteps"));
                    self.steps(&step.else_steps, &format!("{at}/elseSteps"));
                }
            }
        }
    }

    /// Each fact `condition` (at `pointer`) reads (`{"var": "actor.tags"}`, [`facts_read`]) that
    /// conditions are not given: a misspelt one reads as nothing, and the condition
    /// holds, or fails, whatever the world is.
    fn condition(&mut self, condition: &Condition, pointer: &str) {
        let mut read = Vec::new();
        facts_read(condition.source(), &mut read);
        for path in read {
            if let Some(message) = unknown_fact(&path, self.task) {
                self.problem(pointer.to_owned(), message);
            }
        }
    }

    fn action_step(
        &mut self,
        action_id: &str,
        bindings: &std::collections::BTreeMap<String, Binding>,
        values: &std::collections::BTreeMap<String, serde_json::Value>,
        at: &str,
    ) {
        let namespace = action_namespace(action_id);
        if !(self.known.is_loaded)(namespace) {
            let message = format!(
                "mod `{namespace}` is not loaded: add it to the game file's `mods` (and to this mod's `dependencies`), or use an action of a loaded mod"
            );
            return self.problem(format!("{at}/actionId"), message);
        }
        let Some(action) = self.known.actions.get(action_id) else {
            let hint = did_you_mean(action_id, self.known.actions.iter().map(|a| a.id.as_str()));
            let message = format!(
                "unknown action id `{action_id}`{hint}: check the id's spelling, that the action exists in `mods/{namespace}/actions/` and its mod lists it, and fix the errors reported for its file"
            );
            return self.problem(format!("{at}/actionId"), message);
        };
        let placeholders: Vec<&str> = (action.target_slots())
            .map(|(_, slot)| slot.placeholder.as_str())
            .collect();
        for (key, binding) in bindings {
            let pointer = format!("{at}/targetBindings/{}", pointer_token(key));
            if !placeholders.contains(&key.as_str()) {
                let real = list_or_none(&placeholders);
                let message = format!(
                    "unknown placeholder name `{key}`: `{action_id}`'s placeholders are {real}; use the action's own names as the keys"
                );
                self.problem(pointer, message);
                continue;
            }
            if let Some(parameter) = self.bound_parameter(binding, &pointer)
                && parameter.entity.is_none()
            {
                let message = format!(
                    "target `{key}` is bound to `{}`, a value parameter: bind it to an entity parameter",
                    parameter.name
                );
                self.problem(pointer, message);
            }
        }
        for placeholder in placeholders {
            if !bindings.contains_key(placeholder) {
                let message = format!(
                    "missing required target binding `{placeholder}`: `{action_id}` needs it; add `\"{placeholder}\": \"task.params.<name>\"` to `targetBindings`"
                );
                self.problem(format!("{at}/targetBindings"), message);
            }
        }
        for (name, value) in values {
            let pointer = format!("{at}/parameters/{}", pointer_token(name));
            let Some(defined) = action.parameters.get(name) else {
                let names: Vec<&str> = action.parameters.keys().map(String::as_str).collect();
                let message = format!(
                    "invalid parameter name `{name}`: `{action_id}` defines {}; a step may only override those",
                    list_or_none(&names)
                );
                self.problem(pointer, message);
                continue;
            };
            if let Some(kind) = ValueType::of(&defined.default)
                && !kind.admits(value)
            {
                let message = format!(
                    "{value} is not of the type of `{name}`, {}: write {} value",
                    kind.a(),
                    kind.a()
                );
                self.problem(pointer, message);
            }
        }
    }

    fn task_step(
        &mut self,
        task_id: &str,
        bindings: &std::collections::BTreeMap<String, Binding>,
        values: &std::collections::BTreeMap<String, serde_json::Value>,
        at: &str,
    ) {
        let Some(sub) = self.known.tasks.get(task_id) else {
            let hint = self.known.task_hint(task_id);
            let message = format!(
                "no loaded task has the id `{task_id}`{hint}: fix the id, or list the task's file in its mod's `content.tasks` and fix the errors reported for it"
            );
            return self.problem(format!("{at}/taskId"), message);
        };
        for (key, binding) in bindings {
            let pointer = format!("{at}/parameterBindings/{}", pointer_token(key));
            let Some(target) = sub.parameter(key) else {
                let message = format!(
                    "task `{task_id}` has no parameter `{key}`: its parameters are {}",
                    sub.parameter_names()
                );
                self.problem(pointer, message);
                continue;
            };
            if let Some(source) = self.bound_parameter(binding, &pointer)
                && !same_kind(source, target)
            {
                let message = format!(
                    "`{}` and `{key}` are not the same kind of parameter: bind an entity to an entity, a value to a value of its type",
                    source.name
                );
                self.problem(pointer, message);
            }
        }
        for (name, value) in values {
            let pointer = format!("{at}/parameters/{}", pointer_token(name));
            if bindings.contains_key(name) {
                let message = format!(
                    "`{name}` is bound in `parameterBindings` too: give it a value or bind it, not both"
                );
                self.problem(pointer, message);
                continue;
            }
            match sub.parameter(name).and_then(|p| p.value.as_ref()) {
                Some(parameter) if parameter.kind.admits(value) => {}
                Some(parameter) => {
                    let kind = parameter.kind.a();
                    let message = format!(
                        "{value} is not of the type of `{name}`, {kind}: write {kind} value"
                    );
                    self.problem(pointer, message);
                }
                None => {
                    let message = format!(
                        "task `{task_id}` has no value parameter `{name}`: its parameters are {}",
                        sub.parameter_names()
                    );
                    self.problem(pointer, message);
                }
            }
        }
        for (parameter, _) in sub.entity_parameters() {
            if !bindings.contains_key(&parameter.name) {
                let message = format!(
                    "missing required binding `{}`: task `{task_id}` needs it; add `\"{}\": \"task.params.<name>\"` to `parameterBindings`",
                    parameter.name, parameter.name
                );
                self.problem(format!("{at}/parameterBindings"), message);
            }
        }
    }

    /// The parameter of this step's task that `binding` names, or `None` after
    /// reporting that it does not exist (a malformed binding was reported by its file).
    fn bound_parameter(&mut self, binding: &Binding, pointer: &str) -> Option<&TaskParameter> {
        let name = binding.parameter()?;
        let task = self.task;
        let parameter = task.parameter(name);
        if parameter.is_none() {
            let message = format!(
                "task parameter `{name}` not found: `{}`'s parameters are {}",
                task.id,
                task.parameter_names()
            );
            self.problem(pointer.to_owned(), message);
        }
        parameter
    }
}

/// Whether a parameter may be bound to another: entity to entity, value to value of a
/// type it admits.
fn same_kind(source: &TaskParameter, target: &TaskParameter) -> bool {
    match (&source.value, &target.value) {
        (None, None) => source.entity.is_some() && target.entity.is_some(),
        (Some(source), Some(target)) => {
            source.kind == target.kind
                || (target.kind == ValueType::Number && source.kind == ValueType::Integer)
        }
        _ => false,
    }
}

/// The names, joined, or "none".
pub(super) fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// The first method, by id, whose task steps close a cycle between tasks or nest tasks
/// deeper than [`MAX_NESTING`], with the problem.
fn cycle_or_too_deep(
    tasks: &ContentCatalog<TaskDefinition>,
    methods: &ContentCatalog<RefinementMethod>,
) -> Option<(String, ContentError)> {
    // Each task's sub-tasks, with the method and step that run each.
    let mut runs: HashMap<&str, Vec<(&str, &str, String, &RefinementMethod)>> = HashMap::default();
    for (file, method) in methods.iter_with_files() {
        for (pointer, step) in method.each_step() {
            if let RefinementStep::Task(step) = step {
                let run = (
                    step.task_id.as_str(),
                    file,
                    format!("{pointer}/taskId"),
                    method,
                );
                runs.entry(method.task_id.as_str()).or_default().push(run);
            }
        }
    }
    let mut depths: HashMap<&str, usize> = HashMap::default();
    for task in tasks {
        if let Some(found) = walk(&task.id, &runs, &mut depths) {
            return Some(found);
        }
    }
    None
}

type Runs<'a> = HashMap<&'a str, Vec<(&'a str, &'a str, String, &'a RefinementMethod)>>;

/// Finds how deep `task` nests tasks (1 for one that runs none) and each task below
/// it, into `depths`, depth first; or the method whose step closes a cycle or goes too
/// deep, with the problem. The path down is a stack of its own, not the thread's: a
/// chain of thousands of tasks is an error to report, not a stack overflow.
fn walk<'a>(
    task: &'a str,
    runs: &'a Runs<'a>,
    depths: &mut HashMap<&'a str, usize>,
) -> Option<(String, ContentError)> {
    // Each task on the path, with the next of its runs to look at and the deepest of
    // its sub-tasks so far.
    let mut path: Vec<(&'a str, usize, usize)> = vec![(task, 0, 0)];
    while let Some(&(task, next, deepest)) = path.last() {
        let Some((sub, file, pointer, method)) = runs.get(task).and_then(|runs| runs.get(next))
        else {
            depths.insert(task, deepest + 1);
            path.pop();
            continue;
        };
        let problem = |message: String| {
            let id = method.refinement_method_id.clone();
            Some((id, ContentError::new(*file, pointer.clone(), message)))
        };
        if let Some(start) = path.iter().position(|&(on_path, ..)| on_path == *sub) {
            let cycle: Vec<&str> = (path[start..].iter().map(|&(task, ..)| task))
                .chain([*sub])
                .collect();
            return problem(format!(
                "a cycle between tasks: {}; a task may not run itself, even through other tasks: break the cycle",
                cycle.join(" → ")
            ));
        }
        let Some(&depth) = depths.get(sub) else {
            // Found first; this run is looked at again once it is.
            path.push((sub, 0, 0));
            continue;
        };
        if depth + 1 > MAX_NESTING {
            return problem(format!(
                "tasks nest deeper than {MAX_NESTING} levels through `{sub}`: carry out some of its steps here instead of through another task"
            ));
        }
        if let Some(top) = path.last_mut() {
            *top = (task, next + 1, deepest.max(depth));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::content::fixtures::{action, parsed, pointers, task};

    /// `items:give` (item, recipient; a `quietly` flag), `items:pick_up` (item) and
    /// `core:wait`.
    fn actions() -> ContentCatalog<ActionDefinition> {
        let mut catalog = ContentCatalog::default();
        let give = action(
            "items:give",
            "give {item} to {recipient}",
            json!({
                "targets": {
                    "primary": { "scope": "inventory", "placeholder": "item" },
                    "secondary": { "scope": "characters_here", "placeholder": "recipient" }
                },
                "parameters": { "quietly": { "default": false } }
            }),
        );
        let pick_up = action(
            "items:pick_up",
            "pick up {item}",
            json!({ "targets": { "primary": { "scope": "things_here", "placeholder": "item" } } }),
        );
        for (file, item) in [
            ("mods/items/actions/give.action.json", give),
            ("mods/items/actions/pick_up.action.json", pick_up),
            (
                "mods/core/actions/wait.action.json",
                action("core:wait", "wait", json!({})),
            ),
        ] {
            catalog.insert(file, item).expect("unique ids");
        }
        catalog
    }

    fn method(id: &str, task_id: &str, steps: Value) -> RefinementMethod {
        parsed(
            json!({ "refinementMethodId": id, "taskId": task_id, "steps": steps }),
            json!({}),
        )
    }

    /// A valid method of `tavern:serve`: pick up the drink, give it to the customer.
    fn serving() -> Value {
        json!([
            { "stepType": "primitive_action", "actionId": "items:pick_up", "targetBindings": { "item": "task.params.drink" } },
            { "stepType": "primitive_action", "actionId": "items:give", "targetBindings": { "item": "task.params.drink", "recipient": "task.params.customer" } }
        ])
    }

    /// Settles these tasks and methods against [`actions`], with `core` and `items`
    /// and `tavern` loaded; returns what is left and the problems.
    fn settled(
        tasks: Vec<TaskDefinition>,
        methods: Vec<RefinementMethod>,
    ) -> (Vec<String>, Vec<String>, Vec<ContentError>) {
        let mut task_catalog = ContentCatalog::default();
        for task in tasks {
            let file = format!("mods/tavern/tasks/{}.task.json", task.id);
            task_catalog.insert(&file, task).expect("unique task ids");
        }
        let mut method_catalog = ContentCatalog::default();
        for method in methods {
            let file = format!(
                "mods/tavern/methods/{}.method.json",
                method.refinement_method_id
            );
            method_catalog
                .insert(&file, method)
                .expect("unique method ids");
        }
        let mut problems = Vec::new();
        let is_loaded = |namespace: &str| ["core", "items", "tavern"].contains(&namespace);
        settle(
            &mut task_catalog,
            &mut method_catalog,
            &actions(),
            &is_loaded,
            &mut problems,
        );
        let tasks = task_catalog.iter().map(|t| t.id.clone()).collect();
        let methods = (method_catalog.iter())
            .map(|m| m.refinement_method_id.clone())
            .collect();
        (tasks, methods, problems)
    }

    /// The problems of one method with `steps`, of `tavern:serve`.
    fn problems_of(steps: Value) -> Vec<ContentError> {
        let (_, methods, problems) = settled(
            vec![task("tavern:serve", json!({}))],
            vec![method("tavern:by_hand", "tavern:serve", steps)],
        );
        assert!(methods.is_empty(), "a method with problems is left out");
        problems
    }

    #[test]
    fn a_condition_reads_only_facts_there_are() {
        let mut steps = serving();
        steps.as_array_mut().expect("steps").push(json!({
            "stepType": "conditional",
            "condition": { "and": [
                { "in": ["behind_bar", { "var": "actor.tag" }] },
                { "var": "task.params.drnk" },
                { "var": ["task.params.drink.carriedBy", null] },
                { "var": "task.params.rounds" },
                { "var": "task.state.actionsDone" },
                { "var": "world.weather.rain" },
                { "some": [{ "var": "actor.carriedTags" }, { "==": [{ "var": "" }, "ale"] }] },
                { "var": "task.params.customer.here" },
                { "var": "you" }
            ] },
            "thenSteps": serving()
        }));
        let mut method = method("tavern:by_hand", "tavern:serve", steps);
        method.applicability =
            Some(serde_json::from_value(json!({ "var": "task.state.tries" })).expect("a rule"));
        let (_, methods, problems) = settled(vec![task("tavern:serve", json!({}))], vec![method]);
        assert!(methods.is_empty(), "{problems:?}");
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(
            pointers(&problems),
            [
                "/applicability",
                "/steps/2/condition",
                "/steps/2/condition",
                "/steps/2/condition",
                "/methods"
            ],
            "{messages:#?}"
        );
        assert!(
            messages[0].contains("`task.state.tries`"),
            "{}",
            messages[0]
        );
        assert!(
            messages[0].contains("actionsDone, triedMethods"),
            "{}",
            messages[0]
        );
        assert!(messages[1].contains("`actor.tag`") && messages[1].contains("carriedTags"));
        assert!(
            messages[2].contains("`task.params.drnk`")
                && messages[2].contains("customer, drink, rounds")
        );
        assert!(
            messages[3].contains("`you`") && messages[3].contains("`actor`, `task` and `world`")
        );
    }

    #[test]
    fn every_operator_that_reads_a_fact_is_checked() {
        let mut steps = serving();
        steps.as_array_mut().expect("steps").push(json!({
            "stepType": "conditional",
            "condition": { "and": [
                { "val": ["actor", "tagz"] },
                { "!": { "missing": ["task.params.drink", "task.params.drnk"] } },
                { "!": { "missing": "actor.plac" } },
                { "!": { "missing_some": [1, ["task.state.actionsDone", "task.state.tries"]] } },
                { "val": ["task", "params", "customer", "here"] },
                { "val": "actor.tags" },
                { "val": "world" },
                { "some": [{ "val": ["actor", "carriedTags"] }, { "==": [{ "val": [] }, "ale"] }] }
            ] },
            "thenSteps": serving()
        }));
        let method = method("tavern:by_hand", "tavern:serve", steps);
        let (_, _, problems) = settled(vec![task("tavern:serve", json!({}))], vec![method]);
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        let named: Vec<&str> = [
            "`actor.tagz`",
            "`task.params.drnk`",
            "`actor.plac`",
            "`task.state.tries`",
            "`actor.tags`",
        ]
        .into_iter()
        .filter(|path| messages.iter().any(|m| m.starts_with(path)))
        .collect();
        assert_eq!(named.len(), 5, "{messages:#?}");
        let one_name = messages.iter().find(|m| m.starts_with("`actor.tags`"));
        assert!(
            one_name.is_some_and(|m| m.contains(r#"{"val": ["actor", "tags"]}"#)),
            "{one_name:?}"
        );
        assert_eq!(
            problems.len(),
            6,
            "and the task left without a method: {messages:#?}"
        );
    }

    #[test]
    fn a_valid_method_keeps_its_task() {
        let (tasks, methods, problems) = settled(
            vec![task("tavern:serve", json!({}))],
            vec![method("tavern:by_hand", "tavern:serve", serving())],
        );
        assert_eq!(problems, []);
        assert_eq!(
            (tasks, methods),
            (
                vec!["tavern:serve".to_owned()],
                vec!["tavern:by_hand".to_owned()]
            )
        );
    }

    #[test]
    fn an_unknown_action_and_a_mod_not_loaded_are_named() {
        let problems = problems_of(json!([
            { "stepType": "primitive_action", "actionId": "items:juggle" },
            { "stepType": "primitive_action", "actionId": "magic:juggle" },
            { "stepType": "primitive_action", "actionId": "items:gvie" }
        ]));
        assert_eq!(
            pointers(&problems),
            [
                "/steps/0/actionId",
                "/steps/1/actionId",
                "/steps/2/actionId",
                "/methods"
            ]
        );
        assert!(
            problems[0]
                .message
                .contains("unknown action id `items:juggle`: check")
        );
        assert!(
            problems[2]
                .message
                .contains("unknown action id `items:gvie` (did you mean `items:give`?)"),
            "{}",
            problems[2]
        );
        assert!(problems[1].message.contains("mod `magic` is not loaded"));
        assert!(
            problems[3].message.contains("has no refinement method"),
            "the task is left with no method"
        );
    }

    #[test]
    fn bindings_use_the_actions_own_placeholders_and_bind_each() {
        let problems = problems_of(json!([
            { "stepType": "primitive_action", "actionId": "items:give", "targetBindings": { "primary": "task.params.drink" } }
        ]));
        assert_eq!(
            pointers(&problems)[..3],
            [
                "/steps/0/targetBindings/primary",
                "/steps/0/targetBindings",
                "/steps/0/targetBindings"
            ]
        );
        assert!(problems[0].message.contains(
            "unknown placeholder name `primary`: `items:give`'s placeholders are item, recipient"
        ));
        assert!(
            problems[1]
                .message
                .contains("missing required target binding `item`")
        );
        assert!(
            problems[2]
                .message
                .contains("missing required target binding `recipient`")
        );
    }

    #[test]
    fn a_binding_names_an_entity_parameter_of_the_task() {
        let problems = problems_of(json!([
            { "stepType": "primitive_action", "actionId": "items:pick_up", "targetBindings": { "item": "task.params.mug" } },
            { "stepType": "primitive_action", "actionId": "items:pick_up", "targetBindings": { "item": "task.params.rounds" } }
        ]));
        assert_eq!(
            pointers(&problems)[..2],
            [
                "/steps/0/targetBindings/item",
                "/steps/1/targetBindings/item"
            ]
        );
        assert!(problems[0].message.contains("task parameter `mug` not found: `tavern:serve`'s parameters are customer, drink, rounds"));
        assert!(problems[1].message.contains("a value parameter"));
    }

    #[test]
    fn overrides_name_the_actions_parameters_with_values_of_their_type() {
        let problems = problems_of(json!([
            { "stepType": "primitive_action", "actionId": "items:pick_up", "targetBindings": { "item": "task.params.drink" }, "parameters": { "force": true } },
            { "stepType": "primitive_action", "actionId": "items:give", "targetBindings": { "item": "task.params.drink", "recipient": "task.params.customer" }, "parameters": { "quietly": "yes" } }
        ]));
        assert_eq!(
            pointers(&problems)[..2],
            ["/steps/0/parameters/force", "/steps/1/parameters/quietly"]
        );
        assert!(
            problems[0]
                .message
                .contains("invalid parameter name `force`: `items:pick_up` defines none")
        );
        assert!(problems[1].message.contains("a boolean"));
    }

    #[test]
    fn a_method_of_an_unknown_task_is_left_out() {
        let (tasks, methods, problems) = settled(
            vec![task("tavern:serve", json!({}))],
            vec![
                method("tavern:by_hand", "tavern:serve", serving()),
                method("tavern:stray", "tavern:dance", serving()),
            ],
        );
        assert_eq!(pointers(&problems), ["/taskId"]);
        assert!(
            problems[0]
                .message
                .contains("no loaded task has the id `tavern:dance`")
        );
        assert_eq!(
            (tasks.len(), methods),
            (1, vec!["tavern:by_hand".to_owned()])
        );
    }

    #[test]
    fn a_task_with_no_method_is_left_out() {
        let (tasks, _, problems) = settled(vec![task("tavern:serve", json!({}))], vec![]);
        assert_eq!(pointers(&problems), ["/methods"]);
        assert!(tasks.is_empty());
    }

    #[test]
    fn listed_methods_exist_and_carry_out_the_task() {
        let (tasks, _, problems) = settled(
            vec![
                task(
                    "tavern:serve",
                    json!({ "methods": ["tavern:by_hand", "tavern:missing", "tavern:other"] }),
                ),
                task("tavern:pour", json!({})),
            ],
            vec![
                method("tavern:by_hand", "tavern:serve", serving()),
                method("tavern:other", "tavern:pour", serving()),
            ],
        );
        assert_eq!(pointers(&problems), ["/methods/1", "/methods/2"]);
        assert!(problems[1].message.contains("carries out `tavern:pour`"));
        assert_eq!(tasks.len(), 2, "both keep a method");
    }

    fn runs(task_id: &str) -> Value {
        json!([{ "stepType": "task", "taskId": task_id, "parameterBindings": { "customer": "task.params.customer", "drink": "task.params.drink" } }])
    }

    #[test]
    fn a_cycle_between_tasks_is_named_and_broken() {
        let (tasks, methods, problems) = settled(
            vec![task("tavern:a", json!({})), task("tavern:b", json!({}))],
            vec![
                method("tavern:a_by_b", "tavern:a", runs("tavern:b")),
                method("tavern:b_by_a", "tavern:b", runs("tavern:a")),
                method("tavern:b_by_hand", "tavern:b", serving()),
            ],
        );
        assert_eq!(pointers(&problems), ["/steps/0/taskId"]);
        assert_eq!(
            problems[0].file,
            "mods/tavern/methods/tavern:b_by_a.method.json"
        );
        assert!(
            problems[0]
                .message
                .contains("a cycle between tasks: tavern:a → tavern:b → tavern:a"),
            "{}",
            problems[0].message
        );
        assert_eq!(tasks.len(), 2);
        assert_eq!(methods, ["tavern:a_by_b", "tavern:b_by_hand"]);
    }

    #[test]
    fn tasks_nest_at_most_ten_deep() {
        let count = MAX_NESTING + 1;
        let tasks: Vec<TaskDefinition> = (0..count)
            .map(|n| task(&format!("tavern:t{n}"), json!({})))
            .collect();
        let mut methods: Vec<RefinementMethod> = (0..count - 1)
            .map(|n| {
                method(
                    &format!("tavern:m{n}"),
                    &format!("tavern:t{n}"),
                    runs(&format!("tavern:t{}", n + 1)),
                )
            })
            .collect();
        methods.push(method(
            "tavern:last",
            &format!("tavern:t{}", count - 1),
            serving(),
        ));
        let (kept, _, problems) = settled(tasks, methods);
        assert_eq!(pointers(&problems)[0], "/steps/0/taskId");
        assert!(
            problems[0].message.contains("nest deeper than 10"),
            "{}",
            problems[0].message
        );
        assert!(kept.len() < count, "the task too deep is left out");
    }

    #[test]
    fn a_chain_of_thousands_of_tasks_is_too_deep_not_a_stack_overflow() {
        const CHAIN: usize = 5000;
        let mut tasks = ContentCatalog::default();
        let mut methods = ContentCatalog::default();
        for n in 0..CHAIN {
            let task_id = format!("tavern:t{n}");
            let file = format!("mods/tavern/tasks/t{n}.task.json");
            tasks
                .insert(&file, task(&task_id, json!({})))
                .expect("unique");
            let steps = if n + 1 < CHAIN {
                runs(&format!("tavern:t{}", n + 1))
            } else {
                serving()
            };
            let file = format!("mods/tavern/methods/m{n}.method.json");
            let method = method(&format!("tavern:m{n}"), &task_id, steps);
            methods.insert(&file, method).expect("unique");
        }
        // A stack far smaller than a walk down the chain one call a task would take.
        let found = std::thread::Builder::new()
            .stack_size(128 << 10)
            .spawn(move || cycle_or_too_deep(&tasks, &methods))
            .expect("a thread")
            .join()
            .expect("no stack overflow");
        let (method, problem) = found.expect("too deep");
        // The link ten tasks above the last: the deepest that nests more than ten.
        assert_eq!(method, format!("tavern:m{}", CHAIN - 11));
        assert!(
            problem.message.contains("nest deeper than 10"),
            "{problem:?}"
        );
    }

    /// The problems of serving by pouring: a method of `tavern:serve` whose one step
    /// runs `tavern:pour` (which has a method of its own) with these bindings and values.
    fn pouring(bindings: Value, values: Value) -> Vec<ContentError> {
        let step = json!([{
            "stepType": "task",
            "taskId": "tavern:pour",
            "parameterBindings": bindings,
            "parameters": values
        }]);
        let (_, _, problems) = settled(
            vec![
                task("tavern:serve", json!({})),
                task("tavern:pour", json!({})),
            ],
            vec![
                method("tavern:by_hand", "tavern:pour", serving()),
                method("tavern:by_pouring", "tavern:serve", step),
            ],
        );
        problems
    }

    #[test]
    fn a_task_step_binds_every_entity_parameter_with_its_kind() {
        let problems = pouring(
            json!({ "customer": "task.params.rounds", "guest": "task.params.customer" }),
            json!({ "rounds": "two" }),
        );
        assert_eq!(
            pointers(&problems)[..4],
            [
                "/steps/0/parameterBindings/customer",
                "/steps/0/parameterBindings/guest",
                "/steps/0/parameters/rounds",
                "/steps/0/parameterBindings"
            ]
        );
        assert!(problems[0].message.contains("not the same kind"));
        assert!(problems[1].message.contains("has no parameter `guest`"));
        assert!(problems[2].message.contains("`rounds`, an integer"));
        assert!(
            problems[3]
                .message
                .contains("missing required binding `drink`")
        );
    }

    #[test]
    fn a_task_steps_parameter_is_bound_or_given_a_value_not_both() {
        let bindings = json!({
            "customer": "task.params.customer",
            "drink": "task.params.drink",
            "rounds": "task.params.rounds"
        });
        let problems = pouring(bindings, json!({ "rounds": 2 }));
        // Then its task, left with no method, is left out too.
        assert_eq!(pointers(&problems)[..1], ["/steps/0/parameters/rounds"]);
        assert!(
            problems[0]
                .message
                .contains("bound in `parameterBindings` too"),
            "{}",
            problems[0].message
        );
    }
}
