//! Arbitrary bytes as echo replies: the frame check and the echo client's decoder must
//! not panic, must never claim more bytes than they were given, and a frame the encoder
//! wrote must check as a match (round trip), with every prefix of it incomplete.
//! Run: `cargo +nightly fuzz run echo_frames`.

use crate::engine::session::{ClientSession, Decode, InFlight, Lane, SessionFactory, Verdict};
use crate::proto::echo::client::EchoFactory;
use crate::proto::echo::codec::{check, encode, pattern, Check, Expected, HEADER_LEN};

/// Largest payload the target uses: the pattern must cover it (as the factory's does).
const MAX: usize = 4096;

fn be64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    let n = b.len().min(8);
    a[..n].copy_from_slice(&b[..n]);
    u64::from_be_bytes(a)
}

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    let pat = pattern(MAX);
    // What the receiver expects comes from the input's first frame header, so the
    // fuzzer reaches the payload comparison instead of stopping at the length.
    let declared = data
        .get(..4)
        .map(|b| u32::from_be_bytes(b.try_into().unwrap()) as usize)
        .unwrap_or(0);
    let payload_len = declared.saturating_sub(HEADER_LEN - 4).min(MAX);
    let mut exp = Expected {
        conn_id: be64(data.get(4..12).unwrap_or(&[])),
        seq: be64(data.get(12..20).unwrap_or(&[])),
        sent_ns: be64(data.get(20..28).unwrap_or(&[])),
        payload_len,
    };

    // Back-to-back frames, as a pipelined connection receives them.
    let mut at = 0;
    while at < data.len() {
        match check(&data[at..], &exp, &pat) {
            Check::Match { len } | Check::Mismatch { len } => {
                assert!(len >= HEADER_LEN && len <= data.len() - at, "len {len}");
                at += len;
                exp.seq = exp.seq.wrapping_add(1);
            }
            Check::Incomplete | Check::BadLength | Check::TooLarge => break,
        }
    }

    // Round trip: the encoder's frame matches, every prefix of it is incomplete, and
    // trailing input bytes are left alone.
    let mut out = Vec::new();
    encode(
        &mut out,
        exp.conn_id,
        exp.seq,
        exp.sent_ns,
        payload_len,
        &pat,
    );
    assert_eq!(out.len(), HEADER_LEN + payload_len);
    for cut in [0, 3, 4, HEADER_LEN - 1, out.len() - 1] {
        if cut < out.len() {
            assert_eq!(
                check(&out[..cut], &exp, &pat),
                Check::Incomplete,
                "cut {cut}"
            );
        }
    }
    let whole = out.len();
    out.extend_from_slice(data);
    assert_eq!(check(&out, &exp, &pat), Check::Match { len: whole });

    // The client as the engine drives it: the tag is the payload length it encoded.
    let factory = EchoFactory::new(0, MAX);
    let mut client = factory.session(exp.conn_id);
    let req = InFlight {
        seq: exp.seq,
        intended_ns: exp.sent_ns,
        sent_ns: exp.sent_ns,
        tag: payload_len as u32,
        lane: Lane::ANY,
        measured: true,
        on_write: false,
    };
    match client.decode(data, Some(&req), &mut Vec::new(), &mut ()) {
        Decode::Incomplete | Decode::Fail { .. } => {}
        Decode::Consumed { used } | Decode::Event { used } => {
            assert!(used <= data.len(), "consumed {used}")
        }
        Decode::Reply { used, verdict, .. } => {
            assert!(used <= data.len());
            if used == 0 {
                assert!(matches!(verdict, Verdict::Fatal(_)), "{verdict:?}");
            }
        }
    }
}
