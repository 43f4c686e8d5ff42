//! The decision prompt: stable rules and persona first, then what the actor perceives,
//! then the available actions; and the JSON schema its answer must follow.

use serde_json::{Value, json};

use crate::content::ActorSpec;

/// Size limits on a decision answer, enforced when it is validated and announced in its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionLimits {
    /// The longest `speech`, in characters.
    pub max_speech_chars: usize,
    /// The longest `thought`, in characters.
    pub max_thought_chars: usize,
    /// The longest whole answer, in bytes.
    pub max_answer_bytes: usize,
}

impl Default for DecisionLimits {
    fn default() -> Self {
        Self {
            max_speech_chars: 300,
            max_thought_chars: 500,
            max_answer_bytes: 4096,
        }
    }
}

impl DecisionLimits {
    /// The most tokens a valid answer can take, even from a model whose vocabulary
    /// spends a token on every character: its two strings at their limits and the
    /// JSON around them. Decision requests ask for no more, so a model cannot ramble
    /// on past what the schema allows.
    pub fn max_answer_tokens(&self) -> u32 {
        let chars = self.max_speech_chars + self.max_thought_chars + 64;
        u32::try_from(chars).unwrap_or(u32::MAX)
    }
}

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
pub const DECISION_RULES: &str = "You play one character in a game. Each turn you choose one of the actions offered to you, or none.
Stay in character. You cannot change the world directly: the game carries out the action you choose, if it can.
Answer with exactly one JSON object and nothing else:
{\"action\": <the Index number of one offered action, or null to do nothing>, \"speech\": \"<what you say aloud, or an empty string>\", \"thought\": \"<a short private thought>\"}";

/// What changes from turn to turn in a decision prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecisionContext<'a> {
    /// What the actor perceives.
    pub perception: &'a str,
    /// What it recalls.
    pub memories: &'a [&'a str],
    /// What the player just said to it, in a conversation: it replies instead of acting.
    pub player_says: Option<&'a str>,
    /// The available-actions block.
    pub actions_block: &'a str,
}

/// One message of a prompt and its sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptPart {
    /// The message's text.
    pub text: String,
    /// Each part of it and its estimated tokens, in order.
    pub sections: Vec<PromptSection>,
}

/// The decision prompt for one actor: the stable part (rules, persona, goals) first,
/// then the available actions, what it perceives, what it remembers and what the
/// player said to it: the parts that change most often last.
///
/// It is [`decision_system_prompt`] and [`decision_user_prompt`] together; an app
/// prompting many actors of one spec can build the system message once and share it.
pub fn decision_prompt(
    spec: &ActorSpec,
    context: &DecisionContext<'_>,
    limits: &DecisionLimits,
) -> DecisionPrompt {
    let system = decision_system_prompt(spec, limits);
    let user = decision_user_prompt(context);
    let mut sections = system.sections;
    sections.extend(user.sections);
    DecisionPrompt {
        system: system.text,
        user: user.text,
        sections,
    }
}

/// A decision prompt's system message: the rules and the persona, the same turn after
/// turn for one spec and limits.
pub fn decision_system_prompt(spec: &ActorSpec, limits: &DecisionLimits) -> PromptPart {
    let mut sections = Sections {
        sections: Vec::with_capacity(5),
        start: 0,
    };
    let mut system = String::with_capacity(1024);
    system.push_str(DECISION_RULES);
    system.push_str(&format!(
        "\nKeep speech under {} characters and thought under {} characters.\n\n",
        limits.max_speech_chars, limits.max_thought_chars
    ));
    sections.mark("rules", &system);
    system.push_str(&format!(
        "<character>\nYou are {}, {}.\n",
        spec.name, spec.role
    ));
    if let Some(voice) = spec.voice.as_deref().filter(|v| !v.trim().is_empty()) {
        system.push_str("Voice: ");
        system.push_str(voice.trim());
        system.push('\n');
    }
    if !spec.traits.is_empty() {
        system.push_str("Traits: ");
        system.push_str(&spec.traits.join(", "));
        system.push('\n');
    }
    push_items(&mut system, &spec.persona);
    system.push_str("</character>\n");
    sections.mark("character", &system);
    if !spec.taboos.is_empty() {
        system.push('\n');
        push_tagged_list(&mut system, "never", &spec.taboos);
    }
    sections.mark("never", &system);
    if let Some(backstory) = spec.backstory.as_deref().filter(|b| !b.trim().is_empty()) {
        system.push_str("\n<backstory>\n");
        system.push_str(backstory.trim());
        system.push_str("\n</backstory>\n");
    }
    sections.mark("backstory", &system);
    if !spec.goals.is_empty() {
        system.push('\n');
        push_tagged_list(&mut system, "goals", &spec.goals);
    }
    sections.mark("goals", &system);
    PromptPart {
        text: system.trim_end().to_owned(),
        sections: sections.sections,
    }
}

/// A decision prompt's user message: the available actions, what the actor perceives,
/// what it remembers and what the player said to it.
pub fn decision_user_prompt(context: &DecisionContext<'_>) -> PromptPart {
    let mut part = PromptPart {
        text: String::with_capacity(context.perception.len() + context.actions_block.len() + 256),
        sections: Vec::with_capacity(5),
    };
    write_decision_user_prompt(&mut part, context);
    part
}

/// Like [`decision_user_prompt`], appending to `part`: a caller prompting many actors
/// reuses one buffer.
pub fn write_decision_user_prompt(part: &mut PromptPart, context: &DecisionContext<'_>) {
    let DecisionContext {
        perception,
        memories,
        player_says,
        actions_block,
    } = *context;
    let user = &mut part.text;
    let mut sections = Sections {
        sections: std::mem::take(&mut part.sections),
        start: user.len(),
    };
    // What changes least comes first, so a server reuses as much of the last turn's
    // prompt as it can: the actions on offer change with the world, memories every
    // turn, the player's words every line.
    user.push_str(actions_block);
    user.push_str("\n\n");
    sections.mark("actions", user);
    user.push_str("<perception>\n");
    user.push_str(perception);
    user.push_str("\n</perception>\n\n");
    sections.mark("perception", user);
    if !memories.is_empty() {
        push_tagged_list(user, "memories", memories);
        user.push('\n');
    }
    sections.mark("memories", user);
    if let Some(words) = player_says {
        user.push_str("<player_says>\n");
        user.push_str(words);
        user.push_str("\n</player_says>\nReply to the player in character, in `speech`; this turn you take no action (`action`: null).\n\n");
    }
    sections.mark("player_says", user);
    user.push_str("What do you do? Answer with the JSON object only.");
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

/// The JSON schema of a decision answer: `action` is one of the offered indices or
/// null, and the strings carry their size limits.
pub fn decision_schema(offered: impl IntoIterator<Item = usize>, limits: &DecisionLimits) -> Value {
    let mut choices: Vec<Value> = offered.into_iter().map(Value::from).collect();
    choices.push(Value::Null);
    json!({
        "type": "object",
        "properties": {
            "action": { "enum": choices },
            "speech": { "type": "string", "maxLength": limits.max_speech_chars },
            "thought": { "type": "string", "maxLength": limits.max_thought_chars }
        },
        "required": ["action", "speech", "thought"],
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marta() -> ActorSpec {
        serde_json::from_value(serde_json::json!({
            "id": "tavern:marta",
            "name": "Marta",
            "role": "innkeeper of the Gilded Tankard",
            "persona": ["Warm but shrewd.", "Remembers every debt."],
            "goals": ["Keep the peace."]
        }))
        .expect("a spec")
    }

    #[test]
    fn the_prompt_is_stable_part_first_then_actions_then_perception() {
        let prompt = decision_prompt(
            &marta(),
            &DecisionContext {
                perception: "You are in the common room.",
                actions_block: "<available_actions>\n...\n</available_actions>",
                ..DecisionContext::default()
            },
            &DecisionLimits::default(),
        );
        assert_eq!(
            prompt.system,
            "You play one character in a game. Each turn you choose one of the actions offered to you, or none.
Stay in character. You cannot change the world directly: the game carries out the action you choose, if it can.
Answer with exactly one JSON object and nothing else:
{\"action\": <the Index number of one offered action, or null to do nothing>, \"speech\": \"<what you say aloud, or an empty string>\", \"thought\": \"<a short private thought>\"}
Keep speech under 300 characters and thought under 500 characters.

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

    #[test]
    fn voice_traits_and_taboos_are_part_of_the_character() {
        let spec: ActorSpec = serde_json::from_value(serde_json::json!({
            "id": "tavern:marta", "name": "Marta", "role": "innkeeper",
            "voice": "brisk and warm", "traits": ["shrewd", "motherly"],
            "taboos": ["Never lets anyone into the cellar."]
        }))
        .expect("a spec");
        let prompt = decision_prompt(
            &spec,
            &DecisionContext::default(),
            &DecisionLimits::default(),
        );
        assert!(
            prompt.system.ends_with(
                "<character>\nYou are Marta, innkeeper.\nVoice: brisk and warm\nTraits: shrewd, motherly\n</character>\n\n<never>\n- Never lets anyone into the cellar.\n</never>"
            ),
            "{}",
            prompt.system
        );
    }

    #[test]
    fn memories_and_the_players_words_come_last() {
        let prompt = decision_prompt(
            &marta(),
            &DecisionContext {
                perception: "You are in the common room.",
                memories: &["Brom said: \"Trouble tonight.\""],
                player_says: Some("any rooms free"),
                actions_block: "<available_actions>\n...\n</available_actions>",
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
Reply to the player in character, in `speech`; this turn you take no action (`action`: null).

What do you do? Answer with the JSON object only."
        );
    }

    #[test]
    fn answers_are_capped_at_what_the_schema_allows() {
        assert_eq!(
            DecisionLimits::default().max_answer_tokens(),
            300 + 500 + 64
        );
    }

    #[test]
    fn the_schema_offers_only_the_indices_and_null() {
        let schema = decision_schema([1, 2, 3], &DecisionLimits::default());
        assert_eq!(
            schema["properties"]["action"]["enum"],
            serde_json::json!([1, 2, 3, null])
        );
        assert_eq!(schema["properties"]["speech"]["maxLength"], 300);
        assert_eq!(schema["additionalProperties"], false);
    }
}
