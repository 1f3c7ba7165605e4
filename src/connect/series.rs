//! The `connect` parent's series while the run goes: the steps its workers send
//! (taken from their reports at every look, merged by `steps.rs`) and `--hlog`, which
//! writes each step as every worker has sent it. The rows hold the connect latency:
//! `count` and the percentiles are the interval's established connections (socket to
//! established, TLS included), `connect_errors` its failed attempts; `sent`, `ok` and
//! `errors` are the echo frames' (pings, or churn's one echo per cycle).

use super::plan::ConnectConfig;
use super::reports::ClientReports;
use super::steps::{Nobody, Steps};
use crate::error::{Error, Result};
use crate::procs::group::Reports;
use crate::stats::hlog::HlogWriter;
use crate::stats::{IntervalRow, Observer as _};
use std::time::{Duration, Instant};

pub struct Series {
    steps: Steps,
    hlog: Option<HlogWriter>,
    /// When the measured phase starts, after `go`: at once, or after a churn ramp
    /// left out of the figures (the workers' series start there too).
    measure_at: Duration,
    started: bool,
    /// The first step that would not merge: said once the run is over.
    failed: Option<String>,
}

impl Series {
    pub fn new(cfg: &ConnectConfig, workers: usize, hlog: Option<HlogWriter>) -> Self {
        let ramp_left_out = cfg.ramp.filter(|r| cfg.is_churn() && !r.measured);
        Series {
            steps: Steps::new(workers, cfg.coordination.shard.is_some()),
            hlog,
            measure_at: ramp_left_out.map_or(Duration::ZERO, |r| r.over),
            started: false,
            failed: None,
        }
    }

    /// Takes the steps the workers sent and tells those every worker has sent.
    pub fn take(&mut self, t0: Instant, reports: &mut [ClientReports]) {
        if !self.started && t0.elapsed() >= self.measure_at {
            self.started = true;
            if let Some(h) = self.hlog.as_mut() {
                h.on_measure_start();
            }
        }
        self.gather(reports);
        let done: Vec<bool> = reports.iter().map(Reports::done).collect();
        let steps = &mut self.steps;
        match self.hlog.as_mut() {
            Some(h) => steps.tell(&done, h),
            None => steps.tell(&done, &mut Nobody),
        }
    }

    fn gather(&mut self, reports: &mut [ClientReports]) {
        for (w, r) in reports.iter_mut().enumerate() {
            while let Some((step, row)) = r.steps.pop_front() {
                if let Err(e) = self.steps.add(w, step, &row) {
                    self.failed.get_or_insert(e);
                }
            }
        }
    }

    /// The run is over (`reports` reaped): every step left told, the log complete;
    /// the rows of the result's `intervals`.
    pub fn finish(&mut self, reports: &mut [ClientReports]) -> Result<Vec<IntervalRow>> {
        self.gather(reports);
        match self.hlog.as_mut() {
            Some(h) => self.steps.finish(h),
            None => self.steps.finish(&mut Nobody),
        }
        if let Some(h) = self.hlog.take() {
            h.finish().map_err(Error::runtime)?;
        }
        if let Some(e) = self.failed.take() {
            return Err(Error::runtime(e));
        }
        let steps = std::mem::replace(&mut self.steps, Steps::new(0, false));
        Ok(steps.into_rows())
    }
}
