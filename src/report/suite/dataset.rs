//! A results directory read back: every point file, grouped per load, server and
//! point, repeats folded together (throughput: median and range; latency: the
//! repeats' histograms added, so percentiles are exact, never averaged).

use super::series::PointSeries;
use crate::error::{Error, Result};
use crate::stats::interference::Mark;
use crate::stats::latency::{Latency, LatencySummary};
use crate::stats::merge;
use crate::stats::result::{RunResult, Totals};
use crate::stats::{IntervalRow, Measured, Unit};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// One point file.
#[derive(Clone, Debug)]
pub struct Record {
    pub file: String,
    pub load: String,
    pub server: String,
    pub protocol: String,
    pub generator: String,
    /// What a counted item is, in the words of the protocol that counted it.
    pub unit: Unit,
    pub swept: Vec<String>,
    pub axes: Axes,
    pub repeat: u64,
    pub msgs_per_s: f64,
    pub ok: u64,
    pub errors: u64,
    pub latency: Latency,
    pub cpu_pct: f64,
    pub cpu_s: f64,
    pub rss_bytes: f64,
    pub success: bool,
    pub reason: Option<String>,
    /// Others (or steal) took more than `interference::THRESHOLD` of one of its CPUs:
    /// the largest such share (`machine.interference`).
    pub busy: Option<Mark>,
    /// Its interval rows and measured time: one round of the point's time series.
    pub intervals: Vec<IntervalRow>,
    pub elapsed_s: f64,
    /// What its load's thresholds measured (a suite file's `thresholds`; none: empty).
    pub thresholds: Vec<crate::stats::threshold::Verdict>,
    /// Its capacity search, when it ran one (a suite load's `search`).
    pub search: Option<crate::stats::search::SearchFigures>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axes {
    pub connections: f64,
    pub body_size: f64,
    pub pipeline: f64,
    pub rate: f64,
}

impl Axes {
    pub fn get(&self, axis: &str) -> f64 {
        match axis {
            "body_size" => self.body_size,
            "pipeline" => self.pipeline,
            "rate" => self.rate,
            _ => self.connections,
        }
    }
}

/// Median, smallest and largest of the repeats.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Stat {
    pub fn of(values: &[f64]) -> Stat {
        if values.is_empty() {
            return Stat::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Stat {
            median,
            min: v[0],
            max: v[n - 1],
        }
    }

    /// Half the range relative to the median: the noise of the repeats.
    pub fn noise(&self) -> f64 {
        if self.median > 0.0 {
            (self.max - self.min) / 2.0 / self.median
        } else {
            0.0
        }
    }
}

/// The repeats of one point of one server, folded.
#[derive(Clone, Debug)]
pub struct Aggregate {
    pub x: f64,
    pub runs: usize,
    pub failed_runs: usize,
    pub reasons: Vec<String>,
    pub throughput: Stat,
    /// Each run's throughput: the samples `compare` ranks.
    pub throughput_runs: Vec<f64>,
    /// p99 of each run on its own (its own histogram): the samples `compare` ranks.
    /// The p99 shown is `latency.p99`, from the runs' histograms merged.
    pub p99_runs: Vec<f64>,
    pub latency: LatencySummary,
    pub ok: u64,
    pub errors: u64,
    pub cpu_pct: Stat,
    pub us_per_req: Stat,
    pub rss_mib: Stat,
    /// Each round that ran while others took its CPUs: the largest share (`Record::busy`).
    pub busy: Vec<Mark>,
    /// The rounds' interval rows one after another, in round order.
    pub series: PointSeries,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub server: String,
    pub points: Vec<Aggregate>,
}

#[derive(Clone, Debug)]
pub struct LoadView {
    pub name: String,
    pub protocol: String,
    pub generator: String,
    /// What its throughput counts (its first point's unit).
    pub unit: Unit,
    /// The x axis: the first swept axis (connections when nothing is swept).
    pub axis: String,
    pub series: Vec<Series>,
}

pub struct Dataset {
    pub suite_name: String,
    pub suite_text: Option<String>,
    pub environment: Value,
    pub servers: Value,
    /// The server the verdict compares every other one with: `baseline = "name"` in
    /// the suite file, else its first server.
    pub baseline: Option<String>,
    pub loads: Vec<LoadView>,
    pub files: usize,
    /// The points held to thresholds, in file order.
    pub held: Vec<super::held::Held>,
    /// The points that ran a capacity search, in file order.
    pub searched: Vec<super::search_curve::Searched>,
}

/// The `suite` block of a point, as `wirebench suite` writes it (src/suite/runner.rs)
/// and as far as a report reads it. A key missing from a hand-made or older point
/// reads as empty (0, no rate, repeat 1).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PointMeta {
    name: String,
    load: String,
    server: String,
    protocol: String,
    generator: String,
    swept: Vec<String>,
    point: PointAxes,
    #[serde(default = "one")]
    repeat: u64,
    server_cost: ServerCost,
}

fn one() -> u64 {
    1
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PointAxes {
    connections: f64,
    body_size: f64,
    pipeline: f64,
    rate: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ServerCost {
    cpu_s: f64,
    cpu_percent: Spread,
    rss_bytes: Spread,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Spread {
    avg: f64,
    max: f64,
}

/// An empty result: what a point file's missing blocks and keys read as (zero
/// counts, no latency, the default unit, not a success). Built once.
fn empty_result() -> &'static Value {
    static EMPTY: OnceLock<Value> = OnceLock::new();
    EMPTY.get_or_init(build_empty)
}

fn build_empty() -> Value {
    let mut r = RunResult::builder(Measured {
        kind: "",
        target: String::new(),
        config: Value::Null,
        started_unix_ms: 0,
        elapsed_s: 0.0,
        totals: Totals::default(),
        errors: BTreeMap::new(),
        unit: Unit::default(),
        latency: &Latency::new(),
        client_cpu_s: 0.0,
    })
    .finish(None);
    r.outcome.success = false;
    serde_json::to_value(&r).unwrap_or(Value::Null)
}

/// Reads a point file's JSON as the typed `RunResult`, accepting partial points
/// (results written by hand, or cut short): a top-level block it lacks, or a key
/// missing inside one, reads as in an empty result. Blocks the struct does not name
/// (the `suite` block, a protocol's) land in `extras`. Err: the sentence why not.
pub fn typed(v: &Value) -> std::result::Result<RunResult, String> {
    let mut v = v.clone();
    let (Some(have), Some(base)) = (v.as_object_mut(), empty_result().as_object()) else {
        return Err("it is not a JSON object".into());
    };
    for (key, dflt) in base {
        match (have.get_mut(key), dflt) {
            (None, _) => {
                have.insert(key.clone(), dflt.clone());
            }
            (Some(Value::Object(inner)), Value::Object(d)) => {
                for (k, x) in d {
                    inner.entry(k.clone()).or_insert_with(|| x.clone());
                }
            }
            _ => {}
        }
    }
    serde_json::from_value(v).map_err(|e| e.to_string())
}

/// Reads one point file's figures (its JSON read as the typed result).
pub fn record(file: &str, v: &Value) -> std::result::Result<Record, String> {
    let r = typed(v).map_err(|e| format!("{file} is not a wirebench result: {e}"))?;
    from_result(file, &r)
}

/// One point's figures from its typed result.
pub fn from_result(file: &str, r: &RunResult) -> std::result::Result<Record, String> {
    let meta: PointMeta = match r.extra("suite") {
        None => return Err(format!("{file} is not a suite point (no \"suite\" block)")),
        Some(m) => serde_json::from_value(m.clone())
            .map_err(|e| format!("{file}: its \"suite\" block: {e}"))?,
    };
    let latency = if r.histogram.data.is_empty() {
        Latency::new()
    } else {
        Latency::decode(&r.histogram.data).map_err(|e| format!("{file}: {e}"))?
    };
    Ok(Record {
        file: file.to_string(),
        load: meta.load,
        server: meta.server,
        protocol: meta.protocol,
        generator: meta.generator,
        unit: r.unit.clone(),
        swept: meta.swept,
        axes: Axes {
            connections: meta.point.connections,
            body_size: meta.point.body_size,
            pipeline: meta.point.pipeline,
            rate: meta.point.rate.unwrap_or(0.0),
        },
        repeat: meta.repeat,
        msgs_per_s: r.throughput.msgs_per_s,
        ok: r.totals.ok,
        errors: r.totals.errors + r.totals.connect_errors,
        latency,
        cpu_pct: meta.server_cost.cpu_percent.avg,
        cpu_s: meta.server_cost.cpu_s,
        rss_bytes: meta.server_cost.rss_bytes.max,
        success: r.outcome.success,
        reason: r.outcome.reason.clone(),
        busy: r.interference().and_then(|i| i.worst()),
        intervals: r.intervals.clone(),
        elapsed_s: r.elapsed_s,
        thresholds: r.thresholds.clone(),
        search: r.search.clone(),
    })
}

/// The suite's name in a point's `suite` block.
fn suite_name(r: &RunResult) -> String {
    r.extra("suite")
        .and_then(|m| serde_json::from_value::<PointMeta>(m.clone()).ok())
        .map(|m| m.name)
        .unwrap_or_default()
}

/// Reads DIR/points/*.json (and suite.toml, servers.json when present).
pub fn load_dir(dir: &Path) -> Result<Dataset> {
    let points = dir.join("points");
    let rd = std::fs::read_dir(&points).map_err(|e| {
        Error::usage(format!(
            "{} is not a results directory (cannot read {}: {e})",
            dir.display(),
            points.display()
        ))
    })?;
    let mut names: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    let mut records = Vec::new();
    let mut environment = Value::Null;
    let mut name_of_suite = String::new();
    for path in &names {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::usage(format!("cannot read {}: {e}", path.display())))?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| Error::usage(format!("{} is not JSON: {e}", path.display())))?;
        let r = typed(&v).map_err(|e| {
            Error::usage(format!("{} is not a wirebench result: {e}", path.display()))
        })?;
        // The first point that says where it ran names the environment (a point
        // without one reads an empty environment, which is not where it ran).
        if environment.is_null() {
            if v.get("environment").is_some() {
                environment = serde_json::to_value(&r.environment).unwrap_or(Value::Null);
            }
            name_of_suite = suite_name(&r);
        }
        records.push(from_result(&name, &r).map_err(Error::usage)?);
    }
    if records.is_empty() {
        return Err(Error::usage(format!(
            "{} holds no point results",
            points.display()
        )));
    }
    let servers = std::fs::read_to_string(dir.join("servers.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let suite_text = std::fs::read_to_string(dir.join("suite.toml")).ok();
    let baseline = suite_text
        .as_deref()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("baseline").and_then(|b| b.as_str()).map(String::from))
        .or_else(|| {
            servers
                .as_array()
                .and_then(|a| a.first())
                .and_then(|s| s["name"].as_str())
                .map(String::from)
        });
    Ok(Dataset {
        suite_name: name_of_suite,
        suite_text,
        baseline,
        environment,
        servers: servers.clone(),
        loads: {
            let mut loads = group(&records);
            let order: Vec<String> = servers
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s["name"].as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            for l in &mut loads {
                l.series.sort_by_key(|s| {
                    order
                        .iter()
                        .position(|n| *n == s.server)
                        .unwrap_or(usize::MAX)
                });
            }
            loads
        },
        files: records.len(),
        held: records
            .iter()
            .filter(|r| !r.thresholds.is_empty())
            .map(|r| super::held::Held {
                file: r.file.clone(),
                load: r.load.clone(),
                server: r.server.clone(),
                verdicts: r.thresholds.clone(),
            })
            .collect(),
        searched: records
            .iter()
            .filter_map(|r| {
                Some(super::search_curve::Searched {
                    file: r.file.clone(),
                    load: r.load.clone(),
                    server: r.server.clone(),
                    per_s: r.unit.per_s(),
                    figures: r.search.clone()?,
                })
            })
            .collect(),
    })
}

fn axis_label(axis: &str, v: f64) -> String {
    match axis {
        "body_size" => format!("body {}", crate::report::format::iec(v)),
        "pipeline" => format!("pipeline {}", v as u64),
        "rate" => format!("rate {v}"),
        _ => format!("{} conns", v as u64),
    }
}

/// Groups records: load -> series (server + the other swept axes) -> points (x).
pub fn group(records: &[Record]) -> Vec<LoadView> {
    let mut order: Vec<String> = Vec::new();
    for r in records {
        if !order.contains(&r.load) {
            order.push(r.load.clone());
        }
    }
    let mut out = Vec::new();
    for load in order {
        let rs: Vec<&Record> = records.iter().filter(|r| r.load == load).collect();
        let first = rs[0];
        let axis = first
            .swept
            .first()
            .cloned()
            .unwrap_or_else(|| "connections".into());
        let others: Vec<String> = first.swept.iter().skip(1).cloned().collect();
        let mut series: BTreeMap<(String, String), Vec<&Record>> = BTreeMap::new();
        let mut server_order: Vec<String> = Vec::new();
        for r in &rs {
            if !server_order.contains(&r.server) {
                server_order.push(r.server.clone());
            }
            let extra: Vec<String> = others
                .iter()
                .map(|a| axis_label(a, r.axes.get(a)))
                .collect();
            let label = if extra.is_empty() {
                r.server.clone()
            } else {
                format!("{} ({})", r.server, extra.join(", "))
            };
            series.entry((r.server.clone(), label)).or_default().push(r);
        }
        let mut list: Vec<Series> = series
            .into_iter()
            .map(|((server, label), recs)| Series {
                label,
                server,
                points: fold(&axis, &recs),
            })
            .collect();
        list.sort_by_key(|s| {
            server_order
                .iter()
                .position(|n| *n == s.server)
                .unwrap_or(usize::MAX)
        });
        out.push(LoadView {
            name: load,
            protocol: first.protocol.clone(),
            generator: first.generator.clone(),
            unit: first.unit.clone(),
            axis,
            series: list,
        });
    }
    out
}

fn fold(axis: &str, recs: &[&Record]) -> Vec<Aggregate> {
    let mut xs: Vec<f64> = recs.iter().map(|r| r.axes.get(axis)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs.into_iter()
        .map(|x| {
            let rs: Vec<&&Record> = recs.iter().filter(|r| r.axes.get(axis) == x).collect();
            // The point's latency: its rounds' histograms added by the one exact
            // merge (stats::merge), the same sum `wirebench merge` makes of shards.
            let lat = merge::histograms::add_all(rs.iter().map(|r| &r.latency));
            let per =
                |g: fn(&Record) -> f64| Stat::of(&rs.iter().map(|r| g(r)).collect::<Vec<_>>());
            Aggregate {
                x,
                runs: rs.len(),
                failed_runs: rs.iter().filter(|r| !r.success).count(),
                reasons: rs.iter().filter_map(|r| r.reason.clone()).collect(),
                throughput: per(|r| r.msgs_per_s),
                throughput_runs: rs.iter().map(|r| r.msgs_per_s).collect(),
                p99_runs: rs
                    .iter()
                    .map(|r| r.latency.quantile_ns(0.99) as f64 / 1e3)
                    .collect(),
                latency: lat.summary(),
                ok: rs.iter().map(|r| r.ok).sum(),
                errors: rs.iter().map(|r| r.errors).sum(),
                cpu_pct: per(|r| r.cpu_pct),
                us_per_req: per(|r| {
                    if r.ok > 0 {
                        r.cpu_s * 1e6 / r.ok as f64
                    } else {
                        0.0
                    }
                }),
                rss_mib: per(|r| r.rss_bytes / (1024.0 * 1024.0)),
                busy: rs.iter().filter_map(|r| r.busy).collect(),
                series: {
                    let mut rounds = rs.clone();
                    rounds.sort_by_key(|r| r.repeat);
                    let rows: Vec<(f64, &[IntervalRow])> = rounds
                        .iter()
                        .map(|r| (r.elapsed_s, &r.intervals[..]))
                        .collect();
                    PointSeries::of_rounds(&rows, rs[0].unit.replies)
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_median_and_noise() {
        let s = Stat::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert_eq!(s.noise(), 0.5);
        assert_eq!(Stat::of(&[1.0, 3.0]).median, 2.0);
    }

    #[test]
    fn a_partial_point_reads_typed_with_what_it_lacks_empty() {
        use serde_json::json;
        let v = json!({
            "throughput": {"msgs_per_s": 5.0},
            "totals": {"ok": 7, "errors": 1, "connect_errors": 2},
            "suite": {"load": "l", "server": "s", "protocol": "redis", "point": {"connections": 3}},
            "redis": {"pushes": 4}
        });
        let r = typed(&v).expect("a partial point reads");
        assert_eq!((r.totals.ok, r.totals.sent), (7, 0));
        assert!(!r.outcome.success, "no outcome is no success");
        assert_eq!(r.unit, Unit::default());
        // A block the struct does not name lands in extras, whatever protocol wrote it.
        assert_eq!(r.extra("redis"), Some(&json!({"pushes": 4})));
        let rec = record("p.json", &v).expect("a suite point");
        assert_eq!(
            (
                rec.ok,
                rec.errors,
                rec.msgs_per_s,
                rec.axes.connections,
                rec.axes.rate
            ),
            (7, 3, 5.0, 3.0, 0.0)
        );
        assert_eq!((rec.repeat, rec.protocol.as_str()), (1, "redis"));
        assert_eq!(rec.latency.count(), 0);
        // Typed: a count that is not a number is refused in one sentence.
        let e = record("p.json", &json!({"totals": {"ok": "many"}, "suite": {}})).unwrap_err();
        assert!(e.starts_with("p.json is not a wirebench result: "), "{e}");
        let e = record("p.json", &json!({"totals": {"ok": 1}})).unwrap_err();
        assert_eq!(e, "p.json is not a suite point (no \"suite\" block)");
    }
}
