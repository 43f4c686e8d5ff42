//! The `<abilities>` block: each ability an actor may invoke, described the same way —
//! what it does, when to use it, what inputs it needs and where they may come from —
//! in 5 to 7 lines, and the rule that goes with them ([`INVOKE_OR_ASK`]).
//!
//! ```text
//! <abilities>
//! - tavern:rent_room
//!   What: Rents the guest a room for some nights.
//!   When: Someone asks for a room.
//!   Inputs: Explicit. Required: nights (a whole number from 1 to 14: how many nights). If a required input is missing, ask for it.
//!   Infer from: the player's current line, who you are talking to.
//! </abilities>
//! ```
//!
//! The block names no entity: an entity input's candidates change with the world, and
//! the answer's schema lists them, so the block stays the same turn after turn.

use super::estimate_tokens;
use crate::content::{AbilityDefinition, AbilityInput, InputMode, InputType};

/// The rule for abilities, in one sentence: invoke only with what an ability needs,
/// else ask.
pub const INVOKE_OR_ASK: &str = "Use an ability only when every input it requires was said or can be inferred as it allows; otherwise ask one short question for what is missing, and never guess an input.";

/// What an ability with required inputs tells the model to do when one is missing.
const ASK_WHEN_MISSING: &str = "If a required input is missing, ask for it.";

/// What an implicit ability with required inputs tells the model to do when nothing
/// usable can be inferred.
const ASK_WHEN_NOTHING: &str = "If nothing usable can be inferred, ask for it.";

/// The `<abilities>` block of `abilities`, in their order; empty for none.
pub fn render_abilities_block<'a>(
    abilities: impl IntoIterator<Item = &'a AbilityDefinition>,
) -> String {
    let mut out = String::new();
    write_abilities_block(&mut out, abilities);
    out
}

/// Like [`render_abilities_block`], appending to `out`; nothing at all for no ability.
pub fn write_abilities_block<'a>(
    out: &mut String,
    abilities: impl IntoIterator<Item = &'a AbilityDefinition>,
) {
    write_block(out, abilities, Detail::Whole);
}

/// How much of each ability a block says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detail {
    /// Every line.
    Whole,
    /// All but the examples.
    NoExamples,
    /// All but the examples and the validation.
    Plain,
}

/// Writes into `out` the `<abilities>` block of as many of `abilities` (the first) as
/// fit in `budget` estimated tokens, each as whole as all of them allow: without its
/// examples, then without its validation, before any is left out. Returns how many it
/// shows; at least the first, however long.
pub fn write_abilities_block_within(
    out: &mut String,
    abilities: &[&AbilityDefinition],
    budget: usize,
) -> usize {
    let start = out.len();
    for shown in (1..=abilities.len()).rev() {
        for detail in [Detail::Whole, Detail::NoExamples, Detail::Plain] {
            out.truncate(start);
            write_block(out, abilities[..shown].iter().copied(), detail);
            if estimate_tokens(&out[start..]) <= budget {
                return shown;
            }
        }
    }
    // Not even one fits: the first, plainly, rather than none.
    out.truncate(start);
    let shown = abilities.len().min(1);
    write_block(out, abilities[..shown].iter().copied(), Detail::Plain);
    shown
}

fn write_block<'a>(
    out: &mut String,
    abilities: impl IntoIterator<Item = &'a AbilityDefinition>,
    detail: Detail,
) {
    let mut abilities = abilities.into_iter().peekable();
    if abilities.peek().is_none() {
        return;
    }
    out.push_str("<abilities>\n");
    for ability in abilities {
        write_ability(out, ability, detail);
    }
    out.push_str("</abilities>");
}

/// One ability: its id, then What, When, Inputs and Infer from, and where there is
/// something to say (and `detail` keeps it), Validation and Examples.
fn write_ability(out: &mut String, ability: &AbilityDefinition, detail: Detail) {
    let inputs = &ability.inputs;
    out.push_str("- ");
    out.push_str(&ability.id);
    line(out, "What: ", ability.what.trim());
    line(out, "When: ", ability.when.trim());
    out.push_str("  Inputs: ");
    out.push_str(inputs.mode.title());
    out.push('.');
    if inputs.required.is_empty() && inputs.optional.is_empty() {
        out.push_str(" None.");
    }
    for (label, list) in [
        (" Required: ", &inputs.required),
        (" Optional: ", &inputs.optional),
    ] {
        if list.is_empty() {
            continue;
        }
        out.push_str(label);
        for (position, input) in list.iter().enumerate() {
            if position > 0 {
                out.push_str(", ");
            }
            write_input(out, input);
        }
        out.push('.');
    }
    if !inputs.required.is_empty() {
        out.push(' ');
        out.push_str(match inputs.mode {
            InputMode::Implicit => ASK_WHEN_NOTHING,
            InputMode::Explicit | InputMode::Mixed => ASK_WHEN_MISSING,
        });
    }
    out.push('\n');
    out.push_str("  Infer from: ");
    for (position, source) in inputs.infer_from.iter().enumerate() {
        if position > 0 {
            out.push_str(", ");
        }
        out.push_str(source.phrase());
    }
    out.push_str(".\n");
    if !inputs.validation.trim().is_empty() && detail != Detail::Plain {
        line(out, "Validation: ", inputs.validation.trim());
    }
    if !inputs.examples.is_empty() && detail == Detail::Whole {
        out.push_str("  Examples: ");
        for (position, example) in inputs.examples.iter().enumerate() {
            if position > 0 {
                out.push_str("; ");
            }
            out.push_str(example.trim().trim_end_matches('.'));
        }
        out.push_str(".\n");
    }
}

/// A line of an ability: `  <label><text>`, after the line before.
fn line(out: &mut String, label: &str, text: &str) {
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("  ");
    out.push_str(label);
    out.push_str(text);
    out.push('\n');
}

/// One input: `name (what it takes: its description)`.
fn write_input(out: &mut String, input: &AbilityInput) {
    out.push_str(&input.name);
    out.push_str(" (");
    match input.kind {
        InputType::Entity => out.push_str("someone or something here"),
        InputType::Integer => {
            out.push_str("a whole number");
            write_range(out, input);
        }
        InputType::Number => {
            out.push_str("a number");
            write_range(out, input);
        }
        InputType::Text => {
            out.push_str("text");
            if let Some(max) = input.max_length {
                out.push_str(" of at most ");
                out.push_str(itoa::Buffer::new().format(max));
                out.push_str(" characters");
            }
        }
        InputType::Choice => {
            out.push_str("one of: ");
            for (position, choice) in input.choices.iter().enumerate() {
                if position > 0 {
                    out.push_str(", ");
                }
                out.push_str(choice);
            }
        }
    }
    let description = input.description.trim();
    if !description.is_empty() {
        out.push_str(": ");
        out.push_str(description);
    }
    out.push(')');
}

/// A number's range: " from 1 to 14", " of at least 1", " of at most 14".
fn write_range(out: &mut String, input: &AbilityInput) {
    match (input.min, input.max) {
        (Some(min), Some(max)) => {
            out.push_str(" from ");
            write_number(out, min);
            out.push_str(" to ");
            write_number(out, max);
        }
        (Some(min), None) => {
            out.push_str(" of at least ");
            write_number(out, min);
        }
        (None, Some(max)) => {
            out.push_str(" of at most ");
            write_number(out, max);
        }
        (None, None) => {}
    }
}

/// A number as a person writes it (`1`, not `1.0`; `2.5`), as `f64` displays it.
fn write_number(out: &mut String, number: f64) {
    use std::fmt::Write;
    // Writing to a `String` cannot fail.
    let _ = write!(out, "{number}");
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn ability(value: Value) -> AbilityDefinition {
        serde_json::from_value(value).expect("an ability")
    }

    fn rent_room() -> AbilityDefinition {
        ability(json!({
            "id": "tavern:rent_room",
            "description": "Rent a room at the inn.",
            "what": "Rents the guest a room for a number of nights, for a coin a night.",
            "when": "The person you are talking to asks for a room or a bed for the night.",
            "inputs": {
                "mode": "explicit",
                "required": [{ "name": "nights", "type": "integer", "min": 1, "max": 14,
                               "description": "how many nights" }],
                "optional": [{ "name": "guest", "type": "entity", "scope": "characters_here",
                               "description": "who stays" }],
                "inferFrom": ["current_line", "partner"],
                "validation": "Nights is a whole number from 1 to 14.",
                "examples": ["\"A room for two nights\" → nights 2"]
            }
        }))
    }

    fn pour_drink() -> AbilityDefinition {
        ability(json!({
            "id": "tavern:pour_drink",
            "description": "Pour a drink.",
            "what": "Pours the guest a drink from the bar.",
            "when": "The person you are talking to orders a drink.",
            "inputs": {
                "mode": "implicit",
                "optional": [{ "name": "drink", "type": "choice",
                               "choices": ["ale", "stout", "wine"], "description": "which drink" }],
                "validation": "Ale when none is named."
            }
        }))
    }

    fn play_song() -> AbilityDefinition {
        ability(json!({
            "id": "tavern:play_song",
            "description": "Play a song.",
            "what": "Plays a song on the lute.",
            "when": "Someone asks for music.",
            "inputs": {
                "mode": "mixed",
                "optional": [{ "name": "song", "type": "text", "maxLength": 60 }],
                "inferFrom": ["current_line", "recent_lines"]
            }
        }))
    }

    #[test]
    fn an_explicit_ability_shows_its_inputs_sources_validation_and_example() {
        assert_eq!(
            render_abilities_block([&rent_room()]),
            "<abilities>
- tavern:rent_room
  What: Rents the guest a room for a number of nights, for a coin a night.
  When: The person you are talking to asks for a room or a bed for the night.
  Inputs: Explicit. Required: nights (a whole number from 1 to 14: how many nights). Optional: guest (someone or something here: who stays). If a required input is missing, ask for it.
  Infer from: the player's current line, who you are talking to.
  Validation: Nights is a whole number from 1 to 14.
  Examples: \"A room for two nights\" → nights 2.
</abilities>"
        );
    }

    #[test]
    fn implicit_mixed_and_bare_abilities_say_only_what_they_have() {
        let bare = ability(json!({
            "id": "tavern:wave", "description": "Wave.", "what": "Waves.", "when": "Greeted."
        }));
        assert_eq!(
            render_abilities_block([&pour_drink(), &play_song(), &bare]),
            "<abilities>
- tavern:pour_drink
  What: Pours the guest a drink from the bar.
  When: The person you are talking to orders a drink.
  Inputs: Implicit. Optional: drink (one of: ale, stout, wine: which drink).
  Infer from: the player's current line.
  Validation: Ale when none is named.
- tavern:play_song
  What: Plays a song on the lute.
  When: Someone asks for music.
  Inputs: Mixed. Optional: song (text of at most 60 characters).
  Infer from: the player's current line, the player's recent lines.
- tavern:wave
  What: Waves.
  When: Greeted.
  Inputs: Explicit. None.
  Infer from: the player's current line.
</abilities>"
        );
    }

    #[test]
    fn an_implicit_ability_with_a_required_input_asks_when_nothing_can_be_inferred() {
        let mut implicit = pour_drink();
        implicit.inputs.required = std::mem::take(&mut implicit.inputs.optional);
        let block = render_abilities_block([&implicit]);
        assert!(block.contains(
            "Inputs: Implicit. Required: drink (one of: ale, stout, wine: which drink). If nothing usable can be inferred, ask for it.\n"
        ), "{block}");
    }

    #[test]
    fn a_block_over_its_budget_says_less_of_each_before_leaving_any_out() {
        let (rent, pour, song) = (rent_room(), pour_drink(), play_song());
        let all = [&rent, &pour, &song];
        let whole = render_abilities_block(all);
        let fits = |budget: usize| {
            let mut out = String::from("before\n");
            let shown = write_abilities_block_within(&mut out, &all, budget);
            assert!(out.starts_with("before\n<abilities>\n"), "{out}");
            (shown, out["before\n".len()..].to_owned())
        };
        assert_eq!(fits(estimate_tokens(&whole)), (3, whole.clone()));
        let (shown, block) = fits(estimate_tokens(&whole) - 1);
        assert_eq!(shown, 3);
        assert!(
            !block.contains("Examples:") && block.contains("Validation:"),
            "{block}"
        );
        let mut plain = String::new();
        write_block(&mut plain, all, Detail::Plain);
        assert_eq!(fits(estimate_tokens(&plain)), (3, plain.clone()));
        let (shown, block) = fits(estimate_tokens(&plain) - 1);
        assert_eq!(shown, 2, "the last left out");
        assert!(
            block.contains("Examples:"),
            "the two left are whole again: {block}"
        );
        let (shown, block) = fits(1);
        assert_eq!(shown, 1, "the first, however long");
        assert!(block.contains("- tavern:rent_room") && !block.contains("Validation:"));
        assert_eq!(write_abilities_block_within(&mut String::new(), &[], 0), 0);
    }

    #[test]
    fn no_ability_writes_nothing() {
        assert_eq!(render_abilities_block([]), "");
        let mut out = String::from("before");
        write_abilities_block(&mut out, []);
        assert_eq!(out, "before");
    }

    #[test]
    fn each_ability_takes_three_to_six_lines_after_its_id() {
        let block = render_abilities_block([&rent_room(), &pour_drink(), &play_song()]);
        let mut counts = Vec::new();
        for line in block.lines() {
            if line.starts_with("- ") {
                counts.push(0);
            } else if line.starts_with("  ")
                && let Some(count) = counts.last_mut()
            {
                *count += 1;
            }
        }
        assert_eq!(counts, [6, 5, 4]);
    }

    #[test]
    fn numbers_are_written_as_people_write_them() {
        let mut out = String::new();
        write_number(&mut out, 1.0);
        out.push(' ');
        write_number(&mut out, 2.5);
        out.push(' ');
        write_number(&mut out, -3.0);
        assert_eq!(out, "1 2.5 -3");
        let half = ability(json!({
            "id": "a:b", "description": "d", "what": "w", "when": "w",
            "inputs": { "required": [{ "name": "tip", "type": "number", "min": 0.5 }] }
        }));
        assert!(render_abilities_block([&half]).contains("tip (a number of at least 0.5)"));
    }

    #[test]
    fn the_rule_is_one_sentence() {
        assert!(!INVOKE_OR_ASK.contains('\n'));
        assert_eq!(INVOKE_OR_ASK.matches(". ").count(), 0);
        assert!(INVOKE_OR_ASK.ends_with('.'));
    }
}
