//! Which key a request names: a number below `--keyspace`, drawn uniformly, walked
//! in order, or drawn from a Zipf distribution (a few hot keys, a long cold tail).

use crate::rng::Rng;

/// `--distribution`, validated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    Uniform,
    /// Each connection walks the keyspace in order from its own starting key.
    Sequential,
    /// Zipf with exponent `s` (> 0): key 0 is the hottest.
    Zipf(Zipf),
}

impl Distribution {
    /// `uniform`, `sequential` or `zipf[:S]` (S defaults to 0.99, YCSB's).
    pub fn parse(text: &str, keyspace: u64) -> Result<Distribution, String> {
        match text {
            "uniform" => Ok(Distribution::Uniform),
            "sequential" => Ok(Distribution::Sequential),
            "zipf" => Ok(Distribution::Zipf(Zipf::new(keyspace, 0.99))),
            _ => match text.strip_prefix("zipf:") {
                Some(s) => match s.parse::<f64>() {
                    Ok(s) if s.is_finite() && s > 0.0 && s <= 10.0 => {
                        Ok(Distribution::Zipf(Zipf::new(keyspace, s)))
                    }
                    _ => Err(format!(
                        "the Zipf exponent in {text:?} must be a number above 0 and at most 10"
                    )),
                },
                None => Err(format!(
                    "{text:?} is not a distribution: use uniform, sequential or zipf[:S]"
                )),
            },
        }
    }

    pub fn text(&self) -> String {
        match self {
            Distribution::Uniform => "uniform".into(),
            Distribution::Sequential => "sequential".into(),
            Distribution::Zipf(z) => format!("zipf:{}", z.s),
        }
    }
}

/// One connection's key source.
pub struct Keys {
    keyspace: u64,
    dist: Distribution,
    rng: Rng,
    next: u64,
}

impl Keys {
    pub fn new(keyspace: u64, dist: Distribution, conn_id: u64) -> Keys {
        let mut rng = Rng::new(conn_id ^ 0x005E_ED0F_4E15);
        let next = rng.next_u64() % keyspace;
        Keys {
            keyspace,
            dist,
            rng,
            next,
        }
    }

    /// The next key number, below the keyspace.
    #[inline]
    pub fn next_key(&mut self) -> u64 {
        match self.dist {
            Distribution::Uniform => self.rng.next_u64() % self.keyspace,
            Distribution::Sequential => {
                let k = self.next;
                self.next = if k + 1 == self.keyspace { 0 } else { k + 1 };
                k
            }
            Distribution::Zipf(z) => z.sample(&mut self.rng) - 1,
        }
    }
}

/// Zipf over 1..=n by rejection-inversion (Hörmann and Derflinger, 1996, as in
/// Apache Commons RNG): constant time and memory per draw, whatever n.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    s_val: f64,
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

impl Zipf {
    pub fn new(n: u64, s: f64) -> Zipf {
        let mut z = Zipf {
            n: n as f64,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            s_val: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(z.n + 0.5);
        z.s_val = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.s) * lx) * lx
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }

    /// A rank in 1..=n.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let unit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let u = self.h_n + unit * (self.h_x1 - self.h_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).clamp(1.0, self.n);
            let k = k as u64;
            let kf = k as f64;
            if kf - x <= self.s_val || u >= self.h_integral(kf + 0.5) - self.h(kf) {
                return k;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_walks_and_wraps() {
        let mut k = Keys::new(5, Distribution::Sequential, 1);
        let first = k.next_key();
        let walk: Vec<u64> = (0..5).map(|_| k.next_key()).collect();
        let expect: Vec<u64> = (1..=5).map(|i| (first + i) % 5).collect();
        assert_eq!(walk, expect);
    }

    #[test]
    fn uniform_and_zipf_stay_in_the_keyspace_and_zipf_is_skewed() {
        for dist in ["uniform", "zipf", "zipf:1", "zipf:0.5", "zipf:2"] {
            let d = Distribution::parse(dist, 1000).expect("valid");
            let mut k = Keys::new(1000, d, 3);
            let mut counts = vec![0u32; 1000];
            for _ in 0..100_000 {
                counts[k.next_key() as usize] += 1;
            }
            if dist.starts_with("zipf") {
                // Key 0 is the hottest, far hotter than the coldest.
                assert!(
                    counts[0] > 10 * counts[999],
                    "{dist}: {} vs {}",
                    counts[0],
                    counts[999]
                );
            } else {
                assert!(counts.iter().all(|&c| c > 0), "{dist}");
            }
        }
        // Zipf 1 over 1000: P(rank 1) = 1 / H(1000) = 0.1336.
        let z = Zipf::new(1000, 1.0);
        let mut rng = Rng::new(9);
        let ones = (0..200_000).filter(|_| z.sample(&mut rng) == 1).count();
        assert!((25_000..28_500).contains(&ones), "{ones}");
        assert_eq!(
            Keys::new(1, Distribution::parse("zipf", 1).unwrap(), 0).next_key(),
            0
        );
    }

    #[test]
    fn bad_distributions_say_why() {
        for bad in ["zipf:0", "zipf:-1", "zipf:x", "normal", "zipf:nan"] {
            assert!(Distribution::parse(bad, 10).is_err(), "{bad}");
        }
    }
}
