//! What the load engine's slots keep for the io_uring loop (`reactor::uring_loop`):
//! per slot, which receive or poll is armed for which connection, and its send buffer,
//! lent to the kernel from a SEND's submission to its completion (the bytes encoded
//! meanwhile wait in `queued` and go with the next SEND). Submissions are queued here
//! and go at the turn's one `io_uring_enter`.
//!
//! Receives are multishot into the reactor's provided buffers: an idle connection owns
//! no receive buffer. A closed socket's armed receive or poll is cancelled by its
//! user_data (never by descriptor: the number is reused by the slot's next socket at
//! once), so the kernel lets go of the socket at the end of the turn.

use super::limits::MAX_READ_BUFFER;
use crate::reactor::uring_loop::{user_data, BGID, GEN_MASK, IGNORE, OWN, RECV, SEND};

/// The load loop's receive buffers (a power of two) and their size: a turn gives back
/// every buffer it was handed, so this bounds one turn's receives, not the connections
/// (a dry ring ends a receive with ENOBUFS; the slot re-arms it).
pub const BUFFERS: u16 = 1024;
pub const BUFFER_SIZE: usize = 8 * 1024;
/// Room a slot's send buffer keeps once its SEND is done: what a burst grew past it
/// goes back to the allocator.
const KEEP_ROOM: usize = 256 * 1024;
use crate::stats::ErrorKind;
use io_uring::{opcode, squeue, types};

#[derive(Default)]
struct SlotIo {
    /// The generation whose multishot receive is armed.
    recv: Option<u32>,
    /// The generation whose connect poll is armed.
    poll: Option<u32>,
    /// A SEND from `out[off..]` is with the kernel (for generation `send_gen`).
    sending: bool,
    send_gen: u32,
    out: Vec<u8>,
    off: usize,
    /// Encoded while a SEND was out: goes with the next one. Capped at MAX_READ_BUFFER
    /// (a peer that reads nothing fails the connection as `too_large`).
    queued: Vec<u8>,
}

pub struct UringSlots {
    pub sqes: Vec<squeue::Entry>,
    slots: Vec<SlotIo>,
}

impl UringSlots {
    pub fn new(n: usize) -> UringSlots {
        UringSlots {
            sqes: Vec::with_capacity(2 * n + 16),
            slots: (0..n).map(|_| SlotIo::default()).collect(),
        }
    }

    /// A connecting socket: its completion comes as a poll (writable, or an error).
    pub fn arm_poll(&mut self, slot: u32, gen: u32, fd: i32) {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return;
        };
        s.poll = Some(gen & GEN_MASK);
        let mask = (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) as u32
            | libc::EPOLLRDHUP as u32
            | libc::POLLIN as u32;
        self.sqes.push(
            opcode::PollAdd::new(types::Fd(fd), mask)
                .build()
                .user_data(user_data(OWN, slot, gen)),
        );
    }

    pub fn poll_ended(&mut self, slot: u32, gen: u32) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            if s.poll == Some(gen) {
                s.poll = None;
            }
        }
    }

    /// A connected socket: its bytes come as receive completions from now on.
    pub fn arm_recv(&mut self, slot: u32, gen: u32, fd: i32) {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return;
        };
        s.recv = Some(gen & GEN_MASK);
        self.sqes.push(
            opcode::RecvMulti::new(types::Fd(fd), BGID)
                .build()
                .user_data(user_data(RECV, slot, gen)),
        );
    }

    /// The multishot receive of (slot, gen) ended (its last completion).
    pub fn recv_ended(&mut self, slot: u32, gen: u32) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            if s.recv == Some(gen) {
                s.recv = None;
            }
        }
    }

    /// Bytes the slot keeps waiting behind its SEND (their room): its part of the
    /// worker's kept bytes. The SEND's own bytes are one write's, already bounded.
    #[inline]
    pub fn held(&self, slot: u32) -> usize {
        self.slots
            .get(slot as usize)
            .map_or(0, |s| s.queued.capacity())
    }

    /// Whether everything the slot wrote went to the kernel: no SEND out, nothing queued.
    pub fn idle(&self, slot: u32) -> bool {
        self.slots
            .get(slot as usize)
            .map_or(true, |s| !s.sending && s.queued.is_empty())
    }

    /// Whether (slot, gen)'s receive is armed.
    pub fn receiving(&self, slot: u32, gen: u32) -> bool {
        self.slots
            .get(slot as usize)
            .is_some_and(|s| s.recv == Some(gen & GEN_MASK))
    }

    /// The slot's socket is being closed: what is armed on it is cancelled, what was
    /// queued for it is dropped (a SEND with the kernel completes on its own).
    pub fn forget(&mut self, slot: u32, gen: u32) {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return;
        };
        let gen = gen & GEN_MASK;
        for (armed, kind) in [(s.recv.take(), RECV), (s.poll.take(), OWN)] {
            if armed == Some(gen) {
                self.sqes.push(
                    opcode::AsyncCancel::new(user_data(kind, slot, gen))
                        .build()
                        .user_data(user_data(IGNORE, 0, 0)),
                );
            }
        }
        // Its room goes too: a connection dropped while a peer read nothing must not
        // leave what it queued with the slot.
        s.queued = Vec::new();
    }

    /// Sends what was encoded into `out` (which is left empty): at once when the slot
    /// has no SEND out (its buffer swapped with `out`, no copy), else after it.
    /// Ok(true): bytes wait behind a SEND (`held` grew).
    pub fn send(
        &mut self,
        slot: u32,
        gen: u32,
        fd: i32,
        out: &mut Vec<u8>,
    ) -> Result<bool, ErrorKind> {
        if out.is_empty() {
            return Ok(false);
        }
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return Ok(false);
        };
        if s.sending || !s.queued.is_empty() {
            s.queued.extend_from_slice(out);
            out.clear();
            if s.queued.len() > MAX_READ_BUFFER {
                return Err(ErrorKind::TooLarge);
            }
            return Ok(true);
        }
        std::mem::swap(&mut s.out, out);
        out.clear();
        s.off = 0;
        Self::submit(&mut self.sqes, s, slot, gen, fd);
        Ok(false)
    }

    fn submit(sqes: &mut Vec<squeue::Entry>, s: &mut SlotIo, slot: u32, gen: u32, fd: i32) {
        let rest = &s.out[s.off..];
        s.sending = true;
        s.send_gen = gen & GEN_MASK;
        sqes.push(
            opcode::Send::new(types::Fd(fd), rest.as_ptr(), rest.len() as u32)
                .flags(libc::MSG_NOSIGNAL)
                .build()
                .user_data(user_data(SEND, slot, gen)),
        );
    }

    /// A SEND of `slot` completed with `res`; `live` is the slot's connection now
    /// (generation, descriptor), if it has one. What is left of it, or what was queued
    /// behind it, goes next. Err: the send failed on the live connection.
    pub fn sent(&mut self, slot: u32, res: i32, live: Option<(u32, i32)>) -> Result<(), ErrorKind> {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return Ok(());
        };
        s.sending = false;
        let live = live.map(|(g, fd)| (g & GEN_MASK, fd));
        let same = live.is_some_and(|(g, _)| g == s.send_gen);
        if same {
            if res < 0 {
                s.out.clear();
                s.queued.clear();
                return Err(ErrorKind::from_io(&std::io::Error::from_raw_os_error(-res)));
            }
            s.off += res as usize;
            if let Some((g, fd)) = live.filter(|_| s.off < s.out.len()) {
                Self::submit(&mut self.sqes, s, slot, g, fd);
                return Ok(());
            }
        }
        s.out.clear();
        s.off = 0;
        if s.out.capacity() > KEEP_ROOM {
            s.out = Vec::new();
        }
        if let Some((g, fd)) = live.filter(|_| !s.queued.is_empty()) {
            std::mem::swap(&mut s.out, &mut s.queued);
            Self::submit(&mut self.sqes, s, slot, g, fd);
        }
        Ok(())
    }
}
