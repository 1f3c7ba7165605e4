//! The live terminal view (`--tui`, the default when stdout is a terminal): a frame of
//! about 20 lines redrawn in place once per interval: the rate asked and achieved, ok
//! and errors by kind, latency percentiles (the last interval's and the whole run's)
//! and a histogram of the whole run. It is a `stats::Observer`, so it sees one merged
//! row and histogram per interval and nothing per request.
//!
//! Plain ANSI, no crate: the view moves the cursor up over its last frame and erases
//! below it, nothing else. It changes no terminal mode (no raw mode, no alternate
//! screen, no hidden cursor), so no way the process ends (the run's end, Ctrl-C twice,
//! an error, a kill) leaves the terminal other than as it found it, and the final
//! frame stays on screen above the summary.

use super::format::{group, micros, rate};
use crate::stats::{ConnTally, Counters, ErrorKind, IntervalRow, Latency, Observer, Unit};
use std::fmt::Write as _;
use std::io::Write;
use std::time::{Duration, Instant};

/// At most this many frames a second: an `--interval` of 10 ms redraws no faster.
const MIN_FRAME_GAP: Duration = Duration::from_millis(100);
/// Rows of the histogram, and the width of its longest bar.
const HISTOGRAM_ROWS: u64 = 8;
const BAR_WIDTH: usize = 36;

/// What the view says about one interval or the whole run.
#[derive(Clone, Copy, Default)]
struct Percentiles {
    p50: Option<f64>,
    p90: Option<f64>,
    p99: Option<f64>,
    p99_9: Option<f64>,
    max: Option<f64>,
}

impl Percentiles {
    fn of_row(r: &IntervalRow) -> Self {
        Percentiles {
            p50: r.p50_us,
            p90: r.p90_us,
            p99: r.p99_us,
            p99_9: r.p99_9_us,
            max: r.max_us,
        }
    }

    fn of(l: &Latency) -> Self {
        if l.count() == 0 {
            return Self::default();
        }
        let us = |q: f64| Some(l.quantile_ns(q) as f64 / 1e3);
        Percentiles {
            p50: us(0.5),
            p90: us(0.9),
            p99: us(0.99),
            p99_9: us(0.999),
            max: Some(l.inner().max() as f64 / 1e3),
        }
    }
}

pub struct TerminalView {
    title: String,
    unit: Unit,
    rate_asked: Option<f64>,
    duration: Option<Duration>,
    expected: Option<u64>,
    /// Seconds into the measured phase, and the last interval's rate and percentiles.
    t_s: f64,
    rate_now: f64,
    interval: Percentiles,
    /// The measured phase so far: the rows' sums.
    ok: u64,
    sent: u64,
    errors: u64,
    connect_errors: u64,
    /// Errors by kind: every phase's so far (`on_connections`) less the warm-up's.
    by_kind: [u64; ErrorKind::COUNT],
    warmup_kinds: [u64; ErrorKind::COUNT],
    measuring: bool,
    /// The whole run's histogram: every interval's added (one table, reused).
    whole: Latency,
    /// Lines of the frame on screen, to move back over.
    lines_drawn: usize,
    last_frame: Option<Instant>,
    /// The run's own figures are in: the frame says so and is drawn no more.
    finished: bool,
}

impl TerminalView {
    pub fn new(
        title: String,
        unit: Unit,
        rate_asked: Option<f64>,
        duration: Option<Duration>,
        expected: Option<u64>,
    ) -> Self {
        TerminalView {
            title,
            unit,
            rate_asked,
            duration,
            expected,
            t_s: 0.0,
            rate_now: 0.0,
            interval: Percentiles::default(),
            ok: 0,
            sent: 0,
            errors: 0,
            connect_errors: 0,
            by_kind: [0; ErrorKind::COUNT],
            warmup_kinds: [0; ErrorKind::COUNT],
            measuring: false,
            whole: Latency::new(),
            lines_drawn: 0,
            last_frame: None,
            finished: false,
        }
    }

    /// The last frame, from the run's own figures (exactly the result's totals: the
    /// measured phase's counters and histogram), left on screen.
    pub fn finish(&mut self, measured: &Counters, latency: &Latency, elapsed: Duration) {
        self.ok = measured.ok;
        self.sent = measured.sent;
        // As the result: requests' errors apart from failed connection attempts.
        self.errors = measured.request_errors();
        self.connect_errors = measured.connect_errors();
        self.by_kind = measured.errors;
        self.warmup_kinds = [0; ErrorKind::COUNT];
        self.whole.reset();
        self.whole.add(latency);
        self.t_s = elapsed.as_secs_f64();
        self.finished = true;
        self.draw();
    }

    /// What counts: correct replies, or for items that settle on write (no reply),
    /// what was written (the result counts those at their connection's clean close).
    fn counted(&self) -> u64 {
        if self.unit.replies || self.finished {
            self.ok
        } else {
            self.sent
        }
    }

    /// The frame's lines, each at most 80 columns.
    fn frame(&self) -> Vec<String> {
        let mut lines = vec![self.head()];
        let mean = self.counted() as f64 / self.t_s.max(1e-9);
        let asked = self
            .rate_asked
            .map(|r| format!("{}/s", rate(r)))
            .unwrap_or_else(|| "as fast as answered".into());
        lines.push(format!(
            "rate      asked {asked}  now {}/s  mean {}/s",
            rate(self.rate_now),
            rate(mean)
        ));
        let mut ok = format!("ok        {} {}", group(self.counted()), self.unit.counted);
        if let Some(e) = self.expected {
            let _ = write!(ok, " of {}", group(e));
        }
        let _ = write!(ok, "  sent {}", group(self.sent));
        lines.push(ok);
        lines.push(format!(
            "errors    {}  connect errors {}",
            group(self.errors),
            group(self.connect_errors)
        ));
        lines.push(format!("  by kind {}", self.kinds()));
        if self.unit.replies {
            lines.extend(self.latency_lines());
        }
        lines
    }

    fn head(&self) -> String {
        let mut s = format!("{}  {:.1}s", self.title, self.t_s);
        if let Some(d) = self.duration {
            let _ = write!(s, " of {}s", d.as_secs_f64());
        }
        if self.finished {
            s.push_str("  done");
        }
        s
    }

    /// "timeout 2, closed 1", or "none".
    fn kinds(&self) -> String {
        let mut s = String::new();
        for (i, k) in ErrorKind::ALL.iter().enumerate() {
            let n = self.by_kind[i].saturating_sub(self.warmup_kinds[i]);
            if n > 0 {
                let sep = if s.is_empty() { "" } else { ", " };
                let _ = write!(s, "{sep}{} {}", k.name(), group(n));
            }
        }
        if s.is_empty() {
            s.push_str("none");
        }
        s
    }

    fn latency_lines(&self) -> Vec<String> {
        let cell = |v: Option<f64>| format!("{:>9}", v.map(micros).unwrap_or_else(|| "-".into()));
        let row = |name: &str, p: &Percentiles| {
            let mut s = format!("{name:<10}");
            for v in [p.p50, p.p90, p.p99, p.p99_9, p.max] {
                s.push_str(&cell(v));
            }
            s
        };
        let mut lines = vec![
            format!(
                "latency us{:>9}{:>9}{:>9}{:>9}{:>9}",
                "p50", "p90", "p99", "p99.9", "max"
            ),
            row(" interval", &self.interval),
            row(" whole run", &Percentiles::of(&self.whole)),
            "histogram of the whole run, us:".to_string(),
        ];
        lines.extend(histogram(&self.whole));
        lines
    }

    /// Redraws the frame over the last one.
    fn draw(&mut self) {
        let lines = self.frame();
        let mut s = String::new();
        if self.lines_drawn > 0 {
            // Up to the first column of the frame's first line, and erase to the end.
            let _ = write!(s, "\x1b[{}F", self.lines_drawn);
        }
        s.push_str("\x1b[0J");
        for l in &lines {
            s.push_str(l);
            s.push('\n');
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(s.as_bytes());
        let _ = out.flush();
        self.lines_drawn = lines.len();
        self.last_frame = Some(Instant::now());
    }
}

/// `HISTOGRAM_ROWS` ranges from the fastest reply to the slowest, each the same ratio
/// wider than the one before (so a tail far out does not squeeze the bulk into one
/// row), with its count and a bar scaled to the fullest. Each recorded value counts in
/// exactly one row, so the rows add up to the histogram's count.
fn histogram(l: &Latency) -> Vec<String> {
    let h = l.inner();
    if l.count() == 0 {
        return vec!["  nothing timed yet".into()];
    }
    let (lo, hi) = (h.min().max(1) as f64, h.max().max(1) as f64);
    let ratio = (hi / lo).powf(1.0 / HISTOGRAM_ROWS as f64).max(1.0 + 1e-9);
    let edge = |i: u64| lo * ratio.powi(i as i32);
    let mut counts = [0u64; HISTOGRAM_ROWS as usize];
    for v in h.iter_recorded() {
        let x = (v.value_iterated_to() as f64).max(lo);
        let row = ((x / lo).ln() / ratio.ln()).floor().max(0.0) as usize;
        counts[row.min(counts.len() - 1)] += v.count_at_value();
    }
    let fullest = counts.iter().copied().max().unwrap_or(1).max(1);
    counts
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let bar = (n as f64 / fullest as f64 * BAR_WIDTH as f64).round() as usize;
            format!(
                "{:>9} - {:>9} |{:<BAR_WIDTH$}| {}",
                micros(edge(i as u64) / 1e3),
                micros(edge(i as u64 + 1) / 1e3),
                "#".repeat(bar),
                group(n)
            )
        })
        .collect()
}

impl Observer for TerminalView {
    fn on_measure_start(&mut self) {
        self.measuring = true;
        self.warmup_kinds = self.by_kind;
    }

    fn on_interval(&mut self, row: &IntervalRow, latency: &Latency) {
        self.t_s = row.t_s;
        self.ok = row.total_ok;
        self.sent += row.sent;
        self.errors += row.errors;
        self.connect_errors += row.connect_errors;
        let now = if self.unit.replies { row.ok } else { row.sent };
        self.rate_now = now as f64 / row.duration_s.max(1e-9);
        self.interval = Percentiles::of_row(row);
        self.whole.add(latency);
        if !self.last_frame.is_some_and(|t| t.elapsed() < MIN_FRAME_GAP) {
            self.draw();
        }
    }

    fn on_connections(&mut self, counters: &Counters, _conns: &ConnTally, _all_up: bool) {
        self.by_kind = counters.errors;
        if !self.measuring {
            self.warmup_kinds = counters.errors;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> TerminalView {
        TerminalView::new(
            "wirebench echo".into(),
            Unit::new("messages", "echoed", true),
            Some(1000.0),
            Some(Duration::from_secs(10)),
            None,
        )
    }

    #[test]
    fn a_frame_says_rate_counts_errors_by_kind_and_percentiles_in_80_columns() {
        let mut v = view();
        let mut warm = Counters::default();
        warm.errors[ErrorKind::Timeout as usize] = 4;
        v.on_connections(&warm, &ConnTally::default(), true);
        v.on_measure_start();
        let mut l = Latency::new();
        for us in 1..=100u64 {
            l.record(us * 1_000);
        }
        let row = IntervalRow {
            t_s: 1.0,
            duration_s: 1.0,
            sent: 102,
            ok: 100,
            errors: 2,
            total_ok: 100,
            p50_us: Some(50.0),
            ..Default::default()
        };
        let mut now = warm;
        now.errors[ErrorKind::Timeout as usize] = 5;
        now.errors[ErrorKind::Closed as usize] = 1;
        v.on_connections(&now, &ConnTally::default(), true);
        v.whole.add(&l);
        v.t_s = row.t_s;
        v.ok = row.total_ok;
        v.sent = row.sent;
        v.errors = row.errors;
        v.rate_now = 100.0;
        let f = v.frame();
        assert_eq!(f[0], "wirebench echo  1.0s of 10s");
        assert_eq!(f[1], "rate      asked 1,000/s  now 100/s  mean 100/s");
        assert_eq!(f[2], "ok        100 echoed  sent 102");
        assert_eq!(f[3], "errors    2  connect errors 0");
        // The warm-up's four timeouts are not the measured phase's.
        assert_eq!(f[4], "  by kind timeout 1, closed 1");
        assert!(f[7].starts_with(" whole run"), "{f:?}");
        let bars: u64 = f[9..]
            .iter()
            .map(|l| {
                l.rsplit(' ')
                    .next()
                    .unwrap()
                    .replace(',', "")
                    .parse::<u64>()
                    .unwrap()
            })
            .sum();
        assert_eq!(bars, 100, "the histogram's rows hold every sample: {f:?}");
        assert!(f.iter().all(|l| l.len() <= 80), "{f:?}");
    }

    #[test]
    fn the_final_frame_holds_the_runs_own_counts() {
        let mut v = view();
        let mut m = Counters {
            ok: 7,
            sent: 9,
            ..Default::default()
        };
        m.errors[ErrorKind::Reset as usize] = 2;
        v.finished = true;
        v.ok = m.ok;
        v.sent = m.sent;
        v.by_kind = m.errors;
        v.errors = 2;
        let f = v.frame();
        assert!(f[0].ends_with("done"), "{f:?}");
        assert_eq!(f[2], "ok        7 echoed  sent 9");
        assert_eq!(f[4], "  by kind reset 2");
    }
}
