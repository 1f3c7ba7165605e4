//! What the io_uring core adds to a server thread (`thread.rs`, `driver.rs`):
//! completions. Its loop is the reactor's io_uring core (`reactor::uring_loop`, under
//! the load engine too): a multishot ACCEPT per listener (the handler's own
//! completions), a multishot RECV per connection into the thread's ring of provided
//! buffers (an idle connection owns no buffer), and each connection's replies one SEND
//! at a time from its `Extra` (the bytes made meanwhile are owed and go with the next;
//! past `OWED_CAP` the receive is cancelled until they are out). Every loop turn is one
//! io_uring_enter that submits the turn's sends and waits for completions (or the next
//! deadline), so a request costs no system call of its own. Connections are ordinary
//! descriptors; direct ones (the ring's file table) are
//! `WIREBENCH_SERVER_LOOP=uring-fixed`: they measured no better. The default for plain
//! TCP (`server::Machinery`).

use super::config::ServerConfig;
use super::conn::{Conn, Io};
use super::driver::{Bytes, Closed, Core, Got};
use super::session::ServerFactory;
use super::thread::{Figs, Thread, ThreadInput, PUBLISH_EVERY};
use crate::clock::Clock;
use crate::net::socket;
use crate::reactor::transport::Input;
use crate::reactor::uring::user_data;
use crate::reactor::uring_loop::{UringHandler, UringReactor, BGID, IGNORE, OWN, RECV, SEND};
use crate::reactor::{token, Stop};
use io_uring::{cqueue, opcode, squeue, types};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// The thread's receive buffers in its ring (a power of two). A loop turn gives back
/// every buffer it was handed, so this bounds the completions of one turn, not the
/// connections.
const BUFFERS: u16 = 256;
/// Largest receive buffer; --read-buffer above this is cut to it (the ring's memory is
/// `BUFFERS` times this).
const BUFFER_CAP: usize = 64 * 1024;
/// Reply bytes a connection may owe behind its send in flight before it stops being
/// read (backpressure: a peer that does not read cannot grow this further).
const OWED_CAP: usize = 1 << 20;
/// Direct descriptors: at most this many connections per thread (and at most the
/// descriptor limit, which bounds the table).
const MAX_FILES: u64 = 1 << 20;

/// The thread's submissions and what its accepts need.
pub struct Completions {
    /// Entries made during a turn, pushed to the ring before its enter.
    sqes: Vec<squeue::Entry>,
    /// Connections are direct descriptors (the ring's file table), not the process's.
    fixed: bool,
    /// This turn's clock reading.
    now: u64,
    /// Listeners whose accept ended in an error, armed again after a rest.
    rearm: Vec<usize>,
}

impl Completions {
    fn arm_accept(&mut self, i: usize, l: &OwnedFd) {
        // A direct descriptor is in no process's table: no CLOEXEC (EINVAL).
        let flags = if self.fixed {
            libc::SOCK_NONBLOCK
        } else {
            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC
        };
        self.sqes.push(
            opcode::AcceptMulti::new(types::Fd(l.as_raw_fd()))
                .flags(flags)
                .allocate_file_index(self.fixed)
                .build()
                .user_data(user_data(OWN, i as u64)),
        );
    }

    /// Ends connection `tok`'s multishot receive; the cancel's own completion needs
    /// nothing.
    fn cancel_recv(&mut self, tok: u64) {
        self.sqes.push(
            opcode::AsyncCancel::new(user_data(RECV, tok))
                .build()
                .user_data(user_data(IGNORE, 0)),
        );
    }

    /// A SEND of `b[at..]` on connection `tok`.
    fn submit_send(&mut self, tok: u64, fd: i32, b: &[u8], at: usize) {
        let rest = &b[at..];
        let e = if self.fixed {
            opcode::Send::new(types::Fixed(fd as u32), rest.as_ptr(), rest.len() as u32)
        } else {
            opcode::Send::new(types::Fd(fd), rest.as_ptr(), rest.len() as u32)
        };
        self.sqes.push(
            e.flags(libc::MSG_NOSIGNAL)
                .build()
                .user_data(user_data(SEND, tok)),
        );
    }
}

impl Core for Completions {
    /// Bytes come as receive completions.
    fn read<S>(&mut self, _c: &mut Conn<S>, _buf: &mut [u8]) -> Input {
        Input::WouldBlock
    }

    /// At once when no SEND is out (the thread's output buffer itself becomes the
    /// send's, swapped with the connection's spare one: no copy), else owed.
    fn send<S>(
        &mut self,
        tok: u64,
        c: &mut Conn<S>,
        b: Bytes<'_>,
        io: &mut Io,
    ) -> Result<(), ErrorKind> {
        let (fd, sending) = (c.fd, c.sending);
        let x = c.extra(&mut io.extras);
        if sending || x.owes() {
            x.owed.extend_from_slice(b.as_slice());
            return Ok(());
        }
        x.send.clear();
        match b {
            Bytes::Out(out) => std::mem::swap(&mut x.send, out),
            Bytes::Slice(s) => x.send.extend_from_slice(s),
        }
        x.send_at = 0;
        self.submit_send(tok, fd, &x.send, 0);
        c.sending = true;
        Ok(())
    }

    /// What was owed goes in the next SEND, once the one out is back.
    fn flush<S>(&mut self, tok: u64, c: &mut Conn<S>, _io: &mut Io) -> Result<(), ErrorKind> {
        if c.sending {
            return Ok(());
        }
        let Some(x) = c.extra.as_deref_mut().filter(|x| x.owes()) else {
            return Ok(());
        };
        x.send.clear();
        std::mem::swap(&mut x.send, &mut x.owed);
        x.owed_out();
        x.send_at = 0;
        self.submit_send(tok, c.fd, &x.send, 0);
        c.sending = true;
        Ok(())
    }

    fn full<S>(&self, c: &Conn<S>) -> bool {
        c.extra.as_ref().is_some_and(|x| x.owed.len() > OWED_CAP)
    }

    fn pause<S>(&mut self, tok: u64, c: &mut Conn<S>) {
        if !c.paused {
            c.paused = true;
            if c.receiving {
                self.cancel_recv(tok);
            }
        }
    }

    fn resume<S>(&mut self, tok: u64, c: &mut Conn<S>) {
        c.paused = false;
        if !c.receiving {
            c.receiving = true;
            let e = if self.fixed {
                opcode::RecvMulti::new(types::Fixed(c.fd as u32), BGID).build()
            } else {
                opcode::RecvMulti::new(types::Fd(c.fd), BGID).build()
            };
            self.sqes.push(e.user_data(user_data(RECV, tok)));
        }
    }

    /// Shut down (so its receive completes), freed once nothing of it is in flight.
    fn end<S>(&mut self, tok: u64, c: &mut Conn<S>) -> bool {
        c.ending = true;
        if c.receiving {
            // A peer that keeps sending would keep a shut-down receive going: end it,
            // so the close comes (with a reset if bytes are left unread).
            self.cancel_recv(tok);
        }
        if self.fixed {
            // Shut down at the next enter, before the close queued after it.
            self.sqes.push(
                opcode::Shutdown::new(types::Fixed(c.fd as u32), libc::SHUT_RDWR)
                    .build()
                    .user_data(user_data(IGNORE, 0)),
            );
        } else {
            // SAFETY: the connection's own descriptor, still open.
            unsafe { libc::shutdown(c.fd, libc::SHUT_RDWR) };
        }
        !c.receiving && !c.sending
    }

    fn close_fd(&mut self, fd: i32) {
        if self.fixed {
            self.sqes.push(
                opcode::Close::new(types::Fixed(fd as u32))
                    .build()
                    .user_data(user_data(IGNORE, 0)),
            );
        } else {
            socket::close(fd);
        }
    }

    /// Direct descriptors are in no process table to poll; otherwise as any core, for
    /// a connection whose receive is armed.
    fn unreported_input<S>(&self, c: &Conn<S>) -> bool {
        !self.fixed && c.receiving && !c.paused && super::driver::socket_has_input(c.fd)
    }

    /// The receive is cancelled; its final completion arms a fresh one, which reports
    /// what the socket holds as it starts.
    fn read_again<S>(&mut self, tok: u64, c: &mut Conn<S>) {
        if c.receiving {
            self.cancel_recv(tok);
        }
    }

    fn listen(&mut self, listeners: &[OwnedFd]) {
        for i in std::mem::take(&mut self.rearm) {
            if let Some(l) = listeners.get(i) {
                self.arm_accept(i, l);
            }
        }
    }
}

/// Makes a server thread's loop: its ring and receive buffers, before the loop takes
/// its listeners, so that a kernel or a seccomp policy that refuses them leaves the
/// thread on the epoll loop (`server::start_many`). Single issuer: call it on the
/// thread that runs it. Readable `stop_fd` (an eventfd) ends the loop.
pub fn setup(cfg: &ServerConfig, fixed: bool, stop_fd: i32) -> std::io::Result<UringReactor> {
    let reactor = UringReactor::new(
        // Time zero is the pacing epoch, the sessions' clock.
        Clock::since(cfg.pacing.epoch),
        PUBLISH_EVERY,
        Stop::Fd(stop_fd),
        BUFFERS,
        cfg.read_buffer.clamp(1, BUFFER_CAP),
    )?;
    if fixed {
        let n = crate::sys::raise_nofile_limit().clamp(64, MAX_FILES) as u32;
        reactor.register_files_sparse(n)?;
    }
    Ok(reactor)
}

/// Runs one server thread on `reactor` until it is told to stop; `ready` is called
/// once its listeners' accepts are submitted, before the first wait.
pub fn run<F: ServerFactory>(
    cfg: ServerConfig,
    factory: Arc<F>,
    input: ThreadInput<Figs<F>>,
    mut reactor: UringReactor,
    fixed: bool,
    ready: &mut dyn FnMut(),
) -> std::io::Result<()> {
    if fixed && cfg.nodelay {
        // Accepted connections inherit it (no setsockopt on a direct descriptor).
        for l in &input.listeners {
            socket::set_nodelay(l.as_raw_fd());
        }
    }
    let clock = reactor.clock();
    let core = Completions {
        sqes: Vec::new(),
        fixed,
        now: clock.now_ns(),
        rearm: Vec::new(),
    };
    let mut t = Thread::new(cfg, factory, input, clock, 0, core);
    for (i, l) in t.listeners.iter().enumerate() {
        t.core.arm_accept(i, l);
    }
    // Armed before `ready`: once it is said, every listener has an accept in the kernel.
    let r = reactor.submit(&mut t).and_then(|()| {
        ready();
        reactor.run(&mut t)
    });
    // Shutdown: the kernel lets go of every listener and socket first (so the port is
    // free once this returns), then every connection is closed (and counted) and the
    // figures published; direct descriptors close with the ring.
    reactor.cancel_all();
    t.shut_down();
    drop(reactor);
    r
}

impl<F: ServerFactory> Thread<F, Completions> {
    /// Frees an ended connection once nothing of it is in flight.
    fn settle(&mut self, tok: u64) {
        if self
            .conns
            .get_mut(tok)
            .is_some_and(|c| !c.receiving && !c.sending)
        {
            self.free(tok);
        }
    }

    /// A listener's accept completed (`res`: the descriptor, or -errno).
    fn accepted(&mut self, which: usize, res: i32, flags: u32) {
        if !cqueue::more(flags) {
            if res < 0 {
                // Out of descriptors (or worse): rest instead of spinning on accept.
                self.core.rearm.push(which);
                let now = self.core.now;
                self.rest_listeners(now);
                return;
            }
            if let Some(l) = self.listeners.get(which) {
                self.core.arm_accept(which, l);
            }
        }
        if res < 0 {
            return;
        }
        let fd = res;
        let Some(tok) = self.admit(fd, None) else {
            return;
        };
        if self.cfg.nodelay && !self.core.fixed {
            socket::set_nodelay(fd);
        }
        if let Some(c) = self.conns.get_mut(tok) {
            self.core.resume(tok, c);
        }
        self.started(tok);
    }
}

impl<F: ServerFactory> UringHandler for Thread<F, Completions> {
    fn sqes(&mut self) -> &mut Vec<squeue::Entry> {
        &mut self.core.sqes
    }

    fn woke(&mut self, now: u64) {
        self.core.now = now;
        let clock = self.ctx.clock;
        self.stamp_tick(|| clock.instant_at(now));
    }

    /// A receive: `res` bytes in `data` (the reactor gives its buffer back once this
    /// returns), the stream's end, or -errno; `more`: still armed.
    fn on_recv(&mut self, slot: u32, gen: u32, res: i32, data: &[u8], more: bool) {
        let tok = token(slot, gen);
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        if !more {
            c.receiving = false;
        }
        if c.ending {
            return self.settle(tok);
        }
        let got = match res {
            // The ring ran dry this turn, or the receive was cancelled for backpressure:
            // armed again (by the driver) once the buffers are back, or once resumed.
            e if e == -libc::ENOBUFS || e == -libc::ECANCELED => Got::Nothing,
            e if e < 0 => Got::Failed(std::io::Error::from_raw_os_error(-e).kind()),
            0 => Got::Eof,
            // Bytes with no buffer named: nothing to read them from.
            _ if data.is_empty() => Got::Failed(ErrorKind::InvalidData),
            n => {
                let io = &mut self.ctx.io;
                io.turn.reads += 1;
                io.turn.bytes_in += n as u64;
                c.last_active = io.tick;
                Got::Data(data)
            }
        };
        self.drive(tok, got);
    }

    /// A SEND completed: the rest of it goes, or what is owed, or the connection goes on.
    fn on_sent(&mut self, slot: u32, gen: u32, res: i32) {
        let tok = token(slot, gen);
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        c.sending = false;
        if c.ending {
            return self.settle(tok);
        }
        if res <= 0 {
            let kind = std::io::Error::from_raw_os_error(-res).kind();
            return self.close(tok, Closed::Error(kind));
        }
        let io = &mut self.ctx.io;
        io.turn.bytes_out += res as u64;
        c.last_active = io.tick;
        let fd = c.fd;
        if let Some(x) = c.extra.as_deref_mut() {
            x.send_at += res as usize;
            if x.send_at < x.send.len() {
                self.core.submit_send(tok, fd, &x.send, x.send_at);
                c.sending = true;
                return;
            }
        }
        self.drive(tok, Got::Nothing);
    }

    /// Its own completions are its listeners' accepts (`what`: the listener).
    fn on_own(&mut self, what: u64, res: i32, flags: u32) {
        self.accepted(what as usize, res, flags);
    }
}
