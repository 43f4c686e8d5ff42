//! The facts a plan's conditions are given, by name, and the paths a condition reads of
//! them: a misspelt fact reads as nothing, so the registry reports each path that is
//! none of them.

use super::TaskDefinition;
use super::refinement::list_or_none;

/// What a plan's conditions read of an entity: the actor, and each entity a task names
/// (which also says whether it is `here`). Planning writes the facts by these names.
/// Names may be shared (two mugs of ale); `id` and `carriedIds` tell entities apart.
pub(crate) const ENTITY_FACTS: [&str; 8] = [
    "id",
    "name",
    "tags",
    "place",
    "carries",
    "carriedIds",
    "carriedTags",
    "carriedBy",
];

/// What conditions read of a plan's progress, by the names planning writes them by.
pub(crate) const STATE_FACTS: [&str; 2] = ["actionsDone", "triedMethods"];

/// Operators whose arguments after the first read each element of the first (as
/// `{"var": ""}`), not the facts.
const OVER_ELEMENTS: [&str; 6] = ["some", "all", "none", "map", "filter", "reduce"];

/// A path a condition reads of the facts, name by name: `["actor", "tags"]`.
pub(super) type FactPath<'r> = Vec<&'r str>;

/// Puts in `read` each path `rule` reads of the facts: with `var` and `missing` (dotted
/// paths, `"actor.tags"`), `missing_some` (its list of them) and `val` (a name, or a
/// list of names: `["actor", "tags"]`).
pub(super) fn facts_read<'r>(rule: &'r serde_json::Value, read: &mut Vec<FactPath<'r>>) {
    use serde_json::Value;
    let dotted = |path: &'r str| path.split('.').collect();
    // A list of paths, or what makes one.
    let paths = |paths: &'r Value, read: &mut Vec<FactPath<'r>>| match paths {
        Value::String(path) => read.push(dotted(path)),
        Value::Array(items) => items.iter().for_each(|item| match item {
            Value::String(path) => read.push(dotted(path)),
            other => facts_read(other, read),
        }),
        other => facts_read(other, read),
    };
    match rule {
        Value::Object(map) => {
            for (operator, arguments) in map {
                let over_elements = OVER_ELEMENTS.contains(&operator.as_str());
                match (operator.as_str(), arguments) {
                    ("var", Value::String(path)) => read.push(dotted(path)),
                    ("var", Value::Array(arguments)) => {
                        if let Some(Value::String(path)) = arguments.first() {
                            read.push(dotted(path));
                        }
                        arguments.iter().skip(1).for_each(|a| facts_read(a, read));
                    }
                    ("val", Value::String(name)) => read.push(vec![name.as_str()]),
                    // Names alone read the facts; a scope level first (`[[1], "x"]`) or
                    // an index reads what is being iterated.
                    ("val", Value::Array(names)) => {
                        let names: Option<FactPath<'r>> = names.iter().map(Value::as_str).collect();
                        read.extend(names.filter(|names| !names.is_empty()));
                    }
                    ("missing", arguments) => paths(arguments, read),
                    ("missing_some", Value::Array(arguments)) => {
                        arguments.iter().skip(1).for_each(|a| paths(a, read));
                    }
                    (_, Value::Array(arguments)) if over_elements => {
                        arguments.iter().take(1).for_each(|a| facts_read(a, read));
                    }
                    _ => facts_read(arguments, read),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| facts_read(item, read)),
        _ => {}
    }
}

/// Why conditions of a method of `task` are not given the fact at `path`, if they are
/// not: `actor` and each entity parameter as [`ENTITY_FACTS`], `task.state` as
/// [`STATE_FACTS`], `task.params` by the task's parameters, `world` as the game
/// keeps it.
pub(super) fn unknown_fact(names: &[&str], task: &TaskDefinition) -> Option<String> {
    let path = names.join(".");
    // Only `val` gives a name with a dot in it, which it reads as one name.
    if let Some(dotted) = names.iter().find(|name| name.contains('.')) {
        let apart: Vec<String> = dotted
            .split('.')
            .map(|name| format!("\"{name}\""))
            .collect();
        return Some(format!(
            "`{dotted}` is no fact: `val` reads it as one name; give the names apart, `{{\"val\": [{}]}}`, or use `{{\"var\": \"{dotted}\"}}`",
            apart.join(", ")
        ));
    }
    let mut parts = names.iter().copied();
    let entity_fact = |fact: Option<&str>, what: &str, here: bool| {
        let fact = fact?;
        let known = ENTITY_FACTS.contains(&fact) || (here && fact == "here");
        let here = if here { ", here" } else { "" };
        (!known).then(|| {
            format!(
                "`{path}` is no fact: {what} has {}{here}",
                ENTITY_FACTS.join(", ")
            )
        })
    };
    match parts.next() {
        None | Some("") | Some("world") => None,
        Some("actor") => entity_fact(parts.next(), "the actor", false),
        Some("task") => match parts.next() {
            None => None,
            Some("params") => {
                let name = parts.next()?;
                let Some(parameter) = task.parameters.iter().find(|p| p.name == name) else {
                    let names: Vec<&str> = task.parameters.iter().map(|p| &*p.name).collect();
                    return Some(format!(
                        "`{path}` is no fact: task `{}` has no parameter `{name}`; its parameters are {}",
                        task.id,
                        list_or_none(&names)
                    ));
                };
                let what = format!("its `{name}`");
                parameter
                    .entity
                    .as_ref()
                    .and_then(|_| entity_fact(parts.next(), &what, true))
            }
            Some("state") => {
                let fact = parts.next()?;
                (!STATE_FACTS.contains(&fact)).then(|| {
                    format!(
                        "`{path}` is no fact: a plan's state has {}",
                        STATE_FACTS.join(", ")
                    )
                })
            }
            Some(_) => Some(format!(
                "`{path}` is no fact: `task` has `params` and `state`"
            )),
        },
        Some(_) => Some(format!(
            "`{path}` is no fact: conditions read `actor`, `task` and `world`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::fixtures::task;

    fn read(rule: serde_json::Value) -> Vec<String> {
        let mut read = Vec::new();
        facts_read(&rule, &mut read);
        read.iter().map(|path| path.join(".")).collect()
    }

    #[test]
    fn each_operator_that_reads_the_facts_gives_its_paths() {
        let rule = json!({ "and": [
            { "var": "actor.tags" },
            { "var": ["task.params.drink", { "var": "world.default" }] },
            { "val": ["actor", "place"] },
            { "val": "world" },
            { "missing": ["task.params.drink", "actor.carries"] },
            { "missing_some": [1, ["task.state.actionsDone"]] },
            { "some": [{ "var": "actor.carriedTags" }, { "==": [{ "var": "" }, "ale"] }] }
        ] });
        assert_eq!(
            read(rule),
            [
                "actor.tags",
                "task.params.drink",
                "world.default",
                "actor.place",
                "world",
                "task.params.drink",
                "actor.carries",
                "task.state.actionsDone",
                "actor.carriedTags",
            ],
            "the element a `some` reads is not a fact"
        );
        assert!(
            read(json!({ "val": [[1], "x"] })).is_empty(),
            "a scope level"
        );
        assert!(read(json!(true)).is_empty());
    }

    #[test]
    fn a_path_is_a_fact_or_says_what_there_is() {
        let task = task("tavern:serve", json!({}));
        let why = |path: &str| unknown_fact(&path.split('.').collect::<Vec<_>>(), &task);
        for known in [
            "actor.tags",
            "task.params.drink.here",
            "task.params.rounds",
            "task.state.triedMethods",
            "world.anything.at.all",
            "",
        ] {
            assert_eq!(why(known), None, "{known}");
        }
        let said = |path: &str| why(path).unwrap_or_else(|| panic!("`{path}` is a fact"));
        assert!(
            said("actor.here").contains("name, tags, place"),
            "the actor has no `here`"
        );
        assert!(said("task.params.drnk").contains("its parameters are customer, drink, rounds"));
        assert!(said("task.state.tries").contains("actionsDone, triedMethods"));
        assert!(said("task.plan").contains("`params` and `state`"));
        assert!(said("me").contains("`actor`, `task` and `world`"));
        let dotted = unknown_fact(&["actor.tags"], &task).expect("one name with a dot");
        assert!(dotted.contains(r#"{"val": ["actor", "tags"]}"#), "{dotted}");
    }
}
