//! The report's verdict, first thing a reader sees: for each load, each server's
//! throughput and CPU per request as ratios to a baseline server, point by point
//! over the sweep (median of the ratios and their min..max), and the points whose
//! rounds disagree too much to trust. Also one closing line per server for the
//! terminal (`wirebench suite`, `wirebench report`).

use super::dataset::{Aggregate, Dataset, LoadView, Stat};

/// Rounds disagree when (max - min) / median of a point's rounds passes this.
pub const DISAGREE: f64 = 0.20;

/// The point's rounds disagree on throughput or on CPU per request.
pub fn disagrees(a: &Aggregate) -> bool {
    let spread = |s: &Stat| s.median > 0.0 && (s.max - s.min) / s.median > DISAGREE;
    a.runs > 1 && (spread(&a.throughput) || spread(&a.us_per_req))
}

/// One server against the baseline over one load.
pub struct Row {
    pub load: String,
    pub server: String,
    pub baseline: String,
    /// What one counted item is, singular, in the protocol's words ("request").
    pub per: String,
    /// Per matched point: server / baseline.
    pub throughput: Vec<f64>,
    pub cpu: Vec<f64>,
    pub points: usize,
    /// The points (axis values) where either side's rounds disagree.
    pub noisy: Vec<String>,
}

/// The suite's baseline when it ran this load, else the load's first server.
fn baseline_of(d: &Dataset, load: &LoadView) -> Option<String> {
    d.baseline
        .as_ref()
        .filter(|b| load.series.iter().any(|s| &s.server == *b))
        .cloned()
        .or_else(|| load.series.first().map(|s| s.server.clone()))
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
        for server in servers {
            let mut row = Row {
                load: load.name.clone(),
                server: server.to_string(),
                baseline: base.clone(),
                per: load.unit.one().to_string(),
                throughput: Vec::new(),
                cpu: Vec::new(),
                points: 0,
                noisy: Vec::new(),
            };
            // A series is the server at the other swept axes' values: match those.
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
                    let Some(bp) = bs.points.iter().find(|q| q.x == p.x) else {
                        continue;
                    };
                    row.points += 1;
                    if bp.throughput.median > 0.0 {
                        row.throughput
                            .push(p.throughput.median / bp.throughput.median);
                    }
                    if bp.us_per_req.median > 0.0 && p.us_per_req.median > 0.0 {
                        row.cpu.push(p.us_per_req.median / bp.us_per_req.median);
                    }
                    if disagrees(p) || disagrees(bp) {
                        row.noisy
                            .push(format!("{}{rest}", super::axis_value(&load.axis, p.x)));
                    }
                }
            }
            if row.points > 0 {
                out.push(row);
            }
        }
    }
    out
}

pub fn times(v: f64) -> String {
    format!("{v:.2}x")
}

/// "2.81x" and "2.50x..3.10x" of a list of ratios.
pub fn ratio(v: &[f64]) -> (String, String) {
    if v.is_empty() {
        return ("-".into(), "-".into());
    }
    let s = Stat::of(v);
    (
        times(s.median),
        format!("{}..{}", times(s.min), times(s.max)),
    )
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

/// One line per server: its ratios to the baseline over every load they share.
pub fn lines(d: &Dataset) -> Vec<String> {
    let rows = rows(d);
    let mut out = Vec::new();
    for server in server_order(d) {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.server == server).collect();
        let Some(first) = mine.first() else {
            let loads = rows.iter().filter(|r| r.baseline == server).count();
            out.push(if loads > 0 {
                format!("{server}: the baseline")
            } else {
                format!("{server}: not compared (no other server ran its loads)")
            });
            continue;
        };
        let mut parts = Vec::new();
        // Rows against another baseline (a load the suite's baseline did not run)
        // each get their own clause.
        let mut bases: Vec<&str> = Vec::new();
        for r in &mine {
            if !bases.contains(&r.baseline.as_str()) {
                bases.push(&r.baseline);
            }
        }
        for base in bases {
            let rs: Vec<&&Row> = mine.iter().filter(|r| r.baseline == base).collect();
            let t: Vec<f64> = rs.iter().flat_map(|r| r.throughput.clone()).collect();
            let c: Vec<f64> = rs.iter().flat_map(|r| r.cpu.clone()).collect();
            let points: usize = rs.iter().map(|r| r.points).sum();
            let noisy: usize = rs.iter().map(|r| r.noisy.len()).sum();
            let per = if rs.iter().all(|r| r.per == first.per) {
                first.per.as_str()
            } else {
                "request"
            };
            let (tm, tr) = ratio(&t);
            let cpu = if c.is_empty() {
                format!("CPU per {per} not measured")
            } else {
                let (cm, cr) = ratio(&c);
                format!("{cm} CPU per {per} ({cr})")
            };
            let mut clause = format!(
                "{tm} {base} throughput ({tr}), {cpu}, over {points} points of {} load{}",
                rs.len(),
                if rs.len() == 1 { "" } else { "s" }
            );
            if noisy > 0 {
                clause.push_str(&format!(
                    " ({noisy} with rounds that disagree by more than {:.0}%)",
                    DISAGREE * 100.0
                ));
            }
            parts.push(clause);
        }
        out.push(format!("{server}: {}", parts.join("; ")));
    }
    out
}

/// The verdict table's columns (HTML and Markdown).
pub const COLUMNS: [&str; 9] = [
    "load",
    "server",
    "baseline",
    "throughput",
    "throughput min..max",
    "CPU per request",
    "CPU min..max",
    "points",
    "rounds disagree",
];

/// One row of the verdict table.
pub fn cells(r: &Row) -> [String; 9] {
    let (t, tr) = ratio(&r.throughput);
    let (c, cr) = ratio(&r.cpu);
    [
        r.load.clone(),
        r.server.clone(),
        r.baseline.clone(),
        t,
        tr,
        c,
        cr,
        r.points.to_string(),
        if r.noisy.is_empty() {
            "none".into()
        } else {
            format!("{} of {}: {}", r.noisy.len(), r.points, r.noisy.join(", "))
        },
    ]
}
