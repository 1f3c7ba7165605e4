//! An `Option<u64>` in 8 bytes for the connection slot (`Option<u64>` takes 16): a
//! load holds one slot per connection, up to ~19,000 per worker, and every byte of the
//! slot is a byte per idle connection (issue 13: <= 256 in all). `u64::MAX` stands
//! for none, a value no budget or time on the run's clock reaches (a value of
//! `u64::MAX` is kept as `u64::MAX - 1`).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptU64(u64);

const NONE: u64 = u64::MAX;

impl OptU64 {
    pub const NONE: OptU64 = OptU64(NONE);

    #[inline]
    pub fn get(self) -> Option<u64> {
        (self.0 != NONE).then_some(self.0)
    }

    #[inline]
    pub fn set(&mut self, v: u64) {
        self.0 = v.min(NONE - 1);
    }

    #[inline]
    pub fn clear(&mut self) {
        self.0 = NONE;
    }

    #[inline]
    pub fn take(&mut self) -> Option<u64> {
        let v = self.get();
        self.0 = NONE;
        v
    }

    /// The value, mutable, if there is one (kept below `u64::MAX` by its users:
    /// budgets only go down).
    #[inline]
    pub fn as_mut(&mut self) -> Option<&mut u64> {
        (self.0 != NONE).then_some(&mut self.0)
    }

    #[inline]
    pub fn get_or_insert(&mut self, v: u64) -> u64 {
        if self.0 == NONE {
            self.set(v);
        }
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_as_an_option_in_eight_bytes() {
        assert_eq!(std::mem::size_of::<OptU64>(), 8);
        let mut o = OptU64::NONE;
        assert_eq!(o.get(), None);
        assert_eq!(o.as_mut(), None);
        assert_eq!(o.get_or_insert(7), 7);
        assert_eq!(o.get_or_insert(9), 7);
        if let Some(v) = o.as_mut() {
            *v -= 1;
        }
        assert_eq!(o.take(), Some(6));
        assert_eq!(o, OptU64::NONE);
        o.set(0);
        assert_eq!(o.get(), Some(0));
        o.set(u64::MAX);
        assert_eq!(o.get(), Some(u64::MAX - 1));
        o.clear();
        assert_eq!(o.get(), None);
    }
}
