//! Open-loop pacing: a slot's place in its worker's schedule, and the sends whose
//! intended time has come.

use super::slot::Conn;
use crate::engine::ctx::Ctx;
use crate::engine::ramp::Schedule;
use crate::engine::session::{ClientSession, SessionFactory};

impl<S: ClientSession> Conn<S> {
    /// Open loop: skips the sends scheduled before `t` (a held connection released:
    /// what it would have sent before is not a backlog).
    pub fn skip_schedule_until(&mut self, t: u64, shared: Option<&Schedule>) {
        if let Some(s) = shared.filter(|_| self.open_loop()) {
            while self.next_intended < t {
                self.sent_k += 1;
                self.next_intended = s.intended(self.offset_ns, self.sent_k);
            }
        }
    }

    /// Open loop: sends every request whose intended time has come.
    pub(super) fn fill_scheduled<F: SessionFactory<Session = S>>(
        &mut self,
        now: u64,
        ctx: &mut Ctx<F>,
    ) {
        if !self.open_loop() {
            return;
        }
        // Taken out of the worker's context for the loop (a move, no count kept) and
        // put back after it: the sends below borrow the context.
        let Some(schedule) = ctx.schedule.take() else {
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
            self.next_intended = schedule.intended(self.offset_ns, self.sent_k);
            let before = ctx.out.len();
            self.push_requests(1, intended, now, measured, ctx);
            if measured {
                ctx.stats.stage_sent(intended);
            }
            let t = &mut tally[measured as usize];
            t.0 += 1;
            t.1 += (ctx.out.len() - before) as u64;
        }
        ctx.schedule = Some(schedule);
        for (measured, (count, bytes)) in [(false, tally[0]), (true, tally[1])] {
            if count > 0 {
                ctx.stats.record_sent(measured, count, bytes);
            }
        }
    }
}
