//! The offline weaver: a deterministic line from a plan when the model is slow,
//! down or not configured.

use super::Verbosity;
use super::plan::NarrationPlan;

/// Writes the narration for a plan without a model: the required fragments as
/// sentences, joined by plain connectives, with colors, the state variant and a few
/// traits at [`Verbosity::Full`]. The same plan always gives the same text, and every
/// fragment appears exactly as the plan holds it.
pub fn weave_offline(plan: &NarrationPlan<'_>, verbosity: Verbosity) -> String {
    let full = verbosity == Verbosity::Full;
    let fragments = &plan.fragments;
    let mut sentences: Vec<String> = Vec::with_capacity(4 + plan.effects.len());

    let mut action = match &fragments.subject {
        Some(subject) => format!("{subject} {}", fragments.action_core),
        None => fragments.action_core.to_string(),
    };
    if full {
        let colors = &fragments.action_color;
        for (index, color) in colors.iter().enumerate() {
            action.push_str(if index + 1 == colors.len() && index > 0 {
                ", and "
            } else {
                ", "
            });
            action.push_str(color);
        }
    }
    sentences.push(action);

    for effect in &plan.effects {
        let mut sentence = effect.core.to_string();
        if let (true, Some(color)) = (full, &effect.color) {
            sentence.push_str(" — ");
            sentence.push_str(color);
        }
        sentences.push(sentence);
    }

    if let (true, Some(state)) = (full, &fragments.new_state) {
        sentences.push(match &fragments.state_of {
            Some(entity) if is_noun_phrase(state) => format!("{entity} is {state}"),
            Some(entity) => format!("{entity} {state}"),
            None => state.to_string(),
        });
    }

    if let Some(primary) = plan.entity_refs.first().filter(|_| full) {
        let traits: Vec<&str> = primary.traits.iter().take(3).map(AsRef::as_ref).collect();
        if !traits.is_empty() {
            sentences.push(format!("{} — {}", primary.called, traits.join(", ")));
        }
    }

    let mut text = String::with_capacity(sentences.iter().map(|s| s.len() + 2).sum());
    for sentence in &sentences {
        if !text.is_empty() {
            text.push(' ');
        }
        push_sentence(&mut text, sentence);
    }
    if let Some(words) = plan.text {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str("It reads: \"");
        text.push_str(words.trim());
        text.push('"');
    }
    text
}

/// Whether a state variant reads as a noun phrase ("a reassuring weight at your
/// side") rather than a verb phrase ("rests against the wall").
fn is_noun_phrase(state: &str) -> bool {
    let first = state.split_whitespace().next().unwrap_or_default();
    [
        "a", "an", "the", "your", "his", "her", "their", "its", "one",
    ]
    .iter()
    .any(|article| first.eq_ignore_ascii_case(article))
}

/// Appends a sentence with its first letter capitalized and a full stop unless it
/// already ends in punctuation.
fn push_sentence(text: &mut String, sentence: &str) {
    let sentence = sentence.trim();
    let mut chars = sentence.chars();
    let Some(first) = chars.next() else {
        return;
    };
    text.extend(first.to_uppercase());
    text.push_str(chars.as_str());
    if !sentence.ends_with(['.', '!', '?', '"', '\'', '…']) {
        text.push('.');
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::narration::plan::{
        EntityRef, Person, PlanAction, PlanEffect, PlanFragments, Viewpoint,
    };
    use crate::narration::{Outcome, Verbosity};

    fn plan() -> NarrationPlan<'static> {
        NarrationPlan {
            action: PlanAction {
                verb: "take",
                actor: "Traveler",
                object: Some("sword"),
                indirect_object: None,
                instrument: None,
                outcome: Outcome::Success,
                failure_reason: None,
            },
            fragments: PlanFragments {
                subject: None,
                action_core: Cow::Borrowed("you claim the blade"),
                action_color: vec![
                    Cow::Borrowed("rust flakes onto your palm"),
                    Cow::Borrowed("it feels right in your hand"),
                ],
                new_state: Some(Cow::Borrowed("a reassuring weight at your side")),
                state_of: Some(Cow::Borrowed("the sword")),
            },
            effects: vec![PlanEffect {
                kind: "position_change",
                action: "step_down",
                core: Cow::Borrowed("stepping down from the worn table"),
                color: Some(Cow::Borrowed("its surface creaking")),
            }],
            entity_refs: vec![EntityRef {
                name: "sword",
                called: Cow::Borrowed("the sword"),
                traits: vec![
                    Cow::Borrowed("pitted blade"),
                    Cow::Borrowed("leather-wrapped hilt"),
                ],
                atmosphere: None,
            }],
            viewpoint: Viewpoint {
                person: Person::Second,
                place: None,
            },
            exits: Vec::new(),
            text: Some("Beware the wolf."),
        }
    }

    #[test]
    fn the_full_weave_holds_every_required_fragment_as_written() {
        let text = weave_offline(&plan(), Verbosity::Full);
        assert_eq!(
            text,
            "You claim the blade, rust flakes onto your palm, and it feels right in your hand. \
             Stepping down from the worn table — its surface creaking. \
             The sword is a reassuring weight at your side. \
             The sword — pitted blade, leather-wrapped hilt. \
             It reads: \"Beware the wolf.\""
        );
    }

    #[test]
    fn the_brief_weave_is_the_cores_only() {
        let text = weave_offline(&plan(), Verbosity::Brief);
        assert_eq!(
            text,
            "You claim the blade. Stepping down from the worn table. It reads: \"Beware the wolf.\""
        );
    }
}
