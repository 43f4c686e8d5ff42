//! Binding: a task's parameters to the values a plan is given, a step's targets to
//! the task's entities (each still there), a sub-task's parameters to the task's, and
//! what conditions read of the world and the task now.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use bevy::prelude::Entity;
use serde_json::{Map, Value};

use super::refine::StepPath;
use crate::content::{ContentRegistry, STATE_FACTS, TaskDefinition};
use crate::world::ParamValue;

/// What a condition reads about the world as it is now.
pub trait PlanFacts {
    /// The actor carrying out the plan: `{"id", "name", "tags", "place", "carries",
    /// "carriedIds", "carriedTags", "carriedBy"}` ([`describe`](super::describe)), or
    /// whatever the game describes it with.
    fn actor(&self) -> Value;
    /// What the game says of the world (`world` in conditions).
    fn world(&self) -> Value;
    /// An entity a parameter names, described like the actor; `None` when it is gone.
    fn entity(&self, entity: Entity) -> Option<Value>;

    /// Whether an entity a parameter names is still there; checked before each action
    /// that targets it.
    fn exists(&self, entity: Entity) -> bool {
        self.entity(entity).is_some()
    }
}

/// A task with a value for each of its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundTask {
    /// The task's `mod:task` id.
    pub task_id: String,
    /// Each parameter's value, in the task's order.
    pub params: Vec<(String, ParamValue)>,
}

impl BoundTask {
    /// `task` with the values `given`, and each value parameter not given at its default;
    /// an entity parameter not given, a parameter given twice or that the task does
    /// not have, or a value of the wrong kind or type is an error that names it and
    /// what it takes.
    pub fn new(
        task: &TaskDefinition,
        given: impl IntoIterator<Item = (String, ParamValue)>,
    ) -> Result<Self, String> {
        let mut by_name: BTreeMap<String, ParamValue> = BTreeMap::new();
        for (name, value) in given {
            match by_name.entry(name) {
                Entry::Vacant(vacant) => _ = vacant.insert(value),
                Entry::Occupied(taken) => {
                    let name = taken.key();
                    return Err(format!(
                        "parameter `{name}` of `{}` is given twice: give it once",
                        task.id
                    ));
                }
            }
        }
        let mut params = Vec::with_capacity(task.parameters.len());
        for parameter in &task.parameters {
            let value = match (by_name.remove(&parameter.name), &parameter.value) {
                (Some(ParamValue::Entity(entity)), None) => ParamValue::Entity(entity),
                (Some(ParamValue::Value(value)), Some(kind)) if kind.kind.admits(&value) => {
                    ParamValue::Value(value)
                }
                (None, Some(kind)) => ParamValue::Value(kind.default.clone()),
                (None, None) => {
                    return Err(format!(
                        "`{}` needs an entity for its parameter `{}`",
                        task.id, parameter.name
                    ));
                }
                (Some(wrong), kind) => {
                    let takes = kind.as_ref().map_or("an entity", |kind| kind.kind.a());
                    let given = match wrong {
                        ParamValue::Entity(_) => "an entity".to_owned(),
                        ParamValue::Value(value) => value.to_string(),
                    };
                    return Err(format!(
                        "parameter `{}` of `{}` takes {takes}, not {given}",
                        parameter.name, task.id
                    ));
                }
            };
            params.push((parameter.name.clone(), value));
        }
        if let Some(name) = by_name.keys().next() {
            return Err(format!(
                "`{}` has no parameter `{name}`: its parameters are {}",
                task.id,
                task.parameter_names()
            ));
        }
        Ok(Self {
            task_id: task.id.clone(),
            params,
        })
    }

    /// The value of the parameter `name`.
    pub fn param(&self, name: &str) -> Option<&ParamValue> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// One action a plan asks the game to carry out.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedAction {
    /// The action's `mod:action` id.
    pub action_id: std::sync::Arc<str>,
    /// The targets in the action's slot order (primary, secondary, tertiary), each the
    /// entity its placeholder is bound to.
    pub targets: crate::world::ActionTargets,
    /// Every parameter of the action: its default, or the step's override.
    pub parameters: BTreeMap<String, Value>,
    /// Where its step is in the method; shown as a JSON pointer (`/steps/0/thenSteps/0`).
    pub step: StepPath,
}

/// What conditions read: `actor`, `world`, and `task` with its `params` (an entity as
/// [`PlanFacts::entity`] describes it, `null` when gone) and `state`.
pub(super) fn condition_data(
    task: &BoundTask,
    tried: &[String],
    done: usize,
    facts: &impl PlanFacts,
) -> Value {
    let params: Map<String, Value> = (task.params.iter())
        .map(|(name, value)| {
            let value = match value {
                ParamValue::Entity(entity) => facts.entity(*entity).unwrap_or(Value::Null),
                ParamValue::Value(value) => value.clone(),
            };
            (name.clone(), value)
        })
        .collect();
    // Built as maps, not with `json!`, which would copy each value it is given.
    let tried = tried.iter().cloned().map(Value::String).collect();
    let [actions_done, tried_methods] = STATE_FACTS.map(str::to_owned);
    let state = Map::from_iter([
        (actions_done, Value::from(done)),
        (tried_methods, Value::Array(tried)),
    ]);
    let task = Map::from_iter([
        ("params".to_owned(), Value::Object(params)),
        ("state".to_owned(), Value::Object(state)),
    ]);
    Value::Object(Map::from_iter([
        ("actor".to_owned(), facts.actor()),
        ("world".to_owned(), facts.world()),
        ("task".to_owned(), Value::Object(task)),
    ]))
}

/// The action of a step with its targets bound to the task's entities (each still
/// there) and its parameters: the action's defaults with the step's overrides.
pub(super) fn bind_action(
    step: &crate::content::PrimitiveActionStep,
    task: &BoundTask,
    registry: &ContentRegistry,
    facts: &impl PlanFacts,
) -> Result<PlannedAction, String> {
    let Some(action) = registry.action(&step.action_id) else {
        return Err(format!("action `{}` is no longer loaded", step.action_id));
    };
    let mut targets = crate::world::ActionTargets::new();
    for (_, slot) in action.target_slots() {
        let binding = step.target_bindings.get(&slot.placeholder);
        let name = binding.and_then(|b| b.parameter()).unwrap_or_default();
        let Some(ParamValue::Entity(entity)) = task.param(name) else {
            return Err(format!(
                "`{}` has no entity bound to `{}`",
                step.action_id, slot.placeholder
            ));
        };
        if !facts.exists(*entity) {
            return Err(format!("`{name}` is gone"));
        }
        targets.push(*entity);
    }
    let mut parameters: BTreeMap<String, Value> = (action.parameters.iter())
        .map(|(name, parameter)| (name.clone(), parameter.default.clone()))
        .collect();
    parameters.extend(step.parameters.iter().map(|(n, v)| (n.clone(), v.clone())));
    Ok(PlannedAction {
        action_id: step.action_id.clone(),
        targets,
        parameters,
        step: StepPath::default(),
    })
}

/// The task a task step runs, with its parameters bound to this task's values and its
/// literal values.
pub(super) fn bind_task(
    step: &crate::content::TaskStep,
    task: &BoundTask,
    registry: &ContentRegistry,
) -> Result<BoundTask, String> {
    let Some(sub) = registry.task(&step.task_id) else {
        return Err(format!("task `{}` is not loaded", step.task_id));
    };
    let bound = step
        .parameter_bindings
        .iter()
        .filter_map(|(name, binding)| {
            let value = task.param(binding.parameter()?)?;
            Some((name.clone(), value.clone()))
        });
    let values =
        (step.parameters.iter()).map(|(name, v)| (name.clone(), ParamValue::Value(v.clone())));
    BoundTask::new(sub, bound.chain(values))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entity(n: u32) -> Entity {
        Entity::from_raw_u32(n).expect("a valid index")
    }

    fn parse<T: serde::de::DeserializeOwned>(value: Value) -> T {
        serde_json::from_value(value).expect("test content parses")
    }

    #[test]
    fn a_task_is_bound_with_defaults_and_checked() {
        let task: TaskDefinition = parse(json!({
            "id": "tavern:rent", "name": "Rent", "description": "d", "template": "rent a room to {guest}",
            "parameters": [
                { "name": "guest", "entity": { "scope": "characters_here" } },
                { "name": "nights", "value": { "type": "integer", "default": 1 } }
            ]
        }));
        let bound = BoundTask::new(&task, [("guest".to_owned(), ParamValue::Entity(entity(1)))])
            .expect("bound");
        assert_eq!(bound.param("nights"), Some(&ParamValue::Value(json!(1))));
        let missing = BoundTask::new(&task, []).expect_err("the guest is needed");
        assert!(missing.contains("needs an entity for its parameter `guest`"));
        let wrong = [
            ("guest".to_owned(), ParamValue::Entity(entity(1))),
            ("nights".to_owned(), ParamValue::Value(json!("two"))),
        ];
        assert_eq!(
            BoundTask::new(&task, wrong).expect_err("a word for a number"),
            "parameter `nights` of `tavern:rent` takes an integer, not \"two\""
        );
        let swapped = [
            ("guest".to_owned(), ParamValue::Value(json!("Ann"))),
            ("nights".to_owned(), ParamValue::Entity(entity(2))),
        ];
        assert_eq!(
            BoundTask::new(&task, swapped).expect_err("a name for an entity"),
            "parameter `guest` of `tavern:rent` takes an entity, not \"Ann\""
        );
        let unknown = [
            ("guest".to_owned(), ParamValue::Entity(entity(1))),
            ("meals".to_owned(), ParamValue::Value(json!(2))),
        ];
        assert!(
            BoundTask::new(&task, unknown)
                .expect_err("unknown")
                .contains("has no parameter `meals`")
        );
        let twice = [
            ("guest".to_owned(), ParamValue::Entity(entity(1))),
            ("guest".to_owned(), ParamValue::Entity(entity(2))),
        ];
        assert_eq!(
            BoundTask::new(&task, twice).expect_err("which guest?"),
            "parameter `guest` of `tavern:rent` is given twice: give it once"
        );
    }
}
