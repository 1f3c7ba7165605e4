//! One connection slot of a worker: a slab entry driven by readiness, no task and no
//! buffer of its own while idle. Its life: wait (ramp, back-off) -> connect -> TLS ->
//! the session's opening exchange -> requests -> the closing exchange -> again while the
//! plan and the connection policy (requests per connection) go on.
//!
//! Reading and writing in the same turn means a large pipeline never deadlocks against
//! a server that stops reading while its replies are unread.

use super::busy::{Busy, BusyPool};
use super::connector::ConnectError;
use super::ctx::Ctx;
use super::limits::{MAX_READ_BUFFER, NOTHING_LISTENS};
use super::opt_u64::OptU64;
use super::ramp::Schedule;
use super::session::{tell, ClientSession, Decode, InFlight, SessionFactory, Setup, Verdict};
use super::settle::{holds, holds_among_writes, settle};
use super::spec::Plan;
use super::tally::Tally;
use super::transport::{self, Input};
use crate::net::socket;
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
    Tls,
    Opening,
    Running,
    Closing,
    /// Batch plans: at the worker's barrier (connected or not).
    Parked,
    /// The slot's run is over.
    Done,
}

/// How `Conn::drive` runs a connection with requests to make.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Drive {
    /// Inside a loop turn: read; sends wait for the turn's end while it gathers them.
    Turn,
    /// The turn's end (`on_flush`): send; the socket was read in the turn already.
    Flush,
    /// Send first, then read (a connection's first requests).
    Now,
}

/// What an io_uring receive completion handed a slot (`Conn::on_recv`).
#[derive(Clone, Copy)]
enum Given<'a> {
    Data(&'a [u8]),
    Eof,
    Failed(ErrorKind),
}

/// Reads in a row before the other connections of the worker get a turn.
const FAIRNESS_ROUNDS: u32 = 32;
const FIRST_BACKOFF_MS: u16 = 10;
const MAX_BACKOFF_MS: u16 = 500;

pub struct Conn<S> {
    pub fd: i32,
    /// Bumped with every socket, so a stale readiness event or timer is told apart.
    pub gen: u32,
    pub state: State,
    session: Option<S>,
    tls: Option<Box<ClientConnection>>,
    /// What only a connection with work holds (requests in flight, unfinished bytes):
    /// taken from the worker's pool when it first has some, kept while requests keep
    /// coming, given back when the slot retires or the connection will be idle for a
    /// while (`IDLE_RELEASE`).
    busy: Option<Box<Busy>>,
    seq: u64,
    /// Replies received on the current connection.
    answered: u64,
    /// Batch plans and churn: requests this connection may still send.
    local_budget: OptU64,
    /// Churn: `local_budget` was already taken from the plan's budget when the
    /// connection opened, so sends draw on it alone.
    prepaid: bool,
    /// Open loop: this slot's offset in the worker's schedule (`Ctx::schedule`: its
    /// interval and ramp are the worker's, not repeated in every slot) and how many of
    /// its sends are done.
    offset_ns: f64,
    sent_k: u64,
    next_intended: u64,
    /// When the current connect or exchange began (its timeout runs from there).
    phase_began: u64,
    /// When the current connection attempt began (handshake latency).
    began: u64,
    opened_in_warmup: bool,
    failing_since: OptU64,
    /// u16: at most MAX_BACKOFF_MS, and the slot keeps its two flags below in the room saved.
    backoff_ms: u16,
    /// An attempt of this slot counts against the worker's attempts in flight.
    attempting: bool,
    /// The slot's first attempt has settled (up, failed, or never made).
    settled_once: bool,
    /// Open loop: requests go by the schedule (else as replies make room).
    open: bool,
    /// The earliest time a timer of this connection is armed for (u64::MAX: none).
    pub wake_at: u64,
}

/// The slot's `Busy` part, taken from the worker's pool on first use (a free function,
/// so the session and the rest of the context can be borrowed beside it).
#[inline]
fn work<'a>(busy: &'a mut Option<Box<Busy>>, pool: &mut BusyPool) -> &'a mut Busy {
    busy.get_or_insert_with(|| pool.take())
}

/// An open-loop connection whose next request is at least this far away gives its
/// `Busy` part back: one allocation per request at most for connections this slow,
/// none for a connection that keeps sending (closed loop keeps it until it retires).
const IDLE_RELEASE_NS: u64 = 1_000_000_000;

pub use crate::reactor::token as key;

impl<S: ClientSession> Conn<S> {
    pub fn new(schedule: Option<Schedule>) -> Self {
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
            next_intended: schedule.map_or(0, |s| s.intended(0)),
            offset_ns: schedule.map_or(0.0, |s| s.offset_ns),
            open: schedule.is_some(),
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

    fn arm<F: SessionFactory<Session = S>>(&mut self, slot: u32, at: u64, ctx: &mut Ctx<F>) {
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

    /// Open loop: skips the sends scheduled before this slot's first start (the ramp
    /// spreads connection starts; what a slot could not send before it started is not
    /// a backlog).
    pub fn skip_schedule_until(&mut self, t: u64, shared: Option<Schedule>) {
        if let Some(s) = self.schedule(shared) {
            while self.next_intended < t {
                self.sent_k += 1;
                self.next_intended = s.intended(self.sent_k);
            }
        }
    }

    /// Requests sent on this connection and not settled yet.
    #[inline]
    fn in_flight(&self) -> usize {
        self.busy.as_ref().map_or(0, |b| b.inflight.len())
    }

    #[inline]
    fn oldest(&self) -> Option<&InFlight> {
        self.busy.as_ref().and_then(|b| b.inflight.front())
    }

    #[inline]
    fn pop_oldest(&mut self) -> Option<InFlight> {
        self.busy.as_mut().and_then(|b| b.pop_oldest())
    }

    #[inline]
    fn output_empty(&self) -> bool {
        self.busy.as_ref().map_or(true, |b| b.output.is_empty())
    }

    /// An unfinished reply's bytes (or the exchange's input).
    fn input(&self) -> &[u8] {
        self.busy.as_ref().map_or(&[], |b| &b.input[..])
    }

    /// Drops the first `used` input bytes (no more than there are); returns how many.
    fn use_input(&mut self, used: usize) -> usize {
        let Some(b) = self.busy.as_mut() else {
            return 0;
        };
        let used = used.min(b.input.len());
        b.input.drain(..used);
        used
    }

    /// The exchange used `used` more of its input, of which `at` bytes are used already;
    /// returns whether it used any (no more than there are).
    fn take_input(&self, at: &mut usize, used: usize) -> bool {
        let used = used.min(self.input().len() - *at);
        *at += used;
        used > 0
    }

    /// Nothing in flight or unwritten: the buffers go (an idle connection costs its
    /// slot alone), and the whole `Busy` part goes back to the pool when the next send
    /// is far off.
    fn release_if_idle(&mut self, now: u64, pool: &mut BusyPool) {
        let Some(b) = self.busy.as_mut() else {
            return;
        };
        if b.input.is_empty() && b.input.capacity() > 0 {
            b.input = Vec::new();
        }
        if b.output.capacity() > 0 {
            b.output = Vec::new();
        }
        let far = self.open && self.next_intended.saturating_sub(now) >= IDLE_RELEASE_NS;
        if far && b.is_empty() {
            if let Some(b) = self.busy.take() {
                pool.give(b);
            }
        }
    }

    fn open_loop(&self) -> bool {
        self.open
    }

    /// Open loop: this slot's schedule, from the worker's (`shared`) and its offset.
    #[inline]
    fn schedule(&self, shared: Option<Schedule>) -> Option<Schedule> {
        shared.filter(|_| self.open).map(|s| Schedule {
            offset_ns: self.offset_ns,
            ..s
        })
    }

    /// The slot's run is over: what is still unanswered stays in flight.
    fn retire<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
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

    // ---- connection attempts: the admission limits, the first-attempt count, errnos

    /// Over the limits on attempts (LoadSpec::attempts): waits its turn, no timer.
    fn wait_turn<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        self.state = State::Waiting;
        self.gen = self.gen.wrapping_add(1);
        self.wake_at = u64::MAX;
        ctx.admission.wait(slot, self.gen);
    }

    /// The current attempt is over (up or failed): it leaves the attempts in flight,
    /// and the slot's first settles the worker's count of slots still coming up.
    fn settle_attempt<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) {
        if self.attempting {
            self.attempting = false;
            ctx.admission.settled();
        }
        if !self.settled_once {
            self.settled_once = true;
            ctx.unsettled -= 1;
        }
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

    fn drop_socket<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        if let Some(u) = ctx.uring.as_mut() {
            // Before the close: what io_uring holds on this socket is let go.
            u.forget(slot, self.gen);
        }
        if self.fd >= 0 {
            socket::close(self.fd);
            self.fd = -1;
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

    /// The slot keeps no bytes now: they leave its worker's count.
    fn forget_held<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) {
        if let Some(b) = self.busy.as_mut() {
            ctx.kept -= b.held;
            b.held = 0;
        }
    }

    /// Brings the worker's count of kept bytes up to date with this slot's (its
    /// buffers' room, and on io_uring what waits behind its SEND); returns whether the
    /// slot's part grew. Where nothing can have grown (a SEND completed, the slot went
    /// idle) this alone is asked; where something may have, `within_budget`.
    fn count_held<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) -> bool {
        let sends = ctx.uring.as_ref().map_or(0, |u| u.held(slot));
        if self.busy.is_none() && sends == 0 {
            return false;
        }
        let b = work(&mut self.busy, &mut ctx.busy);
        let held = b.input.capacity() + b.output.capacity() + sends;
        ctx.kept = ctx.kept + held - b.held;
        let grew = held > b.held;
        b.held = held;
        grew
    }

    /// `count_held`, then false when the slot grew and its worker is past its share of
    /// the run's memory budget: the caller drops the connection as `too_large`, counted
    /// here in `over_budget`.
    fn within_budget<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) -> bool {
        // Counted as `may_grow` counts it: the worker is back at its count, no more.
        !self.count_held(slot, ctx) || self.may_grow(0, ctx)
    }

    /// Batch plans: waits at the barrier.
    fn park<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) {
        self.state = State::Parked;
        ctx.parked += 1;
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
    fn refund<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) {
        if self.prepaid {
            if let (Some(b), Some(left)) = (ctx.budget.as_mut(), self.local_budget.take()) {
                *b += left;
            }
        }
    }

    /// Starts the slot's next connection, if the plan goes on.
    pub fn begin<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
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

    /// Readiness of this connection's socket.
    pub fn on_event<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        events: u32,
        ctx: &mut Ctx<F>,
    ) {
        match self.state {
            State::Connecting => {
                let failed = (libc::EPOLLERR | libc::EPOLLHUP) as u32;
                if events & libc::EPOLLOUT as u32 != 0 && events & failed == 0 {
                    // Writable with no error or hang-up flagged: connected, without
                    // asking the socket (a system call less per connection).
                    return self.connected_on(slot, events, ctx);
                }
                let err = socket::take_error(self.fd);
                if err != 0 {
                    let kind = ErrorKind::from_connect(&std::io::Error::from_raw_os_error(err));
                    let e = ctx.spec.connector.failed(kind, err);
                    return self.connect_failed(slot, ctx, e);
                }
                if events & (libc::EPOLLOUT | libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0 {
                    self.connected(slot, ctx);
                }
            }
            State::Tls => self.tls_step(slot, ctx),
            State::Opening | State::Closing => self.exchange(slot, ctx, false),
            State::Running => self.pump_after(slot, events, ctx),
            State::Waiting | State::Parked | State::Done => {}
        }
    }

    /// io_uring: a receive completion of this connection (`res` bytes in `data`, 0:
    /// end of stream, < 0: -errno).
    pub fn on_recv<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        res: i32,
        data: &[u8],
        ctx: &mut Ctx<F>,
    ) {
        let given = match res {
            1.. => Given::Data(data),
            0 => Given::Eof,
            _ => Given::Failed(ErrorKind::from_io(&std::io::Error::from_raw_os_error(-res))),
        };
        match self.state {
            State::Running => self.drive(slot, 0, Drive::Turn, Some(given), ctx),
            // The exchange takes its bytes from the completions alone, in their order,
            // as epoll's takes them from its reads: never from the socket beside them.
            State::Opening | State::Closing => match given {
                Given::Data(d) => match self.exchange_input(slot, d, ctx) {
                    Ok(()) => self.exchange(slot, ctx, true),
                    Err(e) => self.exchange_failed(slot, ctx, self.state == State::Opening, e),
                },
                Given::Eof => self.exchange_cut(slot, ctx, Input::Eof),
                Given::Failed(k) => self.exchange_cut(slot, ctx, Input::Failed(k)),
            },
            _ => {}
        }
    }

    /// io_uring: a send of this slot completed (`res` bytes, or -errno).
    pub fn on_sent<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        res: i32,
        ctx: &mut Ctx<F>,
    ) {
        let live = (self.fd >= 0).then_some((self.gen, self.fd));
        let Some(u) = ctx.uring.as_mut() else {
            return;
        };
        if let Err(k) = u.sent(slot, res, live) {
            if self.state == State::Running {
                self.end(slot, ctx, End::Failed(k));
            }
            return;
        }
        self.count_held(slot, ctx);
        // Everything written before may be out now: what the session held back for it.
        let answered = match self.state {
            State::Running | State::Opening | State::Closing => self.answer_owed(slot, ctx),
            _ => Ok(()),
        };
        if let Err(k) = answered {
            match self.state {
                State::Running => self.end(slot, ctx, End::Failed(k)),
                _ => self.exchange_cut(slot, ctx, Input::Failed(k)),
            }
            return;
        }
        // Requests that settle on write were waiting for this: they leave the pipeline,
        // and the room they made is filled.
        if self.state == State::Running
            && self.awaits_write()
            && ctx.uring.as_ref().is_some_and(|u| u.idle(slot))
        {
            self.pump(slot, ctx);
        }
    }

    /// A timer of this connection fired.
    pub fn on_timer<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        self.wake_at = u64::MAX;
        let now = ctx.now();
        let late = now >= self.phase_began + ctx.timeout_ns;
        let addr = ctx.spec.connector.addr;
        let timeout = ctx.spec.shape.timeout;
        let why = match self.state {
            State::Waiting => return self.begin(slot, ctx),
            State::Running => return self.pump(slot, ctx),
            State::Parked | State::Done => return,
            _ if !late => {
                let at = self.phase_began + ctx.timeout_ns;
                return self.arm(slot, at, ctx);
            }
            State::Connecting => format!("connecting to {addr} timed out"),
            State::Tls => format!("TLS handshake with {addr} timed out"),
            State::Opening => format!("the handshake did not finish within {timeout:?}"),
            State::Closing => {
                format!("the closing handshake did not finish within {timeout:?}")
            }
        };
        let errno = match self.state {
            State::Connecting | State::Tls => libc::ETIMEDOUT,
            _ => 0,
        };
        let e = ConnectError {
            kind: ErrorKind::ConnectTimeout,
            detail: why,
            errno,
        };
        if self.state == State::Closing {
            self.close_failed(slot, ctx, e)
        } else {
            self.connect_failed(slot, ctx, e)
        }
    }

    /// The stop flag was seen: a slot waiting to start ends now, a running one drains.
    pub fn on_stop<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        match self.state {
            State::Waiting if !ctx.batch() => self.retire(slot, ctx),
            State::Running => self.pump(slot, ctx),
            _ => {}
        }
    }

    /// Connected on readiness `events`: what came with the connect's edge (input, a
    /// hang-up) is read now, as an edge-triggered socket will not report it again
    /// (a held connection is not read otherwise when it comes up, see `opened`).
    fn connected_on<F: SessionFactory<Session = S>>(
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

    fn connected<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        if ctx.spec.connector.met_itself(self.fd) {
            let e = ctx.spec.connector.met_itself_error();
            return self.connect_failed(slot, ctx, e);
        }
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
    }

    fn tls_step<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
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

    fn start_exchange<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
        state: State,
    ) {
        self.state = state;
        self.phase_began = ctx.now();
        let at = self.phase_began + ctx.timeout_ns;
        self.arm(slot, at, ctx);
        self.exchange(slot, ctx, true);
    }

    /// What the opening or closing exchange is called in its failures.
    fn exchange_name(&self) -> &'static str {
        if self.state == State::Opening {
            "handshake"
        } else {
            "closing handshake"
        }
    }

    /// Bytes the exchange received (from a read or a receive completion): kept until
    /// the session uses them, every one counted in `bytes_received`.
    fn exchange_input<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        bytes: &[u8],
        ctx: &mut Ctx<F>,
    ) -> Result<(), ConnectError> {
        ctx.received(bytes.len(), ctx.now());
        work(&mut self.busy, &mut ctx.busy)
            .input
            .extend_from_slice(bytes);
        let what = self.exchange_name();
        let detail = if self.input().len() > MAX_READ_BUFFER {
            format!("the server sent more than {MAX_READ_BUFFER} bytes during the {what}")
        } else if !self.within_budget(slot, ctx) {
            format!(
                "the connections of this thread kept more than its share of the run's memory budget (--memory-budget, {} bytes a thread) during the {what}",
                ctx.kept_share
            )
        } else {
            return Ok(());
        };
        Err(ConnectError {
            kind: ErrorKind::TooLarge,
            detail,
            errno: 0,
        })
    }

    /// The exchange's input ended (`Eof`, `Failed`) before the exchange did.
    fn exchange_cut<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
        got: Input,
    ) {
        let what = self.exchange_name();
        let detail = match got {
            Input::Failed(k) => format!("{what}: {}", k.name()),
            _ => format!("the server closed the connection during the {what}"),
        };
        let e = ConnectError {
            kind: ErrorKind::ConnectFailed,
            detail,
            errno: 0,
        };
        self.exchange_failed(slot, ctx, self.state == State::Opening, e)
    }

    /// Drives the opening or closing exchange: the session is asked again only when
    /// new bytes came (or it used some), so it is never asked twice about the same input.
    /// On epoll the socket is read here; on io_uring its bytes come as receive
    /// completions (`on_recv`), so the two cores hand the session the same bytes.
    fn exchange<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
        mut fresh: bool,
    ) {
        let opening = self.state == State::Opening;
        let uring = ctx.uring.is_some() && self.tls.is_none();
        // Input the session used in this call: dropped once, when more is awaited, not
        // at every step (100,000 pushes before an answer are one drain, not 100,000).
        let mut at = 0;
        loop {
            if !fresh {
                self.use_input(std::mem::take(&mut at));
                if uring {
                    return;
                }
                let mut rbuf = std::mem::take(&mut ctx.rbuf);
                let got = transport::read(self.fd, self.tls.as_deref_mut(), &mut rbuf);
                let taken = match got {
                    Input::Data(n) => Some(self.exchange_input(slot, &rbuf[..n], ctx)),
                    _ => None,
                };
                ctx.rbuf = rbuf;
                match (got, taken) {
                    (_, Some(Ok(()))) => {
                        fresh = true;
                        continue;
                    }
                    (_, Some(Err(e))) => return self.exchange_failed(slot, ctx, opening, e),
                    (Input::Nothing, None) => return,
                    (got, None) => return self.exchange_cut(slot, ctx, got),
                }
            }
            let Some(session) = self.session.as_mut() else {
                return;
            };
            // Counted in the phase the connection was opened in, as `connections` is.
            let opened_measured = ctx.batch() || self.began >= ctx.measure_start_ns;
            let now = ctx.clock.now_ns();
            let figures = &mut ctx.figures[(now >= ctx.measure_start_ns) as usize];
            let count = &mut ctx.stats.phase(opened_measured).exchanges;
            let input = self.busy.as_ref().map_or(&[][..], |b| &b.input[at..]);
            let step = if opening {
                session.open(input, &mut ctx.out, figures, count)
            } else {
                session.close(input, &mut ctx.out, figures, count)
            };
            if let Err(k) = self
                .send(slot, ctx)
                .and_then(|()| self.answer_owed(slot, ctx))
            {
                let e = ConnectError {
                    kind: ErrorKind::ConnectFailed,
                    detail: format!("{}: {}", self.exchange_name(), k.name()),
                    errno: 0,
                };
                return self.exchange_failed(slot, ctx, opening, e);
            }
            match step {
                Setup::Done { used } => {
                    self.use_input(at + used);
                    return if opening {
                        self.opened(slot, ctx)
                    } else {
                        self.closed_cleanly(slot, ctx)
                    };
                }
                Setup::Failed { kind, detail } => {
                    let e = ConnectError {
                        kind,
                        detail,
                        errno: 0,
                    };
                    return self.exchange_failed(slot, ctx, opening, e);
                }
                Setup::Continue { used } => {
                    fresh = self.take_input(&mut at, used);
                }
                Setup::Event { used } => {
                    ctx.stats.phase(now >= ctx.measure_start_ns).events += 1;
                    fresh = self.take_input(&mut at, used);
                }
            }
        }
    }

    fn exchange_failed<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
        opening: bool,
        e: ConnectError,
    ) {
        // Counted for the connection, never as a request: no request of the run made
        // the exchange, so a request-level kind (the session's `too_large`,
        // `protocol`) would be an error with no request (sent = ok + errors + in
        // flight would break). A connection-level kind is counted as itself.
        let errno = e.errno;
        let (kind, detail) = if opening {
            super::session::opening_failure(e.kind, e.detail)
        } else if e.kind.is_connect() {
            (e.kind, e.detail)
        } else {
            let why = e.kind.name();
            let detail = format!("closing handshake failed ({why}): {}", e.detail);
            (ErrorKind::ConnectFailed, detail)
        };
        let e = ConnectError {
            kind,
            detail,
            errno,
        };
        if opening {
            self.connect_failed(slot, ctx, e)
        } else {
            self.close_failed(slot, ctx, e)
        }
    }

    /// The opening exchange is done: requests may go.
    fn opened<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        self.settle_attempt(ctx);
        let now = ctx.now();
        if self.began >= ctx.measure_start_ns || ctx.batch() {
            ctx.stats.handshake.record(now.saturating_sub(self.began));
        }
        self.failing_since.clear();
        self.state = State::Running;
        if ctx.batch() {
            self.local_budget.set(ctx.pipeline as u64);
        }
        if self.idle_held(now, ctx) {
            // Nothing to send and nothing read yet: no read just to hear EAGAIN (a
            // system call per connection); its input raises a new edge.
            return;
        }
        // A connection's first requests go before its first read, as they always did:
        // what the peer sends right after the handshake (an error, a close) then meets
        // them in flight and is counted against them.
        self.drive(slot, 0, Drive::Now, None, ctx);
    }

    /// A plain connection of a hold plan, just opened, with nothing to send and no
    /// input kept from its opening exchange.
    fn idle_held<F: SessionFactory<Session = S>>(&self, now: u64, ctx: &Ctx<F>) -> bool {
        ctx.holding()
            && self.tls.is_none()
            && self.input().is_empty()
            && !self.may_send(self.next_intended.max(now), now, ctx)
    }

    /// A failed connection attempt (connect, TLS or the opening exchange).
    fn connect_failed<F: SessionFactory<Session = S>>(
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

    fn back_off<F: SessionFactory<Session = S>>(&mut self, slot: u32, now: u64, ctx: &mut Ctx<F>) {
        let at = now + self.backoff_ms as u64 * 1_000_000;
        self.backoff_ms = (self.backoff_ms * 2).min(MAX_BACKOFF_MS);
        self.wait_until(slot, at, ctx);
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
        if ctx.per_connection.is_none() {
            return self.retire(slot, ctx);
        }
        self.backoff_ms = FIRST_BACKOFF_MS;
        self.begin(slot, ctx);
    }

    fn closed_cleanly<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
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

    fn close_failed<F: SessionFactory<Session = S>>(
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
            ctx.stats.record_error(r.measured, kind);
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
    fn end<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>, end: End) {
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

    /// Whether the plan lets this connection send, now, a request intended at `intended`.
    /// The measured phase ends at the deadline by the clock, whatever the schedule's
    /// backlog: an open loop that fell behind must not go on sending its arrears.
    #[inline]
    fn may_send<F: SessionFactory<Session = S>>(
        &self,
        intended: u64,
        now: u64,
        ctx: &Ctx<F>,
    ) -> bool {
        if ctx.stopping || ctx.deadline_ns.is_some_and(|d| intended.max(now) >= d) {
            return false;
        }
        if matches!(ctx.spec.shape.plan, Plan::Hold) && !(ctx.released && self.open_loop()) {
            // Held: requests only by the schedule, once released.
            return false;
        }
        if self.local_budget.get() == Some(0) {
            return false;
        }
        self.prepaid || !(intended >= ctx.measure_start_ns && ctx.budget == Some(0))
    }

    /// Encodes `count` requests into the worker's output and puts them in flight.
    #[inline]
    fn push_requests<F: SessionFactory<Session = S>>(
        &mut self,
        count: u64,
        intended: u64,
        now: u64,
        measured: bool,
        ctx: &mut Ctx<F>,
    ) {
        let Some(session) = self.session.as_mut() else {
            return;
        };
        // Taken once per call, not once per request.
        let b = work(&mut self.busy, &mut ctx.busy);
        for _ in 0..count {
            let tag = session.encode(self.seq, now, &mut ctx.out);
            // A constant false, for a protocol whose requests all get replies.
            let on_write = S::SETTLES_ON_WRITE && session.settles_on_write(self.seq);
            if S::SETTLES_ON_WRITE {
                b.on_write += on_write as u32;
            }
            b.inflight.push_back(InFlight {
                seq: self.seq,
                intended_ns: intended,
                sent_ns: now,
                tag,
                lane: session.lane_of(self.seq),
                measured,
                on_write,
            });
            self.seq += 1;
        }
    }

    /// Closed loop: requests this connection may add to its window now, as the
    /// pipelining policy says (`refill.rs`).
    #[inline]
    fn room<F: SessionFactory<Session = S>>(&self, ctx: &Ctx<F>) -> usize {
        ctx.spec.shape.refill.room(ctx.pipeline, self.in_flight())
    }

    /// Encodes as many requests as the pipeline, the schedule and the budget allow.
    fn fill<F: SessionFactory<Session = S>>(&mut self, now: u64, ctx: &mut Ctx<F>) {
        if self.open_loop() {
            // Before the room check: a connection whose replies are late falls behind
            // its schedule too, and that must show.
            ctx.note_lag(now, self.next_intended);
            return self.fill_scheduled(now, ctx);
        }
        let room = self.room(ctx);
        // Closed loop: every request of this call is intended now, so the plan is
        // asked once for how many may go, not once per request.
        if room == 0 || !self.may_send(now, now, ctx) {
            return;
        }
        let measured = now >= ctx.measure_start_ns;
        let mut n = room as u64;
        if measured && !self.prepaid {
            if let Some(b) = ctx.budget.as_mut() {
                n = n.min(*b);
                *b -= n;
            }
        }
        if let Some(l) = self.local_budget.as_mut() {
            n = n.min(*l);
            *l -= n;
        }
        if n > 0 {
            let before = ctx.out.len();
            self.push_requests(n, now, now, measured, ctx);
            let bytes = (ctx.out.len() - before) as u64;
            ctx.stats.record_sent(measured, n, bytes);
        }
    }

    /// Open loop: sends every request whose intended time has come.
    fn fill_scheduled<F: SessionFactory<Session = S>>(&mut self, now: u64, ctx: &mut Ctx<F>) {
        let Some(schedule) = self.schedule(ctx.schedule) else {
            return;
        };
        // Counted per call, not per request: (count, bytes) for warm-up and measured.
        let mut tally = [(0u64, 0u64); 2];
        while self.in_flight() < ctx.pipeline && self.next_intended <= now {
            let intended = self.next_intended;
            if !self.may_send(intended, now, ctx) {
                break;
            }
            let measured = intended >= ctx.measure_start_ns;
            if let Some(l) = self.local_budget.as_mut() {
                *l -= 1;
            }
            if measured && !self.prepaid {
                if let Some(b) = ctx.budget.as_mut() {
                    *b -= 1;
                }
            }
            self.sent_k += 1;
            self.next_intended = schedule.intended(self.sent_k);
            let before = ctx.out.len();
            self.push_requests(1, intended, now, measured, ctx);
            let t = &mut tally[measured as usize];
            t.0 += 1;
            t.1 += (ctx.out.len() - before) as u64;
        }
        for (measured, (count, bytes)) in [(false, tally[0]), (true, tally[1])] {
            if count > 0 {
                ctx.stats.record_sent(measured, count, bytes);
            }
        }
    }

    /// Writes what was encoded (and what waited); keeps what the socket did not take.
    fn send<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) -> Result<(), ErrorKind> {
        if let (Some(u), None) = (ctx.uring.as_mut(), self.tls.as_ref()) {
            // On io_uring: a SEND at the turn's enter, from the slot's own buffer.
            if u.send(slot, self.gen, self.fd, &mut ctx.out)? && !self.within_budget(slot, ctx) {
                return Err(ErrorKind::TooLarge);
            }
            return Ok(());
        }
        if !ctx.out.is_empty() {
            if self.output_empty() {
                let n = transport::write(self.fd, self.tls.as_deref_mut(), &ctx.out)?;
                if n < ctx.out.len() {
                    work(&mut self.busy, &mut ctx.busy)
                        .output
                        .extend_from_slice(&ctx.out[n..]);
                }
            } else {
                work(&mut self.busy, &mut ctx.busy)
                    .output
                    .extend_from_slice(&ctx.out);
            }
            ctx.out.clear();
        }
        if let Some(b) = self.busy.as_mut().filter(|b| !b.output.is_empty()) {
            let n = transport::write(self.fd, self.tls.as_deref_mut(), &b.output)?;
            b.output.drain(..n);
            if b.output.len() > MAX_READ_BUFFER || !self.within_budget(slot, ctx) {
                return Err(ErrorKind::TooLarge);
            }
        } else if let Some(s) = self.tls.as_deref_mut() {
            if s.wants_write() {
                transport::flush_tls(s, self.fd)?;
            }
        }
        Ok(())
    }

    /// Everything encoded is on the wire: nothing kept, nothing in rustls, no SEND of
    /// the slot with io_uring.
    fn all_written<F: SessionFactory<Session = S>>(&self, slot: u32, ctx: &Ctx<F>) -> bool {
        self.output_empty()
            && !self.tls.as_ref().is_some_and(|s| s.wants_write())
            && ctx.uring.as_ref().map_or(true, |u| u.idle(slot))
    }

    /// Requests that settle on write wait in the queue (never, for a protocol whose
    /// requests all get replies: a constant false).
    #[inline]
    fn awaits_write(&self) -> bool {
        S::SETTLES_ON_WRITE && self.busy.as_ref().is_some_and(|b| b.on_write > 0)
    }

    /// Everything this connection wrote has gone to the kernel (on io_uring: no SEND
    /// with it and nothing queued behind one).
    fn all_out<F: SessionFactory<Session = S>>(&self, slot: u32, ctx: &Ctx<F>) -> bool {
        match (ctx.uring.as_ref(), self.tls.as_ref()) {
            (Some(u), None) => u.idle(slot),
            _ => self.all_written(slot, ctx),
        }
    }

    /// Writes what the session held back until the connection's earlier output was
    /// out (`ClientSession::owed`: a pong for the latest ping), once it is.
    fn answer_owed<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) -> Result<(), ErrorKind> {
        if !self.all_out(slot, ctx) {
            return Ok(());
        }
        let Some(session) = self.session.as_mut() else {
            return Ok(());
        };
        session.owed(&mut ctx.out);
        if ctx.out.is_empty() {
            return Ok(());
        }
        self.send(slot, ctx)
    }

    /// Drives a connection with requests to make: send what the plan allows, write,
    /// read and settle every complete reply, until the socket has nothing more; then
    /// arm one timer for whichever comes first (the oldest request's timeout, the next
    /// scheduled send, the end of the run).
    fn pump<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        self.pump_after(slot, 0, ctx)
    }

    /// `pump` on readiness `events`: after a hang-up (or a turn given to others) the
    /// socket is read until it says EAGAIN or EOF, as the close's edge is spent.
    fn pump_after<F: SessionFactory<Session = S>>(
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
    fn drive<F: SessionFactory<Session = S>>(
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

    /// The peer closed: a reply that runs to the close is complete now (and recorded).
    fn consume_at_close<F: SessionFactory<Session = S>>(&mut self, now: u64, ctx: &mut Ctx<F>) {
        let (Some(b), Some(session)) = (self.busy.as_deref_mut(), self.session.as_mut()) else {
            return;
        };
        let Some(req) = b.awaited().copied() else {
            return;
        };
        let d = session.decode_at_close(&b.input, &req, ctx.figures_at(req.measured));
        if let Decode::Reply {
            settles,
            lane,
            verdict,
            ..
        } = d
        {
            b.written_before_awaited();
            if let (Verdict::Error(k) | Verdict::Fatal(k), true) = (verdict, req.measured) {
                tell(session, &b.input, k, settles.into(), &mut ctx.stats.texts);
            }
            let mut tally = Tally::default();
            let answered = &mut self.answered;
            settle(
                b,
                lane,
                settles,
                verdict,
                now,
                &mut ctx.stats,
                &mut tally,
                answered,
            );
            tally.commit(&mut ctx.stats);
        }
    }

    /// Decodes and records everything complete in what was read (after what was kept).
    fn consume<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        fresh: &[u8],
        now: u64,
        ctx: &mut Ctx<F>,
    ) -> Option<End> {
        let mut kept = self
            .busy
            .as_mut()
            .map_or_else(Vec::new, |b| std::mem::take(&mut b.input));
        let from_kept = !kept.is_empty();
        if from_kept {
            // The room it grows to (doubling) is checked against the budget before it
            // grows, so an endless reply never takes its worker past its share.
            let need = kept.len() + fresh.len();
            let grows = need.saturating_sub(kept.capacity());
            if grows > 0 && !self.may_grow(need.max(2 * kept.capacity()) - kept.capacity(), ctx) {
                return Some(self.drop_over_budget(ctx));
            }
            kept.extend_from_slice(fresh);
        }
        let data: &[u8] = if from_kept { &kept } else { fresh };
        let mut pos = 0;
        // Correct replies are tallied here and added once per read.
        let mut tally = Tally::default();
        let mut end = None;
        let now_measured = now >= ctx.measure_start_ns;
        // The session, the Busy part and the reply count are disjoint fields: borrowed
        // apart, once per read, not once per reply.
        let (session, busy, answered) = (&mut self.session, &mut self.busy, &mut self.answered);
        while let Some(session) = session.as_mut() {
            // Requests that settle on write wait in the queue (none, for a protocol
            // whose requests all get replies): replies pass over them.
            let on_write = S::SETTLES_ON_WRITE && busy.as_deref().is_some_and(|b| b.on_write > 0);
            let oldest = match busy.as_deref() {
                Some(b) if on_write => b.awaited(),
                b => b.and_then(|b| b.inflight.front()),
            };
            // With no byte left the session is still asked while a request waits: one
            // acknowledgement may have settled more than the replies handed over yet.
            if pos == data.len() && oldest.is_none() {
                break;
            }
            let measured = oldest.map_or(now_measured, |r| r.measured);
            let figures = &mut ctx.figures[measured as usize];
            let at = pos;
            match session.decode(&data[pos..], oldest, &mut ctx.out, figures) {
                Decode::Incomplete | Decode::Consumed { used: 0 } | Decode::Event { used: 0 } => {
                    break
                }
                Decode::Consumed { used } => {
                    pos += used.min(data.len() - pos);
                }
                Decode::Event { used } => {
                    pos += used.min(data.len() - pos);
                    ctx.stats.phase(now_measured).events += 1;
                }
                Decode::Reply {
                    used,
                    settles,
                    lane,
                    verdict,
                    close,
                } => {
                    let asked = oldest.is_some();
                    if on_write {
                        if let Some(b) = busy.as_deref_mut() {
                            b.written_before_awaited();
                        }
                    }
                    let fits = |b: &Busy| match on_write {
                        false => holds(b, lane, settles),
                        true => holds_among_writes(b, lane, settles),
                    };
                    let b = match busy.as_deref_mut() {
                        Some(b) if asked && fits(b) => b,
                        _ => {
                            // A reply to nothing asked: the stream cannot be trusted.
                            ctx.stats
                                .phase(now_measured)
                                .error(ErrorKind::Unsolicited, 1);
                            end = Some(End::Dropped(ErrorKind::Unsolicited));
                            break;
                        }
                    };
                    pos += used.min(data.len() - pos);
                    if let (Verdict::Error(k) | Verdict::Fatal(k), true) = (verdict, measured) {
                        tell(
                            session,
                            &data[at..],
                            k,
                            settles.into(),
                            &mut ctx.stats.texts,
                        );
                    }
                    if settle(
                        b,
                        lane,
                        settles,
                        verdict,
                        now,
                        &mut ctx.stats,
                        &mut tally,
                        answered,
                    ) {
                        let cause = match verdict {
                            Verdict::Fatal(k) => k,
                            _ => ErrorKind::Dropped,
                        };
                        end = Some(End::Dropped(cause));
                        break;
                    }
                    if close {
                        end = Some(End::Reconnect);
                        break;
                    }
                }
                Decode::Fail { kind } => {
                    if measured {
                        tell(session, &data[at..], kind, 1, &mut ctx.stats.texts);
                    }
                    end = Some(if kind.is_connect() {
                        // Counted once, for the connection; its requests are dropped.
                        ctx.stats.phase(now_measured).error(kind, 1);
                        End::Dropped(kind)
                    } else {
                        End::Failed(kind)
                    });
                    break;
                }
            }
        }
        tally.commit(&mut ctx.stats);
        if end.is_some() {
            return end;
        }
        let left = data.len() - pos;
        if left > MAX_READ_BUFFER {
            // The reply past the cap is the oldest awaited request's; with none awaited
            // the connection's requests end as `too_large`.
            let Some(r) = self.busy.as_mut().and_then(|b| b.pop_awaited()) else {
                return Some(End::Failed(ErrorKind::TooLarge));
            };
            ctx.stats.record_error(r.measured, ErrorKind::TooLarge);
            return Some(End::Dropped(ErrorKind::TooLarge));
        }
        if from_kept {
            kept.drain(..pos);
            work(&mut self.busy, &mut ctx.busy).input = kept;
        } else if left > 0 || kept.capacity() > 0 {
            // Into the room the connection kept from its last unfinished reply (empty
            // now; kept while the connection is busy, `release_if_idle`), not a new
            // allocation per read that ends inside a reply.
            kept.extend_from_slice(&fresh[pos..]);
            work(&mut self.busy, &mut ctx.busy).input = kept;
        } else {
            return None;
        }
        if !self.within_budget(slot, ctx) {
            return Some(self.drop_over_budget(ctx));
        }
        None
    }

    /// Whether the worker's kept bytes may grow by `extra` within its share of the
    /// run's memory budget; if not, the connection is dropped (counted here).
    fn may_grow<F: SessionFactory<Session = S>>(&self, extra: usize, ctx: &mut Ctx<F>) -> bool {
        if ctx.kept + extra <= ctx.kept_share {
            return true;
        }
        let measured = ctx.now() >= ctx.measure_start_ns;
        ctx.stats.phase(measured).over_budget += 1;
        false
    }

    /// A connection whose reply would take its worker past its share of the memory
    /// budget: dropped as for its own cap (the oldest request `too_large`, the rest
    /// dropped with it).
    fn drop_over_budget<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) -> End {
        let Some(r) = self.busy.as_mut().and_then(|b| b.pop_awaited()) else {
            return End::Failed(ErrorKind::TooLarge);
        };
        ctx.stats.record_error(r.measured, ErrorKind::TooLarge);
        End::Failed(ErrorKind::Dropped)
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
