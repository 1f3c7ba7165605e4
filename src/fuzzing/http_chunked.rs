//! Arbitrary bytes as a chunked body (RFC 9112 7.1), decoded incrementally as the HTTP
//! client and server do. It must not panic, `Done(n)` must not pass the input, the
//! data handed out must never exceed what arrived, and the outcome and data must be the
//! same whether the body arrives whole or in pieces.
//! Run: `cargo +nightly fuzz run http_chunked`.

use crate::proto::http::chunked::{Chunked, Step};

/// Decodes `data` fed as growing prefixes ending at each of `cuts`, then whole.
fn decode(data: &[u8], cuts: &[usize]) -> (Step, Vec<u8>) {
    let mut c = Chunked::default();
    let mut out = Vec::new();
    for &cut in cuts.iter().chain(std::iter::once(&data.len())) {
        let cut = cut.min(data.len());
        let step = c.advance(&data[..cut], |p| out.extend_from_slice(p));
        assert!(out.len() <= cut);
        assert_eq!(c.data_len, out.len() as u64);
        match step {
            Step::Incomplete => {}
            Step::Done(n) => {
                assert!(n <= cut, "done at {n} of {cut}");
                return (step, out);
            }
            Step::Invalid(_) | Step::TooLarge(_) => return (step, out),
        }
    }
    (Step::Incomplete, out)
}

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    let whole = decode(data, &[]);
    let n = data.len();
    let pieces = decode(data, &[n / 3, n / 2, 2 * n / 3]);
    // Data handed out before an error may differ (an error stops early); the verdict
    // and, when it succeeds, the data may not.
    match (&whole.0, &pieces.0) {
        (Step::Invalid(_), Step::Invalid(_)) | (Step::TooLarge(_), Step::TooLarge(_)) => {}
        _ => assert_eq!(whole, pieces, "whole vs in pieces"),
    }
}
