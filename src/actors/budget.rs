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
use crate::world::{AvailableAction, OfferedActions};

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

/// One offered action as trimming sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OfferLine<'a> {
    /// Its action's id: combinations of one action share it.
    pub action_id: &'a str,
    /// How much it matters to the actor now (higher is kept longer).
    pub relevance: u32,
    /// Its line's estimated tokens in the block.
    pub tokens: usize,
}

impl<'a> OfferLine<'a> {
    /// The line of an offered action, with its relevance.
    pub fn of(action: &AvailableAction<'a>, relevance: u32) -> Self {
        // `[Index: 12] Command: "…" - …` and its newline.
        let length = action.command.len() + action.description.len() + 26;
        Self {
            action_id: action.action_id,
            relevance,
            tokens: length.div_ceil(4),
        }
    }
}

/// The order in which an offer's lines are left out: extra
/// combinations before an action's most relevant one (the first among equals), least
/// relevant first, the last offered first.
pub fn drop_order(lines: &[OfferLine<'_>]) -> Vec<usize> {
    let keeper: Vec<bool> = (0..lines.len())
        .map(|i| {
            !(0..lines.len()).any(|j| {
                j != i
                    && lines[j].action_id == lines[i].action_id
                    && (lines[j].relevance > lines[i].relevance
                        || (lines[j].relevance == lines[i].relevance && j < i))
            })
        })
        .collect();
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| (keeper[i], lines[i].relevance, std::cmp::Reverse(i)));
    order
}

/// Which lines to leave out, in a mask over `offered`, so that `block_tokens` of what
/// is left is within `budget`: the fewest lines in [`drop_order`], found by bisection
/// (the block's headers and its flat or grouped form make its size no simple sum of
/// its lines). All of them when even one line does not fit. Apply it with
/// [`OfferedActions::leave_out`].
pub fn trim_mask(
    offered: &OfferedActions,
    budget: usize,
    relevance: impl Fn(&AvailableAction<'_>) -> u32,
    block_tokens: impl Fn(&OfferedActions) -> usize,
) -> Vec<bool> {
    let lines: Vec<OfferLine<'_>> = offered
        .iter()
        .map(|action| OfferLine::of(&action, relevance(&action)))
        .collect();
    let order = drop_order(&lines);
    let mask = |count: usize| {
        let mut dropped = vec![false; lines.len()];
        for &i in &order[..count] {
            dropped[i] = true;
        }
        dropped
    };
    let fits = |count: usize| {
        let mut trimmed = offered.clone();
        trimmed.leave_out(&mask(count));
        block_tokens(&trimmed) <= budget
    };
    let (mut low, mut high) = (0, lines.len());
    while low < high {
        let middle = (low + high) / 2;
        if fits(middle) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    mask(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(action_id: &'static str, relevance: u32) -> OfferLine<'static> {
        OfferLine {
            action_id,
            relevance,
            tokens: 10,
        }
    }

    #[test]
    fn extra_targets_go_first_least_relevant_and_last_first() {
        // greet Brom, greet Silas, greet Traveler (who matters most), wait.
        let lines = [
            line("a:greet", 0),
            line("a:greet", 0),
            line("a:greet", 1),
            line("a:wait", 0),
        ];
        assert_eq!(
            drop_order(&lines),
            [1, 0, 3, 2],
            "extras before keepers, least relevant and last first"
        );
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
