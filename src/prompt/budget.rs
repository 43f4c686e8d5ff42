//! Token budgets for the parts of a decision prompt, and how each part is trimmed to
//! fit: deterministically, so the same world gives the same prompt.
//!
//! - Memories: the retrieval's own budget (`RecallSettings::token_budget` of smart actors):
//!   the least relevant are left out first.
//! - Perception: whole lines, from the first; the rest is left out. When not even the
//!   first line fits, its leading whole words that do.
//! - The player's words: the newest lines that fit, after "…"; when not even the
//!   newest one fits, as much of it as fits (its first whole words, then "…").
//! - The available actions: whatever the whole prompt's budget leaves them. Extra
//!   target combinations of an action go first (each action keeps its most relevant
//!   one), then whole actions; the least relevant first and, among equals, those of
//!   the mods offering more of them (each mod keeps its first lines longest), then
//!   the last offered first. One way to wait and one way to leave
//!   ([`Lifeline`](crate::content::Lifeline))
//!   stay when they were offered, even past the budget, so trimming never leaves an
//!   actor stuck. What is left is numbered again from 1.

use std::cmp::Reverse;

use bevy::platform::collections::HashMap;
use smallvec::SmallVec;

use super::actions_block::{BlockOptions, Measuring};
use super::tokens::{estimate_tokens, tokens_of_chars};
use crate::content::{ContentRegistry, Lifeline};
use crate::world::{AvailableAction, OfferedActions};

/// How many estimated tokens ([`estimate_tokens`]) a decision prompt and its parts may take.
#[derive(Debug, Clone, PartialEq, Eq, bevy::reflect::Reflect)]
pub struct PromptBudgets {
    /// The whole first prompt of a conversation with the model (system and user
    /// messages) but its available tasks: the available actions are trimmed to fit
    /// what the rest leaves.
    pub total: usize,
    /// The available-tasks block, on top of `total` (an actor offered no task spends
    /// none of it): the least relevant tasks are left out until it fits.
    pub tasks: usize,
    /// The abilities offered (their block, the rule and how to answer), on top of
    /// `total` (an actor offered none spends none of it): each says less (no examples,
    /// then no validation) and then the last are left out until it fits.
    pub abilities: usize,
    /// What the actor perceives.
    pub perception: usize,
    /// What the player said to it.
    pub player_says: usize,
    /// An actor's whole transcript: when the next turn would take it past this, the
    /// transcript starts again from a fresh prompt.
    pub transcript: usize,
}

impl Default for PromptBudgets {
    /// Budgets for a small model on a CPU, where every prompt token is latency: a
    /// first prompt of about 800 real tokens. A GPU server reads 1,000 or more in a
    /// fraction of a second; raise `total` and `tasks` for it to offer more.
    fn default() -> Self {
        Self {
            total: 700,
            tasks: 80,
            abilities: 500,
            perception: 150,
            player_says: 100,
            transcript: 2000,
        }
    }
}

/// The leading whole lines of `text` that fit in `budget` estimated tokens; when not
/// even the first one fits, its leading whole words that do (a place described at
/// length is still a place).
pub fn fit_lines(text: &str, budget: usize) -> &str {
    if estimate_tokens(text) <= budget {
        return text;
    }
    // The characters before each line break, counted once.
    let (mut end, mut counted, mut chars) = (0, 0, 0);
    for (line_break, _) in text.match_indices('\n') {
        chars += text[counted..line_break].chars().count();
        counted = line_break;
        if tokens_of_chars(chars) > budget {
            break;
        }
        end = line_break;
    }
    if end > 0 {
        return &text[..end];
    }
    // Not even the first line: its words, up to the space after the last that fits.
    let first = text.lines().next().unwrap_or_default();
    let mut chars = 0;
    for (space, _) in first.match_indices(' ') {
        let more = first[end..space].chars().count();
        if tokens_of_chars(chars + more) > budget {
            break;
        }
        (chars, end) = (chars + more, space);
    }
    &first[..end]
}

/// The leading whole words of `text` that fit in `budget` estimated tokens, with "…"
/// after them when any were left out; when not even the first word fits (a sentence
/// written without spaces, a pasted address), as much of it as does.
pub fn fit_words(text: &str, budget: usize) -> String {
    if estimate_tokens(text) <= budget {
        return text.to_owned();
    }
    let mut kept = String::new();
    // Characters kept, counted as they are added: counting all of them again for each
    // word made a long text with a large budget cost the square of its length.
    let mut chars = 0;
    for word in text.split_whitespace() {
        let before = kept.len();
        if !kept.is_empty() {
            kept.push(' ');
            chars += 1;
        }
        kept.push_str(word);
        chars += word.chars().count();
        // Room for the ellipsis.
        if tokens_of_chars(chars) + 1 > budget {
            kept.truncate(before);
            break;
        }
    }
    if kept.is_empty() {
        let first = text.split_whitespace().next().unwrap_or_default();
        let fits = (1..).take_while(|&chars| tokens_of_chars(chars) < budget);
        kept.extend(first.chars().zip(fits).map(|(c, _)| c));
    }
    kept.push('…');
    kept
}

/// What the player said, a line each, fitted to `budget` estimated tokens: whole when
/// it fits; otherwise its newest lines that fit, after "…", or when not even the
/// newest one does, as much of that one as fits ([`fit_words`]). A reply answers the
/// last thing said.
pub fn fit_said(said: &str, budget: usize) -> String {
    if estimate_tokens(said) <= budget {
        return said.to_owned();
    }
    // Blank lines say nothing: the newest line is the newest with words.
    let lines: Vec<&str> = said
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    // "…" and its line break first.
    let (mut kept, mut chars) = (0, 2);
    for line in lines.iter().rev() {
        let more = line.chars().count() + 1;
        if tokens_of_chars(chars + more) > budget {
            break;
        }
        (kept, chars) = (kept + 1, chars + more);
    }
    match kept {
        0 => fit_words(lines.last().copied().unwrap_or_default(), budget),
        _ => format!("…\n{}", lines[lines.len() - kept..].join("\n")),
    }
}

/// An offered action's id and how much it matters to the actor now (higher is kept
/// longer): all that the order of leaving out reads. Combinations of one action share its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Weighed<'a> {
    action_id: &'a str,
    relevance: u32,
    /// Its mod's position among the offer's mods.
    group: usize,
}

/// The order in which an offer's lines are left out: extra
/// combinations before an action's most relevant one (the first among equals), least
/// relevant first; among equals, the mod with more of them first ([`spread_ranks`]),
/// then the last offered first.
fn drop_order(lines: &[Weighed<'_>], order: &mut Vec<usize>) {
    order.clear();
    // Each action's keeper: its most relevant line, the first among equals. An
    // action's lines usually come one after another: the best of each run is found
    // first, then the runs of one action compared.
    let mut runs: SmallVec<[(usize, usize); 16]> = SmallVec::new();
    for (i, line) in lines.iter().enumerate() {
        match runs.last_mut() {
            Some((first, best)) if same_id(lines[*first].action_id, line.action_id) => {
                if line.relevance > lines[*best].relevance {
                    *best = i;
                }
            }
            _ => runs.push((i, i)),
        }
    }
    let mut keeper: SmallVec<[bool; 128]> = SmallVec::from_elem(false, lines.len());
    // The loops below index slices: a small vector's indexing checks where it lives.
    let keeper = keeper.as_mut_slice();
    for best in keepers(lines, &runs) {
        keeper[best] = true;
    }
    // Lines are left out class by class: a line's class is whether it is its
    // action's keeper (keepers last), then its relevance, then its spread rank (the
    // higher first); within a class, the last offered first. An offer's lines fall
    // in a few classes of keeping and relevance, found as they come, each split by
    // rank, and are placed by counting.
    let mut bases: SmallVec<[((bool, u32), usize); 8]> = SmallVec::new();
    let mut base_of: SmallVec<[u32; 64]> = SmallVec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let class = (keeper[i], line.relevance);
        let found = match bases.iter().position(|(known, _)| *known == class) {
            Some(found) => found,
            None if bases.len() == bases.inline_size() => {
                return sorted_drop_order(lines, keeper, order);
            }
            None => {
                bases.push((class, 0));
                bases.len() - 1
            }
        };
        base_of.push(found as u32);
    }
    let (base_of, bases) = (base_of.as_slice(), bases.as_mut_slice());
    let spread = spread_ranks(lines, base_of, bases.len());
    let spread = spread.as_slice();
    for (i, &base) in base_of.iter().enumerate() {
        // How many ranks the class has.
        let ranks = &mut bases[base as usize].1;
        *ranks = (*ranks).max(spread[i] as usize + 1);
    }
    // Each class and rank's count, at `first[class] + rank`, then where it starts
    // in the order: the classes by their key, each its highest rank first.
    let mut first: SmallVec<[usize; 8]> = SmallVec::with_capacity(bases.len());
    let mut slots = 0;
    for (_, ranks) in bases.iter() {
        first.push(slots);
        slots += ranks;
    }
    let first = first.as_slice();
    let slot = |i: usize| first[base_of[i] as usize] + spread[i] as usize;
    let mut start: SmallVec<[usize; 32]> = SmallVec::from_elem(0, slots);
    let start = start.as_mut_slice();
    for i in 0..lines.len() {
        start[slot(i)] += 1;
    }
    let mut ranked: SmallVec<[usize; 8]> = (0..bases.len()).collect();
    ranked.sort_unstable_by_key(|&class| bases[class].0);
    let mut next = 0;
    for class in ranked {
        for rank in (0..bases[class].1).rev() {
            let count = std::mem::replace(&mut start[first[class] + rank], next);
            next += count;
        }
    }
    order.resize(lines.len(), 0);
    for i in (0..lines.len()).rev() {
        let slot = slot(i);
        order[start[slot]] = i;
        start[slot] += 1;
    }
}

/// Each action's keeper among the best lines of its `runs` (first line, best line):
/// the most relevant, the first among equals. A few runs are compared one by one,
/// many by their action's id.
fn keepers(lines: &[Weighed<'_>], runs: &[(usize, usize)]) -> SmallVec<[usize; 16]> {
    let better = |best: usize, keeper: usize| lines[best].relevance > lines[keeper].relevance;
    if runs.len() <= RUNS_COMPARED_ONE_BY_ONE {
        let mut keepers: SmallVec<[usize; 16]> = SmallVec::new();
        for &(_, best) in runs {
            let id = lines[best].action_id;
            match (keepers.iter_mut()).find(|keeper| same_id(lines[**keeper].action_id, id)) {
                Some(keeper) if better(best, *keeper) => *keeper = best,
                Some(_) => {}
                None => keepers.push(best),
            }
        }
        return keepers;
    }
    let mut keepers: HashMap<&str, usize> = HashMap::with_capacity(runs.len());
    for &(_, best) in runs {
        keepers
            .entry(lines[best].action_id)
            .and_modify(|keeper| {
                if better(best, *keeper) {
                    *keeper = best;
                }
            })
            .or_insert(best);
    }
    keepers.into_values().collect()
}

/// Runs of an offer's lines compared one by one for their keepers; beyond, by id.
const RUNS_COMPARED_ONE_BY_ONE: usize = 16;

/// A line's class in the order of leaving out: whether it is its action's keeper, its
/// relevance, and its spread rank, the higher first.
type Class = (bool, u32, Reverse<u32>);

/// Each line's rank among the lines of its mod in its class of keeping and relevance
/// (`class_of` each line, below `classes`): 0 for the mod's first such line, 1 for its
/// second... Among equals the higher rank goes first, so an offer cut short keeps each
/// mod's best lines, not the first mods' all.
fn spread_ranks(lines: &[Weighed<'_>], class_of: &[u32], classes: usize) -> SmallVec<[u32; 64]> {
    let groups = lines.iter().map(|line| line.group + 1).max().unwrap_or(0);
    // The lines so far of each class and group, at `class * groups + group`.
    let mut so_far: SmallVec<[u32; 64]> = SmallVec::from_elem(0, classes * groups);
    let so_far = so_far.as_mut_slice();
    let ranks = lines.iter().zip(class_of).map(|(line, &class)| {
        let seen = &mut so_far[class as usize * groups + line.group];
        *seen += 1;
        *seen - 1
    });
    ranks.collect()
}

/// [`drop_order`] of lines in many classes, by sorting them.
fn sorted_drop_order(lines: &[Weighed<'_>], keeper: &[bool], order: &mut Vec<usize>) {
    // Each line's class of keeping and relevance, numbered.
    let mut classes: Vec<(bool, u32)> = (0..lines.len())
        .map(|i| (keeper[i], lines[i].relevance))
        .collect();
    classes.sort_unstable();
    classes.dedup();
    let class_of: Vec<u32> = (0..lines.len())
        .map(|i| {
            let class = (keeper[i], lines[i].relevance);
            classes.binary_search(&class).unwrap_or_default() as u32
        })
        .collect();
    let spread = spread_ranks(lines, &class_of, classes.len());
    // Each line's key: its class, then the last offered first. Keys are distinct
    // (each holds its line's position), so any sort gives one order.
    let mut keys: Vec<(Class, Reverse<usize>)> = (0..lines.len())
        .map(|i| {
            let class = (keeper[i], lines[i].relevance, Reverse(spread[i]));
            (class, Reverse(i))
        })
        .collect();
    keys.sort_unstable();
    order.extend(keys.into_iter().map(|(_, Reverse(i))| i));
}

/// Whether two action ids are the same: the lines of one action share its id.
fn same_id(one: &str, other: &str) -> bool {
    std::ptr::eq(one, other) || one == other
}

/// Which lines to leave out, in a mask over `offered`, so that its available-actions
/// block (from `registry` with `options`, numbered again from 1) is within `budget`
/// estimated tokens: the fewest lines, left out in order (extra combinations of an action
/// before its most relevant one, the least relevant by `relevance` first, among equals
/// those of the mods offering more of them, then the last offered first). Of the lines
/// that are a way to wait or to leave ([`OfferedActions::lifelines`]), the last of each
/// kind in that order stays, even when the block is then over its budget; every other
/// line goes when even one does not fit. Apply it with [`OfferedActions::leave_out`].
///
/// The block is not written to be measured: each of its parts is measured once, and
/// each line left out takes its part away.
pub fn trim_mask(
    offered: &OfferedActions,
    budget: usize,
    relevance: impl Fn(&AvailableAction<'_>) -> u32,
    registry: &ContentRegistry,
    options: &BlockOptions,
) -> Vec<bool> {
    let mut mask = Vec::new();
    let block = (registry, options);
    let scratch = &mut TrimScratch::default();
    trim_mask_with(offered, budget, relevance, block, scratch, &mut mask);
    mask
}

/// Which tasks to leave out, in a mask over `tasks`, so that their available-tasks
/// block (from `registry` with `options`, numbered after the `after` actions shown) is
/// within `budget` estimated tokens: the least relevant by `relevance` first, among
/// equals the last offered first, until the rest fits (no task left is no block, which
/// always does). Apply it with [`OfferedActions::leave_out`].
///
/// As [`trim_mask`], the block is not written to be measured: each of its parts is
/// measured once, and each task left out takes its part away.
pub fn task_trim_mask<'a>(
    tasks: impl IntoIterator<Item = impl std::borrow::Borrow<AvailableAction<'a>>>,
    (after, budget): (usize, usize),
    relevance: impl Fn(&AvailableAction<'_>) -> u32,
    registry: &ContentRegistry,
    options: &BlockOptions,
) -> Vec<bool> {
    let mut measuring = Measuring::default();
    // Each task's relevance and position: the order of leaving out, once sorted.
    let mut order: Vec<(u32, Reverse<usize>)> = Vec::new();
    for (position, task) in tasks.into_iter().enumerate() {
        let task = task.borrow();
        measuring.add(task);
        order.push((relevance(task), Reverse(position)));
    }
    let mut block = measuring.measure_tasks(registry, options, after);
    order.sort_unstable();
    let mut mask = vec![false; order.len()];
    for (_, Reverse(position)) in order {
        if tokens_of_chars(block.chars()) <= budget {
            break;
        }
        mask[position] = true;
        block.leave_out(position);
    }
    mask
}

/// The working space of [`trim_mask_with`], kept from one offer to the next so that
/// trimming many offers allocates once.
#[derive(Default)]
pub(crate) struct TrimScratch {
    /// Each line's characters but its number, and its group.
    measured: Vec<(usize, usize)>,
    /// Each line weighed; empty between offers, so it borrows none.
    weighed: Vec<Weighed<'static>>,
    lifelines: Vec<Option<Lifeline>>,
    order: Vec<usize>,
}

/// A vector of another lifetime's items, empty, in `items`'s memory: a buffer that
/// borrows nothing between uses.
fn reuse<T, U>(mut items: Vec<T>) -> Vec<U> {
    items.clear();
    // Collecting an emptied vector's items into one of the same layout keeps its memory.
    items.into_iter().filter_map(|_| None).collect()
}

/// [`trim_mask`] into `mask`, weighing lines by `relevance` and measuring the block
/// from `block`'s registry and options, with buffers from `scratch`.
pub(crate) fn trim_mask_with(
    offered: &OfferedActions,
    budget: usize,
    relevance: impl Fn(&AvailableAction<'_>) -> u32,
    (registry, options): (&ContentRegistry, &BlockOptions),
    scratch: &mut TrimScratch,
    mask: &mut Vec<bool>,
) {
    mask.clear();
    mask.resize(offered.len(), false);
    // Each line measured and weighed in one pass.
    let mut measuring = Measuring::with_lines(std::mem::take(&mut scratch.measured));
    let mut lines: Vec<Weighed<'_>> = reuse(std::mem::take(&mut scratch.weighed));
    lines.reserve(offered.len());
    for action in offered {
        let group = measuring.add(&action);
        lines.push(Weighed {
            action_id: action.action_id,
            relevance: relevance(&action),
            group,
        });
    }
    let mut block = measuring.measure(registry, options);
    // Nothing to leave out: an empty offer's block is as short as it gets.
    if tokens_of_chars(block.chars()) > budget && !offered.is_empty() {
        // Lifelines matter only to an offer that must lose lines.
        let lifelines = &mut scratch.lifelines;
        lifelines.clear();
        lifelines.extend(offered.lifelines());
        let order = &mut scratch.order;
        drop_order(&lines, order);
        // The lifelines that stay: of each kind, the last line in the order.
        let mut kept: [Option<usize>; 2] = [None; 2];
        for &position in order.iter().rev() {
            let kind = match lifelines[position] {
                Some(Lifeline::Wait) => 0,
                Some(Lifeline::Leave) => 1,
                None => continue,
            };
            kept[kind].get_or_insert(position);
        }
        for &position in order.iter() {
            if kept.contains(&Some(position)) {
                continue;
            }
            mask[position] = true;
            block.leave_out(position);
            if tokens_of_chars(block.chars()) <= budget {
                break;
            }
        }
    }
    scratch.measured = block.into_lines();
    scratch.weighed = reuse(lines);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::action_namespace;

    /// The mods of the tests' actions: a line's group is its mod's position here.
    const MODS: [&str; 6] = ["a", "b", "c", "conversation", "core", "positioning"];

    /// A line of this action, weighed; its group is its mod's (the namespace of its
    /// id) in [`MODS`].
    fn line(action_id: &'static str, relevance: u32) -> Weighed<'static> {
        let namespace = action_namespace(action_id);
        let group = (MODS.iter().position(|known| *known == namespace))
            .unwrap_or_else(|| panic!("`{namespace}` is not among the tests' mods"));
        Weighed {
            action_id,
            relevance,
            group,
        }
    }

    fn order_of(lines: &[Weighed<'_>]) -> Vec<usize> {
        // Into a buffer that held another order, which must not show through.
        let mut order = vec![9; 50];
        drop_order(lines, &mut order);
        order
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
            order_of(&lines),
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
        assert_eq!(order_of(&apart), [4, 0, 3, 1, 2]);
    }

    /// The order as its rule says: keepers (each action's most relevant line, the
    /// first among equals) last, then by relevance, then the lines of a mod that has
    /// more of them first, then the last offered first.
    fn reference_order(lines: &[Weighed<'_>]) -> Vec<usize> {
        let keeper = |i: usize| {
            let line = &lines[i];
            lines
                .iter()
                .position(|other| {
                    other.action_id == line.action_id
                        && lines
                            .iter()
                            .filter(|l| l.action_id == line.action_id)
                            .all(|l| l.relevance <= other.relevance)
                })
                .is_some_and(|first_best| first_best == i)
        };
        // How many lines of its mod, as good as it, come before it.
        let rank = |i: usize| {
            let class = (keeper(i), lines[i].relevance);
            let namespace = action_namespace(lines[i].action_id);
            (0..i)
                .filter(|&j| {
                    (keeper(j), lines[j].relevance) == class
                        && action_namespace(lines[j].action_id) == namespace
                })
                .count()
        };
        let mut order: Vec<usize> = (0..lines.len()).collect();
        order.sort_by_key(|&i| (keeper(i), lines[i].relevance, Reverse(rank(i)), Reverse(i)));
        order
    }

    #[test]
    fn an_offer_cut_short_keeps_each_mods_best_lines() {
        // Three positioning actions, then one conversation action, all as relevant.
        let lines = [
            line("positioning:get_close", 1),
            line("positioning:step_back", 1),
            line("positioning:sit_down", 1),
            line("conversation:greet", 1),
        ];
        assert_eq!(
            order_of(&lines),
            [2, 1, 3, 0],
            "the third and second positioning lines go before the only greeting"
        );
    }

    #[test]
    fn lines_in_few_classes_or_many_go_in_the_same_order() {
        let ids = ["a:greet", "a:wait", "b:take", "b:give", "c:go"];
        // A small deterministic generator, so every run checks the same offers.
        let mut state: u64 = 7;
        let mut next = |below: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % below
        };
        for round in 0..400 {
            let len = next(40) as usize;
            // Up to 2 relevances (few classes) or up to 30 (many).
            let relevances = if round % 2 == 0 { 2 } else { 30 };
            let lines: Vec<Weighed<'_>> = (0..len)
                .map(|_| {
                    line(
                        ids[next(ids.len() as u64) as usize],
                        next(relevances) as u32,
                    )
                })
                .collect();
            assert_eq!(order_of(&lines), reference_order(&lines), "{lines:?}");
        }
    }

    #[test]
    fn a_reused_buffer_keeps_its_memory() {
        let mut weighed: Vec<Weighed<'static>> = Vec::with_capacity(40);
        weighed.push(line("a:greet", 1));
        let id = String::from("a:wait");
        let mut reused: Vec<Weighed<'_>> = reuse(weighed);
        assert!(reused.is_empty() && reused.capacity() >= 40);
        reused.push(Weighed {
            action_id: &id,
            relevance: 0,
            group: 0,
        });
        let back: Vec<Weighed<'static>> = reuse(reused);
        assert!(back.is_empty() && back.capacity() >= 40);
    }

    /// The tasks left out by writing their block and leaving out the least relevant
    /// (the last of equals) until it fits: what [`task_trim_mask`] gives without
    /// writing a block.
    fn tasks_left_out_one_by_one(
        tasks: &[AvailableAction<'_>],
        (after, budget): (usize, usize),
        relevance: impl Fn(&AvailableAction<'_>) -> u32,
        registry: &ContentRegistry,
    ) -> Vec<bool> {
        let mut shown: Vec<usize> = (0..tasks.len()).collect();
        loop {
            let kept = (shown.iter().enumerate()).map(|(i, &position)| AvailableAction {
                index: i + 1,
                ..tasks[position]
            });
            let mut block = String::new();
            let options = BlockOptions::default();
            super::super::write_available_tasks(&mut block, kept, after, registry, &options);
            let least = shown.iter().rev().min_by_key(|&&p| relevance(&tasks[p]));
            match least {
                Some(&least) if estimate_tokens(&block) > budget => {
                    shown.retain(|&position| position != least);
                }
                _ => break,
            }
        }
        (0..tasks.len()).map(|p| !shown.contains(&p)).collect()
    }

    #[test]
    fn tasks_are_left_out_least_relevant_and_last_first_until_they_fit() {
        let commands = ["serve Ann", "fetch the key", "tidy the hall", "serve Bob"];
        let tasks: Vec<AvailableAction<'static>> = (0..40)
            .map(|i| AvailableAction {
                index: i + 1,
                action_id: ["a:serve", "b:fetch", "a:tidy", "c:serve"][i % 4],
                targets: &[],
                command: commands[(i * 7) % 4],
                description: "a task",
            })
            .collect();
        let relevance = |task: &AvailableAction<'_>| (task.index * 5 % 3) as u32;
        let registry = ContentRegistry::default();
        let options = BlockOptions::default();
        let mut seen = std::collections::BTreeSet::new();
        for after in [0, 7, 95] {
            for budget in (0..=700).step_by(9) {
                let mask = task_trim_mask(&tasks, (after, budget), relevance, &registry, &options);
                let expected =
                    tasks_left_out_one_by_one(&tasks, (after, budget), relevance, &registry);
                assert_eq!(mask, expected, "after {after}, budget {budget}");
                seen.insert(mask.iter().filter(|&&out| out).count());
            }
        }
        assert!(
            seen.contains(&0) && seen.contains(&40) && seen.len() > 20,
            "{seen:?}"
        );
    }

    #[test]
    fn an_empty_offer_over_its_budget_leaves_nothing_out() {
        let registry = crate::content::ContentRegistry::default();
        let options = BlockOptions::default();
        let mask = trim_mask(&OfferedActions::default(), 10, |_| 0, &registry, &options);
        assert!(mask.is_empty());
    }

    #[test]
    fn lines_and_words_are_cut_whole() {
        let text = "You are in the common room.\nHere with you: Brom.\nYou see: a bench.";
        assert_eq!(fit_lines(text, 100), text);
        assert_eq!(fit_lines(text, 7), "You are in the common room.");
        // Not even the first line: its first words.
        assert_eq!(fit_lines(text, 3), "You are in");
        assert_eq!(fit_lines(text, 1), "You");
        assert_eq!(fit_lines(text, 0), "");
        assert_eq!(fit_lines("Everywhere-and-nowhere.\nExits: none.", 2), "");
        // Budgets count characters, not bytes: "Ærøskøbing" is 10 of them, 13 bytes.
        let text = "Ærøskøbing.\nÆrø.\nHere.";
        assert_eq!(fit_lines(text, 3), "Ærøskøbing.");
        assert_eq!(fit_lines(text, 4), "Ærøskøbing.\nÆrø.");
        assert_eq!(
            fit_words("any rooms free tonight", 100),
            "any rooms free tonight"
        );
        assert_eq!(fit_words("any rooms free tonight", 5), "any rooms free…");
    }

    #[test]
    fn lines_said_keep_the_newest_that_fit() {
        let said = "my name is Ann.\nI came by the north road, three days of rain.\nAny rooms?";
        assert_eq!(fit_said(said, 100), said, "whole when it fits");
        assert_eq!(
            fit_said(said, 16),
            "…\nI came by the north road, three days of rain.\nAny rooms?"
        );
        assert_eq!(fit_said(said, 5), "…\nAny rooms?");
        assert_eq!(fit_said(said, 3), "Any rooms?", "the newest line alone");
        assert_eq!(fit_said(said, 2), "Any…", "its first words");
        // A blank line last says nothing: the line before it is the newest.
        let long = format!("{}\n \n", "word ".repeat(200));
        let fitted = fit_said(&long, 20);
        assert!(fitted.starts_with("word word"), "{fitted:?}");
        for budget in [2, 3, 5, 16] {
            assert!(
                estimate_tokens(&fit_said(said, budget)) <= budget,
                "{budget}"
            );
        }
    }

    #[test]
    fn a_first_word_too_long_for_the_budget_is_cut() {
        // A sentence written without spaces, and a pasted address.
        let sentence = "字".repeat(500);
        let fitted = fit_words(&sentence, 100);
        assert!(fitted.starts_with("字字字"), "{fitted}");
        assert!(fitted.ends_with('…'));
        assert!(
            estimate_tokens(&fitted) <= 100,
            "{}",
            estimate_tokens(&fitted)
        );
        assert_eq!(
            fit_words("  https://example.com/a/very/long/path then more", 3),
            "https://…"
        );
        assert_eq!(fit_words("anything", 0), "…");
    }
}
