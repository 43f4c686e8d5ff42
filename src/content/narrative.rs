//! Narrative context: the authored fragment pools narration picks from, per entity key,
//! and the canonical vocabularies their keys come from.
//!
//! ```json
//! {
//!   "key": "tavern:lute",
//!   "traits": ["cracked soundboard", "smells of pipe smoke", "three good strings"],
//!   "atmosphere": "wistful, worn",
//!   "state_variants": { "carried": ["slung across a back", "cradled like a child"] },
//!   "action_fragments": {
//!     "take": { "core": ["you lift the lute", "you take up the lute"],
//!               "color": ["a string hums under your thumb", "it is lighter than it looks"] }
//!   },
//!   "failure_fragments": { "not_here": { "core": ["the lute is nowhere in reach"] } },
//!   "effect_fragments": {},
//!   "behavior_fragments": {},
//!   "dialogue_fragments": { "greeting": ["'Evening.'"] }
//! }
//! ```
//!
//! Fragments are used exactly as written; only the placeholders in
//! [`FRAGMENT_PLACEHOLDERS`] are filled from the report being narrated.

use std::collections::{BTreeMap, BTreeSet};

use bevy::asset::Asset;
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

use super::validate::too_long;
use super::{ContentAsset, ContentError, TEXT_LIMITS, owning_mod};

/// One authored phrase, with a stable id computed when it is loaded (for the
/// repetition buffer, so picking never hashes text).
#[derive(Debug, Clone, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub struct Fragment {
    text: String,
    id: u64,
    has_placeholders: bool,
}

impl Fragment {
    /// A fragment with this text.
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let id = fragment_id(&text);
        let has_placeholders = text.contains('{');
        Self {
            text,
            id,
            has_placeholders,
        }
    }

    /// The text as authored.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the text has a `{` (a placeholder to fill).
    pub fn has_placeholders(&self) -> bool {
        self.has_placeholders
    }

    /// A stable id: equal texts have equal ids.
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl PartialEq for Fragment {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl From<String> for Fragment {
    fn from(text: String) -> Self {
        Self::new(text)
    }
}

impl From<&str> for Fragment {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl From<Fragment> for String {
    fn from(fragment: Fragment) -> Self {
        fragment.text
    }
}

/// 64-bit FNV-1a of the text.
fn fragment_id(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A pool for one verb, failure reason, effect or behaviour: `core` phrases (one is
/// always used) and `color` phrases (embellishment).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FragmentPool {
    /// The statement itself; narration picks exactly one.
    #[serde(default)]
    pub core: Vec<Fragment>,
    /// Embellishments; narration picks a few.
    #[serde(default)]
    pub color: Vec<Fragment>,
}

/// Everything narration knows about one entity key (`mods/<mod>/narrative/<name>.narrative.json`).
///
/// An entity uses it through a [`NarrativeKey`](crate::world::NarrativeKey) component.
#[derive(Asset, TypePath, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NarrativeContext {
    /// `mod:name`; the namespace is the id of the mod that owns the file.
    pub key: String,
    /// Short sensory phrases: "pitted blade", "creaks when moved".
    #[serde(default)]
    pub traits: Vec<Fragment>,
    /// Mood words for a place or a person: "smoky, loud, warm".
    #[serde(default)]
    pub atmosphere: Option<String>,
    /// How the entity looks in a state (`in_inventory`, `open`, `carried`), a pool per state.
    #[serde(default)]
    pub state_variants: BTreeMap<String, Vec<Fragment>>,
    /// What doing a verb to this entity looks like, per canonical verb.
    #[serde(default)]
    pub action_fragments: BTreeMap<String, FragmentPool>,
    /// How a verb fails on this entity, per canonical failure reason.
    #[serde(default)]
    pub failure_fragments: BTreeMap<String, FragmentPool>,
    /// What an effect looks like here, per canonical effect.
    #[serde(default)]
    pub effect_fragments: BTreeMap<String, FragmentPool>,
    /// What this character looks like doing a verb, per canonical verb; written
    /// without the subject ("nods slowly"), which narration puts in front.
    #[serde(default)]
    pub behavior_fragments: BTreeMap<String, FragmentPool>,
    /// Lines this character may say, per topic (free-form keys).
    #[serde(default)]
    pub dialogue_fragments: BTreeMap<String, Vec<Fragment>>,
}

/// The placeholders a fragment may use, filled from the report being narrated:
/// the entity the fragment belongs to (`name`), the actor, the object (`item`, or
/// `object`), the indirect object (`target`), the instrument, and the place.
pub const FRAGMENT_PLACEHOLDERS: &[&str] = &[
    "name",
    "actor",
    "item",
    "object",
    "target",
    "instrument",
    "place",
];

/// The fewest fragments a pool should hold before narration starts to repeat itself;
/// a smaller pool loads with a warning. The recommended sizes are larger (see the
/// crate's README).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolMinimums {
    /// Action cores per verb.
    pub action_core: usize,
    /// Action colors per verb.
    pub action_color: usize,
    /// Variants per state.
    pub state_variant: usize,
    /// Failure cores per reason.
    pub failure_core: usize,
    /// Failure colors per reason.
    pub failure_color: usize,
    /// Effect cores per effect.
    pub effect_core: usize,
    /// Behaviour cores per verb.
    pub behavior_core: usize,
    /// Traits per entity.
    pub traits: usize,
}

/// The documented minimums.
pub const POOL_MINIMUMS: PoolMinimums = PoolMinimums {
    action_core: 2,
    action_color: 2,
    state_variant: 2,
    failure_core: 1,
    failure_color: 0,
    effect_core: 1,
    behavior_core: 2,
    traits: 5,
};

/// The recommended pool sizes: what content should aim for.
pub const POOL_RECOMMENDED: PoolMinimums = PoolMinimums {
    action_core: 3,
    action_color: 4,
    state_variant: 3,
    failure_core: 2,
    failure_color: 2,
    effect_core: 2,
    behavior_core: 3,
    traits: 15,
};

/// Canonical verbs: the keys of `action_fragments` and `behavior_fragments`, and the
/// `verb` of an [`ActionReport`](crate::narration::ActionReport). A mod adds its own in
/// its manifest's `vocabulary.verbs`.
pub const CANONICAL_VERBS: &[&str] = &[
    "take",
    "drop",
    "give",
    "examine",
    "read",
    "open",
    "close",
    "lock",
    "unlock",
    "push",
    "pull",
    "climb",
    "enter",
    "go",
    "look",
    "wait",
    "sit",
    "stand",
    "greet",
    "ask",
    "tell",
    "talk",
    "attack",
    "flee",
    "draw",
    "light",
    "extinguish",
    "eat",
    "drink",
    "use",
];

/// Canonical failure reasons: the keys of `failure_fragments` and an
/// [`ActionReport`](crate::narration::ActionReport)'s `failure_reason`. A mod adds its
/// own in `vocabulary.failureReasons`.
pub const CANONICAL_FAILURE_REASONS: &[&str] = &[
    "too_heavy",
    "not_portable",
    "locked",
    "not_visible",
    "not_here",
    "not_held",
    "already_open",
    "already_closed",
    "no_key",
    "wrong_key",
    "not_container",
    "inventory_full",
    "blocked",
    "refused",
];

/// Canonical effects: the keys of `effect_fragments` and an
/// [`EffectReport`](crate::narration::EffectReport)'s `action`. A mod adds its own in
/// `vocabulary.effects`.
pub const CANONICAL_EFFECTS: &[&str] = &[
    "step_up",
    "step_down",
    "sit_down",
    "stand_up",
    "enter",
    "exit",
    "open",
    "close",
    "pick_up",
    "hand_over",
    "state_change",
];

/// Words a mod adds to the canonical vocabularies (a manifest's `vocabulary`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VocabularyExtension {
    /// More verbs.
    #[serde(default)]
    pub verbs: Vec<String>,
    /// More failure reasons.
    #[serde(default)]
    pub failure_reasons: Vec<String>,
    /// More effects.
    #[serde(default)]
    pub effects: Vec<String>,
}

/// The vocabularies in force: the canonical words and what loaded mods added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NarrativeVocabulary {
    /// Verbs.
    pub verbs: BTreeSet<String>,
    /// Failure reasons.
    pub failure_reasons: BTreeSet<String>,
    /// Effects.
    pub effects: BTreeSet<String>,
}

impl Default for NarrativeVocabulary {
    fn default() -> Self {
        let set = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect();
        Self {
            verbs: set(CANONICAL_VERBS),
            failure_reasons: set(CANONICAL_FAILURE_REASONS),
            effects: set(CANONICAL_EFFECTS),
        }
    }
}

impl NarrativeVocabulary {
    /// Adds a mod's words.
    pub fn extend(&mut self, extension: &VocabularyExtension) {
        self.verbs.extend(extension.verbs.iter().cloned());
        self.failure_reasons
            .extend(extension.failure_reasons.iter().cloned());
        self.effects.extend(extension.effects.iter().cloned());
    }

    /// Keys of a narrative file that no vocabulary knows, each as an error naming its field.
    pub fn unknown_keys(&self, file: &str, context: &NarrativeContext) -> Vec<ContentError> {
        let mut problems = Vec::new();
        let mut check = |field: &str,
                         keys: &mut dyn Iterator<Item = &String>,
                         known: &BTreeSet<String>,
                         what: &str,
                         extend: &str| {
            for key in keys {
                if !known.contains(key) {
                    let words = known
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", ");
                    problems.push(ContentError::new(
                        file,
                        format!("/{field}/{}", pointer_escape(key)),
                        format!("unknown {what} `{key}`: use one of {words}, or add it to a manifest's `vocabulary.{extend}`"),
                    ));
                }
            }
        };
        check(
            "action_fragments",
            &mut context.action_fragments.keys(),
            &self.verbs,
            "verb",
            "verbs",
        );
        check(
            "behavior_fragments",
            &mut context.behavior_fragments.keys(),
            &self.verbs,
            "verb",
            "verbs",
        );
        check(
            "failure_fragments",
            &mut context.failure_fragments.keys(),
            &self.failure_reasons,
            "failure reason",
            "failureReasons",
        );
        check(
            "effect_fragments",
            &mut context.effect_fragments.keys(),
            &self.effects,
            "effect",
            "effects",
        );
        problems
    }
}

fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Whether a vocabulary word or state key is lowercase letters, digits and `_`.
pub fn is_vocabulary_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A pool with fewer fragments than wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolShortfall {
    /// A JSON pointer to the pool in the entity's file (`/action_fragments/take/core`).
    pub pointer: String,
    /// How many fragments it has.
    pub have: usize,
    /// How many it should have.
    pub wanted: usize,
}

impl NarrativeContext {
    /// Pools smaller than `wanted` says ([`POOL_MINIMUMS`] or [`POOL_RECOMMENDED`]):
    /// traits only when there are some, and effect and behaviour colors never (they
    /// have no size of their own).
    pub fn pools_below(&self, wanted: &PoolMinimums) -> Vec<PoolShortfall> {
        let mut found = Vec::new();
        let mut note = |pointer: String, have: usize, wanted: usize| {
            if have < wanted {
                found.push(PoolShortfall {
                    pointer,
                    have,
                    wanted,
                });
            }
        };
        if !self.traits.is_empty() {
            note("/traits".to_owned(), self.traits.len(), wanted.traits);
        }
        for (state, pool) in &self.state_variants {
            note(
                format!("/state_variants/{}", pointer_escape(state)),
                pool.len(),
                wanted.state_variant,
            );
        }
        for (field, pools, core, color) in [
            (
                "action_fragments",
                &self.action_fragments,
                wanted.action_core,
                wanted.action_color,
            ),
            (
                "failure_fragments",
                &self.failure_fragments,
                wanted.failure_core,
                wanted.failure_color,
            ),
            (
                "effect_fragments",
                &self.effect_fragments,
                wanted.effect_core,
                0,
            ),
            (
                "behavior_fragments",
                &self.behavior_fragments,
                wanted.behavior_core,
                0,
            ),
        ] {
            for (key, pool) in pools {
                let key = pointer_escape(key);
                note(format!("/{field}/{key}/core"), pool.core.len(), core);
                note(format!("/{field}/{key}/color"), pool.color.len(), color);
            }
        }
        found
    }

    /// Pools smaller than [`POOL_MINIMUMS`], as warnings naming the field.
    pub fn small_pools(&self, file: &str) -> Vec<ContentError> {
        self.pools_below(&POOL_MINIMUMS)
            .into_iter()
            .map(|small| {
                ContentError::new(
                    file,
                    &small.pointer,
                    format!(
                        "only {} fragments; at least {} keep narration from repeating itself",
                        small.have, small.wanted
                    ),
                )
            })
            .collect()
    }
}

/// The problems of one fragment pool at `pointer`: empty (when `required`), an empty
/// or overlong fragment, an unknown placeholder.
fn pool_problems(
    file: &str,
    pointer: &str,
    pool: &[Fragment],
    required: bool,
) -> Vec<ContentError> {
    let mut problems = Vec::new();
    if required && pool.is_empty() {
        problems.push(ContentError::new(
            file,
            pointer,
            "an empty pool: give it at least one fragment or remove it",
        ));
    }
    for (index, fragment) in pool.iter().enumerate() {
        let pointer = format!("{pointer}/{index}");
        if fragment.text().trim().is_empty() {
            problems.push(ContentError::new(
                file,
                &pointer,
                "an empty fragment: write the phrase or remove it",
            ));
        }
        problems.extend(too_long(
            file,
            &pointer,
            fragment.text(),
            TEXT_LIMITS.fragment,
            "fragment",
        ));
        // A fragment with an unknown placeholder is passed over whole: a stray `}`
        // in it shows nowhere, and the placeholder's problem says what to fix.
        let unknown: Vec<&str> = super::template_placeholders(fragment.text())
            .filter(|placeholder| !FRAGMENT_PLACEHOLDERS.contains(placeholder))
            .collect();
        match unmatched_brace(fragment.text()) {
            Some('{') => problems.push(ContentError::new(
                file,
                &pointer,
                "a `{` never closed: close its placeholder (`{item}`), or write the text \
                 without braces",
            )),
            Some(_) if unknown.is_empty() => problems.push(ContentError::new(
                file,
                &pointer,
                "a `}` never opened: open its placeholder (`{item}`), or write the text \
                 without braces; narration would show it as written",
            )),
            _ => {}
        }
        for placeholder in unknown {
            problems.push(ContentError::new(
                file,
                &pointer,
                format!(
                    "unknown placeholder `{{{placeholder}}}`: use {}",
                    FRAGMENT_PLACEHOLDERS
                        .iter()
                        .map(|p| format!("{{{p}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    problems
}

/// The first brace of `text` that no other matches, as the narrator reads them (a
/// placeholder runs from a `{` to the next `}`): a `}` outside every placeholder, or a
/// `{` with no `}` after it.
fn unmatched_brace(text: &str) -> Option<char> {
    let mut rest = text;
    loop {
        let open = rest.find('{');
        match (open, rest.find('}')) {
            (_, Some(close)) if open.is_none_or(|open| close < open) => return Some('}'),
            (Some(open), _) => match rest[open + 1..].find('}') {
                Some(close) => rest = &rest[open + 1 + close + 1..],
                None => return Some('{'),
            },
            _ => return None,
        }
    }
}

impl ContentAsset for NarrativeContext {
    const EXTENSIONS: &'static [&'static str] = &["narrative.json", "narrative.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems = Vec::new();
        match self.key.split_once(':') {
            Some((namespace, name)) if !namespace.is_empty() && is_vocabulary_word(name) => {
                if owning_mod(file).is_some_and(|folder| !folder.eq_ignore_ascii_case(namespace)) {
                    problems.push(ContentError::new(
                        file,
                        "/key",
                        format!(
                            "the key `{}` must start with this file's mod, `{}:`",
                            self.key,
                            owning_mod(file).unwrap_or_default()
                        ),
                    ));
                }
            }
            _ => problems.push(ContentError::new(
                file,
                "/key",
                format!(
                    "`{}` is not a key: write `mod:name`, the name in lowercase letters, digits and `_`",
                    self.key
                ),
            )),
        }
        if let Some(atmosphere) = &self.atmosphere {
            problems.extend(too_long(
                file,
                "/atmosphere",
                atmosphere,
                TEXT_LIMITS.fragment,
                "fragment",
            ));
        }
        let mut fragments = |pointer: String, pool: &[Fragment], required: bool| {
            problems.extend(pool_problems(file, &pointer, pool, required));
        };
        fragments("/traits".to_owned(), &self.traits, false);
        for (state, pool) in &self.state_variants {
            fragments(
                format!("/state_variants/{}", pointer_escape(state)),
                pool,
                true,
            );
        }
        for (field, pools) in [
            ("action_fragments", &self.action_fragments),
            ("failure_fragments", &self.failure_fragments),
            ("effect_fragments", &self.effect_fragments),
            ("behavior_fragments", &self.behavior_fragments),
        ] {
            for (key, pool) in pools {
                let key = pointer_escape(key);
                fragments(format!("/{field}/{key}/core"), &pool.core, true);
                fragments(format!("/{field}/{key}/color"), &pool.color, false);
            }
        }
        for (topic, pool) in &self.dialogue_fragments {
            fragments(
                format!("/dialogue_fragments/{}", pointer_escape(topic)),
                pool,
                true,
            );
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::parse_content;

    const FILE: &str = "mods/tavern/narrative/lute.narrative.json";

    fn parse(json: &str) -> Result<NarrativeContext, Vec<ContentError>> {
        parse_content(json.as_bytes(), FILE)
    }

    #[test]
    fn an_empty_core_pool_names_its_field() {
        let problems = parse(
            r#"{"key": "tavern:lute", "action_fragments": {"take": {"core": [], "color": ["x"]}}}"#,
        )
        .expect_err("an empty core pool is refused");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].pointer, "/action_fragments/take/core");
        assert!(problems[0].message.contains("empty pool"));
    }

    #[test]
    fn an_unknown_placeholder_names_the_fragment() {
        let problems = parse(r#"{"key": "tavern:lute", "traits": ["fine", "owned by {owner}"]}"#)
            .expect_err("an unknown placeholder is refused");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].pointer, "/traits/1");
        assert!(
            problems[0].message.contains("{owner}"),
            "{}",
            problems[0].message
        );
    }

    #[test]
    fn a_brace_never_closed_names_the_fragment() {
        let problems = parse(r#"{"key": "tavern:lute", "traits": ["fine", "owned by {owner"]}"#)
            .expect_err("an unclosed brace is refused");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].pointer, "/traits/1");
        assert!(
            problems[0].message.contains("never closed"),
            "{}",
            problems[0].message
        );
    }

    #[test]
    fn a_brace_never_opened_names_the_fragment() {
        for fragment in [
            "rakes item} the coals",
            "rakes } the {item}",
            "rakes {item} the coals}",
            "rakes {item}} and {actor}",
        ] {
            let problems = parse(&json_of(fragment)).expect_err("a stray brace is refused");
            assert_eq!(problems.len(), 1, "{fragment}: {problems:?}");
            assert!(
                problems[0].message.contains("never opened"),
                "{}",
                problems[0].message
            );
        }
    }

    /// Braces read as the narrator fills them: `{{actor}}` names the placeholder
    /// `{actor`, which it does not know, so it is refused, not passed as `{actor}`
    /// (and the `}` after it shows nowhere: the narrator passes the fragment over).
    #[test]
    fn a_placeholder_is_read_as_the_narrator_fills_it() {
        let fragments = [
            ("{{actor}} nods", "`{{actor}`"),
            ("nods to {a {actor}", "`{a {actor}`"),
        ];
        for (fragment, placeholder) in fragments {
            let json = json_of(fragment);
            let problems = parse(&json).expect_err("braces the narrator would print");
            assert_eq!(problems.len(), 1, "{fragment}: {problems:?}");
            assert!(problems.iter().all(|p| p.pointer == "/traits/0"));
            assert!(problems.iter().any(|p| p.message.contains(placeholder)));
        }
        assert!(parse(&json_of("nods to {actor}")).is_ok());
    }

    fn json_of(fragment: &str) -> String {
        serde_json::json!({ "key": "tavern:lute", "traits": [fragment] }).to_string()
    }

    #[test]
    fn a_key_from_another_mod_is_refused() {
        let problems = parse(r#"{"key": "items:lute"}"#).expect_err("the key names another mod");
        assert_eq!(problems[0].pointer, "/key");
    }

    #[test]
    fn unknown_vocabulary_keys_are_named_and_a_mod_can_add_words() {
        let context = parse(
            r#"{"key": "tavern:lute", "action_fragments": {"strum": {"core": ["you strum"]}},
                "failure_fragments": {"out_of_tune": {"core": ["it twangs"]}}}"#,
        )
        .expect("the file itself is fine");
        let mut vocabulary = NarrativeVocabulary::default();
        let problems = vocabulary.unknown_keys(FILE, &context);
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            ["/action_fragments/strum", "/failure_fragments/out_of_tune"]
        );
        vocabulary.extend(&VocabularyExtension {
            verbs: vec!["strum".into()],
            failure_reasons: vec!["out_of_tune".into()],
            effects: Vec::new(),
        });
        assert!(vocabulary.unknown_keys(FILE, &context).is_empty());
    }

    #[test]
    fn small_pools_are_warnings() {
        let context = parse(
            r#"{"key": "tavern:lute", "traits": ["a", "b"],
                "action_fragments": {"take": {"core": ["you lift it"], "color": ["x", "y"]}}}"#,
        )
        .expect("small pools still load");
        let pointers: Vec<String> = context
            .small_pools(FILE)
            .into_iter()
            .map(|w| w.pointer)
            .collect();
        assert_eq!(pointers, ["/traits", "/action_fragments/take/core"]);
    }

    #[test]
    fn fragment_ids_follow_the_text() {
        // Loaded from content, the id is FNV-1a of the text: the same from one run or
        // version to the next, so ids kept in a save still name their fragments.
        let loaded: Fragment = serde_json::from_str("\"a\"").expect("a fragment");
        assert_eq!(loaded.id(), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(Fragment::new("a").id(), Fragment::new("b").id());
    }
}
