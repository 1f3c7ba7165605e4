//! The `Date` header's value (IMF-fixdate), formatted at most once per second per
//! thread: a server answering 100k requests a second must not format 100k dates.

use std::cell::Cell;

/// `Sun, 06 Nov 1994 08:49:37 GMT` for `secs` since the Unix epoch.
pub fn imf_fixdate(secs: u64) -> [u8; 29] {
    const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let days = secs / 86400;
    let rem = secs % 86400;
    let (h, m, s) = (rem / 3600, rem / 60 % 60, rem % 60);
    let (year, month, d) = crate::clock::civil_from_days(days);
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    out[..3].copy_from_slice(DAYS[(days % 7) as usize]);
    let two = |o: &mut [u8], v: u64| {
        o[0] = b'0' + (v / 10) as u8;
        o[1] = b'0' + (v % 10) as u8;
    };
    two(&mut out[5..7], d as u64);
    out[8..11].copy_from_slice(MONTHS[(month - 1) as usize]);
    let y = year.clamp(0, 9999) as u64;
    two(&mut out[12..14], y / 100);
    two(&mut out[14..16], y % 100);
    two(&mut out[17..19], h);
    two(&mut out[20..22], m);
    two(&mut out[23..25], s);
    out
}

thread_local! {
    static CACHED: Cell<(u64, [u8; 29])> = const { Cell::new((u64::MAX, [0; 29])) };
}

/// Seconds since the Unix epoch from the coarse realtime clock: a Date header needs
/// the second, not the nanosecond, and the coarse clock reads a vDSO word (no TSC
/// read, no `SystemTime` subtraction) once per reply.
#[inline]
fn epoch_secs() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_REALTIME_COARSE exists on
    // every Linux this runs on (2.6.32+). On failure `ts` stays at the epoch.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
    u64::try_from(ts.tv_sec).unwrap_or(0)
}

/// Now, as an IMF-fixdate, cached per second on this thread.
#[inline]
pub fn now() -> [u8; 29] {
    let secs = epoch_secs();
    CACHED.with(|c| {
        let (at, text) = c.get();
        if at == secs {
            return text;
        }
        let text = imf_fixdate(secs);
        c.set((secs, text));
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(&imf_fixdate(784_111_777), b"Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(&imf_fixdate(0), b"Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(&imf_fixdate(951_782_400), b"Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(
            &imf_fixdate(1_795_311_000),
            b"Sun, 22 Nov 2026 01:30:00 GMT"
        );
    }

    /// The coarse clock tells the same second as the system clock (give or take the
    /// tick it lags by).
    #[test]
    fn now_is_the_system_second() {
        let system = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        };
        let before = system();
        let got = now();
        let after = system();
        assert!(
            (before.saturating_sub(1)..=after).any(|s| imf_fixdate(s) == got),
            "{}",
            String::from_utf8_lossy(&got)
        );
    }
}
