//! Action definitions: what an actor can do, with target slots and a command template.

use std::collections::BTreeMap;

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

/// One action an actor may take (`mods/<mod>/actions/<name>.action.json`).
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionDefinition {
    /// `mod:action`; the namespace is the id of the mod that owns the file.
    pub id: String,
    /// A short human-readable name.
    pub name: String,
    /// One line shown to the model after the command.
    pub description: String,
    /// The command text with `{placeholder}`s for targets and parameters: `give {item} to {recipient}`.
    pub template: String,
    /// Who or what the action is done to.
    #[serde(default)]
    pub targets: ActionTargets,
    /// Tags the actor must have, and must not have, to be offered this action.
    #[serde(default)]
    pub actor: TagRule,
    /// Named values the template may use, each with a default.
    #[serde(default)]
    pub parameters: BTreeMap<String, ActionParameter>,
    /// The canonical verb narration reports this action with (`take` for
    /// `items:pick_up`); one of the narrative vocabulary's verbs.
    #[serde(default)]
    pub verb: Option<String>,
}

impl ActionDefinition {
    /// The mod namespace of the id (`items` in `items:give`).
    pub fn namespace(&self) -> &str {
        action_namespace(&self.id)
    }

    /// The filled target slots in order: primary, secondary, tertiary.
    pub fn target_slots(&self) -> impl Iterator<Item = (TargetRole, &TargetSlot)> {
        [
            (TargetRole::Primary, self.targets.primary.as_ref()),
            (TargetRole::Secondary, self.targets.secondary.as_ref()),
            (TargetRole::Tertiary, self.targets.tertiary.as_ref()),
        ]
        .into_iter()
        .filter_map(|(role, slot)| slot.map(|slot| (role, slot)))
    }

    /// What the action is to an actor that must not be stuck, if anything: with no
    /// target it is a way to wait, with a target among the exits a way to leave.
    pub fn lifeline(&self) -> Option<Lifeline> {
        let mut slots = self.target_slots().peekable();
        if slots.peek().is_none() {
            return Some(Lifeline::Wait);
        }
        slots
            .any(|(_, slot)| slot.scope == "exits")
            .then_some(Lifeline::Leave)
    }
}

/// An action that keeps an actor from being stuck, whatever else trimming an offer to
/// its budget leaves out ([`ActionDefinition::lifeline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifeline {
    /// A way to wait: an action with no target (`wait`, `look around`), which the
    /// actor can always take.
    Wait,
    /// A way to leave: an action with a target in the `exits` scope (`go to the
    /// cellar`).
    Leave,
}

/// The namespace part of a `mod:name` id; the whole id when it has no `:`.
pub fn action_namespace(id: &str) -> &str {
    // A byte search: ids are short, and a `char` pattern's searcher costs more than it.
    let colon = id.bytes().position(|byte| byte == b':');
    colon.map_or(id, |colon| &id[..colon])
}

/// The three target slots an action may have.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionTargets {
    /// The main target: the person greeted, the item picked up.
    #[serde(default)]
    pub primary: Option<TargetSlot>,
    /// A second target: the recipient of a gift.
    #[serde(default)]
    pub secondary: Option<TargetSlot>,
    /// A third target: the instrument.
    #[serde(default)]
    pub tertiary: Option<TargetSlot>,
}

/// Which slot a target fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TargetRole {
    /// `targets.primary`
    Primary,
    /// `targets.secondary`
    Secondary,
    /// `targets.tertiary`
    Tertiary,
}

impl TargetRole {
    /// The field name in content files.
    pub fn field(self) -> &'static str {
        match self {
            Self::Primary => "primary",
            Self::Secondary => "secondary",
            Self::Tertiary => "tertiary",
        }
    }
}

/// A target slot: where candidates come from and which of them qualify.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TargetSlot {
    /// The name of a target scope: `self`, `characters_here`, `things_here`, `inventory`,
    /// `exits`, `things_next_door`, or one a game registered.
    pub scope: String,
    /// The template placeholder this target fills, without braces.
    pub placeholder: String,
    /// What the target is, for authors and prompts.
    #[serde(default)]
    pub description: String,
    /// Tags a candidate must have.
    #[serde(default)]
    pub required_tags: Vec<String>,
    /// Tags a candidate must not have.
    #[serde(default)]
    pub forbidden_tags: Vec<String>,
}

impl TargetSlot {
    /// Whether an entity with these tags qualifies for this slot.
    pub fn accepts<'a>(&self, has_tag: impl Fn(&str) -> bool + 'a) -> bool {
        tags_pass(&self.required_tags, &self.forbidden_tags, has_tag)
    }
}

/// Tags an actor must have, and must not have.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TagRule {
    /// Every one of these tags must be present.
    #[serde(default)]
    pub required_tags: Vec<String>,
    /// None of these tags may be present.
    #[serde(default)]
    pub forbidden_tags: Vec<String>,
}

impl TagRule {
    /// Whether an entity with these tags passes the rule.
    pub fn accepts<'a>(&self, has_tag: impl Fn(&str) -> bool + 'a) -> bool {
        tags_pass(&self.required_tags, &self.forbidden_tags, has_tag)
    }
}

/// Whether something with the tags `has_tag` says it has passes a tag rule: it has
/// every tag of `required` and none of `forbidden`.
pub(super) fn tags_pass(
    required: &[String],
    forbidden: &[String],
    has_tag: impl Fn(&str) -> bool,
) -> bool {
    required.iter().all(|tag| has_tag(tag)) && !forbidden.iter().any(|tag| has_tag(tag))
}

/// A named template value with a default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionParameter {
    /// The value used when nothing overrides it: a string, number or boolean.
    pub default: serde_json::Value,
    /// What the parameter means.
    #[serde(default)]
    pub description: String,
}

impl ActionParameter {
    /// The default as template text ([`value_text`]).
    pub fn default_text(&self) -> String {
        value_text(&self.default).into_owned()
    }
}

/// A parameter's value as template text: a string without quotes, anything else as
/// JSON writes it.
pub fn value_text(value: &serde_json::Value) -> std::borrow::Cow<'_, str> {
    match value {
        serde_json::Value::String(text) => text.into(),
        other => other.to_string().into(),
    }
}

/// The `{placeholder}` names in a template, in order of appearance, read as templates
/// are filled: from a `{` to the next `}`, whatever is between (`{{actor}}` names
/// `{actor`, which no template has).
pub fn template_placeholders(template: &str) -> impl Iterator<Item = &str> {
    let mut rest = template;
    std::iter::from_fn(move || {
        let after = &rest[rest.find('{')? + 1..];
        let close = after.find('}')?;
        rest = &after[close + 1..];
        Some(&after[..close])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_without_a_target_is_a_way_to_wait_and_one_to_an_exit_a_way_to_leave() {
        let action = |targets: serde_json::Value| -> ActionDefinition {
            serde_json::from_value(serde_json::json!({
                "id": "core:x", "name": "X", "description": "x", "template": "x",
                "targets": targets
            }))
            .expect("an action")
        };
        let slot = |scope: &str| serde_json::json!({ "scope": scope, "placeholder": "t" });
        assert_eq!(
            action(serde_json::json!({})).lifeline(),
            Some(Lifeline::Wait)
        );
        assert_eq!(
            action(serde_json::json!({ "primary": slot("exits") })).lifeline(),
            Some(Lifeline::Leave)
        );
        assert_eq!(
            action(serde_json::json!({
                "primary": slot("characters_here"), "secondary": slot("exits")
            }))
            .lifeline(),
            Some(Lifeline::Leave)
        );
        assert_eq!(
            action(serde_json::json!({ "primary": slot("characters_here") })).lifeline(),
            None
        );
    }
}
