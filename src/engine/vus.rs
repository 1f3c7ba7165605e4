//! Connection stages (`--stages 10s:50c,30s:50c,5s:0c`, k6's VU stages): the number of
//! open connections as one function of time, linear within each stage from the
//! previous stage's target (0 before the first) to its own, rounded to the nearest
//! whole connection, so each stage ends at its target exactly. Each open connection
//! runs closed loop. A worker holds its share of the count (`share`: worker `w` of `t`
//! has connections `w, w + t, ...` of the run, so the workers' shares always add up
//! to the count) in its lowest slots: a rise opens the slots above, a fall asks the
//! highest open ones to leave (no new request, the replies in flight awaited, the
//! goodbye said: `Conn::leave`).

use super::conn::{Conn, State};
use super::ctx::Ctx;
use super::session::SessionFactory;
use super::stages::Stage;

/// The count asked over time: stage `i` runs from `starts_ns[i]` to `starts_ns[i + 1]`,
/// from `from[i]` connections to `to[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnTargets {
    starts_ns: Vec<u64>,
    from: Vec<f64>,
    to: Vec<f64>,
}

impl ConnTargets {
    pub fn new(stages: &[Stage]) -> ConnTargets {
        let (mut starts_ns, mut from, mut to) = (vec![0], Vec::new(), Vec::new());
        let (mut at, mut was) = (0u64, 0.0);
        for s in stages {
            at += s.over.as_nanos() as u64;
            starts_ns.push(at);
            from.push(was);
            to.push(s.target);
            was = s.target;
        }
        ConnTargets {
            starts_ns,
            from,
            to,
        }
    }

    /// The stages' end, ns from the run's start.
    pub fn end_ns(&self) -> u64 {
        self.starts_ns.last().copied().unwrap_or(0)
    }

    /// The stage `t_ns` lies in (the last one from its end on).
    fn stage_of(&self, t_ns: u64) -> usize {
        let n = self.to.len();
        (0..n)
            .find(|&i| t_ns < self.starts_ns[i + 1])
            .unwrap_or(n.saturating_sub(1))
    }

    /// The unrounded count at `t_ns`.
    fn exact(&self, t_ns: u64) -> f64 {
        if self.to.is_empty() {
            return 0.0;
        }
        let i = self.stage_of(t_ns);
        let (s, e) = (self.starts_ns[i], self.starts_ns[i + 1]);
        let frac = ((t_ns.min(e) - s.min(t_ns)) as f64 / (e - s).max(1) as f64).min(1.0);
        self.from[i] + (self.to[i] - self.from[i]) * frac
    }

    /// The connections asked at `t_ns`: the count rounded to the nearest whole one.
    pub fn at(&self, t_ns: u64) -> usize {
        (self.exact(t_ns) + 0.5).floor().max(0.0) as usize
    }

    /// The next time after `t_ns` at which `at` may change: where the count crosses the
    /// next half, or the stage's end; u64::MAX past the last stage.
    pub fn next_change(&self, t_ns: u64) -> u64 {
        if t_ns >= self.end_ns() {
            return u64::MAX;
        }
        let i = self.stage_of(t_ns);
        let (s, e) = (self.starts_ns[i], self.starts_ns[i + 1]);
        let (a, b) = (self.from[i], self.to[i]);
        if a == b {
            return e;
        }
        let k = self.at(t_ns) as f64;
        // Rising: the count reaches k + 0.5; falling: it goes below k - 0.5.
        let edge = if b > a { k + 0.5 } else { k - 0.5 };
        let when = s as f64 + (edge - a) / (b - a) * (e - s) as f64;
        (when.ceil() as u64).clamp(t_ns + 1, e)
    }
}

/// Worker `w` of `threads`' share of `count` connections: connections `w, w +
/// threads, ...` of the run, so `count / threads`, one more for the lowest `count %
/// threads` workers (as `LoadShape::connections_of` deals `-c`).
pub fn share(count: usize, w: usize, threads: usize) -> usize {
    let t = threads.max(1);
    count / t + usize::from(w < count % t)
}

/// A worker's side of connection stages: its share now and when to look again.
pub struct Vus {
    targets: ConnTargets,
    worker: usize,
    threads: usize,
    /// Slots below this are wanted open.
    mine: usize,
    next_at: u64,
}

impl Vus {
    pub fn new(stages: &[Stage], worker: usize, threads: usize) -> Vus {
        Vus {
            targets: ConnTargets::new(stages),
            worker,
            threads,
            mine: 0,
            next_at: 0,
        }
    }

    /// Opens or asks to leave the slots the count at `now` adds or drops; past the
    /// stages' end (or on Ctrl-C), retires the slots at rest. Returns when to call it
    /// again (u64::MAX: never).
    pub fn step<F: SessionFactory>(
        &mut self,
        now: u64,
        ctx: &mut Ctx<F>,
        conns: &mut [Conn<F::Session>],
    ) -> u64 {
        if now < self.next_at {
            return self.next_at;
        }
        if ctx.stopping || now >= self.targets.end_ns() {
            for (slot, c) in conns.iter_mut().enumerate() {
                if c.state == State::Off {
                    c.retire_at_rest(slot as u32, ctx);
                }
            }
            self.next_at = u64::MAX;
            return u64::MAX;
        }
        let want = share(self.targets.at(now), self.worker, self.threads).min(conns.len());
        for (slot, c) in conns.iter_mut().enumerate().take(want).skip(self.mine) {
            c.stay(slot as u32, ctx);
        }
        for (slot, c) in conns.iter_mut().enumerate().take(self.mine).skip(want) {
            c.leave(slot as u32, ctx);
        }
        self.mine = want;
        self.next_at = self.targets.next_change(now).min(self.targets.end_ns());
        self.next_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn stage(ms: u64, target: f64) -> Stage {
        Stage {
            over: Duration::from_millis(ms),
            target,
        }
    }

    /// Walks the count by `next_change` from 0, as a worker does.
    fn walk(t: &ConnTargets) -> Vec<(u64, usize)> {
        let (mut at, mut seen) = (0, vec![(0, t.at(0))]);
        while at < t.end_ns() {
            at = t.next_change(at).min(t.end_ns());
            let n = t.at(at);
            if seen.last().map(|s| s.1) != Some(n) {
                seen.push((at, n));
            }
        }
        seen
    }

    #[test]
    fn the_count_climbs_and_falls_one_connection_at_a_time_and_ends_each_stage_on_target() {
        let ms = 1_000_000;
        // 0 -> 4 over 400 ms, held 200 ms, 4 -> 0 over 400 ms.
        let t = ConnTargets::new(&[stage(400, 4.0), stage(200, 4.0), stage(400, 0.0)]);
        assert_eq!(
            walk(&t),
            [
                (0, 0),
                (50 * ms, 1),
                (150 * ms, 2),
                (250 * ms, 3),
                (350 * ms, 4),
                (650 * ms + 1, 3),
                (750 * ms + 1, 2),
                (850 * ms + 1, 1),
                (950 * ms + 1, 0),
            ]
        );
        assert_eq!((t.at(400 * ms), t.at(600 * ms), t.at(1000 * ms)), (4, 4, 0));
        assert_eq!(t.next_change(1000 * ms), u64::MAX);
    }

    #[test]
    fn uneven_steps_still_end_on_target() {
        let t = ConnTargets::new(&[stage(1000, 7.0), stage(300, 2.0), stage(700, 9.0)]);
        let ends = [1_000_000_000, 1_300_000_000, 2_000_000_000];
        assert_eq!(ends.map(|e| t.at(e)), [7, 2, 9]);
        // Never more than one connection per change, never a step back.
        let w = walk(&t);
        assert!(w
            .windows(2)
            .all(|p| p[0].1.abs_diff(p[1].1) == 1 && p[1].0 > p[0].0));
        assert_eq!(w.len(), 1 + 7 + 5 + 7);
    }

    #[test]
    fn the_workers_shares_add_up_to_the_count() {
        for count in 0..40 {
            let sum: usize = (0..3).map(|w| share(count, w, 3)).sum();
            assert_eq!(sum, count);
        }
        assert_eq!((share(5, 0, 3), share(5, 1, 3), share(5, 2, 3)), (2, 2, 1));
    }
}
