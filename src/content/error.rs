//! The one error type content problems are reported with.

use std::fmt;

use bevy::ecs::message::Message;

/// A problem in a content file: which file, which field, and what to fix.
///
/// Written as a message whenever content loads or reloads, and logged. The file or
/// item it names is skipped (or keeps its last valid version); the rest still loads.
#[derive(Message, Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContentError {
    /// The asset path of the file, relative to the content root (`mods/items/mod.json`).
    pub file: String,
    /// A JSON pointer to the field (`/targets/primary/scope`); empty for the whole file.
    pub pointer: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl ContentError {
    /// A problem with the field at `pointer` in `file`.
    pub fn new(
        file: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: file.into(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }

    /// The note that a file's last valid version stays in use.
    pub(crate) fn kept_last_valid(file: &str) -> Self {
        Self::new(
            file,
            "",
            "kept the last valid version of this file until its problems are fixed",
        )
    }
}

impl fmt::Display for ContentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{} at {}: {}", self.file, self.pointer, self.message)
        }
    }
}

impl std::error::Error for ContentError {}

/// Loaded ids for an error message: sorted, the first few; `none` when there are none.
pub(super) fn known_ids<'a>(ids: impl Iterator<Item = &'a str>, none: &str) -> String {
    const SHOWN: usize = 8;
    let mut ids: Vec<&str> = ids.collect();
    if ids.is_empty() {
        return none.to_owned();
    }
    ids.sort_unstable();
    let more = ids.len().saturating_sub(SHOWN);
    ids.truncate(SHOWN);
    let mut text = format!("loaded: {}", ids.join(", "));
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// The one of `known` that `id` most likely misspells, as a hint to end a message
/// with: ` (did you mean `tavern:marta`?)`; empty when none is close. Close is at
/// most one edit (a letter left out, added, changed or two swapped) in four
/// characters of its name (after its mod's `namespace:`), and at least one: ids of
/// one mod share their start, which says nothing of which is meant.
pub(crate) fn did_you_mean<'a>(id: &str, known: impl Iterator<Item = &'a str>) -> String {
    let name = id.rsplit_once(':').map_or(id, |(_, name)| name);
    let most = (name.chars().count() / 4).max(1);
    let closest = known
        .filter(|known| *known != id)
        .map(|known| (strsim::damerau_levenshtein(id, known), known))
        .filter(|(edits, _)| *edits <= most)
        .min();
    closest.map_or_else(String::new, |(_, known)| {
        format!(" (did you mean `{known}`?)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_id_is_told_the_closest_known() {
        let known = ["smithy:sharpen", "smithy:mend", "tavern:marta"];
        let hint = |id: &str| did_you_mean(id, known.into_iter());
        assert_eq!(hint("smithy:sharpn"), " (did you mean `smithy:sharpen`?)");
        assert_eq!(hint("smithy:mned"), " (did you mean `smithy:mend`?)");
        assert_eq!(hint("smithy:mnde"), "", "two edits in a name of four");
        assert_eq!(hint("tavern:tom"), "", "too far from any");
        assert_eq!(hint("smithy:mend"), "", "itself is no misspelling");
        assert_eq!(hint("x"), "");
    }

    #[test]
    fn known_ids_are_sorted_and_cut_short() {
        assert_eq!(known_ids(std::iter::empty(), "none"), "none");
        let ids = ["j", "i", "h", "g", "f", "e", "d", "c", "b", "a"];
        assert_eq!(
            known_ids(ids.into_iter(), "none"),
            "loaded: a, b, c, d, e, f, g, h and 2 more"
        );
    }
}
