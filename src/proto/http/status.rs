//! Which response statuses a run accepts (`--expect-status`): by default 2xx.

/// A set of status codes 0..=639, one bit each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusSet([u64; 10]);

impl Default for StatusSet {
    /// 200-299.
    fn default() -> Self {
        let mut s = StatusSet([0; 10]);
        s.add_range(200, 299);
        s
    }
}

impl StatusSet {
    fn add_range(&mut self, lo: u16, hi: u16) {
        for c in lo..=hi {
            self.0[c as usize / 64] |= 1 << (c % 64);
        }
    }

    #[inline]
    pub fn contains(&self, status: u16) -> bool {
        let s = status as usize;
        s < 640 && self.0[s / 64] >> (s % 64) & 1 == 1
    }

    /// Parses `200,204`, `2xx,3xx`, `200-299` or a mix of them.
    pub fn parse(text: &str) -> Result<StatusSet, String> {
        let mut s = StatusSet([0; 10]);
        let bad = |item: &str| {
            format!("--expect-status: '{item}' is not a status code (100-599), a class (2xx) or a range (200-204)")
        };
        let code =
            |t: &str| -> Option<u16> { t.parse::<u16>().ok().filter(|c| (100..=599).contains(c)) };
        for item in text.split(',').map(str::trim) {
            let lower = item.to_ascii_lowercase();
            if let Some(d) = lower.strip_suffix("xx") {
                match d.parse::<u16>() {
                    Ok(c @ 1..=5) if d.len() == 1 => s.add_range(c * 100, c * 100 + 99),
                    _ => return Err(bad(item)),
                }
            } else if let Some((a, b)) = item.split_once('-') {
                match (code(a.trim()), code(b.trim())) {
                    (Some(a), Some(b)) if a <= b => s.add_range(a, b),
                    _ => return Err(bad(item)),
                }
            } else {
                let c = code(item).ok_or_else(|| bad(item))?;
                s.add_range(c, c);
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets() {
        let d = StatusSet::default();
        assert!(d.contains(200) && d.contains(299) && !d.contains(300) && !d.contains(199));
        let s = StatusSet::parse("2xx, 404,500-502").unwrap();
        for c in [200, 250, 404, 500, 501, 502] {
            assert!(s.contains(c), "{c}");
        }
        for c in [199, 300, 403, 503, 1000] {
            assert!(!s.contains(c), "{c}");
        }
        for bad in ["", "6xx", "abc", "99", "600", "300-200", "2xxx"] {
            assert!(StatusSet::parse(bad).is_err(), "{bad}");
        }
    }
}
