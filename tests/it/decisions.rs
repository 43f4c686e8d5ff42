//! decisions
