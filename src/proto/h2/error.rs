//! Error codes (RFC 9113 section 7) and what the codec refuses.

/// An HTTP/2 error code, as RST_STREAM and GOAWAY carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorCode(pub u32);

impl ErrorCode {
    pub const NO_ERROR: ErrorCode = ErrorCode(0x0);
    pub const PROTOCOL_ERROR: ErrorCode = ErrorCode(0x1);
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(0x2);
    pub const FLOW_CONTROL_ERROR: ErrorCode = ErrorCode(0x3);
    pub const SETTINGS_TIMEOUT: ErrorCode = ErrorCode(0x4);
    pub const STREAM_CLOSED: ErrorCode = ErrorCode(0x5);
    pub const FRAME_SIZE_ERROR: ErrorCode = ErrorCode(0x6);
    pub const REFUSED_STREAM: ErrorCode = ErrorCode(0x7);
    pub const CANCEL: ErrorCode = ErrorCode(0x8);
    pub const COMPRESSION_ERROR: ErrorCode = ErrorCode(0x9);
    pub const CONNECT_ERROR: ErrorCode = ErrorCode(0xa);
    pub const ENHANCE_YOUR_CALM: ErrorCode = ErrorCode(0xb);
    pub const INADEQUATE_SECURITY: ErrorCode = ErrorCode(0xc);
    pub const HTTP_1_1_REQUIRED: ErrorCode = ErrorCode(0xd);

    /// The code's name as the RFC spells it; codes it does not define (which a peer
    /// may send, RFC 9113 7) read as `unknown`.
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 14] = [
            "NO_ERROR",
            "PROTOCOL_ERROR",
            "INTERNAL_ERROR",
            "FLOW_CONTROL_ERROR",
            "SETTINGS_TIMEOUT",
            "STREAM_CLOSED",
            "FRAME_SIZE_ERROR",
            "REFUSED_STREAM",
            "CANCEL",
            "COMPRESSION_ERROR",
            "CONNECT_ERROR",
            "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY",
            "HTTP_1_1_REQUIRED",
        ];
        NAMES.get(self.0 as usize).copied().unwrap_or("unknown")
    }
}

/// Why the codec refused the peer's bytes: the connection error to send in GOAWAY
/// (`code`) and one phrase for the user (`what`). `too_large` marks a cap the peer
/// went past (a frame over the max frame size, a header block or list over its cap),
/// which a client counts as `too_large` rather than `protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameError {
    pub code: ErrorCode,
    pub too_large: bool,
    pub what: &'static str,
}

impl FrameError {
    pub const fn protocol(what: &'static str) -> FrameError {
        FrameError {
            code: ErrorCode::PROTOCOL_ERROR,
            too_large: false,
            what,
        }
    }

    pub const fn frame_size(what: &'static str) -> FrameError {
        FrameError {
            code: ErrorCode::FRAME_SIZE_ERROR,
            too_large: false,
            what,
        }
    }

    pub const fn flow(what: &'static str) -> FrameError {
        FrameError {
            code: ErrorCode::FLOW_CONTROL_ERROR,
            too_large: false,
            what,
        }
    }

    pub const fn compression(what: &'static str) -> FrameError {
        FrameError {
            code: ErrorCode::COMPRESSION_ERROR,
            too_large: false,
            what,
        }
    }

    /// The peer went past one of our caps.
    pub const fn too_large(code: ErrorCode, what: &'static str) -> FrameError {
        FrameError {
            code,
            too_large: true,
            what,
        }
    }
}
