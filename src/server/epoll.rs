//! What the epoll core adds to a server thread (`thread.rs`, `driver.rs`): readiness.
//! Connections are registered edge-triggered for reading and writing once, so
//! readiness never costs an epoll_ctl; a connection is read while its socket may hold
//! bytes and written at once, plain or through rustls (`reactor::transport`), and what
//! the socket does not take is owed until it is writable again (nothing is read
//! meanwhile). Listeners are level-triggered and accept in batches with accept4. It
//! serves TLS, --delay/--stall, --debug, the worker processes of --processes and
//! `WIREBENCH_SERVER_LOOP=epoll` (`server::Machinery`).

use super::config::ServerConfig;
use super::conn::{Conn, Io};
use super::counters::bump;
use super::driver::{Bytes, Closed, Core, Got};
use super::session::ServerFactory;
use super::thread::{Figs, Thread, ThreadInput, PUBLISH_EVERY};
use crate::clock::Clock;
use crate::net::epoll::Epoll;
use crate::net::socket::{self, errno};
use crate::reactor::transport::{self, Input};
use crate::reactor::{EpollHandler, Reactor, Stop, OWN_TOKENS};
use rustls::ServerConnection;
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// Listener `i` has token `LISTENER + i` (`OWN_TOKENS` itself is the reactor's stop).
const LISTENER: u64 = OWN_TOKENS + 1;
/// Connections accepted per listener event before the others get a turn.
const ACCEPT_BATCH: usize = 128;
/// Events taken per epoll_wait.
const EVENTS: usize = 512;

/// The thread's epoll instance.
pub struct Readiness {
    ep: Epoll,
}

impl Readiness {
    fn set_listening(&self, listeners: &[OwnedFd], on: bool) {
        let events = if on { libc::EPOLLIN as u32 } else { 0 };
        for (i, l) in listeners.iter().enumerate() {
            let _ = self.ep.modify(l.as_raw_fd(), events, LISTENER + i as u64);
        }
    }
}

/// Writes through TLS when the connection has it.
#[inline]
fn write(fd: i32, tls: Option<&mut ServerConnection>, data: &[u8]) -> Result<usize, ErrorKind> {
    match tls {
        None => transport::write_plain(fd, data),
        Some(s) => transport::write_tls(s, fd, data),
    }
}

impl Core for Readiness {
    fn read<S>(&mut self, c: &mut Conn<S>, buf: &mut [u8]) -> Input {
        if !c.readable {
            return Input::WouldBlock;
        }
        let got = match c.extra.as_mut().and_then(|x| x.tls.as_deref_mut()) {
            None => transport::read_plain(c.fd, buf),
            Some(s) => transport::read_tls(s, c.fd, buf),
        };
        match got {
            // A short read drained the socket, unless the peer's FIN is still to read.
            Input::Data { drained, .. } if drained && !c.hup => c.readable = false,
            // A TLS handshake may owe the peer a reply the socket did not take.
            Input::WouldBlock => c.readable = false,
            _ => {}
        }
        got
    }

    fn send<S>(
        &mut self,
        _tok: u64,
        c: &mut Conn<S>,
        b: Bytes<'_>,
        io: &mut Io,
    ) -> Result<(), ErrorKind> {
        let data = b.as_slice();
        if c.extra.as_ref().is_some_and(|x| x.owes()) {
            // Behind replies still owed: in order.
            c.extra(&mut io.extras).owed.extend_from_slice(data);
            return Ok(());
        }
        let tls = c.extra.as_mut().and_then(|x| x.tls.as_deref_mut());
        let n = write(c.fd, tls, data)?;
        io.turn.bytes_out += n as u64;
        if n < data.len() {
            c.extra(&mut io.extras).owed.extend_from_slice(&data[n..]);
        }
        Ok(())
    }

    fn flush<S>(&mut self, _tok: u64, c: &mut Conn<S>, io: &mut Io) -> Result<(), ErrorKind> {
        let fd = c.fd;
        let Some(x) = c.extra.as_deref_mut() else {
            return Ok(());
        };
        if let Some(s) = x.tls.as_deref_mut() {
            if !transport::flush_tls(s, fd)? {
                return Ok(());
            }
        }
        if x.owes() {
            let n = write(fd, x.tls.as_deref_mut(), &x.owed[x.owed_at..])?;
            io.turn.bytes_out += n as u64;
            x.owed_at += n;
            if n > 0 {
                c.last_active = io.tick;
            }
            if !x.owes() {
                x.owed_out();
            }
        }
        Ok(())
    }

    /// Anything owed: the socket is full, so reading more would only queue more.
    fn full<S>(&self, c: &Conn<S>) -> bool {
        c.extra
            .as_ref()
            .is_some_and(|x| x.owes() || x.tls.as_ref().is_some_and(|s| s.wants_write()))
    }

    // Edge-triggered: a connection that is not read stays readable until it is.
    fn pause<S>(&mut self, _tok: u64, _c: &mut Conn<S>) {}
    fn resume<S>(&mut self, _tok: u64, _c: &mut Conn<S>) {}

    fn end<S>(&mut self, _tok: u64, _c: &mut Conn<S>) -> bool {
        true
    }

    fn close_fd(&mut self, fd: i32) {
        socket::close(fd);
    }

    fn listen(&mut self, listeners: &[OwnedFd]) {
        self.set_listening(listeners, true);
    }
}

/// Runs one server thread until it is told to stop; `ready` is called once its epoll
/// instance exists with its listeners in it, before the first wait.
pub fn run<F: ServerFactory>(
    cfg: ServerConfig,
    factory: Arc<F>,
    input: ThreadInput<Figs<F>>,
    ready: &mut dyn FnMut(),
) -> std::io::Result<()> {
    let ep = Epoll::new()?;
    for (i, l) in input.listeners.iter().enumerate() {
        ep.add(l.as_raw_fd(), libc::EPOLLIN as u32, LISTENER + i as u64)
            .map_err(std::io::Error::from_raw_os_error)?;
    }
    // Time zero is the pacing epoch, the sessions' clock.
    let clock = Clock::since(cfg.pacing.epoch);
    let mut reactor = Reactor::new(clock, &ep, EVENTS, PUBLISH_EVERY, Stop::Fd(input.stop_fd))?;
    let read_buffer = cfg.read_buffer.max(1);
    let mut t = Thread::new(cfg, factory, input, clock, read_buffer, Readiness { ep });
    ready();
    reactor.run(&mut t);
    t.shut_down();
    Ok(())
}

impl<F: ServerFactory> EpollHandler for Thread<F, Readiness> {
    fn epoll(&self) -> &Epoll {
        &self.core.ep
    }

    fn woke(&mut self) {
        self.stamp_tick(std::time::Instant::now);
    }

    fn on_event(&mut self, tok: u64, bits: u32) {
        if tok >= LISTENER {
            return accept(self, (tok - LISTENER) as usize);
        }
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        let readable = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
        if bits & readable != 0 {
            c.readable = true;
        }
        if bits & (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32 != 0 {
            c.hup = true;
        }
        self.drive(tok, Got::Nothing);
    }
}

/// Accepts what listener `which` has, in a batch: each connection admitted, given its
/// TLS session, registered.
fn accept<F: ServerFactory>(t: &mut Thread<F, Readiness>, which: usize) {
    let Some(lfd) = t.listeners.get(which).map(|l| l.as_raw_fd()) else {
        return;
    };
    for _ in 0..ACCEPT_BATCH {
        // SAFETY: an all-zero sockaddr_storage is valid; accept4 writes at most len bytes.
        let mut sa: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: sa and len are valid for accept4 to write.
        let fd = unsafe {
            libc::accept4(
                lfd,
                &mut sa as *mut _ as *mut libc::sockaddr,
                &mut len,
                libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            )
        };
        if fd < 0 {
            match errno() {
                libc::EAGAIN => return,
                libc::EINTR | libc::ECONNABORTED => continue,
                e => {
                    // EMFILE and friends: rest instead of spinning on accept.
                    if t.cfg.debug {
                        eprintln!("accept failed: {}", std::io::Error::from_raw_os_error(e));
                    }
                    t.core.set_listening(&t.listeners, false);
                    t.rest_listeners(t.ctx.clock.now_ns());
                    return;
                }
            }
        }
        let peer = t.cfg.debug.then(|| peer_of(&sa, len)).flatten();
        let Some(tok) = t.admit(fd, peer) else {
            continue;
        };
        if t.cfg.nodelay {
            socket::set_nodelay(fd);
        }
        if let Some(tls) = t.cfg.tls.clone() {
            let Ok(s) = ServerConnection::new(tls) else {
                bump(&t.ctx.counters.tls_failures, 1);
                t.close(tok, Closed::Error(ErrorKind::InvalidData));
                continue;
            };
            let tick = t.ctx.io.tick;
            if let Some(c) = t.conns.get_mut(tok) {
                let x = c.extra(&mut t.ctx.io.extras);
                x.tls = Some(Box::new(s));
                x.handshake_since = tick;
            }
        }
        let interest = (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32;
        if let Err(e) = t.core.ep.add(fd, interest, tok) {
            let kind = std::io::Error::from_raw_os_error(e).kind();
            t.close(tok, Closed::Error(kind));
            continue;
        }
        t.started(tok);
    }
}

fn peer_of(sa: &libc::sockaddr_storage, len: libc::socklen_t) -> Option<std::net::SocketAddr> {
    // SAFETY: accept4 filled `len` bytes of a socket address into sa.
    let a = unsafe { socket2::SockAddr::new(*sa, len) };
    a.as_socket()
}
