//! How a connection's run ends: its goodbye, requests abandoned, the socket dropped, a
//! lost connection, the slot retired; a batch plan's rounds and barrier.

use super::slot::{Conn, End, State, FIRST_BACKOFF_MS};
use crate::engine::connector::ConnectError;
use crate::engine::ctx::Ctx;
use crate::engine::session::{ClientSession, SessionFactory};
use crate::net::socket;
use crate::stats::ErrorKind;

impl<S: ClientSession> Conn<S> {
    /// The slot's run is over: what is still unanswered stays in flight.
    pub(super) fn retire<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        self.forget_held(ctx);
        if let Some(b) = self.busy.take() {
            for r in &b.inflight {
                ctx.stats.phase(r.measured).in_flight += 1;
            }
            for (measured, count) in [(false, b.written[0]), (true, b.written[1])] {
                ctx.stats.phase(measured).in_flight += count;
            }
            ctx.busy.give(b);
        }
        self.drop_socket(slot, ctx);
        self.settle_attempt(ctx);
        self.session = None;
        self.state = State::Done;
        ctx.live -= 1;
    }

    /// Without retries (LoadSpec::attempts.retry), an established connection that
    /// ended is tallied as lost by its `cause` (its requests in flight end as `kind`)
    /// and its slot's run is over.
    fn lost<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        kind: ErrorKind,
        cause: ErrorKind,
        ctx: &mut Ctx<F>,
    ) {
        self.abandon(kind, ctx);
        self.refund(ctx);
        // In the phase the connection was counted in (`count_connection`).
        let measured = ctx.batch() || self.began >= ctx.measure_start_ns;
        ctx.stats.conns_at(measured).lost(cause);
        self.retire(slot, ctx);
    }

    pub(super) fn drop_socket<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) {
        if let Some(u) = ctx.uring.as_mut() {
            // Before the close: what io_uring holds on this socket is let go.
            u.forget(slot, self.gen);
        }
        if self.fd >= 0 {
            socket::close(self.fd);
            self.fd = -1;
            // Counted in `Ctx::open` as it went to Opening (`count_connection`): a
            // state, not a flag, so the slot stays as small as it is.
            if matches!(
                self.state,
                State::Opening | State::Running | State::Closing | State::Parked
            ) {
                ctx.open = ctx.open.saturating_sub(1);
                ctx.stats.stage_open(ctx.now(), ctx.open);
            }
        }
        self.tls = None;
        self.gen = self.gen.wrapping_add(1);
        self.wake_at = u64::MAX;
        ctx.out.clear();
        // What the connection kept goes with it.
        if let Some(b) = self.busy.as_mut() {
            b.input = Vec::new();
            b.output = Vec::new();
        }
        self.forget_held(ctx);
    }

    /// Batch plans: waits at the barrier.
    pub(super) fn park<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) {
        self.state = State::Parked;
        ctx.parked += 1;
    }

    /// The requests are over (the plan's or this connection's share): say goodbye.
    fn done<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        if ctx.batch() {
            return self.park(ctx);
        }
        self.start_exchange(slot, ctx, State::Closing);
    }

    /// After the goodbye (or its failure): the next connection, if the policy says so.
    fn after_close<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        self.drop_socket(slot, ctx);
        if ctx.batch() {
            return self.park(ctx);
        }
        if self.leaving() {
            return self.rest(slot, ctx);
        }
        if ctx.per_connection.is_none() && !ctx.conn_stages {
            return self.retire(slot, ctx);
        }
        // Connection stages: a slot asked back while it said goodbye opens again (or
        // retires, the run being over: `begin`).
        self.backoff_ms = FIRST_BACKOFF_MS;
        self.begin(slot, ctx);
    }

    pub(super) fn closed_cleanly<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) {
        // Requests settled on write count only now: the peer has read them.
        let written = self
            .busy
            .as_mut()
            .map_or([0; 2], |b| std::mem::take(&mut b.written));
        for (measured, count) in [(false, written[0]), (true, written[1])] {
            if count > 0 {
                ctx.stats.record_ok(measured, count);
            }
        }
        self.after_close(slot, ctx);
    }

    pub(super) fn close_failed<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
        e: ConnectError,
    ) {
        // The peer never confirmed reading what was written.
        let kind = match e.kind {
            ErrorKind::ConnectTimeout => ErrorKind::Timeout,
            _ => ErrorKind::Closed,
        };
        self.abandon(kind, ctx);
        let measured = ctx.now() >= ctx.measure_start_ns;
        ctx.stats.record_connect_error(measured, e.kind, e.detail);
        self.after_close(slot, ctx);
    }

    /// Ends every request still in flight, or written and unsettled, as `kind`.
    fn abandon<F: SessionFactory<Session = S>>(&mut self, kind: ErrorKind, ctx: &mut Ctx<F>) {
        let Some(b) = self.busy.as_mut() else {
            return;
        };
        for r in b.inflight.drain(..) {
            ctx.stats
                .record_error(r.measured, kind, r.intended_ns, None);
        }
        b.on_write = 0;
        for (measured, count) in [(false, b.written[0]), (true, b.written[1])] {
            if count > 0 {
                ctx.stats.phase(measured).error(kind, count);
            }
        }
        b.written = [0; 2];
    }

    /// The connection's run of requests ended.
    pub(super) fn end<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
        end: End,
    ) {
        ctx.out.clear();
        let now = ctx.now();
        if self.opened_in_warmup && now >= ctx.measure_start_ns {
            ctx.stats.measured.connections_carried += 1;
            self.opened_in_warmup = false;
        }
        match end {
            End::Done => self.done(slot, ctx),
            End::Cut => {
                self.drop_socket(slot, ctx);
                self.retire(slot, ctx)
            }
            End::Reconnect | End::Failed(_) | End::Dropped(_) => {
                // What the requests still in flight end as, and why the connection did.
                let (kind, cause) = match end {
                    End::Failed(k) => (k, k),
                    End::Dropped(cause) => (ErrorKind::Dropped, cause),
                    _ => (ErrorKind::Closed, ErrorKind::Closed),
                };
                if !ctx.spec.attempts.retry && !ctx.batch() {
                    return self.lost(slot, kind, cause, ctx);
                }
                self.abandon(kind, ctx);
                self.refund(ctx);
                self.drop_socket(slot, ctx);
                if ctx.batch() {
                    return self.park(ctx);
                }
                // A server that accepts and closes at once must not make us spin; one
                // that closes on the protocol's word is reopened at once.
                if end != End::Reconnect && self.answered == 0 {
                    return self.back_off(slot, now, ctx);
                }
                self.backoff_ms = FIRST_BACKOFF_MS;
                self.begin(slot, ctx)
            }
        }
    }

    /// Batch plans: the next iteration on this connection (or a new one).
    pub fn next_iteration<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        if self.fd >= 0 {
            self.local_budget.set(ctx.pipeline as u64);
            self.state = State::Running;
            self.pump(slot, ctx);
        } else {
            self.begin(slot, ctx);
        }
    }

    /// Batch plans: the round is over; say goodbye on a live connection.
    pub fn end_round<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        if self.fd >= 0 {
            self.start_exchange(slot, ctx, State::Closing);
        } else {
            self.park(ctx);
        }
    }

    /// Batch plans: the last round is over.
    pub fn finish<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        if self.state != State::Done {
            self.retire(slot, ctx);
        }
    }
}
