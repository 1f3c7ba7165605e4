//! SETTINGS parameters (RFC 9113 6.5.2): the values in force for one side of a
//! connection, updated from a SETTINGS frame's payload with the RFC's checks.

use super::error::FrameError;
use super::frame::{DEFAULT_MAX_FRAME, MAX_FRAME_CEILING, MAX_STREAM_ID};

pub const HEADER_TABLE_SIZE: u16 = 0x1;
pub const ENABLE_PUSH: u16 = 0x2;
pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const MAX_FRAME_SIZE: u16 = 0x5;
pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;

/// The initial flow-control window of every stream and of the connection.
pub const DEFAULT_WINDOW: u32 = 65_535;

/// What one side announced (the RFC's initial values until a SETTINGS says more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    pub header_table_size: u32,
    pub enable_push: bool,
    /// `u32::MAX` when the peer set no limit.
    pub max_concurrent_streams: u32,
    pub initial_window_size: u32,
    pub max_frame_size: u32,
    /// `u32::MAX` when the peer set no limit.
    pub max_header_list_size: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            header_table_size: 4096,
            enable_push: true,
            max_concurrent_streams: u32::MAX,
            initial_window_size: DEFAULT_WINDOW,
            max_frame_size: DEFAULT_MAX_FRAME,
            max_header_list_size: u32::MAX,
        }
    }
}

/// The (identifier, value) pairs of a SETTINGS payload (a multiple of 6 bytes, as
/// `frame::parse` checked).
pub fn params(payload: &[u8]) -> impl Iterator<Item = (u16, u32)> + '_ {
    payload.chunks_exact(6).map(|p| {
        (
            u16::from_be_bytes([p[0], p[1]]),
            u32::from_be_bytes([p[2], p[3], p[4], p[5]]),
        )
    })
}

impl Settings {
    /// Applies a SETTINGS payload in order. Returns by how much INITIAL_WINDOW_SIZE
    /// moved (every open stream's send window moves by as much, RFC 9113 6.9.2).
    /// Unknown identifiers are ignored (RFC 9113 6.5.2).
    pub fn apply(&mut self, payload: &[u8]) -> Result<i64, FrameError> {
        let before = self.initial_window_size;
        for (id, value) in params(payload) {
            match id {
                HEADER_TABLE_SIZE => self.header_table_size = value,
                ENABLE_PUSH => {
                    self.enable_push = match value {
                        0 => false,
                        1 => true,
                        _ => return Err(FrameError::protocol("SETTINGS_ENABLE_PUSH not 0 or 1")),
                    }
                }
                MAX_CONCURRENT_STREAMS => self.max_concurrent_streams = value,
                INITIAL_WINDOW_SIZE => {
                    if value > MAX_STREAM_ID {
                        return Err(FrameError::flow("SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1"));
                    }
                    self.initial_window_size = value;
                }
                MAX_FRAME_SIZE => {
                    if !(DEFAULT_MAX_FRAME..=MAX_FRAME_CEILING).contains(&value) {
                        return Err(FrameError::protocol(
                            "SETTINGS_MAX_FRAME_SIZE outside 16384..16777215",
                        ));
                    }
                    self.max_frame_size = value;
                }
                MAX_HEADER_LIST_SIZE => self.max_header_list_size = value,
                _ => {}
            }
        }
        Ok(i64::from(self.initial_window_size) - i64::from(before))
    }
}
