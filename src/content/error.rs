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

#[cfg(test)]
mod tests {
    use super::*;

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
