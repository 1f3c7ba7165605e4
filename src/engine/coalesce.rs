//! How long a load worker naps when it has nothing to do (`reactor::nap`): 1% of its
//! replies' recent latency, so that a reply read late by a nap reads at most about 1%
//! high, and a server that answers in bursts is not made to wake the generator once per
//! reply (`--coalesce auto`, the default; `--coalesce off`: no nap).
//!
//! The recent latency is a moving average of each read's last reply, from when its
//! request went (not from when it was meant to go: an open loop's lag is no reason to
//! read later), 1/8 weight to the newest. Below `MIN_NAP_NS` a nap is not taken: it
//! spans too few replies to pay for itself (the timer's interrupt, two more looks):
//! against nginx over HTTP/1.1 at 50 connections, naps of 5-8 us cost 13-20% more
//! generator CPU per request than none (BENCHMARKS.md). So a server answering within
//! 1.5 ms is read as it always was. Above `MAX_NAP_NS`, the nap
//! is held there: slow replies are no reason to leave fast ones unread for long.

/// Naps are this share of the recent latency: 1 / 100.
const SHARE: u64 = 100;
/// The shortest nap taken, ns.
pub const MIN_NAP_NS: u64 = 15_000;
/// The longest nap, ns.
pub const MAX_NAP_NS: u64 = 100_000;
/// The newest reply's weight in the moving average: 1 / 2^WEIGHT_SHIFT.
const WEIGHT_SHIFT: u32 = 3;

#[derive(Clone, Copy, Debug, Default)]
pub struct Coalesce {
    on: bool,
    /// The moving average of the replies' latency, ns (0: none yet).
    recent_ns: u64,
}

impl Coalesce {
    pub fn new(on: bool) -> Coalesce {
        Coalesce { on, recent_ns: 0 }
    }

    /// A reply `latency_ns` after its request went.
    #[inline]
    pub fn reply(&mut self, latency_ns: u64) {
        self.recent_ns = if self.recent_ns == 0 {
            latency_ns
        } else {
            // recent + (latency - recent) / 8, in unsigned arithmetic.
            self.recent_ns - (self.recent_ns >> WEIGHT_SHIFT) + (latency_ns >> WEIGHT_SHIFT)
        };
    }

    /// The nap to take now, ns (0: none).
    #[inline]
    pub fn nap_ns(&self) -> u64 {
        let nap = self.recent_ns / SHARE;
        if !self.on || nap < MIN_NAP_NS {
            0
        } else {
            nap.min(MAX_NAP_NS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_nap_before_a_reply_or_when_off() {
        assert_eq!(Coalesce::new(true).nap_ns(), 0);
        let mut off = Coalesce::new(false);
        off.reply(10_000_000);
        assert_eq!(off.nap_ns(), 0);
    }

    #[test]
    fn a_nap_is_a_hundredth_of_the_recent_latency() {
        let mut c = Coalesce::new(true);
        c.reply(6_400_000);
        assert_eq!(c.nap_ns(), 64_000);
        // One reply at 8x the average moves it by its eighth: 6.4 ms -> 12 ms.
        c.reply(51_200_000);
        assert_eq!(c.recent_ns, 6_400_000 - 800_000 + 6_400_000);
        assert_eq!(c.nap_ns(), MAX_NAP_NS);
    }

    #[test]
    fn fast_replies_get_no_nap_and_slow_ones_the_longest() {
        let mut c = Coalesce::new(true);
        c.reply(1_499_999);
        assert_eq!(c.nap_ns(), 0);
        c = Coalesce::new(true);
        c.reply(1_500_000);
        assert_eq!(c.nap_ns(), MIN_NAP_NS);
        c.reply(u64::MAX / 2);
        assert_eq!(c.nap_ns(), MAX_NAP_NS);
    }

    #[test]
    fn the_average_follows_a_change_of_latency() {
        let mut c = Coalesce::new(true);
        c.reply(10_000_000);
        for _ in 0..100 {
            c.reply(2_000_000);
        }
        // Within an eighth's rounding of the new latency.
        assert!(c.recent_ns.abs_diff(2_000_000) < 100, "{}", c.recent_ns);
        assert_eq!(c.nap_ns(), 20_000);
    }
}
