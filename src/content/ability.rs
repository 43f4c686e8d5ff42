//! Abilities: services a character performs when asked (rent a room for two nights,
//! sell three arrows, play a song), each described to the model the same way: what it
//! does, when to use it, what inputs it needs and where they may come from. The rule
//! that goes with them: invoke an ability only when its required inputs are said or
//! can be inferred as it allows; otherwise ask a short question.

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

/// The most examples an ability may give: each costs prompt tokens.
pub const MAX_ABILITY_EXAMPLES: usize = 2;

/// An ability (`mods/<mod>/abilities/<name>.ability.json`): a service an actor whose
/// policy allows it may invoke with its inputs, which the game then carries out by its
/// own rules.
///
/// ```json
/// {
///   "id": "tavern:rent_room",
///   "description": "Rent a room at the inn for some nights.",
///   "what": "Rents the guest a room for a number of nights, for a coin a night.",
///   "when": "The person you are talking to asks for a room or a bed for the night.",
///   "inputs": {
///     "mode": "explicit",
///     "required": [
///       { "name": "nights", "type": "integer", "min": 1, "max": 14,
///         "description": "how many nights" }
///     ],
///     "optional": [
///       { "name": "guest", "type": "entity", "scope": "characters_here",
///         "description": "who stays" }
///     ],
///     "inferFrom": ["current_line", "partner"],
///     "validation": "Nights is a whole number from 1 to 14.",
///     "examples": ["\"A room for two nights\" → nights 2"]
///   }
/// }
/// ```
#[derive(Asset, TypePath, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AbilityDefinition {
    /// `mod:ability`; the namespace is the id of the mod that owns the file.
    pub id: String,
    /// What it is, for people: help screens and tools. Not shown to the model.
    pub description: String,
    /// What it does, for the model.
    pub what: String,
    /// When the model should use it; what keeps it from being overused.
    pub when: String,
    /// What it needs and where that may come from; an explicit ability whose input is
    /// the player's current line when absent.
    #[serde(default)]
    pub inputs: AbilityInputs,
}

impl AbilityDefinition {
    /// Every input, the required first, each with whether it is required.
    pub fn all_inputs(&self) -> impl Iterator<Item = (&AbilityInput, bool)> {
        let required = self.inputs.required.iter().map(|input| (input, true));
        required.chain(self.inputs.optional.iter().map(|input| (input, false)))
    }

    /// The input with this name.
    pub fn input(&self, name: &str) -> Option<(&AbilityInput, bool)> {
        self.all_inputs().find(|(input, _)| input.name == name)
    }

    /// The mod that owns it: its id's namespace.
    pub fn namespace(&self) -> &str {
        super::action_namespace(&self.id)
    }
}

/// What an ability needs, and how the model may come by it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AbilityInputs {
    /// Whether the inputs are inferred, must be said, or some of each.
    #[serde(default)]
    pub mode: InputMode,
    /// Inputs it cannot be invoked without.
    #[serde(default)]
    pub required: Vec<AbilityInput>,
    /// Inputs it can do without.
    #[serde(default)]
    pub optional: Vec<AbilityInput>,
    /// Where inputs may be taken from; the player's current line when absent.
    #[serde(default = "current_line")]
    pub infer_from: Vec<InputSource>,
    /// Constraints on the inputs, in plain language ("Nights is a whole number from 1
    /// to 14").
    #[serde(default)]
    pub validation: String,
    /// At most [`MAX_ABILITY_EXAMPLES`] short examples of use.
    #[serde(default)]
    pub examples: Vec<String>,
}

fn current_line() -> Vec<InputSource> {
    vec![InputSource::CurrentLine]
}

impl Default for AbilityInputs {
    fn default() -> Self {
        Self {
            mode: InputMode::default(),
            required: Vec::new(),
            optional: Vec::new(),
            infer_from: current_line(),
            validation: String::new(),
            examples: Vec::new(),
        }
    }
}

/// How an ability's inputs come to the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputMode {
    /// Taken from the context (what was said, who is talking, what is at hand); the
    /// ability is invoked without asking.
    Implicit,
    /// Said outright: a required input not said is asked for.
    #[default]
    Explicit,
    /// Some inferred, some said.
    Mixed,
}

impl InputMode {
    /// Its name in the prompt: `Implicit`.
    pub fn title(self) -> &'static str {
        match self {
            Self::Implicit => "Implicit",
            Self::Explicit => "Explicit",
            Self::Mixed => "Mixed",
        }
    }
}

/// Where an input may be inferred from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSource {
    /// What the player just said.
    CurrentLine,
    /// The player's lines before it in the conversation.
    RecentLines,
    /// Who the actor is talking to.
    Partner,
    /// The actor itself.
    #[serde(rename = "self")]
    Actor,
    /// What the player carries.
    PlayerCarries,
    /// The place the actor is in.
    Place,
}

impl InputSource {
    /// How the prompt names it: "the player's current line".
    pub fn phrase(self) -> &'static str {
        match self {
            Self::CurrentLine => "the player's current line",
            Self::RecentLines => "the player's recent lines",
            Self::Partner => "who you are talking to",
            Self::Actor => "yourself",
            Self::PlayerCarries => "what the player carries",
            Self::Place => "the place you are in",
        }
    }
}

/// One input of an ability: a name, a type and what it is. The fields that go with
/// the type: `scope` and tag rules for an entity, `min` and `max` for a number,
/// `maxLength` for text, `choices` for a choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AbilityInput {
    /// Letters, digits and `_`: how an invocation names it.
    pub name: String,
    /// What it is, for the model: "how many nights".
    #[serde(default)]
    pub description: String,
    /// What values it takes.
    #[serde(rename = "type")]
    pub kind: InputType,
    /// For an entity: the target scope its candidates come from (`self`,
    /// `characters_here`, `things_here`, `inventory`, `exits`, `things_next_door`, or one
    /// a game registered).
    #[serde(default)]
    pub scope: Option<String>,
    /// For an entity: tags a candidate must have.
    #[serde(default)]
    pub required_tags: Vec<String>,
    /// For an entity: tags a candidate must not have.
    #[serde(default)]
    pub forbidden_tags: Vec<String>,
    /// For a number: the least value.
    #[serde(default)]
    pub min: Option<f64>,
    /// For a number: the greatest value.
    #[serde(default)]
    pub max: Option<f64>,
    /// For text: the most characters.
    #[serde(default)]
    pub max_length: Option<usize>,
    /// For a choice: the values it may take.
    #[serde(default)]
    pub choices: Vec<String>,
}

impl AbilityInputs {
    /// Whether `other` takes the same inputs: the same required and optional inputs,
    /// in order, each alike but for its description. What the prompt says of them
    /// (the mode, where to infer them from, the validation text, the examples) may
    /// differ: an answer checked against one is as valid for the other.
    pub fn take_the_same(&self, other: &Self) -> bool {
        let alike = |one: &[AbilityInput], other: &[AbilityInput]| {
            one.len() == other.len() && one.iter().zip(other).all(|(a, b)| a.takes_as(b))
        };
        alike(&self.required, &other.required) && alike(&self.optional, &other.optional)
    }
}

impl AbilityInput {
    /// Whether `other` takes the same values under the same name: all alike but the
    /// description.
    fn takes_as(&self, other: &Self) -> bool {
        fn values(input: &AbilityInput) -> impl PartialEq + '_ {
            let entity = (&input.scope, &input.required_tags, &input.forbidden_tags);
            let limits = (input.min, input.max, input.max_length, &input.choices);
            (&input.name, input.kind, entity, limits)
        }
        values(self) == values(other)
    }

    /// Whether an entity with these tags qualifies for an entity input.
    pub fn accepts<'a>(&self, has_tag: impl Fn(&str) -> bool + 'a) -> bool {
        super::action::tags_pass(&self.required_tags, &self.forbidden_tags, has_tag)
    }
}

/// The type of an ability's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputType {
    /// An entity found by a scope and tag rules, like an action's target.
    Entity,
    /// A whole number, within `min` and `max` when given.
    Integer,
    /// Any number, within `min` and `max` when given.
    Number,
    /// Text of at most `maxLength` characters.
    Text,
    /// One of `choices`.
    Choice,
}

impl InputType {
    /// Its name in files: `integer`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Entity => "entity",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Text => "text",
            Self::Choice => "choice",
        }
    }
}
