//! Rendering results: text (configuration, progress, summary, histogram) and JSON.

pub mod console;
pub mod format;
pub mod image;
pub mod json;
pub mod progress;
pub mod search;
pub mod stages;
pub mod text;
pub mod thresholds;
pub mod tui;

// suites and reports (issue 7)
pub mod suite;
