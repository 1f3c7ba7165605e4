//! Load generators other than wirebench (wrk, ab, h2load, ...) as a suite runs them:
//! declared by the protocol they drive (its entry's `suite_generators`, its suite
//! load's `generator`), each says what it cannot do, the command line of one point and
//! how to read what it printed, into one shape (`ExternalRun`) the suite turns into
//! the shared result (suite/gen/external.rs). A protocol's folder adds one with no
//! change to the suite.

use super::suite_point::SuitePoint;
use crate::stats::latency::Latency;
use crate::stats::Unit;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a suite point may ask that a generator refuses when the suite file is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// An open-loop rate (`rate`).
    Rate,
    /// More than one request in flight per connection (`pipeline` above 1).
    Pipeline,
    /// A count of requests rather than a duration (`count`).
    Count,
}

/// One run of a generator: its command line, the files it reads (written first), and
/// the file it writes its per-request figures to, if any.
#[derive(Debug, Default)]
pub struct Command {
    pub argv: Vec<String>,
    pub inputs: Vec<(PathBuf, Vec<u8>)>,
    /// Per-request figures it writes (ab's -g file, h2load's --log-file), read back by
    /// `parse` and removed after.
    pub aux: Option<PathBuf>,
}

/// A generator set up for one suite load (its protocol's settings in hand).
pub trait Generator {
    /// Its name, as a suite load's `generator` gives it and the result's config says.
    fn name(&self) -> &'static str;
    /// Why it cannot do `ask` (completing "wrk ..."), or None when it can.
    fn refuses(&self, ask: Ask) -> Option<&'static str>;
    /// Why it cannot run the load's protocol settings (its block), completing
    /// "wrk ..."; None when it can. Refused when the suite file is read.
    fn refuses_settings(&self) -> Option<&'static str> {
        None
    }
    /// Its command line for point `p`; the files of the run are `{prefix}.EXT`.
    fn command(&self, p: &SuitePoint<'_>, prefix: &Path) -> Command;
    /// What it printed (stdout and stderr together) and its `aux` file, read into the
    /// shared shape; Err: one sentence.
    fn parse(
        &self,
        output: &str,
        aux: Option<&str>,
        p: &SuitePoint<'_>,
    ) -> Result<ExternalRun, String>;
}

/// `{prefix}{ext}`: a file of one generator run.
pub fn with_ext(prefix: &Path, ext: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

/// Whether a tool's own counts add up, each parser checking the identity its tool
/// prints (sent = ok + errors + in flight, in that tool's terms).
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Accounting {
    /// The tool does not print what the check needs.
    #[default]
    NotCheckable,
    Holds,
    /// They do not add up: the sentence says which counts disagree.
    Broken(String),
}

impl Accounting {
    /// Holds when `whole` = `parts`, else Broken with `what` and both sides.
    pub fn check(whole: u64, parts: u64, what: &str) -> Accounting {
        if whole == parts {
            Accounting::Holds
        } else {
            Accounting::Broken(format!("{what}: {whole} != {parts}"))
        }
    }

    pub fn holds(&self) -> Option<bool> {
        match self {
            Accounting::NotCheckable => None,
            Accounting::Holds => Some(true),
            Accounting::Broken(_) => Some(false),
        }
    }
}

/// What a generator's run measured, in one shape whatever the tool.
#[derive(Debug, Default)]
pub struct ExternalRun {
    pub tool: &'static str,
    pub elapsed_s: f64,
    /// Responses with a 2xx status.
    pub ok: u64,
    /// Failed requests by kind (names as in the JSON: lowercase, underscores).
    pub errors: BTreeMap<String, u64>,
    /// Failed connection attempts.
    pub connect_errors: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// What `bytes_sent` counts, when not the request bodies (the result's
    /// `config.bytes_sent_counts`): a tool that reports no bytes says so.
    pub bytes_sent_counts: Option<&'static str>,
    pub latency: Latency,
    /// Smallest latency step the tool can tell apart, microseconds.
    pub resolution_us: u64,
    /// Whether the tool's own counts add up.
    pub accounting: Accounting,
    /// What one counted item is, when not an answered request (gRPC: calls answered OK).
    pub unit: Option<Unit>,
    /// The protocol's own result blocks, as its own load writes them (gRPC's
    /// `grpc_status`), by name.
    pub blocks: BTreeMap<String, serde_json::Value>,
}

impl ExternalRun {
    pub fn add_error(&mut self, kind: &str, n: u64) {
        if n > 0 {
            *self.errors.entry(kind.to_string()).or_insert(0) += n;
        }
    }

    pub fn request_errors(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// Finds the first whitespace-separated number after `key` on a line starting with it.
pub fn field_after(text: &str, key: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix(key)?;
        rest.split_whitespace().next()?.parse::<f64>().ok()
    })
}
