//! The checks of one planning task file.

use std::collections::HashSet;

use super::{TEXT_LIMITS, command_problems, is_namespaced, too_long};
use crate::content::method::is_identifier;
use crate::content::{
    ContentAsset, ContentError, MAX_ENTITY_PARAMETERS, TaskDefinition, template_placeholders,
};

impl ContentAsset for TaskDefinition {
    const EXTENSIONS: &'static [&'static str] = &["task.json", "task.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let texts = [&*self.name, &self.description, &self.template];
        let mut problems = command_problems(file, &self.id, texts);
        problems.extend(self.parameter_problems(file));
        for (index, id) in self.methods.iter().enumerate() {
            if !is_namespaced(id) {
                problems.push(ContentError::new(
                    file,
                    format!("/methods/{index}"),
                    format!("`{id}` must be a refinement method's `mod:method` id"),
                ));
            }
        }
        problems
    }
}

impl TaskDefinition {
    /// Parameters that are malformed or do not match the template's placeholders.
    fn parameter_problems(&self, file: &str) -> Vec<ContentError> {
        let mut problems = Vec::new();
        let used: Vec<&str> = template_placeholders(&self.template).collect();
        let mut names = HashSet::new();
        for (index, parameter) in self.parameters.iter().enumerate() {
            let pointer = format!("/parameters/{index}");
            let name = parameter.name.as_str();
            if !is_identifier(name) {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/name"),
                    format!("`{name}` is not a parameter name: use letters, digits and `_`, as bindings name it `task.params.<name>`"),
                ));
            } else if !names.insert(name) {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/name"),
                    format!("parameter `{name}` is named twice: give each parameter its own name"),
                ));
            }
            problems.extend(too_long(
                file,
                &format!("{pointer}/description"),
                &parameter.description,
                TEXT_LIMITS.action_description,
                "action_description",
            ));
            match (&parameter.entity, &parameter.value) {
                (Some(entity), None) => {
                    if entity.scope.trim().is_empty() {
                        problems.push(ContentError::new(
                            file,
                            format!("{pointer}/entity/scope"),
                            "the scope is empty: name a target scope",
                        ));
                    }
                    if !used.contains(&name) {
                        problems.push(ContentError::new(
                            file,
                            format!("{pointer}/name"),
                            format!("entity parameter `{name}` is never used in the template `{}`: add `{{{name}}}` to it, so the model can tell the choices apart", self.template),
                        ));
                    }
                }
                (None, Some(value)) if !value.kind.admits(&value.default) => {
                    problems.push(ContentError::new(
                        file,
                        format!("{pointer}/value/default"),
                        format!(
                            "the default {} is not of the type `{}`: write {} value",
                            value.default,
                            value.kind.name(),
                            value.kind.a()
                        ),
                    ));
                }
                (None, Some(_)) => {}
                _ => problems.push(ContentError::new(
                    file,
                    pointer,
                    format!("parameter `{name}` must have exactly one of `entity` (a scope and tag rules) and `value` (a type and a default)"),
                )),
            }
        }
        let entities = self.entity_parameters().count();
        if entities > MAX_ENTITY_PARAMETERS {
            problems.push(ContentError::new(
                file,
                "/parameters",
                format!("the task has {entities} entity parameters: it may have at most {MAX_ENTITY_PARAMETERS}, one for each target slot of a command; pass the rest on as value parameters, or split the task"),
            ));
        }
        for placeholder in used {
            if self.parameter(placeholder).is_none() {
                problems.push(ContentError::new(
                    file,
                    "/template",
                    format!(
                        "unknown placeholder `{{{placeholder}}}`: the task's parameters are {}",
                        self.parameter_names()
                    ),
                ));
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::content::fixtures::{parsed, pointers};

    const FILE: &str = "mods/tavern/tasks/serve.task.json";

    fn task(overrides: Value) -> TaskDefinition {
        let base = json!({
            "id": "tavern:serve_drink",
            "name": "Serve a drink",
            "description": "bring someone a drink",
            "template": "serve {customer} a drink",
            "parameters": [
                { "name": "customer", "entity": { "scope": "characters_here" } },
                { "name": "count", "value": { "type": "integer", "default": 1 } }
            ],
            "methods": ["tavern:serve_from_bar"]
        });
        parsed(base, overrides)
    }

    #[test]
    fn a_valid_task_has_no_problems() {
        assert_eq!(task(json!({})).check(FILE), []);
    }

    #[test]
    fn a_task_id_names_its_mod() {
        let problems = task(json!({ "id": "items:serve" })).check(FILE);
        assert_eq!(pointers(&problems), ["/id"]);
    }

    #[test]
    fn parameters_have_names_one_kind_and_defaults_of_their_type() {
        let problems = task(json!({ "parameters": [
            { "name": "customer", "entity": { "scope": "characters_here" } },
            { "name": "customer", "value": { "type": "integer", "default": 1 } },
            { "name": "bad name", "value": { "type": "boolean", "default": true } },
            { "name": "both", "entity": { "scope": "things_here" }, "value": { "type": "string", "default": "" } },
            { "name": "nights", "value": { "type": "integer", "default": 1.5 } }
        ] }))
        .check(FILE);
        assert_eq!(
            pointers(&problems),
            [
                "/parameters/1/name",
                "/parameters/2/name",
                "/parameters/3",
                "/parameters/4/value/default"
            ]
        );
        assert!(problems[3].message.contains("not of the type `integer`"));
    }

    #[test]
    fn the_template_names_parameters_and_every_entity_parameter() {
        let problems = task(json!({ "template": "serve {guest} a drink" })).check(FILE);
        assert_eq!(pointers(&problems), ["/parameters/0/name", "/template"]);
        assert!(
            problems[1]
                .message
                .contains("the task's parameters are customer, count")
        );
    }

    #[test]
    fn a_task_has_a_name_and_a_template_within_their_limits() {
        let long = "x".repeat(TEXT_LIMITS.name + 1);
        let problems = task(json!({ "name": long, "template": " " })).check(FILE);
        // An empty template also leaves the entity parameter out of the command.
        assert_eq!(
            pointers(&problems),
            ["/template", "/name", "/parameters/0/name"]
        );
    }

    #[test]
    fn a_task_has_at_most_three_entity_parameters() {
        let entity = |name: &str| json!({ "name": name, "entity": { "scope": "characters_here" } });
        let problems = task(json!({
            "template": "serve {a} {b} {c} {d}",
            "parameters": [entity("a"), entity("b"), entity("c"), entity("d")]
        }))
        .check(FILE);
        assert_eq!(pointers(&problems), ["/parameters"]);
        assert!(problems[0].message.contains("at most 3"));
    }

    #[test]
    fn method_ids_are_namespaced() {
        let problems = task(json!({ "methods": ["serve_from_bar"] })).check(FILE);
        assert_eq!(pointers(&problems), ["/methods/0"]);
    }
}
