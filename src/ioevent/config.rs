//! `wirebench ioevent`, validated: its flags into an `IoeventConfig` (a bad value is
//! `Error::Usage`, one sentence, exit 2), and the descriptor check before a run.

use super::backend::BackendKind;
use crate::cli::IoeventArgs;
use crate::error::{Error, Result};
use crate::report::format::group;

/// Descriptors a process needs besides the pairs: stdio, epoll, io_uring, the runtime.
pub const FD_MARGIN: u64 = 32;

/// A validated ioevent run.
#[derive(Clone, Debug)]
pub struct IoeventConfig {
    pub pairs: Vec<usize>,
    pub active: usize,
    pub writes: u64,
    pub iterations: usize,
    pub backends: Vec<BackendKind>,
}

impl IoeventConfig {
    /// Refuses pair counts this process cannot open (two descriptors per pair).
    pub fn check_limits(&self, fd_limit: u64) -> Result<()> {
        let most = self.pairs.iter().copied().max().unwrap_or(0) as u64;
        if 2 * most + FD_MARGIN > fd_limit {
            return Err(Error::usage(format!(
                "-n {most} needs {} descriptors but this process may open {fd_limit} (ulimit -n): at most {} pairs",
                2 * most + FD_MARGIN,
                fd_limit.saturating_sub(FD_MARGIN) / 2
            )));
        }
        Ok(())
    }
}

fn parse_pairs(text: &str) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let n: usize = part
            .trim()
            .parse()
            .map_err(|_| Error::usage(format!("-n: '{part}' is not a number of socketpairs")))?;
        if n == 0 {
            return Err(Error::usage("-n: at least one socketpair"));
        }
        out.push(n);
    }
    Ok(out)
}

/// The fastest a backend handles one read-and-forward here (epoll at N=100 is about
/// 0.5 us): the estimate below is a lower bound on the run's time.
const FASTEST_NS_PER_WRITE: u64 = 500;
/// A run estimated past this is refused as a typo, with the estimate.
const LONGEST_RUN_S: u64 = 3600;

/// Refuses a plan whose writes alone would take longer than LONGEST_RUN_S.
fn check_estimate(writes: u64, iterations: usize, backends: usize, points: usize) -> Result<()> {
    let total = u128::from(writes) * iterations as u128 * backends as u128 * points as u128;
    let secs = total * u128::from(FASTEST_NS_PER_WRITE) / 1_000_000_000;
    if secs > u128::from(LONGEST_RUN_S) {
        return Err(Error::usage(format!(
            "-w {} writes x {iterations} iterations x {backends} backends x {points} values of -n would take at least {} hours (about 0.5 us a write here): use fewer writes",
            group(writes),
            group((secs / 3600).min(u128::from(u64::MAX)) as u64)
        )));
    }
    Ok(())
}

impl IoeventConfig {
    /// `wirebench ioevent`'s flags, validated once; a bad value is `Error::Usage`.
    pub fn from_args(a: &IoeventArgs) -> Result<IoeventConfig> {
        let pairs = parse_pairs(&a.pairs)?;
        let backends = BackendKind::parse(&a.backend).ok_or_else(|| {
            Error::usage(format!(
                "--backend '{}': choose epoll, poll, uring, tokio or all",
                a.backend
            ))
        })?;
        if a.active == 0 {
            return Err(Error::usage("-a/--active must be at least 1"));
        }
        let fewest = pairs.iter().copied().min().unwrap_or(0);
        if a.active > fewest {
            return Err(Error::usage(format!(
                "-a {} is more active pairs than the {fewest} socketpairs of -n",
                a.active
            )));
        }
        if a.iterations < 2 {
            return Err(Error::usage(
                "--iterations must be at least 2 (the first is a warm-up, left out of the summary)",
            ));
        }
        if let Some(c) = &a.chart {
            if !matches!(c.extension().and_then(|e| e.to_str()), Some("svg" | "png")) {
                return Err(Error::usage(format!(
                    "--chart {}: the file name must end in .svg or .png",
                    c.display()
                )));
            }
        }
        check_estimate(a.writes, a.iterations, backends.len(), pairs.len())?;
        Ok(IoeventConfig {
            pairs,
            active: a.active,
            writes: a.writes,
            iterations: a.iterations,
            backends,
        })
    }
}
