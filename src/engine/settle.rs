//! Settling a connection's requests in flight on a reply: which entries a reply
//! answers (the oldest in send order, or the oldest of its lane), their latency and
//! their verdict.
//!
//! One lane (echo, HTTP, redis, WebSocket) is the hot path: one correct reply pops
//! the front, no loop. A reply on a lane (an AMQP channel's confirm) takes that lane's
//! oldest in order and leaves the other lanes' entries where they are, so each
//! message is credited its own latency and verdict.
//!
//! Requests that settle on write (`InFlight::on_write`) are passed over: the caller
//! takes those sent before the oldest awaited one out first
//! (`Busy::written_before_awaited`), so the front is a request that waits for a reply.

use super::busy::Busy;
use super::session::{InFlight, Lane, Verdict};
use super::tally::Tally;
use crate::stats::WorkerStats;

/// Whether `n` requests in flight can take a reply on `lane`: fewer is a reply nobody
/// asked for. A lane's entries are counted only as far as the `n`th.
#[inline]
pub fn holds(b: &Busy, lane: Lane, n: u32) -> bool {
    if lane == Lane::ANY {
        return n as usize <= b.inflight.len();
    }
    // A lane's reply settles one at least (as `settle_each` does).
    let n = n.max(1) as usize;
    if n == 1 && b.inflight.front().is_some_and(|r| r.lane == lane) {
        return true;
    }
    b.inflight
        .iter()
        .filter(|r| r.lane == lane && !r.on_write)
        .take(n)
        .count()
        == n
}

/// `holds` for a queue that holds requests that settle on write (`Busy::on_write`
/// above 0; those sent before the oldest awaited one taken out first): they are not
/// replies' to take.
pub fn holds_among_writes(b: &Busy, lane: Lane, n: u32) -> bool {
    if lane == Lane::ANY {
        return n as usize + b.on_write as usize <= b.inflight.len();
    }
    holds(b, lane, n)
}

/// Settles the oldest `n` requests of a connection on `lane` (one reply, or a
/// multiple acknowledgement; the reply's bytes were counted as they were read); each
/// counts in `answered`. Correct ones go to `tally` (added once per read), wrong ones to
/// `stats` at once; a wrong reply still in step (`Verdict::Error`) is timed like a correct
/// one, a `Fatal` one is not. Returns whether the verdict drops the connection.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn settle(
    b: &mut Busy,
    lane: Lane,
    n: u32,
    verdict: Verdict,
    now: u64,
    stats: &mut WorkerStats,
    tally: &mut Tally,
    answered: &mut u64,
) -> bool {
    if n <= 1
        && verdict == Verdict::Ok
        && (lane == Lane::ANY || b.inflight.front().is_some_and(|r| r.lane == lane))
    {
        // The common case, one correct reply to the oldest request (of its lane, when
        // that is the oldest of all: an AMQP confirm in order), inline, no loop.
        if let Some(req) = b.inflight.pop_front() {
            *answered += 1;
            credit(&req, now, tally, stats);
        }
        return false;
    }
    settle_each(b, lane, n, verdict, now, stats, tally, answered)
}

/// A correct reply to `req` at `now`: its latency from when it was meant to go (the
/// corrected one) and from when it went.
#[inline(always)]
fn credit(req: &InFlight, now: u64, tally: &mut Tally, stats: &mut WorkerStats) {
    let corrected = now.saturating_sub(req.intended_ns);
    let actual = now.saturating_sub(req.sent_ns);
    tally.ok(req.measured, req.intended_ns, corrected, actual, stats);
}

/// `settle` for several requests at once, a wrong reply or a reply on a lane.
#[allow(clippy::too_many_arguments)]
fn settle_each(
    b: &mut Busy,
    lane: Lane,
    n: u32,
    verdict: Verdict,
    now: u64,
    stats: &mut WorkerStats,
    tally: &mut Tally,
    answered: &mut u64,
) -> bool {
    let mut judge = |req: InFlight| {
        *answered += 1;
        match verdict {
            Verdict::Ok => credit(&req, now, tally, stats),
            Verdict::Error(k) => {
                // An answer in step (a 404, a Redis error reply, a nack) is a reply:
                // it has a latency, though it does not count as correct.
                let corrected = now.saturating_sub(req.intended_ns);
                let actual = now.saturating_sub(req.sent_ns);
                stats.record_error(req.measured, k, req.intended_ns, Some(corrected));
                if req.measured {
                    stats.record_latency(corrected, actual, 1);
                }
                tally.answered(actual);
            }
            Verdict::Fatal(k) => stats.record_error(req.measured, k, req.intended_ns, None),
        }
    };
    let q = &mut b.inflight;
    if lane == Lane::ANY {
        let mut left = n.max(1);
        while left > 0 {
            let Some(req) = q.pop_front() else {
                break;
            };
            if req.on_write {
                // Sent before a request this reply answers: written.
                b.written[req.measured as usize] += 1;
                b.on_write -= 1;
                continue;
            }
            left -= 1;
            judge(req);
        }
    } else {
        // One pass up to the lane's `n`th entry: the others passed over move up, in
        // order, over the settled ones; the range left behind goes at once.
        let mut left = n.max(1);
        let (mut kept, mut at) = (0, 0);
        while left > 0 && at < q.len() {
            let req = q[at];
            at += 1;
            if req.lane == lane && !req.on_write {
                left -= 1;
                judge(req);
            } else {
                q[kept] = req;
                kept += 1;
            }
        }
        q.drain(kept..at);
    }
    matches!(verdict, Verdict::Fatal(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::ErrorKind;

    /// Request `seq` on `lane`, sent (and intended) at `sent_ns`.
    fn req(seq: u64, lane: u16, sent_ns: u64, measured: bool) -> InFlight {
        InFlight {
            seq,
            intended_ns: sent_ns,
            sent_ns,
            tag: 0,
            lane: Lane(lane),
            measured,
            on_write: false,
        }
    }

    fn busy(reqs: &[InFlight]) -> Busy {
        let mut b = Busy::default();
        b.inflight.extend(reqs.iter().copied());
        b
    }

    /// Seqs and lanes still in flight.
    fn left(b: &Busy) -> Vec<(u64, u16)> {
        b.inflight.iter().map(|r| (r.seq, r.lane.0)).collect()
    }

    /// A worker's statistics and reply count over a test's settles.
    struct Run {
        stats: WorkerStats,
        answered: u64,
    }

    impl Run {
        fn new() -> Run {
            Run {
                stats: WorkerStats::new(false),
                answered: 0,
            }
        }

        fn settle(&mut self, b: &mut Busy, lane: u16, n: u32, verdict: Verdict, now: u64) -> bool {
            let mut tally = Tally::default();
            let dropped = settle(
                b,
                Lane(lane),
                n,
                verdict,
                now,
                &mut self.stats,
                &mut tally,
                &mut self.answered,
            );
            tally.commit(&mut self.stats);
            dropped
        }

        /// Measured latencies recorded, as (ns, count), lowest first.
        fn latencies(&self) -> Vec<(u64, u64)> {
            let h = self.stats.interval.inner();
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        }
    }

    #[test]
    fn interleaved_lanes_settle_their_own_requests_with_their_own_latency() {
        // Lanes 1 and 2 alternate; lane 2's first confirm comes before lane 1's.
        let mut b = busy(&[
            req(0, 1, 100, true),
            req(1, 2, 200, true),
            req(2, 1, 300, true),
            req(3, 2, 400, true),
        ]);
        let mut run = Run::new();
        assert!(!run.settle(&mut b, 2, 1, Verdict::Ok, 1_000));
        // seq 1 settled (1000 - 200), not seq 0.
        assert_eq!(left(&b), [(0, 1), (2, 1), (3, 2)]);
        assert_eq!(run.latencies(), [(800, 1)]);
        // Lane 1 takes its two, at 1500: seq 0 (1400) and seq 2 (1200).
        assert!(!run.settle(&mut b, 1, 2, Verdict::Ok, 1_500));
        assert_eq!(left(&b), [(3, 2)]);
        assert_eq!(run.latencies(), [(800, 1), (1_200, 1), (1_400, 1)]);
        assert!(!run.settle(&mut b, 2, 1, Verdict::Ok, 1_600));
        assert!(b.inflight.is_empty());
        assert_eq!(
            run.latencies(),
            [(800, 1), (1_200, 2), (1_400, 1)],
            "seq 3: 1600 - 400"
        );
        assert_eq!(run.answered, 4);
        assert_eq!(run.stats.measured.ok, 4);
    }

    #[test]
    fn a_multiple_settle_on_one_lane_leaves_the_others_untouched() {
        let reqs = [
            req(0, 1, 10, true),
            req(1, 2, 20, true),
            req(2, 1, 30, true),
            req(3, 3, 40, true),
            req(4, 1, 50, true),
            req(5, 2, 60, true),
            req(6, 1, 70, true),
        ];
        let mut b = busy(&reqs);
        let mut run = Run::new();
        assert!(!run.settle(&mut b, 1, 3, Verdict::Ok, 1_000));
        assert_eq!(left(&b), [(1, 2), (3, 3), (5, 2), (6, 1)]);
        // The entries left are the very ones sent, times included.
        let sent: Vec<u64> = b.inflight.iter().map(|r| r.sent_ns).collect();
        assert_eq!(sent, [20, 40, 60, 70]);
        assert_eq!(run.latencies(), [(950, 1), (970, 1), (990, 1)]);
        assert_eq!(run.answered, 3);
        // The front entry of the lane is taken in place too.
        assert!(!run.settle(&mut b, 2, 1, Verdict::Ok, 1_000));
        assert_eq!(left(&b), [(3, 3), (5, 2), (6, 1)]);
    }

    #[test]
    fn a_nack_on_a_lane_is_charged_to_that_lanes_request() {
        // Lane 1's oldest went out in the warm-up, lane 2's after it.
        let mut b = busy(&[req(0, 1, 100, false), req(1, 2, 200, true)]);
        let mut run = Run::new();
        let nack = Verdict::Error(ErrorKind::Nack);
        assert!(!run.settle(&mut b, 2, 1, nack, 1_000));
        assert_eq!(left(&b), [(0, 1)]);
        assert_eq!(run.stats.measured.errors_of(ErrorKind::Nack), 1);
        assert_eq!(run.stats.warmup.errors_of(ErrorKind::Nack), 0);
        // A fatal verdict on a lane drops the connection after settling its own.
        assert!(run.settle(&mut b, 1, 1, Verdict::Fatal(ErrorKind::Protocol), 1_000));
        assert_eq!(run.stats.warmup.errors_of(ErrorKind::Protocol), 1);
        assert!(b.inflight.is_empty());
        // The nack is an answer: timed (1000 - 200). The fatal reply is not.
        assert_eq!(run.latencies(), [(800, 1)]);
    }

    #[test]
    fn without_a_lane_the_oldest_in_send_order_settle() {
        let mut b = busy(&[
            req(0, 0, 100, true),
            req(1, 0, 200, true),
            req(2, 0, 300, true),
        ]);
        let mut run = Run::new();
        assert!(!run.settle(&mut b, 0, 1, Verdict::Ok, 1_000));
        assert_eq!(left(&b), [(1, 0), (2, 0)]);
        assert!(!run.settle(&mut b, 0, 2, Verdict::Ok, 1_000));
        assert_eq!(run.latencies(), [(700, 1), (800, 1), (900, 1)]);
        // Any lane's entries, for a reply on none (a lane protocol's fatal reply).
        let mut b = busy(&[req(0, 2, 100, true), req(1, 1, 200, true)]);
        assert!(run.settle(&mut b, 0, 1, Verdict::Fatal(ErrorKind::Protocol), 1_000));
        assert_eq!(left(&b), [(1, 1)]);
        assert_eq!(run.answered, 4);
    }

    #[test]
    fn a_lane_holds_only_as_many_as_it_has_in_flight() {
        let b = busy(&[req(0, 1, 0, true), req(1, 2, 0, true), req(2, 1, 0, true)]);
        assert!(holds(&b, Lane(1), 2));
        assert!(!holds(&b, Lane(1), 3));
        assert!(holds(&b, Lane(2), 1));
        assert!(!holds(&b, Lane(3), 1));
        assert!(holds(&b, Lane::ANY, 3));
        assert!(!holds(&b, Lane::ANY, 4));
        // A lane's reply settles one at least: on a lane with none in flight it is a
        // reply nobody asked for, not a silent no-op.
        assert!(!holds(&b, Lane(3), 0));
        assert!(holds(&b, Lane(1), 0));
    }

    #[test]
    fn a_correct_reply_on_the_front_entrys_lane_takes_the_front() {
        // The fast path (an AMQP confirm in order): the front is lane 1's oldest.
        let mut b = busy(&[req(0, 1, 100, true), req(1, 2, 200, true)]);
        let mut run = Run::new();
        assert!(!run.settle(&mut b, 1, 1, Verdict::Ok, 1_000));
        assert_eq!(left(&b), [(1, 2)]);
        assert_eq!(run.latencies(), [(900, 1)]);
    }

    #[test]
    fn an_entry_keeps_its_size_with_a_lane() {
        // The lane sits in the padding after the tag: 32 bytes, as before it.
        assert_eq!(std::mem::size_of::<InFlight>(), 32);
    }
}
