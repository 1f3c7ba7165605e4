//! A server of known latency: `--delay DIST` holds every reply back by a sample of
//! DIST, `--stall D/EVERY` answers nothing for D at the start of every EVERY (counted
//! from server start). Pure parsing, sampling and schedule arithmetic; the connection
//! runtime (`conn.rs`) applies them.

use crate::rng::Rng;
use crate::units::parse_duration;
use std::time::{Duration, Instant};

/// How long a reply is held back.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum DelayDist {
    /// Always this long.
    Fixed(Duration),
    /// Uniform between the two (inclusive), at nanosecond resolution.
    Uniform(Duration, Duration),
    /// Exponential with this mean.
    Exp(Duration),
}

/// Most a single delay may be: a typo such as `2h` must not park replies for good.
const MAX_DELAY: Duration = Duration::from_secs(3600);

impl DelayDist {
    /// Parses `2ms`, `uniform:1ms..5ms` or `exp:2ms`; the error is one sentence.
    pub fn parse(text: &str) -> Result<DelayDist, String> {
        let t = text.trim();
        let dur = |s: &str| -> Result<Duration, String> {
            let d = parse_duration(s)?;
            if d > MAX_DELAY {
                return Err(format!("'{s}' is longer than the 1h a delay may be"));
            }
            Ok(d)
        };
        let dist = if let Some(range) = t.strip_prefix("uniform:") {
            let (lo, hi) = range.split_once("..").ok_or_else(|| {
                format!(
                    "'{text}': a uniform delay is written uniform:MIN..MAX (e.g. uniform:1ms..5ms)"
                )
            })?;
            let (lo, hi) = (dur(lo)?, dur(hi)?);
            if lo > hi {
                return Err(format!("'{text}': MIN is greater than MAX"));
            }
            DelayDist::Uniform(lo, hi)
        } else if let Some(mean) = t.strip_prefix("exp:") {
            DelayDist::Exp(dur(mean)?)
        } else if t.contains(':') {
            return Err(format!(
                "'{text}' is not a delay (use 2ms, uniform:1ms..5ms or exp:2ms)"
            ));
        } else {
            DelayDist::Fixed(dur(t)?)
        };
        Ok(dist)
    }

    /// One sample.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> Duration {
        match *self {
            DelayDist::Fixed(d) => d,
            DelayDist::Uniform(lo, hi) => {
                Duration::from_nanos(rng.range(lo.as_nanos() as u64, hi.as_nanos() as u64))
            }
            DelayDist::Exp(mean) => {
                // Inverse CDF with u in (0, 1]: -ln(u) is finite (at most ~37 means).
                let u = ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
                mean.mul_f64(-u.ln()).min(MAX_DELAY)
            }
        }
    }
}

/// `--stall D/EVERY`: silent for `d` at the start of every `every` from the epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stall {
    pub d: Duration,
    pub every: Duration,
}

impl Stall {
    /// Parses `1s/10s`; D must be shorter than EVERY (else the server never answers).
    pub fn parse(text: &str) -> Result<Stall, String> {
        let (d, every) = text
            .split_once('/')
            .ok_or_else(|| format!("'{text}' is not a stall (write D/EVERY, e.g. 1s/10s)"))?;
        let (d, every) = (parse_duration(d)?, parse_duration(every)?);
        if d.is_zero() || d >= every {
            return Err(format!(
                "'{text}': the stall D must be above zero and shorter than EVERY"
            ));
        }
        Ok(Stall { d, every })
    }

    /// When something due `at` (time since the epoch) may go out: `at` itself, or the
    /// end of the stall window that holds it. A pure function of time.
    pub fn release(&self, at: Duration) -> Duration {
        let every = self.every.as_nanos();
        let into = at.as_nanos() % every;
        if into < self.d.as_nanos() {
            at + (self.d - Duration::from_nanos(into as u64))
        } else {
            at
        }
    }
}

/// Everything that shapes reply timing; `None` fields are off.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Pacing {
    pub delay: Option<DelayDist>,
    pub stall: Option<Stall>,
    /// Time zero of the stall schedule: when the server started (a worker process
    /// given a serialized plan starts its own).
    #[serde(skip, default = "Instant::now")]
    pub epoch: Instant,
}

impl Pacing {
    pub fn off() -> Pacing {
        Pacing {
            delay: None,
            stall: None,
            epoch: Instant::now(),
        }
    }

    pub fn active(&self) -> bool {
        self.delay.is_some() || self.stall.is_some()
    }

    /// When a reply produced at `now` goes out (before keeping replies in order).
    #[inline]
    pub fn due(&self, now: Instant, rng: &mut Rng) -> Instant {
        let mut at = now;
        if let Some(d) = &self.delay {
            at += d.sample(rng);
        }
        if let Some(s) = &self.stall {
            let since = at.saturating_duration_since(self.epoch);
            at = self.epoch + s.release(since);
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn parses_distributions_exactly() {
        assert_eq!(DelayDist::parse("2ms"), Ok(DelayDist::Fixed(ms(2))));
        assert_eq!(DelayDist::parse(" 20ms "), Ok(DelayDist::Fixed(ms(20))));
        assert_eq!(
            DelayDist::parse("uniform:1ms..5ms"),
            Ok(DelayDist::Uniform(ms(1), ms(5)))
        );
        assert_eq!(DelayDist::parse("exp:2ms"), Ok(DelayDist::Exp(ms(2))));
        assert_eq!(
            DelayDist::parse("250us"),
            Ok(DelayDist::Fixed(Duration::from_micros(250)))
        );
        for bad in [
            "",
            "uniform:5ms..1ms",
            "uniform:1ms",
            "gauss:2ms",
            "exp:x",
            "2h",
            "ten",
        ] {
            let e = DelayDist::parse(bad).unwrap_err();
            assert!(!e.contains('\n'), "{bad}: {e}");
        }
        assert_eq!(
            DelayDist::parse("uniform:5ms..1ms").unwrap_err(),
            "'uniform:5ms..1ms': MIN is greater than MAX"
        );
    }

    #[test]
    fn samples_stay_in_their_distribution() {
        let mut rng = Rng::new(1);
        assert_eq!(DelayDist::Fixed(ms(3)).sample(&mut rng), ms(3));
        let u = DelayDist::Uniform(ms(1), ms(5));
        let mut sum = Duration::ZERO;
        for _ in 0..10_000 {
            let s = u.sample(&mut rng);
            assert!(s >= ms(1) && s <= ms(5), "{s:?}");
            sum += s;
        }
        let mean = sum / 10_000;
        assert!(
            mean > ms(2) + ms(900) / 1000 && mean < ms(3) + ms(100) / 1000,
            "{mean:?}"
        );
        let e = DelayDist::Exp(ms(2));
        let mut sum = Duration::ZERO;
        for _ in 0..100_000 {
            sum += e.sample(&mut rng);
        }
        let mean = (sum / 100_000).as_secs_f64() * 1e3;
        assert!((1.95..2.05).contains(&mean), "exp mean {mean} ms");
    }

    #[test]
    fn parses_stalls() {
        assert_eq!(
            Stall::parse("1s/10s"),
            Ok(Stall {
                d: Duration::from_secs(1),
                every: Duration::from_secs(10)
            })
        );
        assert!(Stall::parse("10s/1s").is_err());
        assert!(Stall::parse("1s/1s").is_err());
        assert!(Stall::parse("0s/1s").is_err());
        assert!(Stall::parse("1s").is_err());
        assert!(Stall::parse("x/1s").is_err());
    }

    #[test]
    fn stall_schedule_is_a_function_of_time() {
        let s = Stall::parse("1s/4s").unwrap();
        // In a window: released at its end.
        assert_eq!(s.release(ms(0)), ms(1000));
        assert_eq!(s.release(ms(250)), ms(1000));
        assert_eq!(s.release(ms(999)), ms(1000));
        assert_eq!(s.release(ms(4000)), ms(5000));
        assert_eq!(s.release(ms(8500)), ms(9000));
        // Outside: at once.
        assert_eq!(s.release(ms(1000)), ms(1000));
        assert_eq!(s.release(ms(3999)), ms(3999));
        assert_eq!(s.release(ms(5001)), ms(5001));
    }

    #[test]
    fn pacing_combines_delay_and_stall() {
        let epoch = Instant::now();
        let p = Pacing {
            delay: Some(DelayDist::Fixed(ms(20))),
            stall: Some(Stall::parse("1s/4s").unwrap()),
            epoch,
        };
        let mut rng = Rng::new(3);
        // 1.5 s in: plain delay.
        assert_eq!(p.due(epoch + ms(1500), &mut rng), epoch + ms(1520));
        // 3.99 s in: the delay lands in the next stall, so it waits for its end.
        assert_eq!(p.due(epoch + ms(3990), &mut rng), epoch + ms(5000));
    }
}
