//! ioevent results: per backend and N, every iteration's two times and a summary that
//! leaves the first (warm-up) iteration out. Serialized as schema/ioevent.schema.json.

use super::method::{Shape, Timing};
use crate::sys::Environment;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct IterationRecord {
    pub total_us: f64,
    pub loop_us: f64,
    pub reads: u64,
    pub fired: u64,
}

impl From<Timing> for IterationRecord {
    fn from(t: Timing) -> Self {
        IterationRecord {
            total_us: t.total_ns as f64 / 1e3,
            loop_us: t.loop_ns as f64 / 1e3,
            reads: t.reads,
            fired: t.fired,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Stats {
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub stddev: f64,
}

impl Stats {
    pub fn of(values: &[f64]) -> Stats {
        if values.is_empty() {
            return Stats::default();
        }
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        Stats {
            median,
            mean,
            min: v[0],
            max: v[n - 1],
            stddev: var.sqrt(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Iterations summarized (all but the first).
    pub iterations: usize,
    pub total_us: Stats,
    pub loop_us: Stats,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Series {
    pub backend: String,
    pub pairs: usize,
    pub active: usize,
    pub writes: u64,
    pub iterations: Vec<IterationRecord>,
    pub summary: Summary,
}

impl Series {
    pub fn new(backend: &str, shape: &Shape) -> Series {
        Series {
            backend: backend.to_string(),
            pairs: shape.pairs,
            active: shape.active,
            writes: shape.writes,
            iterations: Vec::new(),
            summary: Summary::default(),
        }
    }

    /// Summarizes every iteration but the first, which is shown but left out.
    pub fn summarize(&mut self) {
        let rest = if self.iterations.len() > 1 {
            &self.iterations[1..]
        } else {
            &self.iterations[..]
        };
        let total: Vec<f64> = rest.iter().map(|r| r.total_us).collect();
        let looped: Vec<f64> = rest.iter().map(|r| r.loop_us).collect();
        self.summary = Summary {
            iterations: rest.len(),
            total_us: Stats::of(&total),
            loop_us: Stats::of(&looped),
        };
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IoeventResult {
    pub schema_version: u32,
    pub kind: String,
    pub started_unix_ms: u64,
    pub environment: Environment,
    pub config: IoeventConfigRecord,
    pub results: Vec<Series>,
    /// What the benchmark itself cost: it runs in this process only.
    pub client_process: IoeventCost,
}

/// CPU (user+sys of the whole process, every backend and iteration, set-up included)
/// and peak RSS (VmHWM) of the ioevent run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IoeventCost {
    pub cpu_s: f64,
    /// CPU per read event over all iterations; null when nothing was read.
    pub cpu_us_per_read: Option<f64>,
    pub peak_rss_bytes: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IoeventConfigRecord {
    pub pairs: Vec<usize>,
    pub active: usize,
    pub writes: u64,
    pub iterations: usize,
    pub backends: Vec<String>,
    /// Whether backends alternated iteration by iteration at every N.
    pub interleaved: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_exact() {
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.mean, 2.5);
        assert_eq!((s.min, s.max), (1.0, 4.0));
        assert!((s.stddev - 1.25f64.sqrt()).abs() < 1e-12);
        assert_eq!(Stats::of(&[5.0, 1.0, 9.0]).median, 5.0);
    }

    #[test]
    fn first_iteration_is_left_out() {
        let shape = Shape {
            pairs: 2,
            active: 1,
            writes: 1,
        };
        let mut s = Series::new("epoll", &shape);
        for us in [100.0, 1.0, 3.0] {
            s.iterations.push(IterationRecord {
                total_us: us,
                loop_us: us,
                reads: 2,
                fired: 2,
            });
        }
        s.summarize();
        assert_eq!(s.summary.iterations, 2);
        assert_eq!(s.summary.total_us.max, 3.0);
    }
}
