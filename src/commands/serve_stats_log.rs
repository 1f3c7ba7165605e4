//! `serve --stats-json FILE`: the `--stats` intervals as JSON lines, one per interval
//! and one more at stop for the time since the last, so the rows' counts add up to
//! the final counters exactly. The server times no request (a reply leaves as soon as
//! its bytes are written), so a row holds counts only, no latency.

use crate::server::counters::ServerTotals;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

pub(crate) struct StatsLog {
    out: BufWriter<File>,
    path: String,
    /// The counters at the end of the row before, and when that was.
    last: ServerTotals,
    last_at: Duration,
}

/// A row's counters: the additive ones only (`active` is the row's own field, the
/// event loops are the final line's).
fn counts(t: &ServerTotals) -> serde_json::Value {
    let mut v = serde_json::to_value(t).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("active");
        o.remove("event_loop");
    }
    v
}

impl StatsLog {
    pub(crate) fn open(path: &Path) -> Option<StatsLog> {
        match File::create(path) {
            Ok(f) => Some(StatsLog {
                out: BufWriter::new(f),
                path: path.display().to_string(),
                last: ServerTotals::default(),
                last_at: Duration::ZERO,
            }),
            Err(e) => {
                eprintln!(
                    "wirebench: --stats-json {}: cannot write it: {e}",
                    path.display()
                );
                None
            }
        }
    }

    /// The row of the interval that ends `at` (since the server started) with the
    /// counters `now`; the `last` row carries the totals too. Each row is flushed, so
    /// a reader sees it as the interval ends. A write that fails is said once and the
    /// log stops; the server goes on.
    pub(crate) fn row(mut self, at: Duration, now: &ServerTotals, last: bool) -> Option<Self> {
        let mut row = serde_json::json!({
            "t_s": at.as_secs_f64(),
            "duration_s": at.saturating_sub(self.last_at).as_secs_f64(),
            "active": now.active,
            "interval": counts(&now.since(&self.last)),
            "last": last,
        });
        if last {
            row["total"] = counts(now);
        }
        let written = writeln!(self.out, "{row}").and_then(|_| self.out.flush());
        if let Err(e) = written {
            eprintln!(
                "wirebench: --stats-json {}: writing failed, no more rows: {e}",
                self.path
            );
            return None;
        }
        self.last = *now;
        self.last_at = at;
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_add_up_to_the_last_rows_total() {
        let dir = std::env::temp_dir().join(format!("wb-stats-log-{}", std::process::id()));
        let mut log = StatsLog::open(&dir).expect("a log");
        let mut t = ServerTotals::default();
        for (i, n) in [3u64, 0, 7].iter().enumerate() {
            t.requests += n;
            t.accepts += 1;
            t.active = 1;
            log = log
                .row(Duration::from_secs(i as u64 + 1), &t, false)
                .unwrap();
        }
        t.requests += 2;
        t.active = 0;
        log.row(Duration::from_millis(3500), &t, true).unwrap();
        let text = std::fs::read_to_string(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
        let rows: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 4);
        let sum: u64 = rows
            .iter()
            .map(|r| r["interval"]["requests"].as_u64().unwrap())
            .sum();
        assert_eq!(sum, 12);
        assert_eq!(rows[3]["total"]["requests"], 12);
        assert_eq!(rows[3]["total"]["accepts"], 3);
        assert_eq!(rows[3]["duration_s"], 0.5);
        assert_eq!(rows[3]["last"], true);
        assert!(rows[3]["interval"].get("active").is_none());
    }
}
