#![doc = "bevy_loom"]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod content;
