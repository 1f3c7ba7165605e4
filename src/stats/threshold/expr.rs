//! One threshold as written: `FIGURE OP LIMIT` (`p99<200ms`, `errors<0.5%`,
//! `rate>=0.95`, `throughput>=50000/s`), its figure (figure.rs), its comparison and
//! its limit in the unit it was written in.

use super::figure::{Figure, Quantity};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    pub fn holds(self, measured: f64, limit: f64) -> bool {
        match self {
            Op::Lt => measured < limit,
            Op::Le => measured <= limit,
            Op::Gt => measured > limit,
            Op::Ge => measured >= limit,
        }
    }
}

/// A limit: its value in the figure's base unit (microseconds, a fraction, a count,
/// per second) and how to show a measured value in the unit it was written in.
#[derive(Clone, Debug, PartialEq)]
pub struct Limit {
    pub base: f64,
    /// A count figure's limit written with `%`: the share of requests sent is compared.
    pub share: bool,
    /// Shown value = base value x scale, followed by `suffix`.
    pub scale: f64,
    pub suffix: &'static str,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    /// As the user wrote it, trimmed: the name it goes by in the table and the JSON.
    pub text: String,
    pub figure: Figure,
    pub op: Op,
    pub limit: Limit,
}

impl Threshold {
    /// `text` read, or the one sentence saying what does not parse.
    pub fn parse(text: &str) -> Result<Threshold, String> {
        let text = text.trim();
        let fail = |why: String| format!("threshold '{text}': {why}");
        let (at, op, len) = operator(text).ok_or_else(|| {
            fail("write FIGURE<LIMIT (or <=, >, >=), e.g. p99<200ms or errors<0.5%".into())
        })?;
        let figure = Figure::parse(&text[..at]).map_err(fail)?;
        let limit = limit(figure.quantity(), text[at + len..].trim()).map_err(fail)?;
        Ok(Threshold {
            text: text.to_string(),
            figure,
            op,
            limit,
        })
    }

    /// Whether `measured` (in the base unit) meets the limit.
    pub fn holds(&self, measured: f64) -> bool {
        self.op.holds(measured, self.limit.base)
    }
}

/// Where the comparison is, which one, and how many bytes it takes.
fn operator(text: &str) -> Option<(usize, Op, usize)> {
    let at = text.find(['<', '>'])?;
    let eq = text[at + 1..].starts_with('=');
    let op = match (&text[at..at + 1], eq) {
        ("<", false) => Op::Lt,
        ("<", true) => Op::Le,
        (">", false) => Op::Gt,
        _ => Op::Ge,
    };
    Some((at, op, if eq { 2 } else { 1 }))
}

/// The limit `text` of a figure of `q`.
fn limit(q: Quantity, text: &str) -> Result<Limit, String> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = (&text[..split], text[split..].trim());
    let value: f64 = match number.parse() {
        Ok(v) if f64::is_finite(v) => v,
        _ => return Err(format!("the limit '{text}' does not start with a number")),
    };
    let plain = |scale: f64, suffix: &'static str, share: bool| Limit {
        base: value / scale,
        share,
        scale,
        suffix,
    };
    match (q, unit) {
        (Quantity::Time, _) => time(value, unit).ok_or_else(|| {
            format!("a time limit needs its unit (ns, us, ms or s), as in p99<{number}ms")
        }),
        (Quantity::Count, "") => Ok(plain(1.0, "", false)),
        (Quantity::Count, "%") => Ok(plain(100.0, "%", true)),
        (Quantity::Ratio, "") => Ok(plain(1.0, "", false)),
        (Quantity::Ratio, "%") => Ok(plain(100.0, "%", false)),
        (Quantity::PerSecond, "" | "/s") => Ok(plain(1.0, "/s", false)),
        (Quantity::Count, u) => Err(format!("a count takes no unit but % (not {u})")),
        (Quantity::Ratio, u) => Err(format!("write a share as 0.95 or 95% (not with {u})")),
        (Quantity::PerSecond, u) => Err(format!("write a rate as 50000 or 50000/s (not {u})")),
    }
}

/// A time limit in microseconds, shown in the unit it was written in.
fn time(value: f64, unit: &str) -> Option<Limit> {
    let (per_us, suffix) = match unit {
        "ns" => (1e3, "ns"),
        "us" | "µs" => (1.0, "us"),
        "ms" => (1e-3, "ms"),
        "s" => (1e-6, "s"),
        _ => return None,
    };
    Some(Limit {
        base: value / per_us,
        share: false,
        scale: per_us,
        suffix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_read_as_written() {
        let t = Threshold::parse(" p99 < 200ms ").unwrap();
        assert_eq!((t.figure, t.op), (Figure::Percentile(99.0), Op::Lt));
        assert_eq!((t.limit.base, t.limit.suffix), (200_000.0, "ms"));
        assert_eq!(t.text, "p99 < 200ms");
        let e = Threshold::parse("errors<0.5%").unwrap();
        assert!(e.limit.share && (e.limit.base - 0.005).abs() < 1e-12);
        let r = Threshold::parse("rate>=0.95").unwrap();
        assert_eq!((r.op, r.limit.base), (Op::Ge, 0.95));
        let r = Threshold::parse("rate>=95%").unwrap();
        assert!((r.limit.base - 0.95).abs() < 1e-12);
        let t = Threshold::parse("throughput>=50000/s").unwrap();
        assert_eq!(t.limit.base, 50_000.0);
        let c = Threshold::parse("errors{timeout}<=10").unwrap();
        assert!(!c.limit.share && c.holds(10.0) && !c.holds(11.0));
        assert_eq!(
            Threshold::parse("cpu{client}<20us").unwrap().limit.base,
            20.0
        );
        assert_eq!(
            Threshold::parse("max<1.5s").unwrap().limit.base,
            1_500_000.0
        );
    }

    #[test]
    fn what_does_not_parse_is_said_in_one_sentence() {
        let why = |t: &str| Threshold::parse(t).unwrap_err();
        assert_eq!(
            why("p99<200"),
            "threshold 'p99<200': a time limit needs its unit (ns, us, ms or s), as in p99<200ms"
        );
        assert!(why("p99=200ms").contains("write FIGURE<LIMIT"));
        assert!(why("p99<fast").contains("does not start with a number"));
        assert!(why("errors<3ms").contains("takes no unit but %"));
        assert!(why("nope<3").contains("there is no figure named nope"));
        assert!(why("rate>=0.9x").contains("0.95 or 95%"));
    }
}
