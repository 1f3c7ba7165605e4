//! The refill path: whether the plan lets a connection send, and its requests encoded
//! into the worker's output and put in flight (closed loop: as the window has room).

use super::slot::{work, Conn};
use crate::engine::ctx::Ctx;
use crate::engine::session::{ClientSession, InFlight, SessionFactory};
use crate::engine::spec::Plan;

impl<S: ClientSession> Conn<S> {
    /// Whether the plan lets this connection send, now, a request intended at `intended`.
    /// The measured phase ends at the deadline by the clock, whatever the schedule's
    /// backlog: an open loop that fell behind must not go on sending its arrears.
    #[inline]
    pub(super) fn may_send<F: SessionFactory<Session = S>>(
        &self,
        intended: u64,
        now: u64,
        ctx: &Ctx<F>,
    ) -> bool {
        if ctx.stopping || self.leaving() || ctx.deadline_ns.is_some_and(|d| intended.max(now) >= d)
        {
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
    pub(super) fn push_requests<F: SessionFactory<Session = S>>(
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
    pub(super) fn room<F: SessionFactory<Session = S>>(&self, ctx: &Ctx<F>) -> usize {
        ctx.spec.shape.refill.room(ctx.pipeline, self.in_flight())
    }

    /// Encodes as many requests as the pipeline, the schedule and the budget allow.
    pub(super) fn fill<F: SessionFactory<Session = S>>(&mut self, now: u64, ctx: &mut Ctx<F>) {
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
            if measured {
                // Connection stages: sent now, so in the stage of now.
                ctx.stats.stage_sent_n(now, n);
            }
        }
    }
}
