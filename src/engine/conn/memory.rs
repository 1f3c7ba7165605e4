//! The bytes a slot keeps: given back when idle, counted in its worker's kept bytes,
//! and held to the worker's share of the run's memory budget.

use super::slot::{work, Conn, End};
use crate::engine::busy::BusyPool;
use crate::engine::ctx::Ctx;
use crate::engine::session::{ClientSession, SessionFactory};
use crate::stats::ErrorKind;

/// An open-loop connection whose next request is at least this far away gives its
/// `Busy` part back: one allocation per request at most for connections this slow,
/// none for a connection that keeps sending (closed loop keeps it until it retires).
const IDLE_RELEASE_NS: u64 = 1_000_000_000;

impl<S: ClientSession> Conn<S> {
    /// Nothing in flight or unwritten: the buffers go (an idle connection costs its
    /// slot alone), and the whole `Busy` part goes back to the pool when the next send
    /// is far off.
    pub(super) fn release_if_idle(&mut self, now: u64, pool: &mut BusyPool) {
        let Some(b) = self.busy.as_mut() else {
            return;
        };
        if b.input.is_empty() && b.input.capacity() > 0 {
            b.input = Vec::new();
        }
        if b.output.capacity() > 0 {
            b.output = Vec::new();
        }
        let far = self.pace == super::slot::Pace::Open
            && self.next_intended.saturating_sub(now) >= IDLE_RELEASE_NS;
        if far && b.is_empty() {
            if let Some(b) = self.busy.take() {
                pool.give(b);
            }
        }
    }

    /// The slot keeps no bytes now: they leave its worker's count.
    pub(super) fn forget_held<F: SessionFactory<Session = S>>(&mut self, ctx: &mut Ctx<F>) {
        if let Some(b) = self.busy.as_mut() {
            ctx.kept -= b.held;
            b.held = 0;
        }
    }

    /// Brings the worker's count of kept bytes up to date with this slot's (its
    /// buffers' room, and on io_uring what waits behind its SEND); returns whether the
    /// slot's part grew. Where nothing can have grown (a SEND completed, the slot went
    /// idle) this alone is asked; where something may have, `within_budget`.
    pub(super) fn count_held<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) -> bool {
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
    pub(super) fn within_budget<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        ctx: &mut Ctx<F>,
    ) -> bool {
        // Counted as `may_grow` counts it: the worker is back at its count, no more.
        !self.count_held(slot, ctx) || self.may_grow(0, ctx)
    }

    /// Whether the worker's kept bytes may grow by `extra` within its share of the
    /// run's memory budget; if not, the connection is dropped (counted here).
    pub(super) fn may_grow<F: SessionFactory<Session = S>>(
        &self,
        extra: usize,
        ctx: &mut Ctx<F>,
    ) -> bool {
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
    pub(super) fn drop_over_budget<F: SessionFactory<Session = S>>(
        &mut self,
        ctx: &mut Ctx<F>,
    ) -> End {
        let Some(r) = self.busy.as_mut().and_then(|b| b.pop_awaited()) else {
            return End::Failed(ErrorKind::TooLarge);
        };
        ctx.stats
            .record_error(r.measured, ErrorKind::TooLarge, r.intended_ns, None);
        End::Failed(ErrorKind::Dropped)
    }
}
