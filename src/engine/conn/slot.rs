//! The slot itself: `Conn`, its states and how a run of requests ends, and the small
//! accessors every part of the slot reads it through (its timer, its queue, its input).

use crate::engine::busy::{Busy, BusyPool};
use crate::engine::ctx::Ctx;
use crate::engine::opt_u64::OptU64;
use crate::engine::ramp::Schedule;
use crate::engine::session::{ClientSession, InFlight, SessionFactory};
use crate::stats::ErrorKind;
use rustls::ClientConnection;

/// How a connection's run of requests ended.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum End {
    /// The plan has nothing more for it and every reply is in.
    Done,
    /// The connection must be dropped; requests still in flight end as this kind.
    Failed(ErrorKind),
    /// A request's error (counted already, as this kind) ends the connection: the
    /// others still in flight end as `Dropped`, and a connection held without retry is
    /// lost by this kind, its cause.
    Dropped(ErrorKind),
    /// The protocol closes the connection after a reply (HTTP `Connection: close`): not
    /// an error; requests still in flight end as `Closed` and the slot reconnects if
    /// the plan goes on.
    Reconnect,
    /// The run's end plus the drain grace has passed with requests still unanswered:
    /// they stay `in_flight` and the connection is dropped without its goodbye.
    Cut,
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum State {
    /// Waiting for its start (the ramp) or a back-off; the timer starts it.
    Waiting,
    Connecting,
    /// Asking an HTTP CONNECT proxy for a tunnel (`conn/tunnel.rs`).
    Proxy,
    Tls,
    Opening,
    Running,
    Closing,
    /// Batch plans: at the worker's barrier (connected or not).
    Parked,
    /// Connection stages: not wanted open now; no socket, no timer, until the worker
    /// asks it back (`engine::vus`).
    Off,
    /// The slot's run is over.
    Done,
}

/// How a connection's requests go (`Conn::pace`).
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(super) enum Pace {
    Closed,
    Open,
    Leaving,
}

/// How `Conn::drive` runs a connection with requests to make.
#[derive(PartialEq, Eq, Clone, Copy)]
pub(super) enum Drive {
    /// Inside a loop turn: read; sends wait for the turn's end while it gathers them.
    Turn,
    /// The turn's end (`on_flush`): send; the socket was read in the turn already.
    Flush,
    /// Send first, then read (a connection's first requests).
    Now,
}

/// What an io_uring receive completion handed a slot (`Conn::on_recv`).
#[derive(Clone, Copy)]
pub(super) enum Given<'a> {
    Data(&'a [u8]),
    Eof,
    Failed(ErrorKind),
}

pub(super) const FIRST_BACKOFF_MS: u16 = 10;
pub(super) const MAX_BACKOFF_MS: u16 = 500;

pub struct Conn<S> {
    pub fd: i32,
    /// Bumped with every socket, so a stale readiness event or timer is told apart.
    pub gen: u32,
    pub state: State,
    pub(super) session: Option<S>,
    pub(super) tls: Option<Box<ClientConnection>>,
    /// What only a connection with work holds (requests in flight, unfinished bytes):
    /// taken from the worker's pool when it first has some, kept while requests keep
    /// coming, given back when the slot retires or the connection will be idle for a
    /// while (`IDLE_RELEASE`).
    pub(super) busy: Option<Box<Busy>>,
    pub(super) seq: u64,
    /// Replies received on the current connection.
    pub(super) answered: u64,
    /// Batch plans and churn: requests this connection may still send.
    pub(super) local_budget: OptU64,
    /// Churn: `local_budget` was already taken from the plan's budget when the
    /// connection opened, so sends draw on it alone.
    pub(super) prepaid: bool,
    /// Open loop: this slot's offset in the worker's schedule (`Ctx::schedule`: its
    /// interval and ramp are the worker's, not repeated in every slot) and how many of
    /// its sends are done.
    pub(super) offset_ns: f64,
    pub(super) sent_k: u64,
    pub(super) next_intended: u64,
    /// When the current connect or exchange began (its timeout runs from there).
    pub(super) phase_began: u64,
    /// When the current connection attempt began (handshake latency).
    pub(super) began: u64,
    pub(super) opened_in_warmup: bool,
    pub(super) failing_since: OptU64,
    /// u16: at most MAX_BACKOFF_MS, and the slot keeps its two flags below in the room saved.
    pub(super) backoff_ms: u16,
    /// An attempt of this slot counts against the worker's attempts in flight.
    pub(super) attempting: bool,
    /// The slot's first attempt has settled (up, failed, or never made).
    pub(super) settled_once: bool,
    /// How requests go: by the schedule (open loop), as replies make room (closed
    /// loop), or not at all (leaving). One byte for the three: connection stages,
    /// whose connections leave, run closed loop only.
    pub(super) pace: Pace,
    /// The earliest time a timer of this connection is armed for (u64::MAX: none).
    pub wake_at: u64,
}

/// The slot's `Busy` part, taken from the worker's pool on first use (a free function,
/// so the session and the rest of the context can be borrowed beside it).
#[inline]
pub(super) fn work<'a>(busy: &'a mut Option<Box<Busy>>, pool: &mut BusyPool) -> &'a mut Busy {
    busy.get_or_insert_with(|| pool.take())
}

impl<S: ClientSession> Conn<S> {
    /// `offset`: open loop, this connection's place in the run's `schedule`.
    pub fn new(offset: Option<f64>, schedule: Option<&Schedule>) -> Self {
        Conn {
            fd: -1,
            gen: 0,
            state: State::Waiting,
            session: None,
            tls: None,
            busy: None,
            seq: 0,
            answered: 0,
            local_budget: OptU64::NONE,
            prepaid: false,
            next_intended: match (offset, schedule) {
                (Some(o), Some(s)) => s.intended(o, 0),
                _ => 0,
            },
            offset_ns: offset.unwrap_or(0.0),
            pace: match offset {
                Some(_) => Pace::Open,
                None => Pace::Closed,
            },
            sent_k: 0,
            phase_began: 0,
            began: 0,
            opened_in_warmup: false,
            failing_since: OptU64::NONE,
            backoff_ms: FIRST_BACKOFF_MS,
            attempting: false,
            settled_once: false,
            wake_at: u64::MAX,
        }
    }

    pub(super) fn arm<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        at: u64,
        ctx: &mut Ctx<F>,
    ) {
        if at < self.wake_at || self.wake_at == u64::MAX {
            self.wake_at = at;
            ctx.timers.arm(at, slot, self.gen);
        }
    }

    /// Whether a timer entry for (`at`, `gen`) is this slot's live one: entries of an
    /// older connection, or superseded by an earlier one, are stale.
    #[inline]
    pub fn armed_for(&self, at: u64, gen: u32) -> bool {
        self.gen == gen && self.wake_at == at
    }

    /// Waits until `at`, then `begin`s (ramp start, back-off).
    pub fn wait_until<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        at: u64,
        ctx: &mut Ctx<F>,
    ) {
        self.state = State::Waiting;
        self.gen = self.gen.wrapping_add(1);
        self.wake_at = u64::MAX;
        self.arm(slot, at, ctx);
    }

    /// Requests sent on this connection and not settled yet.
    #[inline]
    pub(super) fn in_flight(&self) -> usize {
        self.busy.as_ref().map_or(0, |b| b.inflight.len())
    }

    #[inline]
    pub(super) fn oldest(&self) -> Option<&InFlight> {
        self.busy.as_ref().and_then(|b| b.inflight.front())
    }

    #[inline]
    pub(super) fn pop_oldest(&mut self) -> Option<InFlight> {
        self.busy.as_mut().and_then(|b| b.pop_oldest())
    }

    #[inline]
    pub(super) fn output_empty(&self) -> bool {
        self.busy.as_ref().map_or(true, |b| b.output.is_empty())
    }

    /// An unfinished reply's bytes (or the exchange's input).
    pub(super) fn input(&self) -> &[u8] {
        self.busy.as_ref().map_or(&[], |b| &b.input[..])
    }

    /// Drops the first `used` input bytes (no more than there are); returns how many.
    pub(super) fn use_input(&mut self, used: usize) -> usize {
        let Some(b) = self.busy.as_mut() else {
            return 0;
        };
        let used = used.min(b.input.len());
        b.input.drain(..used);
        used
    }

    /// The exchange used `used` more of its input, of which `at` bytes are used already;
    /// returns whether it used any (no more than there are).
    pub(super) fn take_input(&self, at: &mut usize, used: usize) -> bool {
        let used = used.min(self.input().len() - *at);
        *at += used;
        used > 0
    }

    #[inline]
    pub(super) fn open_loop(&self) -> bool {
        self.pace == Pace::Open
    }

    /// Connection stages: asked to leave (no new request; once its replies are in, the
    /// goodbye, then `State::Off`).
    #[inline]
    pub(super) fn leaving(&self) -> bool {
        self.pace == Pace::Leaving
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The goal is <= 256 bytes of user memory per idle client connection (issue 13),
    /// slab included, and `connect` holds a million connections in these slots: the
    /// fixed part must stay well under it. Its queue and buffers live in `Busy`,
    /// allocated only while the connection has work; the open-loop schedule's interval
    /// and ramp are the worker's (`Ctx::schedule`); budgets and times that may be absent
    /// take 8 bytes (`OptU64`), not 16. 200 and 152 bytes before that.
    #[test]
    fn a_slot_is_small() {
        let size = std::mem::size_of::<Conn<crate::proto::echo::client::EchoClient>>();
        assert!(size <= 160, "an echo slot takes {size} bytes");
        let bare = std::mem::size_of::<Conn<()>>();
        assert!(
            bare <= 120,
            "a slot without session state takes {bare} bytes"
        );
        // The part an idle connection does not hold is a pointer in the slot.
        assert_eq!(std::mem::size_of::<Option<Box<Busy>>>(), 8);
    }
}
