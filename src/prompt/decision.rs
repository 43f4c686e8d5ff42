//! The decision prompt: stable rules and persona first, then what the actor perceives,
//! then the available actions; and the JSON schema its answer must follow.

use serde_json::{Value, json};

use crate::content::{ActorSpec, PromptTemplate};

/// Size limits on a decision answer, enforced when it is validated and announced in its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionLimits {
    /// The longest line said aloud (`speech`, `color`) or `utterance`, in characters.
    pub max_speech_chars: usize,
    /// The longest `thought`, in characters (the prompt does not ask for one).
    pub max_thought_chars: usize,
    /// The longest whole answer, in bytes.
    pub max_answer_bytes: usize,
    /// The most lines a line said aloud may have (the spec's `maxColorLines`); `None`
    /// for no limit, 0 for an actor that never speaks.
    pub max_color_lines: Option<u32>,
}

impl Default for DecisionLimits {
    fn default() -> Self {
        Self {
            max_speech_chars: 300,
            max_thought_chars: 500,
            max_answer_bytes: 4096,
            max_color_lines: None,
        }
    }
}

impl DecisionLimits {
    /// The most tokens a valid answer can take, even from a model whose vocabulary
    /// spends a token on every character: its longest line and the JSON around it.
    /// Decision requests ask for no more, so a model cannot ramble on past what the
    /// schema allows.
    pub fn max_answer_tokens(&self) -> u32 {
        let chars = self.max_speech_chars.saturating_add(ANSWER_OVERHEAD_CHARS);
        u32::try_from(chars).unwrap_or(u32::MAX)
    }
}

/// The characters of a decision answer around its longest line:
/// `{"answer": {"type": "ACTION", "action": 12, "speech": ""}}` and room for the
/// spaces a grammar lets a model put between its parts.
const ANSWER_OVERHEAD_CHARS: usize = 96;

/// A decision prompt: what stays the same turn after turn, and what changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionPrompt {
    /// The rules and the persona: the stable prefix, sent as the system message.
    pub system: String,
    /// The available actions, perception, memories and the player's words, sent last.
    pub user: String,
    /// Each part of the prompt and its estimated tokens, in order.
    pub sections: Vec<PromptSection>,
}

/// One part of a prompt and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptSection {
    /// `rules`, `character`, `never`, `backstory`, `goals`, `actions`, `perception`,
    /// `memories`, `player_says` or `question`.
    pub name: &'static str,
    /// Its estimated tokens.
    pub tokens: usize,
}

/// Notes where each section of a prompt ends.
struct Sections {
    sections: Vec<PromptSection>,
    start: usize,
}

impl Sections {
    /// The section since the last mark is `name`; `text` is the message being built.
    fn mark(&mut self, name: &'static str, text: &str) {
        if text.len() > self.start {
            self.sections.push(PromptSection {
                name,
                tokens: super::estimate_tokens(&text[self.start..]),
            });
        }
        self.start = text.len();
    }
}

/// The rules every decision prompt starts with; they never change, so servers can cache them.
pub const DECISION_RULES: &str = "You play one character in a game. Stay in character. You cannot change the world directly: the game carries out what you choose, if it can.
Answer with exactly one JSON object on one line, one of:
{\"type\": \"ACTION\", \"action\": <the Index of an offered action>, \"speech\": \"<what you say as you do it, or empty>\"}
{\"type\": \"UTTERANCE\", \"utterance\": \"<an offered Command, word for word>\"}
{\"type\": \"COLOR\", \"color\": \"<a short line you say; nothing else happens>\"}
{\"type\": \"NONE\"}";

/// The last line of every decision prompt, asking for the decision.
pub const DECISION_QUESTION: &str = "What do you do? Answer with the JSON object only.";

/// The instruction after the player's words, when the actor replies in a conversation.
pub const DECISION_REPLY: &str =
    "Reply to the player in character with a COLOR answer; this turn you take no action.";

/// The built-in template: [`DECISION_RULES`], [`DECISION_QUESTION`] and
/// [`DECISION_REPLY`], with an empty id no spec can name.
impl Default for PromptTemplate {
    fn default() -> Self {
        Self {
            id: String::new(),
            rules: DECISION_RULES.to_owned(),
            question: DECISION_QUESTION.to_owned(),
            reply: DECISION_REPLY.to_owned(),
        }
    }
}

/// What changes from turn to turn in a decision prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecisionContext<'a> {
    /// What the actor perceives; empty leaves the section out.
    pub perception: &'a str,
    /// What it recalls.
    pub memories: &'a [&'a str],
    /// What the player just said to it, in a conversation: it replies instead of acting.
    pub player_says: Option<&'a str>,
    /// The available-actions block; empty leaves the section out.
    pub actions_block: &'a str,
    /// A line for the actor before everything else: why its last answer was not used.
    pub note: Option<&'a str>,
}

/// One message of a prompt and its sections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptPart {
    /// The message's text.
    pub text: String,
    /// Each part of it and its estimated tokens, in order.
    pub sections: Vec<PromptSection>,
}

/// The decision prompt for one actor: the stable part (rules, persona, goals) first,
/// then the available actions, what it perceives, what it remembers and what the
/// player said to it: the parts that change most often last. The fixed text comes
/// from `template` (the spec's `promptId`, or [`PromptTemplate::default`]).
///
/// It is [`decision_system_prompt`] and [`decision_user_prompt`] together; an app
/// prompting many actors of one spec can build the system message once and share it.
pub fn decision_prompt(
    spec: &ActorSpec,
    template: &PromptTemplate,
    context: &DecisionContext<'_>,
    limits: &DecisionLimits,
) -> DecisionPrompt {
    let system = decision_system_prompt(spec, template, limits);
    let user = decision_user_prompt(template, context);
    let mut sections = system.sections;
    sections.extend(user.sections);
    DecisionPrompt {
        system: system.text,
        user: user.text,
        sections,
    }
}

/// A decision prompt's system message: the rules and the persona, the same turn after
/// turn for one spec, template and limits.
pub fn decision_system_prompt(
    spec: &ActorSpec,
    template: &PromptTemplate,
    limits: &DecisionLimits,
) -> PromptPart {
    let mut sections = Sections {
        sections: Vec::with_capacity(5),
        start: 0,
    };
    let mut system = String::with_capacity(1024);
    system.push_str(template.rules.trim_end());
    system.push_str(&format!(
        "\nKeep what you say under {} characters.\n\n",
        limits.max_speech_chars
    ));
    sections.mark("rules", &system);
    let persona = &spec.persona;
    system.push_str(&format!(
        "<character>\nYou are {}, {}.\n",
        persona.name, persona.role
    ));
    if let Some(voice) = persona.voice.as_deref().filter(|v| !v.trim().is_empty()) {
        system.push_str("Voice: ");
        system.push_str(voice.trim());
        system.push('\n');
    }
    if !persona.traits.is_empty() {
        system.push_str("Traits: ");
        system.push_str(&persona.traits.join(", "));
        system.push('\n');
    }
    if !spec.properties.is_empty() {
        system.push_str("Properties: ");
        for (index, (name, value)) in spec.properties.iter().enumerate() {
            if index > 0 {
                system.push_str(", ");
            }
            system.push_str(name);
            system.push_str(": ");
            system.push_str(value);
        }
        system.push('\n');
    }
    push_items(&mut system, &persona.lines);
    system.push_str("</character>\n");
    sections.mark("character", &system);
    if !persona.taboos.is_empty() {
        system.push('\n');
        push_tagged_list(&mut system, "never", &persona.taboos);
    }
    sections.mark("never", &system);
    if let Some(backstory) = spec.backstory.as_deref().filter(|b| !b.trim().is_empty()) {
        system.push_str("\n<backstory>\n");
        system.push_str(backstory.trim());
        system.push_str("\n</backstory>\n");
    }
    sections.mark("backstory", &system);
    if !persona.goals.is_empty() {
        system.push('\n');
        push_tagged_list(&mut system, "goals", &persona.goals);
    }
    sections.mark("goals", &system);
    PromptPart {
        text: system.trim_end().to_owned(),
        sections: sections.sections,
    }
}

/// A decision prompt's user message: the available actions, what the actor perceives,
/// what it remembers and what the player said to it.
pub fn decision_user_prompt(
    template: &PromptTemplate,
    context: &DecisionContext<'_>,
) -> PromptPart {
    let mut part = PromptPart {
        text: String::with_capacity(context.perception.len() + context.actions_block.len() + 256),
        sections: Vec::with_capacity(6),
    };
    write_decision_user_prompt(&mut part, template, context);
    part
}

/// Like [`decision_user_prompt`], appending to `part`: a caller prompting many actors
/// reuses one buffer.
pub fn write_decision_user_prompt(
    part: &mut PromptPart,
    template: &PromptTemplate,
    context: &DecisionContext<'_>,
) {
    let DecisionContext {
        perception,
        memories,
        player_says,
        actions_block,
        note,
    } = *context;
    let user = &mut part.text;
    let mut sections = Sections {
        sections: std::mem::take(&mut part.sections),
        start: user.len(),
    };
    if let Some(note) = note {
        user.push_str(note);
        user.push_str("\n\n");
    }
    sections.mark("note", user);
    // What changes least comes first, so a server reuses as much of the last turn's
    // prompt as it can: the actions on offer change with the world, memories every
    // turn, the player's words every line.
    if !actions_block.is_empty() {
        user.push_str(actions_block);
        user.push_str("\n\n");
    }
    sections.mark("actions", user);
    if !perception.is_empty() {
        user.push_str("<perception>\n");
        user.push_str(perception);
        user.push_str("\n</perception>\n\n");
    }
    sections.mark("perception", user);
    if !memories.is_empty() {
        push_tagged_list(user, "memories", memories);
        user.push('\n');
    }
    sections.mark("memories", user);
    if let Some(words) = player_says {
        user.push_str("<player_says>\n");
        user.push_str(words);
        user.push_str("\n</player_says>\n");
        user.push_str(template.reply.trim());
        user.push_str("\n\n");
    }
    sections.mark("player_says", user);
    user.push_str(template.question.trim());
    sections.mark("question", user);
    part.sections = sections.sections;
}

/// `- item` lines.
fn push_items(text: &mut String, items: &[impl AsRef<str>]) {
    for item in items {
        text.push_str("- ");
        text.push_str(item.as_ref());
        text.push('\n');
    }
}

/// `<tag>`, `- item` lines, `</tag>`.
fn push_tagged_list(text: &mut String, tag: &str, items: &[impl AsRef<str>]) {
    text.push('<');
    text.push_str(tag);
    text.push_str(">\n");
    push_items(text, items);
    text.push_str("</");
    text.push_str(tag);
    text.push_str(">\n");
}

/// What the available-actions block says when nothing is offered (a reply in a
/// conversation, an actor in combat with no combat action): the answers left.
pub const NOTHING_OFFERED: &str = "(nothing to do right now: answer with COLOR or NONE)";

/// The field a schema-bound answer sits under ([`decision_schema`]); the parser reads
/// an answer with or without it.
pub const ANSWER_FIELD: &str = "answer";

/// The most offered indices the schema lists one by one; beyond them it gives a range.
/// OpenAI's strict mode takes at most 1,000 enum values in a schema.
const MAX_LISTED_INDICES: usize = 500;

/// The JSON schema of a decision answer when `offered` actions (numbered from 1) were
/// offered: an object whose `answer` is one of the answers the prompt describes,
/// each with exactly its own fields: `ACTION` with `action` (one of the offered
/// indices) and `speech`, `COLOR` with `color` (both lines within the speech limit),
/// or `NONE`. With nothing offered there is no `ACTION`; with no lines allowed no
/// `COLOR`, and an action's `speech` must be empty. A server that honours it can
/// write no answer [`parse_decision`](crate::actors::parse_decision) refuses, and no
/// action that was not offered.
///
/// The answers sit under `answer` because OpenAI's strict structured outputs want an
/// object at the root (with every field required and no others), and only a choice
/// among whole answers (`anyOf`) ties each `type` to its own fields; the grammars of
/// llama.cpp, vLLM and Ollama take the same schema. The parser reads an answer with
/// or without the wrapper. (OpenAI's fine-tuned models do not take `maxLength`;
/// their answers are checked for length when they are parsed.)
///
/// `UTTERANCE` is left out: it is for models that write free text, and under a schema
/// the index says the same in fewer tokens. It depends only on the number offered and
/// the limits, so one schema serves every actor offered as many actions.
pub fn decision_schema(offered: usize, limits: &DecisionLimits) -> Value {
    // An actor that may say no line may only say nothing along with its action.
    let speaks = limits.max_color_lines != Some(0);
    let line =
        json!({ "type": "string", "maxLength": if speaks { limits.max_speech_chars } else { 0 } });
    let answer = |kind: &str, fields: &[(&str, Value)]| {
        let mut properties = serde_json::Map::with_capacity(fields.len() + 1);
        properties.insert(
            "type".to_owned(),
            json!({ "type": "string", "enum": [kind] }),
        );
        for (name, field) in fields {
            properties.insert((*name).to_owned(), field.clone());
        }
        let required: Vec<String> = properties.keys().cloned().collect();
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        })
    };
    let mut answers = Vec::with_capacity(3);
    if offered > 0 {
        let index = if offered <= MAX_LISTED_INDICES {
            let indices: Vec<Value> = (1..=offered).map(Value::from).collect();
            json!({ "type": "integer", "enum": indices })
        } else {
            json!({ "type": "integer", "minimum": 1, "maximum": offered })
        };
        answers.push(answer(
            "ACTION",
            &[("action", index), ("speech", line.clone())],
        ));
    }
    if speaks {
        answers.push(answer("COLOR", &[("color", line)]));
    }
    answers.push(answer("NONE", &[]));
    json!({
        "type": "object",
        "properties": { ANSWER_FIELD: { "anyOf": answers } },
        "required": [ANSWER_FIELD],
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marta() -> ActorSpec {
        serde_json::from_value(serde_json::json!({
            "id": "tavern:marta",
            "persona": {
                "name": "Marta",
                "role": "innkeeper of the Gilded Tankard",
                "lines": ["Warm but shrewd.", "Remembers every debt."],
                "goals": ["Keep the peace."]
            }
        }))
        .expect("a spec")
    }

    #[test]
    fn the_prompt_is_stable_part_first_then_actions_then_perception() {
        let prompt = decision_prompt(
            &marta(),
            &PromptTemplate::default(),
            &DecisionContext {
                perception: "You are in the common room.",
                actions_block: "<available_actions>\n...\n</available_actions>",
                ..DecisionContext::default()
            },
            &DecisionLimits::default(),
        );
        assert_eq!(
            prompt.system,
            "You play one character in a game. Stay in character. You cannot change the world directly: the game carries out what you choose, if it can.
Answer with exactly one JSON object on one line, one of:
{\"type\": \"ACTION\", \"action\": <the Index of an offered action>, \"speech\": \"<what you say as you do it, or empty>\"}
{\"type\": \"UTTERANCE\", \"utterance\": \"<an offered Command, word for word>\"}
{\"type\": \"COLOR\", \"color\": \"<a short line you say; nothing else happens>\"}
{\"type\": \"NONE\"}
Keep what you say under 300 characters.

<character>
You are Marta, innkeeper of the Gilded Tankard.
- Warm but shrewd.
- Remembers every debt.
</character>

<goals>
- Keep the peace.
</goals>"
        );
        assert_eq!(
            prompt.user,
            "<available_actions>
...
</available_actions>

<perception>
You are in the common room.
</perception>

What do you do? Answer with the JSON object only."
        );
    }

    /// The system message of a spec's decision prompt, with the built-in template.
    fn system_message(spec: serde_json::Value) -> String {
        let spec: ActorSpec = serde_json::from_value(spec).expect("a spec");
        decision_prompt(
            &spec,
            &PromptTemplate::default(),
            &DecisionContext::default(),
            &DecisionLimits::default(),
        )
        .system
    }

    #[test]
    fn voice_traits_and_taboos_are_part_of_the_character() {
        let system = system_message(serde_json::json!({
            "id": "tavern:marta",
            "persona": { "name": "Marta", "role": "innkeeper",
                         "voice": "brisk and warm", "traits": ["shrewd", "motherly"],
                         "taboos": ["Never lets anyone into the cellar."] }
        }));
        assert!(
            system.ends_with(
                "<character>\nYou are Marta, innkeeper.\nVoice: brisk and warm\nTraits: shrewd, motherly\n</character>\n\n<never>\n- Never lets anyone into the cellar.\n</never>"
            ),
            "{system}"
        );
    }

    #[test]
    fn properties_are_one_line_after_the_traits_sorted_by_name() {
        let system = system_message(serde_json::json!({
            "id": "island:troop",
            "persona": { "name": "the troop", "role": "a band of monkeys",
                         "traits": ["mischievous"], "lines": ["Chatters."] },
            "properties": { "temperament": "skittish", "aggression": "low", "patience": "low" }
        }));
        assert!(
            system.ends_with(
                "<character>\nYou are the troop, a band of monkeys.\nTraits: mischievous\nProperties: aggression: low, patience: low, temperament: skittish\n- Chatters.\n</character>"
            ),
            "{system}"
        );
    }

    #[test]
    fn memories_and_the_players_words_come_last() {
        let prompt = decision_prompt(
            &marta(),
            &PromptTemplate::default(),
            &DecisionContext {
                perception: "You are in the common room.",
                memories: &["Brom said: \"Trouble tonight.\""],
                player_says: Some("any rooms free"),
                actions_block: "<available_actions>\n...\n</available_actions>",
                note: None,
            },
            &DecisionLimits::default(),
        );
        assert_eq!(
            prompt.user,
            "<available_actions>
...
</available_actions>

<perception>
You are in the common room.
</perception>

<memories>
- Brom said: \"Trouble tonight.\"
</memories>

<player_says>
any rooms free
</player_says>
Reply to the player in character with a COLOR answer; this turn you take no action.

What do you do? Answer with the JSON object only."
        );
    }

    #[test]
    fn a_template_supplies_the_rules_the_reply_instruction_and_the_question() {
        let template = PromptTemplate {
            id: "island:terse".into(),
            rules: "Answer as JSON.\n".into(),
            question: "Your move?".into(),
            reply: "Answer the player.".into(),
        };
        let prompt = decision_prompt(
            &marta(),
            &template,
            &DecisionContext {
                player_says: Some("hello"),
                ..DecisionContext::default()
            },
            &DecisionLimits::default(),
        );
        assert!(
            prompt.system.starts_with(
                "Answer as JSON.\nKeep what you say under 300 characters.\n\n<character>"
            ),
            "{}",
            prompt.system
        );
        assert!(
            prompt.user.ends_with(
                "<player_says>\nhello\n</player_says>\nAnswer the player.\n\nYour move?"
            ),
            "{}",
            prompt.user
        );
        let builtin = PromptTemplate::default();
        assert_eq!(
            (
                builtin.rules.as_str(),
                builtin.question.as_str(),
                builtin.reply.as_str()
            ),
            (DECISION_RULES, DECISION_QUESTION, DECISION_REPLY)
        );
    }

    #[test]
    fn answers_are_capped_at_what_the_schema_allows() {
        assert_eq!(DecisionLimits::default().max_answer_tokens(), 300 + 96);
    }

    /// Where `schema` breaks the rules of OpenAI's strict structured outputs: an
    /// object at the root (no `anyOf` there), every object listing all its properties
    /// as required and no others, `anyOf` branches and types from the subset strict
    /// mode takes, and enum values of their schema's type. Empty when it keeps them.
    fn strict_mode_faults(schema: &Value) -> Vec<String> {
        let mut faults = Vec::new();
        if schema["type"] != "object" {
            faults.push(format!("the root is not an object: {schema}"));
        }
        for keyword in ["anyOf", "oneOf", "allOf", "$ref"] {
            if schema.get(keyword).is_some() {
                faults.push(format!("the root has `{keyword}`"));
            }
        }
        check_strict(schema, "", 0, &mut faults);
        faults
    }

    fn check_strict(schema: &Value, at: &str, depth: usize, faults: &mut Vec<String>) {
        const KEYWORDS: [&str; 12] = [
            "type",
            "properties",
            "required",
            "additionalProperties",
            "enum",
            "const",
            "anyOf",
            "items",
            "description",
            // Strict mode takes these since 2025 (not on fine-tuned models).
            "maxLength",
            "minimum",
            "maximum",
        ];
        const TYPES: [&str; 7] = [
            "string", "number", "integer", "boolean", "object", "array", "null",
        ];
        let Some(object) = schema.as_object() else {
            faults.push(format!("{at}: not a schema object"));
            return;
        };
        if depth > 10 {
            faults.push(format!("{at}: nested deeper than 10"));
        }
        for keyword in object.keys() {
            if !KEYWORDS.contains(&keyword.as_str()) {
                faults.push(format!("{at}: `{keyword}` is not in strict mode's subset"));
            }
        }
        let types: Vec<&str> = match &object.get("type") {
            Some(Value::String(name)) => vec![name.as_str()],
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            Some(other) => {
                faults.push(format!("{at}: `type` is {other}"));
                Vec::new()
            }
            None => Vec::new(),
        };
        if types.is_empty() && object.get("anyOf").is_none() {
            faults.push(format!("{at}: neither a type nor anyOf"));
        }
        for name in &types {
            if !TYPES.contains(name) {
                faults.push(format!("{at}: unknown type {name}"));
            }
        }
        if let Some(values) = object.get("enum") {
            let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
            if values.is_empty() {
                faults.push(format!("{at}: an empty enum"));
            }
            let fits = |value: &Value| match value {
                Value::Null => types.contains(&"null"),
                Value::String(_) => types.contains(&"string"),
                Value::Number(n) if n.is_u64() || n.is_i64() => {
                    types.contains(&"integer") || types.contains(&"number")
                }
                Value::Number(_) => types.contains(&"number"),
                _ => false,
            };
            if let Some(value) = values.iter().find(|value| !fits(value)) {
                faults.push(format!("{at}: enum value {value} is not of type {types:?}"));
            }
        }
        if types.contains(&"object") {
            let properties = object.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let names: Vec<&str> = properties
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            if names.iter().any(|name| !required.contains(name)) || names.len() != required.len() {
                faults.push(format!(
                    "{at}: required {required:?} is not every property {names:?}"
                ));
            }
            if object.get("additionalProperties") != Some(&Value::Bool(false)) {
                faults.push(format!("{at}: additionalProperties is not false"));
            }
            for (name, property) in properties.into_iter().flatten() {
                check_strict(property, &format!("{at}/{name}"), depth + 1, faults);
            }
        }
        if let Some(branches) = object.get("anyOf") {
            for (i, branch) in branches.as_array().into_iter().flatten().enumerate() {
                check_strict(branch, &format!("{at}/anyOf/{i}"), depth + 1, faults);
            }
        }
        if let Some(items) = object.get("items") {
            check_strict(items, &format!("{at}/items"), depth + 1, faults);
        }
    }

    /// The limits a decision schema can be made for.
    fn every_limit() -> Vec<DecisionLimits> {
        [None, Some(0), Some(1), Some(3)]
            .into_iter()
            .map(|max_color_lines| DecisionLimits {
                max_color_lines,
                ..DecisionLimits::default()
            })
            .collect()
    }

    #[test]
    fn every_schema_keeps_the_rules_of_strict_structured_outputs() {
        for limits in every_limit() {
            for offered in [0, 1, 2, 17, 500, 501, 2000] {
                let schema = decision_schema(offered, &limits);
                assert_eq!(
                    strict_mode_faults(&schema),
                    Vec::<String>::new(),
                    "{offered} offered, {limits:?}: {schema:#}"
                );
            }
        }
    }

    #[test]
    fn the_strict_mode_check_finds_what_breaks_the_rules() {
        let kinds = json!({ "anyOf": [
            { "type": "object", "properties": { "type": { "const": "NONE" } },
              "required": ["type"], "additionalProperties": false }
        ]});
        assert!(!strict_mode_faults(&kinds).is_empty(), "anyOf at the root");
        let optional = json!({
            "type": "object",
            "properties": { "type": { "type": "string" }, "speech": { "type": "string" } },
            "required": ["type"],
            "additionalProperties": false
        });
        assert!(
            !strict_mode_faults(&optional).is_empty(),
            "a field not required"
        );
        let open = json!({
            "type": "object", "properties": {}, "required": []
        });
        assert!(
            !strict_mode_faults(&open).is_empty(),
            "other fields allowed"
        );
        let pattern = json!({
            "type": "object",
            "properties": { "line": { "type": "string", "pattern": "^a" } },
            "required": ["line"],
            "additionalProperties": false
        });
        assert!(
            !strict_mode_faults(&pattern).is_empty(),
            "a keyword outside the subset"
        );
    }

    /// Each answer a schema allows, by type: its fields.
    fn answers(schema: &Value) -> Vec<(String, Vec<String>)> {
        schema["properties"]["answer"]["anyOf"]
            .as_array()
            .expect("the answers")
            .iter()
            .map(|answer| {
                let kind = answer["properties"]["type"]["enum"][0]
                    .as_str()
                    .expect("a type")
                    .to_owned();
                let fields = answer["properties"]
                    .as_object()
                    .expect("its fields")
                    .keys()
                    .cloned()
                    .collect();
                (kind, fields)
            })
            .collect()
    }

    #[test]
    fn the_schema_offers_only_the_indices_offered() {
        let schema = decision_schema(2, &DecisionLimits::default());
        let action = &schema["properties"]["answer"]["anyOf"][0]["properties"];
        assert_eq!(
            action["action"],
            json!({ "type": "integer", "enum": [1, 2] })
        );
        let line = json!({ "type": "string", "maxLength": 300 });
        assert_eq!(action["speech"], line);
        assert_eq!(
            schema["properties"]["answer"]["anyOf"][1]["properties"]["color"],
            line
        );
        let many = decision_schema(MAX_LISTED_INDICES + 1, &DecisionLimits::default());
        assert_eq!(
            many["properties"]["answer"]["anyOf"][0]["properties"]["action"],
            json!({ "type": "integer", "minimum": 1, "maximum": MAX_LISTED_INDICES + 1 })
        );
    }

    #[test]
    fn each_answer_has_exactly_its_own_fields() {
        let fields = |names: &[&str]| names.iter().map(|&n| n.to_owned()).collect::<Vec<_>>();
        assert_eq!(
            answers(&decision_schema(2, &DecisionLimits::default())),
            [
                ("ACTION".to_owned(), fields(&["action", "speech", "type"])),
                ("COLOR".to_owned(), fields(&["color", "type"])),
                ("NONE".to_owned(), fields(&["type"])),
            ]
        );
    }

    #[test]
    fn with_nothing_offered_or_no_lines_allowed_the_schema_narrows() {
        let kinds = |schema: &Value| -> Vec<String> {
            answers(schema).into_iter().map(|(kind, _)| kind).collect()
        };
        assert_eq!(
            kinds(&decision_schema(0, &DecisionLimits::default())),
            ["COLOR", "NONE"]
        );
        let mute = DecisionLimits {
            max_color_lines: Some(0),
            ..DecisionLimits::default()
        };
        let schema = decision_schema(1, &mute);
        assert_eq!(kinds(&schema), ["ACTION", "NONE"]);
        assert_eq!(
            schema["properties"]["answer"]["anyOf"][0]["properties"]["speech"]["maxLength"], 0,
            "nothing may be said along with the action"
        );
        assert_eq!(kinds(&decision_schema(0, &mute)), ["NONE"]);
    }
}
