//! Redis's own figures. The client's: GET hits and misses, error replies by their
//! first word (`-ERR`, `-WRONGTYPE`, others), RESP3 pushes; kept per worker and phase,
//! merged exactly, and put in the result as its `redis` block. The server's: error
//! replies it sent, unknown and inline commands, protocol errors; per thread, merged
//! over threads and processes.

use crate::stats::Figures;
use serde::{Deserialize, Serialize};

/// The name of the result's block.
pub const BLOCK: &str = "redis";

/// What the client saw, beyond ok and error counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientFigures {
    /// GET replies with a value.
    pub hits: u64,
    /// GET replies with nil (the key was not set).
    pub misses: u64,
    /// Error replies starting `-ERR`.
    pub err: u64,
    /// Error replies starting `-WRONGTYPE`.
    pub wrongtype: u64,
    /// Error replies with any other first word (`-OOM`, `-NOAUTH`, `-MOVED`, ...).
    pub other_errors: u64,
    /// RESP3 pushes (`>`): counted as events, not replies.
    pub pushes: u64,
}

impl ClientFigures {
    /// Counts an error reply by its first word.
    #[inline]
    pub fn error_reply(&mut self, message: &[u8]) {
        let word = message.split(|&b| b == b' ').next().unwrap_or_default();
        match word {
            b"ERR" => self.err += 1,
            b"WRONGTYPE" => self.wrongtype += 1,
            _ => self.other_errors += 1,
        }
    }
}

impl Figures for ClientFigures {
    fn merge(&mut self, o: &Self) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.err += o.err;
        self.wrongtype += o.wrongtype;
        self.other_errors += o.other_errors;
        self.pushes += o.pushes;
    }
}

/// What `serve redis` counted beyond the server's common counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerFigures {
    /// Error replies sent (unknown commands, wrong arity, not an integer, ...).
    pub error_replies: u64,
    /// Commands it does not know.
    pub unknown_commands: u64,
    /// Commands that came inline (a line of words) rather than as RESP arrays.
    pub inline_commands: u64,
    /// Connections closed because their bytes were not RESP.
    pub protocol_errors: u64,
    /// SETs refused because the thread's store reached its cap (`-OOM`).
    pub oom: u64,
}

impl Figures for ServerFigures {
    fn merge(&mut self, o: &Self) {
        self.error_replies += o.error_replies;
        self.unknown_commands += o.unknown_commands;
        self.inline_commands += o.inline_commands;
        self.protocol_errors += o.protocol_errors;
        self.oom += o.oom;
    }
}

impl ServerFigures {
    pub fn line(&self) -> String {
        format!(
            "redis: {} error replies ({} unknown commands, {} refused by the store cap), {} inline commands, {} protocol errors",
            self.error_replies, self.unknown_commands, self.oom, self.inline_commands, self.protocol_errors
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_replies_count_by_first_word_and_merge_exactly() {
        let mut a = ClientFigures::default();
        a.error_reply(b"ERR unknown command 'x'");
        a.error_reply(b"WRONGTYPE Operation against a key holding the wrong kind of value");
        a.error_reply(b"OOM command not allowed");
        a.error_reply(b"");
        let mut b = ClientFigures {
            hits: 2,
            misses: 1,
            pushes: 5,
            ..Default::default()
        };
        b.merge(&a);
        assert_eq!(
            (
                b.err,
                b.wrongtype,
                b.other_errors,
                b.hits,
                b.misses,
                b.pushes
            ),
            (1, 1, 2, 2, 1, 5)
        );
    }
}

/// The `redis` block merged over shards and rounds (`Entry::block_merge`): `resp`
/// and `open_commands_per_connection` are settings, equal on every part and kept (the
/// plain counter sum would add them up); everything else is a counter and is summed.
pub fn block_merge(
    name: &str,
    blocks: &[&serde_json::Value],
    _merged: &crate::stats::RunResult,
) -> Option<Result<serde_json::Value, String>> {
    (name == BLOCK).then(|| merge(blocks))
}

fn merge(blocks: &[&serde_json::Value]) -> Result<serde_json::Value, String> {
    crate::stats::merge::counters::sum_with_settings(
        BLOCK,
        blocks,
        &["resp", "open_commands_per_connection"],
    )
}

#[cfg(test)]
mod merge_tests {
    use super::merge as merge_block;
    use serde_json::json;

    #[test]
    fn settings_are_kept_and_counters_summed() {
        let a = json!({"resp": 3, "open_commands_per_connection": 2, "hits": 5, "misses": 1,
            "error_replies": {"err": 1, "wrongtype": 0, "other": 0}, "pushes": 0});
        let b = json!({"resp": 3, "open_commands_per_connection": 2, "hits": 7, "misses": 0,
            "error_replies": {"err": 2, "wrongtype": 1, "other": 0}, "pushes": 4});
        let m = merge_block(&[&a, &b]).expect("same settings merge");
        assert_eq!(m["resp"], 3);
        assert_eq!(m["open_commands_per_connection"], 2);
        assert_eq!(m["hits"], 12);
        assert_eq!(m["error_replies"]["err"], 3);
        assert_eq!(m["pushes"], 4);
        let c = json!({"resp": 2, "open_commands_per_connection": 2, "hits": 0, "misses": 0,
            "error_replies": {"err": 0, "wrongtype": 0, "other": 0}, "pushes": 0});
        assert!(merge_block(&[&a, &c])
            .unwrap_err()
            .contains("redis.resp differs"));
    }
}
