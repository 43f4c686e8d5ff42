//! The `<available_actions>` block: the offered actions, grouped by mod with each
//! mod's Purpose and Consider-when lines, or a flat list when there are few; and the
//! `<available_tasks>` block, which lays out offered tasks the same way.

use std::borrow::Borrow;

use smallvec::SmallVec;

use bevy::platform::collections::HashMap;

use super::answer::{NOTHING_OFFERED, task_answer};
use crate::content::{ContentRegistry, ModActionMetadata, action_namespace};
use crate::world::AvailableAction;

/// When the block groups actions by mod.
#[derive(Debug, Clone, PartialEq, Eq, bevy::reflect::Reflect)]
pub struct BlockOptions {
    /// Group only when at least this many actions are offered.
    pub min_actions: usize,
    /// Group only when the actions come from at least this many mods.
    pub min_namespaces: usize,
}

impl Default for BlockOptions {
    fn default() -> Self {
        Self {
            min_actions: 6,
            min_namespaces: 2,
        }
    }
}

/// How a grouped block ends: how to choose, in one line, as every fresh prompt reads it.
const GROUPED_GUIDANCE: &str = "<selection_guidance>
Weigh your goals, what just happened and your mood: choose the category that serves you, then the action in it that fits best.
</selection_guidance>
</available_actions>";

/// How a flat block ends.
const FLAT_GUIDANCE: &str = "<selection_guidance>
Weigh your goals, what just happened and your mood: choose the action that fits best.
</selection_guidance>
</available_actions>";

/// The fixed text of a block of offered lines: what opens it, each group's heading
/// around the mod's name and count, and the guidance that closes it.
struct BlockText {
    opening: &'static str,
    /// What an empty block says between its opening and its guidance; `None`: an
    /// empty list is no block at all.
    nothing: Option<&'static str>,
    group_heading: [&'static str; 3],
    flat_guidance: &'static str,
    grouped_guidance: &'static str,
}

/// The `<available_actions>` block's text.
const ACTIONS_TEXT: BlockText = BlockText {
    opening: OPENING,
    nothing: Some(NOTHING_OFFERED),
    group_heading: GROUP_HEADING,
    flat_guidance: FLAT_GUIDANCE,
    grouped_guidance: GROUPED_GUIDANCE,
};

const TASKS_GUIDANCE: &str = concat!(
    "A task runs step by step; you are not asked again until it ends.\n",
    task_answer!(),
    "\n</available_tasks>"
);

/// The `<available_tasks>` block's text.
const TASKS_TEXT: BlockText = BlockText {
    opening: "<available_tasks>\n",
    nothing: None,
    group_heading: ["## ", " TASKS (", " tasks)\n"],
    flat_guidance: TASKS_GUIDANCE,
    grouped_guidance: TASKS_GUIDANCE,
};

/// Renders the `<available_tasks>` block for these tasks (an actor's offer of
/// [`ActionMenu::of_tasks`](crate::world::ActionMenu::of_tasks)), laid out as the
/// actions block lays out actions: by mod, with each mod's Purpose and Consider-when,
/// or flat when there are few; each with the index given. Nothing offered is no
/// block: an empty string.
pub fn render_available_tasks<'a>(
    tasks: impl IntoIterator<Item = impl Borrow<AvailableAction<'a>>>,
    registry: &ContentRegistry,
    options: &BlockOptions,
) -> String {
    let mut out = String::new();
    write_available_tasks(&mut out, tasks, 0, registry, options);
    out
}

/// Like [`render_available_tasks`], appending to `out`, with each task numbered
/// `after` on from its index: after the offered actions, as the prompt numbers them
/// ([`Choices`](super::Choices)).
pub fn write_available_tasks<'a>(
    out: &mut String,
    tasks: impl IntoIterator<Item = impl Borrow<AvailableAction<'a>>>,
    after: usize,
    registry: &ContentRegistry,
    options: &BlockOptions,
) {
    let lines: SmallVec<[AvailableAction<'_>; 16]> = (tasks.into_iter())
        .map(|task| AvailableAction {
            index: task.borrow().index + after,
            ..*task.borrow()
        })
        .collect();
    lay_out(out, &lines, registry, options, &TASKS_TEXT);
}

/// Renders the block for these actions (an actor's
/// [`OfferedActions`](crate::world::OfferedActions), or any list of
/// [`AvailableAction`]s), in the order given within each group; `registry` gives each
/// mod's group order and metadata.
///
/// ```
/// # use bevy_loom::prelude::*;
/// # use bevy_loom::prompt::{BlockOptions, render_available_actions};
/// let wait = AvailableAction {
///     index: 1,
///     action_id: "core:wait",
///     targets: &[],
///     command: "wait",
///     description: "Let time pass",
/// };
/// let block = render_available_actions([wait], &ContentRegistry::default(), &BlockOptions::default());
/// assert!(block.contains("[Index: 1] Command: \"wait\" - Let time pass"));
/// ```
pub fn render_available_actions<'a>(
    actions: impl IntoIterator<Item = impl Borrow<AvailableAction<'a>>>,
    registry: &ContentRegistry,
    options: &BlockOptions,
) -> String {
    let lines: SmallVec<[AvailableAction<'_>; 64]> =
        actions.into_iter().map(|action| *action.borrow()).collect();
    // Room for the lines, plus headers, metadata and guidance.
    let mut out = String::with_capacity(
        8192 + lines
            .iter()
            .map(|line| line.command.len() + line.description.len() + 32)
            .sum::<usize>(),
    );
    lay_out(&mut out, &lines, registry, options, &ACTIONS_TEXT);
    out
}

/// Like [`render_available_actions`], appending to `out`.
pub fn write_available_actions<'a>(
    out: &mut String,
    actions: impl IntoIterator<Item = impl Borrow<AvailableAction<'a>>>,
    registry: &ContentRegistry,
    options: &BlockOptions,
) {
    // Each line looked up once.
    let lines: SmallVec<[AvailableAction<'_>; 64]> =
        actions.into_iter().map(|action| *action.borrow()).collect();
    lay_out(out, &lines, registry, options, &ACTIONS_TEXT);
}

/// What the block of a list's lines comes to in characters, as lines are left out
/// one by one and the rest numbered again from 1, as trimming an offer leaves them
/// out: each part of the block (a line, a group's header) is measured once, and
/// leaving a line out takes away its part, so no block is laid out to be measured.
pub(crate) struct BlockMeasure {
    min_actions: usize,
    min_namespaces: usize,
    /// The characters of the block with no line kept.
    empty: usize,
    /// The characters of the flat block's parts but its lines.
    flat: usize,
    /// The characters of the grouped block's parts but its lines and groups.
    grouped: usize,
    /// How many numbers come before its first line's: 0 for actions, the actions shown
    /// for tasks.
    after: usize,
    /// Their digits.
    digits_before: usize,
    /// Each line's characters but its number, and its group.
    lines: Vec<(usize, usize)>,
    /// Each group's characters but its count, and how many of its lines are kept.
    groups: SmallVec<[(usize, usize); 8]>,
    /// Lines kept.
    kept: usize,
    /// Groups with a line kept.
    kept_groups: usize,
    /// Characters of the kept lines but their numbers.
    line_chars: usize,
    /// Characters of the kept groups, their counts included.
    group_chars: usize,
}

impl BlockMeasure {
    /// Every line of `lines` kept.
    #[cfg(test)]
    fn new(
        lines: &[AvailableAction<'_>],
        registry: &ContentRegistry,
        options: &BlockOptions,
    ) -> Self {
        let mut measuring = Measuring::default();
        for line in lines {
            measuring.add(line);
        }
        measuring.measure(registry, options)
    }

    /// Leaves out the line at `position` (from 0 in the list it was made from); a
    /// line already left out stays out.
    #[inline]
    pub(crate) fn leave_out(&mut self, position: usize) {
        let Some((chars, group)) = self.lines.get_mut(position) else {
            return;
        };
        if *chars == usize::MAX {
            return;
        }
        self.line_chars -= std::mem::replace(chars, usize::MAX);
        self.kept -= 1;
        let (_, count) = &mut self.groups[*group];
        self.group_chars -= digits(*count);
        *count -= 1;
        if *count > 0 {
            self.group_chars += digits(*count);
        } else {
            self.group_chars -= self.groups[*group].0;
            self.kept_groups -= 1;
        }
    }

    /// Its buffer of lines, for [`Measuring::with_lines`] to measure another block.
    pub(crate) fn into_lines(self) -> Vec<(usize, usize)> {
        self.lines
    }

    /// The characters of the block of the lines kept, numbered from 1 (after the
    /// actions shown, for tasks).
    #[inline]
    pub(crate) fn chars(&self) -> usize {
        if self.kept == 0 {
            return self.empty;
        }
        let numbers = digits_up_to(self.after + self.kept) - self.digits_before;
        let lines = self.line_chars + numbers;
        if self.kept < self.min_actions || self.kept_groups < self.min_namespaces {
            self.flat + lines
        } else {
            self.grouped + self.group_chars + lines
        }
    }
}

/// The parts of a block, measured line by line: [`measure`](Self::measure) gives the
/// [`BlockMeasure`] of every line added.
#[derive(Default)]
pub(crate) struct Measuring<'a> {
    groups: Groups<'a>,
    /// Each line's characters but its number, and its group.
    lines: Vec<(usize, usize)>,
    /// The last description counted, and its characters: the lines of one action
    /// share theirs.
    description: (&'a str, usize),
}

impl<'a> Measuring<'a> {
    /// Measuring into `lines`, a buffer emptied first (from [`BlockMeasure::into_lines`]).
    pub(crate) fn with_lines(mut lines: Vec<(usize, usize)>) -> Self {
        lines.clear();
        Self {
            lines,
            ..Self::default()
        }
    }

    /// Adds the next line; returns its group's position (its mod's, in order of first
    /// appearance).
    #[inline]
    pub(crate) fn add(&mut self, line: &AvailableAction<'a>) -> usize {
        if !std::ptr::eq(line.description, self.description.0) {
            self.description = (line.description, chars(line.description));
        }
        let chars = LINE_FRAME.len() + chars(line.command) + self.description.1;
        let group = self.groups.add(self.lines.len(), line.action_id);
        self.lines.push((chars, group));
        group
    }

    /// The block of every line added, from `registry` with `options`.
    pub(crate) fn measure(
        self,
        registry: &ContentRegistry,
        options: &BlockOptions,
    ) -> BlockMeasure {
        self.measure_as((registry, options), &ACTIONS_TEXT, 0)
    }

    /// The [`BlockMeasure`] of the available-tasks block of the lines added, numbered
    /// after the `after` actions shown.
    pub(crate) fn measure_tasks(
        self,
        registry: &ContentRegistry,
        options: &BlockOptions,
        after: usize,
    ) -> BlockMeasure {
        self.measure_as((registry, options), &TASKS_TEXT, after)
    }

    /// The [`BlockMeasure`] of the lines added laid out in `text`'s block, numbered
    /// after `after`.
    fn measure_as(
        self,
        (registry, options): (&ContentRegistry, &BlockOptions),
        text: &BlockText,
        after: usize,
    ) -> BlockMeasure {
        let heading = text.group_heading;
        let groups: SmallVec<[(usize, usize); 8]> = self
            .groups
            .list
            .iter()
            .map(|group| {
                let (_, metadata) = registry.action_group(group.namespace);
                (group_chars(heading, group.namespace, metadata), group.count)
            })
            .collect();
        let lines = self.lines;
        let opening = text.opening.len();
        BlockMeasure {
            min_actions: options.min_actions,
            min_namespaces: options.min_namespaces,
            empty: text.nothing.map_or(0, |nothing| {
                opening + nothing.len() + 2 + text.flat_guidance.len()
            }),
            flat: opening + 1 + text.flat_guidance.len(),
            grouped: opening + text.grouped_guidance.len(),
            after,
            digits_before: digits_up_to(after),
            line_chars: lines.iter().map(|(chars, _)| chars).sum(),
            group_chars: groups
                .iter()
                .map(|&(chars, count)| chars + digits(count))
                .sum(),
            kept: lines.len(),
            kept_groups: groups.len(),
            lines,
            groups,
        }
    }
}

/// The decimal digits of `number`.
fn digits(number: usize) -> usize {
    number.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// The decimal digits of every number from 1 to `last`.
fn digits_up_to(last: usize) -> usize {
    let mut total = 0;
    // The first number of each width.
    let mut first: usize = 1;
    for width in 1.. {
        if first > last {
            break;
        }
        let next = first.checked_mul(10);
        let end = next.map_or(last, |next| last.min(next - 1));
        total += (end - first + 1) * width;
        match next {
            Some(next) => first = next,
            None => break,
        }
    }
    total
}

/// How the block opens.
const OPENING: &str = "<available_actions>\n";

/// Lays out the block of these lines.
fn lay_out(
    out: &mut String,
    lines: &[AvailableAction<'_>],
    registry: &ContentRegistry,
    options: &BlockOptions,
    text: &BlockText,
) {
    if lines.is_empty() {
        // What an empty block says before its guidance, if it is a block.
        if let Some(nothing) = text.nothing {
            out.push_str(text.opening);
            out.push_str(nothing);
            out.push_str("\n\n");
            out.push_str(text.flat_guidance);
        }
        return;
    }
    out.push_str(text.opening);
    let (
        Groups {
            list: groups,
            split,
            ..
        },
        next_in_group,
    ) = Groups::of(lines);
    if lines.len() < options.min_actions || groups.len() < options.min_namespaces {
        for line in lines {
            write_line(out, line);
        }
        out.push('\n');
        out.push_str(text.flat_guidance);
        return;
    }

    let mut ordered: SmallVec<[GroupOrder<'_>; 8]> = groups
        .iter()
        .enumerate()
        .map(|(group, &Group { namespace, .. })| {
            let (rank, metadata) = registry.action_group(namespace);
            (rank, namespace, metadata, group)
        })
        .collect();
    ordered.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));

    for (_, namespace, metadata, group) in ordered {
        let Group { count, first, .. } = groups[group];
        let heading = (text.group_heading, namespace, metadata, count);
        if split {
            // Each line of a group that is not one run leads to the next.
            let mut position = first;
            let lines = (0..count).map(|_| {
                let line = &lines[position];
                position = next_in_group[position] as usize;
                line
            });
            write_group(out, heading, lines);
        } else {
            write_group(out, heading, lines[first..first + count].iter());
        }
    }
    out.push_str(text.grouped_guidance);
}

/// The namespaces of a list's lines in order of first appearance, each with its
/// actions and where the first of them is, gathered one line after the other.
#[derive(Default)]
struct Groups<'a> {
    list: SmallVec<[Group<'a>; 8]>,
    /// Each group's position by namespace, once there are more than a few groups to
    /// search; empty (and unallocated) until then.
    by_namespace: HashMap<&'a str, usize>,
    /// Some group's actions are not one run of the list.
    split: bool,
    /// The last line's action id and group.
    previous: Option<(&'a str, usize)>,
}

/// Groups are searched one by one up to this many, and by namespace beyond.
const GROUPS_SEARCHED_IN_ORDER: usize = 8;

impl<'a> Groups<'a> {
    /// The namespaces of `lines`, and when some group's lines are not one run
    /// ([`split`](Self::split)), where each line's group goes on: the position of its
    /// next line (after its last, another line's); empty otherwise, when each group is
    /// the run of lines from its first.
    fn of(lines: &[AvailableAction<'a>]) -> (Self, Vec<u32>) {
        let mut groups = Self::default();
        let mut positions = lines.iter().enumerate();
        for (position, line) in &mut positions {
            let last = groups.add_last(position, line.action_id);
            if !groups.split {
                continue;
            }
            // Each line leads to the one after it until a line of its group comes later
            // (the last line of a group is never followed).
            let mut next_in_group: Vec<u32> = (1..=lines.len() as u32).collect();
            next_in_group[last] = position as u32;
            for (position, line) in positions {
                let last = groups.add_last(position, line.action_id);
                next_in_group[last] = position as u32;
            }
            return (groups, next_in_group);
        }
        (groups, Vec::new())
    }

    /// Adds the line at `position` as the last of its group ([`add`](Self::add));
    /// returns the group's last line before it, or itself when it is the first.
    #[inline]
    fn add_last(&mut self, position: usize, action_id: &'a str) -> usize {
        let group = self.add(position, action_id);
        std::mem::replace(&mut self.list[group].last, position)
    }

    /// Adds the line at `position`, with this action id; returns its group's position.
    #[inline]
    fn add(&mut self, position: usize, action_id: &'a str) -> usize {
        // The lines of one action come one after the other, sharing its id.
        if let Some((id, group)) = self.previous
            && std::ptr::eq(id, action_id)
        {
            self.list[group].count += 1;
            return group;
        }
        let group = self.group_of(position, action_id);
        self.previous = Some((action_id, group));
        group
    }

    /// The group of a line whose action is not the last line's.
    fn group_of(&mut self, position: usize, action_id: &'a str) -> usize {
        let Some((_, previous)) = self.previous else {
            return self.search(position, action_id);
        };
        // The group that followed the previous line's last is checked first: the same
        // group while lines come grouped, and while they come dealt from the groups
        // in turn, the next group, which follows it every time. Either way one
        // comparison finds most lines' group.
        let next = self.list[previous].followed_by;
        if in_namespace(action_id, self.list[next].namespace) {
            self.list[next].count += 1;
            self.split |= next != previous;
            return next;
        }
        // Then the previous line's own group; then, for lines dealt from groups of
        // different sizes, the group that followed the next one: it comes instead
        // once the next one has run out.
        let after_next = self.list[next].followed_by;
        let group = if next != previous && in_namespace(action_id, self.list[previous].namespace) {
            self.list[previous].count += 1;
            previous
        } else if after_next != next && in_namespace(action_id, self.list[after_next].namespace) {
            self.list[after_next].count += 1;
            self.split = true;
            after_next
        } else {
            self.search(position, action_id)
        };
        self.list[previous].followed_by = group;
        group
    }

    /// The group of a line, found by its namespace (the first line's, and any line
    /// in neither its previous line's group nor the one that followed that group
    /// last); a new group when none has it.
    fn search(&mut self, position: usize, action_id: &'a str) -> usize {
        let namespace = action_namespace(action_id);
        let found = if self.by_namespace.is_empty() {
            self.list.iter().position(|g| g.namespace == namespace)
        } else {
            self.by_namespace.get(namespace).copied()
        };
        if let Some(found) = found {
            self.list[found].count += 1;
            self.split = true;
            return found;
        }
        let group = self.list.len();
        self.list.push(Group {
            namespace,
            count: 1,
            first: position,
            last: position,
            followed_by: group,
        });
        // Once there are more than a few groups, they are found by namespace: a new
        // namespace is otherwise compared with every group before it.
        if !self.by_namespace.is_empty() {
            self.by_namespace.insert(namespace, group);
        } else if self.list.len() > GROUPS_SEARCHED_IN_ORDER {
            // Room for as many groups again without growing.
            self.by_namespace = HashMap::with_capacity(2 * self.list.len());
            let groups = self.list.iter().enumerate();
            (self.by_namespace).extend(groups.map(|(group, g)| (g.namespace, group)));
        }
        group
    }
}

/// A group's heading text (the block's), namespace, mod metadata and count.
type GroupHeading<'a> = (
    [&'static str; 3],
    &'a str,
    Option<&'a ModActionMetadata>,
    usize,
);

/// A group of the grouped block: its header, with the mod's metadata, of `count`
/// actions, then `lines`.
fn write_group<'l, 'a: 'l>(
    out: &mut String,
    (heading, namespace, metadata, count): GroupHeading<'_>,
    lines: impl Iterator<Item = &'l AvailableAction<'a>>,
) {
    let [open, before_count, after_count] = heading;
    out.push_str(open);
    let start = out.len();
    out.push_str(namespace);
    out[start..].make_ascii_uppercase();
    out.push_str(before_count);
    push_number(out, count);
    out.push_str(after_count);
    let (purpose, consider_when) = about(metadata);
    if let Some(purpose) = purpose {
        out.push_str(PURPOSE);
        out.push_str(purpose);
        out.push('\n');
    }
    if let Some(consider_when) = consider_when {
        out.push_str(CONSIDER_WHEN);
        out.push_str(consider_when);
        out.push('\n');
    }
    if purpose.is_some() || consider_when.is_some() {
        out.push('\n');
    }
    for line in lines {
        write_line(out, line);
    }
    out.push('\n');
}

/// The characters [`write_group`] writes for a group, but its count's and its lines'.
fn group_chars(heading: [&str; 3], namespace: &str, metadata: Option<&ModActionMetadata>) -> usize {
    let heading = heading.iter().map(|part| part.len()).sum::<usize>() + chars(namespace);
    let (purpose, consider_when) = about(metadata);
    let purpose_line = purpose.map_or(0, |purpose| PURPOSE.len() + chars(purpose) + 1);
    let consider_line =
        consider_when.map_or(0, |consider| CONSIDER_WHEN.len() + chars(consider) + 1);
    let blank = usize::from(purpose.is_some() || consider_when.is_some());
    // And the blank line that closes the group.
    heading + purpose_line + consider_line + blank + 1
}

/// A group's heading around its namespace and its count.
const GROUP_HEADING: [&str; 3] = ["## ", " ACTIONS (", " actions)\n"];
const PURPOSE: &str = "**Purpose:** ";
const CONSIDER_WHEN: &str = "**Consider when:** ";

/// A mod's Purpose and Consider-when lines, those it has.
fn about(metadata: Option<&ModActionMetadata>) -> (Option<&str>, Option<&str>) {
    (
        metadata.and_then(|m| m.purpose.as_deref()),
        metadata.and_then(|m| m.consider_when.as_deref()),
    )
}

/// A namespace's actions: how many, and the position of the first.
#[derive(Clone, Copy)]
struct Group<'a> {
    namespace: &'a str,
    count: usize,
    first: usize,
    /// The position of its last line so far: kept by [`Groups::of`] alone (it stays
    /// at `first` when lines are only measured).
    last: usize,
    /// The group of the line that last followed one of its lines: its own until a line
    /// of another group did.
    followed_by: usize,
}

/// A group's rank, namespace, mod metadata and position among the groups found.
type GroupOrder<'a> = (usize, &'a str, Option<&'a ModActionMetadata>, usize);

fn write_line(out: &mut String, line: &AvailableAction<'_>) {
    out.push_str("[Index: ");
    push_number(out, line.index);
    out.push_str("] Command: \"");
    out.push_str(line.command);
    out.push_str("\" - ");
    out.push_str(line.description);
    out.push('\n');
}

/// What [`write_line`] writes besides the number, the command and the description.
const LINE_FRAME: &str = "[Index: ] Command: \"\" - \n";

/// The characters of `text`.
fn chars(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    }
}

/// Whether `id` is `namespace:...`, without searching it for the colon.
fn in_namespace(id: &str, namespace: &str) -> bool {
    let (id, namespace) = (id.as_bytes(), namespace.as_bytes());
    id.get(namespace.len()) == Some(&b':') && id.starts_with(namespace)
}

fn push_number(out: &mut String, number: usize) {
    out.push_str(itoa::Buffer::new().format(number));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::{ContentSources, GameManifest, ModManifest};

    fn line(
        index: usize,
        action_id: &'static str,
        command: &'static str,
        description: &'static str,
    ) -> AvailableAction<'static> {
        AvailableAction {
            index,
            action_id,
            targets: &[],
            command,
            description,
        }
    }

    fn registry(mods: &[(&str, Option<&str>, Option<&str>)], order: &[&str]) -> ContentRegistry {
        let manifests: Vec<ModManifest> = mods
            .iter()
            .map(|(id, purpose, consider)| {
                serde_json::from_value(json!({
                    "id": id, "version": "1.0.0", "name": id,
                    "actionPurpose": purpose, "actionConsiderWhen": consider
                }))
                .expect("a manifest")
            })
            .collect();
        let game = GameManifest {
            mods: mods.iter().map(|m| m.0.to_owned()).collect(),
            action_group_order: order.iter().map(|s| (*s).to_owned()).collect(),
        };
        let paths: Vec<String> = mods
            .iter()
            .map(|m| format!("mods/{}/mod.json", m.0))
            .collect();
        let sources: Vec<(&str, &ModManifest)> =
            paths.iter().map(String::as_str).zip(&manifests).collect();
        ContentRegistry::build(ContentSources {
            narratives: &[],
            game: Some(("game.loom.json", &game)),
            mods: &sources,
            actions: &[],
            actors: &[],
            scopes: None,
            ..ContentSources::default()
        })
    }

    /// The lines of [`actions`] of the items mod, as the block shows them.
    const ITEM_LINES: &str = "[Index: 5] Command: \"pick up book\" - Take an item from location
[Index: 6] Command: \"give book to Registrar Copperplate\" - Hand something to someone
";
    /// The lines of [`actions`] of the positioning mod, as the block shows them.
    const POSITIONING_LINES: &str =
        "[Index: 2] Command: \"get close to Registrar Copperplate\" - Move closer to someone
[Index: 3] Command: \"step back from Registrar Copperplate\" - Create distance from someone
[Index: 4] Command: \"sit down on bench\" - Take a seat on available furniture
";

    /// The block of `lines` with `registry`'s mod metadata and the default options.
    fn block_of(lines: &[AvailableAction<'_>], registry: &ContentRegistry) -> String {
        render_available_actions(lines, registry, &BlockOptions::default())
    }

    /// The block of `lines` without mod metadata, with the default options.
    fn plain_block(lines: &[AvailableAction<'_>]) -> String {
        block_of(lines, &ContentRegistry::default())
    }

    /// The grouped block of [`actions`], its groups by namespace (core, items,
    /// positioning, as no mod metadata ranks them otherwise), each group's heading
    /// followed by its line of mod metadata and a blank line, when `metadata` has one
    /// for it.
    fn grouped_in_order(metadata: [&str; 3]) -> String {
        let heading = |title: &str, metadata: &str| match metadata {
            "" => format!("## {title}\n"),
            _ => format!("## {title}\n{metadata}\n\n"),
        };
        let [core, items, positioning] = metadata;
        format!(
            "<available_actions>\n{}[Index: 1] Command: \"wait\" - Let time pass\n\n{}{ITEM_LINES}\n{}{POSITIONING_LINES}\n{GROUPED_GUIDANCE}",
            heading("CORE ACTIONS (1 actions)", core),
            heading("ITEMS ACTIONS (2 actions)", items),
            heading("POSITIONING ACTIONS (3 actions)", positioning),
        )
    }

    fn actions() -> Vec<AvailableAction<'static>> {
        vec![
            line(1, "core:wait", "wait", "Let time pass"),
            line(
                2,
                "positioning:get_close",
                "get close to Registrar Copperplate",
                "Move closer to someone",
            ),
            line(
                3,
                "positioning:step_back",
                "step back from Registrar Copperplate",
                "Create distance from someone",
            ),
            line(
                4,
                "positioning:sit_down",
                "sit down on bench",
                "Take a seat on available furniture",
            ),
            line(
                5,
                "items:pick_up",
                "pick up book",
                "Take an item from location",
            ),
            line(
                6,
                "items:give",
                "give book to Registrar Copperplate",
                "Hand something to someone",
            ),
        ]
    }

    const PURPOSE: &str = "Change body position, spatial relationships, and physical arrangement relative to others and furniture.";
    const CONSIDER: &str = "Getting closer or farther from someone, changing posture (sitting, standing, lying, kneeling), or adjusting facing direction.";

    #[test]
    fn measuring_the_block_gives_the_characters_writing_it_gives() {
        let registry = registry(
            &[
                ("core", Some("Pass time — quietly."), None),
                ("items", None, Some("Managing inventory.")),
                ("positioning", Some(PURPOSE), Some(CONSIDER)),
            ],
            &["positioning"],
        );
        let actions = actions();
        let mut all: Vec<AvailableAction<'_>> = actions;
        all.push(AvailableAction {
            targets: &[],
            index: 7,
            action_id: "items:give",
            command: "give crêpe to Zoë",
            description: "Hand something over",
        });
        // Enough lines for two-digit numbers and counts.
        let varied = all.len();
        for index in 8..=16 {
            all.push(AvailableAction {
                targets: &[],
                index,
                action_id: "core:wait",
                command: "wait",
                description: "Let time pass",
            });
        }
        // The same lines out of order: groups that are not one run.
        let mut shuffled = all.clone();
        shuffled.rotate_left(5);
        shuffled.swap(0, 9);
        let options = [
            BlockOptions::default(),
            BlockOptions {
                min_actions: 1,
                min_namespaces: 1,
            },
            BlockOptions {
                min_actions: 100,
                min_namespaces: 1,
            },
        ];
        for list in [&all, &shuffled] {
            for options in &options {
                for catalog in [&registry, &ContentRegistry::default()] {
                    // Every subset of the varied lines with the last `waits` lines
                    // of the list, each left out in two orders, the rest numbered
                    // again from 1 as a trimmed offer numbers them.
                    let subsets = (0u32..1 << varied).flat_map(|subset| {
                        (0..=list.len() - varied)
                            .map(move |waits| subset | (((1 << waits) - 1) << (list.len() - waits)))
                    });
                    for subset in subsets {
                        let kept: Vec<AvailableAction<'_>> = list
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| subset & (1 << i) != 0)
                            .enumerate()
                            .map(|(index, (_, line))| AvailableAction {
                                index: index + 1,
                                ..*line
                            })
                            .collect();
                        let mut block = String::new();
                        write_available_actions(&mut block, kept, catalog, options);
                        let left_out = (0..list.len()).filter(|i| subset & (1 << i) == 0);
                        let mut forwards = BlockMeasure::new(list, catalog, options);
                        let mut backwards = BlockMeasure::new(list, catalog, options);
                        for position in left_out.clone() {
                            forwards.leave_out(position);
                        }
                        for position in left_out.rev() {
                            backwards.leave_out(position);
                            // Again: a line left out stays out once.
                            backwards.leave_out(position);
                        }
                        let written = block.chars().count();
                        assert_eq!(forwards.chars(), written, "{block}");
                        assert_eq!(backwards.chars(), written, "{block}");
                    }
                }
            }
        }
    }

    #[test]
    fn measuring_the_tasks_block_gives_the_characters_writing_it_gives() {
        let registry = registry(
            &[
                ("tavern", Some("Run the inn — serve, fetch."), None),
                ("items", None, Some("When an object is at hand.")),
            ],
            &["tavern"],
        );
        let tasks: Vec<AvailableAction<'_>> = (1..=12)
            .map(|index| match index % 3 {
                0 => line(index, "tavern:serve", "serve Zoë a crêpe", "bring a dish"),
                1 => line(index, "items:fetch", "fetch the key", "bring something"),
                _ => line(index, "tavern:tidy", "tidy the hall", "clear the tables"),
            })
            .collect();
        let options = [
            BlockOptions::default(),
            BlockOptions {
                min_actions: 1,
                min_namespaces: 1,
            },
        ];
        // Numbered after no action, after 9 (a task's number crosses to two digits)
        // and after 95 (to three).
        for after in [0, 3, 9, 95] {
            for options in &options {
                for subset in 0u32..1 << tasks.len() {
                    let kept: Vec<AvailableAction<'_>> = (tasks.iter().enumerate())
                        .filter(|(i, _)| subset & (1 << i) != 0)
                        .enumerate()
                        .map(|(index, (_, task))| AvailableAction {
                            index: index + 1,
                            ..*task
                        })
                        .collect();
                    let mut block = String::new();
                    write_available_tasks(&mut block, kept, after, &registry, options);
                    let mut measuring = Measuring::default();
                    for task in &tasks {
                        measuring.add(task);
                    }
                    let mut measured = measuring.measure_tasks(&registry, options, after);
                    for left_out in (0..tasks.len()).filter(|i| subset & (1 << i) == 0) {
                        measured.leave_out(left_out);
                    }
                    assert_eq!(measured.chars(), block.chars().count(), "{block}");
                }
            }
        }
    }

    #[test]
    fn digits_of_every_number_up_to_the_last() {
        let mut total = 0;
        for last in 0..2000 {
            total += if last == 0 { 0 } else { last.to_string().len() };
            assert_eq!(digits_up_to(last), total, "{last}");
            assert_eq!(digits(last), last.to_string().len(), "{last}");
        }
        assert_eq!(digits(usize::MAX), usize::MAX.to_string().len());
    }

    #[test]
    fn grouped_with_metadata_in_configured_order_then_alphabetical() {
        let registry = registry(
            &[
                (
                    "core",
                    Some("Pass time without taking significant action."),
                    None,
                ),
                (
                    "items",
                    Some("Interact with objects through pickup and transfer."),
                    Some("Managing inventory or sharing items."),
                ),
                ("positioning", Some(PURPOSE), Some(CONSIDER)),
            ],
            &["positioning"],
        );
        let block = block_of(&actions(), &registry);
        assert_eq!(
            block,
            format!(
                "<available_actions>
## POSITIONING ACTIONS (3 actions)
**Purpose:** {PURPOSE}
**Consider when:** {CONSIDER}

{POSITIONING_LINES}
## CORE ACTIONS (1 actions)
**Purpose:** Pass time without taking significant action.

[Index: 1] Command: \"wait\" - Let time pass

## ITEMS ACTIONS (2 actions)
**Purpose:** Interact with objects through pickup and transfer.
**Consider when:** Managing inventory or sharing items.

{ITEM_LINES}
{GROUPED_GUIDANCE}"
            )
        );
    }

    #[test]
    fn partial_metadata_shows_only_what_the_manifest_has() {
        let registry = registry(
            &[
                ("core", None, Some("When nothing else fits the moment.")),
                (
                    "items",
                    Some("Interact with objects through pickup and transfer."),
                    None,
                ),
                ("positioning", None, None),
            ],
            &[],
        );
        let block = block_of(&actions(), &registry);
        let core = "**Consider when:** When nothing else fits the moment.";
        let items = "**Purpose:** Interact with objects through pickup and transfer.";
        assert_eq!(block, grouped_in_order([core, items, ""]));
    }

    /// The namespaces `Groups::of` finds in lines of these action ids, in order of
    /// first appearance, each with its count; and each line's group.
    fn groups_of(ids: &[&'static str]) -> (Vec<(&'static str, usize)>, Vec<u32>) {
        let lines: Vec<AvailableAction<'static>> = (ids.iter().enumerate())
            .map(|(i, &id)| line(i + 1, id, "c", "d"))
            .collect();
        let (groups, next_in_group) = Groups::of(&lines);
        let found = groups.list.iter().map(|g| (g.namespace, g.count)).collect();
        if groups.split {
            assert_eq!(next_in_group.len(), lines.len(), "a link for every line");
        } else {
            assert!(next_in_group.is_empty(), "lines in runs need no links");
        }
        // Each group's lines, from its first, one leading to the next, in their order.
        let mut group_of_line = vec![u32::MAX; lines.len()];
        for (group, g) in groups.list.iter().enumerate() {
            let mut position = g.first;
            for n in 0..g.count {
                assert_eq!(group_of_line[position], u32::MAX, "one group a line");
                group_of_line[position] = group as u32;
                if n + 1 == g.count {
                    break;
                }
                let next = match next_in_group.get(position) {
                    Some(&next) => next as usize,
                    None => position + 1,
                };
                assert!(next > position, "a group's lines keep their order");
                position = next;
            }
        }
        (found, group_of_line)
    }

    #[test]
    fn every_line_finds_its_own_group_in_any_order() {
        let back_and_forth = [
            "core:wait",
            "items:take",
            "core:look",
            "positioning:sit",
            "core:rest",
            "items:give",
            "core2:hum",
        ];
        assert_eq!(
            groups_of(&back_and_forth),
            (
                vec![("core", 3), ("items", 2), ("positioning", 1), ("core2", 1)],
                vec![0, 1, 0, 2, 0, 1, 3]
            )
        );
        // Dealt from the groups in turn, then a group out of turn.
        let dealt = [
            "a:1", "b:1", "c:1", "a:2", "b:2", "c:2", "a:3", "c:3", "b:3",
        ];
        assert_eq!(
            groups_of(&dealt),
            (
                vec![("a", 3), ("b", 3), ("c", 3)],
                vec![0, 1, 2, 0, 1, 2, 0, 2, 1]
            )
        );
        let runs = ["a:1", "a:2", "b:1", "c:1", "c:2"];
        assert_eq!(
            groups_of(&runs),
            (vec![("a", 2), ("b", 1), ("c", 2)], vec![0, 0, 1, 2, 2])
        );
    }

    #[test]
    fn each_layout_ends_with_its_guidance_word_for_word() {
        // The exact text every fresh prompt reads.
        let grouped = "\n<selection_guidance>\nWeigh your goals, what just happened and your mood: choose the category that serves you, then the action in it that fits best.\n</selection_guidance>\n</available_actions>";
        let flat = "\n<selection_guidance>\nWeigh your goals, what just happened and your mood: choose the action that fits best.\n</selection_guidance>\n</available_actions>";
        let block = plain_block(&actions());
        assert!(block.ends_with(grouped), "{block}");
        let block = plain_block(&actions()[..2]);
        assert!(block.ends_with(flat), "{block}");
    }

    #[test]
    fn no_metadata_anywhere_is_the_plain_grouped_list() {
        assert_eq!(plain_block(&actions()), grouped_in_order(["", "", ""]));
    }

    #[test]
    fn a_group_split_in_the_list_is_shown_whole() {
        let mut split = actions();
        // `core:wait` after the items, not before the positioning actions.
        split.rotate_left(1);
        let block = plain_block(&split);
        let grouped = plain_block(&actions());
        assert_eq!(block, grouped, "groups sort the same whatever the order");
        let mut interleaved = actions();
        interleaved.swap(3, 4);
        assert!(
            plain_block(&interleaved).contains(&format!(
                "## POSITIONING ACTIONS (3 actions)\n{POSITIONING_LINES}"
            )),
            "a group's actions keep their order within it"
        );
    }

    #[test]
    fn flat_below_either_threshold() {
        let registry = registry(
            &[
                ("core", Some(PURPOSE), Some(CONSIDER)),
                ("positioning", Some(PURPOSE), None),
            ],
            &[],
        );
        let expected_flat = |lines: &[AvailableAction<'_>]| {
            let mut text = String::from("<available_actions>\n");
            for line in lines {
                text.push_str(&format!(
                    "[Index: {}] Command: \"{}\" - {}\n",
                    line.index, line.command, line.description
                ));
            }
            format!("{text}\n{FLAT_GUIDANCE}")
        };
        let five = &actions()[..5];
        assert_eq!(
            block_of(five, &registry),
            expected_flat(five),
            "5 < 6 actions"
        );
        let one_mod = [
            line(1, "core:a", "a", "A"),
            line(2, "core:b", "b", "B"),
            line(3, "core:c", "c", "C"),
            line(4, "core:d", "d", "D"),
            line(5, "core:e", "e", "E"),
            line(6, "core:f", "f", "F"),
        ];
        assert_eq!(
            block_of(&one_mod, &registry),
            expected_flat(&one_mod),
            "1 < 2 mods"
        );
        let options = BlockOptions {
            min_actions: 2,
            min_namespaces: 2,
        };
        assert!(
            render_available_actions(five, &registry, &options).contains("## CORE ACTIONS"),
            "thresholds are settings"
        );
    }

    #[test]
    fn many_mods_interleaved_give_the_block_they_give_grouped() {
        let ids: Vec<String> = (0..12)
            .flat_map(|m| (0..3).map(move |a| format!("mod{m:02}:act{a}")))
            .collect();
        let grouped: Vec<AvailableAction<'_>> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| AvailableAction {
                index: i + 1,
                action_id: id,
                targets: &[],
                command: id,
                description: "Do it",
            })
            .collect();
        // Each mod's first action, then each one's second, then each one's third.
        let mut interleaved = grouped.clone();
        interleaved.sort_by_key(|line| (line.index - 1) % 3);
        let registry = ContentRegistry::default();
        let options = BlockOptions::default();
        let block = render_available_actions(&grouped, &registry, &options);
        assert_eq!(block.matches(" ACTIONS (3 actions)").count(), 12, "{block}");
        assert_eq!(
            render_available_actions(&interleaved, &registry, &options),
            block
        );
    }

    #[test]
    fn nothing_to_offer_says_so() {
        let block = plain_block(&[]);
        assert!(
            block.starts_with(
                "<available_actions>\n(nothing to do right now: answer with \"do\":0)\n"
            ),
            "{block}"
        );
    }

    const TASK_GUIDANCE: &str = "A task runs step by step; you are not asked again until it ends.
To take one on, answer with its Index as \"do\".
</available_tasks>";

    #[test]
    fn tasks_are_laid_out_as_actions_are_under_their_own_tag() {
        let registry = registry(
            &[
                ("tavern", Some("Run the inn: serve, fetch and tidy."), None),
                ("items", None, Some("When an object is at hand.")),
            ],
            &["tavern"],
        );
        let tasks = [
            line(1, "items:fetch", "fetch the lute", "bring something to you"),
            line(2, "items:fetch", "fetch the key", "bring something to you"),
            line(3, "items:stash", "stash the key", "put something away"),
            line(
                4,
                "tavern:serve",
                "serve Traveler mug of ale",
                "bring someone a drink",
            ),
            line(
                5,
                "tavern:serve",
                "serve Brom mug of ale",
                "bring someone a drink",
            ),
            line(6, "tavern:tidy", "tidy the common room", "clear the tables"),
        ];
        let grouped = render_available_tasks(tasks, &registry, &BlockOptions::default());
        let expected = format!(
            "<available_tasks>
## TAVERN TASKS (3 tasks)
**Purpose:** Run the inn: serve, fetch and tidy.

[Index: 4] Command: \"serve Traveler mug of ale\" - bring someone a drink
[Index: 5] Command: \"serve Brom mug of ale\" - bring someone a drink
[Index: 6] Command: \"tidy the common room\" - clear the tables

## ITEMS TASKS (3 tasks)
**Consider when:** When an object is at hand.

[Index: 1] Command: \"fetch the lute\" - bring something to you
[Index: 2] Command: \"fetch the key\" - bring something to you
[Index: 3] Command: \"stash the key\" - put something away

{TASK_GUIDANCE}"
        );
        assert_eq!(grouped, expected);
        let flat = render_available_tasks(&tasks[3..5], &registry, &BlockOptions::default());
        assert_eq!(
            flat,
            format!(
                "<available_tasks>
[Index: 4] Command: \"serve Traveler mug of ale\" - bring someone a drink
[Index: 5] Command: \"serve Brom mug of ale\" - bring someone a drink

{TASK_GUIDANCE}"
            )
        );
        let none: [AvailableAction<'_>; 0] = [];
        assert_eq!(
            render_available_tasks(none, &registry, &BlockOptions::default()),
            "",
            "no tasks, no block"
        );
    }
}
