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
