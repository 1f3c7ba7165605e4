//! Arbitrary bytes as HTTP responses into the client's incremental parser, driven as
//! the engine drives it: pipelined responses back to back, the bytes arriving whole or
//! in two pieces, `Consumed` bytes dropped as they are handed back, then the connection
//! closing. It must not panic, never consume or use more than it was given, and the
//! responses (status, close, body bytes), the verdict that ends the stream and the
//! bytes consumed must be the same however the input arrives.
//! Run: `cargo +nightly fuzz run http_response`.

use crate::proto::http::response::{Parsed, ResponseParser};

/// One finished response: status, whether the connection closes after it, its body.
type Response = (u16, bool, Vec<u8>);

/// How the stream ended: the parser's last word (Done's `used` left out: it counts
/// from the last consumed byte, which depends on how the bytes arrived).
#[derive(Debug, PartialEq)]
enum End {
    Incomplete,
    Invalid(&'static str),
    TooLarge(&'static str),
    Enough,
}

/// Parses `data` with only its first `cut` bytes available at first, then all of it,
/// then the close; at most 16 responses. Returns the responses, the end and the bytes
/// the parser consumed or used.
fn parse_all(data: &[u8], head: bool, cut: usize) -> (Vec<Response>, End, usize) {
    let mut p = ResponseParser::default();
    let mut at = 0;
    let mut limit = cut.min(data.len());
    let mut closed = false;
    let mut done = Vec::new();
    let mut body = Vec::new();
    // Each round consumes bytes, finishes a response or moves `limit`/`closed` on,
    // so this bound is never reached by a correct parser.
    for _ in 0..data.len() * 2 + 64 {
        let avail = &data[at..limit];
        let r = if closed {
            p.parse_at_close(avail, |_, b| body.extend_from_slice(b))
        } else {
            p.parse(avail, head, |_, b| body.extend_from_slice(b))
        };
        match r {
            Parsed::Consumed(n) => {
                assert!(n > 0 && n <= avail.len(), "consumed {n} of {}", avail.len());
                at += n;
            }
            Parsed::Done {
                used,
                status,
                close,
            } => {
                assert!(used <= avail.len(), "used {used} of {}", avail.len());
                at += used;
                done.push((status, close, std::mem::take(&mut body)));
                p.reset();
                if used == 0 || done.len() == 16 || closed {
                    return (done, End::Enough, at);
                }
            }
            Parsed::Incomplete if limit < data.len() => limit = data.len(),
            Parsed::Incomplete if !closed => closed = true,
            Parsed::Incomplete => return (done, End::Incomplete, at),
            Parsed::Invalid(why) => return (done, End::Invalid(why), at),
            Parsed::TooLarge(why) => return (done, End::TooLarge(why), at),
        }
    }
    panic!("the parser made no progress");
}

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    let (head, data) = match data.split_first() {
        Some((&flags, rest)) => (flags & 1 == 1, rest),
        None => (false, data),
    };
    let whole = parse_all(data, head, data.len());
    let cut = data.len() / 2;
    let split = parse_all(data, head, cut);
    assert_eq!(whole, split, "whole vs split at {cut}");
}
