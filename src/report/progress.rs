//! Progress while a load runs: a bar redrawn in place on a terminal, one plain line per
//! interval otherwise (logs, CI).

use super::format::{group, micros, rate};
use crate::engine::Observer;
use crate::stats::{IntervalRow, Latency};
use std::io::{IsTerminal, Write};
use std::time::Duration;

pub struct Progress {
    enabled: bool,
    terminal: bool,
    expected: Option<u64>,
    duration: Option<Duration>,
    drawn: bool,
    /// Extra work at the start of the measured phase (e.g. sampling a server's CPU).
    on_start: Option<Box<dyn FnMut()>>,
}

impl Progress {
    pub fn new(enabled: bool, expected: Option<u64>, duration: Option<Duration>) -> Self {
        Progress {
            enabled,
            terminal: std::io::stderr().is_terminal(),
            expected,
            duration,
            drawn: false,
            on_start: None,
        }
    }

    pub fn on_start(mut self, f: impl FnMut() + 'static) -> Self {
        self.on_start = Some(Box::new(f));
        self
    }

    /// Ends the bar's line so the summary starts on a fresh one.
    pub fn finish(&mut self) {
        if self.drawn && self.terminal {
            eprintln!();
        }
        self.drawn = false;
    }

    fn fraction(&self, row: &IntervalRow) -> Option<f64> {
        match (self.expected, self.duration) {
            (Some(e), _) if e > 0 => Some(row.total_ok as f64 / e as f64),
            (_, Some(d)) if !d.is_zero() => Some(row.t_s / d.as_secs_f64()),
            _ => None,
        }
    }

    pub fn line(&self, row: &IntervalRow) -> String {
        let total_rate = if row.t_s > 0.0 {
            row.total_ok as f64 / row.t_s
        } else {
            0.0
        };
        let done = match (self.expected, self.fraction(row)) {
            (Some(e), Some(f)) => format!(
                "{} of {} received [{:.1}% complete]",
                group(row.total_ok),
                group(e),
                (f * 100.0).min(100.0)
            ),
            (None, Some(f)) => format!(
                "{} received [{:.0}% of time]",
                group(row.total_ok),
                (f * 100.0).min(100.0)
            ),
            _ => format!("{} received", group(row.total_ok)),
        };
        format!(
            "[{:>7.1}s] {done} | interval {} msgs/s {:.2} MB/s p50 {} us p99 {} us errors {} | total {} msgs/s",
            row.t_s,
            rate(row.msgs_per_s),
            row.mb_per_s,
            micros(row.p50_us),
            micros(row.p99_us),
            group(row.errors),
            rate(total_rate)
        )
    }
}

impl Observer for Progress {
    fn on_measure_start(&mut self) {
        if let Some(f) = self.on_start.as_mut() {
            f();
        }
    }

    fn on_interval(&mut self, row: &IntervalRow, _latency: &Latency) {
        // The last worker's final snapshot may close an empty sliver of an interval.
        let empty_sliver = row.sent == 0 && row.ok == 0 && row.errors == 0 && row.duration_s < 0.5;
        if !self.enabled || empty_sliver {
            return;
        }
        let line = self.line(row);
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let bar = self
                .fraction(row)
                .map(|f| {
                    let filled = (f.clamp(0.0, 1.0) * 20.0) as usize;
                    format!("[{}{}] ", "#".repeat(filled), ".".repeat(20 - filled))
                })
                .unwrap_or_default();
            let _ = write!(err, "\r\x1b[2K{bar}{line}");
            self.drawn = true;
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }
}
