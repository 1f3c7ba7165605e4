//! Chunked transfer coding (RFC 9112 section 7.1), decoded incrementally: the state
//! remembers how far it got, so bytes arriving a few at a time are each looked at once.
//! Used for response bodies by the client and for request bodies by the server.

/// Longest chunk-size or trailer line accepted (extensions included); past it: `TooLarge`.
pub const MAX_LINE: usize = 4096;
/// Most trailer bytes accepted after the last chunk; past it: `TooLarge`.
pub const MAX_TRAILERS: usize = 16 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Expecting a chunk-size line.
    Size,
    /// Inside chunk data with this many bytes left.
    Data(u64),
    /// Expecting the CRLF after chunk data.
    DataEnd,
    /// After the last chunk: trailer lines until an empty one.
    Trailers,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// More bytes are needed.
    Incomplete,
    /// The body ends after this many bytes (counted from the start of the body).
    Done(usize),
    /// Not valid chunked coding.
    Invalid(&'static str),
    /// A line or the trailers went past their cap (`MAX_LINE`, `MAX_TRAILERS`).
    TooLarge(&'static str),
}

#[derive(Clone, Debug)]
pub struct Chunked {
    /// Offset, from the start of the body, of the first byte not yet decoded.
    pos: usize,
    state: State,
    trailer_bytes: usize,
    /// Decoded data bytes so far.
    pub data_len: u64,
}

impl Default for Chunked {
    fn default() -> Self {
        Chunked {
            pos: 0,
            state: State::Size,
            trailer_bytes: 0,
            data_len: 0,
        }
    }
}

/// The line starting at `from` without its CRLF (or bare LF), and the offset after it.
fn line(body: &[u8], from: usize) -> Option<(&[u8], usize)> {
    let rest = &body[from..];
    let lf = rest.iter().position(|&b| b == b'\n')?;
    let l = &rest[..lf];
    let l = l.strip_suffix(b"\r").unwrap_or(l);
    Some((l, from + lf + 1))
}

fn hex_size(l: &[u8]) -> Option<u64> {
    // The size ends at an extension (';') or optional whitespace before one.
    let end = l
        .iter()
        .position(|&b| b == b';' || b == b' ' || b == b'\t')
        .unwrap_or(l.len());
    let digits = &l[..end];
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        let x = (d as char).to_digit(16)?;
        v = v * 16 + u64::from(x);
    }
    Some(v)
}

impl Chunked {
    /// Bytes from the start of the body already decoded: the caller may drop them and
    /// then call `rebase`, so a long body never has to be kept whole.
    #[inline]
    pub fn decoded(&self) -> usize {
        self.pos
    }

    /// The first `decoded()` bytes were dropped: offsets now count from what follows.
    #[inline]
    pub fn rebase(&mut self) {
        self.pos = 0;
    }

    /// Decodes what `body` (everything received from the start of the body) holds
    /// beyond what earlier calls saw; each data byte is handed to `sink` exactly once.
    pub fn advance(&mut self, body: &[u8], mut sink: impl FnMut(&[u8])) -> Step {
        loop {
            match self.state {
                State::Size => {
                    let Some((l, next)) = line(body, self.pos) else {
                        return if body.len() - self.pos > MAX_LINE {
                            Step::TooLarge("a chunk-size line is longer than 4 KiB")
                        } else {
                            Step::Incomplete
                        };
                    };
                    // The same cap when the line arrives whole as when it arrives in
                    // pieces (above), so a stream's fate does not depend on its reads.
                    if next - 1 - self.pos > MAX_LINE {
                        return Step::TooLarge("a chunk-size line is longer than 4 KiB");
                    }
                    let Some(size) = hex_size(l) else {
                        return Step::Invalid("a chunk size is not a hexadecimal number");
                    };
                    self.pos = next;
                    self.state = if size == 0 {
                        State::Trailers
                    } else {
                        State::Data(size)
                    };
                }
                State::Data(left) => {
                    let avail = ((body.len() - self.pos) as u64).min(left) as usize;
                    if avail > 0 {
                        sink(&body[self.pos..self.pos + avail]);
                        self.pos += avail;
                        self.data_len += avail as u64;
                    }
                    if (avail as u64) < left {
                        self.state = State::Data(left - avail as u64);
                        return Step::Incomplete;
                    }
                    self.state = State::DataEnd;
                }
                State::DataEnd => {
                    match body.get(self.pos) {
                        None => return Step::Incomplete,
                        Some(b'\n') => self.pos += 1,
                        Some(b'\r') => match body.get(self.pos + 1) {
                            None => return Step::Incomplete,
                            Some(b'\n') => self.pos += 2,
                            Some(_) => return Step::Invalid("chunk data is not followed by CRLF"),
                        },
                        Some(_) => return Step::Invalid("chunk data is not followed by CRLF"),
                    }
                    self.state = State::Size;
                }
                State::Trailers => {
                    let Some((l, next)) = line(body, self.pos) else {
                        return if body.len() - self.pos > MAX_LINE {
                            Step::TooLarge("a trailer line is longer than 4 KiB")
                        } else {
                            Step::Incomplete
                        };
                    };
                    if next - 1 - self.pos > MAX_LINE {
                        return Step::TooLarge("a trailer line is longer than 4 KiB");
                    }
                    self.trailer_bytes += next - self.pos;
                    self.pos = next;
                    if l.is_empty() {
                        return Step::Done(self.pos);
                    }
                    if self.trailer_bytes > MAX_TRAILERS {
                        return Step::TooLarge("the trailers are longer than 16 KiB");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8]) -> (Step, Vec<u8>) {
        let mut c = Chunked::default();
        let mut data = Vec::new();
        let s = c.advance(input, |p| data.extend_from_slice(p));
        (s, data)
    }

    #[test]
    fn decodes_with_extensions_and_trailers() {
        let body = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\nNEXT";
        let (s, data) = decode_all(body);
        assert_eq!(s, Step::Done(body.len() - 4));
        assert_eq!(data, b"hello world");
    }

    #[test]
    fn every_split_point_gives_the_same_data_once() {
        let body = b"a\r\n0123456789\r\n1F\r\nabcdefghijklmnopqrstuvwxyzABCDE\r\n0\r\n\r\n";
        for cut in 0..body.len() {
            let mut c = Chunked::default();
            let mut data = Vec::new();
            assert_eq!(
                c.advance(&body[..cut], |p| data.extend_from_slice(p)),
                Step::Incomplete,
                "cut {cut}"
            );
            assert_eq!(
                c.advance(body, |p| data.extend_from_slice(p)),
                Step::Done(body.len()),
                "cut {cut}"
            );
            assert_eq!(
                data, b"0123456789abcdefghijklmnopqrstuvwxyzABCDE",
                "cut {cut}"
            );
            assert_eq!(c.data_len, 41);
        }
    }

    #[test]
    fn refuses_bad_coding() {
        assert!(matches!(decode_all(b"zz\r\n").0, Step::Invalid(_)));
        assert!(matches!(decode_all(b"\r\n").0, Step::Invalid(_)));
        assert!(matches!(decode_all(b"2\r\nabX\r\n").0, Step::Invalid(_)));
        assert!(matches!(
            decode_all(b"ffffffffffffffff\r\n").0,
            Step::Invalid(_)
        ));
        let long = vec![b'1'; MAX_LINE + 10];
        assert!(matches!(decode_all(&long).0, Step::TooLarge(_)));
        let mut trailers = b"0\r\n".to_vec();
        for _ in 0..MAX_TRAILERS / 10 + 1 {
            trailers.extend_from_slice(b"X-T: 123\r\n");
        }
        assert!(matches!(decode_all(&trailers).0, Step::TooLarge(_)));
    }

    #[test]
    fn decoded_bytes_can_be_dropped_as_it_goes() {
        // Fed a few bytes at a time, each decoded prefix dropped: same data, same end.
        let body = b"a\r\n0123456789\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n";
        for step in 1..body.len() {
            let mut c = Chunked::default();
            let mut data = Vec::new();
            let mut held: Vec<u8> = Vec::new();
            let mut done = None;
            for piece in body.chunks(step) {
                held.extend_from_slice(piece);
                match c.advance(&held, |p| data.extend_from_slice(p)) {
                    Step::Incomplete => {
                        held.drain(..c.decoded());
                        c.rebase();
                    }
                    Step::Done(n) => done = Some(held.len() - n),
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(done, Some(0), "step {step}");
            assert_eq!(data, b"0123456789abc", "step {step}");
            assert!(held.len() <= MAX_LINE + step, "step {step}");
        }
    }

    /// Found with the fuzz target's whole-versus-pieces check (fuzz/fuzz_targets/
    /// http_chunked.rs): a chunk-size or trailer line past MAX_LINE was refused when it
    /// arrived in pieces but accepted when one read held all of it.
    #[test]
    fn long_lines_are_refused_however_they_arrive() {
        let ext = vec![b'a'; MAX_LINE + 20];
        let mut size_line = b"1;".to_vec();
        size_line.extend_from_slice(&ext);
        size_line.extend_from_slice(b"\r\nX\r\n0\r\n\r\n");
        let mut trailer = b"1\r\nX\r\n0\r\nT: ".to_vec();
        trailer.extend_from_slice(&ext);
        trailer.extend_from_slice(b"\r\n\r\n");
        for (body, why) in [
            (size_line, "a chunk-size line is longer than 4 KiB"),
            (trailer, "a trailer line is longer than 4 KiB"),
        ] {
            assert_eq!(decode_all(&body).0, Step::TooLarge(why));
            let mut c = Chunked::default();
            assert_eq!(
                c.advance(&body[..MAX_LINE + 20], |_| {}),
                Step::TooLarge(why)
            );
        }
        // At the cap exactly (CR included), both ways accept it.
        let mut ok = b"1;".to_vec();
        ok.extend_from_slice(&ext[..MAX_LINE - 3]);
        ok.extend_from_slice(b"\r\nX\r\n0\r\n\r\n");
        assert_eq!(decode_all(&ok), (Step::Done(ok.len()), b"X".to_vec()));
        let mut c = Chunked::default();
        assert_eq!(c.advance(&ok[..MAX_LINE], |_| {}), Step::Incomplete);
        assert_eq!(c.advance(&ok, |_| {}), Step::Done(ok.len()));
    }
}
