//! gRPC's status codes (grpc/doc/statuscodes.md) by name, and the calls a run
//! counted under each: the result's `grpc_status` block.

use crate::stats::Figures;
use std::collections::BTreeMap;

/// The codes 0 to 16, by their names.
pub const NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

pub const OK: u16 = 0;
pub const UNKNOWN: u16 = 2;
pub const RESOURCE_EXHAUSTED: u16 = 8;
pub const INTERNAL: u16 = 13;
/// A code past 16 counts here (the name `OTHER`).
pub const OTHER: u16 = 17;

/// A code's name; `OTHER` past 16.
pub fn name(code: u16) -> &'static str {
    NAMES.get(code as usize).copied().unwrap_or("OTHER")
}

/// A `grpc-status` value: 1 to 3 digits, else `OTHER`.
pub fn parse(value: &[u8]) -> u16 {
    if value.is_empty() || value.len() > 3 || !value.iter().all(u8::is_ascii_digit) {
        return OTHER;
    }
    let n = value.iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    n.min(OTHER)
}

/// The code a response without `grpc-status` gets from its HTTP status
/// (grpc/doc/http-grpc-status-mapping.md); 200 without one is `INTERNAL`.
pub fn of_http(status: u16) -> u16 {
    match status {
        400 => INTERNAL,
        401 => 16,
        403 => 7,
        404 => 12,
        429 | 502..=504 => 14,
        200 => INTERNAL,
        _ => UNKNOWN,
    }
}

/// Calls answered, by status code (index 17: codes past 16).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatusCodes(pub [u64; 18]);

impl StatusCodes {
    #[inline]
    pub fn count(&mut self, code: u16) {
        self.0[(code.min(OTHER)) as usize] += 1;
    }

    pub fn of(&self, code: u16) -> u64 {
        self.0[(code.min(OTHER)) as usize]
    }

    /// Each code seen, by name: the result's block.
    pub fn by_name(&self) -> BTreeMap<&'static str, u64> {
        (0..=OTHER)
            .filter(|c| self.of(*c) > 0)
            .map(|c| (name(c), self.of(c)))
            .collect()
    }
}

impl Figures for StatusCodes {
    fn merge(&mut self, other: &Self) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_by_their_digits_and_name_past_16_as_other() {
        assert_eq!(parse(b"0"), OK);
        assert_eq!(parse(b"14"), 14);
        assert_eq!(name(parse(b"14")), "UNAVAILABLE");
        assert_eq!(parse(b"99"), OTHER);
        assert_eq!(parse(b""), OTHER);
        assert_eq!(parse(b"1x"), OTHER);
        assert_eq!(name(OTHER), "OTHER");
        assert_eq!(of_http(503), 14);
    }

    #[test]
    fn counts_merge_exactly_and_name_only_the_codes_seen() {
        let mut a = StatusCodes::default();
        a.count(0);
        a.count(4);
        let mut b = StatusCodes::default();
        b.count(4);
        b.count(40);
        a.merge(&b);
        let m = a.by_name();
        assert_eq!(m.len(), 3);
        assert_eq!(m["OK"], 1);
        assert_eq!(m["DEADLINE_EXCEEDED"], 2);
        assert_eq!(m["OTHER"], 1);
    }
}
