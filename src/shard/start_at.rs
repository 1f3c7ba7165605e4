//! `--start-at TIME`: the wall-clock instant every shard starts its load at, so their
//! measured phases line up. TIME is RFC 3339 (`2026-11-22T21:30:00Z`,
//! `2026-11-22T22:30:00.250+01:00`) or Unix milliseconds (`date +%s%3N`).
//!
//! A shard waits before it opens any connection (its built-in server, if any, is
//! already listening): the measured phase then begins at TIME (plus `--warmup`) on
//! every shard, and connection setup falls inside the warm-up when there is one.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How far in the past a start may lie (a slow scheduler, a clock a little behind).
pub const MAX_PAST_MS: u64 = 5_000;
/// How far ahead a start may lie: further is surely a mistake (a wrong unit, a date).
pub const MAX_AHEAD_MS: u64 = 24 * 3600 * 1000;

/// Parses TIME and checks it against `now_ms` (Unix ms).
pub fn parse(text: &str, now_ms: u64) -> Result<u64> {
    let t = text.trim();
    let at = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        t.parse::<u64>().ok()
    } else {
        rfc3339_ms(t)
    };
    let Some(at) = at else {
        return Err(Error::usage(format!(
            "--start-at takes an RFC 3339 time (2026-01-31T12:00:00Z) or Unix milliseconds (date +%s%3N), not '{text}'"
        )));
    };
    if at + MAX_PAST_MS < now_ms {
        return Err(Error::usage(format!(
            "--start-at {text} is {:.1} s in the past: give a time still ahead when every shard has started",
            (now_ms - at) as f64 / 1000.0
        )));
    }
    if at > now_ms + MAX_AHEAD_MS {
        return Err(Error::usage(format!(
            "--start-at {text} is more than 24 hours ahead (Unix milliseconds, not seconds or microseconds?)"
        )));
    }
    Ok(at)
}

/// Sleeps until `at_ms` on the wall clock; false when `stop` was set meanwhile
/// (Ctrl-C while waiting). Sleeps in short steps so a stop is seen and a clock step
/// is followed.
pub fn wait_until(at_ms: u64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = unix_ns();
        let at = at_ms as u128 * 1_000_000;
        if now >= at {
            return true;
        }
        let left = Duration::from_nanos((at - now).min(50_000_000) as u64);
        std::thread::sleep(left);
    }
}

fn unix_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)` (a space or `t` for `T`, `z`
/// for `Z`), to Unix milliseconds; None when it is not that.
fn rfc3339_ms(t: &str) -> Option<u64> {
    let b = t.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    if !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &t[19..];
    let mut ms = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let first3: String = frac[..digits]
            .chars()
            .chain("000".chars())
            .take(3)
            .collect();
        ms = first3.parse().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let oh: i64 = rest.get(1..3)?.parse().ok()?;
            let om: i64 = rest.get(4..6)?.parse().ok()?;
            if oh > 23 || om > 59 {
                return None;
            }
            (oh * 60 + om) * if *sign == b'+' { 1 } else { -1 }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + s.min(59) - offset_min * 60;
    u64::try_from(secs * 1000 + ms).ok()
}

fn leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_795_000_000_000;

    #[test]
    fn rfc3339_and_unix_ms_agree() {
        assert_eq!(rfc3339_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_ms("2000-03-01T00:00:00Z"), Some(951_868_800_000));
        assert_eq!(
            rfc3339_ms("2026-11-22T21:30:00.250Z"),
            Some(1_795_383_000_250)
        );
        assert_eq!(
            rfc3339_ms("2026-11-22T22:30:00.25+01:00"),
            Some(1_795_383_000_250)
        );
        assert_eq!(
            rfc3339_ms("2026-11-22 16:30:00.250123-05:00"),
            Some(1_795_383_000_250)
        );
        for bad in [
            "2026-02-30T00:00:00Z",
            "2026-11-22T24:00:00Z",
            "2026-11-22T21:30:00",
            "2026-11-22",
            "yesterday",
            "2026-11-22T21:30:00.Z",
        ] {
            assert_eq!(rfc3339_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_start_must_be_near_and_ahead() {
        assert_eq!(parse(&(NOW + 2000).to_string(), NOW).unwrap(), NOW + 2000);
        assert_eq!(parse(&(NOW - 1000).to_string(), NOW).unwrap(), NOW - 1000);
        let msg = |r: Result<u64>| match r {
            Err(Error::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        };
        assert!(msg(parse(&(NOW - 60_000).to_string(), NOW)).contains("60.0 s in the past"));
        assert!(msg(parse(&(NOW + MAX_AHEAD_MS + 1).to_string(), NOW)).contains("24 hours ahead"));
        assert!(msg(parse("yesterday", NOW)).starts_with("--start-at takes an RFC 3339"));
        assert!(msg(parse("", NOW)).starts_with("--start-at takes"));
    }

    #[test]
    fn waiting_ends_at_the_time_or_at_a_stop() {
        let now = (unix_ns() / 1_000_000) as u64;
        assert!(wait_until(now.saturating_sub(1), &AtomicBool::new(false)));
        assert!(!wait_until(now + 60_000, &AtomicBool::new(true)));
    }
}
