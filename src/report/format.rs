//! Number formatting for humans.

/// 1234567 -> "1,234,567".
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate with grouping and no decimals: "411,522".
pub fn rate(v: f64) -> String {
    group(v.round().max(0.0) as u64)
}

/// Microseconds with sensible precision: "12.3", "1,204".
pub fn micros(us: f64) -> String {
    if us < 100.0 {
        format!("{us:.1}")
    } else {
        group(us.round() as u64)
    }
}

/// A size in bytes with binary (IEC) units: "64 B", "1 KiB", "1.5 KiB", "16 MiB".
pub fn iec(bytes: f64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes.abs() < 1024.0 {
        return format!("{} B", bytes.round());
    }
    let mut n = bytes / 1024.0;
    let mut u = 0;
    while n.abs() >= 1024.0 && u + 1 < UNITS.len() {
        n /= 1024.0;
        u += 1;
    }
    let t = if n.fract().abs() < 1e-9 || n.abs() >= 100.0 {
        format!("{n:.0}")
    } else {
        let t = format!("{n:.1}");
        t.trim_end_matches(".0").to_string()
    };
    format!("{t} {}", UNITS[u])
}

pub fn seconds(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if d.is_zero() {
        "0s".to_string()
    } else if s >= 1.0 {
        format!("{s:.3}s")
    } else {
        format!("{:.1}ms", s * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
        assert_eq!(micros(12.34), "12.3");
        assert_eq!(micros(1204.4), "1,204");
        assert_eq!(seconds(std::time::Duration::ZERO), "0s");
        assert_eq!(iec(64.0), "64 B");
        assert_eq!(iec(1024.0), "1 KiB");
        assert_eq!(iec(1536.0), "1.5 KiB");
        assert_eq!(iec(65536.0), "64 KiB");
        assert_eq!(iec(1048576.0), "1 MiB");
        assert_eq!(seconds(std::time::Duration::from_millis(1500)), "1.500s");
        assert_eq!(seconds(std::time::Duration::from_micros(2500)), "2.5ms");
    }
}
