//! A request of a `--request-set` file as written, before validation: what both
//! formats' readers (`targets.rs`, `requests_toml.rs`) make and `request_set.rs`
//! validates. A leaf, so the readers and the validation import it, not each other.

use std::path::PathBuf;

/// Where a request's body comes from.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Body {
    #[default]
    None,
    Inline(Vec<u8>),
    /// A file's bytes (the path as written, read from the current directory when
    /// relative, as vegeta does), and the line naming it.
    File(PathBuf, usize),
}

/// One request as the file writes it, before validation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawEntry {
    /// The line it starts on (TOML: its `url`'s).
    pub line: usize,
    pub name: Option<String>,
    /// Empty: POST with a body, GET without.
    pub method: String,
    pub url: String,
    /// (name, value, line).
    pub headers: Vec<(String, String, usize)>,
    pub body: Body,
    pub weight: u32,
    /// Statuses that count as correct (`--expect-status`'s grammar), and its line.
    pub status: Option<(String, usize)>,
    /// A substring the response body must hold, and its line.
    pub body_contains: Option<(String, usize)>,
}

impl RawEntry {
    pub fn new(line: usize, method: &str, url: &str) -> Self {
        RawEntry {
            line,
            name: None,
            method: method.to_string(),
            url: url.to_string(),
            headers: Vec::new(),
            body: Body::None,
            weight: 1,
            status: None,
            body_contains: None,
        }
    }
}
