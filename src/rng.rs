//! A small, fast, seedable generator for payload sizes: not for anything secret.

pub struct Rng(u64);

impl Rng {
    /// Seeds with SplitMix64 so neighbouring seeds give unrelated streams.
    pub fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    /// xorshift64*.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi` (tiny modulo bias is irrelevant for payload sizes).
    #[inline]
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if lo >= hi {
            lo
        } else {
            lo + self.next_u64() % (hi - lo + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn stays_in_range_and_covers_it() {
        let mut r = Rng::new(7);
        let mut seen = [false; 8];
        for _ in 0..1000 {
            let v = r.range(3, 10);
            assert!((3..=10).contains(&v));
            seen[(v - 3) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(Rng::new(1).range(5, 5), 5);
    }
}
