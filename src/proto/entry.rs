//! What the suite and the published schema know of a load command: `Entry`, one per
//! registered command (`registry::REGISTRY`), looked up by the name a suite file gives.
//! Each protocol implements it in its folder (`src/proto/<name>/entry.rs`, connect in
//! `src/connect/entry.rs`), so src/suite and the schema assembly name no protocol.

use std::fmt;
use std::time::Duration;

/// How long one suite point runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RunFor {
    Duration(Duration),
    /// This many requests (for `connect`: the connections are the count).
    Count(u64),
}

/// One point of a suite load, aimed at a started server: what a command line needs.
#[derive(Clone, Copy, Debug)]
pub struct SuitePoint<'a> {
    /// HOST:PORT (`[v6]:PORT`).
    pub addr: &'a str,
    /// The load's `path` key (a URL path, for protocols that have one).
    pub path: &'a str,
    /// The load's `method` key.
    pub method: &'a str,
    /// Threads that share the connections evenly (`suite::gen::threads_for`).
    pub threads: u64,
    /// All connections of the point (`-c`: connections in total).
    pub connections: u64,
    /// The point's `body_size`: the payload size, in the protocol's sense.
    pub size: u64,
    pub pipeline: u64,
    pub rate: Option<f64>,
    pub run_for: RunFor,
    pub timeout: Duration,
}

impl SuitePoint<'_> {
    /// The argv of a load that sends payloads of the point's size over its
    /// connections (echo, redis, ws): `NAME TARGET -t -c --pipeline --size`, then the
    /// shared flags.
    pub fn sized_load_args(&self, name: &str, target: String) -> Vec<String> {
        let mut a: Vec<String> = vec![
            name.into(),
            target,
            "-t".into(),
            self.threads.to_string(),
            "-c".into(),
            self.connections.to_string(),
            "--pipeline".into(),
            self.pipeline.to_string(),
            "--size".into(),
            self.size.to_string(),
        ];
        a.extend(self.shared_args());
        a
    }

    /// The shared load flags (`flags::LoadArgs`) that end every argv of a command on
    /// the load engine: the plan (`-d` or `-n`), the rate and the reply timeout.
    pub fn shared_args(&self) -> Vec<String> {
        let mut a = match self.run_for {
            RunFor::Duration(d) => vec!["-d".into(), format!("{}ms", d.as_millis())],
            RunFor::Count(n) => vec!["-n".into(), n.to_string()],
        };
        if let Some(r) = self.rate {
            a.extend(["-R".into(), r.to_string()]);
        }
        a.extend([
            "--timeout".into(),
            format!("{}ms", self.timeout.as_millis()),
        ]);
        a
    }
}

/// A registered load command as the suite and the schema see it.
pub trait Entry: Sync + 'static {
    /// `wirebench NAME`, the result's `kind`, a suite load's `protocol`.
    fn name(&self) -> &'static str;
    /// `wirebench serve NAME` exists too.
    fn serves(&self) -> bool {
        true
    }
    /// The result blocks the command adds at the top level, as JSON schema text: one
    /// object, `{"block": {schema}, ...}` (`$ref`s may use the base's `#/$defs`). The
    /// published schema/result.schema.json is the base plus every command's blocks
    /// (`registry::schema`).
    fn result_blocks_schema(&self) -> &'static str {
        "{}"
    }
    /// How its result blocks merge over shards and rounds (`wirebench merge`): a
    /// command whose blocks hold rates, means, histograms or whole-number settings
    /// returns its own merge (given every part's block, in order, and the merged result
    /// so far); the default merges blocks of counters and settings by the generic
    /// counter sum (`stats::merge::counters`).
    fn block_merge(&self) -> crate::stats::merge::BlockMerge {
        crate::stats::merge::no_block_merge
    }
    /// How a part's result blocks are checked against its totals before a merge
    /// (`wirebench merge`), where they say the same thing in other words; the default
    /// checks nothing.
    fn block_check(&self) -> crate::stats::merge::BlockCheck {
        crate::stats::merge::no_block_check
    }
    /// A suite load's size when its file gives no `body_size`.
    fn suite_default_size(&self) -> u64 {
        0
    }
    /// The external generators (a suite load's `generator`, besides "wirebench")
    /// that can drive it.
    fn suite_generators(&self) -> &'static [&'static str] {
        &[]
    }
    /// What an external generator is aimed at for `addr` and the load's `path`.
    fn suite_target(&self, addr: &str, _path: &str) -> String {
        addr.to_string()
    }
    /// wirebench's own argv for one suite point, from the command's name to its last
    /// flag (the suite adds `--json FILE -q` and the load's `extra_args`).
    fn suite_args(&self, p: &SuitePoint<'_>) -> Vec<String>;
}

impl fmt::Debug for dyn Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
