//! What the connections of one worker share: the plan's limits, the clock, the
//! statistics and figures, the timers, one read buffer and one encode buffer.
//! One thread owns it all, so it is plain fields: no cell, no lock, no atomic.

use super::admission::Admission;
use super::busy::BusyPool;
use super::coalesce::Coalesce;
use super::limits::DRAIN_GRACE;
use super::ramp::Schedule;
use super::session::{ClientSession, SessionFactory};
use super::spec::{LoadSpec, Plan};
use super::tally::Tally;
use crate::clock::Clock;
use crate::net::epoll::Epoll;
use crate::reactor::{Pending, Timers};
use crate::stats::WorkerStats;
use std::sync::Arc;

type FiguresOf<F> = <<F as SessionFactory>::Session as ClientSession>::Figures;

pub struct Ctx<F: SessionFactory> {
    pub factory: Arc<F>,
    pub spec: Arc<LoadSpec>,
    pub worker: usize,
    pub clock: Clock,
    pub epoll: Epoll,
    pub stats: WorkerStats,
    /// The protocol's figures: [warm-up, measured].
    pub figures: [FiguresOf<F>; 2],
    pub timers: Timers,
    /// Open loop: the interval and ramp of every slot's schedule (offset 0); a slot
    /// keeps only its own offset (`Conn`), 24 bytes less per connection.
    pub schedule: Option<Schedule>,
    /// The `Busy` parts connections gave back, for the next that has work.
    pub busy: BusyPool,
    pub rbuf: Vec<u8>,
    /// Requests (and answers to events) are encoded here, then written; only what the
    /// socket does not take is copied to the connection.
    pub out: Vec<u8>,
    pub pipeline: usize,
    pub timeout_ns: u64,
    /// Requests intended before this are warm-up (the ramp too, unless it is measured).
    pub measure_start_ns: u64,
    /// No request is sent at or after this (duration plans).
    pub deadline_ns: Option<u64>,
    /// Count plans: measured requests this worker may still send.
    pub budget: Option<u64>,
    /// Seen the stop flag (refreshed by the loop at least every 50 ms).
    pub stopping: bool,
    pub per_connection: Option<u64>,
    /// Connection stages (`engine::vus`): a slot that said goodbye opens again unless it
    /// was asked to leave.
    pub conn_stages: bool,
    /// Open loop: the furthest any connection's schedule fell behind (ns), up to the deadline.
    pub max_lag_ns: u64,
    /// Connections of this worker made so far (their ids).
    pub made: u64,
    /// Slots whose run has not ended.
    pub live: usize,
    /// Connections established and not closed yet (the live endpoint's gauge).
    pub open: u64,
    /// Batch plans: slots waiting at the barrier of the current step.
    pub parked: usize,
    /// Slots whose requests wait for the end of the loop turn, to go out together
    /// (`reactor::Pending`: the peer is woken once per turn, not once per write).
    pub pending: Pending,
    /// Slots that stopped reading before EAGAIN to let the others have a turn:
    /// (slot, generation), served before the next wait.
    pub ready: Vec<(u32, u32)>,
    /// Which connection attempts may start now (LoadSpec::attempts).
    pub admission: Admission,
    /// Hold plans: requests may go (LoadSpec::release was set, or there is none).
    pub released: bool,
    /// Slots whose first connection attempt has not settled (up or failed) yet.
    pub unsettled: usize,
    /// Bytes this worker's connections keep (their `Busy::held`), and the most they
    /// may: the worker's share of the run's memory budget (`LoadShape::memory_budget`).
    pub kept: usize,
    pub kept_share: usize,
    /// The worker runs on io_uring (`reactor::uring_loop`): its plain sockets' sends,
    /// receives and connect polls go through the ring.
    pub uring: Option<Box<super::uring_slots::UringSlots>>,
    /// How long the worker naps when it has nothing to do (`coalesce.rs`).
    pub coalesce: Coalesce,
}

impl<F: SessionFactory> Ctx<F> {
    #[inline]
    pub fn now(&self) -> u64 {
        self.clock.now_ns()
    }

    pub fn batch(&self) -> bool {
        matches!(self.spec.shape.plan, Plan::Batch { .. })
    }

    /// A hold plan that has not been stopped: connections stay, idle or not.
    #[inline]
    pub fn holding(&self) -> bool {
        matches!(self.spec.shape.plan, Plan::Hold) && !self.stopping
    }

    /// A session for the next connection; its id is unique within the run.
    /// This worker's connection number `made` in the run's numbering (`Spread`).
    pub fn connection_number(&self, made: u64) -> u64 {
        made * self.spec.shape.threads as u64 + self.worker as u64
    }

    /// What one read settled, into the worker's statistics; its last reply's latency
    /// into the naps' (`coalesce.rs`).
    #[inline]
    pub fn commit(&mut self, tally: Tally) {
        if let Some(latency) = tally.last_latency_ns() {
            self.coalesce.reply(latency);
        }
        tally.commit(&mut self.stats);
    }

    pub fn new_session(&mut self) -> F::Session {
        let id = ((self.worker as u64) << 40) | self.made;
        self.made += 1;
        self.factory.session(id)
    }

    /// When a duration plan's connections give up on replies still in flight
    /// (u64::MAX for other plans).
    #[inline]
    pub fn cut_ns(&self) -> u64 {
        self.deadline_ns.map_or(u64::MAX, |d| {
            d.saturating_add(DRAIN_GRACE.as_nanos() as u64)
        })
    }

    /// Open loop: notes how far behind its schedule a connection is at `now`
    /// (`next_intended` is its next unsent request), counting no further than the deadline.
    #[inline]
    pub fn note_lag(&mut self, now: u64, next_intended: u64) {
        let upto = self.deadline_ns.map_or(now, |d| now.min(d));
        self.max_lag_ns = self.max_lag_ns.max(upto.saturating_sub(next_intended));
    }

    /// `n` bytes read at `now`: every byte counts in `bytes_received` of the phase it
    /// came in, whatever it turns out to be (a reply, an event, an exchange's answer).
    #[inline]
    pub fn received(&mut self, n: usize, now: u64) {
        let measured = now >= self.measure_start_ns;
        self.stats.received(measured, n as u64);
    }

    /// The figures of the phase a time belongs to.
    #[inline]
    pub fn figures_at(&mut self, measured: bool) -> &mut FiguresOf<F> {
        &mut self.figures[measured as usize]
    }
}
