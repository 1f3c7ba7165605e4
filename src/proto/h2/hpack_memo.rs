//! A connection's last header block remembered with its decoded fields, so the same
//! bytes again are handed out from memory instead of through the crate's Huffman
//! decoder and allocations. A server's response head repeats byte for byte: nginx
//! sends `:status`, `server`, `date`, `content-type` and `content-length` as literals
//! with incremental indexing of static names, the same bytes every response within
//! one second of its `date`; decoding them was nine tenths of `wirebench http --h2`'s
//! user time per request.
//!
//! Only a block that decodes the same whatever the dynamic table holds is remembered
//! (`hpack_walk::table_free`). Its repeats still insert into the table, so the decoder
//! (`hpack.rs`) owes them: before any other block decodes, it replays the inserts of
//! as many as change the table (`owed_replays`), written as raw literals (`replay`).
//! The table holds the longest run of newest inserts that fits its size, so once the
//! replayed inserts outgrow it, older repeats could leave nothing behind: the table
//! is then exactly as if every repeat had been decoded.

/// The largest block remembered, and the most decoded bytes (names and values) kept
/// for it: a connection's memory stays small whatever the server sends.
const MAX_BLOCK: usize = 512;
const MAX_TEXT: usize = 2048;
/// Per header field, RFC 7541 4.1 adds 32 bytes to its name and value.
const FIELD_OVERHEAD: usize = 32;

/// The remembered block, its fields, and the repeats whose inserts are owed.
#[derive(Default)]
pub struct Memo {
    block: Vec<u8>,
    /// The block's inserts alone, as literals with incremental indexing of literal
    /// names, not Huffman-coded: what a replay decodes, the same entries in the table
    /// for a tenth of the block's decoding.
    inserts_raw: Vec<u8>,
    /// Every field's name then value, one after the other.
    text: Vec<u8>,
    /// Each field's (name length, value length) in `text`.
    spans: Vec<(u16, u16)>,
    /// The table size (RFC 7541 4.1) the block's inserts add up to.
    inserts: usize,
    /// Repeats handed out from memory whose inserts the decoder has not made.
    owed: u32,
    /// `block`, `text` and `spans` are whole (a decode finished and fit the caps).
    valid: bool,
    /// A decode is being recorded (the block qualified, the caps still hold).
    recording: bool,
}

impl Memo {
    /// Whether `block` is the remembered one; if it is, its inserts are owed once more.
    #[inline]
    pub fn repeat(&mut self, block: &[u8]) -> bool {
        if !self.valid || self.block != block {
            return false;
        }
        self.owed = self.owed.saturating_add(1);
        true
    }

    /// Hands out the remembered fields in order.
    #[inline]
    pub fn each(&self, field: &mut impl FnMut(&[u8], &[u8])) {
        let mut at = 0;
        for &(n, v) in &self.spans {
            let (n, v) = (usize::from(n), usize::from(v));
            field(&self.text[at..at + n], &self.text[at + n..at + n + v]);
            at += n + v;
        }
    }

    /// Repeats whose inserts are owed.
    #[cfg(test)]
    pub fn owed(&self) -> u32 {
        self.owed
    }

    /// What one owed repeat's replay decodes: the block's inserts.
    pub fn replay(&self) -> &[u8] {
        &self.inserts_raw
    }

    /// How many of the owed repeats the decoder replays so that its table of at most
    /// `table` bytes ends as if it had decoded all of them: all, or enough that their
    /// inserts add up to more than the table holds. The debt is then settled.
    pub fn owed_replays(&mut self, table: usize) -> u32 {
        let owed = std::mem::take(&mut self.owed);
        if !self.valid || self.inserts == 0 {
            return 0;
        }
        let enough = u32::try_from(table / self.inserts + 1).unwrap_or(u32::MAX);
        owed.min(enough)
    }

    /// Forgets the remembered block (its debt must be settled first) and records the
    /// decode of `block` if it qualifies: `table_free`, and no longer than the cap.
    pub fn start(&mut self, block: &[u8], table_free: bool) {
        debug_assert_eq!(self.owed, 0, "a repeat's inserts still owed");
        self.valid = false;
        self.block.clear();
        self.inserts_raw.clear();
        self.text.clear();
        self.spans.clear();
        self.inserts = 0;
        self.recording = table_free && block.len() <= MAX_BLOCK;
    }

    /// One decoded field of the block being recorded; `indexed`: it was inserted into
    /// the dynamic table.
    pub fn record(&mut self, name: &[u8], value: &[u8], indexed: bool) {
        if !self.recording {
            return;
        }
        if self.text.len() + name.len() + value.len() > MAX_TEXT {
            self.recording = false;
            return;
        }
        self.text.extend_from_slice(name);
        self.text.extend_from_slice(value);
        // Both fit in u16: MAX_TEXT is smaller.
        self.spans.push((name.len() as u16, value.len() as u16));
        if indexed {
            self.inserts += name.len() + value.len() + FIELD_OVERHEAD;
            self.inserts_raw.push(0x40);
            raw_string(&mut self.inserts_raw, name);
            raw_string(&mut self.inserts_raw, value);
        }
    }

    /// The recorded decode of `block` succeeded: it is remembered from now on.
    pub fn finish(&mut self, block: &[u8]) {
        if std::mem::take(&mut self.recording) {
            self.block.extend_from_slice(block);
            self.valid = true;
        }
    }
}

/// A string literal (RFC 7541 5.2) not Huffman-coded: its length as an integer with a
/// 7-bit prefix (5.1), then its bytes.
fn raw_string(out: &mut Vec<u8>, s: &[u8]) {
    const PREFIX_MAX: usize = 0x7f;
    if s.len() < PREFIX_MAX {
        out.push(s.len() as u8);
    } else {
        out.push(PREFIX_MAX as u8);
        let mut rest = s.len() - PREFIX_MAX;
        while rest >= 0x80 {
            out.push((rest & 0x7f) as u8 | 0x80);
            rest >>= 7;
        }
        out.push(rest as u8);
    }
    out.extend_from_slice(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_is_the_inserts_as_raw_literals() {
        let mut m = Memo::default();
        m.start(b"(the block)", true);
        m.record(b":status", b"200", false);
        m.record(b"server", b"nginx", true);
        let long = vec![b'v'; 300];
        m.record(b"x", &long, true);
        m.finish(b"(the block)");
        // 300 = 127 + 173: 0x7f, then 173 as 0xad 0x01 (low seven bits first).
        let mut want = b"\x40\x06server\x05nginx\x40\x01x\x7f\xad\x01".to_vec();
        want.extend_from_slice(&long);
        assert_eq!(m.replay(), &want[..]);
        assert!(m.repeat(b"(the block)"));
        assert!(!m.repeat(b"(another)"));
        // Inserts of 6+5+32 and 1+300+32 bytes: 11 replays (4,136 bytes) overflow 4,096.
        assert_eq!(m.owed_replays(4096), 1);
        for _ in 0..20 {
            m.repeat(b"(the block)");
        }
        assert_eq!(m.owed_replays(4096), 11);
        assert_eq!(m.owed_replays(4096), 0);
    }
}
