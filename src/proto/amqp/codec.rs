//! AMQP 0-9-1 framing, pure: split a byte stream into frames (or say Incomplete), parse
//! a method frame's payload, and write frames. Frame types, methods and their fields
//! come from the amq-protocol crate; nothing here is a hand-written method table.

use amq_protocol::frame::parsing::{parse_frame_type, parse_raw_frame};
use amq_protocol::frame::{gen_frame, AMQPFrame, AMQPFrameType, WriteContext};
use amq_protocol::protocol::{constants, metadata, parse_class, AMQPClass};
use amq_protocol::types::{AMQPValue, ChannelId, FieldTable, LongString};

/// The protocol header a 0-9-1 peer sends first (and a server answers a wrong one with).
pub const PROTOCOL_HEADER: [u8; 8] = [
    b'A',
    b'M',
    b'Q',
    b'P',
    0,
    metadata::MAJOR_VERSION,
    metadata::MINOR_VERSION,
    metadata::REVISION,
];

/// Type, channel and size before a frame's payload, and the frame-end octet after it.
pub const FRAME_HEADER_LEN: usize = 7;
pub const FRAME_OVERHEAD: usize = FRAME_HEADER_LEN + 1;

/// The spec's smallest frame-max (AMQP 0-9-1 section 4.2.3: "frame-min-size", 4096).
/// Until Tune/TuneOk no frame may be larger; a peer may not negotiate below it.
/// amq-protocol's own constant says 8192, which would refuse valid peers.
pub const FRAME_MIN_SIZE: u32 = 4096;

/// The negotiated frame-max: the smaller of the two offers, where 0 means "no limit".
pub fn negotiate_frame_max(ours: u32, theirs: u32) -> u32 {
    match (ours, theirs) {
        (0, t) => t,
        (o, 0) => o,
        (o, t) => o.min(t),
    }
}

/// Reply codes of the connection-level errors this crate raises (values from the spec).
pub mod reply {
    pub const SUCCESS: u16 = amq_protocol::protocol::constants::REPLY_SUCCESS;
    pub const ACCESS_REFUSED: u16 = 403;
    pub const FRAME_ERROR: u16 = 501;
    pub const SYNTAX_ERROR: u16 = 502;
    pub const COMMAND_INVALID: u16 = 503;
    pub const CHANNEL_ERROR: u16 = 504;
    pub const UNEXPECTED_FRAME: u16 = 505;
    pub const NOT_IMPLEMENTED: u16 = 540;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    Method,
    Header,
    Body,
    Heartbeat,
}

/// A protocol violation: the reply code and text of the Connection.Close it earns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub code: u16,
    pub text: &'static str,
    /// The class and method that caused it (0 when it is not a method).
    pub class_id: u16,
    pub method_id: u16,
}

impl Fault {
    pub const fn frame(code: u16, text: &'static str) -> Self {
        Fault {
            code,
            text,
            class_id: 0,
            method_id: 0,
        }
    }
}

/// One frame found at the start of the input.
#[derive(Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    pub kind: FrameKind,
    pub channel: ChannelId,
    pub payload: &'a [u8],
    /// Bytes of the input the whole frame takes.
    pub used: usize,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Split<'a> {
    /// Not a whole frame yet.
    Incomplete,
    Frame(Frame<'a>),
    /// Not a frame: the connection must be closed with this fault.
    Bad(Fault),
    /// A frame header announcing more than frame-max: refused (501) before its payload
    /// is buffered, so a peer cannot make the reader hold more than frame-max bytes.
    TooLarge(Fault),
}

/// Finds the frame at the start of `input`. A size above `frame_max` (the whole frame,
/// header and end octet included, as the spec counts it; 0 = no limit) is refused as
/// soon as the header shows it, so a hostile peer cannot make the reader buffer gigabytes.
pub fn split_frame(input: &[u8], frame_max: u32) -> Split<'_> {
    // The type octet alone already tells a protocol header or garbage from a frame (and
    // garbage is not to be read as a size).
    if let Some(&t) = input.first() {
        if let Some(f) = bad_type(t) {
            return Split::Bad(f);
        }
    }
    if input.len() < FRAME_HEADER_LEN {
        return Split::Incomplete;
    }
    let size = u32::from_be_bytes([input[3], input[4], input[5], input[6]]);
    let limit = if frame_max == 0 {
        u32::MAX
    } else {
        frame_max.max(FRAME_MIN_SIZE)
    };
    if size as u64 + FRAME_OVERHEAD as u64 > limit as u64 {
        return Split::TooLarge(Fault::frame(
            reply::FRAME_ERROR,
            "frame larger than frame_max",
        ));
    }
    let frame_type = match parse_frame_type(input) {
        Ok((_, t)) => t,
        Err(_) => return Split::Bad(Fault::frame(reply::FRAME_ERROR, "unknown frame type")),
    };
    let kind = match frame_type {
        AMQPFrameType::Method => FrameKind::Method,
        AMQPFrameType::Header => FrameKind::Header,
        AMQPFrameType::Body => FrameKind::Body,
        AMQPFrameType::Heartbeat => FrameKind::Heartbeat,
        AMQPFrameType::ProtocolHeader => {
            return Split::Bad(Fault::frame(
                reply::FRAME_ERROR,
                "protocol header in the middle of a connection",
            ))
        }
    };
    match parse_raw_frame(frame_type)(&input[1..]) {
        Ok((rest, raw)) => Split::Frame(Frame {
            kind,
            channel: raw.channel_id,
            payload: raw.payload,
            used: input.len() - rest.len(),
        }),
        Err(e) if e.is_incomplete() => Split::Incomplete,
        // The size was read above, so only the frame-end octet can be wrong here.
        Err(_) => Split::Bad(Fault::frame(reply::FRAME_ERROR, "frame end octet missing")),
    }
}

fn bad_type(t: u8) -> Option<Fault> {
    match t {
        constants::FRAME_METHOD
        | constants::FRAME_HEADER
        | constants::FRAME_BODY
        | constants::FRAME_HEARTBEAT => None,
        b'A' => Some(Fault::frame(
            reply::FRAME_ERROR,
            "protocol header in the middle of a connection",
        )),
        _ => Some(Fault::frame(reply::FRAME_ERROR, "unknown frame type")),
    }
}

/// Parses a method frame's payload. An unknown class or method earns 540 NOT_IMPLEMENTED;
/// a known method with bad arguments 502 SYNTAX_ERROR.
pub fn parse_method(payload: &[u8]) -> Result<AMQPClass, Fault> {
    let ids = method_ids(payload);
    let fault = |code, text| Fault {
        code,
        text,
        class_id: ids.0,
        method_id: ids.1,
    };
    if payload.len() < 4 {
        return Err(fault(
            reply::FRAME_ERROR,
            "method frame shorter than its ids",
        ));
    }
    match parse_class(payload) {
        Ok(([], m)) => Ok(m),
        Ok(_) => Err(fault(
            reply::SYNTAX_ERROR,
            "bytes left after the method's arguments",
        )),
        Err(_) if !is_known_method(ids.0, ids.1) => {
            Err(fault(reply::NOT_IMPLEMENTED, "unknown method"))
        }
        Err(_) => Err(fault(reply::SYNTAX_ERROR, "malformed method arguments")),
    }
}

/// The class and method ids at the start of a method payload (0 where missing).
pub fn method_ids(payload: &[u8]) -> (u16, u16) {
    let get = |i: usize| match payload.get(i..i + 2) {
        Some(b) => u16::from_be_bytes([b[0], b[1]]),
        None => 0,
    };
    (get(0), get(2))
}

/// Whether amq-protocol knows the method: arguments of all zero bytes are valid for
/// every method (empty strings and tables, zero numbers, false bits), so a parse of
/// such a probe fails only for an unknown class or method. Only run on the error path.
fn is_known_method(class_id: u16, method_id: u16) -> bool {
    let mut probe = [0u8; 96];
    probe[0..2].copy_from_slice(&class_id.to_be_bytes());
    probe[2..4].copy_from_slice(&method_id.to_be_bytes());
    parse_class(&probe[..]).is_ok()
}

/// Appends `frame` to `out` (amq-protocol's generator; writing to a Vec cannot fail).
pub fn write_frame(out: &mut Vec<u8>, frame: &AMQPFrame) {
    let buf = std::mem::take(out);
    let start = buf.len();
    let mut ctx = WriteContext::from(buf);
    // The generator measures lengths relative to where it starts.
    ctx.position = start as u64;
    match gen_frame(frame)(ctx) {
        Ok(ctx) => *out = ctx.write,
        // Only a full fixed-size buffer fails; a Vec grows. Kept as a clear panic-free path.
        Err(_) => debug_assert!(false, "writing a frame to a Vec failed"),
    }
}

/// Appends a method frame on `channel`.
pub fn write_method(out: &mut Vec<u8>, channel: ChannelId, method: AMQPClass) {
    write_frame(out, &AMQPFrame::Method(channel, method));
}

/// Appends `body` as content body frames on `channel`, each within `frame_max` (the
/// negotiated value; 0 = no limit, one frame). The spec allows any split, not an empty frame.
pub fn write_body(out: &mut Vec<u8>, channel: ChannelId, body: &[u8], frame_max: u32) {
    let chunk = match frame_max {
        0 => body.len().max(1),
        m => (m as usize).saturating_sub(FRAME_OVERHEAD).max(1),
    };
    for part in body.chunks(chunk) {
        write_frame(out, &AMQPFrame::Body(channel, part.to_vec()));
    }
}

/// The properties both ends announce in the handshake (the client's StartOk, the
/// broker's Start): product, version, and the given capabilities.
pub fn peer_properties(capabilities: FieldTable) -> FieldTable {
    let mut props = FieldTable::default();
    props.insert(
        "product".into(),
        AMQPValue::LongString(LongString::from("wirebench")),
    );
    props.insert(
        "version".into(),
        AMQPValue::LongString(LongString::from(env!("CARGO_PKG_VERSION"))),
    );
    props.insert("capabilities".into(), AMQPValue::FieldTable(capabilities));
    props
}

#[cfg(test)]
mod tests {
    use super::*;
    use amq_protocol::protocol::{basic, connection};

    fn heartbeat() -> Vec<u8> {
        let mut v = Vec::new();
        write_frame(&mut v, &AMQPFrame::Heartbeat(0));
        v
    }

    #[test]
    fn heartbeat_bytes_are_exact() {
        assert_eq!(heartbeat(), [8, 0, 0, 0, 0, 0, 0, 0xCE]);
    }

    #[test]
    fn write_frame_appends_after_existing_bytes() {
        let mut v = b"xyz".to_vec();
        write_method(
            &mut v,
            1,
            AMQPClass::Basic(basic::AMQPMethod::Ack(basic::Ack {
                delivery_tag: 7,
                multiple: true,
            })),
        );
        assert_eq!(
            v,
            [
                b'x', b'y', b'z', 1, 0, 1, 0, 0, 0, 13, 0, 60, 0, 80, 0, 0, 0, 0, 0, 0, 0, 7, 1,
                0xCE
            ]
        );
    }

    #[test]
    fn every_split_point_of_a_method_frame_is_incomplete_then_whole() {
        let mut v = Vec::new();
        write_method(
            &mut v,
            3,
            AMQPClass::Connection(connection::AMQPMethod::Close(connection::Close {
                reply_code: 200,
                reply_text: "bye".into(),
                class_id: 0,
                method_id: 0,
            })),
        );
        for cut in 0..v.len() {
            assert_eq!(
                split_frame(&v[..cut], 131072),
                Split::Incomplete,
                "cut {cut}"
            );
        }
        match split_frame(&v, 131072) {
            Split::Frame(f) => {
                assert_eq!((f.kind, f.channel, f.used), (FrameKind::Method, 3, v.len()));
                assert!(matches!(
                    parse_method(f.payload),
                    Ok(AMQPClass::Connection(connection::AMQPMethod::Close(_)))
                ));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_frames_are_frame_errors() {
        let mut hb = heartbeat();
        hb[7] = 0xCD;
        assert!(matches!(split_frame(&hb, 131072), Split::Bad(f) if f.code == 501));
        assert!(matches!(split_frame(&[9], 131072), Split::Bad(f) if f.code == 501));
        assert!(matches!(split_frame(b"AMQP", 131072), Split::Bad(f) if f.code == 501));
        // A size beyond frame_max is refused before its payload arrives.
        let big = [1, 0, 1, 0, 0x10, 0, 0];
        assert!(matches!(split_frame(&big, 131072), Split::TooLarge(f) if f.code == 501));
    }

    #[test]
    fn unknown_method_is_540_and_bad_arguments_502() {
        let f = parse_method(&[0, 60, 0, 99]).unwrap_err();
        assert_eq!((f.code, f.class_id, f.method_id), (540, 60, 99));
        let f = parse_method(&[0, 77, 0, 10]).unwrap_err();
        assert_eq!(f.code, 540);
        // Basic.Publish whose exchange name claims 200 bytes that are not there.
        let f = parse_method(&[0, 60, 0, 40, 0, 0, 200, b'x']).unwrap_err();
        assert_eq!((f.code, f.class_id, f.method_id), (502, 60, 40));
        // Channel.Open followed by junk.
        let f = parse_method(&[0, 20, 0, 10, 0, 1, 2, 3]).unwrap_err();
        assert_eq!(f.code, 502);
        assert_eq!(parse_method(&[0, 20]).unwrap_err().code, 501);
    }
}
