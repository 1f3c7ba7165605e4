//! The external generators that drive HTTP loads in a suite, each a
//! `proto::generator::Generator` set up with the load's settings (`HttpSuite`): wrk,
//! ab and h2load (`--h1`), their command lines and the parsers of what they print.

pub mod ab;
pub mod h2load;
pub mod wrk;

use std::time::Duration;

/// A duration in whole seconds, at least 1: what these tools take.
fn whole_secs(d: Duration) -> u64 {
    d.as_secs_f64().ceil().max(1.0) as u64
}

/// Refused by every one of them: none has a constant-rate mode.
const NO_RATE: &str = "has no constant-rate mode (use generator = \"wirebench\")";
/// Refused by wrk and ab.
const NO_PIPELINE: &str = "does not pipeline requests (h2load and wirebench do)";
