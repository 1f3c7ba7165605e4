//! Arbitrary bytes into the HTTP server handler (`serve http`), as the server runtime
//! feeds them: whole, then again split in two with unconsumed bytes carried over. It
//! must not panic, never consume more than it was given, and answer the same number of
//! requests however the bytes arrive (unless it closed the connection).
//! Run: `cargo +nightly fuzz run http_request`.

use crate::proto::http::server::{HttpHandlerFactory, Limits};
use crate::server::session::{Reply, ServerFactory, ServerSession};

/// Small limits, so the fuzzer reaches the 413 and 431 paths with small inputs.
const LIMITS: Limits = Limits {
    max_head: 1024,
    max_body: 2048,
    max_streams: 100,
    window_timeout_ms: 10_000,
};

/// Requests answered and whether the handler closed, feeding `pieces` one after another.
fn serve(f: &HttpHandlerFactory, pieces: &[&[u8]]) -> (u64, bool) {
    let mut h = f.session();
    let mut carry: Vec<u8> = Vec::new();
    let mut requests = 0;
    for piece in pieces {
        carry.extend_from_slice(piece);
        // `More`: the handler stopped after a batch of replies; the runtime calls it
        // again on the rest before reading more.
        loop {
            let mut out = Vec::new();
            let reply = h.on_bytes(&carry, &mut out, &mut Default::default());
            requests += h.take_requests();
            match reply {
                Reply::Consumed(n) => {
                    assert!(n <= carry.len(), "consumed {n} of {}", carry.len());
                    carry.drain(..n);
                    break;
                }
                Reply::More(n) => {
                    assert!(n <= carry.len(), "consumed {n} of {}", carry.len());
                    assert!(!out.is_empty(), "More without replies");
                    carry.drain(..n);
                    if carry.is_empty() {
                        break;
                    }
                }
                Reply::Close | Reply::TooLarge => {
                    assert!(!out.is_empty(), "a close without a response");
                    return (requests, true);
                }
                Reply::Reflect(_) => panic!("http never reflects raw input"),
            }
        }
    }
    (requests, false)
}

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    let f = HttpHandlerFactory::new(LIMITS);
    let (whole, whole_closed) = serve(&f, &[data]);
    let cut = data
        .last()
        .map(|&b| b as usize % (data.len() + 1))
        .unwrap_or(0);
    let (split, split_closed) = serve(&f, &[&data[..cut], &data[cut..]]);
    if !whole_closed && !split_closed {
        assert_eq!(whole, split, "requests answered whole vs split at {cut}");
    }
}
