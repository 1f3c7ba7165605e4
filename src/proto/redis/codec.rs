//! RESP (REdis Serialization Protocol, versions 2 and 3), pure functions only: a
//! reply scanner for the client, a request parser for the server, and the encoders
//! both sides use. Like mini-redis, every parser looks at the bytes received so far
//! and says `Incomplete` until a whole frame is there; none allocates, and a length
//! past a cap is refused before a byte of what it announces is awaited, so a peer that
//! claims a 4 GB bulk string costs nothing but the line that claims it.

/// Most bytes of one header or simple line (`+OK`, `$5`, `*3`, an inline command),
/// CRLF excluded: Redis's own inline limit. A longer line is `TooLarge`.
pub const MAX_LINE: usize = 64 * 1024;

/// What a reply or request scan found at the start of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scan<T> {
    /// Not a whole frame yet: read more.
    Incomplete,
    /// A whole frame of `len` bytes.
    Whole { len: usize, frame: T },
    /// A length or a count past its cap, or a line past `MAX_LINE`.
    TooLarge,
    /// Not RESP (an HTTP reply, a bad length, a missing CRLF).
    Invalid,
}

/// Caps a reply scan holds to, and the protocol version it reads. The caps bound
/// claims, not memory: the caller keeps at most the bytes of one unfinished reply.
#[derive(Clone, Copy, Debug)]
pub struct ReplyLimits {
    /// Most bytes one bulk string may announce.
    pub max_bulk: u64,
    /// Most values (nested ones included) in one reply.
    pub max_values: u64,
    /// RESP3 was asked for (`HELLO 3`): its types (`_ # , ( ! = ~ % > |`) are read.
    /// Without it a server speaks RESP2, and any of them is `Invalid`.
    pub resp3: bool,
}
/// The top-level value of a reply, as much of it as the client checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Top {
    /// `+text` (RESP3 `=` verbatim strings are `Bulk`): the text's range.
    Simple { at: usize, len: usize },
    /// `-ERR ...` or RESP3 `!` blob error: the message's range.
    Error { at: usize, len: usize },
    /// `:n`.
    Integer(i64),
    /// `$n` with its payload's range.
    Bulk { at: usize, len: usize },
    /// `$-1`, `*-1` or RESP3 `_`.
    Null,
    /// `*n`, `~n` (set) or `%n` (map, n pairs).
    Aggregate { n: u64 },
    /// RESP3 `>`: a push the server sent on its own (pub/sub, invalidation).
    Push,
    /// RESP3 `#`, `,`, `(`: a boolean, a double, a big number.
    Scalar,
}

/// Finds the CRLF ending the line that starts at `start`: the index of its `\r`. The
/// bytes before `from` (>= `start`) are known to hold no `\n`, so they are not looked
/// at again. `Err(Incomplete)` when the line is not whole yet.
#[inline]
fn line_end_from(input: &[u8], start: usize, from: usize) -> Result<usize, Scan<()>> {
    let limit = input.len().min(start.saturating_add(MAX_LINE + 2));
    let from = from.max(start);
    let window = &input[from.min(limit)..limit];
    match window.iter().position(|&b| b == b'\n') {
        Some(i) => {
            let nl = from + i;
            if nl > start && input[nl - 1] == b'\r' {
                Ok(nl - 1)
            } else {
                Err(Scan::Invalid)
            }
        }
        None if limit - start >= MAX_LINE + 2 => Err(Scan::TooLarge),
        None => Err(Scan::Incomplete),
    }
}

/// Finds the CRLF ending the line that starts at `from`: the index of its `\r`.
#[inline]
fn line_end(input: &[u8], from: usize) -> Result<usize, Scan<()>> {
    line_end_from(input, from, from)
}

/// A RESP length or count: `-1` or decimal digits (at most 19, so no overflow).
#[inline]
fn parse_len(line: &[u8]) -> Option<i64> {
    match line {
        b"-1" => Some(-1),
        [] => None,
        digits if digits.len() <= 18 => {
            let mut v = 0i64;
            for &d in digits {
                if !d.is_ascii_digit() {
                    return None;
                }
                v = v * 10 + i64::from(d - b'0');
            }
            Some(v)
        }
        // 19 digits and more: past any cap, but still a number.
        digits if digits.iter().all(u8::is_ascii_digit) => Some(i64::MAX),
        _ => None,
    }
}

/// A RESP integer (`:` line): an optional sign and digits, within i64.
pub fn parse_int(line: &[u8]) -> Option<i64> {
    let (neg, digits) = match line {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, line),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut v = 0i64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?;
        v = if neg {
            v.checked_sub(i64::from(d - b'0'))?
        } else {
            v.checked_add(i64::from(d - b'0'))?
        };
    }
    Some(v)
}

fn cut<T>(s: Scan<()>) -> Scan<T> {
    match s {
        Scan::Incomplete => Scan::Incomplete,
        Scan::TooLarge => Scan::TooLarge,
        _ => Scan::Invalid,
    }
}

/// Scans one whole reply (RESP2 or RESP3) at the start of `input`: its length and its
/// top-level value. A scan of its own, from the first byte: to follow a reply that
/// arrives in pieces, keep a `ReplyScan`.
pub fn scan_reply(input: &[u8], lim: &ReplyLimits) -> Scan<Top> {
    ReplyScan::default().scan(input, lim)
}

/// The types RESP2 has; RESP3 adds `_ # , ( ! = ~ % > |`.
const RESP2_TYPES: &[u8] = b"+-:$*";
const RESP3_TYPES: &[u8] = b"+-:_#,($!=*~%>|";

/// A reply scan that resumes where it stopped. Aggregates are walked with a count of
/// values still owed, not a stack, so nesting costs nothing; every value already
/// whole is behind `pos` and is never looked at again, and the line being read is
/// searched for its end only past what was searched before. So a reply that comes
/// in many reads costs its length once, not once per read (a rescan from its first
/// byte made one reply of a million values 1.06 CPU-s).
///
/// Sans-IO: `scan` is given the bytes of the reply received so far, from its first
/// byte, each time the same bytes followed by any new ones (as the engine keeps an
/// unfinished reply and appends what it reads). After `Whole`, `TooLarge` or
/// `Invalid` the next call starts a new reply.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplyScan {
    /// Where the next value starts: every byte before it is scanned.
    pos: usize,
    /// Values still owed (0: no reply begun).
    owed: u64,
    values: u64,
    top: Option<Top>,
    /// Bytes after the line start at `pos` already searched for its end.
    searched: usize,
    /// Bytes looked at over the scanner's life: the work, counted for tests.
    examined: u64,
}

impl ReplyScan {
    /// Bytes looked at so far over every reply this scanner read.
    pub fn examined(&self) -> u64 {
        self.examined
    }

    /// The reply at the start of `input`, as far as it has come.
    pub fn scan(&mut self, input: &[u8], lim: &ReplyLimits) -> Scan<Top> {
        if self.owed == 0 || input.len() < self.pos {
            // A new reply (or bytes that are not the ones scanned: start again).
            *self = ReplyScan {
                owed: 1,
                examined: self.examined,
                ..ReplyScan::default()
            };
        }
        let found = self.resume(input, lim);
        if found != Scan::Incomplete {
            *self = ReplyScan {
                examined: self.examined,
                ..ReplyScan::default()
            };
        }
        found
    }

    fn resume(&mut self, input: &[u8], lim: &ReplyLimits) -> Scan<Top> {
        let types = if lim.resp3 { RESP3_TYPES } else { RESP2_TYPES };
        while self.owed > 0 {
            let pos = self.pos;
            let Some(&kind) = input.get(pos) else {
                return Scan::Incomplete;
            };
            if !types.contains(&kind) {
                return Scan::Invalid;
            }
            let from = pos + 1 + self.searched;
            let end = match line_end_from(input, pos + 1, from) {
                Ok(e) => e,
                Err(Scan::Incomplete) => {
                    self.examined += input.len().saturating_sub(from) as u64;
                    self.searched = input.len() - (pos + 1);
                    return Scan::Incomplete;
                }
                Err(s) => return cut(s),
            };
            self.examined += (end + 2 - from.min(end)) as u64;
            self.searched = 0;
            match self.value(kind, input, end, lim) {
                Ok(next) => self.pos = next,
                Err(s) => return s,
            }
        }
        match self.top {
            Some(frame) => Scan::Whole {
                len: self.pos,
                frame,
            },
            None => Scan::Invalid,
        }
    }

    /// The value of type `kind` at `pos`, whose line ends at `end`: counted and, when
    /// whole, taken off what is owed. Ok: where the next value starts.
    fn value(
        &mut self,
        kind: u8,
        input: &[u8],
        end: usize,
        lim: &ReplyLimits,
    ) -> Result<usize, Scan<Top>> {
        let pos = self.pos;
        let line = &input[pos + 1..end];
        let mut next = end + 2;
        let values = self.values + 1;
        if values > lim.max_values {
            return Err(Scan::TooLarge);
        }
        // The top is the first value owed alone: after an attribute, not inside it.
        let alone = self.owed == 1;
        let mut owed = self.owed;
        let this = match kind {
            b'+' => Top::Simple {
                at: pos + 1,
                len: line.len(),
            },
            b'-' => Top::Error {
                at: pos + 1,
                len: line.len(),
            },
            b':' => Top::Integer(parse_int(line).ok_or(Scan::Invalid)?),
            b'_' if line.is_empty() => Top::Null,
            b'#' | b',' | b'(' => Top::Scalar,
            b'$' | b'!' | b'=' => match parse_len(line) {
                Some(-1) if kind == b'$' => Top::Null,
                Some(n) if n >= 0 => {
                    if n as u64 > lim.max_bulk {
                        return Err(Scan::TooLarge);
                    }
                    let (at, n) = (next, n as usize);
                    if input.len() < at + n + 2 {
                        // Its line is read again next time (a few bytes); its
                        // payload is never looked at, only its end.
                        return Err(Scan::Incomplete);
                    }
                    if &input[at + n..at + n + 2] != b"\r\n" {
                        return Err(Scan::Invalid);
                    }
                    self.examined += 2;
                    next = at + n + 2;
                    if kind == b'!' {
                        Top::Error { at, len: n }
                    } else {
                        Top::Bulk { at, len: n }
                    }
                }
                _ => return Err(Scan::Invalid),
            },
            b'*' | b'~' | b'%' | b'>' | b'|' => match parse_len(line) {
                Some(-1) if kind == b'*' => Top::Null,
                Some(n) if n >= 0 => {
                    let n = n as u64;
                    if n > lim.max_values {
                        return Err(Scan::TooLarge);
                    }
                    owed += if matches!(kind, b'%' | b'|') {
                        2 * n
                    } else {
                        n
                    };
                    if kind == b'|' {
                        // An attribute precedes the value it describes: that value is
                        // still owed, and is the reply's top when the attribute was.
                        owed += 1;
                    }
                    if kind == b'>' {
                        Top::Push
                    } else {
                        Top::Aggregate { n }
                    }
                }
                _ => return Err(Scan::Invalid),
            },
            _ => return Err(Scan::Invalid),
        };
        self.values = values;
        self.owed = owed - 1;
        if self.top.is_none() && kind != b'|' && alone {
            self.top = Some(this);
        }
        Ok(next)
    }
}

/// Caps a request parse holds to (the server's): past either the server answers
/// with an error and closes, so one connection can make it hold at most one request
/// of `max_request` bytes.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct RequestLimits {
    /// Most arguments in one command (the name included).
    pub max_args: usize,
    /// Most bytes of one argument.
    pub max_bulk: usize,
    /// Most bytes of one whole request, as its lengths announce it.
    pub max_request: usize,
}

impl Default for RequestLimits {
    fn default() -> Self {
        RequestLimits {
            max_args: 1024 * 1024,
            max_bulk: 16 << 20,
            max_request: 64 << 20,
        }
    }
}

/// Where a parsed request's arguments are: `(start, len)` pairs into the input,
/// written into the caller's reusable list (no allocation once it has grown).
pub type Args = Vec<(u32, u32)>;

/// Parses one request at the start of `input`: a RESP array of bulk strings (what
/// clients send) or an inline command (a line of words, as telnet and redis-cli's
/// inline mode send). The arguments' ranges go to `args` (cleared first).
pub fn parse_request(input: &[u8], lim: &RequestLimits, args: &mut Args) -> Scan<()> {
    args.clear();
    let Some(&first) = input.first() else {
        return Scan::Incomplete;
    };
    if first != b'*' {
        return parse_inline(input, args);
    }
    let end = match line_end(input, 1) {
        Ok(e) => e,
        Err(s) => return cut(s),
    };
    let n = match parse_len(&input[1..end]) {
        Some(n) if n > 0 => n as u64,
        // `*0` and `*-1` are empty requests Redis skips.
        Some(_) => {
            return Scan::Whole {
                len: end + 2,
                frame: (),
            }
        }
        None => return Scan::Invalid,
    };
    if n > lim.max_args as u64 {
        return Scan::TooLarge;
    }
    let mut pos = end + 2;
    let mut claimed = pos;
    for _ in 0..n {
        if pos >= input.len() {
            return Scan::Incomplete;
        }
        if input[pos] != b'$' {
            return Scan::Invalid;
        }
        let end = match line_end(input, pos + 1) {
            Ok(e) => e,
            Err(s) => return cut(s),
        };
        let len = match parse_len(&input[pos + 1..end]) {
            Some(l) if l >= 0 => l as u64,
            _ => return Scan::Invalid,
        };
        if len > lim.max_bulk as u64 {
            return Scan::TooLarge;
        }
        let at = end + 2;
        let len = len as usize;
        claimed += end + 2 - pos + len + 2;
        if claimed > lim.max_request {
            return Scan::TooLarge;
        }
        if input.len() < at + len + 2 {
            return Scan::Incomplete;
        }
        if &input[at + len..at + len + 2] != b"\r\n" {
            return Scan::Invalid;
        }
        args.push((at as u32, len as u32));
        pos = at + len + 2;
    }
    Scan::Whole {
        len: pos,
        frame: (),
    }
}

/// An inline command: words separated by spaces up to `\n` (a `\r` before it is
/// dropped), at most `MAX_LINE` bytes. Quoting is not supported: a word is bytes
/// between spaces.
fn parse_inline(input: &[u8], args: &mut Args) -> Scan<()> {
    let window = &input[..input.len().min(MAX_LINE + 1)];
    let Some(nl) = window.iter().position(|&b| b == b'\n') else {
        return if window.len() > MAX_LINE {
            Scan::TooLarge
        } else {
            Scan::Incomplete
        };
    };
    let line = &input[..nl];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut i = 0;
    while i < line.len() {
        if line[i] == b' ' || line[i] == b'\t' {
            i += 1;
            continue;
        }
        let start = i;
        while i < line.len() && line[i] != b' ' && line[i] != b'\t' {
            i += 1;
        }
        args.push((start as u32, (i - start) as u32));
    }
    Scan::Whole {
        len: nl + 1,
        frame: (),
    }
}

/// `v` in decimal, written into `buf` (no allocation).
#[inline]
pub fn int_bytes(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    let mut u = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// Appends a decimal number.
#[inline]
pub fn push_int(out: &mut Vec<u8>, v: i64) {
    let mut buf = [0u8; 20];
    out.extend_from_slice(int_bytes(v, &mut buf));
}

/// Appends a header line: `kind`, the number, CRLF (`*3\r\n`, `$5\r\n`, `:42\r\n`).
#[inline]
pub fn push_header(out: &mut Vec<u8>, kind: u8, n: i64) {
    out.push(kind);
    push_int(out, n);
    out.extend_from_slice(b"\r\n");
}

/// Appends a bulk string.
#[inline]
pub fn push_bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    push_header(out, b'$', bytes.len() as i64);
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

/// Appends a command as a RESP array of bulk strings.
pub fn push_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    push_header(out, b'*', args.len() as i64);
    for a in args {
        push_bulk(out, a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIM: ReplyLimits = ReplyLimits {
        max_bulk: 512 << 20,
        max_values: 1 << 20,
        resp3: true,
    };

    fn whole(input: &[u8]) -> (usize, Top) {
        match scan_reply(input, &LIM) {
            Scan::Whole { len, frame } => (len, frame),
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(input)),
        }
    }

    #[test]
    fn each_reply_type_scans_whole_and_every_split_point_is_incomplete() {
        let replies: &[(&[u8], Top)] = &[
            (b"+OK\r\n", Top::Simple { at: 1, len: 2 }),
            (b"-ERR unknown\r\n", Top::Error { at: 1, len: 11 }),
            (b":-42\r\n", Top::Integer(-42)),
            (b"$5\r\nhello\r\n", Top::Bulk { at: 4, len: 5 }),
            (b"$0\r\n\r\n", Top::Bulk { at: 4, len: 0 }),
            (b"$-1\r\n", Top::Null),
            (b"*-1\r\n", Top::Null),
            (b"_\r\n", Top::Null),
            (b"*2\r\n$1\r\na\r\n$-1\r\n", Top::Aggregate { n: 2 }),
            (b"*2\r\n*1\r\n:1\r\n+x\r\n", Top::Aggregate { n: 2 }),
            (b"%1\r\n+server\r\n+redis\r\n", Top::Aggregate { n: 1 }),
            (b">2\r\n+message\r\n$2\r\nhi\r\n", Top::Push),
            (b"!3\r\nERR\r\n", Top::Error { at: 4, len: 3 }),
            (b"=7\r\ntxt:abc\r\n", Top::Bulk { at: 4, len: 7 }),
            (b"#t\r\n", Top::Scalar),
            (b"|1\r\n+ttl\r\n:3\r\n:7\r\n", Top::Integer(7)),
            (b"*0\r\n", Top::Aggregate { n: 0 }),
        ];
        for (bytes, top) in replies {
            assert_eq!(whole(bytes), (bytes.len(), *top), "{bytes:?}");
            for cut in 0..bytes.len() {
                assert_eq!(
                    scan_reply(&bytes[..cut], &LIM),
                    Scan::Incomplete,
                    "{bytes:?} cut at {cut}"
                );
            }
            // Pipelined: the first reply's length, whatever follows.
            let mut two = bytes.to_vec();
            two.extend_from_slice(bytes);
            assert_eq!(whole(&two).0, bytes.len());
        }
    }

    /// Feeds `bytes` to one scanner a prefix at a time, `step` more bytes each call,
    /// as the engine hands over a reply that comes in pieces.
    fn fed(bytes: &[u8], step: usize, scan: &mut ReplyScan, lim: &ReplyLimits) -> Scan<Top> {
        let mut upto = 0;
        loop {
            upto = (upto + step).min(bytes.len());
            match scan.scan(&bytes[..upto], lim) {
                Scan::Incomplete if upto < bytes.len() => continue,
                other => return other,
            }
        }
    }

    #[test]
    fn a_resumed_scan_finds_what_a_whole_scan_finds_at_every_split() {
        let replies: &[&[u8]] = &[
            b"+OK\r\n",
            b"$5\r\nhello\r\n",
            b"*2\r\n*1\r\n:1\r\n+x\r\n",
            b"%1\r\n+server\r\n+redis\r\n",
            b">2\r\n+message\r\n$2\r\nhi\r\n",
            b"|1\r\n+ttl\r\n:3\r\n:7\r\n",
            b"*3\r\n$3\r\nabc\r\n$-1\r\n=7\r\ntxt:abc\r\n",
        ];
        for bytes in replies {
            let whole = scan_reply(bytes, &LIM);
            for cut in 1..bytes.len() {
                // Two pieces: the first incomplete, then the whole.
                let mut s = ReplyScan::default();
                assert_eq!(
                    s.scan(&bytes[..cut], &LIM),
                    Scan::Incomplete,
                    "{bytes:?} {cut}"
                );
                assert_eq!(s.scan(bytes, &LIM), whole, "{bytes:?} cut at {cut}");
            }
            for step in 1..4 {
                let mut s = ReplyScan::default();
                assert_eq!(fed(bytes, step, &mut s, &LIM), whole, "{bytes:?} by {step}");
                // The next reply starts afresh.
                assert_eq!(s.scan(bytes, &LIM), whole);
            }
        }
    }

    #[test]
    fn a_reply_in_many_pieces_is_scanned_once_not_once_per_piece() {
        // A million values, fed 8 KiB at a time (an io_uring receive buffer).
        let n = 1_000_000;
        let mut reply = format!("*{n}\r\n").into_bytes();
        for i in 0..n {
            reply.extend_from_slice(format!(":{}\r\n", i % 10).as_bytes());
        }
        let mut s = ReplyScan::default();
        let got = fed(&reply, 8 * 1024, &mut s, &LIM);
        assert_eq!(
            got,
            Scan::Whole {
                len: reply.len(),
                frame: Top::Aggregate { n: n as u64 }
            }
        );
        let pieces = reply.len().div_ceil(8 * 1024) as u64;
        // Each byte once, plus at most a line read again per piece; a scan from the
        // first byte at every piece would look at ~pieces/2 times the reply.
        let bound = reply.len() as u64 + pieces * 32;
        assert!(
            s.examined() <= bound,
            "examined {} of {}",
            s.examined(),
            reply.len()
        );
        // A bulk string's payload is never looked at, only its end.
        let mut bulk = b"$4000000\r\n".to_vec();
        bulk.extend(std::iter::repeat(b'x').take(4_000_000));
        bulk.extend_from_slice(b"\r\n");
        let mut s = ReplyScan::default();
        assert!(matches!(
            fed(&bulk, 8 * 1024, &mut s, &LIM),
            Scan::Whole { .. }
        ));
        assert!(s.examined() < 600 * 16, "examined {}", s.examined());
    }

    #[test]
    fn resp2_refuses_resp3_types() {
        let resp2 = ReplyLimits {
            resp3: false,
            ..LIM
        };
        for resp3_only in [
            &b">1\r\n+x\r\n"[..],
            b"%0\r\n",
            b"_\r\n",
            b"#t\r\n",
            b"=1\r\nx\r\n",
        ] {
            assert_eq!(
                scan_reply(resp3_only, &resp2),
                Scan::Invalid,
                "{resp3_only:?}"
            );
            assert!(matches!(scan_reply(resp3_only, &LIM), Scan::Whole { .. }));
        }
        assert!(matches!(
            scan_reply(b"*1\r\n$1\r\nx\r\n", &resp2),
            Scan::Whole { .. }
        ));
    }

    #[test]
    fn claims_past_the_caps_are_too_large_before_any_payload() {
        assert_eq!(scan_reply(b"$4294967296\r\n", &LIM), Scan::TooLarge);
        assert_eq!(scan_reply(b"$536870913\r\n", &LIM), Scan::TooLarge);
        assert_eq!(
            scan_reply(b"$99999999999999999999999\r\n", &LIM),
            Scan::TooLarge
        );
        assert_eq!(scan_reply(b"*1048577\r\n", &LIM), Scan::TooLarge);
        // Nested counts add up against the same cap.
        let small = ReplyLimits {
            max_bulk: 10,
            max_values: 3,
            resp3: true,
        };
        assert_eq!(
            scan_reply(b"*2\r\n*2\r\n:1\r\n:2\r\n", &small),
            Scan::TooLarge
        );
        assert_eq!(scan_reply(b"$11\r\n", &small), Scan::TooLarge);
        // A line that never ends.
        let long = vec![b'+'; MAX_LINE + 3];
        assert_eq!(scan_reply(&long, &LIM), Scan::TooLarge);
    }

    #[test]
    fn not_resp_is_invalid() {
        for bad in [
            &b"HTTP/1.1 400 Bad Request\r\n"[..],
            b"$abc\r\n",
            b"$-2\r\n",
            b"$3\r\nabcd\r\n",
            b":1x\r\n",
            b"+OK\n",
            b"\n",
            b"_x\r\n",
        ] {
            assert_eq!(scan_reply(bad, &LIM), Scan::Invalid, "{bad:?}");
        }
    }

    fn req(input: &[u8]) -> Vec<Vec<u8>> {
        let mut args = Args::new();
        match parse_request(input, &RequestLimits::default(), &mut args) {
            Scan::Whole { len, .. } => assert_eq!(len, input.len()),
            other => panic!("{other:?}"),
        }
        args.iter()
            .map(|&(a, l)| input[a as usize..(a + l) as usize].to_vec())
            .collect()
    }

    #[test]
    fn requests_parse_as_arrays_or_inline_and_split_points_are_incomplete() {
        let mut out = Vec::new();
        push_command(&mut out, &[b"SET", b"key:1", b"v\r\nx"]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$4\r\nv\r\nx\r\n");
        assert_eq!(req(&out), [&b"SET"[..], b"key:1", b"v\r\nx"]);
        let mut args = Args::new();
        for cut in 0..out.len() {
            assert_eq!(
                parse_request(&out[..cut], &RequestLimits::default(), &mut args),
                Scan::Incomplete,
                "cut {cut}"
            );
        }
        assert_eq!(req(b"PING\r\n"), [b"PING"]);
        assert_eq!(req(b"  set a  b\n"), [&b"set"[..], b"a", b"b"]);
        assert_eq!(req(b"\r\n"), Vec::<Vec<u8>>::new());
    }

    #[test]
    fn request_caps_hold() {
        let lim = RequestLimits {
            max_args: 2,
            max_bulk: 4,
            max_request: 20,
        };
        let mut args = Args::new();
        assert_eq!(parse_request(b"*3\r\n", &lim, &mut args), Scan::TooLarge);
        assert_eq!(
            parse_request(b"*1\r\n$5\r\n", &lim, &mut args),
            Scan::TooLarge
        );
        assert_eq!(
            parse_request(b"*2\r\n$4\r\nabcd\r\n$4\r\n", &lim, &mut args),
            Scan::TooLarge
        );
        assert_eq!(
            parse_request(
                b"*1\r\n$4294967296\r\n",
                &RequestLimits::default(),
                &mut args
            ),
            Scan::TooLarge
        );
        assert_eq!(
            parse_request(b"*1\r\n:4\r\n", &lim, &mut args),
            Scan::Invalid
        );
        let long = vec![b'a'; MAX_LINE + 1];
        assert_eq!(parse_request(&long, &lim, &mut args), Scan::TooLarge);
    }

    #[test]
    fn integers_round_trip() {
        for v in [0i64, 7, -7, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            push_int(&mut out, v);
            assert_eq!(parse_int(&out), Some(v));
        }
        assert_eq!(parse_int(b"9223372036854775808"), None);
        assert_eq!(parse_int(b""), None);
    }
}
