//! Token budgets for the parts of a decision prompt, and how each part is trimmed to
//! fit: deterministically, so the same world gives the same prompt.
//!
//! - Memories: the retrieval's own budget ([`RecallSettings::token_budget`](super::RecallSettings)):
//!   the least relevant are left out first.
//! - Perception: whole lines, from the first; the rest is left out.
//! - The player's words: whole words, from the first.
//! - The available actions: whatever the whole prompt's budget leaves them. Extra
//!   target combinations of an action go first (each action keeps its most relevant
//!   one), then whole actions; the least relevant first and, among equals, the last
//!   offered first. What is left is numbered again from 1.

use crate::prompt::estimate_tokens;
use crate::world::AvailableAction;

/// How many estimated tokens ([`estimate_tokens`]) a decision prompt and its parts may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptBudgets {
    /// The whole first prompt of a conversation with the model (system and user
    /// messages): the available actions are trimmed to fit what the rest leaves.
    pub total: usize,
    /// What the actor perceives.
    pub perception: usize,
    /// What the player said to it.
    pub player_says: usize,
    /// An actor's whole transcript: when the next turn would take it past this, the
    /// transcript starts again from a fresh prompt.
    pub transcript: usize,
}

impl Default for PromptBudgets {
    fn default() -> Self {
        Self {
            total: 1000,
            perception: 150,
            player_says: 100,
            transcript: 2000,
        }
    }
}

/// The leading whole lines of `text` that fit in `budget` estimated tokens.
pub fn fit_lines(text: &str, budget: usize) -> &str {
    if estimate_tokens(text) <= budget {
        return text;
    }
    let mut end = 0;
    for (start, _) in text.match_indices('\n') {
        if estimate_tokens(&text[..start]) > budget {
            break;
        }
        end = start;
    }
    &text[..end]
}

/// The leading whole words of `text` that fit in `budget` estimated tokens, with "…"
/// after them when any were left out.
pub fn fit_words(text: &str, budget: usize) -> String {
    if estimate_tokens(text) <= budget {
        return text.to_owned();
    }
    let mut kept = String::new();
    for word in text.split_whitespace() {
        let before = kept.len();
        if !kept.is_empty() {
            kept.push(' ');
        }
        kept.push_str(word);
        // Room for the ellipsis.
        if estimate_tokens(&kept) + 1 > budget {
            kept.truncate(before);
            break;
        }
    }
    kept.push('…');
    kept
}

/// Trims `offered` until `block_tokens` of it is within `budget`, as the
/// [module docs](self) say, and numbers what is left from 1. `relevance` ranks a
/// combination (higher is kept longer).
pub fn trim_offer(
    mut offered: Vec<AvailableAction>,
    budget: usize,
    relevance: impl Fn(&AvailableAction) -> u32,
    block_tokens: impl Fn(&[AvailableAction]) -> usize,
) -> Vec<AvailableAction> {
    let mut tokens = block_tokens(&offered);
    if tokens <= budget {
        return offered;
    }
    // Each action's most relevant combination (the first among equals) is its keeper.
    let scores: Vec<u32> = offered.iter().map(&relevance).collect();
    let keeper: Vec<bool> = (0..offered.len())
        .map(|i| {
            !(0..offered.len()).any(|j| {
                j != i
                    && offered[j].action_id == offered[i].action_id
                    && (scores[j] > scores[i] || (scores[j] == scores[i] && j < i))
            })
        })
        .collect();
    // Extras first, then keepers; least relevant first; the last offered first.
    let mut order: Vec<usize> = (0..offered.len()).collect();
    order.sort_by_key(|&i| (keeper[i], scores[i], std::cmp::Reverse(i)));
    let mut dropped = vec![false; offered.len()];
    for i in order {
        if tokens <= budget {
            break;
        }
        dropped[i] = true;
        tokens = tokens.saturating_sub(line_tokens(&offered[i]));
    }
    let mut position = 0;
    offered.retain(|_| {
        position += 1;
        !dropped[position - 1]
    });
    // The line estimates leave out group headers that emptied: check the real size.
    while !offered.is_empty() && block_tokens(&offered) > budget {
        let last = (0..offered.len())
            .min_by_key(|&i| (relevance(&offered[i]), std::cmp::Reverse(i)))
            .unwrap_or(offered.len() - 1);
        offered.remove(last);
    }
    for (position, action) in offered.iter_mut().enumerate() {
        action.index = position + 1;
    }
    offered
}

/// The estimated tokens of one action's line in the block.
fn line_tokens(action: &AvailableAction) -> usize {
    // `[Index: 12] Command: "…" - …` and its newline.
    (action.command.len() + action.description.len() + 26) / 4
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bevy::prelude::Entity;

    use super::*;

    fn action(index: usize, id: &str, command: &str, target: u32) -> AvailableAction {
        AvailableAction {
            index,
            action_id: Arc::from(id),
            targets: vec![Entity::from_raw_u32(target).expect("an entity")],
            command: command.to_owned(),
            description: Arc::from("does a thing"),
        }
    }

    /// What the block would take: the lines alone.
    fn lines(offered: &[AvailableAction]) -> usize {
        offered.iter().map(line_tokens).sum()
    }

    #[test]
    fn an_offer_within_budget_is_untouched() {
        let offered = vec![action(1, "a:greet", "greet Brom", 1)];
        assert_eq!(trim_offer(offered.clone(), 100, |_| 0, lines), offered);
    }

    #[test]
    fn extra_targets_go_first_least_relevant_and_last_first() {
        let offered = vec![
            action(1, "a:greet", "greet Brom", 1),
            action(2, "a:greet", "greet Silas", 2),
            action(3, "a:greet", "greet Traveler", 3),
            action(4, "a:wait", "wait", 4),
        ];
        // The traveller (target 3) matters most; the rest are equal.
        let relevance = |a: &AvailableAction| u32::from(a.targets[0].index_u32() == 3);
        let full = lines(&offered);
        let one_less = full - line_tokens(&offered[0]);
        let kept = trim_offer(offered.clone(), one_less, relevance, lines);
        let commands: Vec<&str> = kept.iter().map(|a| a.command.as_str()).collect();
        assert_eq!(commands, ["greet Brom", "greet Traveler", "wait"]);
        assert_eq!(
            kept.iter().map(|a| a.index).collect::<Vec<_>>(),
            [1, 2, 3],
            "numbered again"
        );
        let kept = trim_offer(offered.clone(), lines(&kept) - 1, relevance, lines);
        let commands: Vec<&str> = kept.iter().map(|a| a.command.as_str()).collect();
        assert_eq!(
            commands,
            ["greet Traveler", "wait"],
            "each action keeps its most relevant combination longest"
        );
        let kept = trim_offer(offered, 4, relevance, lines);
        assert!(kept.len() <= 1 && lines(&kept) <= 4, "{kept:?}");
    }

    #[test]
    fn lines_and_words_are_cut_whole() {
        let text = "You are in the common room.\nHere with you: Brom.\nYou see: a bench.";
        assert_eq!(fit_lines(text, 100), text);
        assert_eq!(fit_lines(text, 7), "You are in the common room.");
        assert_eq!(fit_lines(text, 1), "");
        assert_eq!(
            fit_words("any rooms free tonight", 100),
            "any rooms free tonight"
        );
        assert_eq!(fit_words("any rooms free tonight", 5), "any rooms free…");
    }
}
