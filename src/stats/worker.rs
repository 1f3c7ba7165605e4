//! What one load worker records while it runs. A worker is one thread with one event
//! loop that owns these outright, so recording a reply is a few adds and one
//! histogram increment: no lock, no atomic.

use super::conn_tally::ConnTally;
use super::error_texts::ErrorTexts;
use super::event_loop::LoopCounts;
use super::latency::Latency;
use super::outcome::{Counters, ErrorKind};
use super::stages::StageTally;

pub struct WorkerStats {
    /// Requests sent during warm-up: counted apart, never in results.
    pub warmup: Counters,
    pub measured: Counters,
    /// Latency from the intended send time (equal to the actual one in closed loop),
    /// of every interval already handed over; see `close_interval`.
    pub latency: Latency,
    /// Open loop only: latency from the actual send time, to show beside the corrected one.
    pub uncorrected: Option<Latency>,
    /// The text of the first failed connection attempt, for the report.
    pub first_connect_error: Option<String>,
    /// Connection handshakes (connect to ready for requests) of protocols that have one,
    /// measured phase only.
    pub handshake: Latency,
    /// This interval's handshakes, when the series is of handshakes
    /// (`LoadSpec::interval_handshakes`): recorded here only, folded into `handshake`
    /// by `close_interval`, as `interval` is into `latency`.
    pub interval_handshake: Option<Latency>,
    /// This interval's latency. Each reply is recorded here only (one histogram
    /// increment per reply); `close_interval` folds it into `latency`.
    pub interval: Latency,
    /// Failed attempts by errno, connections lost while held: measured phase, in the
    /// phase `Counters` counts the same events in (so `connect` can leave out its ramp).
    pub conns: ConnTally,
    /// The same of the warm-up (and of a ramp that is not measured).
    pub warmup_conns: ConnTally,
    /// The loop this worker ran on, counted once when it chose it.
    pub event_loop: LoopCounts,
    /// What the peers said when requests or connections failed, measured phase.
    pub texts: ErrorTexts,
    /// `--stages`: measured requests by the stage they were meant to go in, made once
    /// before the run (`stats::stages`).
    pub stages: Option<StageTally>,
}

impl WorkerStats {
    pub fn new(open_loop: bool) -> Self {
        WorkerStats {
            warmup: Counters::default(),
            measured: Counters::default(),
            latency: Latency::new(),
            uncorrected: open_loop.then(Latency::new),
            interval: Latency::new(),
            handshake: Latency::new(),
            interval_handshake: None,
            first_connect_error: None,
            conns: ConnTally::default(),
            warmup_conns: ConnTally::default(),
            event_loop: LoopCounts::default(),
            texts: ErrorTexts::default(),
            stages: None,
        }
    }

    #[inline]
    pub fn phase(&mut self, measured: bool) -> &mut Counters {
        if measured {
            &mut self.measured
        } else {
            &mut self.warmup
        }
    }

    /// The failures and losses of one phase, as `phase` gives its counters.
    #[inline]
    pub fn conns_at(&mut self, measured: bool) -> &mut ConnTally {
        if measured {
            &mut self.conns
        } else {
            &mut self.warmup_conns
        }
    }

    #[inline]
    pub fn record_sent(&mut self, measured: bool, count: u64, bytes: u64) {
        let c = self.phase(measured);
        c.sent += count;
        c.bytes_sent += bytes;
    }

    /// Counts a failed connection attempt and keeps the first one's text; a measured
    /// one's text goes to the error texts too.
    pub fn record_connect_error(&mut self, measured: bool, kind: ErrorKind, detail: String) {
        self.phase(measured).error(kind, 1);
        if measured {
            self.texts.note_text(kind, &detail, 1);
        }
        if self.first_connect_error.is_none() {
            self.first_connect_error = Some(detail);
        }
    }

    /// Ends an interval: returns its latency and adds it to the run's. The interval's
    /// table goes with it (no copy); the next interval records into `next`, an emptied
    /// table back from the aggregator (`stats::intervals::Recycler`) or none yet.
    /// With a series of handshakes, the interval's handshakes go instead, and the
    /// replies' table is emptied in place for the next interval.
    pub fn close_interval(&mut self, next: Latency) -> Latency {
        self.latency.add(&self.interval);
        match self.interval_handshake.as_mut() {
            None => std::mem::replace(&mut self.interval, next),
            Some(h) => {
                self.interval.reset();
                self.handshake.add(h);
                std::mem::replace(h, next)
            }
        }
    }

    /// A connection's handshake (connect to ready), measured phase: into the
    /// interval's table when the series is of handshakes, else the run's.
    #[inline]
    pub fn record_handshake(&mut self, ns: u64) {
        match self.interval_handshake.as_mut() {
            Some(h) => h.record(ns),
            None => self.handshake.record(ns),
        }
    }

    /// `n` correct replies (their latency is recorded apart; their bytes were counted
    /// as they were read, `received`).
    #[inline]
    pub fn record_ok(&mut self, measured: bool, n: u64) {
        self.phase(measured).ok += n;
    }

    /// `n` bytes read from a peer, in the phase they came in: every byte, whatever it
    /// turns out to be (a reply, an event, an exchange's answer, bytes nobody asked for).
    #[inline]
    pub fn received(&mut self, measured: bool, n: u64) {
        self.phase(measured).bytes_received += n;
    }

    /// The latency of `n` correct measured replies, from the intended and the actual
    /// send time (one histogram increment of `n`: replies settled together often share
    /// one latency, see `engine::tally`).
    #[inline]
    pub fn record_latency(&mut self, corrected_ns: u64, actual_ns: u64, n: u64) {
        self.interval.record_n(corrected_ns, n);
        if let Some(u) = self.uncorrected.as_mut() {
            u.record_n(actual_ns, n);
        }
    }

    /// `n` correct measured replies to requests meant to go at `intended_ns`: their
    /// latency (`record_latency`) and, with `--stages`, their stage's count and latency.
    #[inline]
    pub fn record_replied(&mut self, intended_ns: u64, corrected_ns: u64, actual_ns: u64, n: u64) {
        self.record_latency(corrected_ns, actual_ns, n);
        if let Some(s) = self.stages.as_mut() {
            s.ok(intended_ns, corrected_ns, n);
        }
    }

    /// An error of a request meant to go at `intended_ns`: in its phase and, measured,
    /// in its stage; `corrected_ns`: its latency when it was answered in step (a wrong
    /// reply, recorded apart with `record_latency`).
    #[inline]
    pub fn record_error(
        &mut self,
        measured: bool,
        kind: ErrorKind,
        intended_ns: u64,
        corrected_ns: Option<u64>,
    ) {
        self.phase(measured).error(kind, 1);
        if let Some(s) = self.stages.as_mut().filter(|_| measured) {
            s.error(intended_ns, corrected_ns);
        }
    }

    /// `n` measured requests sent now (closed loop: connection stages), in the stage of
    /// `now_ns`.
    #[inline]
    pub fn stage_sent_n(&mut self, now_ns: u64, n: u64) {
        if let Some(s) = self.stages.as_mut() {
            s.sent_n(now_ns, n);
        }
    }

    /// The worker's open connections changed to `open` at `now_ns` (per stage: the
    /// count at its end and its highest).
    #[inline]
    pub fn stage_open(&mut self, now_ns: u64, open: u64) {
        if let Some(s) = self.stages.as_mut() {
            s.open(now_ns, open);
        }
    }

    /// A measured connection whose attempt started at `began_ns` came up: in that
    /// attempt's stage.
    #[inline]
    pub fn stage_connected(&mut self, began_ns: u64) {
        if let Some(s) = self.stages.as_mut() {
            s.connected(began_ns);
        }
    }

    /// A measured connection whose attempt started at `began_ns` was ready after
    /// `ns`: its stage's connect latency (when kept).
    #[inline]
    pub fn stage_connect_took(&mut self, began_ns: u64, ns: u64) {
        if let Some(s) = self.stages.as_mut() {
            s.connect_took(began_ns, ns);
        }
    }

    /// A measured attempt started at `began_ns` failed: in that attempt's stage.
    #[inline]
    pub fn stage_connect_error(&mut self, began_ns: u64) {
        if let Some(s) = self.stages.as_mut() {
            s.connect_error(began_ns);
        }
    }

    /// A measured request sent, meant to go at `intended_ns`, in its stage (`--stages`;
    /// `record_sent` counts it in the totals).
    #[inline]
    pub fn stage_sent(&mut self, intended_ns: u64) {
        if let Some(s) = self.stages.as_mut() {
            s.sent(intended_ns);
        }
    }
}
