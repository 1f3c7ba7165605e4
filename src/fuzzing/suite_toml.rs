//! Arbitrary text as a suite file, through the same parse and validation `wirebench
//! suite` runs (TOML, then every key checked). Nothing may panic; an error is one line
//! naming the file and a line of it; an accepted suite has servers, loads and 1 to 100
//! rounds. Run: `cargo +nightly fuzz run suite_toml`.

use crate::suite::plan::parse;
use std::path::Path;

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    // plan::load reads the file with read_to_string: text that is not UTF-8 is refused there.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse(Path::new("fuzz.toml"), text) {
        Ok(s) => {
            assert!(!s.servers.is_empty() && !s.loads.is_empty());
            assert!((1..=100).contains(&s.rounds));
        }
        Err(e) => {
            let msg = e.to_string();
            assert_eq!(e.exit_code(), 2, "{msg}");
            assert!(msg.starts_with("fuzz.toml:"), "{msg}");
            assert!(!msg.contains('\n'), "more than one line: {msg:?}");
        }
    }
}
