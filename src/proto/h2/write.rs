//! Frames written: each function appends one frame (or, for a header block longer
//! than the peer's max frame size, HEADERS or PUSH_PROMISE and its CONTINUATION
//! frames) to `out`. Nothing here pads; lengths are the caller's to keep under the
//! peer's SETTINGS_MAX_FRAME_SIZE (`data` splits nothing: one call, one frame).

use super::frame::{
    FrameHeader, PrioritySpec, ACK, CONTINUATION, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS,
    HEADER_LEN, PING, PRIORITY, PRIORITY_FLAG, PUSH_PROMISE, RST_STREAM, SETTINGS, WINDOW_UPDATE,
};

/// Appends a frame header.
#[inline]
pub fn header(out: &mut Vec<u8>, h: FrameHeader) {
    let l = h.len.to_be_bytes();
    let s = h.stream.to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], h.kind, h.flags, s[0], s[1], s[2], s[3]]);
}

#[inline]
fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    header(
        out,
        FrameHeader {
            len: payload.len() as u32,
            kind,
            flags,
            stream,
        },
    );
    out.extend_from_slice(payload);
}

/// One DATA frame.
#[inline]
pub fn data(out: &mut Vec<u8>, stream: u32, end_stream: bool, payload: &[u8]) {
    let flags = if end_stream { END_STREAM } else { 0 };
    frame(out, DATA, flags, stream, payload);
}

/// The header of one DATA frame of `len` bytes, for a payload the caller appends.
#[inline]
pub fn data_header(out: &mut Vec<u8>, stream: u32, end_stream: bool, len: usize) {
    let flags = if end_stream { END_STREAM } else { 0 };
    header(
        out,
        FrameHeader {
            len: len as u32,
            kind: DATA,
            flags,
            stream,
        },
    );
}

/// A header block as HEADERS and as many CONTINUATION frames as `max_frame` needs.
pub fn headers(out: &mut Vec<u8>, stream: u32, end_stream: bool, block: &[u8], max_frame: u32) {
    let flags = if end_stream { END_STREAM } else { 0 };
    block_frames(out, HEADERS, flags, stream, &[], block, max_frame);
}

/// HEADERS with the (deprecated) priority fields.
pub fn headers_with_priority(
    out: &mut Vec<u8>,
    stream: u32,
    end_stream: bool,
    spec: PrioritySpec,
    block: &[u8],
    max_frame: u32,
) {
    let flags = PRIORITY_FLAG | if end_stream { END_STREAM } else { 0 };
    let lead = priority_bytes(spec);
    block_frames(out, HEADERS, flags, stream, &lead, block, max_frame);
}

/// PUSH_PROMISE for `promised`, with CONTINUATION frames as `max_frame` needs.
pub fn push_promise(out: &mut Vec<u8>, stream: u32, promised: u32, block: &[u8], max_frame: u32) {
    let lead = promised.to_be_bytes();
    block_frames(out, PUSH_PROMISE, 0, stream, &lead, block, max_frame);
}

/// The first frame carries `lead` then as much of `block` as fits; END_HEADERS goes
/// on the last frame.
fn block_frames(
    out: &mut Vec<u8>,
    kind: u8,
    flags: u8,
    stream: u32,
    lead: &[u8],
    block: &[u8],
    max_frame: u32,
) {
    let max = (max_frame as usize).max(lead.len() + 1);
    let first = block.len().min(max - lead.len());
    let (head, mut rest) = block.split_at(first);
    let end = if rest.is_empty() { END_HEADERS } else { 0 };
    header(
        out,
        FrameHeader {
            len: (lead.len() + head.len()) as u32,
            kind,
            flags: flags | end,
            stream,
        },
    );
    out.extend_from_slice(lead);
    out.extend_from_slice(head);
    while !rest.is_empty() {
        let (piece, after) = rest.split_at(rest.len().min(max));
        rest = after;
        let end = if rest.is_empty() { END_HEADERS } else { 0 };
        frame(out, CONTINUATION, end, stream, piece);
    }
}

/// One CONTINUATION frame (a peer's own split; `headers` splits by itself).
pub fn continuation(out: &mut Vec<u8>, stream: u32, end_headers: bool, block: &[u8]) {
    let flags = if end_headers { END_HEADERS } else { 0 };
    frame(out, CONTINUATION, flags, stream, block);
}

fn priority_bytes(spec: PrioritySpec) -> [u8; 5] {
    let dep = spec.depends_on | if spec.exclusive { 1 << 31 } else { 0 };
    let d = dep.to_be_bytes();
    [d[0], d[1], d[2], d[3], spec.weight]
}

/// PRIORITY.
pub fn priority(out: &mut Vec<u8>, stream: u32, spec: PrioritySpec) {
    frame(out, PRIORITY, 0, stream, &priority_bytes(spec));
}

/// RST_STREAM with `code`.
pub fn rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    frame(out, RST_STREAM, 0, stream, &code.to_be_bytes());
}

/// SETTINGS with these (identifier, value) parameters, in order.
pub fn settings(out: &mut Vec<u8>, params: &[(u16, u32)]) {
    header(
        out,
        FrameHeader {
            len: (params.len() * 6) as u32,
            kind: SETTINGS,
            flags: 0,
            stream: 0,
        },
    );
    for (id, value) in params {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// The SETTINGS acknowledgement.
pub fn settings_ack(out: &mut Vec<u8>) {
    frame(out, SETTINGS, ACK, 0, &[]);
}

/// PING (or, with `ack`, its answer carrying the same 8 bytes).
pub fn ping(out: &mut Vec<u8>, ack: bool, data: [u8; 8]) {
    frame(out, PING, if ack { ACK } else { 0 }, 0, &data);
}

/// GOAWAY: the last stream this side processed, the code and debug bytes.
pub fn goaway(out: &mut Vec<u8>, last_stream: u32, code: u32, debug: &[u8]) {
    header(
        out,
        FrameHeader {
            len: (8 + debug.len()) as u32,
            kind: GOAWAY,
            flags: 0,
            stream: 0,
        },
    );
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
    out.extend_from_slice(debug);
}

/// WINDOW_UPDATE for a stream (0: the connection).
pub fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    frame(out, WINDOW_UPDATE, 0, stream, &increment.to_be_bytes());
}

/// Bytes a frame header takes, for callers sizing their output.
pub const FRAME_OVERHEAD: usize = HEADER_LEN;
