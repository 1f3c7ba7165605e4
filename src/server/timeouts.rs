//! Request-head and idle timeouts that cost nothing per request. Each server thread
//! keeps a coarse clock in ticks (a tenth of the shortest timeout); a connection stamps
//! its activity with the current tick (one store), and the thread checks every
//! connection's deadlines once per tick, so no timer is armed or moved per request.

use std::time::{Duration, Instant};

/// The server's timeouts; `None` is off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timeouts {
    /// A request head must be complete this long after its first byte (after the
    /// accept, for a connection's first request). Only protocols with heads (HTTP).
    pub header: Option<Duration>,
    /// A connection with no bytes in or out for this long is closed.
    pub idle: Option<Duration>,
}

impl Timeouts {
    pub fn any(&self) -> bool {
        self.header.is_some() || self.idle.is_some()
    }

    /// A tenth of the shortest timeout, between 10 ms and 1 s: timeouts fire at most
    /// one tick late.
    pub fn tick(&self) -> Duration {
        let shortest = [self.header, self.idle]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(Duration::from_secs(10));
        (shortest / 10).clamp(Duration::from_millis(10), Duration::from_secs(1))
    }
}

/// Which timeout closed a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expired {
    Header,
    Idle,
}

/// "Not in a head" / "no deadline", in ticks.
pub const NO_TICK: u32 = u32::MAX;

/// A thread's coarse clock and its deadlines in ticks.
#[derive(Clone, Copy, Debug)]
pub struct Ticker {
    pub tick: Duration,
    start: Instant,
    header_ticks: u32,
    idle_ticks: u32,
}

fn ticks_of(d: Option<Duration>, tick: Duration) -> u32 {
    d.map_or(0, |d| {
        (d.as_nanos() / tick.as_nanos()).clamp(1, u32::MAX as u128 - 1) as u32
    })
}

impl Ticker {
    pub fn new(t: &Timeouts, tick: Duration, start: Instant) -> Ticker {
        Ticker {
            tick,
            start,
            header_ticks: ticks_of(t.header, tick),
            idle_ticks: ticks_of(t.idle, tick),
        }
    }

    /// The tick `now` falls in.
    #[inline]
    pub fn at(&self, now: Instant) -> u32 {
        let n = now.saturating_duration_since(self.start).as_nanos() / self.tick.as_nanos();
        n.min(NO_TICK as u128 - 1) as u32
    }

    /// When tick `t` starts.
    pub fn instant_of(&self, t: u32) -> Instant {
        self.start + self.tick * t
    }

    /// Which deadline of a connection has passed at tick `now`: its head started at
    /// `head_since` (NO_TICK: not in a head), its last byte in or out at `last_active`;
    /// `idle` says whether the idle timeout applies (the server is not itself holding
    /// replies back).
    #[inline]
    pub fn expired(
        &self,
        now: u32,
        head_since: u32,
        last_active: u32,
        idle: bool,
    ) -> Option<Expired> {
        if self.header_ticks > 0
            && head_since != NO_TICK
            && now >= head_since.saturating_add(self.header_ticks)
        {
            return Some(Expired::Header);
        }
        if self.idle_ticks > 0 && idle && now >= last_active.saturating_add(self.idle_ticks) {
            return Some(Expired::Idle);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_is_a_tenth_of_the_shortest_timeout() {
        let t = Timeouts {
            header: Some(Duration::from_secs(1)),
            idle: Some(Duration::from_secs(60)),
        };
        assert_eq!(t.tick(), Duration::from_millis(100));
        let t = Timeouts {
            header: None,
            idle: Some(Duration::from_secs(60)),
        };
        assert_eq!(t.tick(), Duration::from_secs(1));
        let t = Timeouts {
            header: Some(Duration::from_millis(20)),
            idle: None,
        };
        assert_eq!(t.tick(), Duration::from_millis(10));
        assert!(!Timeouts::default().any());
    }

    #[test]
    fn deadlines_in_ticks() {
        let t = Timeouts {
            header: Some(Duration::from_secs(1)),
            idle: Some(Duration::from_secs(3)),
        };
        let start = Instant::now();
        let k = Ticker::new(&t, t.tick(), start);
        assert_eq!(k.at(start + Duration::from_millis(999)), 9);
        // A head started at tick 0: expires at tick 10, not before.
        assert_eq!(k.expired(9, 0, 9, true), None);
        assert_eq!(k.expired(10, 0, 9, true), Some(Expired::Header));
        // The head completed: only the idle deadline (from the last byte, tick 9) runs.
        assert_eq!(k.expired(38, NO_TICK, 9, true), None);
        assert_eq!(
            k.expired(39, NO_TICK, 9, false),
            None,
            "idle does not apply"
        );
        assert_eq!(k.expired(39, NO_TICK, 9, true), Some(Expired::Idle));
        let off = Ticker::new(&Timeouts::default(), Duration::from_secs(1), start);
        assert_eq!(off.expired(u32::MAX - 1, 0, 0, true), None);
    }
}
