//! What `connect` shows while it runs: one line per interval (redrawn in place on a
//! terminal, plain lines otherwise) with the connections established or the cycles
//! done, failures by errno, the connect rate and the pings so far.

use super::messages::{by_kind, Counts};
use super::plan::ConnectConfig;
use crate::report::format::{group, rate};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Progress while connecting and holding: a line redrawn on a terminal, plain lines otherwise.
pub struct Progress {
    enabled: bool,
    terminal: bool,
    next: Duration,
    every: Duration,
    last_attempts: u64,
    last_t: Duration,
    drawn: bool,
}

impl Progress {
    pub fn new(cfg: &ConnectConfig) -> Self {
        Progress {
            enabled: !cfg.output.quiet,
            terminal: std::io::stderr().is_terminal(),
            next: cfg.output.progress,
            every: cfg.output.progress,
            last_attempts: 0,
            last_t: Duration::ZERO,
            drawn: false,
        }
    }

    pub fn tick(&mut self, t0: Instant, c: &Counts, cfg: &ConnectConfig, force: bool) {
        let t = t0.elapsed();
        if !self.enabled || (t < self.next && !force) {
            return;
        }
        let dt = (t - self.last_t).as_secs_f64();
        let count = if cfg.is_churn() {
            c.attempts
        } else {
            c.established
        };
        let r = if dt > 0.0 {
            (c.attempts - self.last_attempts) as f64 / dt
        } else {
            0.0
        };
        self.last_attempts = c.attempts;
        self.last_t = t;
        while self.next <= t {
            self.next += self.every;
        }
        let failed = if c.failures.is_empty() {
            "0".to_string()
        } else {
            by_kind(&c.failures)
        };
        let what = if cfg.is_churn() {
            format!(
                "cycles {} ok {} | failed {failed} | {} conns/s",
                group(count),
                group(c.cycles_ok),
                rate(r)
            )
        } else {
            let mut s = format!(
                "established {} of {} | open {} | failed {failed} | {} conns/s",
                group(c.established),
                group(cfg.total),
                group(c.open),
                rate(r)
            );
            if c.sent > 0 {
                s.push_str(&format!(" | pings {} ok {}", group(c.sent), group(c.ok)));
            }
            s
        };
        let line = format!("[{:>7.1}s] {what}", t.as_secs_f64());
        if self.terminal {
            eprint!("\r\x1b[2K{line}");
            self.drawn = true;
        } else {
            eprintln!("{line}");
        }
    }

    pub fn finish(&mut self) {
        if self.drawn {
            eprintln!();
            self.drawn = false;
        }
    }
}
