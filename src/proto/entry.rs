//! What the suite and the published schema know of a load command: `Entry`, one per
//! registered command (`registry::REGISTRY`), looked up by the name a suite file gives.
//! Every protocol is one through its `Protocol` impl (`registered.rs`), `connect` in
//! `src/connect/entry.rs`, so src/suite and the schema assembly name no protocol.

use super::generator::Generator;
pub use super::suite_point::{RunFor, SuitePoint};
use std::fmt;

/// A suite load as its command runs it: the command's own settings (the load's block
/// named after it, `http = { method = "PUT" }`) validated, and what it makes of a point.
pub trait SuiteLoad: Send + Sync + fmt::Debug {
    /// wirebench's own argv for one point, from the command's name to its last flag
    /// (the suite adds `--json FILE -q` and the load's `extra_args`).
    fn args(&self, p: &SuitePoint<'_>) -> Vec<String>;
    /// The external generator `name` (one of the entry's `suite_generators`) set up for
    /// this load; None for a name the entry does not declare.
    fn generator(&self, _name: &str) -> Option<Box<dyn Generator + '_>> {
        None
    }
    /// The settings as an external generator's result names them in its `config`.
    fn settings_json(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
}

/// A suite load of a command that has no settings of its own: its argv is a function
/// of the point.
#[derive(Debug)]
pub struct Plain(pub fn(&SuitePoint<'_>) -> Vec<String>);

impl SuiteLoad for Plain {
    fn args(&self, p: &SuitePoint<'_>) -> Vec<String> {
        (self.0)(p)
    }
}

/// `Entry::suite_load` of a command with no settings block: a block given is refused.
pub fn plain(
    block: Option<&toml::Value>,
    args: fn(&SuitePoint<'_>) -> Vec<String>,
) -> Result<Box<dyn SuiteLoad>, String> {
    match block {
        Some(_) => Err("the command has no settings of its own: drop the block".into()),
        None => Ok(Box::new(Plain(args))),
    }
}

/// The keys of a protocol's suite block (a TOML table), each as a string: unknown
/// keys and values that are not strings are refused, naming the key.
pub fn string_keys<'a>(
    block: Option<&'a toml::Value>,
    known: &[&str],
) -> Result<Vec<(&'a str, &'a str)>, String> {
    let Some(block) = block else {
        return Ok(Vec::new());
    };
    let table = block
        .as_table()
        .ok_or("write the settings as a table, as { key = \"value\" }")?;
    table
        .iter()
        .map(|(k, v)| {
            if !known.contains(&k.as_str()) {
                return Err(format!("`{k}` is not one of {}", known.join(", ")));
            }
            let v = v.as_str().ok_or(format!("`{k}` must be a string"))?;
            Ok((k.as_str(), v))
        })
        .collect()
}

/// How a server of a suite is known to be ready in a protocol's words (its
/// `ready = { NAME = ... }`): what to send on a fresh connection and how the answer
/// must begin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadyProbe {
    /// Sent once connected; `{addr}` is the server's HOST:PORT.
    pub send: String,
    /// The answer's first bytes.
    pub answer_starts: &'static [u8],
    /// What it asks, for the sentence of a server never ready ("GET /").
    pub asks: String,
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
    /// that can drive it; its suite load sets each up (`SuiteLoad::generator`).
    fn suite_generators(&self) -> &'static [&'static str] {
        &[]
    }
    /// A suite load of this command: `block` is the load's settings table named after
    /// it (None: none given), `sizes` the load's `body_size` values. Err: one sentence
    /// on the block (the suite names the file, line and key).
    fn suite_load(
        &self,
        block: Option<&toml::Value>,
        sizes: &[u64],
    ) -> Result<Box<dyn SuiteLoad>, String>;
    /// A suite server's readiness check in this command's words, from the value of its
    /// `ready = { NAME = VALUE }`; Err: one sentence (none: it has no such check).
    fn ready_probe(&self, _value: &toml::Value) -> Result<ReadyProbe, String> {
        Err(no_ready_probe(self.name()))
    }
}

/// Why a command without a readiness check of its own cannot be a server's `ready`.
pub fn no_ready_probe(name: &str) -> String {
    format!("{name} has no readiness check of its own; leave `ready` out for a TCP connect")
}

impl fmt::Debug for dyn Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
