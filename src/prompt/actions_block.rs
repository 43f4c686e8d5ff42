//! The `<available_actions>` block: the offered actions, grouped by mod with each
//! mod's Purpose and Consider-when lines, or a flat list when there are few.

use smallvec::SmallVec;

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

/// The offered actions in prompt order, as the block reads them: by position, from 0.
///
/// Slices, arrays and vectors of [`ActionLine`]s are lists, and so is a smart actor's
/// [`OfferedActions`](crate::world::OfferedActions).
pub trait ActionList {
    /// How many actions there are.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The action at `position`.
    fn line(&self, position: usize) -> BlockLine<'_>;
}

/// One offered action, as its line in the block shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLine<'a> {
    /// Its number, from 1.
    pub index: usize,
    /// Its `mod:action` id; the namespace picks the group.
    pub action_id: &'a str,
    /// The rendered command.
    pub command: &'a str,
    /// What the action does.
    pub description: &'a str,
}

impl<'a, A: ActionLine> From<&'a A> for BlockLine<'a> {
    fn from(action: &'a A) -> Self {
        Self {
            index: action.index(),
            action_id: action.action_id(),
            command: action.command(),
            description: action.description(),
        }
    }
}

// A block's lines are a list too.
impl ActionLine for BlockLine<'_> {
    fn index(&self) -> usize {
        self.index
    }
    fn action_id(&self) -> &str {
        self.action_id
    }
    fn command(&self) -> &str {
        self.command
    }
    fn description(&self) -> &str {
        self.description
    }
}

impl<A: ActionLine> ActionList for [A] {
    fn len(&self) -> usize {
        <[A]>::len(self)
    }
    fn line(&self, position: usize) -> BlockLine<'_> {
        BlockLine::from(&self[position])
    }
}

impl<A: ActionLine, const N: usize> ActionList for [A; N] {
    fn len(&self) -> usize {
        N
    }
    fn line(&self, position: usize) -> BlockLine<'_> {
        BlockLine::from(&self[position])
    }
}

impl<A: ActionLine> ActionList for Vec<A> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn line(&self, position: usize) -> BlockLine<'_> {
        BlockLine::from(&self[position])
    }
}

/// Where groups come from: each mod's metadata and its place in the group order.
pub trait ActionCatalog {
    /// The group's position (lower first; ties alphabetical) and the mod's metadata.
    fn action_group(&self, mod_id: &str) -> (usize, Option<&ModActionMetadata>);
}

impl ActionCatalog for ContentRegistry {
    fn action_group(&self, mod_id: &str) -> (usize, Option<&ModActionMetadata>) {
        ContentRegistry::action_group(self, mod_id)
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
        Self {
            min_actions: 6,
            min_namespaces: 2,
        }
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
pub fn render_available_actions<L: ActionList + ?Sized>(
    actions: &L,
    catalog: &impl ActionCatalog,
    options: &BlockOptions,
) -> String {
    // Room for the lines, plus headers, metadata and guidance.
    let mut out = String::with_capacity(
        8192 + (0..actions.len())
            .map(|i| {
                let line = actions.line(i);
                line.command.len() + line.description.len() + 32
            })
            .sum::<usize>(),
    );
    write_available_actions(&mut out, actions, catalog, options);
    out
}

/// Like [`render_available_actions`], appending to `out`.
pub fn write_available_actions<L: ActionList + ?Sized>(
    out: &mut String,
    actions: &L,
    catalog: &impl ActionCatalog,
    options: &BlockOptions,
) {
    // Each line looked up once.
    let lines: SmallVec<[BlockLine<'_>; 64]> =
        (0..actions.len()).map(|i| actions.line(i)).collect();
    lay_out(out, &lines, catalog, options);
}

/// The characters of the block [`write_available_actions`] would write, counted
/// without writing it. `ascii` says every command and description is ASCII, so their
/// bytes are their characters: a caller measuring many parts of one list checks once.
pub(crate) fn count_available_actions(
    lines: &[BlockLine<'_>],
    catalog: &impl ActionCatalog,
    options: &BlockOptions,
    ascii: bool,
) -> usize {
    let mut count = CharCount { chars: 0, ascii };
    lay_out(&mut count, lines, catalog, options);
    count.chars
}

/// Where the block goes: written out, or only counted.
trait BlockOut {
    /// Text of the block's own, all ASCII.
    fn ascii(&mut self, text: &'static str);
    fn text(&mut self, text: &str);
    /// A namespace, in capitals.
    fn namespace(&mut self, namespace: &str);
    fn number(&mut self, number: usize);
    fn line(&mut self, line: &BlockLine<'_>);
}

impl BlockOut for String {
    fn ascii(&mut self, text: &'static str) {
        self.push_str(text);
    }

    fn text(&mut self, text: &str) {
        self.push_str(text);
    }

    fn namespace(&mut self, namespace: &str) {
        let start = self.len();
        self.push_str(namespace);
        self[start..].make_ascii_uppercase();
    }

    fn number(&mut self, number: usize) {
        self.push_str(itoa::Buffer::new().format(number));
    }

    fn line(&mut self, line: &BlockLine<'_>) {
        write_line(self, line);
    }
}

/// Counts the characters the block would have.
struct CharCount {
    chars: usize,
    /// Every line's command and description is ASCII.
    ascii: bool,
}

impl BlockOut for CharCount {
    fn ascii(&mut self, text: &'static str) {
        debug_assert!(text.is_ascii(), "{text}");
        self.chars += text.len();
    }

    fn text(&mut self, text: &str) {
        self.chars += text.chars().count();
    }

    fn namespace(&mut self, namespace: &str) {
        // Capitals change no character count: only ASCII letters are changed.
        self.text(namespace);
    }

    fn number(&mut self, number: usize) {
        self.chars += itoa::Buffer::new().format(number).len();
    }

    fn line(&mut self, line: &BlockLine<'_>) {
        let chars = |text: &str| {
            if self.ascii {
                text.len()
            } else {
                text.chars().count()
            }
        };
        let written = chars(line.command) + chars(line.description);
        self.chars += LINE_FRAME.len() + written;
        self.number(line.index);
    }
}

/// What [`write_line`] writes besides the number, the command and the description.
const LINE_FRAME: &str = "[Index: ] Command: \"\" - \n";

/// Lays out the block of these lines.
fn lay_out(
    out: &mut impl BlockOut,
    lines: &[BlockLine<'_>],
    catalog: &impl ActionCatalog,
    options: &BlockOptions,
) {
    out.ascii("<available_actions>\n");
    // Distinct namespaces in order of first appearance: each one's actions and where
    // the first of them is. Actions usually come grouped already: each group is then
    // one run of the list.
    let mut groups: SmallVec<[Group<'_>; 8]> = SmallVec::new();
    let mut grouped = true;
    for (position, line) in lines.iter().enumerate() {
        // Check the current group before searching.
        if let Some(last) = groups.last_mut()
            && in_namespace(line.action_id, last.namespace)
        {
            last.count += 1;
            continue;
        }
        let namespace = action_namespace(line.action_id);
        match groups.iter_mut().find(|group| group.namespace == namespace) {
            Some(group) => {
                group.count += 1;
                grouped = false;
            }
            None => groups.push(Group {
                namespace,
                count: 1,
                first: position,
            }),
        }
    }

    if lines.is_empty() {
        out.ascii("(nothing to do right now: answer with null)\n\n");
        out.ascii(FLAT_GUIDANCE);
        return;
    }
    if lines.len() < options.min_actions || groups.len() < options.min_namespaces {
        for line in lines {
            out.line(line);
        }
        out.ascii("\n");
        out.ascii(FLAT_GUIDANCE);
        return;
    }

    let mut ordered: SmallVec<[GroupOrder<'_>; 8]> = groups
        .iter()
        .enumerate()
        .map(|(group, &Group { namespace, .. })| {
            let (rank, metadata) = catalog.action_group(namespace);
            (rank, namespace, metadata, group)
        })
        .collect();
    ordered.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));

    // When a group's actions are not one run, its members are gathered by a counting
    // sort, so each group is one slice of positions.
    let mut starts: SmallVec<[usize; 8]> = SmallVec::new();
    let mut total = 0;
    for group in &groups {
        starts.push(total);
        total += group.count;
    }
    let members: Vec<usize> = if grouped {
        Vec::new()
    } else {
        let mut next = starts.clone();
        let mut members = vec![0; lines.len()];
        for (position, line) in lines.iter().enumerate() {
            let namespace = action_namespace(line.action_id);
            if let Some(group) = groups.iter().position(|group| group.namespace == namespace) {
                members[next[group]] = position;
                next[group] += 1;
            }
        }
        members
    };

    for (_, namespace, metadata, group) in ordered {
        let Group { count, first, .. } = groups[group];
        out.ascii("## ");
        out.namespace(namespace);
        out.ascii(" ACTIONS (");
        out.number(count);
        out.ascii(" actions)\n");
        let purpose = metadata.and_then(|m| m.purpose.as_deref());
        let consider_when = metadata.and_then(|m| m.consider_when.as_deref());
        if let Some(purpose) = purpose {
            out.ascii("**Purpose:** ");
            out.text(purpose);
            out.ascii("\n");
        }
        if let Some(consider_when) = consider_when {
            out.ascii("**Consider when:** ");
            out.text(consider_when);
            out.ascii("\n");
        }
        if purpose.is_some() || consider_when.is_some() {
            out.ascii("\n");
        }
        if grouped {
            for line in &lines[first..first + count] {
                out.line(line);
            }
        } else {
            for &position in &members[starts[group]..starts[group] + count] {
                out.line(&lines[position]);
            }
        }
        out.ascii("\n");
    }
    out.ascii(GROUPED_GUIDANCE);
}

/// A namespace's actions: how many, and the position of the first.
#[derive(Clone, Copy)]
struct Group<'a> {
    namespace: &'a str,
    count: usize,
    first: usize,
}

/// A group's rank, namespace, mod metadata and position among the groups found.
type GroupOrder<'a> = (usize, &'a str, Option<&'a ModActionMetadata>, usize);

fn write_line(out: &mut String, line: &BlockLine<'_>) {
    out.push_str("[Index: ");
    push_number(out, line.index);
    out.push_str("] Command: \"");
    out.push_str(line.command);
    out.push_str("\" - ");
    out.push_str(line.description);
    out.push('\n');
}

/// Whether `id` is `namespace:...`, without searching it for the colon.
fn in_namespace(id: &str, namespace: &str) -> bool {
    let (id, namespace) = (id.as_bytes(), namespace.as_bytes());
    id.len() > namespace.len()
        && id[namespace.len()] == b':'
        && id.iter().zip(namespace).all(|(a, b)| a == b)
}

fn push_number(out: &mut String, number: usize) {
    out.push_str(itoa::Buffer::new().format(number));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::{ContentSources, GameManifest, ModManifest};

    const GUIDANCE: &str = "<selection_guidance>
**Decision Process:**
1. What does my character want right now? (Check your goals)
2. What just happened? (Review what you perceive)
3. What's my emotional state? (Consider your persona)
4. Which category serves my current needs?
5. Which specific action within that category fits best?
</selection_guidance>
</available_actions>";

    const FLAT: &str = "<selection_guidance>
**Decision Process:**
1. What does my character want right now? (Check your goals)
2. What just happened? (Review what you perceive)
3. What's my emotional state? (Consider your persona)
4. Which action fits best?
</selection_guidance>
</available_actions>";

    struct Line(usize, &'static str, &'static str, &'static str);

    impl ActionLine for Line {
        fn index(&self) -> usize {
            self.0
        }
        fn action_id(&self) -> &str {
            self.1
        }
        fn command(&self) -> &str {
            self.2
        }
        fn description(&self) -> &str {
            self.3
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

    fn actions() -> Vec<Line> {
        vec![
            Line(1, "core:wait", "wait", "Let time pass"),
            Line(
                2,
                "positioning:get_close",
                "get close to Registrar Copperplate",
                "Move closer to someone",
            ),
            Line(
                3,
                "positioning:step_back",
                "step back from Registrar Copperplate",
                "Create distance from someone",
            ),
            Line(
                4,
                "positioning:sit_down",
                "sit down on bench",
                "Take a seat on available furniture",
            ),
            Line(
                5,
                "items:pick_up",
                "pick up book",
                "Take an item from location",
            ),
            Line(
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
    fn counting_the_block_gives_the_characters_writing_it_gives() {
        let registry = registry(
            &[
                ("core", Some("Pass time — quietly."), None),
                ("items", None, Some("Managing inventory.")),
                ("positioning", Some(PURPOSE), Some(CONSIDER)),
            ],
            &["positioning"],
        );
        let mut all = actions();
        all.push(Line(
            7,
            "items:give",
            "give crêpe to Zoë",
            "Hand something over",
        ));
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
        // Every subset of the lines, numbered as a trimmed offer numbers them, and
        // the same lines out of order (a group that is not one run).
        for subset in 0u32..1 << all.len() {
            let lines: Vec<BlockLine<'_>> = all
                .iter()
                .enumerate()
                .filter(|(i, _)| subset & (1 << i) != 0)
                .enumerate()
                .map(|(index, (_, line))| BlockLine {
                    index: index + 1,
                    ..BlockLine::from(line)
                })
                .collect();
            let reversed: Vec<BlockLine<'_>> = lines.iter().rev().copied().collect();
            let ascii = lines
                .iter()
                .all(|line| line.command.is_ascii() && line.description.is_ascii());
            for list in [&lines, &reversed] {
                for options in &options {
                    for catalog in [&registry, &ContentRegistry::default()] {
                        let mut block = String::new();
                        write_available_actions(&mut block, list, catalog, options);
                        let counted = count_available_actions(list, catalog, options, ascii);
                        assert_eq!(counted, block.chars().count(), "{block}");
                    }
                }
            }
        }
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
        let block = render_available_actions(&actions(), &registry, &BlockOptions::default());
        assert_eq!(
            block,
            format!(
                "<available_actions>
## POSITIONING ACTIONS (3 actions)
**Purpose:** {PURPOSE}
**Consider when:** {CONSIDER}

[Index: 2] Command: \"get close to Registrar Copperplate\" - Move closer to someone
[Index: 3] Command: \"step back from Registrar Copperplate\" - Create distance from someone
[Index: 4] Command: \"sit down on bench\" - Take a seat on available furniture

## CORE ACTIONS (1 actions)
**Purpose:** Pass time without taking significant action.

[Index: 1] Command: \"wait\" - Let time pass

## ITEMS ACTIONS (2 actions)
**Purpose:** Interact with objects through pickup and transfer.
**Consider when:** Managing inventory or sharing items.

[Index: 5] Command: \"pick up book\" - Take an item from location
[Index: 6] Command: \"give book to Registrar Copperplate\" - Hand something to someone

{GUIDANCE}"
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
        let block = render_available_actions(&actions(), &registry, &BlockOptions::default());
        assert_eq!(
            block,
            format!(
                "<available_actions>
## CORE ACTIONS (1 actions)
**Consider when:** When nothing else fits the moment.

[Index: 1] Command: \"wait\" - Let time pass

## ITEMS ACTIONS (2 actions)
**Purpose:** Interact with objects through pickup and transfer.

[Index: 5] Command: \"pick up book\" - Take an item from location
[Index: 6] Command: \"give book to Registrar Copperplate\" - Hand something to someone

## POSITIONING ACTIONS (3 actions)
[Index: 2] Command: \"get close to Registrar Copperplate\" - Move closer to someone
[Index: 3] Command: \"step back from Registrar Copperplate\" - Create distance from someone
[Index: 4] Command: \"sit down on bench\" - Take a seat on available furniture

{GUIDANCE}"
            )
        );
    }

    #[test]
    fn no_metadata_anywhere_is_the_plain_grouped_list() {
        let block = render_available_actions(
            &actions(),
            &ContentRegistry::default(),
            &BlockOptions::default(),
        );
        assert_eq!(
            block,
            format!(
                "<available_actions>
## CORE ACTIONS (1 actions)
[Index: 1] Command: \"wait\" - Let time pass

## ITEMS ACTIONS (2 actions)
[Index: 5] Command: \"pick up book\" - Take an item from location
[Index: 6] Command: \"give book to Registrar Copperplate\" - Hand something to someone

## POSITIONING ACTIONS (3 actions)
[Index: 2] Command: \"get close to Registrar Copperplate\" - Move closer to someone
[Index: 3] Command: \"step back from Registrar Copperplate\" - Create distance from someone
[Index: 4] Command: \"sit down on bench\" - Take a seat on available furniture

{GUIDANCE}"
            )
        );
    }

    #[test]
    fn a_group_split_in_the_list_is_shown_whole() {
        let mut split = actions();
        // `core:wait` after the items, not before the positioning actions.
        split.rotate_left(1);
        let block = render_available_actions(
            &split,
            &ContentRegistry::default(),
            &BlockOptions::default(),
        );
        let grouped = render_available_actions(
            &actions(),
            &ContentRegistry::default(),
            &BlockOptions::default(),
        );
        assert_eq!(block, grouped, "groups sort the same whatever the order");
        let mut interleaved = actions();
        interleaved.swap(3, 4);
        assert!(
            render_available_actions(
                &interleaved,
                &ContentRegistry::default(),
                &BlockOptions::default()
            )
            .contains(
                "## POSITIONING ACTIONS (3 actions)
[Index: 2] Command: \"get close to Registrar Copperplate\" - Move closer to someone
[Index: 3] Command: \"step back from Registrar Copperplate\" - Create distance from someone
[Index: 4] Command: \"sit down on bench\" - Take a seat on available furniture
"
            ),
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
        let expected_flat = |lines: &[Line]| {
            let mut text = String::from("<available_actions>\n");
            for line in lines {
                text.push_str(&format!(
                    "[Index: {}] Command: \"{}\" - {}\n",
                    line.0, line.2, line.3
                ));
            }
            format!("{text}\n{FLAT}")
        };
        let five = &actions()[..5];
        assert_eq!(
            render_available_actions(five, &registry, &BlockOptions::default()),
            expected_flat(five),
            "5 < 6 actions"
        );
        let one_mod = [
            Line(1, "core:a", "a", "A"),
            Line(2, "core:b", "b", "B"),
            Line(3, "core:c", "c", "C"),
            Line(4, "core:d", "d", "D"),
            Line(5, "core:e", "e", "E"),
            Line(6, "core:f", "f", "F"),
        ];
        assert_eq!(
            render_available_actions(&one_mod, &registry, &BlockOptions::default()),
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
    fn nothing_to_offer_says_so() {
        let block = render_available_actions(
            &Vec::<Line>::new(),
            &ContentRegistry::default(),
            &BlockOptions::default(),
        );
        assert!(
            block.starts_with("<available_actions>\n(nothing to do right now: answer with null)\n")
        );
    }
}
