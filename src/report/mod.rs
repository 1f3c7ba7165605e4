//! Rendering results: text (configuration, progress, summary, histogram) and JSON.

pub mod format;
pub mod json;
pub mod progress;
pub mod text;
