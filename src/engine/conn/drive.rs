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

    /// The loop of `pump_after`, `on_flush` and a connection's first requests.
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
            let late = self
                .oldest()
                .is_some_and(|oldest| now.saturating_sub(oldest.sent_ns) >= ctx.timeout_ns);
            if late {
                // The late request is a timeout; the rest of its connection is dropped.
                if let Some(r) = self.pop_oldest() {
                    ctx.stats.record_error(r.measured, ErrorKind::Timeout);
                }
                return self.end(slot, ctx, End::Dropped(ErrorKind::Timeout));
            }
            // While the loop turn gathers its sends, the requests wait for its end
            // (`Ctx::pending`), where they are encoded, stamped and written: their
            // send time is when they are written. Answers to events (in `out`, shared
            // by the worker's connections) go at once.
            let defer = how == Drive::Turn && ctx.pending.collecting() && ctx.out.is_empty();
            if defer {
                ctx.pending.mark(slot);
            } else {
                self.fill(now, ctx);
                if let Err(k) = self
                    .send(slot, ctx)
                    .and_then(|()| self.answer_owed(slot, ctx))
                {
                    return self.end(slot, ctx, End::Failed(k));
                }
            }
            if self.awaits_write() && self.all_written(slot, ctx) {
                // Requests with no reply leave the pipeline once written; they are
                // counted when the connection ends.
                if let Some(b) = self.busy.as_mut() {
                    let before = b.inflight.len();
                    b.all_written();
                    self.answered += (before - b.inflight.len()) as u64;
                }
            }

            let mut progressed = false;
            let mut rbuf = std::mem::take(&mut ctx.rbuf);
            let (got, fresh) = match given.take() {
                Some(Given::Data(d)) => (Input::Data(d.len()), Some(d)),
                Some(Given::Eof) => (Input::Eof, None),
                Some(Given::Failed(k)) => (Input::Failed(k), None),
                None if drained => (Input::Nothing, None),
                None => (
                    transport::read(self.fd, self.tls.as_deref_mut(), &mut rbuf),
                    None,
                ),
            };
            let end = match got {
                Input::Data(n) => {
                    drained = uring || (!hup && self.tls.is_none() && n < rbuf.len());
                    progressed = true;
                    now = ctx.now();
                    ctx.received(n, now);
                    match self.consume(slot, fresh.unwrap_or(&rbuf[..n]), now, ctx) {
                        None => self.answer_owed(slot, ctx).err().map(End::Failed),
                        end => end,
                    }
                }
                Input::Nothing => None,
                Input::Eof => {
                    // The peer closed. A reply that runs to the close ends here. That
                    // ends the connection's work only if it had none left; otherwise
                    // the slot reconnects.
                    self.consume_at_close(now, ctx);
                    let idle = self.in_flight() == 0 && self.output_empty();
                    let wanted = if self.open_loop() {
                        self.next_intended
                    } else {
                        now
                    };
                    Some(if ctx.holding() {
                        // A held connection is not given up by the peer unnoticed.
                        End::Failed(ErrorKind::Closed)
                    } else if idle && !self.may_send(wanted, now, ctx) {
                        End::Done
                    } else {
                        End::Failed(ErrorKind::Closed)
                    })
                }
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
            let cut_at = ctx.cut_ns();
            if !can_send && now >= cut_at {
                return self.end(slot, ctx, End::Cut);
            }
            if progressed {
                rounds += 1;
                if rounds >= FAIRNESS_ROUNDS {
                    ctx.ready.push((slot, self.gen));
                    return;
                }
                continue;
            }
            // Answers to events wait in `out`; a closed loop with room and permission
            // (settles-on-write requests leave the pipeline once written) sends now.
            let room = self.room(ctx) > 0 && self.output_empty() && !defer;
            if !ctx.out.is_empty() || (can_send && room && !self.open_loop()) {
                rounds += 1;
                if rounds >= FAIRNESS_ROUNDS {
                    ctx.ready.push((slot, self.gen));
                    return;
                }
                continue;
            }

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
                wake = wake.min(if idle { d } else { cut_at });
            }
            if wake != u64::MAX {
                // Re-armed only for an earlier time: the oldest request's deadline moves
                // later with every reply, and a timer firing early just means a re-check.
                self.arm(slot, wake, ctx);
            }
            return;
        }
    }
}
