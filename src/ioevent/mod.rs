//! `wirebench ioevent`: the libev/libevent/evpp event-loop benchmark, run on several
//! backends side by side in one process.

pub mod backend;
pub mod chart;
pub mod config;
pub mod epoll;
pub mod method;
pub mod poll;
pub mod result;
pub mod tokio_backend;
pub mod uring;

use crate::error::{Error, Result};
pub use backend::BackendKind;
pub use config::{IoeventConfig, FD_MARGIN};
use method::{Pairs, Shape};
use result::{IterationRecord, Series};

fn runtime(e: std::io::Error, what: &str) -> Error {
    Error::runtime(format!("{what}: {e}"))
}

/// Runs every backend at every N. Backends are interleaved iteration by iteration when
/// descriptors allow a set of pairs for each at once; otherwise they run one after another.
/// `line` receives one text line per iteration.
pub fn run(
    cfg: &IoeventConfig,
    fd_limit: u64,
    line: &mut dyn FnMut(&str),
) -> Result<(Vec<Series>, bool)> {
    let mut all = Vec::new();
    let mut always_interleaved = true;
    for &n in &cfg.pairs {
        let shape = Shape {
            pairs: n,
            active: cfg.active,
            writes: cfg.writes,
        };
        let together = 2 * (n * cfg.backends.len()) as u64 + FD_MARGIN <= fd_limit;
        always_interleaved &= together || cfg.backends.len() == 1;
        let groups: Vec<Vec<BackendKind>> = if together {
            vec![cfg.backends.clone()]
        } else {
            cfg.backends.iter().map(|b| vec![*b]).collect()
        };
        for group in groups {
            let mut loops = Vec::new();
            for kind in &group {
                let pairs = Pairs::new(n).map_err(|e| runtime(e, "cannot create socketpairs"))?;
                loops.push(kind.make(pairs).map_err(|e| {
                    runtime(e, &format!("cannot start the {} backend", kind.name()))
                })?);
            }
            let mut series: Vec<Series> = group
                .iter()
                .map(|k| Series::new(k.name(), &shape))
                .collect();
            for it in 0..cfg.iterations {
                for (b, s) in loops.iter_mut().zip(series.iter_mut()) {
                    let t = b
                        .iterate(&shape)
                        .map_err(|e| runtime(e, &format!("{} at -n {n}", b.name())))?;
                    let expected = cfg.active as u64 + cfg.writes;
                    if t.failures > 0 {
                        return Err(Error::runtime(format!(
                            "{} at -n {n}: {} reads or writes on the socketpairs failed",
                            b.name(),
                            t.failures
                        )));
                    }
                    if t.reads != t.fired || t.fired != expected {
                        return Err(Error::runtime(format!(
                            "{} at -n {n}: read {} of {} fired bytes, expected {expected}",
                            b.name(),
                            t.reads,
                            t.fired
                        )));
                    }
                    let rec = IterationRecord::from(t);
                    line(&format!(
                        "{:<6} n={:<6} iteration {:>3}: total {:>10.1} us  loop {:>10.1} us{}",
                        b.name(),
                        n,
                        it + 1,
                        rec.total_us,
                        rec.loop_us,
                        if it == 0 { "  (warm-up, excluded)" } else { "" }
                    ));
                    s.iterations.push(rec);
                }
            }
            for s in &mut series {
                s.summarize();
            }
            all.extend(series);
        }
    }
    Ok((all, always_interleaved))
}
