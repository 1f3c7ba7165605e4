//! Arbitrary bytes as the WebSocket upgrade (RFC 6455 4), both ways. The first byte
//! says whether a subprotocol ("chat") is offered and served (bit 0); the rest is
//! - a client's upgrade request, into `serve ws`'s handshake (`answer_request`): it
//!   never claims more than it was given, writes an answer exactly when it decides
//!   (a 101 for an upgrade, a refusal otherwise), and decides the same on the head
//!   alone as on the head with frames behind it;
//! - a server's answer, into the load client's opening exchange as the engine drives
//!   it, with `{ACCEPT}` standing for the accept key of the key the client sent (so
//!   the fuzzer reaches past the key check): it never claims more than it was given,
//!   and an upgrade reads the same from the head alone.
//!
//! Run: `cargo +nightly fuzz run ws_handshake`.

use crate::engine::session::{ClientSession, SessionFactory, Setup};
use crate::proto::ws::client::{Shared, WsFactory};
use crate::proto::ws::handshake::{accept_key, answer_request, check_answer, Answer, Request};
use std::sync::Arc;

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    let Some((&flags, data)) = data.split_first() else {
        return;
    };
    let protocol = (flags & 1 == 1).then_some("chat");
    server_side(data, protocol);
    client_side(data, protocol);
}

/// `input` as a client's upgrade request.
fn server_side(input: &[u8], protocol: Option<&str>) {
    let mut out = Vec::new();
    match answer_request(input, &mut out, protocol) {
        Request::Incomplete => assert!(out.is_empty(), "an answer before the head is whole"),
        Request::Upgraded { used } => {
            assert!(used <= input.len(), "used {used} of {}", input.len());
            assert!(out.starts_with(b"HTTP/1.1 101 "), "{out:?}");
            let mut alone = Vec::new();
            assert_eq!(
                answer_request(&input[..used], &mut alone, protocol),
                Request::Upgraded { used }
            );
            assert_eq!(alone, out, "the head alone answered otherwise");
        }
        Request::TooLarge | Request::Bad => {
            assert!(out.starts_with(b"HTTP/1.1 4"), "{out:?}")
        }
    }
}

/// `input` as the server's answer to a load client's upgrade request.
fn client_side(input: &[u8], protocol: Option<&str>) {
    let factory = WsFactory(Arc::new(Shared::new(
        "h:1".into(),
        "/".into(),
        protocol.map(String::from),
        (8, 8),
        1,
        false,
    )));
    let mut c = factory.session(1);
    let (mut request, mut figures, mut count) =
        (Vec::new(), Default::default(), Default::default());
    assert_eq!(
        c.open(&[], &mut request, &mut figures, &mut count),
        Setup::Continue { used: 0 }
    );
    let key = key_sent(&request);
    let answer = replace(input, b"{ACCEPT}", accept_key(&key).as_bytes());
    let mut out = Vec::new();
    match c.open(&answer, &mut out, &mut figures, &mut count) {
        Setup::Done { used } => {
            assert!(used <= answer.len(), "used {used} of {}", answer.len());
            assert_eq!(
                check_answer(&answer[..used], &key, protocol),
                Answer::Upgraded { used }
            );
        }
        Setup::Continue { used } | Setup::Event { used } => {
            assert!(used <= answer.len(), "used {used} of {}", answer.len())
        }
        Setup::Failed { detail, .. } => assert!(!detail.contains('\n'), "{detail:?}"),
    }
}

/// The `Sec-WebSocket-Key` of the request the client wrote.
fn key_sent(request: &[u8]) -> String {
    let text = std::str::from_utf8(request).expect("the client writes text");
    text.lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .expect("the client sends a key")
        .trim()
        .to_string()
}

/// `input` with every `what` replaced by `with`.
fn replace(input: &[u8], what: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut at = 0;
    while at < input.len() {
        if input[at..].starts_with(what) {
            out.extend_from_slice(with);
            at += what.len();
        } else {
            out.push(input[at]);
            at += 1;
        }
    }
    out
}
