//! What happened to connections themselves, beside the requests on them: failed
//! attempts by errno (`ECONNREFUSED`, `EADDRNOTAVAIL`, ...: the kinds of
//! `ErrorKind` say refused, timed out or "other", a mass-connection run must say which
//! other) and established connections lost while they had nothing to do, by kind.
//! Fixed arrays, so recording is one add and merging is exact.

use super::outcome::ErrorKind;

/// Errnos below this are counted by number; any above (none on Linux today) in the
/// last slot. Linux's largest is 133 (EHWPOISON).
pub const ERRNO_SLOTS: usize = 135;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnTally {
    /// Failed connection attempts by errno (index); TLS failures are not here (no
    /// errno: `ErrorKind::Tls` counts them).
    pub failed_errno: [u64; ERRNO_SLOTS],
    /// Established connections that ended while idle or held (the peer closed, reset,
    /// spoke unasked, or a request on it failed), by the kind of their end.
    pub lost: [u64; ErrorKind::COUNT],
    /// Connections open now: set only in a worker's progress report (never in a
    /// phase's tally), summed over the workers for the live endpoint.
    pub open: u64,
}

impl Default for ConnTally {
    fn default() -> Self {
        ConnTally {
            failed_errno: [0; ERRNO_SLOTS],
            lost: [0; ErrorKind::COUNT],
            open: 0,
        }
    }
}

impl ConnTally {
    #[inline]
    pub fn failed(&mut self, errno: i32) {
        let i = usize::try_from(errno).unwrap_or(0).min(ERRNO_SLOTS - 1);
        self.failed_errno[i] += 1;
    }

    #[inline]
    pub fn lost(&mut self, kind: ErrorKind) {
        self.lost[kind as usize] += 1;
    }

    pub fn add(&mut self, o: &ConnTally) {
        for (a, b) in self.failed_errno.iter_mut().zip(o.failed_errno.iter()) {
            *a += b;
        }
        for (a, b) in self.lost.iter_mut().zip(o.lost.iter()) {
            *a += b;
        }
        self.open += o.open;
    }

    /// The non-zero failure counts: (errno, count), by errno.
    pub fn failures(&self) -> impl Iterator<Item = (i32, u64)> + '_ {
        self.failed_errno
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(e, n)| (e as i32, *n))
    }

    /// The non-zero losses: (kind, count), in `ErrorKind::ALL` order.
    pub fn losses(&self) -> impl Iterator<Item = (ErrorKind, u64)> + '_ {
        ErrorKind::ALL
            .iter()
            .map(|k| (*k, self.lost[*k as usize]))
            .filter(|(_, n)| *n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_merge_exactly() {
        let mut a = ConnTally::default();
        a.failed(libc::ECONNREFUSED);
        a.failed(libc::ECONNREFUSED);
        a.lost(ErrorKind::Closed);
        let mut b = ConnTally::default();
        b.failed(libc::EADDRNOTAVAIL);
        b.failed(libc::ECONNREFUSED);
        b.failed(10_000);
        b.lost(ErrorKind::Closed);
        b.lost(ErrorKind::Reset);
        a.add(&b);
        let f: Vec<_> = a.failures().collect();
        // EADDRNOTAVAIL (99) before ECONNREFUSED (111), then the overflow slot.
        assert_eq!(
            f,
            vec![
                (libc::EADDRNOTAVAIL, 1),
                (libc::ECONNREFUSED, 3),
                ((ERRNO_SLOTS - 1) as i32, 1)
            ]
        );
        let l: Vec<_> = a.losses().collect();
        assert_eq!(l, vec![(ErrorKind::Reset, 1), (ErrorKind::Closed, 2)]);
    }
}
