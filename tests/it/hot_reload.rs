//! hot_reload
