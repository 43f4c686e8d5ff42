//! The checks of one action definition file.

use std::collections::HashSet;

use super::{TEXT_LIMITS, command_problems, pointer_token, too_long};
use crate::content::method::is_identifier;
use crate::content::{ActionDefinition, ContentAsset, ContentError, template_placeholders};

impl ContentAsset for ActionDefinition {
    const EXTENSIONS: &'static [&'static str] = &["action.json", "action.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let texts = [&*self.name, &self.description, &self.template];
        let mut problems = command_problems(file, &self.id, texts);
        problems.extend(self.overlong_texts(file));
        problems.extend(self.placeholder_problems(file));
        for (name, parameter) in &self.parameters {
            let pointer = format!("/parameters/{}", pointer_token(name));
            if !is_identifier(name) {
                problems.push(ContentError::new(
                    file,
                    &pointer,
                    not_a_name("parameter", name),
                ));
            }
            if !(parameter.default.is_string()
                || parameter.default.is_number()
                || parameter.default.is_boolean())
            {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/default"),
                    "the default must be a string, a number or a boolean",
                ));
            }
        }
        problems
    }
}

/// Why `name` cannot be a `what` (a placeholder, a parameter): a method binds it by
/// name.
fn not_a_name(what: &str, name: &str) -> String {
    format!(
        "`{name}` is not a {what} name: use ASCII letters, digits and `_`, not starting with a digit, as a method binds it by name"
    )
}

impl ActionDefinition {
    /// The descriptions of its targets and parameters, and its parameters' defaults,
    /// longer than [`TEXT_LIMITS`] allows.
    fn overlong_texts(&self, file: &str) -> Vec<ContentError> {
        let mut problems = Vec::new();
        let limits = &TEXT_LIMITS;
        for (role, slot) in self.target_slots() {
            problems.extend(too_long(
                file,
                &format!("/targets/{}/description", role.field()),
                &slot.description,
                limits.action_description,
                "action_description",
            ));
        }
        for (name, parameter) in &self.parameters {
            let pointer = format!("/parameters/{}", pointer_token(name));
            problems.extend(too_long(
                file,
                &format!("{pointer}/description"),
                &parameter.description,
                limits.action_description,
                "action_description",
            ));
            problems.extend(too_long(
                file,
                &format!("{pointer}/default"),
                &parameter.default_text(),
                limits.action_template,
                "action_template",
            ));
        }
        problems
    }

    /// Target slots and parameters that do not match the template's placeholders.
    fn placeholder_problems(&self, file: &str) -> Vec<ContentError> {
        let mut problems = Vec::new();
        let used: Vec<&str> = template_placeholders(&self.template).collect();
        let mut slot_names = HashSet::new();
        for (role, slot) in self.target_slots() {
            let pointer = format!("/targets/{}", role.field());
            if slot.scope.trim().is_empty() {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/scope"),
                    "the scope is empty: name a target scope",
                ));
            }
            // Named even when the name is no good: the template uses it.
            let unique = slot_names.insert(slot.placeholder.as_str());
            if !is_identifier(&slot.placeholder) {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/placeholder"),
                    not_a_name("placeholder", &slot.placeholder),
                ));
            } else if !unique {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/placeholder"),
                    format!(
                        "placeholder `{}` is used by another target slot: give each slot its own",
                        slot.placeholder
                    ),
                ));
            } else if !used.contains(&slot.placeholder.as_str()) {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/placeholder"),
                    format!(
                        "target slot `{}` is never used in the template `{}`: add `{{{}}}` to the template or remove the slot",
                        slot.placeholder, self.template, slot.placeholder
                    ),
                ));
            }
            if self.parameters.contains_key(&slot.placeholder) {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/placeholder"),
                    format!(
                        "`{}` is both a target placeholder and a parameter: rename one",
                        slot.placeholder
                    ),
                ));
            }
        }
        for name in used {
            if !slot_names.contains(name) && !self.parameters.contains_key(name) {
                problems.push(ContentError::new(
                    file,
                    "/template",
                    format!(
                        "placeholder `{{{name}}}` has no target slot or parameter: add a target with \"placeholder\": \"{name}\", or a parameter `{name}`"
                    ),
                ));
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::fixtures::{action, pointers};

    const FILE: &str = "mods/items/actions/give.action.json";

    fn slot(scope: &str, placeholder: &str) -> serde_json::Value {
        json!({ "scope": scope, "placeholder": placeholder, "description": "who" })
    }

    #[test]
    fn a_valid_action_has_no_problem() {
        let give = action(
            "items:give",
            "give {item} to {recipient} x{count}",
            json!({
                "targets": { "primary": slot("carried", "item"), "secondary": slot("nearby", "recipient") },
                "parameters": { "count": { "default": 1 } }
            }),
        );
        assert_eq!(give.check(FILE), []);
    }

    #[test]
    fn an_action_has_a_name_and_a_template() {
        let problems = action("items:give", " ", json!({ "name": "" })).check(FILE);
        assert_eq!(pointers(&problems), ["/name", "/template"]);
    }

    #[test]
    fn texts_above_their_limits_name_the_limit() {
        let long = |limit: usize| "x".repeat(limit + 1);
        let overrides = json!({
            "name": long(TEXT_LIMITS.name),
            "description": long(TEXT_LIMITS.action_description),
            "targets": { "primary": { "scope": "nearby", "placeholder": "x", "description": long(TEXT_LIMITS.action_description) } },
            "parameters": { "n": { "default": long(TEXT_LIMITS.action_template) } }
        });
        let problems = action("items:give", "give {x} {n}", overrides).check(FILE);
        assert_eq!(
            pointers(&problems),
            [
                "/name",
                "/description",
                "/targets/primary/description",
                "/parameters/n/default"
            ]
        );
        assert!(problems[0].message.contains("`TEXT_LIMITS.name`"));
    }

    #[test]
    fn placeholders_and_parameters_are_names_a_method_can_bind() {
        let overrides = json!({
            "targets": { "primary": slot("nearby", ""), "secondary": slot("nearby", "the item") },
            "parameters": { "how/many": { "default": 1 } }
        });
        let action = action("items:give", "give {} {the item} {how/many}", overrides);
        let problems = action.check(FILE);
        assert_eq!(
            pointers(&problems),
            [
                "/targets/primary/placeholder",
                "/targets/secondary/placeholder",
                "/parameters/how~1many"
            ]
        );
        assert!(
            problems[1]
                .message
                .contains("`the item` is not a placeholder name"),
            "{problems:#?}"
        );
    }

    #[test]
    fn a_target_slot_names_a_scope() {
        let overrides = json!({ "targets": { "primary": slot(" ", "item") } });
        let problems = action("items:take", "take {item}", overrides).check(FILE);
        assert_eq!(pointers(&problems), ["/targets/primary/scope"]);
    }

    #[test]
    fn each_slot_has_its_own_placeholder_used_in_the_template() {
        let overrides = json!({ "targets": { "primary": slot("a", "item"), "secondary": slot("b", "item"), "tertiary": slot("c", "other") } });
        let problems = action("items:take", "take {item}", overrides).check(FILE);
        assert_eq!(
            pointers(&problems),
            [
                "/targets/secondary/placeholder",
                "/targets/tertiary/placeholder"
            ]
        );
        assert!(problems[0].message.contains("used by another target slot"));
        assert!(problems[1].message.contains("never used in the template"));
    }

    #[test]
    fn a_placeholder_is_a_slot_or_a_parameter_not_both_nor_neither() {
        let overrides = json!({ "targets": { "primary": slot("a", "item") }, "parameters": { "item": { "default": "x" } } });
        let both = action("items:take", "take {item}", overrides).check(FILE);
        assert_eq!(pointers(&both), ["/targets/primary/placeholder"]);
        assert!(
            both[0]
                .message
                .contains("both a target placeholder and a parameter")
        );
        let neither = action("items:take", "take {item}", json!({})).check(FILE);
        assert_eq!(pointers(&neither), ["/template"]);
        assert!(
            neither[0]
                .message
                .contains("has no target slot or parameter")
        );
    }

    #[test]
    fn a_parameter_default_is_a_plain_value() {
        let overrides =
            json!({ "parameters": { "n": { "default": [1] }, "m": { "default": true } } });
        let problems = action("items:count", "count {n} {m}", overrides).check(FILE);
        assert_eq!(pointers(&problems), ["/parameters/n/default"]);
    }

    #[test]
    fn an_action_id_is_namespaced_by_its_mod() {
        let problems = action("shop:give", "give", json!({})).check(FILE);
        assert_eq!(pointers(&problems), ["/id"]);
    }
}
