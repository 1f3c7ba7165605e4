//! Flow control (RFC 9113 5.2 and 6.9) as bookkeeping: how much one may send, and
//! when to give the peer more room. Pure values: the session decides what to write.

use super::error::FrameError;
use super::frame::MAX_STREAM_ID;

/// A send window: what the peer lets this side send on a stream or the connection.
/// It may go below zero when the peer lowers SETTINGS_INITIAL_WINDOW_SIZE (6.9.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWindow(i64);

impl SendWindow {
    pub fn new(size: u32) -> SendWindow {
        SendWindow(i64::from(size))
    }

    /// Bytes that may go now.
    #[inline]
    pub fn available(self) -> usize {
        self.0.max(0) as usize
    }

    /// `n` bytes of DATA sent (at most `available`).
    #[inline]
    pub fn take(&mut self, n: usize) {
        debug_assert!(n <= self.available());
        self.0 -= n as i64;
    }

    /// A WINDOW_UPDATE: a window past 2^31-1 is a FLOW_CONTROL_ERROR.
    #[inline]
    pub fn grow(&mut self, increment: u32) -> Result<(), FrameError> {
        self.shift(i64::from(increment))
    }

    /// SETTINGS_INITIAL_WINDOW_SIZE moved by `delta` (`Settings::apply`).
    pub fn shift(&mut self, delta: i64) -> Result<(), FrameError> {
        let next = self.0 + delta;
        if next > i64::from(MAX_STREAM_ID) {
            return Err(FrameError::flow("a flow-control window over 2^31-1"));
        }
        self.0 = next;
        Ok(())
    }
}

/// A receive window: the room this side gave the peer, and what it has read since
/// it last gave more. Room is given back once half the window is used, so a peer
/// sending a large body never waits on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvWindow {
    /// The room this side keeps offering.
    size: u32,
    /// Room the peer still has.
    left: u32,
}

impl RecvWindow {
    pub fn new(size: u32) -> RecvWindow {
        RecvWindow { size, left: size }
    }

    /// The peer sent `n` flow-controlled bytes: more than it had room for is a
    /// FLOW_CONTROL_ERROR.
    #[inline]
    pub fn receive(&mut self, n: u32) -> Result<(), FrameError> {
        self.left = self
            .left
            .checked_sub(n)
            .ok_or(FrameError::flow("DATA past the flow-control window"))?;
        Ok(())
    }

    /// The WINDOW_UPDATE increment to send now, when half the window is used.
    #[inline]
    pub fn credit(&mut self) -> Option<u32> {
        let used = self.size - self.left;
        if used == 0 || used < self.size / 2 {
            return None;
        }
        self.left = self.size;
        Some(used)
    }

    /// Offers more room than the RFC's initial 65,535 bytes (the connection's window
    /// moves only by WINDOW_UPDATE): the increment to send, if any.
    pub fn raise(&mut self, size: u32) -> Option<u32> {
        let inc = size.checked_sub(self.size).filter(|&i| i > 0)?;
        self.size = size;
        self.left += inc;
        Some(inc)
    }

    /// The room offered, for a SETTINGS_INITIAL_WINDOW_SIZE.
    pub fn size(self) -> u32 {
        self.size
    }

    /// Room the peer has now.
    pub fn left(self) -> u32 {
        self.left
    }
}
