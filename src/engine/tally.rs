//! What one read settles, added to the worker's statistics once per read: correct
//! replies per phase, and their latencies in runs of equal values (their bytes are
//! counted as they are read, with every other byte received).
//!
//! A closed-loop connection encodes its window with one clock reading and settles the
//! replies of one read with another, so the replies of a read mostly share one latency:
//! a run of n equal values is one histogram increment of n, not n increments (each
//! ~55 user instructions, callgrind, echo at 100 connections x 16 in flight).

use crate::stats::WorkerStats;

#[derive(Default)]
pub struct Tally {
    /// Correct replies, [warm-up, measured].
    ok: [u64; 2],
    /// The current run of equal measured latencies: (corrected, actual, count).
    run: (u64, u64, u64),
    /// The intended send time of the run's requests (one read settles them at one
    /// time, so equal latencies mean one intended time): their stage (`--stages`).
    run_intended: u64,
    /// The last reply's latency from when its request went, correct or an answer in
    /// step (a 404, an error reply), warm-up or not (0: none): what the worker's naps
    /// follow (`engine::coalesce`).
    last_actual: u64,
}

impl Tally {
    /// One correct reply; its latency (from the intended and the actual send time)
    /// counts if it was measured.
    #[inline]
    pub fn ok(
        &mut self,
        measured: bool,
        intended_ns: u64,
        corrected_ns: u64,
        actual_ns: u64,
        stats: &mut WorkerStats,
    ) {
        self.ok[measured as usize] += 1;
        self.last_actual = actual_ns;
        if !measured {
            return;
        }
        let (c, a, n) = &mut self.run;
        if *n > 0 && *c == corrected_ns && *a == actual_ns && self.run_intended == intended_ns {
            *n += 1;
        } else {
            self.flush_run(stats);
            self.run = (corrected_ns, actual_ns, 1);
            self.run_intended = intended_ns;
        }
    }

    fn flush_run(&mut self, stats: &mut WorkerStats) {
        let (c, a, n) = self.run;
        if n > 0 {
            stats.record_replied(self.run_intended, c, a, n);
            self.run.2 = 0;
        }
    }

    /// A reply that is not correct but answers its request in step, `actual_ns` after
    /// the request went: only the naps' estimate takes it (`ok` takes correct ones).
    #[inline]
    pub fn answered(&mut self, actual_ns: u64) {
        self.last_actual = actual_ns;
    }

    /// The last reply's latency from when its request went, if there was one.
    #[inline]
    pub fn last_latency_ns(&self) -> Option<u64> {
        (self.last_actual > 0).then_some(self.last_actual)
    }

    /// Adds everything tallied to the worker's statistics.
    #[inline]
    pub fn commit(mut self, stats: &mut WorkerStats) {
        self.flush_run(stats);
        for (measured, n) in [(false, self.ok[0]), (true, self.ok[1])] {
            if n > 0 {
                stats.record_ok(measured, n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_equal_latencies_count_every_reply() {
        let mut stats = WorkerStats::new(true);
        let mut t = Tally::default();
        for (measured, c, a) in [
            (true, 5_000, 4_000),
            (true, 5_000, 4_000),
            (true, 5_000, 4_000),
            (false, 1, 1),
            (true, 9_000, 4_000),
            (true, 5_000, 4_000),
        ] {
            t.ok(measured, 0, c, a, &mut stats);
        }
        t.commit(&mut stats);
        assert_eq!((stats.measured.ok, stats.warmup.ok), (5, 1));
        let corrected = stats.interval.inner();
        assert_eq!(corrected.len(), 5);
        assert_eq!(corrected.count_at(5_000), 4);
        assert_eq!(corrected.count_at(9_000), 1);
        let actual = stats
            .uncorrected
            .as_ref()
            .map(|u| u.inner().count_at(4_000));
        assert_eq!(actual, Some(5));
    }

    #[test]
    fn the_naps_follow_the_last_answer_correct_or_not_warm_up_or_not() {
        let mut stats = WorkerStats::new(true);
        let mut t = Tally::default();
        assert_eq!(t.last_latency_ns(), None);
        t.ok(false, 0, 9_000, 8_000, &mut stats);
        assert_eq!(t.last_latency_ns(), Some(8_000));
        t.answered(3_000);
        assert_eq!(t.last_latency_ns(), Some(3_000));
        t.ok(true, 0, 7_000, 6_000, &mut stats);
        assert_eq!(t.last_latency_ns(), Some(6_000));
    }
}
