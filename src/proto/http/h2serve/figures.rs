//! What the HTTP/2 connections of a server thread counted: connections, streams
//! refused or reset by the client, and every connection closed with GOAWAY for
//! abuse, by its reason. Published per thread and merged exactly, as every server
//! figure is; `serve http` prints them on its `h2:` line.

use crate::stats::Figures;

/// Why a connection was closed with GOAWAY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A frame longer than the max frame size (16 KiB), refused from its header.
    FrameSize,
    /// A header block past its cap in bytes or in CONTINUATION frames.
    ContinuationFlood,
    /// A decoded header list past `--max-header`.
    HeaderList,
    /// A header block HPACK cannot decode (an index out of range, a table size
    /// over the announced one).
    Hpack,
    /// A stream id that is even, not above the last one, or names a stream never opened.
    StreamId,
    /// More RST_STREAM frames (or refused streams) than the connection's budget.
    RapidReset,
    /// A response waited on a flow-control window of 0 past `--h2-window-timeout`.
    WindowStall,
    /// DATA past the window this side gave, or a window past 2^31-1.
    FlowControl,
    /// Any other violation of RFC 9113 (a bad preface, a frame where none may be).
    Protocol,
    /// `serve grpc`: a message's length prefix past `--max-message` (counted with
    /// the bodies too large).
    MessageSize,
}

/// Counts of one server thread (or, merged, of the server).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct H2Figures {
    /// Connections that spoke HTTP/2.
    pub connections: u64,
    /// Streams refused (REFUSED_STREAM) past `--max-streams` open at once.
    pub refused: u64,
    /// RST_STREAM frames the clients sent.
    pub client_resets: u64,
    /// Echo streams reset for a body past `--max-body`.
    pub body_too_large: u64,
    pub frame_size: u64,
    pub continuation_flood: u64,
    pub header_list: u64,
    pub hpack: u64,
    pub stream_id: u64,
    pub rapid_reset: u64,
    pub window_stall: u64,
    pub flow_control: u64,
    pub protocol: u64,
}

impl H2Figures {
    /// A connection closed for `why`.
    pub fn closed(&mut self, why: Reason) {
        let n = match why {
            Reason::FrameSize => &mut self.frame_size,
            Reason::ContinuationFlood => &mut self.continuation_flood,
            Reason::HeaderList => &mut self.header_list,
            Reason::Hpack => &mut self.hpack,
            Reason::StreamId => &mut self.stream_id,
            Reason::RapidReset => &mut self.rapid_reset,
            Reason::WindowStall => &mut self.window_stall,
            Reason::FlowControl => &mut self.flow_control,
            Reason::Protocol => &mut self.protocol,
            Reason::MessageSize => &mut self.body_too_large,
        };
        *n += 1;
    }

    /// The `h2:` line of `serve http`, once a connection spoke HTTP/2.
    pub fn line(&self) -> Option<String> {
        if *self == H2Figures::default() {
            return None;
        }
        Some(format!(
            "h2: connections {} refused {} client_resets {} body_too_large {} | goaway: frame_size {} continuation_flood {} header_list {} hpack {} stream_id {} rapid_reset {} window_stall {} flow_control {} protocol {}",
            self.connections,
            self.refused,
            self.client_resets,
            self.body_too_large,
            self.frame_size,
            self.continuation_flood,
            self.header_list,
            self.hpack,
            self.stream_id,
            self.rapid_reset,
            self.window_stall,
            self.flow_control,
            self.protocol
        ))
    }
}

impl Figures for H2Figures {
    fn merge(&mut self, o: &Self) {
        self.connections += o.connections;
        self.refused += o.refused;
        self.client_resets += o.client_resets;
        self.body_too_large += o.body_too_large;
        self.frame_size += o.frame_size;
        self.continuation_flood += o.continuation_flood;
        self.header_list += o.header_list;
        self.hpack += o.hpack;
        self.stream_id += o.stream_id;
        self.rapid_reset += o.rapid_reset;
        self.window_stall += o.window_stall;
        self.flow_control += o.flow_control;
        self.protocol += o.protocol;
    }
}
