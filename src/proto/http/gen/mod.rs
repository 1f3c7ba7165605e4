//! The external generators that drive HTTP loads in a suite, each a
//! `proto::generator::Generator` set up with the load's settings (`HttpSuite`): wrk,
//! ab and h2load (`--h1`, or h2c for a load of `version = "2"`), their command lines and
//! the parsers of what they print.

pub mod ab;
pub mod h2load;
pub mod wrk;

use super::suite_settings::{HttpSuite, Version};
use std::time::Duration;

/// A duration in whole seconds, at least 1: what these tools take.
fn whole_secs(d: Duration) -> u64 {
    d.as_secs_f64().ceil().max(1.0) as u64
}

/// Refused by every one of them: none has a constant-rate mode.
const NO_RATE: &str = "has no constant-rate mode (use generator = \"wirebench\")";
/// Refused by wrk and ab.
const NO_PIPELINE: &str = "does not pipeline requests (h2load and wirebench do)";

/// Refused by wrk and ab for a load of `version = "2"`.
fn h1_only(s: &HttpSuite) -> Option<&'static str> {
    (s.version == Version::H2)
        .then_some("speaks only HTTP/1.1 (version = \"2\" runs on wirebench or h2load)")
}
