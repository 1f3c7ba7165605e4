//! The echo frame, pure functions only. Big-endian:
//!
//! ```text
//! u32 length of the rest | u64 connection id | u64 sequence | u64 send time (ns) | payload
//! ```
//!
//! The length comes first so length-prefixed echo servers return frames intact, as
//! byte-echo servers do. The payload is `'a' + (seq + i) % 26`, so a wrong, missing or
//! shifted byte is caught, and a frame from another sequence number does not match.

/// Bytes before the payload.
pub const HEADER_LEN: usize = 28;
/// Bytes counted by the length field besides the payload.
const LENGTH_COVERS: usize = HEADER_LEN - 4;
/// Largest payload accepted on the command line, and the most a reply may announce:
/// a length field past it is `TooLarge` (checked before a byte of the payload is
/// awaited, so a client never holds more than one frame of at most this).
pub const MAX_PAYLOAD: usize = 16 << 20;

/// The payload pattern, long enough to slice any payload at any starting phase.
pub fn pattern(max_payload: usize) -> Vec<u8> {
    (0..max_payload + 26)
        .map(|i| b'a' + (i % 26) as u8)
        .collect()
}

fn payload_of(pattern: &[u8], seq: u64, len: usize) -> &[u8] {
    let start = (seq % 26) as usize;
    &pattern[start..start + len]
}

/// Appends one frame to `out`.
#[inline]
pub fn encode(
    out: &mut Vec<u8>,
    conn_id: u64,
    seq: u64,
    sent_ns: u64,
    payload_len: usize,
    pattern: &[u8],
) {
    let mut header = [0u8; HEADER_LEN];
    header[..4].copy_from_slice(&((LENGTH_COVERS + payload_len) as u32).to_be_bytes());
    header[4..12].copy_from_slice(&conn_id.to_be_bytes());
    header[12..20].copy_from_slice(&seq.to_be_bytes());
    header[20..28].copy_from_slice(&sent_ns.to_be_bytes());
    out.reserve(HEADER_LEN + payload_len);
    out.extend_from_slice(&header);
    out.extend_from_slice(payload_of(pattern, seq, payload_len));
}

/// What the receiver expects the next frame to be.
#[derive(Clone, Copy, Debug)]
pub struct Expected {
    pub conn_id: u64,
    pub seq: u64,
    pub sent_ns: u64,
    pub payload_len: usize,
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Check {
    /// Not a whole frame yet.
    Incomplete,
    /// A whole frame of `len` bytes, equal to what was sent.
    Match { len: usize },
    /// A whole frame of `len` bytes that differs (payload, id, sequence or time).
    Mismatch { len: usize },
    /// The length field is not the one sent: the stream is out of step.
    BadLength,
    /// The length field announces more than `MAX_PAYLOAD`: no frame of ours is that long.
    TooLarge,
}

/// Equal slices of equal length, compared eight bytes at a time inline (payloads are
/// short, so a library call costs more than the comparison). The tail is the last eight
/// bytes, overlapping what was compared: a plain loop over indexes, as the `chunks_exact`
/// and `zip` version cost ~40 instructions more per 36-byte payload (callgrind).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        let mut diff = 0u8;
        for i in 0..n {
            diff |= a[i] ^ b[i];
        }
        return diff == 0;
    }
    let word = |s: &[u8], i: usize| u64::from_ne_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let mut diff = word(a, n - 8) ^ word(b, n - 8);
    let mut i = 0;
    while i + 8 <= n {
        diff |= word(a, i) ^ word(b, i);
        i += 8;
    }
    diff == 0
}

fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b.try_into().expect("8 bytes"))
}

/// Checks the frame at the start of `input` against `exp`.
#[inline]
pub fn check(input: &[u8], exp: &Expected, pattern: &[u8]) -> Check {
    if input.len() < 4 {
        return Check::Incomplete;
    }
    let declared = u32::from_be_bytes(input[..4].try_into().expect("4 bytes")) as usize;
    if declared != LENGTH_COVERS + exp.payload_len {
        return if declared > LENGTH_COVERS + MAX_PAYLOAD {
            Check::TooLarge
        } else {
            Check::BadLength
        };
    }
    let len = 4 + declared;
    if input.len() < len {
        return Check::Incomplete;
    }
    let same = be64(&input[4..12]) == exp.conn_id
        && be64(&input[12..20]) == exp.seq
        && be64(&input[20..28]) == exp.sent_ns
        && same(
            &input[HEADER_LEN..len],
            payload_of(pattern, exp.seq, exp.payload_len),
        );
    if same {
        Check::Match { len }
    } else {
        Check::Mismatch { len }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(seq: u64, payload_len: usize) -> Expected {
        Expected {
            conn_id: 0x0102_0304_0506_0708,
            seq,
            sent_ns: 42,
            payload_len,
        }
    }

    #[test]
    fn exact_bytes() {
        let p = pattern(8);
        let mut out = Vec::new();
        encode(&mut out, 0x0102_0304_0506_0708, 1, 42, 3, &p);
        assert_eq!(
            out,
            [
                0, 0, 0, 27, // length of the rest: 24 + 3
                1, 2, 3, 4, 5, 6, 7, 8, // connection id
                0, 0, 0, 0, 0, 0, 0, 1, // sequence
                0, 0, 0, 0, 0, 0, 0, 42, // send time
                b'b', b'c', b'd', // pattern from phase seq % 26 = 1
            ]
        );
    }

    #[test]
    fn every_split_point_is_incomplete_until_whole() {
        let p = pattern(100);
        let mut out = Vec::new();
        encode(&mut out, exp(5, 100).conn_id, 5, 42, 100, &p);
        for cut in 0..out.len() {
            assert_eq!(
                check(&out[..cut], &exp(5, 100), &p),
                Check::Incomplete,
                "cut {cut}"
            );
        }
        assert_eq!(
            check(&out, &exp(5, 100), &p),
            Check::Match { len: out.len() }
        );
    }

    #[test]
    fn detects_each_kind_of_difference() {
        let p = pattern(10);
        let mut good = Vec::new();
        encode(&mut good, exp(3, 10).conn_id, 3, 42, 10, &p);
        let len = good.len();
        for at in 4..len {
            let mut bad = good.clone();
            bad[at] ^= 0x20;
            assert_eq!(
                check(&bad, &exp(3, 10), &p),
                Check::Mismatch { len },
                "byte {at}"
            );
        }
        // Another sequence number: header and payload phase both differ.
        assert_eq!(check(&good, &exp(4, 10), &p), Check::Mismatch { len });
        assert_eq!(check(&good, &exp(3, 11), &p), Check::BadLength);
        // A length no frame of ours has, announced before any payload arrives.
        let mut huge = good[..4].to_vec();
        huge[..4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(check(&huge, &exp(3, 10), &p), Check::TooLarge);
        let just = ((LENGTH_COVERS + MAX_PAYLOAD) as u32).to_be_bytes();
        assert_eq!(check(&just, &exp(3, 10), &p), Check::BadLength);
    }

    #[test]
    fn same_sees_a_difference_at_every_byte_of_every_length() {
        let a = pattern(64);
        for n in 0..=40 {
            assert!(same(&a[..n], &a[..n]), "length {n}");
            for at in 0..n {
                let mut b = a[..n].to_vec();
                b[at] ^= 1;
                assert!(!same(&a[..n], &b), "length {n}, byte {at}");
            }
        }
        assert!(!same(&a[..9], &a[..10]));
    }

    #[test]
    fn pipelined_frames_parse_back_to_back() {
        let p = pattern(5);
        let mut out = Vec::new();
        for seq in 0..4 {
            encode(&mut out, exp(seq, 5).conn_id, seq, 42, 5, &p);
        }
        let mut at = 0;
        for seq in 0..4 {
            match check(&out[at..], &exp(seq, 5), &p) {
                Check::Match { len } => at += len,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(at, out.len());
    }
}
