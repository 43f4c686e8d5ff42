//! Refinement methods: one way of carrying out a task, as steps: primitive actions with
//! their targets bound to the task's parameters, conditional steps decided by the world
//! when they are reached, and other tasks.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

use super::FallbackBehavior;

/// One way of carrying out a task (`mods/<mod>/methods/<name>.method.json`).
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefinementMethod {
    /// `mod:method`; the namespace is the id of the mod that owns the file.
    pub refinement_method_id: String,
    /// The task it carries out (`mod:task`).
    pub task_id: String,
    /// When the method may be chosen, in JSON Logic over `actor` (`id`, `name`, `tags`,
    /// `place`, `carries`, `carriedIds`, `carriedTags`, `carriedBy`), `world` (the
    /// game's facts), `task.params` (each entity parameter as the actor is, and whether
    /// it is `here`) and `task.state` (the task's own `actionsDone` and `triedMethods`:
    /// a task step's task begins with none); always, when absent. Reading any other
    /// fact is a content error.
    #[serde(default)]
    pub applicability: Option<Condition>,
    /// What happens when one of its steps fails; the task's `fallbackBehavior` when absent.
    #[serde(default)]
    pub fallback_behavior: Option<FallbackBehavior>,
    /// What it does, in order.
    pub steps: Vec<RefinementStep>,
}

/// One step of a refinement method, by its `stepType`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "stepType", rename_all = "snake_case")]
pub enum RefinementStep {
    /// An action the game carries out.
    PrimitiveAction(PrimitiveActionStep),
    /// Steps chosen by a condition when the step is reached.
    Conditional(ConditionalStep),
    /// Another task, carried out by one of its own methods.
    Task(TaskStep),
}

impl RefinementMethod {
    /// Each of its steps, depth first through conditional steps (a step before the
    /// steps of its branches, `thenSteps` before `elseSteps`), with its JSON pointer.
    pub fn each_step(&self) -> Vec<(String, &RefinementStep)> {
        fn visit<'a>(
            steps: &'a [RefinementStep],
            pointer: &str,
            out: &mut Vec<(String, &'a RefinementStep)>,
        ) {
            for (index, step) in steps.iter().enumerate() {
                let at = format!("{pointer}/{index}");
                if let RefinementStep::Conditional(conditional) = step {
                    out.push((at.clone(), step));
                    visit(&conditional.then_steps, &format!("{at}/thenSteps"), out);
                    visit(&conditional.else_steps, &format!("{at}/elseSteps"), out);
                } else {
                    out.push((at, step));
                }
            }
        }
        let mut out = Vec::new();
        visit(&self.steps, "/steps", &mut out);
        out
    }
}

impl RefinementStep {
    /// The `stepType` as content files spell it.
    pub fn step_type(&self) -> &'static str {
        match self {
            Self::PrimitiveAction(_) => "primitive_action",
            Self::Conditional(_) => "conditional",
            Self::Task(_) => "task",
        }
    }
}

impl<'de> Deserialize<'de> for RefinementStep {
    /// Read by its `stepType`, with a problem inside a step pointing at its field (serde's
    /// own tagged enums lose the path below the step).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut fields = serde_json::Value::deserialize(deserializer)?;
        let Some(object) = fields.as_object_mut() else {
            return Err(D::Error::custom(
                "a step is an object with a `stepType`: `primitive_action`, `conditional` or `task`",
            ));
        };
        let step_type = match object.remove("stepType") {
            Some(serde_json::Value::String(step_type)) => step_type,
            _ => {
                return Err(D::Error::custom(
                    "a step needs a `stepType`: `primitive_action`, `conditional` or `task`",
                ));
            }
        };
        match step_type.as_str() {
            "primitive_action" => step_fields(fields).map(Self::PrimitiveAction),
            "conditional" => step_fields(fields).map(Self::Conditional),
            "task" => step_fields(fields).map(Self::Task),
            other => Err(D::Error::custom(format!(
                "unknown stepType `{other}`: use `primitive_action`, `conditional` or `task`"
            ))),
        }
    }
}

/// A step's fields read as `T`; an error carries the field's pointer inside the step
/// ([`nested_error`]).
fn step_fields<T: serde::de::DeserializeOwned, E: serde::de::Error>(
    fields: serde_json::Value,
) -> Result<T, E> {
    serde_path_to_error::deserialize(fields).map_err(|error| {
        let pointer = super::loader::json_pointer(error.path());
        E::custom(nested_error(&pointer, &error.inner().to_string()))
    })
}

/// Marks an error found `pointer` below where serde reports it: the loader moves the
/// pointer into the error's field.
const NESTED: char = '\u{1}';

/// An error `detail` at `pointer` below the value being read, which may itself be nested.
pub(super) fn nested_error(pointer: &str, detail: &str) -> String {
    match split_nested(detail) {
        Some((inner, detail)) => format!("{NESTED}{pointer}{inner}{NESTED}{detail}"),
        None => format!("{NESTED}{pointer}{NESTED}{detail}"),
    }
}

/// The pointer below and the detail of an error made by [`nested_error`].
pub(super) fn split_nested(detail: &str) -> Option<(&str, &str)> {
    detail.strip_prefix(NESTED)?.split_once(NESTED)
}

/// A step that asks the game to carry out an action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PrimitiveActionStep {
    /// The action, as `mod:action`; shared with each request a plan makes of it.
    pub action_id: std::sync::Arc<str>,
    /// Each of the action's target placeholders (its own names, such as `item`), bound
    /// to a task parameter: `"task.params.customer"`.
    #[serde(default)]
    pub target_bindings: BTreeMap<String, Binding>,
    /// Values that replace the action's parameter defaults; the rest keep theirs.
    #[serde(default)]
    pub parameters: BTreeMap<String, serde_json::Value>,
}

/// A step whose steps are chosen when it is reached, by the world as it is then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConditionalStep {
    /// JSON Logic over `actor`, `world`, `task.params` and `task.state`.
    pub condition: Condition,
    /// The steps taken when the condition holds.
    pub then_steps: Vec<RefinementStep>,
    /// The steps taken when it does not; none when absent.
    #[serde(default)]
    pub else_steps: Vec<RefinementStep>,
    /// What happens when the condition cannot be decided or one of the chosen steps
    /// fails; when absent, what an enclosing conditional says, or else the method's
    /// `fallbackBehavior`, as for a step outside any conditional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<ConditionalFailure>,
}

/// What a conditional step does when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConditionalFailure {
    /// The task fails: the plan, when it is the plan's own task; a task step's task
    /// fails that step, which the method that ran it decides on.
    Fail,
    /// The rest of the conditional is skipped; the method goes on after it.
    Skip,
    /// The task's next applicable method is tried; when none is left, the task fails.
    Replan,
}

/// A step that carries out another task, with its parameters bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskStep {
    /// The task, as `mod:task`.
    pub task_id: String,
    /// Its parameters bound to this task's: `{"customer": "task.params.guest"}`.
    #[serde(default)]
    pub parameter_bindings: BTreeMap<String, Binding>,
    /// Values for its value parameters; the rest keep their defaults.
    #[serde(default)]
    pub parameters: BTreeMap<String, serde_json::Value>,
}

/// A reference to a task parameter: `"task.params.item"`. A plain string, never JSON
/// Logic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "serde_json::Value", into = "String")]
pub struct Binding(String);

/// The prefix every binding starts with.
pub const BINDING_PREFIX: &str = "task.params.";

impl Binding {
    /// The binding as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The task parameter it names, when it is written as `task.params.<name>`.
    pub fn parameter(&self) -> Option<&str> {
        self.0
            .strip_prefix(BINDING_PREFIX)
            .filter(|name| is_identifier(name))
    }
}

impl TryFrom<serde_json::Value> for Binding {
    type Error = String;

    fn try_from(value: serde_json::Value) -> Result<Self, Self::Error> {
        match value {
            serde_json::Value::String(text) => Ok(Self(text)),
            serde_json::Value::Object(_) => Err(
                "a binding is a plain string naming a task parameter, not JSON Logic: write \"task.params.<name>\" instead of {\"var\": …}"
                    .to_owned(),
            ),
            other => Err(format!(
                "a binding is a string naming a task parameter, such as \"task.params.item\", not {other}"
            )),
        }
    }
}

impl From<Binding> for String {
    fn from(binding: Binding) -> Self {
        binding.0
    }
}

impl From<&str> for Binding {
    fn from(text: &str) -> Self {
        Self(text.to_owned())
    }
}

/// Whether `name` is letters, digits and `_`, not starting with a digit.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A JSON Logic condition, compiled once when its file loads: a rule that is not valid
/// JSON Logic (an unknown operator, say) fails the file with the field named.
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "serde_json::Value", into = "serde_json::Value")]
pub struct Condition {
    source: serde_json::Value,
    compiled: Arc<datalogic_rs::Logic>,
}

/// The engine every condition is compiled and evaluated with.
static JSON_LOGIC: LazyLock<datalogic_rs::Engine> = LazyLock::new(datalogic_rs::Engine::new);

impl Condition {
    /// The rule as written.
    pub fn source(&self) -> &serde_json::Value {
        &self.source
    }

    /// Whether the condition holds for `data` (an object with `actor`, `world` and
    /// `task`), by JSON Logic's truthiness; an error says why it cannot be decided. To
    /// decide several conditions on the same data, read it once with
    /// [`ConditionArena::facts`] and use [`holds_for`](Self::holds_for).
    pub fn holds(&self, data: &serde_json::Value) -> Result<bool, String> {
        self.holds_for(&ConditionArena::default().facts(data))
    }

    /// Whether the condition holds for `facts`, as [`holds`](Self::holds) says.
    pub fn holds_for(&self, facts: &ConditionFacts<'_>) -> Result<bool, String> {
        let engine = &*JSON_LOGIC;
        let result = engine
            .evaluate(&self.compiled, facts.data, facts.arena)
            .map_err(|error| error.to_string())?;
        Ok(engine.truthy(result))
    }
}

/// Where data read for conditions ([`ConditionFacts`]) and their evaluation live.
#[derive(Default)]
pub struct ConditionArena(datalogic_rs::bumpalo::Bump);

impl ConditionArena {
    /// `data` read once for any number of [`Condition::holds_for`].
    pub fn facts<'a>(&'a self, data: &serde_json::Value) -> ConditionFacts<'a> {
        let arena = &self.0;
        let value = datalogic_rs::DataValue::from_serde_value_in(data, arena);
        ConditionFacts {
            arena,
            data: arena.alloc(value),
        }
    }
}

/// Data conditions are decided on, read into a [`ConditionArena`].
pub struct ConditionFacts<'a> {
    arena: &'a datalogic_rs::bumpalo::Bump,
    data: &'a datalogic_rs::DataValue<'a>,
}

impl TryFrom<serde_json::Value> for Condition {
    type Error = String;

    fn try_from(source: serde_json::Value) -> Result<Self, Self::Error> {
        if let Some(unknown) = unknown_operator(&source) {
            return Err(format!(
                "`{unknown}` is not a JSON Logic operator: see jsonlogic.com for the operators (`var`, `==`, `and`, `in`, `some`, …)"
            ));
        }
        let compiled = JSON_LOGIC.compile(&source).map_err(|error| {
            format!("not valid JSON Logic ({error}): see jsonlogic.com for its operators")
        })?;
        Ok(Self {
            source,
            compiled: Arc::new(compiled),
        })
    }
}

/// The first operator in a rule that the engine does not know: it compiles such a rule
/// as a call it can only fail at evaluation.
fn unknown_operator(rule: &serde_json::Value) -> Option<&str> {
    match rule {
        serde_json::Value::Object(map) if map.len() == 1 => {
            let (operator, arguments) = map.iter().next()?;
            let known = JSON_LOGIC
                .builtin_operator_names()
                .any(|name| name == operator);
            if known {
                unknown_operator(arguments)
            } else {
                Some(operator)
            }
        }
        serde_json::Value::Array(items) => items.iter().find_map(unknown_operator),
        _ => None,
    }
}

impl From<Condition> for serde_json::Value {
    fn from(condition: Condition) -> Self {
        condition.source
    }
}

impl PartialEq for Condition {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl std::fmt::Debug for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Condition({})", self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_condition_is_decided_by_the_data() {
        let condition = Condition::try_from(json!({"in": ["drink", {"var": "actor.carriedTags"}]}))
            .expect("valid JSON Logic");
        let carrying = json!({"actor": {"carriedTags": ["drink", "portable"]}});
        let empty_handed = json!({"actor": {"carriedTags": []}});
        assert_eq!(condition.holds(&carrying), Ok(true));
        assert_eq!(condition.holds(&empty_handed), Ok(false));
    }

    #[test]
    fn an_unknown_operator_is_not_json_logic() {
        let error = Condition::try_from(json!({"carries": ["mug"]})).expect_err("unknown operator");
        assert!(
            error.contains("`carries` is not a JSON Logic operator"),
            "{error}"
        );
    }

    #[test]
    fn a_binding_object_is_refused_as_json_logic() {
        let error = Binding::try_from(json!({"var": "task.params.item"})).expect_err("an object");
        assert!(error.contains("not JSON Logic"), "{error}");
        let binding = Binding::try_from(json!("task.params.item")).expect("a string");
        assert_eq!(binding.parameter(), Some("item"));
        assert_eq!(Binding::from("params.item").parameter(), None);
        assert_eq!(Binding::from("task.params.").parameter(), None);
    }
}
