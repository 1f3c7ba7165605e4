//! A header block's shape checked before `httlib-hpack` decodes it (RFC 7541 5, 6):
//! every integer ends inside the block in at most `MAX_INTEGER_BYTES` bytes, every
//! string has its length byte and all the bytes it claims. `httlib-hpack` 0.1.3
//! indexes past the end of its input on an integer whose continuation bytes run off
//! the block, and on a literal field cut off before its value's length byte: a panic
//! from a peer's 31 bytes (fuzz/regressions/h2_frames/). The walk reads each byte once
//! and allocates nothing, beside a decode that allocates every name and value.

/// The bytes `httlib-hpack` reads of one integer, its first byte included: a longer one
/// it refuses (`IntegerOverflow`), so this walk does too.
const MAX_INTEGER_BYTES: usize = 5;

/// Whether `block` is a sequence of whole HPACK field representations. Indexes, table
/// sizes and Huffman codes are the decoder's to judge; only bounds are checked here.
pub fn whole(block: &[u8]) -> bool {
    let mut at = 0;
    while at < block.len() {
        let first = block[at];
        if first >= 0x80 && first != 0xff {
            // An indexed field whose index fits its first byte: most of a request's.
            at += 1;
            continue;
        }
        let step = if first & 0x80 != 0 {
            integer(&block[at..], 7).map(|(n, _)| n)
        } else if first & 0x40 != 0 {
            literal(&block[at..], 6)
        } else if first & 0x20 != 0 {
            integer(&block[at..], 5).map(|(n, _)| n)
        } else {
            literal(&block[at..], 4)
        };
        match step {
            Some(n) => at += n,
            None => return false,
        }
    }
    true
}

/// The entries of the static table (RFC 7541 Appendix A): an index past it is the
/// dynamic table's.
const STATIC_ENTRIES: u64 = 61;

/// Whether a whole `block` decodes the same whatever the dynamic table holds: every
/// index it names (of a field or of a literal's name) is the static table's, and it
/// changes no table size. Its inserts (literals with incremental indexing) are the
/// same every time too, so a repeat of its bytes is a repeat of its fields.
pub fn table_free(block: &[u8]) -> bool {
    let mut at = 0;
    while at < block.len() {
        let b = &block[at..];
        let step = if b[0] & 0x80 != 0 {
            integer(b, 7).filter(|&(_, index)| (1..=STATIC_ENTRIES).contains(&index))
        } else if b[0] & 0x40 != 0 {
            literal_named(b, 6).filter(|&(_, index)| index <= STATIC_ENTRIES)
        } else if b[0] & 0x20 != 0 {
            None
        } else {
            literal_named(b, 4).filter(|&(_, index)| index <= STATIC_ENTRIES)
        };
        match step {
            Some((n, _)) => at += n,
            None => return false,
        }
    }
    true
}

/// A literal field (RFC 7541 6.2): its name index, the name itself when the index is
/// 0, then its value. Its length in bytes, or None when it does not fit.
fn literal(b: &[u8], prefix: u8) -> Option<usize> {
    literal_named(b, prefix).map(|(n, _)| n)
}

/// `literal`'s length and its name's index (0: a literal name).
fn literal_named(b: &[u8], prefix: u8) -> Option<(usize, u64)> {
    let (mut at, index) = integer(b, prefix)?;
    if index == 0 {
        at += string(&b[at..])?;
    }
    Some((at + string(&b[at..])?, index))
}

/// A string literal (RFC 7541 5.2): its length (7-bit prefix) and that many bytes.
fn string(b: &[u8]) -> Option<usize> {
    let (at, len) = integer(b, 7)?;
    let end = at.checked_add(usize::try_from(len).ok()?)?;
    (end <= b.len()).then_some(end)
}

/// An integer with a `prefix`-bit prefix (RFC 7541 5.1): (its bytes, its value).
fn integer(b: &[u8], prefix: u8) -> Option<(usize, u64)> {
    let mask = (1u16 << prefix) as u64 - 1;
    let mut value = u64::from(*b.first()?) & mask;
    if value < mask {
        return Some((1, value));
    }
    let mut shift = 0;
    for (i, &byte) in b.iter().enumerate().take(MAX_INTEGER_BYTES).skip(1) {
        value += u64::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            return Some((i + 1, value));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_of_the_rfc_and_their_bounds() {
        // RFC 7541 C.1: 10 and 1337 with a 5-bit prefix, 42 with an 8-bit one.
        assert_eq!(integer(&[10], 5), Some((1, 10)));
        assert_eq!(integer(&[31, 154, 10], 5), Some((3, 1337)));
        assert_eq!(integer(&[42], 8), Some((1, 42)));
        // Continuation bytes that run off the end, or past five bytes.
        assert_eq!(integer(&[31, 154], 5), None);
        assert_eq!(integer(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x05], 7), None);
        assert_eq!(
            integer(&[0x7f, 0xff, 0xff, 0xff, 0x05], 7),
            Some((5, 127 + 0x7f + (0x7f << 7) + (0x7f << 14) + (5 << 21)))
        );
        assert_eq!(integer(&[], 7), None);
    }

    #[test]
    fn whole_blocks_pass_and_cut_ones_do_not() {
        // RFC 7541 C.3.1: :method GET, :scheme http, :path /, :authority www.example.com.
        let block = b"\x82\x86\x84\x41\x0fwww.example.com";
        assert!(whole(block));
        for cut in 0..block.len() {
            // Cut after a whole field: still whole; inside one: not.
            assert_eq!(whole(&block[..cut]), cut <= 3, "cut at {cut}");
        }
        // A literal without indexing, new name: its name and value strings.
        assert!(whole(b"\x00\x03abc\x01d"));
        assert!(!whole(b"\x00\x03abc"), "no value length byte");
        assert!(!whole(b"\x00\x03ab"), "a name shorter than its length");
        // A table size update with a 5-bit prefix, then an indexed field.
        assert!(whole(b"\x3f\xe1\x1f\x82"));
        assert!(!whole(b"\x3f\xe1"));
    }

    #[test]
    fn a_block_is_table_free_when_it_names_static_entries_only() {
        // nginx's response head: :status 200 indexed, then server, date, content-type
        // and content-length as literals with incremental indexing of static names.
        let nginx = b"\x88\x76\x89\xaa\x63\x55\xe5\x80\xae\x21\x2e\x1f\x61\x96\xc3\x61\xbe\x94\x13\xaa\x69\x3f\x75\x04\x01\x38\xa0\x85\x71\xa6\x6e\x36\xea\x98\xb4\x6f\x5f\x87\x49\x7c\xa5\x8a\xe8\x19\xaa\x5c\x01\x35";
        assert!(whole(nginx) && table_free(nginx));
        // Static index 61 (www-authenticate) and literal names, with and without indexing.
        assert!(table_free(
            b"\xbd\x40\x01a\x01b\x00\x01a\x01b\x10\x01a\x01b\x0f\x2e\x01b"
        ));
        // Index 62, the dynamic table's first entry, as a field or as a literal's name.
        assert!(!table_free(b"\x88\xbe"));
        assert!(!table_free(b"\x7e\x01b"));
        assert!(!table_free(b"\x0f\x2f\x01b"));
        // Index 0 as a field is no entry at all; a table size update changes the table.
        assert!(!table_free(b"\x80"));
        assert!(!table_free(b"\x20\x88"));
        assert!(table_free(b""));
    }
}
