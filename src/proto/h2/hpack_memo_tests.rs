//! A remembering decoder (`HeaderDecoder::remembering`) on exact bytes: the fields it
//! hands out and the dynamic table it keeps are the crate's own, block for block,
//! whatever repeats, changes or refers back to the table.

use super::hpack::HeaderDecoder;

/// nginx 1.22's response head as it sends it: `:status 200` indexed, then `server`,
/// `date`, `content-type` and `content-length` as Huffman-coded literals with
/// incremental indexing of static names (4 inserts, 216 bytes of table, per response).
const NGINX: &[u8] = b"\x88\x76\x89\xaa\x63\x55\xe5\x80\xae\x21\x2e\x1f\x61\x96\xc3\x61\xbe\x94\x13\xaa\x69\x3f\x75\x04\x01\x38\xa0\x85\x71\xa6\x6e\x36\xea\x98\xb4\x6f\x5f\x87\x49\x7c\xa5\x8a\xe8\x19\xaa\x5c\x01\x35";

/// The same head a second later: another `date` (raw, not Huffman-coded).
fn next_second() -> Vec<u8> {
    let mut b = b"\x88\x76\x89\xaa\x63\x55\xe5\x80\xae\x21\x2e\x1f\x61\x1d".to_vec();
    b.extend_from_slice(b"Fri, 27 Nov 2026 22:51:34 GMT");
    b.extend_from_slice(b"\x5f\x87\x49\x7c\xa5\x8a\xe8\x19\xaa\x5c\x01\x35");
    b
}

/// Every dynamic index from 62 up to `n` entries on: past the table's end the crate
/// refuses it, so both decoders must agree on how many entries the table holds.
fn table_refs(n: u8) -> Vec<u8> {
    (0..n).map(|i| 0x80 | (62 + i)).collect()
}

type Outcome = Result<Vec<(Vec<u8>, Vec<u8>)>, (u32, &'static str)>;

fn outcome(d: &mut HeaderDecoder, block: &[u8]) -> Outcome {
    let mut got = Vec::new();
    d.decode(block, |n, v| got.push((n.to_vec(), v.to_vec())))
        .map(|()| got)
        .map_err(|e| (e.code.0, e.what))
}

/// Decodes `blocks` with a remembering decoder and the crate alone, block by block,
/// each outcome the same.
fn same_as_the_crate(blocks: &[Vec<u8>], table: u32) {
    let mut remembering = HeaderDecoder::remembering(table, 64 << 10);
    let mut plain = HeaderDecoder::new(table, 64 << 10);
    for (i, b) in blocks.iter().enumerate() {
        assert_eq!(
            outcome(&mut remembering, b),
            outcome(&mut plain, b),
            "block {i} of {}",
            blocks.len()
        );
    }
}

#[test]
fn a_repeated_block_is_handed_out_from_memory_and_owes_its_inserts() {
    let mut d = HeaderDecoder::remembering(4096, 64 << 10);
    let first = outcome(&mut d, NGINX).unwrap();
    let names: Vec<&[u8]> = first.iter().map(|(n, _)| &n[..]).collect();
    assert_eq!(
        names,
        [
            &b":status"[..],
            b"server",
            b"date",
            b"content-type",
            b"content-length"
        ]
    );
    assert_eq!(first[1].1, b"nginx/1.22.1");
    assert_eq!(first[4].1, b"5");
    for repeat in 1..=100 {
        assert_eq!(outcome(&mut d, NGINX).unwrap(), first);
        assert_eq!(d.repeats_owed(), repeat);
    }
    // Another block settles the debt.
    outcome(&mut d, &next_second()).unwrap();
    assert_eq!(d.repeats_owed(), 0);
    // A plain decoder remembers nothing.
    let mut plain = HeaderDecoder::new(4096, 64 << 10);
    for _ in 0..3 {
        outcome(&mut plain, NGINX).unwrap();
    }
    assert_eq!(plain.repeats_owed(), 0);
}

#[test]
fn the_table_after_repeats_is_the_crates_whatever_their_count() {
    // 0 to 40 repeats (the table of 4096 bytes holds 18 of nginx's 216-byte heads,
    // so 19 replays overflow it), then every entry referred to by index (62 to 126): the same
    // entries, or the same refusal one index past the end.
    let refs = table_refs(65);
    for repeats in [0, 1, 2, 5, 17, 18, 19, 20, 21, 40] {
        for table in [4096, 300, 100] {
            let mut blocks = vec![NGINX.to_vec(); repeats + 1];
            blocks.push(refs.clone());
            same_as_the_crate(&blocks, table);
            for n in [1, 4, 5, 9, 18, 19, 20, 40] {
                let mut blocks = vec![NGINX.to_vec(); repeats + 1];
                blocks.push(next_second());
                blocks.push(table_refs(n));
                same_as_the_crate(&blocks, table);
            }
        }
    }
}

#[test]
fn blocks_that_depend_on_the_table_are_never_remembered() {
    // A block naming a dynamic entry, repeated: its fields change as the table does
    // (each repeat inserts `x: 1` and refers to the newest entry), so each repeat
    // goes to the crate.
    let mut d = HeaderDecoder::remembering(4096, 64 << 10);
    let grows = b"\x40\x01x\x011\xbe".to_vec();
    for _ in 0..5 {
        outcome(&mut d, &grows).unwrap();
        assert_eq!(d.repeats_owed(), 0);
    }
    // A table size update between repeats of nginx's head, then the table read back;
    // a block over the cap of what is remembered; a block that fails.
    let shrink = b"\x3f\x81\x01\x88".to_vec(); // size 160, then :status 200
    let mut long = NGINX.to_vec();
    for _ in 0..60 {
        long.extend_from_slice(b"\x40\x03abc\x0512345");
    }
    let blocks = [
        NGINX.to_vec(),
        NGINX.to_vec(),
        shrink,
        NGINX.to_vec(),
        NGINX.to_vec(),
        table_refs(4),
        long.clone(),
        long,
        grows,
        b"\xc6\xc6\xc6\xc6\xc6\xc6\xc6\xc6\xc6\xc6\xff".to_vec(),
    ];
    same_as_the_crate(&blocks, 4096);
}

#[test]
fn a_repeat_past_the_list_cap_fails_as_the_first_did() {
    // A list cap below nginx's head (5 fields, 258 bytes): never remembered, every
    // decode refused alike.
    let mut d = HeaderDecoder::remembering(4096, 200);
    for _ in 0..3 {
        let e = d.decode(NGINX, |_, _| {}).unwrap_err();
        assert!(e.too_large);
        assert_eq!(d.repeats_owed(), 0);
    }
}
