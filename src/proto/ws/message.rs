//! What a load's message `seq` of `len` bytes holds, so every echo is checked byte for
//! byte: its first 16 bytes are `seq` in lowercase hex (cut to `len`), the rest the
//! echo pattern from phase `seq % 26`. ASCII only, so a text message is valid UTF-8,
//! and messages with different sequence numbers differ.
//!
//! Pieces (`off`, `len`) are written and checked without the whole message: a
//! fragmented message is built and compared frame by frame, never assembled.

/// Bytes of hex sequence number at the start of a message.
const SEQ_DIGITS: usize = 16;

#[inline]
fn hex_digit(seq: u64, i: usize) -> u8 {
    b"0123456789abcdef"[((seq >> (60 - 4 * i)) & 0xf) as usize]
}

/// Appends bytes `off..off + len` of message `seq`. `pattern`: `echo::codec::pattern`
/// of at least the largest message.
#[inline]
pub fn fill(out: &mut Vec<u8>, seq: u64, off: usize, len: usize, pattern: &[u8]) {
    let end = off + len;
    let mut at = off;
    while at < end.min(SEQ_DIGITS) {
        out.push(hex_digit(seq, at));
        at += 1;
    }
    if at < end {
        let phase = (seq % 26) as usize;
        out.extend_from_slice(&pattern[phase + at..phase + end]);
    }
}

/// Whether `piece` equals bytes `off..off + piece.len()` of message `seq`.
#[inline]
pub fn matches(piece: &[u8], seq: u64, off: usize, pattern: &[u8]) -> bool {
    let end = off + piece.len();
    let mut at = off;
    while at < end.min(SEQ_DIGITS) {
        if piece[at - off] != hex_digit(seq, at) {
            return false;
        }
        at += 1;
    }
    if at >= end {
        return true;
    }
    let phase = (seq % 26) as usize;
    match pattern.get(phase + at..phase + end) {
        Some(want) => piece[at - off..] == *want,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::echo::codec::pattern;

    #[test]
    fn pieces_make_the_whole_and_are_checked() {
        let p = pattern(100);
        let mut whole = Vec::new();
        fill(&mut whole, 0x1234, 0, 40, &p);
        assert_eq!(&whole[..16], b"0000000000001234");
        assert_eq!(whole[16], b'a' + ((0x1234 + 16) % 26) as u8);
        for split in 0..=40 {
            let mut two = Vec::new();
            fill(&mut two, 0x1234, 0, split, &p);
            fill(&mut two, 0x1234, split, 40 - split, &p);
            assert_eq!(two, whole, "split {split}");
            assert!(matches(&whole[..split], 0x1234, 0, &p));
            assert!(matches(&whole[split..], 0x1234, split, &p));
        }
        assert!(!matches(&whole, 0x1235, 0, &p));
        let mut bad = whole.clone();
        bad[30] ^= 1;
        assert!(!matches(&bad, 0x1234, 0, &p));
        // Longer than the pattern allows: not ours.
        assert!(!matches(&[b'a'; 200], 0, 0, &p));
    }
}
