//! The write path: what was encoded goes to the socket (or an io_uring SEND), what it
//! does not take is kept, and what the session owes once the output is out.

use super::slot::{work, Conn};
use crate::engine::ctx::Ctx;
use crate::engine::limits::MAX_READ_BUFFER;
use crate::engine::session::{ClientSession, SessionFactory};
use crate::engine::transport;
use crate::stats::ErrorKind;

impl<S: ClientSession> Conn<S> {
    /// Writes what was encoded (and what waited); keeps what the socket did not take.
    pub(super) fn send<F: SessionFactory<Session = S>>(
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
    pub(super) fn all_written<F: SessionFactory<Session = S>>(
        &self,
        slot: u32,
        ctx: &Ctx<F>,
    ) -> bool {
        self.output_empty()
            && !self.tls.as_ref().is_some_and(|s| s.wants_write())
            && ctx.uring.as_ref().map_or(true, |u| u.idle(slot))
    }

    /// Requests that settle on write wait in the queue (never, for a protocol whose
    /// requests all get replies: a constant false).
    #[inline]
    pub(super) fn awaits_write(&self) -> bool {
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

    /// Forgets what was to be written: the turn's shared output and the slot's own
    /// (the socket is gone; the next connection must not inherit these bytes).
    pub(super) fn drop_output<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) {
        ctx.out.clear();
        if let Some(b) = self.busy.as_mut() {
            b.output.clear();
        }
    }

    /// Writes what the session held back until the connection's earlier output was
    /// out (`ClientSession::owed`: a pong for the latest ping), once it is.
    pub(super) fn answer_owed<F: SessionFactory<Session = S>>(
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
}
