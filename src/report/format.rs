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

const KIB: f64 = 1024.0;
const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Bytes per second in MiB/s (1024-based, as evh_perf's users read it): "191.3 MiB/s".
pub fn mib_per_s(bytes_per_s: f64) -> String {
    format!("{:.1} MiB/s", bytes_per_s.max(0.0) / MIB)
}

/// A size in IEC units: "512 B", "4.0 KiB", "12.3 MiB", "1.50 GiB".
pub fn size(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.2} GiB", b / GIB)
    } else if b >= MIB {
        format!("{:.1} MiB", b / MIB)
    } else if b >= KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{bytes} B")
    }
}

/// "1 thread", "2 threads": a count with its noun, singular when it is one.
pub fn count_of(n: u64, noun: &str) -> String {
    let plural = if noun.ends_with("ss") || noun.ends_with("sh") || noun.ends_with("ch") {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    };
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {plural}", group(n))
    }
}

/// A length of time as a reader says it: "45 s", "1 min 12 s", "3 h 20 min".
pub fn span(d: std::time::Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 if s % 60 == 0 => format!("{} min", s / 60),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ if (s / 60) % 60 == 0 => format!("{} h", s / 3600),
        _ => format!("{} h {} min", s / 3600, (s / 60) % 60),
    }
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
        let span_of = |s: u64| span(std::time::Duration::from_secs(s));
        assert_eq!(
            [span_of(0), span_of(45), span_of(72), span_of(120)],
            ["0 s", "45 s", "1 min 12 s", "2 min"]
        );
        assert_eq!([span_of(3600), span_of(12_000)], ["1 h", "3 h 20 min"]);
        assert_eq!(iec(64.0), "64 B");
        assert_eq!(iec(1024.0), "1 KiB");
        assert_eq!(iec(1536.0), "1.5 KiB");
        assert_eq!(iec(65536.0), "64 KiB");
        assert_eq!(iec(1048576.0), "1 MiB");
        assert_eq!(seconds(std::time::Duration::from_millis(1500)), "1.500s");
        assert_eq!(seconds(std::time::Duration::from_micros(2500)), "2.5ms");
        assert_eq!(mib_per_s(1024.0 * 1024.0 * 1.5), "1.5 MiB/s");
        assert_eq!(size(512), "512 B");
        assert_eq!(size(4096), "4.0 KiB");
        assert_eq!(size(13 * 1024 * 1024 / 2), "6.5 MiB");
        assert_eq!(size(3 << 29), "1.50 GiB");
        assert_eq!(count_of(1, "thread"), "1 thread");
        assert_eq!(count_of(2, "thread"), "2 threads");
        assert_eq!(count_of(1, "process"), "1 process");
        assert_eq!(count_of(4, "process"), "4 processes");
        assert_eq!(count_of(1000, "connection"), "1,000 connections");
    }
}
