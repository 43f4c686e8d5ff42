//! The narration plan: what the narrator (the model or the offline weaver) receives
//! for one report. Compact and borrowed: it is built, sent and dropped each report.

use std::borrow::Cow;

use serde::Serialize;

use super::Outcome;

/// Everything needed to narrate one report, serialized as the narrator's input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NarrationPlan<'a> {
    /// What happened, by name.
    pub action: PlanAction<'a>,
    /// The fragments picked for it.
    pub fragments: PlanFragments<'a>,
    /// Side effects, each with its picked fragments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<PlanEffect<'a>>,
    /// The entities mentioned, with a few traits each; the first is the one the
    /// action was done to (or the actor).
    pub entity_refs: Vec<EntityRef<'a>>,
    /// Whose eyes the text is written from.
    pub viewpoint: Viewpoint<'a>,
    /// Where one can go from here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exits: Vec<&'a str>,
    /// Free text to pass along as it is: words read aloud, a note's content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
}

/// The action, by name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanAction<'a> {
    /// The canonical verb.
    pub verb: &'a str,
    /// Who acted.
    pub actor: &'a str,
    /// What it was done to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<&'a str>,
    /// The second target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indirect_object: Option<&'a str>,
    /// The instrument.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instrument: Option<&'a str>,
    /// Whether it happened.
    pub outcome: Outcome,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<&'a str>,
}

/// The fragments picked for the action. `action_core` and `new_state` must appear in
/// the narration; colors may.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanFragments<'a> {
    /// Who the core is about when it is written without its subject ("nods slowly"
    /// is about Marta); `None` when the core names its own subject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<Cow<'a, str>>,
    /// The action itself. Required.
    pub action_core: Cow<'a, str>,
    /// Embellishments of the action. Optional.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub action_color: Vec<Cow<'a, str>>,
    /// How the entity is after the action. Required when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_state: Option<Cow<'a, str>>,
    /// The entity `new_state` describes, as a sentence names it ("the mug of ale").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_of: Option<Cow<'a, str>>,
}

/// One side effect's fragments.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanEffect<'a> {
    /// The kind of change (`position_change`).
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// The canonical effect (`sit_down`).
    pub action: &'a str,
    /// What happened. Required.
    pub core: Cow<'a, str>,
    /// An embellishment. Optional.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<Cow<'a, str>>,
}

/// An entity the narration may mention.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityRef<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its name as a sentence uses it ("the mug of ale", "Marta"); not sent.
    #[serde(skip)]
    pub called: Cow<'a, str>,
    /// A few of its traits, shuffled; the narrator picks what fits.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub traits: Vec<Cow<'a, str>>,
    /// Its mood words, for a place or a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atmosphere: Option<&'a str>,
}

/// Whose eyes the text is written from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Viewpoint<'a> {
    /// `second` when the player acted ("you take the key"), `third` otherwise.
    pub person: Person,
    /// Where it happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub place: Option<&'a str>,
}

/// The grammatical person of the narration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Person {
    /// The player acted: "you".
    Second,
    /// Someone else acted.
    Third,
}
