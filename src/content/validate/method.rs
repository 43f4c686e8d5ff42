//! The checks of one refinement method file.

use std::collections::BTreeMap;

use super::{check_namespaced_id_at, is_namespaced, pointer_token};
use crate::content::method::is_identifier;
use crate::content::{
    BINDING_PREFIX, Binding, ContentAsset, ContentError, RefinementMethod, RefinementStep,
};

/// How deep steps may nest (conditional steps inside conditional steps, and tasks inside
/// tasks): deeper is an error, which also stops a runaway expansion.
pub const MAX_NESTING: usize = 10;

impl ContentAsset for RefinementMethod {
    const EXTENSIONS: &'static [&'static str] = &["method.json", "method.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems =
            check_namespaced_id_at(&self.refinement_method_id, file, "/refinementMethodId");
        if !is_namespaced(&self.task_id) {
            problems.push(ContentError::new(
                file,
                "/taskId",
                format!("`{}` must be a task's `mod:task` id", self.task_id),
            ));
        }
        if self.steps.is_empty() {
            problems.push(ContentError::new(
                file,
                "/steps",
                "the method has no steps: add at least one",
            ));
        }
        check_steps(&self.steps, "/steps", 1, file, &mut problems);
        problems
    }
}

/// Checks `steps` at `pointer`, nested `depth` deep.
fn check_steps(
    steps: &[RefinementStep],
    pointer: &str,
    depth: usize,
    file: &str,
    problems: &mut Vec<ContentError>,
) {
    for (index, step) in steps.iter().enumerate() {
        let at = format!("{pointer}/{index}");
        match step {
            RefinementStep::PrimitiveAction(action) => {
                if !is_namespaced(&action.action_id) {
                    problems.push(ContentError::new(
                        file,
                        format!("{at}/actionId"),
                        format!(
                            "`{}` is not in the `modId:actionId` format (such as `items:pick_up`): write the action's full id",
                            action.action_id
                        ),
                    ));
                }
                check_bindings(
                    &action.target_bindings,
                    &at,
                    "targetBindings",
                    file,
                    problems,
                );
                check_values(&action.parameters, &at, file, problems);
            }
            RefinementStep::Task(task) => {
                if !is_namespaced(&task.task_id) {
                    problems.push(ContentError::new(
                        file,
                        format!("{at}/taskId"),
                        format!("`{}` must be a task's `mod:task` id", task.task_id),
                    ));
                }
                check_bindings(
                    &task.parameter_bindings,
                    &at,
                    "parameterBindings",
                    file,
                    problems,
                );
                check_values(&task.parameters, &at, file, problems);
            }
            RefinementStep::Conditional(conditional) => {
                if depth >= MAX_NESTING {
                    problems.push(ContentError::new(
                        file,
                        at,
                        format!("conditional steps nest deeper than {MAX_NESTING} levels: flatten them, or move some into a task of their own"),
                    ));
                    continue;
                }
                if conditional.then_steps.is_empty() && conditional.else_steps.is_empty() {
                    problems.push(ContentError::new(
                        file,
                        format!("{at}/thenSteps"),
                        "the conditional step has no steps: add `thenSteps` or `elseSteps`, or remove it",
                    ));
                }
                for (field, branch) in [
                    ("thenSteps", &conditional.then_steps),
                    ("elseSteps", &conditional.else_steps),
                ] {
                    check_steps(branch, &format!("{at}/{field}"), depth + 1, file, problems);
                }
            }
        }
    }
}

/// Bindings whose key is not a name or whose value is not `task.params.<name>`.
fn check_bindings(
    bindings: &BTreeMap<String, Binding>,
    step: &str,
    field: &str,
    file: &str,
    problems: &mut Vec<ContentError>,
) {
    for (key, binding) in bindings {
        let pointer = format!("{step}/{field}/{}", pointer_token(key));
        if !is_identifier(key) {
            problems.push(ContentError::new(
                file,
                &pointer,
                format!(
                    "`{key}` is not a placeholder or parameter name: use letters, digits and `_`"
                ),
            ));
        }
        if binding.parameter().is_none() {
            problems.push(ContentError::new(
                file,
                pointer,
                format!(
                    "`{}` is not a valid binding: write `{BINDING_PREFIX}<name>`, naming one of the task's parameters",
                    binding.as_str()
                ),
            ));
        }
    }
}

/// Parameter values that are not a string, a number or a boolean.
fn check_values(
    values: &BTreeMap<String, serde_json::Value>,
    step: &str,
    file: &str,
    problems: &mut Vec<ContentError>,
) {
    for (name, value) in values {
        if !(value.is_string() || value.is_number() || value.is_boolean()) {
            problems.push(ContentError::new(
                file,
                format!("{step}/parameters/{}", pointer_token(name)),
                format!("{value} is not a parameter value: write a string, a number or a boolean"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::content::fixtures::{parsed, pointers};
    use crate::content::parse_content;

    const FILE: &str = "mods/tavern/methods/serve.method.json";

    fn method(overrides: Value) -> RefinementMethod {
        let base = json!({
            "refinementMethodId": "tavern:serve_from_bar",
            "taskId": "tavern:serve_drink",
            "steps": [
                { "stepType": "primitive_action", "actionId": "items:pick_up", "targetBindings": { "item": "task.params.drink" } }
            ]
        });
        parsed(base, overrides)
    }

    fn step(action_id: &str) -> Value {
        json!({ "stepType": "primitive_action", "actionId": action_id })
    }

    #[test]
    fn a_valid_method_has_no_problems() {
        assert_eq!(method(json!({})).check(FILE), []);
    }

    #[test]
    fn ids_are_mod_and_name() {
        let problems = method(json!({
            "refinementMethodId": "serve",
            "taskId": "serve_drink",
            "steps": [step("pick_up"), step("items:pick_up")]
        }))
        .check(FILE);
        assert_eq!(
            pointers(&problems),
            ["/refinementMethodId", "/taskId", "/steps/0/actionId"]
        );
        assert!(problems[2].message.contains("`modId:actionId` format"));
    }

    #[test]
    fn a_binding_names_a_task_parameter() {
        let problems = method(json!({ "steps": [{
            "stepType": "primitive_action",
            "actionId": "items:give",
            "targetBindings": { "item": "params.drink", "recipient": "task.params.customer" }
        }] }))
        .check(FILE);
        assert_eq!(pointers(&problems), ["/steps/0/targetBindings/item"]);
        assert!(problems[0].message.contains("`task.params.<name>`"));
    }

    #[test]
    fn json_logic_in_a_binding_is_an_error_that_says_so() {
        let text = json!({
            "refinementMethodId": "tavern:serve_from_bar",
            "taskId": "tavern:serve_drink",
            "steps": [{
                "stepType": "conditional",
                "condition": { "var": "actor.thirsty" },
                "thenSteps": [{
                    "stepType": "primitive_action",
                    "actionId": "items:pick_up",
                    "targetBindings": { "item": { "var": "task.params.drink" } }
                }]
            }]
        });
        let problems = parse_content::<RefinementMethod>(text.to_string().as_bytes(), FILE)
            .expect_err("JSON Logic is refused");
        assert_eq!(
            pointers(&problems),
            ["/steps/0/thenSteps/0/targetBindings/item"],
            "the field is named inside nested steps"
        );
        assert!(
            problems[0].message.contains("not JSON Logic"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_method_has_steps() {
        assert_eq!(
            pointers(&method(json!({ "steps": [] })).check(FILE)),
            ["/steps"]
        );
    }

    #[test]
    fn conditionals_nest_at_most_ten_deep() {
        let mut steps = json!([step("core:wait")]);
        for _ in 0..MAX_NESTING {
            steps = json!([{ "stepType": "conditional", "condition": true, "thenSteps": steps }]);
        }
        let problems = method(json!({ "steps": steps })).check(FILE);
        let deepest = format!("/steps/0{}", "/thenSteps/0".repeat(MAX_NESTING - 1));
        assert_eq!(pointers(&problems), [deepest.as_str()]);
        assert!(problems[0].message.contains("deeper than 10"));
        let mut fine = json!([step("core:wait")]);
        for _ in 0..MAX_NESTING - 1 {
            fine = json!([{ "stepType": "conditional", "condition": true, "thenSteps": fine }]);
        }
        assert_eq!(method(json!({ "steps": fine })).check(FILE), []);
    }

    #[test]
    fn parameter_values_are_plain() {
        let problems = method(json!({ "steps": [{
            "stepType": "primitive_action",
            "actionId": "core:wait",
            "parameters": { "minutes": { "var": "x" } }
        }] }))
        .check(FILE);
        assert_eq!(pointers(&problems), ["/steps/0/parameters/minutes"]);
    }
}
