//! The reactor's calls into a slot: socket readiness (epoll), io_uring's receive and
//! send completions, the slot's timer and the stop flag.

use super::slot::{Conn, Drive, End, Given, State};
use crate::engine::connector::ConnectError;
use crate::engine::ctx::Ctx;
use crate::engine::session::{ClientSession, SessionFactory};
use crate::engine::transport::Input;
use crate::net::socket;
use crate::stats::ErrorKind;

impl<S: ClientSession> Conn<S> {
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
            State::Proxy => self.tunnel_step(slot, ctx),
            State::Tls => self.tls_step(slot, ctx),
            State::Opening | State::Closing => self.exchange(slot, ctx, false),
            State::Running => self.pump_after(slot, events, ctx),
            State::Waiting | State::Parked | State::Off | State::Done => {}
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
        let addr = &ctx.spec.connector.addr;
        let timeout = ctx.spec.shape.timeout;
        let why = match self.state {
            State::Waiting => return self.begin(slot, ctx),
            State::Running => return self.pump(slot, ctx),
            State::Parked | State::Off | State::Done => return,
            _ if !late => {
                let at = self.phase_began + ctx.timeout_ns;
                return self.arm(slot, at, ctx);
            }
            State::Connecting => format!("connecting to {addr} timed out"),
            State::Proxy => {
                format!("the proxy at {addr} did not answer CONNECT within {timeout:?}")
            }
            State::Tls => format!("TLS handshake with {addr} timed out"),
            State::Opening => format!("the handshake did not finish within {timeout:?}"),
            State::Closing => {
                format!("the closing handshake did not finish within {timeout:?}")
            }
        };
        let errno = match self.state {
            State::Connecting | State::Proxy | State::Tls => libc::ETIMEDOUT,
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
            State::Waiting | State::Off if !ctx.batch() => self.retire(slot, ctx),
            State::Running => self.pump(slot, ctx),
            _ => {}
        }
    }
}
