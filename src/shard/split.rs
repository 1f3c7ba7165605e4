//! How a whole run's totals are shared out over its shards: deterministically, so that
//! every shard computes its own share alone and the shares add up exactly to the
//! whole; the remainder goes one each to the lowest indexes.

/// Shard `index`'s share of `total` over `count` shards (`index < count`, `count >= 1`).
pub fn share(total: u64, count: u32, index: u32) -> u64 {
    let n = u64::from(count.max(1));
    total / n + u64::from(u64::from(index) < total % n)
}

/// Where shard `index`'s share starts when the shares are laid out in index order
/// (the sum of the shares of the shards below it): for splitting ranges, not counts.
pub fn offset(total: u64, count: u32, index: u32) -> u64 {
    let n = u64::from(count.max(1));
    let i = u64::from(index);
    i * (total / n) + i.min(total % n)
}

/// Rates are split in thousandths of a request per second (the smallest rate
/// accepted, `config::MIN_RATE`), so the shards' rates add up to the whole exactly in
/// those units.
pub fn share_rate(rate: f64, count: u32, index: u32) -> f64 {
    let milli = (rate * 1000.0).round() as u64;
    share(milli, count, index) as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_whole_for_many_totals_and_counts() {
        for total in (0..200).chain([997, 1000, 3000, 65_537, u64::MAX / 3]) {
            for count in 1..=17u32 {
                let shares: Vec<u64> = (0..count).map(|i| share(total, count, i)).collect();
                assert_eq!(shares.iter().sum::<u64>(), total, "{total} over {count}");
                // The remainder goes one each to the lowest indexes: never increasing,
                // and no two shares differ by more than one.
                assert!(shares.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
                // Offsets lay the shares end to end.
                for i in 0..count {
                    let before: u64 = shares[..i as usize].iter().sum();
                    assert_eq!(
                        offset(total, count, i),
                        before,
                        "{total} over {count} at {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn remainders_go_to_the_lowest_indexes() {
        assert_eq!(
            (0..3).map(|i| share(10, 3, i)).collect::<Vec<_>>(),
            [4, 3, 3]
        );
        assert_eq!(
            (0..4).map(|i| share(3000, 4, i)).collect::<Vec<_>>(),
            [750; 4]
        );
        assert_eq!(
            (0..4).map(|i| share(7, 4, i)).collect::<Vec<_>>(),
            [2, 2, 2, 1]
        );
        assert_eq!(
            (0..3).map(|i| share(2, 3, i)).collect::<Vec<_>>(),
            [1, 1, 0]
        );
    }

    #[test]
    fn rates_add_up_in_thousandths() {
        for (rate, count) in [(1000.0, 3), (0.005, 2), (12_345.678, 7), (1e8, 5)] {
            let milli: u64 = (0..count)
                .map(|i| (share_rate(rate, count, i) * 1000.0).round() as u64)
                .sum();
            assert_eq!(
                milli,
                (rate * 1000.0_f64).round() as u64,
                "{rate} over {count}"
            );
        }
        assert_eq!(share_rate(1000.0, 3, 0), 333.334);
        assert_eq!(share_rate(1000.0, 3, 2), 333.333);
    }
}
