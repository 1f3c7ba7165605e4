//! Arbitrary bytes as HTTP responses into the client's incremental parser: pipelined
//! responses back to back, whole and fed in two pieces, then the connection closing.
//! It must not panic, `used` must never pass the input, and the body handed to the
//! sink must be the same bytes and the same result however the input arrives.
//! Run: `cargo +nightly fuzz run http_response`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench::proto::http::response::{Parsed, ResponseParser};

/// Every response in `data` (at most 16), with its body, feeding each response's bytes
/// first up to `cut` and then whole; the result that ended the stream last.
fn parse_all(data: &[u8], head: bool, cut: usize) -> (Vec<(Parsed, Vec<u8>)>, Parsed) {
    let mut p = ResponseParser::default();
    let mut at = 0;
    let mut done = Vec::new();
    for _ in 0..16 {
        let mut body = Vec::new();
        let limit = cut.clamp(at, data.len());
        let mut r = p.parse(&data[at..limit], head, |b| body.extend_from_slice(b));
        if r == Parsed::Incomplete {
            r = p.parse(&data[at..], head, |b| body.extend_from_slice(b));
        }
        if r == Parsed::Incomplete {
            r = p.parse_at_close(&data[at..], |b| body.extend_from_slice(b));
        }
        match r {
            Parsed::Done { used, .. } => {
                assert!(
                    used <= data.len() - at,
                    "used {used} of {}",
                    data.len() - at
                );
                done.push((r, body));
                if used == 0 {
                    return (done, r);
                }
                at += used;
                p.reset();
            }
            other => return (done, other),
        }
    }
    (done, Parsed::Incomplete)
}

fuzz_target!(|data: &[u8]| {
    let (head, data) = match data.split_first() {
        Some((&flags, rest)) => (flags & 1 == 1, rest),
        None => (false, data),
    };
    let whole = parse_all(data, head, data.len());
    let cut = data.len() / 2;
    let split = parse_all(data, head, cut);
    assert_eq!(whole, split, "whole vs split at {cut}");
});
