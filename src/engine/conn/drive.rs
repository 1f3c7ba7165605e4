//! The drive step of a running connection: send, write, read and settle until the
//! socket has nothing more, then arm one timer (`pump`, `on_flush`, a first send).

use super::slot::{Conn, Drive, End, Given, State};
use crate::engine::ctx::Ctx;
use crate::engine::session::{ClientSession, SessionFactory};
use crate::engine::transport::{self, Input};
use crate::stats::ErrorKind;

/// Reads in a row before the other connections of the worker get a turn.
const FAIRNESS_ROUNDS: u32 = 32;

impl<S: ClientSession> Conn<S> {
    /// Drives a connection with requests to make: send what the plan allows, write,
    /// read and settle every complete reply, until the socket has nothing more; then
    /// arm one timer for whichever comes first (the oldest request's timeout, the next
    /// scheduled send, the end of the run).
    pub(super) fn pump<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        self.pump_after(slot, 0, ctx)
    }

    /// `pump` on readiness `events`: after a hang-up (or a turn given to others) the
    /// socket is read until it says EAGAIN or EOF, as the close's edge is spent.
    pub(super) fn pump_after<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        events: u32,
        ctx: &mut Ctx<F>,
    ) {
        self.drive(slot, events, Drive::Turn, None, ctx)
    }

    /// The end of the loop turn in which this slot's sends were held back (`Ctx::pending`):
    /// its requests are encoded, stamped and written now. Its socket was read in the turn
    /// (to EAGAIN, or it is on the ready list), so it is not read again here.
    pub fn on_flush<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        if self.state == State::Running {
            self.drive(slot, 0, Drive::Flush, None, ctx)
        }
    }

    /// The loop of `pump_after`, `on_flush` and a connection's first requests: time
    /// out, send, read and settle, judge, until the socket has nothing more or the
    /// slot has had its fair share of the turn; then arm its timer.
    pub(super) fn drive<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        events: u32,
        how: Drive,
        mut given: Option<Given<'_>>,
        ctx: &mut Ctx<F>,
    ) {
        // On io_uring a socket is never read here: its bytes come as receive
        // completions (`given`).
        let uring = ctx.uring.is_some() && self.tls.is_none();
        let hup = events & (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32 != 0;
        let mut now = ctx.now();
        let mut rounds = 0;
        // Edge-triggered: a plain socket that returned less than the buffer holds is
        // drained, and bytes arriving later raise a new edge, so it is not read again
        // only to hear EAGAIN (a system call per wake-up saved). A TLS session may hold
        // decrypted bytes: it is read until it says so.
        let mut drained = how == Drive::Flush || uring;
        loop {
            if self.oldest_timed_out(now, ctx) {
                return self.end(slot, ctx, End::Dropped(ErrorKind::Timeout));
            }
            // While the loop turn gathers its sends, the requests wait for its end
            // (`Ctx::pending`), where they are encoded, stamped and written: their
            // send time is when they are written. Answers to events (in `out`, shared
            // by the worker's connections) go at once.
            let defer = how == Drive::Turn && ctx.pending.collecting() && ctx.out.is_empty();
            if let Err(k) = self.send_step(slot, defer, now, ctx) {
                return self.end(slot, ctx, End::Failed(k));
            }
            self.settle_written(slot, ctx);

            let mut rbuf = std::mem::take(&mut ctx.rbuf);
            let (got, fresh) = self.next_input(given.take(), drained, &mut rbuf);
            let progressed = matches!(got, Input::Data(_));
            let end = match got {
                Input::Data(n) => {
                    drained = uring || (!hup && self.tls.is_none() && n < rbuf.len());
                    now = ctx.now();
                    self.take_bytes(slot, fresh.unwrap_or(&rbuf[..n]), now, ctx)
                }
                Input::Nothing => None,
                Input::Eof => Some(self.at_eof(now, ctx)),
                Input::Failed(k) => Some(End::Failed(k)),
            };
            ctx.rbuf = rbuf;
            if let Some(end) = end {
                return self.end(slot, ctx, end);
            }

            let idle = self.in_flight() == 0 && self.output_empty() && ctx.out.is_empty();
            if idle {
                self.release_if_idle(now, &mut ctx.busy);
                self.count_held(slot, ctx);
            }
            let next_send = if self.open_loop() {
                self.next_intended
            } else {
                now
            };
            let can_send = self.may_send(next_send, now, ctx);
            if idle && !can_send {
                if ctx.holding() {
                    // Held: nothing to do until input, the release or the stop.
                    return;
                }
                return self.end(slot, ctx, End::Done);
            }
            if !can_send && now >= ctx.cut_ns() {
                return self.end(slot, ctx, End::Cut);
            }
            // Answers to events wait in `out`; a closed loop with room and permission
            // (settles-on-write requests leave the pipeline once written) sends now.
            let again = progressed
                || !ctx.out.is_empty()
                || (can_send
                    && self.room(ctx) > 0
                    && self.output_empty()
                    && !defer
                    && !self.open_loop());
            if !again {
                return self.arm_next(slot, idle, can_send, defer, ctx);
            }
            rounds += 1;
            if rounds >= FAIRNESS_ROUNDS {
                ctx.ready.push((slot, self.gen));
                return;
            }
        }
    }

    /// Whether the oldest request in flight has waited its timeout: it is counted as a
    /// timeout (the rest of its connection is dropped by the caller).
    #[inline]
    fn oldest_timed_out<F: SessionFactory<Session = S>>(
        &mut self,
        now: u64,
        ctx: &mut Ctx<F>,
    ) -> bool {
        let late = self
            .oldest()
            .is_some_and(|oldest| now.saturating_sub(oldest.sent_ns) >= ctx.timeout_ns);
        if late {
            if let Some(r) = self.pop_oldest() {
                ctx.stats
                    .record_error(r.measured, ErrorKind::Timeout, r.intended_ns, None);
            }
        }
        late
    }

    /// Sends what the plan allows and what the session owes, or, when `defer`, marks
    /// the slot for the turn's end (`on_flush`).
    #[inline]
    fn send_step<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        defer: bool,
        now: u64,
        ctx: &mut Ctx<F>,
    ) -> Result<(), ErrorKind> {
        if defer {
            ctx.pending.mark(slot);
            return Ok(());
        }
        self.fill(now, ctx);
        self.send(slot, ctx)
            .and_then(|()| self.answer_owed(slot, ctx))
    }

    /// Requests with no reply leave the pipeline once written; they are counted when
    /// the connection ends.
    #[inline]
    fn settle_written<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &Ctx<F>) {
        if self.awaits_write() && self.all_written(slot, ctx) {
            if let Some(b) = self.busy.as_mut() {
                let before = b.inflight.len();
                b.all_written();
                self.answered += (before - b.inflight.len()) as u64;
            }
        }
    }

    /// What the connection has to read next: what io_uring handed it (`given`), else
    /// the socket's bytes in `rbuf`, unless it is `drained`.
    #[inline]
    fn next_input<'g>(
        &mut self,
        given: Option<Given<'g>>,
        drained: bool,
        rbuf: &mut [u8],
    ) -> (Input, Option<&'g [u8]>) {
        match given {
            Some(Given::Data(d)) => (Input::Data(d.len()), Some(d)),
            Some(Given::Eof) => (Input::Eof, None),
            Some(Given::Failed(k)) => (Input::Failed(k), None),
            None if drained => (Input::Nothing, None),
            None => (
                transport::read(self.fd, self.tls.as_deref_mut(), rbuf),
                None,
            ),
        }
    }

    /// Bytes read (`bytes`, at `now`): counted, their replies settled, and what the
    /// session owes written; returns how the connection ends, if it does.
    #[inline]
    fn take_bytes<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        bytes: &[u8],
        now: u64,
        ctx: &mut Ctx<F>,
    ) -> Option<End> {
        ctx.received(bytes.len(), now);
        match self.consume(slot, bytes, now, ctx) {
            None => self.answer_owed(slot, ctx).err().map(End::Failed),
            end => end,
        }
    }

    /// The peer closed. A reply that runs to the close ends here. That ends the
    /// connection's work only if it had none left; otherwise the slot reconnects.
    fn at_eof<F: SessionFactory<Session = S>>(&mut self, now: u64, ctx: &mut Ctx<F>) -> End {
        self.consume_at_close(now, ctx);
        let idle = self.in_flight() == 0 && self.output_empty();
        let wanted = if self.open_loop() {
            self.next_intended
        } else {
            now
        };
        if ctx.holding() {
            // A held connection is not given up by the peer unnoticed.
            End::Failed(ErrorKind::Closed)
        } else if idle && !self.may_send(wanted, now, ctx) {
            End::Done
        } else {
            End::Failed(ErrorKind::Closed)
        }
    }

    /// Nothing more to do now: one timer for whichever comes first (the oldest
    /// request's timeout, the next scheduled send, the end of the run).
    #[inline]
    fn arm_next<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        idle: bool,
        can_send: bool,
        defer: bool,
        ctx: &mut Ctx<F>,
    ) {
        let mut wake = u64::MAX;
        if let Some(oldest) = self.oldest() {
            wake = oldest.sent_ns + ctx.timeout_ns;
        }
        // A deferred send is the flush's to schedule: the next intended time may
        // have come already (a timer fired for it), and arming for it would fire
        // again in this very turn.
        if can_send && self.in_flight() < ctx.pipeline && self.open_loop() && !defer {
            wake = wake.min(self.next_intended);
        }
        if let Some(d) = ctx.deadline_ns {
            // Replies still due are waited for no longer than the drain grace.
            wake = wake.min(if idle { d } else { ctx.cut_ns() });
        }
        if wake != u64::MAX {
            // Re-armed only for an earlier time: the oldest request's deadline moves
            // later with every reply, and a timer firing early just means a re-check.
            self.arm(slot, wake, ctx);
        }
    }
}
