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

use bevy::platform::collections::HashMap;

use crate::prompt::{ActionList, BlockLine, estimate_tokens};
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
    // Each action's keeper: its most relevant line, the first among equals. An
    // action's lines usually come one after another: the best of each run is found
    // first, then the runs of one action compared.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        match runs.last_mut() {
            Some((first, best)) if lines[*first].action_id == line.action_id => {
                if line.relevance > lines[*best].relevance {
                    *best = i;
                }
            }
            _ => runs.push((i, i)),
        }
    }
    let mut keepers: HashMap<&str, usize> = HashMap::with_capacity(runs.len());
    for &(_, best) in &runs {
        keepers
            .entry(lines[best].action_id)
            .and_modify(|keeper| {
                if lines[best].relevance > lines[*keeper].relevance {
                    *keeper = best;
                }
            })
            .or_insert(best);
    }
    let mut keeper = vec![false; lines.len()];
    for &best in keepers.values() {
        keeper[best] = true;
    }
    // Keys are distinct (each holds its line's position), so any sort gives one order.
    let mut keys: Vec<(bool, u32, std::cmp::Reverse<usize>)> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| (keeper[i], line.relevance, std::cmp::Reverse(i)))
        .collect();
    keys.sort_unstable();
    keys.into_iter()
        .map(|(.., std::cmp::Reverse(i))| i)
        .collect()
}

/// Which lines to leave out, in a mask over `offered`, so that `block_tokens` of what
/// is left is within `budget`: the fewest lines in [`drop_order`]. All of them when
/// even one line does not fit. Apply it with [`OfferedActions::leave_out`].
///
/// The block's headers and its flat or grouped form make its size no simple sum of its
/// lines, so each count tried is measured by `block_tokens`, given the lines left
/// numbered again from 1. The search starts where the lines' own tokens say the block
/// fits, and usually measures the whole block and two counts.
pub fn trim_mask(
    offered: &OfferedActions,
    budget: usize,
    relevance: impl Fn(&AvailableAction<'_>) -> u32,
    mut block_tokens: impl FnMut(&[BlockLine<'_>]) -> usize,
) -> Vec<bool> {
    // Every line looked up once; each count tried keeps some, numbered again from 1.
    let all: Vec<BlockLine<'_>> = (0..offered.len()).map(|i| offered.line(i)).collect();
    let whole = block_tokens(&all);
    // Nothing to leave out: an empty offer's block is as short as it gets.
    if whole <= budget || all.is_empty() {
        return vec![false; all.len()];
    }
    let lines: Vec<OfferLine<'_>> = offered
        .iter()
        .map(|action| OfferLine::of(&action, relevance(&action)))
        .collect();
    let order = drop_order(&lines);
    let mut dropped = vec![false; lines.len()];
    let mut kept: Vec<BlockLine<'_>> = Vec::with_capacity(lines.len());
    let mut tokens_without = |count: usize| {
        dropped.fill(false);
        for &i in &order[..count] {
            dropped[i] = true;
        }
        kept.clear();
        let left = all.iter().zip(&dropped).filter(|(_, dropped)| !**dropped);
        kept.extend(left.enumerate().map(|(position, (line, _))| BlockLine {
            index: position + 1,
            ..*line
        }));
        block_tokens(&kept)
    };
    // Where the lines' own tokens say the block fits.
    let excess = whole - budget;
    let mut guess = 0;
    let mut freed = 0;
    while freed < excess && guess < order.len() {
        freed += lines[order[guess]].tokens;
        guess += 1;
    }
    let count = fewest_that_fit(1, lines.len(), guess, |count| {
        tokens_without(count) <= budget
    });
    let mut mask = vec![false; lines.len()];
    for &i in &order[..count] {
        mask[i] = true;
    }
    mask
}

/// The smallest count in `low..=high` that `fits`, searched from `guess` outwards,
/// then by bisection; `high` is taken to fit without asking. `fits` must hold of a
/// count whenever it holds of a smaller one.
fn fewest_that_fit(
    mut low: usize,
    mut high: usize,
    guess: usize,
    mut fits: impl FnMut(usize) -> bool,
) -> usize {
    if low >= high {
        return high;
    }
    let guess = guess.clamp(low, high);
    if guess < high {
        let mut step = 1;
        if fits(guess) {
            high = guess;
            // Down from the guess, by steps that double, until a count does not fit.
            while low < high {
                let probe = high.saturating_sub(step).max(low);
                if !fits(probe) {
                    low = probe + 1;
                    break;
                }
                high = probe;
                step *= 2;
            }
        } else {
            low = guess + 1;
            // Up from the guess, likewise, until a count fits.
            while low < high {
                let probe = (low + step - 1).min(high);
                if probe == high {
                    break;
                }
                if fits(probe) {
                    high = probe;
                    break;
                }
                low = probe + 1;
                step *= 2;
            }
        }
    }
    while low < high {
        let middle = (low + high) / 2;
        if fits(middle) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    low
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
        // An action's lines apart: its keeper is still its first most relevant line.
        let apart = [
            line("a:greet", 0),
            line("a:wait", 0),
            line("a:greet", 1),
            line("a:greet", 1),
            line("a:wait", 0),
        ];
        assert_eq!(drop_order(&apart), [4, 0, 3, 1, 2]);
    }

    #[test]
    fn an_empty_offer_over_its_budget_leaves_nothing_out() {
        let mask = trim_mask(&OfferedActions::default(), 10, |_| 0, |_| 60);
        assert!(mask.is_empty());
        assert_eq!(fewest_that_fit(1, 0, 0, |_| false), 0, "an empty range");
    }

    #[test]
    fn the_search_finds_the_fewest_that_fit_from_any_guess() {
        for high in 1..=20 {
            // Counts from `needed` on fit; more than `high` means none do.
            for needed in 1..=high + 1 {
                for guess in 0..=high + 1 {
                    let mut asked = Vec::new();
                    let found = fewest_that_fit(1, high, guess, |count| {
                        asked.push(count);
                        count >= needed
                    });
                    assert_eq!(
                        found,
                        needed.min(high),
                        "high {high}, needed {needed}, guess {guess}: asked {asked:?}"
                    );
                    assert!(!asked.contains(&high), "{high} is never asked");
                    if guess == needed && needed < high {
                        assert!(
                            asked.len() <= 2,
                            "a right guess and its neighbour: {asked:?}"
                        );
                    }
                }
            }
        }
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
