//! Frames (RFC 9113 section 4 and 6), parsed from the start of a buffer. The payload
//! is borrowed, never copied; padding is stripped (its length still counts against
//! flow control: `Frame::Data::flow_len`). A frame's length is checked against the
//! receiver's max frame size from the 9-byte header alone.
//!
//! ```text
//! length(24) | type(8) | flags(8) | R(1) stream id(31) | payload(length)
//! ```

use super::error::{ErrorCode, FrameError};

/// What a client sends before anything else (RFC 9113 3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Bytes of a frame header.
pub const HEADER_LEN: usize = 9;
/// SETTINGS_MAX_FRAME_SIZE's initial value and its floor.
pub const DEFAULT_MAX_FRAME: u32 = 16_384;
/// SETTINGS_MAX_FRAME_SIZE's ceiling, 2^24 - 1.
pub const MAX_FRAME_CEILING: u32 = (1 << 24) - 1;
/// Largest stream id and window, 2^31 - 1.
pub const MAX_STREAM_ID: u32 = (1 << 31) - 1;

/// Frame types.
pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

/// Flags (each meaningful on the frame types the RFC gives it).
pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY_FLAG: u8 = 0x20;

/// A frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub len: u32,
    pub kind: u8,
    pub flags: u8,
    /// The stream id, the reserved bit cleared.
    pub stream: u32,
}

impl FrameHeader {
    /// The header at the start of `input`, once its 9 bytes are there.
    #[inline]
    pub fn read(input: &[u8]) -> Option<FrameHeader> {
        let h: &[u8; HEADER_LEN] = input.get(..HEADER_LEN)?.try_into().ok()?;
        Some(FrameHeader {
            len: u32::from_be_bytes([0, h[0], h[1], h[2]]),
            kind: h[3],
            flags: h[4],
            stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & MAX_STREAM_ID,
        })
    }

    #[inline]
    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// A HEADERS frame's priority fields (RFC 9113 6.2; deprecated, parsed and ignored).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrioritySpec {
    pub exclusive: bool,
    pub depends_on: u32,
    pub weight: u8,
}

/// A whole frame, its payload borrowed from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    Data {
        stream: u32,
        end_stream: bool,
        data: &'a [u8],
        /// The whole payload, padding included: what flow control counts.
        flow_len: u32,
    },
    Headers {
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        priority: Option<PrioritySpec>,
        block: &'a [u8],
    },
    Priority {
        stream: u32,
        spec: PrioritySpec,
    },
    RstStream {
        stream: u32,
        code: u32,
    },
    /// `params`: the payload, six bytes per parameter (`settings::params`).
    Settings {
        ack: bool,
        params: &'a [u8],
    },
    PushPromise {
        stream: u32,
        promised: u32,
        end_headers: bool,
        block: &'a [u8],
    },
    Ping {
        ack: bool,
        data: [u8; 8],
    },
    GoAway {
        last_stream: u32,
        code: u32,
        debug: &'a [u8],
    },
    WindowUpdate {
        stream: u32,
        increment: u32,
    },
    Continuation {
        stream: u32,
        end_headers: bool,
        block: &'a [u8],
    },
    /// A type this codec does not know: ignored, as RFC 9113 5.5 says.
    Unknown {
        kind: u8,
        stream: u32,
    },
}

/// What `parse` found at the start of its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed<'a> {
    /// Not a whole frame yet.
    Incomplete,
    /// A whole frame of `used` bytes (header and payload).
    Frame(Frame<'a>, usize),
}

/// Parses the frame at the start of `input`. A payload longer than `max_frame` (the
/// SETTINGS_MAX_FRAME_SIZE this side announced) is refused as soon as the header is
/// whole; a frame the RFC calls malformed is the connection error it names.
pub fn parse(input: &[u8], max_frame: u32) -> Result<Parsed<'_>, FrameError> {
    let Some(h) = FrameHeader::read(input) else {
        return Ok(Parsed::Incomplete);
    };
    if h.len > max_frame {
        return Err(FrameError::too_large(
            ErrorCode::FRAME_SIZE_ERROR,
            "a frame longer than the max frame size",
        ));
    }
    let used = HEADER_LEN + h.len as usize;
    let Some(payload) = input.get(HEADER_LEN..used) else {
        return Ok(Parsed::Incomplete);
    };
    Ok(Parsed::Frame(payload_of(h, payload)?, used))
}

/// The frame of header `h` and its whole `payload`.
pub fn payload_of(h: FrameHeader, payload: &[u8]) -> Result<Frame<'_>, FrameError> {
    let s = h.stream;
    let frame = match h.kind {
        DATA => {
            on_stream(s, "a DATA frame on stream 0")?;
            Frame::Data {
                stream: s,
                end_stream: h.has(END_STREAM),
                data: unpadded(h, payload)?,
                flow_len: h.len,
            }
        }
        HEADERS => {
            on_stream(s, "a HEADERS frame on stream 0")?;
            let mut block = unpadded(h, payload)?;
            let priority = if h.has(PRIORITY_FLAG) {
                let (spec, rest) = priority_spec(block).ok_or(FrameError::frame_size(
                    "a HEADERS frame too short for its priority",
                ))?;
                block = rest;
                Some(spec)
            } else {
                None
            };
            Frame::Headers {
                stream: s,
                end_stream: h.has(END_STREAM),
                end_headers: h.has(END_HEADERS),
                priority,
                block,
            }
        }
        PRIORITY => {
            on_stream(s, "a PRIORITY frame on stream 0")?;
            match priority_spec(payload) {
                Some((spec, [])) => Frame::Priority { stream: s, spec },
                _ => return Err(FrameError::frame_size("a PRIORITY frame not 5 bytes long")),
            }
        }
        RST_STREAM => {
            on_stream(s, "an RST_STREAM frame on stream 0")?;
            Frame::RstStream {
                stream: s,
                code: be32(payload).ok_or(FrameError::frame_size(
                    "an RST_STREAM frame not 4 bytes long",
                ))?,
            }
        }
        SETTINGS => settings(h, payload)?,
        PUSH_PROMISE => {
            on_stream(s, "a PUSH_PROMISE frame on stream 0")?;
            let rest = unpadded(h, payload)?;
            let promised = rest
                .get(..4)
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & MAX_STREAM_ID)
                .ok_or(FrameError::frame_size(
                    "a PUSH_PROMISE frame too short for its stream id",
                ))?;
            Frame::PushPromise {
                stream: s,
                promised,
                end_headers: h.has(END_HEADERS),
                block: &rest[4..],
            }
        }
        PING => {
            on_connection(s, "a PING frame on a stream")?;
            let data: [u8; 8] = payload
                .try_into()
                .map_err(|_| FrameError::frame_size("a PING frame not 8 bytes long"))?;
            Frame::Ping {
                ack: h.has(ACK),
                data,
            }
        }
        GOAWAY => {
            on_connection(s, "a GOAWAY frame on a stream")?;
            let too_short = FrameError::frame_size("a GOAWAY frame shorter than 8 bytes");
            let last = payload.get(..4).and_then(be32).ok_or(too_short)?;
            let code = payload.get(4..8).and_then(be32).ok_or(too_short)?;
            Frame::GoAway {
                last_stream: last & MAX_STREAM_ID,
                code,
                debug: &payload[8..],
            }
        }
        WINDOW_UPDATE => {
            let increment = be32(payload).ok_or(FrameError::frame_size(
                "a WINDOW_UPDATE frame not 4 bytes long",
            ))? & MAX_STREAM_ID;
            if increment == 0 {
                return Err(FrameError::protocol("a WINDOW_UPDATE of 0"));
            }
            Frame::WindowUpdate {
                stream: s,
                increment,
            }
        }
        CONTINUATION => {
            on_stream(s, "a CONTINUATION frame on stream 0")?;
            Frame::Continuation {
                stream: s,
                end_headers: h.has(END_HEADERS),
                block: payload,
            }
        }
        kind => Frame::Unknown { kind, stream: s },
    };
    Ok(frame)
}

fn settings(h: FrameHeader, payload: &[u8]) -> Result<Frame<'_>, FrameError> {
    on_connection(h.stream, "a SETTINGS frame on a stream")?;
    let ack = h.has(ACK);
    if ack && !payload.is_empty() {
        return Err(FrameError::frame_size(
            "a SETTINGS acknowledgement with a payload",
        ));
    }
    if payload.len() % 6 != 0 {
        return Err(FrameError::frame_size(
            "a SETTINGS frame not a multiple of 6 bytes",
        ));
    }
    Ok(Frame::Settings {
        ack,
        params: payload,
    })
}

#[inline]
fn on_stream(stream: u32, what: &'static str) -> Result<(), FrameError> {
    if stream == 0 {
        return Err(FrameError::protocol(what));
    }
    Ok(())
}

#[inline]
fn on_connection(stream: u32, what: &'static str) -> Result<(), FrameError> {
    if stream != 0 {
        return Err(FrameError::protocol(what));
    }
    Ok(())
}

/// The payload without its pad length byte and padding, when PADDED is set.
#[inline]
fn unpadded(h: FrameHeader, payload: &[u8]) -> Result<&[u8], FrameError> {
    if !h.has(PADDED) {
        return Ok(payload);
    }
    let bad = FrameError::protocol("padding as long as the frame");
    let (&pad, rest) = payload.split_first().ok_or(bad)?;
    let keep = rest.len().checked_sub(pad as usize).ok_or(bad)?;
    Ok(&rest[..keep])
}

fn priority_spec(b: &[u8]) -> Option<(PrioritySpec, &[u8])> {
    let dep = u32::from_be_bytes(b.get(..4)?.try_into().ok()?);
    let weight = *b.get(4)?;
    Some((
        PrioritySpec {
            exclusive: dep >> 31 == 1,
            depends_on: dep & MAX_STREAM_ID,
            weight,
        },
        &b[5..],
    ))
}

#[inline]
fn be32(b: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(b.try_into().ok()?))
}
