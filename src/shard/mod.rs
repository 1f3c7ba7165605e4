//! One generator as a shard of a run spread over several (`--shard I/N`, or what
//! Slurm, a Kubernetes Indexed Job or mpirun say), and the common start
//! (`--start-at`). What a shard does is decided here once, from the flags and the
//! environment: `detect.rs` finds the position and the run id, `split.rs` shares the
//! whole run's totals out exactly, `start_at.rs` parses and waits for the start. The
//! result carries it as `stats::shard::ShardInfo`.

pub mod detect;
pub mod split;
pub mod start_at;

use crate::error::Result;
use crate::flags::ShardArgs;
use crate::stats::shard::ShardInfo;
pub use detect::Source;

/// This process's place in a sharded run.
#[derive(Clone, Debug, PartialEq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
    pub source: Source,
    pub run_id: Option<String>,
}

/// What `ShardArgs` and the environment decided: the shard (None: a run of its own)
/// and the common start (Unix ms), each independent of the other.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Coordination {
    pub shard: Option<Shard>,
    pub start_at_ms: Option<u64>,
}

impl Coordination {
    /// From the flags and this process's environment.
    pub fn from_args(a: &ShardArgs) -> Result<Self> {
        Self::resolve(a, &|k| std::env::var(k).ok(), crate::clock::unix_ms())
    }

    /// From the flags, an environment and the time now (Unix ms).
    pub fn resolve(
        a: &ShardArgs,
        env: &dyn Fn(&str) -> Option<String>,
        now_ms: u64,
    ) -> Result<Self> {
        let position = detect::position(a.shard.as_deref(), a.shards, env)?;
        let shard = match position {
            Some((index, count, source)) => Some(Shard {
                index,
                count,
                source,
                run_id: detect::run_id(a.run_id.as_deref(), env)?,
            }),
            None if a.run_id.is_some() => {
                return Err(crate::error::Error::usage(
                    "--run-id names the run a shard belongs to: give --shard I/N too (or run under a scheduler)",
                ))
            }
            None => None,
        };
        let start_at_ms = a
            .start_at
            .as_deref()
            .map(|t| start_at::parse(t, now_ms))
            .transpose()?;
        Ok(Coordination { shard, start_at_ms })
    }

    /// Waits for `--start-at`, if given; false when stopped (Ctrl-C) meanwhile.
    pub fn wait_for_start(&self, stop: &std::sync::atomic::AtomicBool) -> bool {
        self.start_at_ms
            .map_or(true, |at| start_at::wait_until(at, stop))
    }

    /// The result's `shard` block, when this is a shard.
    pub fn info(
        &self,
        measured_start_unix_ms: u64,
        portion: serde_json::Value,
    ) -> Option<ShardInfo> {
        self.shard.as_ref().map(|s| ShardInfo {
            index: s.index,
            count: s.count,
            run_id: s.run_id.clone(),
            start_at_unix_ms: self.start_at_ms,
            measured_start_unix_ms,
            portion,
        })
    }

    /// The plan line's addition: "; shard 1/3 (from --shard), run r7, start at ...".
    pub fn plan_text(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(s) = &self.shard {
            parts.push(format!(
                "shard {}/{} (from {})",
                s.index,
                s.count,
                s.source.describe()
            ));
            if let Some(id) = &s.run_id {
                parts.push(format!("run {id}"));
            }
        }
        if let Some(at) = self.start_at_ms {
            parts.push(format!("starts at Unix ms {at}"));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

impl Shard {
    /// This shard's share of a whole-run total.
    pub fn share(&self, total: u64) -> u64 {
        split::share(total, self.count, self.index)
    }

    /// Where this shard's share of `total` starts (to split ranges: sources).
    pub fn offset(&self, total: u64) -> u64 {
        split::offset(total, self.count, self.index)
    }

    /// This shard's share of a whole-run rate (exact in thousandths per second).
    pub fn rate(&self, rate: f64) -> f64 {
        split::share_rate(rate, self.count, self.index)
    }

    /// Added to every connection id this shard makes, so ids (which echo frames
    /// carry, and which seed each connection's payload sizes) are unique over the
    /// run: the index sits in the top 12 bits (`detect::MAX_SHARDS`).
    pub fn connection_id_base(&self) -> u64 {
        u64::from(self.index) << 52
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(shard: Option<&str>, run_id: Option<&str>, start_at: Option<&str>) -> ShardArgs {
        ShardArgs {
            shard: shard.map(String::from),
            shards: None,
            run_id: run_id.map(String::from),
            start_at: start_at.map(String::from),
        }
    }

    #[test]
    fn a_shard_and_a_start_resolve_together() {
        let env = |k: &str| (k == "SLURM_JOB_ID").then(|| "77".to_string());
        let c = Coordination::resolve(&args(Some("1/3"), None, Some("1000")), &env, 900).unwrap();
        let s = c.shard.clone().unwrap();
        assert_eq!((s.index, s.count, s.run_id.as_deref()), (1, 3, Some("77")));
        assert_eq!(c.start_at_ms, Some(1000));
        assert_eq!(
            c.plan_text().unwrap(),
            "shard 1/3 (from --shard), run 77, starts at Unix ms 1000"
        );
        assert_eq!(s.connection_id_base(), 1 << 52);
        let info = c.info(1001, serde_json::json!({})).unwrap();
        assert_eq!(
            (info.index, info.count, info.start_at_unix_ms),
            (1, 3, Some(1000))
        );
    }

    #[test]
    fn no_shard_means_no_block_and_run_id_alone_is_refused() {
        let env = |_: &str| None;
        let c = Coordination::resolve(&args(None, None, None), &env, 0).unwrap();
        assert_eq!(c, Coordination::default());
        assert!(c.info(5, serde_json::json!({})).is_none());
        assert!(Coordination::resolve(&args(None, Some("r"), None), &env, 0).is_err());
    }
}
