//! Connection stages (`engine::vus`): a slot asked to open, or to leave. A leaving
//! connection sends nothing more, waits for its replies in flight (counted as any),
//! says its goodbye and rests (`State::Off`) with no socket and no timer, until asked
//! back or the run ends.

use super::slot::{Conn, Pace, State};
use crate::engine::ctx::Ctx;
use crate::engine::session::{ClientSession, SessionFactory};

impl<S: ClientSession> Conn<S> {
    /// Wanted open: a slot at rest connects now; one still leaving stays (its
    /// connection goes on, or opens again after its goodbye: `after_close`).
    pub fn stay<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        if self.leaving() {
            self.pace = Pace::Closed;
        }
        if self.state == State::Off {
            self.begin(slot, ctx);
        }
    }

    /// No longer wanted open: a running connection drains and says goodbye (at once
    /// when idle); one coming up does so once up; one waiting rests.
    pub fn leave<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        self.pace = Pace::Leaving;
        match self.state {
            State::Running => self.pump(slot, ctx),
            State::Waiting => self.rest(slot, ctx),
            _ => {}
        }
    }

    /// At rest until asked back; past the run's end (or on Ctrl-C), retired instead.
    pub(super) fn rest<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        let over = ctx.stopping || ctx.deadline_ns.is_some_and(|d| ctx.now() >= d);
        if over {
            return self.retire(slot, ctx);
        }
        self.settle_attempt(ctx);
        self.state = State::Off;
        self.gen = self.gen.wrapping_add(1);
        self.wake_at = u64::MAX;
    }

    /// A slot at rest when the run ends.
    pub fn retire_at_rest<F: SessionFactory<Session = S>>(&mut self, slot: u32, ctx: &mut Ctx<F>) {
        if self.state == State::Off {
            self.retire(slot, ctx);
        }
    }
}
