//! What the `connect` parent keeps of each client worker's reports
//! (`procs::group::Reports`): its latest counts, a churn ramp's apart, whether it is
//! done connecting, the steps of its series not yet merged, and its final figures;
//! and their sums over the workers (each
//! worker's counts are exact, so are their sums).

use super::messages::{Counts, WorkerMsg};
use crate::procs::group::Reports;
use crate::stats::{IntervalRow, Latency, LoopCounts};
use std::collections::VecDeque;

/// One client worker's reports.
#[derive(Default)]
pub struct ClientReports {
    ready: bool,
    /// Progress: everything so far; once connected or final: the measured phase.
    pub latest: Counts,
    /// A churn ramp left out of the figures: what happened during it (from the
    /// worker's `connected` or final report).
    pub ramp: Option<Counts>,
    /// Every connection of its share was attempted and settled.
    pub connected: bool,
    pub last: Option<FinalParts>,
    /// Steps of the series received and not yet taken by the parent's merge
    /// (`steps.rs`), which takes them at every look, so few wait here.
    pub steps: VecDeque<(u64, IntervalRow)>,
}

/// A worker's final figures, beside its counts.
pub struct FinalParts {
    pub connect_hist: Latency,
    pub echo_hist: Latency,
    pub cpu_s: f64,
    pub event_loop: LoopCounts,
    pub peak_rss_bytes: Option<u64>,
    /// The worker's measured phase, seconds (after a ramp left out).
    pub measured_s: f64,
    /// `--stages`: its figures per stage.
    pub stages: Option<Vec<crate::stats::stages::StageFigures>>,
}

impl Reports for ClientReports {
    type Line = WorkerMsg;

    fn take(&mut self, line: WorkerMsg) {
        match line {
            WorkerMsg::Ready => self.ready = true,
            WorkerMsg::Progress { c } => self.latest = c,
            WorkerMsg::Interval { step, row } => self.steps.push_back((step, row)),
            WorkerMsg::Connected { c, ramp } => {
                self.latest = c;
                self.ramp = ramp;
                self.connected = true;
            }
            WorkerMsg::Final {
                c,
                ramp,
                measured_s,
                connect_hist,
                echo_hist,
                cpu_s,
                event_loop,
                peak_rss_bytes,
                stages,
                ..
            } => {
                self.latest = c;
                self.ramp = ramp;
                self.connected = true;
                self.last = Some(FinalParts {
                    connect_hist: Latency::decode(&connect_hist).unwrap_or_default(),
                    echo_hist: Latency::decode(&echo_hist).unwrap_or_default(),
                    cpu_s,
                    event_loop,
                    peak_rss_bytes,
                    measured_s,
                    stages,
                });
            }
        }
    }

    fn ready(&self) -> bool {
        self.ready
    }

    fn done(&self) -> bool {
        self.last.is_some()
    }
}

/// Everything so far, a ramp left out of the figures included: for progress and for
/// what is open.
pub fn sum(all: &[ClientReports]) -> Counts {
    let (t, ramp) = phases(all);
    t.with_ramp(ramp.as_ref())
}

/// The measured counts summed over the workers, and the ramp's apart when a worker
/// left it out.
pub fn phases(all: &[ClientReports]) -> (Counts, Option<Counts>) {
    let mut t = Counts::default();
    let mut ramp: Option<Counts> = None;
    for w in all {
        t.add(&w.latest);
        if let Some(r) = &w.ramp {
            ramp.get_or_insert_with(Counts::default).add(r);
        }
    }
    (t, ramp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(established: u64, ok: u64, fail: u64) -> Counts {
        let mut c = Counts {
            attempts: established + fail,
            established,
            sent: ok,
            ok,
            cycles_ok: ok,
            ..Default::default()
        };
        if fail > 0 {
            c.failures.insert("ECONNREFUSED".into(), fail);
        }
        c
    }

    fn final_of(c: Counts, ramp: Option<Counts>, measured_s: f64) -> WorkerMsg {
        WorkerMsg::Final {
            c,
            ramp,
            measured_s,
            connect_hist: Latency::new().encode(),
            echo_hist: Latency::new().encode(),
            cpu_s: 0.0,
            rss_bytes: 0,
            peak_rss_bytes: Some(1 << 20),
            event_loop: LoopCounts::default(),
            stages: None,
        }
    }

    /// A worker's reports as the parent reads them: each line through JSON.
    fn take(r: &mut ClientReports, m: &WorkerMsg) {
        r.take(serde_json::from_str(&serde_json::to_string(m).unwrap()).unwrap());
    }

    #[test]
    fn workers_ramps_left_out_merge_apart_and_progress_counts_them() {
        let mut g: Vec<ClientReports> = (0..2).map(|_| ClientReports::default()).collect();
        // Progress counts the ramp in; the final reports split it off.
        take(&mut g[0], &WorkerMsg::Progress { c: counts(9, 9, 0) });
        assert_eq!(sum(&g).established, 9);
        assert_eq!(phases(&g).1, None);
        take(
            &mut g[0],
            &final_of(counts(5, 5, 0), Some(counts(7, 7, 1)), 1.5),
        );
        take(
            &mut g[1],
            &final_of(counts(6, 6, 0), Some(counts(3, 2, 0)), 2.0),
        );
        let (measured, ramp) = phases(&g);
        let ramp = ramp.unwrap();
        assert_eq!((measured.established, measured.cycles_ok), (11, 11));
        assert_eq!((ramp.attempts, ramp.established, ramp.ok), (11, 10, 9));
        assert_eq!(ramp.failures["ECONNREFUSED"], 1);
        let all = sum(&g);
        assert_eq!((all.attempts, all.established), (22, 21));
        assert!(g.iter().all(ClientReports::done));
        // Without a ramp left out, the counts are the whole run's, as before.
        let mut g = vec![ClientReports::default()];
        take(&mut g[0], &final_of(counts(4, 4, 0), None, 1.0));
        assert_eq!(phases(&g), (counts(4, 4, 0), None));
    }
}
