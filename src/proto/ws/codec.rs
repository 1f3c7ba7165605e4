//! RFC 6455 frames, pure functions only: the header parsed from the first bytes
//! (`Incomplete` until it is whole, `TooLarge` as soon as its length field says more
//! than the caller's cap, so nothing waits for a 2^63-byte payload), headers written,
//! payloads masked in place, close codes judged.
//!
//! ```text
//! FIN RSV1-3 opcode(4) | MASK len(7) | [len 16 or 64 bits] | [mask key 4] | payload
//! ```

/// Opcodes (RFC 6455 5.2).
pub const CONTINUATION: u8 = 0x0;
pub const TEXT: u8 = 0x1;
pub const BINARY: u8 = 0x2;
pub const CLOSE: u8 = 0x8;
pub const PING: u8 = 0x9;
pub const PONG: u8 = 0xA;

/// A control frame's payload is at most this (RFC 6455 5.5).
pub const MAX_CONTROL: usize = 125;
/// The longest frame header: 2 + 8 (64-bit length) + 4 (mask key).
pub const MAX_HEADER: usize = 14;
/// Largest message either side accepts unless told otherwise (`--max-message`), and the
/// largest a load sends: a frame or a reassembled message past it is `too_large`.
pub const MAX_MESSAGE: usize = 16 << 20;

/// A frame header, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub fin: bool,
    /// RSV1-3 as the low three bits: no extension is negotiated, so any set bit is an error.
    pub rsv: u8,
    pub opcode: u8,
    /// The masking key, when the frame is masked (client to server frames must be).
    pub mask: Option<[u8; 4]>,
    /// Bytes of header before the payload.
    pub header_len: usize,
    pub payload_len: usize,
}

impl Header {
    /// Header plus payload.
    #[inline]
    pub fn frame_len(&self) -> usize {
        self.header_len + self.payload_len
    }

    #[inline]
    pub fn is_control(&self) -> bool {
        self.opcode & 0x8 != 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// Not a whole header yet.
    Incomplete,
    /// A whole header (the payload may still be coming).
    Header(Header),
    /// The length field says more than the cap (2^63 and up included): refused before
    /// a byte of the payload is awaited.
    TooLarge,
}

/// Parses the frame header at the start of `input`; payloads longer than `cap` are
/// `TooLarge`.
#[inline]
pub fn parse_header(input: &[u8], cap: usize) -> Parsed {
    if input.len() < 2 {
        return Parsed::Incomplete;
    }
    let (b0, b1) = (input[0], input[1]);
    let masked = b1 & 0x80 != 0;
    let (len, mut at) = match b1 & 0x7f {
        126 => {
            if input.len() < 4 {
                return Parsed::Incomplete;
            }
            (u64::from(u16::from_be_bytes([input[2], input[3]])), 4)
        }
        127 => {
            if input.len() < 10 {
                return Parsed::Incomplete;
            }
            let mut b = [0u8; 8];
            b.copy_from_slice(&input[2..10]);
            (u64::from_be_bytes(b), 10)
        }
        n => (u64::from(n), 2),
    };
    // Checked before the mask key arrives: a hostile length never makes anyone wait.
    if len > cap as u64 {
        return Parsed::TooLarge;
    }
    let mask = if masked {
        if input.len() < at + 4 {
            return Parsed::Incomplete;
        }
        let k = [input[at], input[at + 1], input[at + 2], input[at + 3]];
        at += 4;
        Some(k)
    } else {
        None
    };
    Parsed::Header(Header {
        fin: b0 & 0x80 != 0,
        rsv: (b0 >> 4) & 0x7,
        opcode: b0 & 0x0f,
        mask,
        header_len: at,
        payload_len: len as usize,
    })
}

/// Appends a frame header (FIN set when `fin`; masked with `mask` when given).
#[inline]
pub fn write_header(out: &mut Vec<u8>, fin: bool, opcode: u8, mask: Option<[u8; 4]>, len: usize) {
    let mut h = [0u8; MAX_HEADER];
    h[0] = (u8::from(fin) << 7) | (opcode & 0x0f);
    let m = if mask.is_some() { 0x80 } else { 0 };
    let mut at = if len < 126 {
        h[1] = m | len as u8;
        2
    } else if len <= 0xffff {
        h[1] = m | 126;
        h[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        4
    } else {
        h[1] = m | 127;
        h[2..10].copy_from_slice(&(len as u64).to_be_bytes());
        10
    };
    if let Some(k) = mask {
        h[at..at + 4].copy_from_slice(&k);
        at += 4;
    }
    out.extend_from_slice(&h[..at]);
}

/// XORs `buf` with the masking key, the first byte of `buf` being payload byte 0 of
/// its frame (masking and unmasking are the same operation). Eight bytes at a time:
/// this runs over every payload byte either side sends.
#[inline]
pub fn apply_mask(buf: &mut [u8], key: [u8; 4]) {
    // The key repeated twice, in byte order: one 8-byte XOR covers two repetitions.
    let mut kb = [0u8; 8];
    kb[..4].copy_from_slice(&key);
    kb[4..].copy_from_slice(&key);
    let k64 = u64::from_ne_bytes(kb);
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        c.copy_from_slice(&(u64::from_ne_bytes(w) ^ k64).to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= key[i & 3];
    }
}

/// A close frame's status code may be sent on the wire (RFC 6455 7.4): 1000-1003,
/// 1007-1011 (1012-1014 as registered since), 3000-4999. 1004-1006, 1015 and the rest
/// of 0-2999 are not.
#[inline]
pub fn close_code_valid(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

/// What a close frame's payload says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseBody {
    /// No status code (an empty payload).
    NoCode,
    /// A valid code with a UTF-8 reason.
    Code(u16),
    /// A one-byte payload, a code that may not be sent, or a reason that is not UTF-8:
    /// answered with this close code (1002 or 1007).
    Invalid(u16),
}

pub fn close_body(payload: &[u8]) -> CloseBody {
    match payload {
        [] => CloseBody::NoCode,
        [_] => CloseBody::Invalid(1002),
        [a, b, reason @ ..] => {
            let code = u16::from_be_bytes([*a, *b]);
            if !close_code_valid(code) {
                CloseBody::Invalid(1002)
            } else if std::str::from_utf8(reason).is_err() {
                CloseBody::Invalid(1007)
            } else {
                CloseBody::Code(code)
            }
        }
    }
}

/// Appends a whole close frame with `code` (masked with `mask` when given).
pub fn write_close(out: &mut Vec<u8>, code: u16, mask: Option<[u8; 4]>) {
    write_header(out, true, CLOSE, mask, 2);
    let at = out.len();
    out.extend_from_slice(&code.to_be_bytes());
    if let Some(k) = mask {
        apply_mask(&mut out[at..], k);
    }
}

/// Appends a control frame (a pong, a ping) carrying `payload` (at most 125 bytes,
/// already unmasked), masked with `mask` when given.
pub fn write_control(out: &mut Vec<u8>, opcode: u8, payload: &[u8], mask: Option<[u8; 4]>) {
    let payload = &payload[..payload.len().min(MAX_CONTROL)];
    write_header(out, true, opcode, mask, payload.len());
    let at = out.len();
    out.extend_from_slice(payload);
    if let Some(k) = mask {
        apply_mask(&mut out[at..], k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(input: &[u8]) -> Header {
        match parse_header(input, MAX_MESSAGE) {
            Parsed::Header(h) => h,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rfc_examples_parse_and_unmask() {
        // RFC 6455 5.7: a single-frame masked text message "Hello".
        let mut f = vec![
            0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
        ];
        let h = header(&f);
        assert_eq!(
            h,
            Header {
                fin: true,
                rsv: 0,
                opcode: TEXT,
                mask: Some([0x37, 0xfa, 0x21, 0x3d]),
                header_len: 6,
                payload_len: 5
            }
        );
        apply_mask(&mut f[6..], [0x37, 0xfa, 0x21, 0x3d]);
        assert_eq!(&f[6..], b"Hello");
        // Unmasked "Hel" as the first fragment, then "lo".
        assert!(!header(&[0x01, 0x03]).fin);
        assert_eq!(header(&[0x80, 0x02]).opcode, CONTINUATION);
    }

    #[test]
    fn written_headers_parse_back_at_every_length_form() {
        for len in [0, 1, 125, 126, 127, 65535, 65536, 1 << 20] {
            for mask in [None, Some([1, 2, 3, 4])] {
                let mut out = Vec::new();
                write_header(&mut out, len % 2 == 0, BINARY, mask, len);
                let h = header(&out);
                assert_eq!(
                    (h.payload_len, h.header_len, h.mask, h.opcode),
                    (len, out.len(), mask, BINARY),
                    "len {len}"
                );
                for cut in 0..out.len() {
                    assert_eq!(parse_header(&out[..cut], MAX_MESSAGE), Parsed::Incomplete);
                }
            }
        }
    }

    #[test]
    fn a_2_pow_63_length_is_too_large_before_its_mask_key() {
        let mut f = vec![0x82, 0xff];
        f.extend_from_slice(&(1u64 << 63).to_be_bytes());
        assert_eq!(parse_header(&f, MAX_MESSAGE), Parsed::TooLarge);
        let mut f = vec![0x82, 0x7f];
        f.extend_from_slice(&u64::MAX.to_be_bytes());
        assert_eq!(parse_header(&f, MAX_MESSAGE), Parsed::TooLarge);
        // Just over the cap, just at it.
        let mut out = Vec::new();
        write_header(&mut out, true, BINARY, None, 101);
        assert_eq!(parse_header(&out, 100), Parsed::TooLarge);
        assert!(matches!(parse_header(&out, 101), Parsed::Header(_)));
    }

    #[test]
    fn masking_is_its_own_inverse_at_every_length() {
        for len in 0..40 {
            let orig: Vec<u8> = (0..len as u8).collect();
            let mut b = orig.clone();
            apply_mask(&mut b, [0xde, 0xad, 0xbe, 0xef]);
            for (i, (x, y)) in b.iter().zip(&orig).enumerate() {
                assert_eq!(*x, y ^ [0xde, 0xad, 0xbe, 0xef][i % 4]);
            }
            apply_mask(&mut b, [0xde, 0xad, 0xbe, 0xef]);
            assert_eq!(b, orig);
        }
    }

    #[test]
    fn close_codes() {
        assert_eq!(close_body(&[]), CloseBody::NoCode);
        assert_eq!(close_body(&[3]), CloseBody::Invalid(1002));
        assert_eq!(close_body(&1000u16.to_be_bytes()), CloseBody::Code(1000));
        assert_eq!(close_body(&4999u16.to_be_bytes()), CloseBody::Code(4999));
        for bad in [0u16, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] {
            assert_eq!(
                close_body(&bad.to_be_bytes()),
                CloseBody::Invalid(1002),
                "{bad}"
            );
        }
        assert_eq!(close_body(&[0x03, 0xe8, 0xff]), CloseBody::Invalid(1007));
        let mut out = Vec::new();
        write_close(&mut out, 1000, None);
        assert_eq!(out, [0x88, 0x02, 0x03, 0xe8]);
    }
}
