//! Samples a server family's CPU (user+sys of every member, threads included, from
//! /proc/PID/stat) and RSS once a second on a thread of its own, as hertz-benchmark
//! does; the runner cuts out the samples of each measured phase.

use super::process::family_stats;
use crate::sys::proc_fs;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub at: Instant,
    /// CPU seconds of the whole family so far.
    pub cpu_s: f64,
    pub rss_bytes: u64,
}

/// The family's CPU seconds and RSS right now.
pub fn read_family(leader: i32) -> (f64, u64) {
    let stats = family_stats(leader);
    // Children waited for count too: a server that forks workers and reaps them.
    let ticks: u64 = stats.iter().map(|p| p.own_ticks + p.children_ticks).sum();
    let pages: u64 = stats.iter().map(|p| p.rss_pages).sum();
    (
        proc_fs::ticks(ticks).as_secs_f64(),
        pages * proc_fs::page_size(),
    )
}

pub struct Sampler {
    samples: Arc<Mutex<Vec<Sample>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    pub fn start(leader: i32, every: Duration) -> Sampler {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (samples.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut next = Instant::now();
            while !st.load(Ordering::Relaxed) {
                let now = Instant::now();
                if now >= next {
                    let (cpu_s, rss_bytes) = read_family(leader);
                    if let Ok(mut v) = s.lock() {
                        v.push(Sample {
                            at: now,
                            cpu_s,
                            rss_bytes,
                        });
                    }
                    next += every;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Sampler {
            samples,
            stop,
            thread: Some(thread),
        }
    }

    /// The samples taken between `from` and `to`.
    pub fn window(&self, from: Instant, to: Instant) -> Vec<Sample> {
        self.samples
            .lock()
            .map(|v| {
                v.iter()
                    .filter(|s| s.at >= from && s.at <= to)
                    .copied()
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Server cost over one measured phase.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerCost {
    /// CPU seconds (user+sys) of the server family during the phase.
    pub cpu_s: f64,
    /// Per-second CPU use in percent of one core (100 = one core busy).
    pub cpu_percent: Spread,
    pub rss_bytes: Spread,
    pub samples: usize,
}

/// min, p50, p90, p99, max, avg: what hertz-benchmark reports for CPU and memory.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    pub avg: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        // Nearest rank, as a percentile of a few dozen samples should be.
        let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Spread {
            min: v[0],
            p50: rank(0.50),
            p90: rank(0.90),
            p99: rank(0.99),
            max: v[v.len() - 1],
            avg: v.iter().sum::<f64>() / v.len() as f64,
        }
    }
}

/// Cost from the CPU reading at the phase's start and end and the samples between.
pub fn cost(start: (Instant, f64), end: (Instant, f64), samples: &[Sample]) -> ServerCost {
    let mut points: Vec<(Instant, f64)> = vec![start];
    points.extend(samples.iter().map(|s| (s.at, s.cpu_s)));
    points.push(end);
    let mut pct = Vec::new();
    for w in points.windows(2) {
        let dt = w[1].0.saturating_duration_since(w[0].0).as_secs_f64();
        // Intervals much shorter than the sampling period are all rounding.
        if dt >= 0.5 {
            pct.push(((w[1].1 - w[0].1) / dt * 100.0).max(0.0));
        }
    }
    let rss: Vec<f64> = samples.iter().map(|s| s.rss_bytes as f64).collect();
    ServerCost {
        cpu_s: (end.1 - start.1).max(0.0),
        cpu_percent: Spread::of(&pct),
        rss_bytes: Spread::of(&rss),
        samples: samples.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_uses_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        let s = Spread::of(&v);
        assert_eq!(
            (s.min, s.p50, s.p90, s.p99, s.max),
            (1.0, 50.0, 90.0, 99.0, 100.0)
        );
        assert_eq!(s.avg, 50.5);
        assert_eq!(Spread::of(&[]), Spread::default());
    }

    #[test]
    fn cost_turns_readings_into_percent() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let samples = [
            Sample {
                at: at(1),
                cpu_s: 0.5,
                rss_bytes: 10,
            },
            Sample {
                at: at(2),
                cpu_s: 1.5,
                rss_bytes: 30,
            },
        ];
        let c = cost((t0, 0.0), (at(3), 2.0), &samples);
        assert_eq!(c.cpu_s, 2.0);
        assert_eq!(c.cpu_percent.min, 50.0);
        assert_eq!(c.cpu_percent.max, 100.0);
        assert_eq!(c.rss_bytes.max, 30.0);
    }
}
