//! Parsers for the human units on the command line: durations, sizes, ranges, intervals.

use std::time::Duration;

/// Parses `10s`, `500ms`, `2m`, `1h`, `250us` or a bare number of seconds (`1.5`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (try 10s, 500ms, 2m)"))?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "ns" => value / 1e9,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "'{s}' has an unknown time unit '{other}' (use ns, us, ms, s, m or h)"
            ))
        }
    };
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(format!("'{s}' is not a usable duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a byte count: `64`, `4k`/`4KiB` (1024), `1m`/`1MiB`.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a byte count (try 64, 4k, 1m)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        other => {
            return Err(format!(
                "'{s}' has an unknown size unit '{other}' (use k, m or g)"
            ))
        }
    };
    value
        .checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Parses `MIN` or `MIN..MAX` (also `MIN-MAX`) byte counts; MIN must not exceed MAX.
pub fn parse_size_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = match s.split_once("..").or_else(|| s.split_once('-')) {
        Some((a, b)) => (parse_bytes(a)?, parse_bytes(b)?),
        None => {
            let v = parse_bytes(s)?;
            (v, v)
        }
    };
    if a > b {
        return Err(format!("size range '{s}' has MIN {a} greater than MAX {b}"));
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size_range("64").unwrap(), (64, 64));
        assert_eq!(parse_size_range("3..10").unwrap(), (3, 10));
        assert_eq!(parse_size_range("1k..4k").unwrap(), (1024, 4096));
        assert!(parse_size_range("10..3")
            .unwrap_err()
            .contains("greater than MAX"));
        assert!(parse_size_range("x").is_err());
    }
}
