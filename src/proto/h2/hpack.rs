//! Header blocks (RFC 9113 4.3, RFC 7541): assembled from a HEADERS or PUSH_PROMISE
//! frame and its CONTINUATION frames under a cap, decoded under a header-list-size
//! cap, and encoded.
//!
//! HPACK itself is the `httlib-hpack` crate. Compared on crates.io: `hpack` (0.3,
//! last released 2016) and its maintained forks `fluke-hpack`/`loona-hpack` (0.4,
//! 2024) build a 257-entry `HashMap` table for every Huffman-coded string and decode
//! it bit by bit (microseconds per string; nginx Huffman-codes its response
//! headers); `httlib-hpack` (0.1.3, 2021, quiet since but complete, with the RFC's
//! test vectors) decodes Huffman through generated multi-bit tables
//! (`httlib-huffman`). Its cost: every decoded name and value is an owned `Vec` (two
//! allocations per header field, the dynamic table's entries are owned anyway), and
//! its decoder takes a `Vec` it drains, so a block is copied once into the thread's scratch.
//! `h2`'s HPACK is not public. Encoding is stateless here (never indexed into the
//! dynamic table), so a block encoded once serves every request alike.

use super::error::{ErrorCode, FrameError};
use super::hpack_memo::Memo;
use httlib_hpack::{Decoder, Encoder};

/// Per header field, RFC 7541 4.1 adds 32 bytes to its name and value.
const FIELD_OVERHEAD: usize = 32;
/// Fields decoded per call of the crate, so the list size is checked as it grows.
const FIELDS_PER_STEP: usize = 4;

/// Where a header block stands between frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block<'a> {
    /// The block continues in CONTINUATION frames of `stream` (nothing else may come).
    Open,
    /// The whole block.
    Done(&'a [u8]),
}

/// Assembles header blocks split over CONTINUATION frames, keeping at most `cap`
/// bytes: a block that never ends costs `cap`, then `too_large`.
#[derive(Debug)]
pub struct Assembly {
    buf: Vec<u8>,
    /// The stream whose block is open, 0 when none is.
    stream: u32,
    cap: usize,
}

impl Assembly {
    pub fn new(cap: usize) -> Assembly {
        Assembly {
            buf: Vec::new(),
            stream: 0,
            cap,
        }
    }

    /// The stream whose block waits for CONTINUATION frames, if any: until it ends,
    /// any other frame is a PROTOCOL_ERROR (RFC 9113 6.10).
    #[inline]
    pub fn open(&self) -> Option<u32> {
        (self.stream != 0).then_some(self.stream)
    }

    /// A HEADERS or PUSH_PROMISE fragment. A whole block (END_HEADERS) is handed back
    /// as it lies in the frame, uncopied.
    pub fn first<'a>(
        &'a mut self,
        stream: u32,
        end: bool,
        fragment: &'a [u8],
    ) -> Result<Block<'a>, FrameError> {
        if self.stream != 0 {
            return Err(FrameError::protocol(
                "a header block interrupted by another frame",
            ));
        }
        if end {
            return Ok(Block::Done(fragment));
        }
        self.buf.clear();
        self.stream = stream;
        self.push(fragment)?;
        Ok(Block::Open)
    }

    /// A CONTINUATION fragment.
    pub fn more(
        &mut self,
        stream: u32,
        end: bool,
        fragment: &[u8],
    ) -> Result<Block<'_>, FrameError> {
        if self.stream == 0 || stream != self.stream {
            return Err(FrameError::protocol(
                "a CONTINUATION frame outside a header block",
            ));
        }
        self.push(fragment)?;
        if !end {
            return Ok(Block::Open);
        }
        self.stream = 0;
        Ok(Block::Done(&self.buf))
    }

    fn push(&mut self, fragment: &[u8]) -> Result<(), FrameError> {
        if self.buf.len() + fragment.len() > self.cap {
            self.buf = Vec::new();
            return Err(FrameError::too_large(
                ErrorCode::ENHANCE_YOUR_CALM,
                "a header block longer than its cap",
            ));
        }
        self.buf.extend_from_slice(fragment);
        Ok(())
    }
}

/// A decoded field as the crate hands it out: name, value, its flags.
type Field = (Vec<u8>, Vec<u8>, u8);

/// The buffers a decode works in: the block copied for the crate to drain, and the
/// fields of one step. They are the thread's, not the connection's: a decode never
/// spans two calls, and an idle connection (10,000 of them on a server) then holds
/// no decode buffers at all (about 270 bytes each when they were per connection).
struct DecodeScratch {
    block: Vec<u8>,
    fields: Vec<Field>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<DecodeScratch> =
        std::cell::RefCell::new(DecodeScratch {
            block: Vec::new(),
            fields: Vec::with_capacity(FIELDS_PER_STEP),
        });
}

/// One connection's HPACK decoder and the cap on a decoded header list.
pub struct HeaderDecoder {
    decoder: Decoder<'static>,
    max_list: usize,
    /// The last block and its fields, for a peer that repeats its header blocks
    /// (`remembering`): boxed, so a decoder without one stays small.
    memo: Option<Box<Memo>>,
}

impl HeaderDecoder {
    /// `table`: the SETTINGS_HEADER_TABLE_SIZE this side announced; `max_list`: the
    /// decoded size (RFC 7541 4.1) past which a block is `too_large`.
    pub fn new(table: u32, max_list: usize) -> HeaderDecoder {
        HeaderDecoder {
            decoder: Decoder::with_dynamic_size(table),
            max_list,
            memo: None,
        }
    }

    /// `new`, remembering the last block that decodes the same whatever the table
    /// holds (`hpack_memo.rs`): a client's, whose server sends one response head over
    /// and over. Its fields, and the table, are exactly what the crate would make.
    pub fn remembering(table: u32, max_list: usize) -> HeaderDecoder {
        HeaderDecoder {
            memo: Some(Box::default()),
            ..HeaderDecoder::new(table, max_list)
        }
    }

    /// Decodes a whole block, each field handed to `field(name, value)` in order. An
    /// error is a COMPRESSION_ERROR (the table can no longer be trusted: the
    /// connection ends), or `too_large` past the list cap.
    pub fn decode(
        &mut self,
        block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), FrameError> {
        if let Some(memo) = self.memo.as_deref_mut() {
            if memo.repeat(block) {
                memo.each(&mut field);
                return Ok(());
            }
        }
        if !super::hpack_walk::whole(block) {
            return Err(FrameError::compression(
                "an HPACK block with a field cut short",
            ));
        }
        SCRATCH.with(|scratch| {
            // `field` never decodes (it only reads the pair), so the borrow is never
            // taken twice; `try_borrow_mut` keeps that a failed decode, not a panic.
            let Ok(mut scratch) = scratch.try_borrow_mut() else {
                return Err(FrameError::compression("an HPACK decode inside a decode"));
            };
            let DecodeScratch {
                block: copy,
                fields,
            } = &mut *scratch;
            self.settle(copy, fields)?;
            if let Some(memo) = self.memo.as_deref_mut() {
                memo.start(block, super::hpack_walk::table_free(block));
            }
            copy.clear();
            copy.extend_from_slice(block);
            self.decode_copy(copy, fields, &mut field)?;
            if let Some(memo) = self.memo.as_deref_mut() {
                memo.finish(block);
            }
            Ok(())
        })
    }

    /// The repeats handed out from memory whose table inserts are still owed.
    #[cfg(test)]
    pub fn repeats_owed(&self) -> u32 {
        self.memo.as_deref().map_or(0, Memo::owed)
    }

    /// Makes the table inserts of the remembered block's repeats that change the
    /// table (`Memo::owed_replays`), by decoding its inserts again that many times.
    fn settle(&mut self, copy: &mut Vec<u8>, fields: &mut Vec<Field>) -> Result<(), FrameError> {
        let Some(memo) = self.memo.as_deref_mut() else {
            return Ok(());
        };
        let replays = memo.owed_replays(self.decoder.max_dynamic_size() as usize);
        for _ in 0..replays {
            copy.clear();
            copy.extend_from_slice(memo.replay());
            while !copy.is_empty() {
                fields.clear();
                self.decoder
                    .decode_exact(copy, fields)
                    .map_err(|e| FrameError::compression(decoder_words(&e)))?;
            }
        }
        Ok(())
    }

    /// `decode` of the block in `copy`, which the crate drains `FIELDS_PER_STEP`
    /// fields at a time into `fields`.
    fn decode_copy(
        &mut self,
        copy: &mut Vec<u8>,
        fields: &mut Vec<Field>,
        field: &mut impl FnMut(&[u8], &[u8]),
    ) -> Result<(), FrameError> {
        let mut list = 0usize;
        while !copy.is_empty() {
            fields.clear();
            self.decoder
                .decode_exact(copy, fields)
                .map_err(|e| FrameError::compression(decoder_words(&e)))?;
            for (name, value, flags) in fields.iter() {
                list += name.len() + value.len() + FIELD_OVERHEAD;
                if list > self.max_list {
                    return Err(FrameError::too_large(
                        ErrorCode::ENHANCE_YOUR_CALM,
                        "a header list longer than its cap",
                    ));
                }
                if let Some(memo) = self.memo.as_deref_mut() {
                    memo.record(name, value, flags & Decoder::WITH_INDEXING != 0);
                }
                field(name, value);
            }
        }
        Ok(())
    }
}

fn decoder_words(e: &httlib_hpack::DecoderError) -> &'static str {
    use httlib_hpack::DecoderError as E;
    match e {
        E::InvalidIndex => "an HPACK index out of range",
        E::InvalidMaxDynamicSize => "an HPACK table size over the announced one",
        E::IntegerOverflow | E::IntegerUnderflow => "an HPACK integer cut short or too long",
        E::InvalidInput | E::InvalidPrefix => "an HPACK block that does not decode",
    }
}

/// Encodes header fields (`(name, value)`, pseudo-headers first, names lower case)
/// into one block, without touching the dynamic table: a field of the static table
/// is its index, a name of it is indexed with a literal value, anything else is a
/// literal; Huffman-coded. The result depends on the fields alone.
pub fn encode(fields: &[(&[u8], &[u8])], out: &mut Vec<u8>) {
    let mut encoder = Encoder::with_dynamic_size(0);
    let flags = Encoder::BEST_FORMAT | Encoder::HUFFMAN_VALUE | Encoder::HUFFMAN_NAME;
    for (name, value) in fields {
        // Fails only on a table index its own lookup did not find, or on a byte
        // Huffman cannot code: neither happens (the code covers every octet).
        let done = encoder.encode((name.to_vec(), value.to_vec(), flags), out);
        debug_assert!(done.is_ok(), "HPACK encoding failed");
    }
}

/// `encode` of fields held as strings: a request's header block, made once a run.
pub fn encode_strings(fields: &[(String, String)]) -> Vec<u8> {
    let fields: Vec<(&[u8], &[u8])> = fields
        .iter()
        .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
        .collect();
    let mut block = Vec::new();
    encode(&fields, &mut block);
    block
}
