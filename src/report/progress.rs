//! Progress while a load runs: a bar redrawn in place on a terminal, one plain line per
//! `--progress` otherwise (logs, CI). A line covers the series' intervals (`--interval`)
//! since the one before: their counts added, their histograms merged, so its
//! percentiles are those of every reply it covers.

use super::format::{group, mib_per_s, micros, rate};
use crate::stats::intervals::{add_counts, summarise};
use crate::stats::Observer;
use crate::stats::{IntervalRow, Latency, Unit};
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::time::Duration;

pub struct Progress {
    enabled: bool,
    terminal: bool,
    expected: Option<u64>,
    duration: Option<Duration>,
    drawn: bool,
    /// What counts, in the protocol's words, and whether it has replies to time.
    unit: Unit,
    /// Extra work at the start of the measured phase (e.g. sampling a server's CPU).
    on_start: Option<Box<dyn FnMut()>>,
    /// Items that settle on write (no reply): what was written so far, the rows' sum.
    written: u64,
    /// A line at most this often (`--progress`); each interval its own line when zero.
    every: Duration,
    /// When the next line is due, seconds into the measured phase (a multiple of
    /// `every`).
    next_line_s: f64,
    /// The intervals since the last line, and their latency (its table reused).
    since: Option<IntervalRow>,
    since_latency: Latency,
}

impl Progress {
    pub fn new(
        enabled: bool,
        expected: Option<u64>,
        duration: Option<Duration>,
        unit: Unit,
    ) -> Self {
        Progress {
            unit,
            enabled,
            terminal: std::io::stderr().is_terminal(),
            expected,
            duration,
            drawn: false,
            on_start: None,
            written: 0,
            every: Duration::ZERO,
            next_line_s: 0.0,
            since: None,
            since_latency: Latency::new(),
        }
    }

    /// A line every `every` (`--progress`), covering the intervals since the last.
    pub fn every(mut self, every: Duration) -> Self {
        self.every = every;
        self.next_line_s = every.as_secs_f64();
        self
    }

    /// No lines at all (the terminal view draws the run instead); `on_start` still runs.
    pub fn silent(mut self) -> Self {
        self.enabled = false;
        self
    }

    pub fn on_start(mut self, f: impl FnMut() + 'static) -> Self {
        self.on_start = Some(Box::new(f));
        self
    }

    /// Shows what the last line did not cover yet, then ends the bar's line so the
    /// summary starts on a fresh one.
    pub fn finish(&mut self) {
        if let Some(row) = self.since.take() {
            self.show(&row);
        }
        if self.drawn && self.terminal {
            eprintln!();
        }
        self.drawn = false;
    }

    /// What counts so far and in this interval: the correct replies, or for items
    /// that settle on write (AMQP publishes without confirms, which the result counts
    /// once their connection closes cleanly) what was written, as it is written.
    fn counted(&self, row: &IntervalRow) -> (u64, u64) {
        if self.unit.replies {
            (row.total_ok, row.ok)
        } else {
            (self.written, row.sent)
        }
    }

    fn fraction(&self, row: &IntervalRow) -> Option<f64> {
        match (self.expected, self.duration) {
            (Some(e), _) if e > 0 => Some(self.counted(row).0 as f64 / e as f64),
            (_, Some(d)) if !d.is_zero() => Some(row.t_s / d.as_secs_f64()),
            _ => None,
        }
    }

    /// One interval in at most ~90 columns (80 for a duration plan without connect
    /// errors): what counted so far, this interval's rate, MiB/s and latency (only for
    /// items that have replies), and errors as they happen, connection errors included.
    /// `written` (items that settle on write) must already hold this row's.
    pub fn line(&self, row: &IntervalRow) -> String {
        self.line_with(row, true)
    }

    /// `line`, with or without the percentage (a terminal's bar shows it instead).
    fn line_with(&self, row: &IntervalRow, percent: bool) -> String {
        let u = &self.unit;
        let mut s = format!("[{:>6.1}s", row.t_s);
        if let Some(f) = self.fraction(row).filter(|_| percent) {
            let _ = write!(s, " {:>3.0}%", (f * 100.0).min(100.0));
        }
        let (so_far, now) = self.counted(row);
        let _ = write!(s, "] {} {}", u.counted, group(so_far));
        if let Some(e) = self.expected {
            let _ = write!(s, " of {}", group(e));
        }
        let _ = write!(s, "  {}/s", rate(now as f64 / row.duration_s.max(1e-9)));
        if u.replies {
            let bytes_per_s = row.bytes_received as f64 / row.duration_s.max(1e-9);
            let us = |v: Option<f64>| v.map(micros).unwrap_or_else(|| "n/a".into());
            let _ = write!(
                s,
                "  {}  p50 {} p99 {} us",
                mib_per_s(bytes_per_s),
                us(row.p50_us),
                us(row.p99_us)
            );
        }
        let _ = write!(s, "  errors {}", group(row.errors + row.connect_errors));
        if row.connect_errors > 0 {
            let _ = write!(s, " ({} connect)", group(row.connect_errors));
        }
        s
    }
}

impl Observer for Progress {
    fn on_measure_start(&mut self) {
        if let Some(f) = self.on_start.as_mut() {
            f();
        }
    }

    fn on_interval(&mut self, row: &IntervalRow, latency: &Latency) {
        self.written += row.sent;
        let mut since = match self.since.take() {
            None => {
                self.since_latency.reset();
                IntervalRow {
                    histogram: None,
                    ..row.clone()
                }
            }
            Some(mut s) => {
                add_counts(&mut s, row);
                s.t_s = row.t_s;
                s.duration_s += row.duration_s;
                s.total_ok = row.total_ok;
                s
            }
        };
        self.since_latency.add(latency);
        // The interval that ends a duration plan ends its last line.
        let at_end = self
            .duration
            .is_some_and(|d| row.t_s >= d.as_secs_f64() - 1e-9);
        // A line is due once the intervals reach its time, give or take half an
        // interval (their ends wander by the workers' wake-ups).
        let reached = row.t_s + row.duration_s / 2.0;
        let every = self.every.as_secs_f64();
        if reached >= self.next_line_s || at_end {
            if every > 0.0 {
                self.next_line_s = ((reached / every).floor() + 1.0) * every;
            }
            summarise(&mut since, &self.since_latency, false);
            self.show(&since);
        } else {
            self.since = Some(since);
        }
    }
}

impl Progress {
    /// Prints one line (or redraws the bar) for `row`, the intervals since the last.
    fn show(&mut self, row: &IntervalRow) {
        // The last worker's final snapshot may close an empty sliver of an interval
        // (a duration plan's comes after its end: the drain, which the engine keeps
        // from progress; its interval that ends at -d is shown even when empty).
        let empty_sliver = self.duration.is_none()
            && row.sent == 0
            && row.ok == 0
            && row.errors == 0
            && row.connect_errors == 0
            && row.duration_s < 0.5;
        if !self.enabled || empty_sliver {
            return;
        }
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let line = self.line_with(row, false);
            let bar = self
                .fraction(row)
                .map(|f| {
                    // Ten cells: the line must still fit 100 columns beside it.
                    let filled = (f.clamp(0.0, 1.0) * 10.0) as usize;
                    format!("[{}{}] ", "#".repeat(filled), ".".repeat(10 - filled))
                })
                .unwrap_or_default();
            let _ = write!(err, "\r\x1b[2K{bar}{line}");
            self.drawn = true;
        } else {
            let _ = writeln!(err, "{}", self.line(row));
        }
        let _ = err.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t_s: f64, ok: u64, total_ok: u64, p50: Option<f64>) -> IntervalRow {
        IntervalRow {
            t_s,
            duration_s: 1.0,
            sent: ok,
            ok,
            errors: 0,
            connect_errors: 0,
            bytes_received: 3 * 1024 * 1024,
            msgs_per_s: ok as f64,
            mb_per_s: Some(3.0 * 1.048576),
            p50_us: p50,
            p99_us: p50.map(|p| p * 2.0),
            total_ok,
            ..Default::default()
        }
    }

    #[test]
    fn echo_line_names_its_unit_and_fits_80_columns() {
        let p = Progress::new(
            true,
            None,
            Some(Duration::from_secs(10)),
            Unit::new("messages", "echoed", true),
        );
        let line = p.line(&row(5.0, 1_234_567, 6_000_000, Some(12.34)));
        assert_eq!(
            line,
            "[   5.0s  50%] echoed 6,000,000  1,234,567/s  3.0 MiB/s  p50 12.3 p99 24.7 us  errors 0"
        );
        assert!(line.len() <= 90, "{} columns: {line}", line.len());
    }

    /// Feeds `r` as the engine does (the display off, so nothing prints) and returns
    /// its line.
    fn seen(p: &mut Progress, r: &IntervalRow) -> String {
        p.on_interval(r, &Latency::new());
        p.line(r)
    }

    #[test]
    fn settled_on_write_counts_what_is_written_as_it_is_written() {
        let mut p = Progress::new(
            false,
            Some(10_000),
            None,
            Unit::new("publishes", "written", false),
        );
        // Long-lived publishers count in the result only at their clean close, so no
        // reply (`ok`) comes during the run: progress counts what was written.
        let mut first = row(1.0, 0, 0, None);
        first.sent = 1_000;
        assert_eq!(
            seen(&mut p, &first),
            "[   1.0s  10%] written 1,000 of 10,000  1,000/s  errors 0"
        );
        let mut second = row(2.0, 0, 0, None);
        second.sent = 3_000;
        assert_eq!(
            seen(&mut p, &second),
            "[   2.0s  40%] written 4,000 of 10,000  3,000/s  errors 0"
        );
    }

    #[test]
    fn connect_errors_show_as_they_happen() {
        let p = Progress::new(true, None, None, Unit::new("requests", "answered", true));
        let mut r = row(1.0, 0, 0, None);
        r.bytes_received = 0;
        r.connect_errors = 60;
        assert_eq!(
            p.line(&r),
            "[   1.0s] answered 0  0/s  0.0 MiB/s  p50 n/a p99 n/a us  errors 60 (60 connect)"
        );
    }
}
