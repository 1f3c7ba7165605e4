//! What the peer said when a request or a connection failed: a bounded sample of
//! distinct error texts (an HTTP status line and the start of its body, a Redis error
//! reply, an AMQP or WebSocket close with its reason, a connect's errno text, a TLS
//! failure in words), each with how many times it was met.
//!
//! Bounded twice: a text is cut to `MAX_TEXT_BYTES` as it is put together (`Words`, a
//! fixed buffer), and a table keeps at most `MAX_TEXTS` distinct texts; what a full
//! table cannot keep is counted in `other`. Nothing is allocated on the success path
//! (no text is made for a correct reply) and nothing per error once its text is in
//! the table (the lookup compares bytes); only a text met for the first time is copied.
//!
//! A worker keeps the first `MAX_TEXTS` distinct texts it meets. A merge (workers,
//! processes, shards, a suite point's rounds) sums the counts of equal texts (same kind,
//! same bytes) and keeps the `MAX_TEXTS` with the largest sums (ties: by kind, then
//! text); the rest, and every part's own `other`, go to `other`. Counts kept plus
//! `other` are the exact sum of the parts'.

use super::outcome::ErrorKind;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Distinct texts a table keeps.
pub const MAX_TEXTS: usize = 8;
/// Bytes of one text at most (cut at a character boundary).
pub const MAX_TEXT_BYTES: usize = 200;

/// A text being put together in a fixed buffer: control characters and runs of white
/// space become one space, bytes that are not UTF-8 become `?`, and what does not fit
/// in `MAX_TEXT_BYTES` is cut (at a character, never inside one) and ends in "...".
pub struct Words {
    buf: [u8; MAX_TEXT_BYTES],
    len: usize,
    /// A space is owed before the next visible character.
    space: bool,
    /// Cut: nothing more is taken.
    full: bool,
}

impl Default for Words {
    fn default() -> Self {
        Words::new()
    }
}

impl Words {
    pub fn new() -> Words {
        Words {
            buf: [0; MAX_TEXT_BYTES],
            len: 0,
            space: false,
            full: false,
        }
    }

    /// Appends `bytes` as text (a reply's words as the peer sent them).
    pub fn push(&mut self, bytes: &[u8]) {
        for chunk in bytes.utf8_chunks() {
            for c in chunk.valid().chars() {
                self.push_char(c);
            }
            if !chunk.invalid().is_empty() {
                self.push_char('?');
            }
        }
    }

    fn push_char(&mut self, c: char) {
        if self.full {
            return;
        }
        if c.is_whitespace() || c.is_control() {
            self.space = self.len > 0;
            return;
        }
        let space = usize::from(self.space);
        let n = c.len_utf8();
        if self.len + space + n > MAX_TEXT_BYTES {
            self.cut();
            return;
        }
        if self.space {
            self.buf[self.len] = b' ';
            self.len += 1;
            self.space = false;
        }
        c.encode_utf8(&mut self.buf[self.len..self.len + n]);
        self.len += n;
    }

    /// Full: the last characters give way to "..." and the rest is not taken.
    fn cut(&mut self) {
        let mut end = self.len.min(MAX_TEXT_BYTES - 3);
        // Back to a character's start (UTF-8 continuation bytes are 10xxxxxx).
        while end > 0 && end < self.len && self.buf[end] & 0xC0 == 0x80 {
            end -= 1;
        }
        self.buf[end..end + 3].copy_from_slice(b"...");
        self.len = end + 3;
        self.full = true;
        self.space = false;
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_str(&self) -> &str {
        // Only whole characters are ever written.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

impl fmt::Write for Words {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

/// One distinct text and how often it was met.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorText {
    /// The error kind it was counted under (`status`, `error_reply`, `closed`, `tls`, ...).
    pub kind: String,
    pub text: String,
    /// Times it was met: replies (each request a reply settled), closes, failed attempts.
    pub count: u64,
}

/// A bounded table of distinct error texts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorTexts {
    /// At most `MAX_TEXTS`; after a merge, the largest counts first.
    pub kept: Vec<ErrorText>,
    /// Texts met when the table was full of others (and, after a merge, the texts the
    /// merge did not keep).
    pub other: u64,
}

impl ErrorTexts {
    /// Counts `n` meetings of `words` under `kind`. An empty text is not counted (the
    /// kind says everything there is).
    pub fn note(&mut self, kind: ErrorKind, words: &Words, n: u64) {
        let text = words.as_str();
        if text.is_empty() || n == 0 {
            return;
        }
        let name = kind.name();
        if let Some(e) = self
            .kept
            .iter_mut()
            .find(|e| e.kind == name && e.text == text)
        {
            e.count += n;
        } else if self.kept.len() >= MAX_TEXTS {
            self.other += n;
        } else {
            self.kept.push(ErrorText {
                kind: name.to_string(),
                text: text.to_string(),
                count: n,
            });
        }
    }

    /// `note` for a text already made (a failed attempt's detail), cut as `Words` cuts.
    pub fn note_text(&mut self, kind: ErrorKind, text: &str, n: u64) {
        let mut w = Words::new();
        w.push(text.as_bytes());
        self.note(kind, &w, n);
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty() && self.other == 0
    }

    /// Every text met, kept or not.
    pub fn total(&self) -> u64 {
        self.kept.iter().map(|e| e.count).sum::<u64>() + self.other
    }

    /// The exact merge of `parts`: equal texts summed, the `MAX_TEXTS` largest kept
    /// (ties: by kind, then text), the rest in `other`. Sums saturate (only a forged
    /// file gets near u64).
    pub fn merge_all<'a>(parts: impl IntoIterator<Item = &'a ErrorTexts>) -> ErrorTexts {
        let mut all: Vec<ErrorText> = Vec::new();
        let mut other: u64 = 0;
        for p in parts {
            other = other.saturating_add(p.other);
            for e in &p.kept {
                match all
                    .iter_mut()
                    .find(|a| a.kind == e.kind && a.text == e.text)
                {
                    Some(a) => a.count = a.count.saturating_add(e.count),
                    None => all.push(e.clone()),
                }
            }
        }
        all.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| a.kind.cmp(&b.kind))
                .then_with(|| a.text.cmp(&b.text))
        });
        for dropped in all.drain(MAX_TEXTS.min(all.len())..) {
            other = other.saturating_add(dropped.count);
        }
        ErrorTexts { kept: all, other }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    fn words(b: &[u8]) -> Words {
        let mut w = Words::new();
        w.push(b);
        w
    }

    #[test]
    fn words_fold_white_space_replace_bad_bytes_and_cut_at_a_character() {
        assert_eq!(
            words(b"  HTTP/1.1 404\r\n\r\n\tnot  here\n").as_str(),
            "HTTP/1.1 404 not here"
        );
        assert_eq!(words(b"a\xffb\x00c").as_str(), "a?b c");
        let long = "\u{e9}".repeat(MAX_TEXT_BYTES);
        let w = words(long.as_bytes());
        assert_eq!(w.as_str().len(), MAX_TEXT_BYTES - 1, "{}", w.as_str());
        assert!(
            w.as_str().ends_with("\u{e9}..."),
            "a character never splits"
        );
        let mut w = words(&[b'x'; MAX_TEXT_BYTES]);
        assert_eq!(w.as_str(), "x".repeat(MAX_TEXT_BYTES), "fits whole");
        w.push(b"y");
        assert_eq!(w.as_str(), format!("{}...", "x".repeat(MAX_TEXT_BYTES - 3)));
        w.push(b"z");
        assert_eq!(w.as_str().len(), MAX_TEXT_BYTES, "nothing taken once cut");
        let mut w = Words::new();
        let (code, reason) = (1011, "overloaded");
        let _ = write!(w, "close {code} {reason}");
        assert_eq!(w.as_str(), "close 1011 overloaded");
        assert!(words(b" \r\n").is_empty());
    }

    #[test]
    fn a_table_keeps_the_first_distinct_texts_and_counts_the_rest_as_other() {
        let mut t = ErrorTexts::default();
        for i in 0..MAX_TEXTS + 3 {
            t.note(
                ErrorKind::Status,
                &words(format!("HTTP/1.1 5{i:02}").as_bytes()),
                2,
            );
        }
        t.note(ErrorKind::Status, &words(b"HTTP/1.1 500"), 1);
        t.note(ErrorKind::Closed, &words(b"HTTP/1.1 500"), 1);
        t.note(ErrorKind::Status, &Words::new(), 5);
        assert_eq!(t.kept.len(), MAX_TEXTS);
        assert_eq!(t.kept[0].count, 3, "a known text adds up");
        assert_eq!(t.other, 3 * 2 + 1, "texts met when full, of any kind");
        assert_eq!(t.total(), (MAX_TEXTS as u64 + 3) * 2 + 2);
        let long = "y".repeat(MAX_TEXT_BYTES + 50);
        t.kept.clear();
        t.note_text(ErrorKind::Tls, &long, 1);
        t.note_text(ErrorKind::Tls, &long, 1);
        assert_eq!(t.kept.len(), 1);
        assert_eq!((t.kept[0].text.len(), t.kept[0].count), (MAX_TEXT_BYTES, 2));
    }

    #[test]
    fn a_merge_sums_equal_texts_and_keeps_the_largest() {
        let of = |list: &[(&str, u64)], other| ErrorTexts {
            kept: list
                .iter()
                .map(|(t, n)| ErrorText {
                    kind: "status".into(),
                    text: t.to_string(),
                    count: *n,
                })
                .collect(),
            other,
        };
        let a = of(&[("a", 5), ("b", 1), ("c", 1), ("d", 1)], 2);
        let b = of(
            &[("b", 9), ("e", 1), ("f", 1), ("g", 1), ("h", 1), ("i", 1)],
            0,
        );
        let m = ErrorTexts::merge_all([&a, &b]);
        let kept: Vec<(&str, u64)> = m.kept.iter().map(|e| (e.text.as_str(), e.count)).collect();
        assert_eq!(
            kept,
            [
                ("b", 10),
                ("a", 5),
                ("c", 1),
                ("d", 1),
                ("e", 1),
                ("f", 1),
                ("g", 1),
                ("h", 1)
            ]
        );
        assert_eq!(
            m.other,
            2 + 1,
            "each part's other, and the text not kept (i)"
        );
        assert_eq!(m.total(), a.total() + b.total());
        assert_eq!(
            ErrorTexts::merge_all([&m]),
            m,
            "merging one is the identity"
        );
        assert!(ErrorTexts::merge_all([]).is_empty());
    }
}
