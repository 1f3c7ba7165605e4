//! The session's opening and closing exchanges: their bytes, steps, failures and the
//! opening's end, after which requests go.

use super::slot::{work, Conn, Drive, State};
use crate::engine::connector::ConnectError;
use crate::engine::ctx::Ctx;
use crate::engine::limits::MAX_READ_BUFFER;
use crate::engine::session::{opening_failure, ClientSession, SessionFactory, Setup};
use crate::engine::transport::{self, Input};
use crate::stats::ErrorKind;

impl<S: ClientSession> Conn<S> {
    pub(super) fn start_exchange<F: SessionFactory<Session = S>>(
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
    pub(super) fn exchange_input<F: SessionFactory<Session = S>>(
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
    pub(super) fn exchange_cut<F: SessionFactory<Session = S>>(
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
    pub(super) fn exchange<F: SessionFactory<Session = S>>(
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
            let sent = self
                .send(slot, ctx)
                .and_then(|()| self.answer_owed(slot, ctx));
            if let Err(k) = sent {
                if opening || k != ErrorKind::Reset {
                    let e = ConnectError {
                        kind: ErrorKind::ConnectFailed,
                        detail: format!("{}: {}", self.exchange_name(), k.name()),
                        errno: 0,
                    };
                    return self.exchange_failed(slot, ctx, opening, e);
                }
                // The server may close first once both Close frames are out (RFC 6455
                // 7.1.1), resetting a socket our answer to its last ping reached too
                // late; its Close may still wait in our input. What we meant to send
                // is dropped and the input read on, as a failed SEND completion in the
                // closing handshake is on io_uring (`on_sent`): both cores accept the
                // same closes.
                self.drop_output(ctx);
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

    pub(super) fn exchange_failed<F: SessionFactory<Session = S>>(
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
            opening_failure(e.kind, e.detail)
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
            let took = now.saturating_sub(self.began);
            ctx.stats.record_handshake(took);
            ctx.stats.stage_connect_took(self.began, took);
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
}
