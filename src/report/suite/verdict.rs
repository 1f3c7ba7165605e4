//! The report's verdict, first thing a reader sees: for each load, each server against
//! a baseline server, point by point over the sweep, judged by the noise of the rounds
//! (`noise::judge`, as `compare` judges). A point measured under interference or whose
//! rounds disagree (`marks`) is never the basis of "faster" or "slower": one such point
//! makes the load's verdict `inconclusive` and says why. Otherwise a difference every
//! point shows beyond noise reads as hyperfine's does: "A is 1.04x ± 0.02 faster than
//! B (throughput) and uses 0.97x the CPU per message". Also the closing lines for the
//! terminal (`wirebench suite`, `wirebench report`).

use super::dataset::{Aggregate, Dataset, LoadView};
use super::marks::{self, Trouble};
use super::noise::{self, Evidence};

pub use super::marks::{disagrees, DISAGREE};

/// One point of a server against the same point of the baseline.
pub struct Pair {
    /// The axis value and the series' other swept values: "500", "1 KiB (pipeline 4)".
    pub label: String,
    /// Median throughput of the server's rounds over the baseline's; 0 when the
    /// baseline's is 0.
    pub ratio: f64,
    /// The ratio's standard deviation relative to it (`noise::ratio_rel_sd`).
    pub rel_sd: f64,
    /// Median server CPU per item, server over baseline, when both were measured.
    pub cpu: Option<f64>,
    /// Whether the two sides' throughput rounds differ beyond noise.
    pub evidence: Evidence,
    /// Why the point does not count, if it does not.
    pub troubles: Vec<Trouble>,
}

/// One server against the baseline over one load.
pub struct Row {
    pub load: String,
    pub server: String,
    pub baseline: String,
    /// What one counted item is, singular, in the protocol's words ("request").
    pub per: String,
    pub pairs: Vec<Pair>,
}

/// What a row says.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Some point does not count, or a side has a single round: the reason.
    Inconclusive(String),
    /// Every point faster beyond noise.
    Faster,
    /// Every point slower beyond noise.
    Slower,
    /// No point differs beyond noise.
    Same,
    /// Points differ beyond noise in both directions, or only some do.
    Mixed,
}

impl Outcome {
    /// The verdict table's word.
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Inconclusive(_) => "inconclusive",
            Outcome::Faster => "faster",
            Outcome::Slower => "slower",
            Outcome::Same => "as fast",
            Outcome::Mixed => "mixed",
        }
    }
}

fn pair(label: String, s: &Aggregate, b: &Aggregate) -> Pair {
    let ratio = if b.throughput.median > 0.0 {
        s.throughput.median / b.throughput.median
    } else {
        0.0
    };
    Pair {
        label,
        ratio,
        rel_sd: noise::ratio_rel_sd(&s.throughput_runs, &b.throughput_runs),
        cpu: (b.us_per_req.median > 0.0 && s.us_per_req.median > 0.0)
            .then(|| s.us_per_req.median / b.us_per_req.median),
        evidence: noise::judge(&s.throughput_runs, &b.throughput_runs),
        troubles: marks::of_pair(s, b),
    }
}

/// The geometric mean of positive values (None for none).
fn geomean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let logs: Vec<f64> = v.filter(|x| *x > 0.0).map(f64::ln).collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

impl Row {
    pub fn points(&self) -> usize {
        self.pairs.len()
    }

    /// Throughput: the geometric mean of the points' ratios, and its ± (the points'
    /// relative standard deviations, root mean square, times the ratio).
    pub fn estimate(&self) -> Option<(f64, f64)> {
        let r = geomean(self.pairs.iter().map(|p| p.ratio))?;
        let n = self.pairs.len() as f64;
        let rms = (self.pairs.iter().map(|p| p.rel_sd.powi(2)).sum::<f64>() / n).sqrt();
        Some((r, r * rms))
    }

    /// CPU per item: the geometric mean of the points' ratios.
    pub fn cpu(&self) -> Option<f64> {
        geomean(self.pairs.iter().filter_map(|p| p.cpu))
    }

    /// The smallest and largest of the points' throughput ratios.
    pub fn range(&self) -> Option<(f64, f64)> {
        let v: Vec<f64> = self.pairs.iter().map(|p| p.ratio).collect();
        let lo = v.iter().copied().reduce(f64::min)?;
        Some((lo, v.iter().copied().fold(lo, f64::max)))
    }

    fn marked(&self) -> Vec<&Pair> {
        self.pairs
            .iter()
            .filter(|p| !p.troubles.is_empty())
            .collect()
    }

    pub fn outcome(&self) -> Outcome {
        let marked: Vec<&[Trouble]> = self.marked().iter().map(|p| &p.troubles[..]).collect();
        if let Some(why) = marks::clause(&marked, self.points()) {
            return Outcome::Inconclusive(why);
        }
        if self.pairs.iter().any(|p| p.evidence == Evidence::OneRound) {
            return Outcome::Inconclusive(
                "a side has one round: its noise is unknown (give the suite rounds = 2 or more)"
                    .into(),
            );
        }
        let apart = |faster: bool| {
            self.pairs
                .iter()
                .filter(|p| p.evidence.significant() && (p.ratio > 1.0) == faster)
                .count()
        };
        let (up, down, n) = (apart(true), apart(false), self.points());
        match (up, down) {
            (u, 0) if u == n => Outcome::Faster,
            (0, d) if d == n => Outcome::Slower,
            (0, 0) => Outcome::Same,
            _ => Outcome::Mixed,
        }
    }

    /// The points of the row that differ beyond noise one way (`faster`), or neither.
    fn labels(&self, pick: impl Fn(&Pair) -> bool) -> String {
        let v: Vec<&str> = self
            .pairs
            .iter()
            .filter(|p| pick(p))
            .map(|p| p.label.as_str())
            .collect();
        v.join(", ")
    }

    /// The row as one sentence (a verdict line).
    pub fn sentence(&self) -> String {
        let (s, b) = (&self.server, &self.baseline);
        let (r, e) = self.estimate().unwrap_or((0.0, 0.0));
        let (lo, hi) = self.range().unwrap_or((0.0, 0.0));
        let est = format!("{} ± {e:.2}", times(r));
        let cpu = match self.cpu() {
            Some(c) => format!("uses {} the CPU per {}", times(c), self.per),
            None => format!("its CPU per {} was not measured", self.per),
        };
        let over = format!(
            "over {} point{} of load {}",
            self.points(),
            if self.points() == 1 { "" } else { "s" },
            self.load
        );
        let spread = format!("{}..{}", times(lo), times(hi));
        match self.outcome() {
            Outcome::Inconclusive(why) => format!("{s} against {b}: inconclusive ({why}), {over}"),
            Outcome::Faster => {
                format!("{s} is {est} faster than {b} (throughput) and {cpu}, {over} ({spread})")
            }
            Outcome::Slower => {
                format!("{s} is slower than {b}: {est} its throughput, and {cpu}, {over} ({spread})")
            }
            Outcome::Same => format!(
                "{s} is as fast as {b} within the noise of the rounds: {est} its throughput, and {cpu}, {over} ({spread})"
            ),
            Outcome::Mixed => {
                let sig = |p: &Pair, up: bool| p.evidence.significant() && (p.ratio > 1.0) == up;
                let mut parts = Vec::new();
                for (word, l) in [
                    ("faster than", self.labels(|p| sig(p, true))),
                    ("slower than", self.labels(|p| sig(p, false))),
                    ("within noise of", self.labels(|p| !p.evidence.significant())),
                ] {
                    if !l.is_empty() {
                        parts.push(format!("{word} {b} at {l}"));
                    }
                }
                format!(
                    "{s} is {} ({spread} its throughput), and {cpu}, {over}",
                    parts.join(", ")
                )
            }
        }
    }
}

/// The suite's baseline when it ran this load, else the load's first server.
fn baseline_of(d: &Dataset, load: &LoadView) -> Option<String> {
    d.baseline
        .as_ref()
        .filter(|b| load.series.iter().any(|s| &s.server == *b))
        .cloned()
        .or_else(|| load.series.first().map(|s| s.server.clone()))
}

/// One server's row against `base` over `load`: its points matched with the
/// baseline's (a series is the server at the other swept axes' values: match those).
fn row(load: &LoadView, server: &str, base: &str) -> Row {
    let mut pairs = Vec::new();
    for s in load.series.iter().filter(|s| s.server == server) {
        let rest = &s.label[server.len()..];
        let Some(bs) = load
            .series
            .iter()
            .find(|b| b.server == base && &b.label[base.len()..] == rest)
        else {
            continue;
        };
        for p in &s.points {
            if let Some(bp) = bs.points.iter().find(|q| q.x == p.x) {
                let label = format!("{}{rest}", super::axis_value(&load.axis, p.x));
                pairs.push(pair(label, p, bp));
            }
        }
    }
    Row {
        load: load.name.clone(),
        server: server.to_string(),
        baseline: base.to_string(),
        per: load.unit.one().to_string(),
        pairs,
    }
}

/// Every (load, server) pair that has a baseline to compare with.
pub fn rows(d: &Dataset) -> Vec<Row> {
    let mut out = Vec::new();
    for load in &d.loads {
        let Some(base) = baseline_of(d, load) else {
            continue;
        };
        let mut servers: Vec<&str> = Vec::new();
        for s in &load.series {
            if s.server != base && !servers.contains(&s.server.as_str()) {
                servers.push(&s.server);
            }
        }
        out.extend(
            servers
                .into_iter()
                .map(|server| row(load, server, &base))
                .filter(|r| r.points() > 0),
        );
    }
    out
}

pub fn times(v: f64) -> String {
    format!("{v:.2}x")
}

/// The servers in the order the suite ran them (else the order of the series).
fn server_order(d: &Dataset) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let from_status = d.servers.as_array().into_iter().flatten();
    let listed = from_status.filter_map(|s| s["name"].as_str().map(String::from));
    let seen = d
        .loads
        .iter()
        .flat_map(|l| l.series.iter().map(|s| s.server.clone()));
    for n in listed.chain(seen) {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// One line per server and load it shares with its baseline (the baseline: one line
/// saying so).
pub fn lines(d: &Dataset) -> Vec<String> {
    let rows = rows(d);
    let mut out = Vec::new();
    for server in server_order(d) {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.server == server).collect();
        if mine.is_empty() {
            let loads = rows.iter().filter(|r| r.baseline == server).count();
            out.push(if loads > 0 {
                format!("{server}: the baseline")
            } else {
                format!("{server}: not compared (no other server ran its loads)")
            });
        }
        out.extend(mine.iter().map(|r| r.sentence()));
    }
    out
}

/// The verdict table's columns (HTML and Markdown).
pub const COLUMNS: [&str; 8] = [
    "load",
    "server",
    "baseline",
    "verdict",
    "throughput",
    "throughput min..max",
    "CPU per request",
    "points not counted",
];

/// One row of the verdict table.
pub fn cells(r: &Row) -> [String; 8] {
    let (t, e) = r.estimate().unwrap_or((0.0, 0.0));
    let range = r
        .range()
        .map(|(lo, hi)| format!("{}..{}", times(lo), times(hi)))
        .unwrap_or_else(|| "-".into());
    let marked: Vec<String> = r
        .marked()
        .iter()
        .map(|p| {
            let why: Vec<String> = p.troubles.iter().map(Trouble::label).collect();
            format!("{} ({})", p.label, why.join(", "))
        })
        .collect();
    [
        r.load.clone(),
        r.server.clone(),
        r.baseline.clone(),
        r.outcome().word().to_string(),
        format!("{} ± {e:.2}", times(t)),
        range,
        r.cpu().map(times).unwrap_or_else(|| "-".into()),
        if marked.is_empty() {
            format!("none of {}", r.points())
        } else {
            format!("{} of {}: {}", marked.len(), r.points(), marked.join(", "))
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::interference::Mark;

    fn p(label: &str, ratio: f64, evidence: Evidence, troubles: Vec<Trouble>) -> Pair {
        Pair {
            label: label.into(),
            ratio,
            rel_sd: 0.02,
            cpu: Some(0.97),
            evidence,
            troubles,
        }
    }

    fn row(pairs: Vec<Pair>) -> Row {
        Row {
            load: "connections".into(),
            server: "wb".into(),
            baseline: "c".into(),
            per: "message".into(),
            pairs,
        }
    }

    #[test]
    fn every_point_apart_one_way_is_faster_in_hyperfines_words() {
        let r = row(vec![
            p("1", 1.03, Evidence::Apart, vec![]),
            p("10", 1.05, Evidence::Apart, vec![]),
        ]);
        assert_eq!(r.outcome(), Outcome::Faster);
        assert_eq!(
            r.sentence(),
            "wb is 1.04x ± 0.02 faster than c (throughput) and uses 0.97x the CPU per message, over 2 points of load connections (1.03x..1.05x)"
        );
        let mixed = row(vec![
            p("1", 1.03, Evidence::Apart, vec![]),
            p("10", 0.9, Evidence::Apart, vec![]),
            p("100", 1.0, Evidence::Overlap, vec![]),
        ]);
        assert_eq!(
            mixed.sentence(),
            "wb is faster than c at 1, slower than c at 10, within noise of c at 100 (0.90x..1.03x its throughput), and uses 0.97x the CPU per message, over 3 points of load connections"
        );
    }

    #[test]
    fn a_busy_point_makes_the_verdict_inconclusive() {
        let busy = Trouble::Busy(Mark {
            cpu: 0,
            share: 0.3,
            steal: false,
        });
        let r = row(vec![
            p("1", 1.5, Evidence::Apart, vec![busy]),
            p("10", 1.5, Evidence::Apart, vec![busy]),
            p("100", 1.5, Evidence::Apart, vec![]),
            p("500", 1.5, Evidence::Apart, vec![]),
        ]);
        assert_eq!(
            r.sentence(),
            "wb against c: inconclusive (2 of 4 points measured while other processes took up to 30% of CPU 0), over 4 points of load connections"
        );
        assert_eq!(cells(&r)[3], "inconclusive");
        assert_eq!(
            cells(&r)[7],
            "2 of 4: 1 (busy: other processes took 30% of CPU 0), 10 (busy: other processes took 30% of CPU 0)"
        );
        let one = row(vec![p("1", 1.5, Evidence::OneRound, vec![])]);
        assert!(matches!(one.outcome(), Outcome::Inconclusive(_)));
    }
}
