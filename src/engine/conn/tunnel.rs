//! A connection through an HTTP CONNECT proxy (`Connector::tunnel`): once connected to
//! the proxy, the CONNECT request goes out and the proxy's answer head is read, then
//! TLS and the session's opening exchange run through the tunnel. Its round trip is
//! part of the connection's opening (one exchange request and answer, its bytes in
//! `bytes_sent`/`bytes_received`), never a request of the run; a refusal (407, 403,
//! 502, ...) is a failed connection with the proxy's status and reason in words. Only
//! a connection's start passes here: requests on an open tunnel take the usual path.

use super::slot::{Conn, State};
use crate::engine::connector::ConnectError;
use crate::engine::ctx::Ctx;
use crate::engine::session::{ClientSession, SessionFactory};
use crate::net::proxy::{self, Reply, MAX_REPLY_HEAD};
use crate::stats::ErrorKind;

impl<S: ClientSession> Conn<S> {
    /// Connected to the proxy: asks it for the tunnel. A fresh socket takes the few
    /// hundred bytes of a CONNECT request whole; a short write fails the attempt.
    pub(super) fn tunnel_start<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) {
        let Some(t) = ctx.spec.connector.tunnel.clone() else {
            return self.after_tunnel(slot, ctx);
        };
        let measured = ctx.batch() || self.began >= ctx.measure_start_ns;
        match crate::net::socket::write(self.fd, &t.request) {
            Ok(n) if n == t.request.len() => {
                ctx.stats.record_sent(measured, 0, n as u64);
                ctx.stats.phase(measured).exchanges.sent += 1;
                self.state = State::Proxy;
                // The answer may be in already (epoll's edge came with the connect).
                self.tunnel_step(slot, ctx);
            }
            Ok(n) => self.tunnel_failed(
                slot,
                ctx,
                format!(
                    "the proxy {} took {n} of the CONNECT request's {} bytes",
                    t.shown,
                    t.request.len()
                ),
            ),
            Err(e) => self.tunnel_failed(
                slot,
                ctx,
                format!(
                    "sending CONNECT to the proxy {}: {}",
                    t.shown,
                    std::io::Error::from_raw_os_error(e)
                ),
            ),
        }
    }

    /// The proxy's answer, when its head is whole: 2xx opens the tunnel (its head
    /// taken from the socket, nothing after it), anything else fails the attempt.
    pub(super) fn tunnel_step<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) {
        let mut buf = [0u8; MAX_REPLY_HEAD];
        let tunnel = ctx.spec.connector.tunnel.clone();
        let shown = tunnel.as_ref().map_or("", |t| t.shown.as_str());
        let got = match proxy::peek(self.fd, &mut buf) {
            Ok(0) => Err(format!(
                "the proxy {shown} closed the connection before answering CONNECT"
            )),
            Ok(n) => Ok(n),
            Err(libc::EAGAIN) => return,
            Err(e) => Err(format!(
                "the proxy {shown}: {}",
                std::io::Error::from_raw_os_error(e)
            )),
        };
        let reply = match got {
            Ok(n) => proxy::reply(&buf[..n]),
            Err(why) => return self.tunnel_failed(slot, ctx, why),
        };
        let head = match reply {
            Reply::Incomplete => return,
            Reply::Open { head } => head,
            Reply::Refused(why) => {
                self.count_answer(ctx);
                return self.tunnel_failed(slot, ctx, format!("{why} (proxy {shown})"));
            }
        };
        if crate::net::socket::recv(self.fd, &mut buf[..head]) != Ok(head) {
            let why = format!("the proxy {shown}: its answer could not be taken whole");
            return self.tunnel_failed(slot, ctx, why);
        }
        ctx.received(head, ctx.now());
        self.count_answer(ctx);
        self.after_tunnel(slot, ctx);
    }

    fn count_answer<F: SessionFactory<Session = S>>(&self, ctx: &mut Ctx<F>) {
        let measured = ctx.batch() || self.began >= ctx.measure_start_ns;
        ctx.stats.phase(measured).exchanges.answered += 1;
    }

    fn tunnel_failed<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
        detail: String,
    ) {
        let e = ConnectError {
            kind: ErrorKind::ConnectFailed,
            detail,
            errno: 0,
        };
        self.connect_failed(slot, ctx, e)
    }
}
