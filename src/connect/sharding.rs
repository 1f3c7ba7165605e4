//! `connect` as one shard of a run over several generators: its share of the
//! connections (or churn cycles), of `--connect-rate` and `--concurrency`, and its own
//! slice of the source addresses (split, never shared, so no two shards compete for
//! the same ephemeral ports). The whole, as given, stays for the config block.

use crate::error::{Error, Result};
use crate::shard::Shard;
use std::net::IpAddr;

/// The run before it was shared out: what the config block shows on every shard.
#[derive(Clone, Debug, PartialEq)]
pub struct WholeConnect {
    pub total: u64,
    pub rate: f64,
    /// `--concurrency` as given (None: each shard chooses its own).
    pub concurrency: Option<usize>,
    pub sources: usize,
    /// `--processes` as given (None: each shard derives its own).
    pub processes: Option<usize>,
    /// `--stages` as given (churn), every shard's together.
    pub stages: crate::engine::Stages,
}

/// This shard's share of `total` connections or cycles (0 stays 0: churn for a
/// duration has no count to share).
pub fn total(s: &Shard, total: u64) -> Result<u64> {
    let mine = s.share(total);
    if total > 0 && mine == 0 {
        return Err(Error::usage(format!(
            "-n {total} connections cannot be shared over {} shards: shard {} would get none",
            s.count, s.index
        )));
    }
    Ok(mine)
}

/// This shard's share of a connect rate (0: no limit, for every shard).
pub fn rate(s: &Shard, rate: f64) -> f64 {
    if rate > 0.0 {
        s.rate(rate).max(crate::config::MIN_RATE)
    } else {
        0.0
    }
}

/// This shard's share of the attempts in flight (at least one).
pub fn concurrency(s: &Shard, c: usize) -> usize {
    (s.share(c as u64) as usize).max(1)
}

/// This shard's own contiguous slice of the source addresses; none given stays none
/// (the kernel chooses). Fewer addresses than shards is refused.
pub fn sources(s: &Shard, all: &[IpAddr]) -> Result<Vec<IpAddr>> {
    if all.is_empty() {
        return Ok(Vec::new());
    }
    let n = all.len() as u64;
    if n < u64::from(s.count) {
        return Err(Error::usage(format!(
            "--source has {n} addresses, fewer than the {} shards: each shard needs addresses of its own",
            s.count
        )));
    }
    let from = s.offset(n) as usize;
    let len = s.share(n) as usize;
    Ok(all[from..from + len].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::Source;

    fn shard(index: u32, count: u32) -> Shard {
        Shard {
            index,
            count,
            source: Source::Flag,
            run_id: None,
        }
    }

    #[test]
    fn sources_are_split_end_to_end_never_shared() {
        let all: Vec<IpAddr> = (2..=11).map(|i| IpAddr::from([127, 0, 0, i])).collect();
        let parts: Vec<Vec<IpAddr>> = (0..3)
            .map(|i| sources(&shard(i, 3), &all).unwrap())
            .collect();
        assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), [4, 3, 3]);
        assert_eq!(parts.concat(), all);
        assert!(sources(&shard(0, 11), &all).is_err());
        assert!(sources(&shard(0, 3), &[]).unwrap().is_empty());
    }

    #[test]
    fn totals_rates_and_concurrency_add_up() {
        let t: u64 = (0..3).map(|i| total(&shard(i, 3), 1000).unwrap()).sum();
        assert_eq!(t, 1000);
        assert!(total(&shard(2, 3), 2).is_err());
        assert_eq!(total(&shard(1, 3), 0).unwrap(), 0);
        assert_eq!(rate(&shard(0, 3), 0.0), 0.0);
        assert_eq!(rate(&shard(0, 3), 100.0), 33.334);
        assert_eq!(concurrency(&shard(2, 3), 2), 1);
    }
}
