//! A connection attempt: admission, the non-blocking connect, TLS, and what a failed
//! attempt does (counted by errno, back-off, giving up).

use super::slot::{Conn, State, MAX_BACKOFF_MS};
use crate::engine::connector::ConnectError;
use crate::engine::ctx::Ctx;
use crate::engine::limits::NOTHING_LISTENS;
use crate::engine::session::{ClientSession, SessionFactory};
use crate::engine::transport;
use crate::reactor::token as key;
use crate::stats::ErrorKind;

impl<S: ClientSession> Conn<S> {
    /// Over the limits on attempts (LoadSpec::attempts): waits its turn, no timer.
    fn wait_turn<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        self.state = State::Waiting;
        self.gen = self.gen.wrapping_add(1);
        self.wake_at = u64::MAX;
        ctx.admission.wait(slot, self.gen);
    }

    /// The current attempt is over (up or failed): it leaves the attempts in flight,
    /// and the slot's first settles the worker's count of slots still coming up.
    pub(super) fn settle_attempt<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) {
        if self.attempting {
            self.attempting = false;
            ctx.admission.settled();
        }
        if !self.settled_once {
            self.settled_once = true;
            ctx.unsettled -= 1;
        }
    }

    /// Churn: takes this connection's requests from the plan before it opens.
    /// Returns false when the plan has none left.
    fn claim<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>, n: u64) -> bool {
        if ctx.now() < ctx.measure_start_ns {
            // Opened in the warm-up: its requests draw on the plan only once measured.
            self.local_budget.set(n);
            self.prepaid = false;
            return true;
        }
        let got = match ctx.budget.as_mut() {
            Some(b) => {
                let got = n.min(*b);
                *b -= got;
                got
            }
            None => n,
        };
        self.local_budget.set(got);
        self.prepaid = ctx.budget.is_some();
        got > 0
    }

    /// Churn: gives back what a failed connection claimed and did not send.
    pub(super) fn refund<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) {
        if self.prepaid {
            if let (Some(b), Some(left)) = (ctx.budget.as_mut(), self.local_budget.take()) {
                *b += left;
            }
        }
    }

    /// Starts the slot's next connection, if the plan goes on.
    pub fn begin<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        if self.leaving() {
            // Connection stages: no longer wanted (a back-off or a turn ended).
            return self.rest(slot, ctx);
        }
        let now = ctx.now();
        if ctx.batch() {
            if ctx.stopping {
                return self.park(ctx);
            }
        } else {
            if ctx.stopping || ctx.deadline_ns.is_some_and(|d| now >= d) || ctx.budget == Some(0) {
                return self.retire(slot, ctx);
            }
        }
        if !ctx.admission.try_start(now) {
            return self.wait_turn(slot, ctx);
        }
        self.attempting = true;
        if !ctx.batch() {
            if let Some(n) = ctx.per_connection {
                if !self.claim(ctx, n) {
                    return self.retire(slot, ctx);
                }
            }
        }
        let number = ctx.connection_number(ctx.made);
        let session = ctx.new_session();
        self.session = Some(session);
        self.seq = 0;
        self.answered = 0;
        if let Some(b) = self.busy.as_mut() {
            // Kept (with its queue's room) from connection to connection: churn at
            // one request per connection allocates nothing per request.
            b.clear_queue();
            b.written = [0; 2];
            b.input = Vec::new();
            b.output = Vec::new();
        }
        self.forget_held(ctx);
        self.began = now;
        self.phase_began = now;
        self.opened_in_warmup = now < ctx.measure_start_ns;
        self.gen = self.gen.wrapping_add(1);
        self.wake_at = u64::MAX;
        let (fd, done) = match ctx.spec.connector.start(number) {
            Ok(v) => v,
            Err(e) => return self.connect_failed(slot, ctx, e),
        };
        self.fd = fd;
        if let Some(u) = ctx.uring.as_mut() {
            // On io_uring the connect's end comes as a poll completion; nothing else of
            // this socket goes through epoll.
            if !done {
                u.arm_poll(slot, self.gen, fd);
            }
        } else if let Err(e) = ctx.epoll.add(
            fd,
            (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32,
            key(slot, self.gen),
        ) {
            let err = ctx.spec.connector.failed(ErrorKind::ConnectFailed, e);
            return self.connect_failed(slot, ctx, err);
        }
        self.state = State::Connecting;
        self.arm(slot, now + ctx.timeout_ns, ctx);
        if done {
            self.connected(slot, ctx);
        }
    }

    /// Connected on readiness `events`: what came with the connect's edge (input, a
    /// hang-up) is read now, as an edge-triggered socket will not report it again
    /// (a held connection is not read otherwise when it comes up, see `opened`).
    pub(super) fn connected_on<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        events: u32,
        ctx: &mut Ctx<F>,
    ) {
        let gen = self.gen;
        self.connected(slot, ctx);
        let unread = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
        if self.gen == gen && self.state == State::Running && events & unread != 0 {
            self.pump_after(slot, events, ctx);
        }
    }

    pub(super) fn connected<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) {
        if ctx.spec.connector.met_itself(self.fd) {
            let e = ctx.spec.connector.met_itself_error();
            return self.connect_failed(slot, ctx, e);
        }
        if ctx.spec.connector.tunnel.is_some() {
            return self.tunnel_start(slot, ctx);
        }
        self.after_tunnel(slot, ctx)
    }

    /// Connected to the target (through the proxy's tunnel, when there is one): TLS,
    /// then the opening exchange.
    pub(super) fn after_tunnel<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) {
        match ctx.spec.connector.tls_session() {
            None => {
                self.count_connection(ctx);
                if let Some(u) = ctx.uring.as_mut() {
                    u.arm_recv(slot, self.gen, self.fd);
                }
                self.start_exchange(slot, ctx, State::Opening)
            }
            Some(Ok(s)) => {
                self.tls = Some(s);
                self.state = State::Tls;
                self.tls_step(slot, ctx);
            }
            Some(Err(e)) => self.connect_failed(slot, ctx, e),
        }
    }

    fn count_connection<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) {
        let measured = ctx.batch() || self.began >= ctx.measure_start_ns;
        ctx.stats.phase(measured).connections += 1;
        if measured {
            ctx.stats.stage_connected(self.began);
        }
        // Undone when the socket closes in a state past this one (`drop_socket`).
        ctx.open += 1;
        ctx.stats.stage_open(ctx.now(), ctx.open);
    }

    pub(super) fn tls_step<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        let Some(s) = self.tls.as_mut() else { return };
        match transport::handshake(s, self.fd) {
            Ok(true) => {
                self.count_connection(ctx);
                self.start_exchange(slot, ctx, State::Opening);
            }
            Ok(false) => {}
            Err(why) => {
                let e = ConnectError {
                    kind: ErrorKind::Tls,
                    detail: format!("TLS handshake with {}: {why}", ctx.spec.connector.addr),
                    errno: 0,
                };
                self.connect_failed(slot, ctx, e)
            }
        }
    }

    /// A failed connection attempt (connect, TLS or the opening exchange).
    pub(super) fn connect_failed<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
        e: ConnectError,
    ) {
        self.drop_socket(slot, ctx);
        self.refund(ctx);
        self.settle_attempt(ctx);
        // Requests never went out on it; nothing is in flight.
        let now = ctx.now();
        let refused = e.kind == ErrorKind::ConnectRefused;
        let measured = ctx.batch() || now >= ctx.measure_start_ns;
        if e.errno != 0 {
            ctx.stats.conns_at(measured).failed(e.errno);
        }
        ctx.stats.record_connect_error(measured, e.kind, e.detail);
        if measured {
            // In the stage its attempt started in (`began`: set as it started).
            ctx.stats.stage_connect_error(self.began);
        }
        if ctx.batch() {
            return self.park(ctx);
        }
        if !ctx.spec.attempts.retry {
            return self.retire(slot, ctx);
        }
        let never_connected = ctx.stats.warmup.connections + ctx.stats.measured.connections == 0;
        // A slot that cannot connect for a whole timeout gives up, so a dead target ends
        // the run instead of spinning until the deadline; a port where nothing ever
        // accepted gives up sooner (NOTHING_LISTENS).
        let since = self.failing_since.get_or_insert(now);
        let failing = now - since;
        if failing >= ctx.timeout_ns
            || (refused && never_connected && failing >= NOTHING_LISTENS.as_nanos() as u64)
        {
            return self.retire(slot, ctx);
        }
        self.back_off(slot, now, ctx);
    }

    pub(super) fn back_off<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        now: u64,
        ctx: &mut Ctx<F>,
    ) {
        let at = now + self.backoff_ms as u64 * 1_000_000;
        self.backoff_ms = (self.backoff_ms * 2).min(MAX_BACKOFF_MS);
        self.wait_until(slot, at, ctx);
    }
}
