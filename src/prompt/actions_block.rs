//! The `<available_actions>` block: the offered actions, grouped by mod with each
//! mod's Purpose and Consider-when lines, or a flat list when there are few.

use crate::content::{ContentRegistry, ModActionMetadata, action_namespace};

/// An offered action as the block shows it.
pub trait ActionLine {
    /// Its number, from 1.
    fn index(&self) -> usize;
    /// Its `mod:action` id; the namespace picks the group.
    fn action_id(&self) -> &str;
    /// The rendered command.
    fn command(&self) -> &str;
    /// What the action does.
    fn description(&self) -> &str;
}

/// Where groups come from: each mod's metadata and its place in the group order.
pub trait ActionCatalog {
    /// The group's position (lower first; ties alphabetical) and the mod's metadata.
    fn action_group(&self, mod_id: &str) -> (usize, Option<&ModActionMetadata>);
}

impl ActionCatalog for ContentRegistry {
    fn action_group(&self, mod_id: &str) -> (usize, Option<&ModActionMetadata>) {
        (self.group_rank(mod_id), self.action_metadata(mod_id))
    }
}

/// When the block groups actions by mod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockOptions {
    /// Group only when at least this many actions are offered.
    pub min_actions: usize,
    /// Group only when the actions come from at least this many mods.
    pub min_namespaces: usize,
}

impl Default for BlockOptions {
    fn default() -> Self {
        Self { min_actions: 6, min_namespaces: 2 }
    }
}

const GROUPED_GUIDANCE: &str = "<selection_guidance>
**Decision Process:**
1. What does my character want right now? (Check your goals)
2. What just happened? (Review what you perceive)
3. What's my emotional state? (Consider your persona)
4. Which category serves my current needs?
5. Which specific action within that category fits best?
</selection_guidance>
</available_actions>";

const FLAT_GUIDANCE: &str = "<selection_guidance>
**Decision Process:**
1. What does my character want right now? (Check your goals)
2. What just happened? (Review what you perceive)
3. What's my emotional state? (Consider your persona)
4. Which action fits best?
</selection_guidance>
</available_actions>";

/// Renders the block for these actions, in the order given within each group.
///
/// ```
/// # use bevy_loom::prelude::*;
/// # use bevy_loom::prompt::{ActionLine, render_available_actions};
/// struct Line(usize, &'static str, &'static str, &'static str);
/// impl ActionLine for Line {
///     fn index(&self) -> usize { self.0 }
///     fn action_id(&self) -> &str { self.1 }
///     fn command(&self) -> &str { self.2 }
///     fn description(&self) -> &str { self.3 }
/// }
/// let block = render_available_actions(
///     &[Line(1, "core:wait", "wait", "Let time pass")],
///     &ContentRegistry::default(),
///     &Default::default(),
/// );
/// assert!(block.contains("[Index: 1] Command: \"wait\" - Let time pass"));
/// ```
pub fn render_available_actions<A: ActionLine>(
    actions: &[A],
    catalog: &impl ActionCatalog,
    options: &BlockOptions,
) -> String {
    let mut out = String::with_capacity(
        256 + actions.iter().map(|a| a.command().len() + a.description().len() + 32).sum::<usize>(),
    );
    write_available_actions(&mut out, actions, catalog, options);
    out
}

/// Like [`render_available_actions`], appending to `out`.
pub fn write_available_actions<A: ActionLine>(
    out: &mut String,
    actions: &[A],
    catalog: &impl ActionCatalog,
    options: &BlockOptions,
) {
    out.push_str("<available_actions>\n");
    // Distinct namespaces in order of first appearance, with each action's group.
    let mut groups: Vec<(&str, usize)> = Vec::new();
    let mut group_of: Vec<usize> = Vec::with_capacity(actions.len());
    let mut last = usize::MAX;
    for action in actions {
        let namespace = action_namespace(action.action_id());
        if last == usize::MAX || groups[last].0 != namespace {
            last = match groups.iter().position(|(seen, _)| *seen == namespace) {
                Some(found) => found,
                None => {
                    groups.push((namespace, 0));
                    groups.len() - 1
                }
            };
        }
        groups[last].1 += 1;
        group_of.push(last);
    }

    if actions.is_empty() {
        out.push_str("(nothing to do right now: answer with null)\n\n");
        out.push_str(FLAT_GUIDANCE);
        return;
    }
    if actions.len() < options.min_actions || groups.len() < options.min_namespaces {
        for action in actions {
            write_line(out, action);
        }
        out.push('\n');
        out.push_str(FLAT_GUIDANCE);
        return;
    }

    let mut ordered: Vec<(usize, &str, Option<&ModActionMetadata>, usize)> = groups
        .iter()
        .enumerate()
        .map(|(group, &(namespace, _))| {
            let (rank, metadata) = catalog.action_group(namespace);
            (rank, namespace, metadata, group)
        })
        .collect();
    ordered.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));

    for (_, namespace, metadata, group) in ordered {
        let count = groups[group].1;
        out.push_str("## ");
        out.extend(namespace.chars().map(|c| c.to_ascii_uppercase()));
        out.push_str(" ACTIONS (");
        push_number(out, count);
        out.push_str(if count == 1 { " action)\n" } else { " actions)\n" });
        let purpose = metadata.and_then(|m| m.purpose.as_deref());
        let consider_when = metadata.and_then(|m| m.consider_when.as_deref());
        if let Some(purpose) = purpose {
            out.push_str("**Purpose:** ");
            out.push_str(purpose);
            out.push('\n');
        }
        if let Some(consider_when) = consider_when {
            out.push_str("**Consider when:** ");
            out.push_str(consider_when);
            out.push('\n');
        }
        if purpose.is_some() || consider_when.is_some() {
            out.push('\n');
        }
        for (action, _) in actions.iter().zip(&group_of).filter(|(_, g)| **g == group) {
            write_line(out, action);
        }
        out.push('\n');
    }
    out.push_str(GROUPED_GUIDANCE);
}

fn write_line(out: &mut String, action: &impl ActionLine) {
    out.push_str("[Index: ");
    push_number(out, action.index());
    out.push_str("] Command: \"");
    out.push_str(action.command());
    out.push_str("\" - ");
    out.push_str(action.description());
    out.push('\n');
}

fn push_number(out: &mut String, mut number: usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (number % 10) as u8;
        number /= 10;
        if number == 0 {
            break;
        }
    }
    for &digit in &digits[start..] {
        out.push(digit as char);
    }
}
