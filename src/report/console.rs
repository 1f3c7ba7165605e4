//! Where a command's human text goes: stdout, or stderr when `--json -` gives stdout to
//! the JSON result (as oha does), so `wirebench echo --json - | jq` reads the result
//! alone and the summary still shows.

use std::io::Write;
use std::path::Path;

/// `--json -`: the JSON result is written to stdout.
pub fn is_stdout(json: &Path) -> bool {
    json == Path::new("-")
}

/// The stream a command prints its plan, summary and closing lines on.
#[derive(Clone, Copy, Debug)]
pub struct Console {
    to_stderr: bool,
}

impl Console {
    /// The console of a command whose JSON goes to `json` (`--json`).
    pub fn for_json(json: Option<&Path>) -> Console {
        Console {
            to_stderr: json.is_some_and(is_stdout),
        }
    }

    /// Prints `text` as it is (no newline added). A closed stdout ends the process
    /// quietly, as a print does (SIGPIPE, main.rs).
    pub fn print(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        let _ = if self.to_stderr {
            std::io::stderr().lock().write_all(text.as_bytes())
        } else {
            std::io::stdout().lock().write_all(text.as_bytes())
        };
    }
}
