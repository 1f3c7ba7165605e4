//! The figures a threshold can hold a run to, by name: latency percentiles, error
//! counts and shares, the open loop's achieved share of its rate, throughput, CPU per
//! counted item and CPU share, and a protocol's own numbers (`BLOCK{KEY}`).

/// One figure of a result, as a threshold names it.
#[derive(Clone, Debug, PartialEq)]
pub enum Figure {
    /// `p50`, `p99.9`, `p(99)`: a latency percentile (0 < q <= 100).
    Percentile(f64),
    /// `min`, `mean`, `max` latency.
    Min,
    Mean,
    Max,
    /// `errors` (every request error) or `errors{KIND}` (one kind, connection kinds too).
    Errors(Option<String>),
    /// `rate`: achieved over asked, open loop only.
    Rate,
    /// `throughput`: counted items per second.
    Throughput,
    /// `cpu{client}`, `cpu{server}`: CPU time per counted item.
    CpuPerItem(Side),
    /// `client_cpu`, `server_cpu`: CPU seconds per second of the measured phase.
    CpuShare(Side),
    /// `NAME{KEY}`: a number in a protocol's own block (`status{5xx}`).
    Block {
        name: String,
        key: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// What a figure's limit is written in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quantity {
    /// A time with its unit (ns, us, ms, s); microseconds inside.
    Time,
    /// A count, or with `%` a share of the requests sent.
    Count,
    /// A fraction, or with `%` a percentage.
    Ratio,
    /// Per second (`/s` optional).
    PerSecond,
}

/// The figures by name, for the sentence that refuses an unknown one.
pub const NAMES: &str = "p50 .. p99.99 (any pN), min, mean, max, errors, errors{KIND}, rate, \
throughput, cpu{client}, cpu{server}, client_cpu, server_cpu, or a number of the protocol's \
own blocks as BLOCK{KEY} (http: status{5xx})";

impl Figure {
    /// The figure written as `text` (`p99`, `errors{timeout}`), or why it is none.
    pub fn parse(text: &str) -> Result<Figure, String> {
        let (name, arg) = split_arg(text)?;
        if let Some(q) = percentile(name) {
            return match (q?, arg) {
                (q, None) => Ok(Figure::Percentile(q)),
                (_, Some(_)) => Err(format!("{name} takes no {{...}}")),
            };
        }
        let plain = |f: Figure| match arg {
            None => Ok(f),
            Some(_) => Err(format!("{name} takes no {{...}}")),
        };
        match name {
            "min" => plain(Figure::Min),
            "mean" | "avg" => plain(Figure::Mean),
            "max" => plain(Figure::Max),
            "rate" => plain(Figure::Rate),
            "throughput" => plain(Figure::Throughput),
            "client_cpu" => plain(Figure::CpuShare(Side::Client)),
            "server_cpu" => plain(Figure::CpuShare(Side::Server)),
            "errors" => Ok(Figure::Errors(arg.map(str::to_string))),
            "cpu" => match arg {
                Some("client") => Ok(Figure::CpuPerItem(Side::Client)),
                Some("server") => Ok(Figure::CpuPerItem(Side::Server)),
                _ => Err("cpu takes {client} or {server} (CPU time per request)".into()),
            },
            _ => match arg {
                Some(key) if is_word(name) => Ok(Figure::Block {
                    name: name.to_string(),
                    key: key.to_string(),
                }),
                _ => Err(format!("there is no figure named {name}: use {NAMES}")),
            },
        }
    }

    pub fn quantity(&self) -> Quantity {
        match self {
            Figure::Percentile(_) | Figure::Min | Figure::Mean | Figure::Max => Quantity::Time,
            Figure::CpuPerItem(_) => Quantity::Time,
            Figure::Errors(_) | Figure::Block { .. } => Quantity::Count,
            Figure::Rate | Figure::CpuShare(_) => Quantity::Ratio,
            Figure::Throughput => Quantity::PerSecond,
        }
    }

    /// Whether the figure is a latency (it exists only when counted items have replies).
    pub fn is_latency(&self) -> bool {
        matches!(
            self,
            Figure::Percentile(_) | Figure::Min | Figure::Mean | Figure::Max
        )
    }
}

/// `NAME` and the `KEY` of `NAME{KEY}`.
fn split_arg(text: &str) -> Result<(&str, Option<&str>), String> {
    let text = text.trim();
    let Some(open) = text.find('{') else {
        return Ok((text, None));
    };
    let inner = text[open + 1..]
        .strip_suffix('}')
        .ok_or_else(|| format!("{text} has a {{ without its closing }}"))?
        .trim();
    if inner.is_empty() || inner.contains(['{', '}']) {
        return Err(format!("{text}: write one name between the braces"));
    }
    Ok((text[..open].trim(), Some(inner)))
}

fn is_word(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `p99`, `p99.9`, `p(99.9)`: Some(q) for a percentile name (an error when q is out of
/// range), None for any other name.
fn percentile(name: &str) -> Option<Result<f64, String>> {
    let digits = name.strip_prefix('p')?;
    let digits = digits
        .strip_prefix('(')
        .and_then(|d| d.strip_suffix(')'))
        .unwrap_or(digits);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    Some(match digits.parse::<f64>() {
        Ok(q) if q > 0.0 && q <= 100.0 => Ok(q),
        _ => Err(format!(
            "{name}: a percentile is above 0 and at most 100 (p50, p99.9)"
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_as_figures() {
        assert_eq!(Figure::parse("p99"), Ok(Figure::Percentile(99.0)));
        assert_eq!(Figure::parse("p(99.9)"), Ok(Figure::Percentile(99.9)));
        assert_eq!(Figure::parse("p99.99"), Ok(Figure::Percentile(99.99)));
        assert_eq!(Figure::parse(" max "), Ok(Figure::Max));
        assert_eq!(
            Figure::parse("errors{timeout}"),
            Ok(Figure::Errors(Some("timeout".into())))
        );
        assert_eq!(
            Figure::parse("cpu{server}"),
            Ok(Figure::CpuPerItem(Side::Server))
        );
        assert_eq!(
            Figure::parse("status{5xx}"),
            Ok(Figure::Block {
                name: "status".into(),
                key: "5xx".into()
            })
        );
    }

    #[test]
    fn what_is_no_figure_is_said() {
        assert!(Figure::parse("p0").unwrap_err().contains("above 0"));
        assert!(Figure::parse("p101").unwrap_err().contains("at most 100"));
        assert!(Figure::parse("latency")
            .unwrap_err()
            .starts_with("there is no figure named latency"));
        assert!(Figure::parse("cpu{gpu}").unwrap_err().contains("{client}"));
        assert!(Figure::parse("status{5xx").unwrap_err().contains("closing"));
        assert!(Figure::parse("max{1}").unwrap_err().contains("takes no"));
    }
}
