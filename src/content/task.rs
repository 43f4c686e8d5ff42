//! Planning tasks: something an actor may pursue over several steps ("serve {customer}
//! a drink"), with typed parameters and the refinement methods that carry it out.

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

use super::{ActionDefinition, ActionParameter, ActionTargets, TagRule, TargetSlot};

/// The most entity parameters a task may have: offered like an action, each fills one of
/// an action's three target slots.
pub const MAX_ENTITY_PARAMETERS: usize = 3;

/// A planning task (`mods/<mod>/tasks/<name>.task.json`): what a model may choose to
/// pursue, refined by one of its [`RefinementMethod`](super::RefinementMethod)s into
/// primitive actions that the game carries out step by step.
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskDefinition {
    /// `mod:task`; the namespace is the id of the mod that owns the file.
    pub id: String,
    /// A short human-readable name.
    pub name: String,
    /// One line shown to the model after the command.
    pub description: String,
    /// The command text with a `{name}` for each parameter: `serve {customer} a drink`.
    pub template: String,
    /// The parameters, in order: entities found by a scope (like an action's targets),
    /// or values with a type and a default.
    #[serde(default)]
    pub parameters: Vec<TaskParameter>,
    /// Tags the actor must have, and must not have, to be offered this task.
    #[serde(default)]
    pub actor: TagRule,
    /// Its refinement methods' ids, most preferred first. A loaded method for this task
    /// that is not listed is tried after these, in id order.
    #[serde(default)]
    pub methods: Vec<String>,
    /// What happens when a step fails, for its methods that do not say.
    #[serde(default)]
    pub fallback_behavior: FallbackBehavior,
}

impl TaskDefinition {
    /// The parameter with this name.
    pub fn parameter(&self, name: &str) -> Option<&TaskParameter> {
        self.parameters.iter().find(|p| p.name == name)
    }

    /// Its entity parameters, in order: the target slots of
    /// [`as_action`](Self::as_action), each with how its entity is found.
    pub fn entity_parameters(&self) -> impl Iterator<Item = (&TaskParameter, &EntityParameter)> {
        (self.parameters.iter())
            .filter_map(|parameter| parameter.entity.as_ref().map(|entity| (parameter, entity)))
    }

    /// The task as an action definition, to be offered the way actions are: its entity
    /// parameters fill the target slots in order (placeholders named as the
    /// parameters), its value parameters are parameters with their defaults. Entity
    /// parameters past [`MAX_ENTITY_PARAMETERS`] are left out (a loaded task has none).
    pub fn as_action(&self) -> ActionDefinition {
        let mut slots = self
            .entity_parameters()
            .map(|(parameter, entity)| TargetSlot {
                scope: entity.scope.clone(),
                placeholder: parameter.name.clone(),
                description: parameter.description.clone(),
                required_tags: entity.required_tags.clone(),
                forbidden_tags: entity.forbidden_tags.clone(),
            });
        let targets = ActionTargets {
            primary: slots.next(),
            secondary: slots.next(),
            tertiary: slots.next(),
        };
        let parameters = (self.parameters.iter())
            .filter_map(|parameter| {
                let value = parameter.value.as_ref()?;
                let action = ActionParameter {
                    default: value.default.clone(),
                    description: parameter.description.clone(),
                };
                Some((parameter.name.clone(), action))
            })
            .collect();
        ActionDefinition {
            id: self.id.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            template: self.template.clone(),
            targets,
            actor: self.actor.clone(),
            parameters,
            verb: None,
        }
    }

    /// Its parameters' names, in order, for messages.
    pub fn parameter_names(&self) -> String {
        let names: Vec<&str> = self.parameters.iter().map(|p| p.name.as_str()).collect();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    }
}

/// One parameter of a task: exactly one of `entity` and `value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskParameter {
    /// Letters, digits and `_`; a binding names it as `task.params.<name>`.
    pub name: String,
    /// What the parameter is, for authors and prompts.
    #[serde(default)]
    pub description: String,
    /// An entity, found like an action's target.
    #[serde(default)]
    pub entity: Option<EntityParameter>,
    /// A value with a type and a default.
    #[serde(default)]
    pub value: Option<ValueParameter>,
}

/// Where an entity parameter's candidates come from and which of them qualify.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntityParameter {
    /// The name of a target scope (`characters_here`, `things_here`, `inventory`,
    /// `exits`, or one a game registered).
    pub scope: String,
    /// Tags a candidate must have.
    #[serde(default)]
    pub required_tags: Vec<String>,
    /// Tags a candidate must not have.
    #[serde(default)]
    pub forbidden_tags: Vec<String>,
}

impl EntityParameter {
    /// Whether an entity with these tags qualifies.
    pub fn accepts<'a>(&self, has_tag: impl Fn(&str) -> bool + 'a) -> bool {
        super::action::tags_pass(&self.required_tags, &self.forbidden_tags, has_tag)
    }
}

/// A value parameter: its type, and the value it has when nothing binds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ValueParameter {
    /// What values it takes.
    #[serde(rename = "type")]
    pub kind: ValueType,
    /// Its value when nothing binds it; of its type.
    pub default: serde_json::Value,
}

/// The type of a value: of a task's value parameter, or of an action's parameter (the
/// type of its default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    /// Text.
    String,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// `true` or `false`.
    Boolean,
}

impl ValueType {
    /// The type of a value, if it is a string, a number or a boolean; a whole number is
    /// an integer.
    pub fn of(value: &serde_json::Value) -> Option<Self> {
        match value {
            serde_json::Value::String(_) => Some(Self::String),
            serde_json::Value::Bool(_) => Some(Self::Boolean),
            serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => Some(Self::Integer),
            serde_json::Value::Number(_) => Some(Self::Number),
            _ => None,
        }
    }

    /// Whether `value` is of this type; an integer is also a number.
    pub fn admits(self, value: &serde_json::Value) -> bool {
        match (self, Self::of(value)) {
            (Self::Number, Some(Self::Integer | Self::Number)) => true,
            (expected, Some(found)) => expected == found,
            (_, None) => false,
        }
    }

    /// The type's name with its article, for messages: "an integer".
    pub fn a(self) -> &'static str {
        match self {
            Self::String => "a string",
            Self::Integer => "an integer",
            Self::Number => "a number",
            Self::Boolean => "a boolean",
        }
    }

    /// The type's name in content files.
    pub fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }
}

/// What a method does when one of its steps fails (the game reports the action failed,
/// or its targets are gone).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FallbackBehavior {
    /// Stop: the task fails. The plan's own task fails the plan, and whoever chose it
    /// hears why; a task step's task fails that step, which the method that ran it
    /// decides on.
    #[default]
    Fail,
    /// Go on with the next step: the failed one was optional.
    Continue,
    /// Try the task's next applicable method; when none is left, the task fails.
    Replan,
}
