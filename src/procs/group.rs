//! The parent's side of a group of worker processes, one mechanism for every group:
//! `serve --processes` and `connect`'s built-in server (`server::group`), and
//! `connect`'s client workers (`connect::parent`). It starts the workers (this binary
//! re-executed, each with its plan in its environment: `workers::Launch`), waits
//! until each says it is ready, takes in what each reports (JSON lines, read into
//! that worker's `Reports`), tells them commands, and stops them: `STOP` told, every
//! final report (or the worker's end) awaited, then every process reaped. What the
//! reports add up to is the caller's: each kind merges its own counters exactly.

use super::workers::{self, Ended, Launch, Msg, Workers};
use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The command that stops a worker; the end of its stdin stops it too.
pub const STOP: &str = "stop";

/// How long the workers may take to say they are ready.
const START_LIMIT: Duration = Duration::from_secs(30);

/// What the parent keeps of one worker's reports (its latest counters, its final word).
pub trait Reports: Default {
    /// One line of the worker's, as JSON; a line that does not read as one is ignored.
    type Line: DeserializeOwned;
    fn take(&mut self, line: Self::Line);
    /// The worker said it is ready to start.
    fn ready(&self) -> bool;
    /// The worker sent its final report.
    fn done(&self) -> bool;
}

/// Running workers and what each has reported.
pub struct Group<R: Reports> {
    workers: Workers,
    reports: Vec<R>,
    gone: Vec<bool>,
}

impl<R: Reports> Group<R> {
    /// Starts one worker per launch, in `role`, and waits until every one is ready.
    /// Refused, with every worker started so far killed (on drop): a worker that exits
    /// first, one not ready within 30 s, or `stop` set (Ctrl-C). `noun` names one
    /// worker in those sentences ("server worker process").
    pub fn start(role: &str, noun: &str, launches: &[Launch], stop: &AtomicBool) -> Result<Self> {
        let n = launches.len();
        let workers = workers::spawn(
            role,
            n,
            |i| launches[i].args.clone(),
            |i| launches[i].env.clone(),
        )?;
        let mut g = Group {
            workers,
            reports: (0..n).map(|_| R::default()).collect(),
            gone: vec![false; n],
        };
        g.wait_ready(noun, stop)?;
        Ok(g)
    }

    fn wait_ready(&mut self, noun: &str, stop: &AtomicBool) -> Result<()> {
        let end = Instant::now() + START_LIMIT;
        while !self.reports.iter().all(R::ready) {
            if let Some(i) = self.gone.iter().position(|g| *g) {
                return Err(Error::runtime(format!(
                    "{noun} {i} exited while starting (see its message above)"
                )));
            }
            if stop.load(Ordering::Relaxed) {
                return Err(Error::runtime(format!(
                    "interrupted while the {noun}es were starting; all were stopped"
                )));
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::runtime(format!(
                    "the {noun}es did not all start within {} s",
                    START_LIMIT.as_secs()
                )));
            }
            self.poll(left.min(Duration::from_millis(100)));
        }
        Ok(())
    }

    /// Takes in what the workers reported, waiting at most `wait` for the first line.
    pub fn poll(&mut self, wait: Duration) {
        let mut wait = wait;
        while let Some(m) = self.workers.recv(wait) {
            match m {
                Msg::Line(i, l) => {
                    if let Ok(line) = serde_json::from_str::<R::Line>(&l) {
                        self.reports[i].take(line);
                    }
                }
                Msg::Gone(i) => self.gone[i] = true,
            }
            wait = Duration::ZERO;
        }
    }

    /// Every worker's reports, in the order they were started.
    pub fn reports(&self) -> &[R] {
        &self.reports
    }

    /// The same, for taking what they queued (a series' rows as they come).
    pub fn reports_mut(&mut self) -> &mut [R] {
        &mut self.reports
    }

    /// Whether `f` holds for every worker still there (a worker that is gone said all
    /// it will say).
    pub fn all(&self, f: impl Fn(&R) -> bool) -> bool {
        self.reports.iter().zip(&self.gone).all(|(r, g)| *g || f(r))
    }

    /// Polls until `f` holds or `limit` passes; returns whether it held.
    pub fn wait_until(&mut self, limit: Duration, f: impl Fn(&Self) -> bool) -> bool {
        let end = Instant::now() + limit;
        loop {
            if f(self) {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            self.poll(Duration::from_millis(20));
        }
    }

    /// Workers that have exited so far.
    pub fn gone(&self) -> usize {
        self.gone.iter().filter(|g| **g).count()
    }

    pub fn len(&self) -> usize {
        self.reports.len()
    }

    pub fn is_empty(&self) -> bool {
        self.reports.is_empty()
    }

    pub fn pids(&self) -> Vec<u32> {
        self.workers.pids()
    }

    /// Sends one command line to every worker still listening.
    pub fn tell_all(&mut self, line: &str) {
        self.workers.tell_all(line);
    }

    /// Tells every worker to stop and waits, at most `limit`, for each one's final
    /// report (or its end); returns whether every one reported or ended.
    pub fn stop(&mut self, limit: Duration) -> bool {
        self.workers.tell_all(STOP);
        self.wait_until(limit, |g| g.all(R::done))
    }

    /// Waits up to `limit` for every worker to exit (killing the rest), after `stop`;
    /// returns what each reported and how it ended.
    pub fn reap(mut self, limit: Duration) -> (Vec<R>, Vec<Ended>) {
        let ended = self.workers.reap(limit);
        (std::mem::take(&mut self.reports), ended)
    }
}
