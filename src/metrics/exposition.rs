//! `/metrics` as text: the Prometheus text format (0.0.4) or OpenMetrics 1.0, which
//! differ in where a counter's `_total` goes, the `# UNIT` line and the closing
//! `# EOF`. Which one a scrape gets is its Accept header's choice (`Format::accepting`).

use super::buckets::{Buckets, BOUNDS};
use super::figures::{Labels, LiveFigures, LoadFigures, ServerFigures};
use std::fmt::Write as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `text/plain; version=0.0.4`: what any client that does not ask for OpenMetrics gets.
    Text,
    OpenMetrics,
}

impl Format {
    /// OpenMetrics when the Accept header names it, else the text format (an unknown
    /// or missing Accept included), as Prometheus' own client libraries answer.
    pub fn accepting(accept: Option<&str>) -> Format {
        match accept {
            Some(a)
                if a.to_ascii_lowercase()
                    .contains("application/openmetrics-text") =>
            {
                Format::OpenMetrics
            }
            _ => Format::Text,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// The whole exposition of `figures` in `format`.
pub fn render(figures: &LiveFigures, format: Format) -> String {
    let mut w = Writer {
        out: String::with_capacity(4096),
        format,
        labels: label_text(&figures.labels),
    };
    if let Some(load) = &figures.load {
        w.load(load);
    }
    if let Some(server) = &figures.server {
        w.server(server);
    }
    if format == Format::OpenMetrics {
        w.out.push_str("# EOF\n");
    }
    w.out
}

/// `key="value",...` for the labels that have a value, escaped as both formats want.
fn label_text(l: &Labels) -> String {
    let mut s = String::new();
    for (k, v) in [
        ("protocol", &l.protocol),
        ("shard", &l.shard),
        ("run_id", &l.run_id),
    ] {
        if v.is_empty() {
            continue;
        }
        if !s.is_empty() {
            s.push(',');
        }
        let _ = write!(s, "{k}=\"{}\"", escape(v));
    }
    s
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

struct Writer {
    out: String,
    format: Format,
    labels: String,
}

impl Writer {
    /// `# TYPE` and `# HELP` of a family. `name` is without `_total`; a counter's
    /// family is named with it in the text format and without it in OpenMetrics.
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let total = if kind == "counter" && self.format == Format::Text {
            "_total"
        } else {
            ""
        };
        let _ = writeln!(self.out, "# HELP {name}{total} {help}");
        let _ = writeln!(self.out, "# TYPE {name}{total} {kind}");
        if self.format == Format::OpenMetrics && name.ends_with("_seconds") {
            let _ = writeln!(self.out, "# UNIT {name} seconds");
        }
    }

    /// One sample: `name{labels,extra} value`.
    fn sample(&mut self, name: &str, extra: &str, value: impl std::fmt::Display) {
        let sep = if !self.labels.is_empty() && !extra.is_empty() {
            ","
        } else {
            ""
        };
        let _ = writeln!(self.out, "{name}{{{}{sep}{extra}}} {value}", self.labels);
    }

    fn counter(&mut self, name: &str, help: &str, value: u64) {
        self.family(name, "counter", help);
        self.sample(&format!("{name}_total"), "", value);
    }

    fn gauge(&mut self, name: &str, help: &str, value: f64) {
        self.family(name, "gauge", help);
        self.sample(name, "", number(value));
    }

    fn load(&mut self, f: &LoadFigures) {
        let c = &f.counters;
        self.counter(
            "wirebench_requests_sent",
            "Requests written to a connection.",
            c.sent,
        );
        self.counter(
            "wirebench_requests_ok",
            "Replies that came back whole and correct.",
            c.ok,
        );
        self.family(
            "wirebench_errors",
            "counter",
            "Failed requests and connections, by kind.",
        );
        for (kind, n) in f.errors() {
            self.sample("wirebench_errors_total", &format!("kind=\"{kind}\""), n);
        }
        self.counter(
            "wirebench_bytes_sent",
            "Bytes written to the peer.",
            c.bytes_sent,
        );
        self.counter(
            "wirebench_bytes_received",
            "Bytes read from the peer.",
            c.bytes_received,
        );
        self.counter(
            "wirebench_connections_established",
            "Connections established (after TLS, when used).",
            c.connections,
        );
        self.gauge(
            "wirebench_connections_open",
            "Connections established and not closed yet.",
            f.connections_open as f64,
        );
        self.histogram(
            "wirebench_latency_seconds",
            "Request latency of the measured phase, fixed buckets.",
            &f.latency,
        );
        if let Some(r) = f.rate_asked {
            self.gauge(
                "wirebench_rate_asked_per_second",
                "Open loop: requests per second asked (-R).",
                r,
            );
        }
        self.gauge(
            "wirebench_rate_achieved_per_second",
            "Replies per second over the last interval.",
            f.rate_achieved,
        );
        self.gauge(
            "wirebench_run_finished",
            "1 once the run is over and these are its final figures.",
            if f.finished { 1.0 } else { 0.0 },
        );
    }

    fn histogram(&mut self, name: &str, help: &str, b: &Buckets) {
        self.family(name, "histogram", help);
        let mut cumulative = 0;
        for (i, (le, _)) in BOUNDS.iter().enumerate() {
            cumulative += b.counts[i];
            self.sample(
                &format!("{name}_bucket"),
                &format!("le=\"{le}\""),
                cumulative,
            );
        }
        let count = b.count();
        self.sample(&format!("{name}_bucket"), "le=\"+Inf\"", count);
        self.sample(&format!("{name}_sum"), "", number(b.sum_s));
        self.sample(&format!("{name}_count"), "", count);
    }

    /// Each family's `# HELP`/`# TYPE` once, before its first sample.
    fn server(&mut self, f: &ServerFigures) {
        let mut family = "";
        for s in &f.samples {
            if s.name != family {
                family = s.name;
                let kind = if s.counter { "counter" } else { "gauge" };
                self.family(s.name, kind, s.help);
            }
            let extra = match &s.label {
                Some((k, v)) => format!("{k}=\"{}\"", escape(v)),
                None => String::new(),
            };
            let name = if s.counter {
                format!("{}_total", s.name)
            } else {
                s.name.to_string()
            };
            self.sample(&name, &extra, number(s.value));
        }
    }
}

/// A finite number as both formats write it (never NaN or inf: those become 0).
fn number(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "0".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Latency;

    fn figures() -> LiveFigures {
        let mut load = LoadFigures::default();
        load.counters.sent = 7;
        load.counters.ok = 5;
        load.counters.errors[crate::stats::ErrorKind::Timeout as usize] = 2;
        let mut l = Latency::new();
        l.record_n(40_000, 4);
        l.record(2_000_000);
        load.latency = Buckets::of(&l);
        LiveFigures {
            labels: Labels {
                protocol: "echo".into(),
                shard: String::new(),
                run_id: "a\"b".into(),
            },
            load: Some(load),
            server: None,
        }
    }

    #[test]
    fn text_names_counters_with_total_and_has_no_eof() {
        let t = render(&figures(), Format::Text);
        assert!(
            t.contains("# TYPE wirebench_requests_ok_total counter\n"),
            "{t}"
        );
        assert!(
            t.contains("wirebench_requests_ok_total{protocol=\"echo\",run_id=\"a\\\"b\"} 5\n"),
            "{t}"
        );
        assert!(t.contains(
            "wirebench_errors_total{protocol=\"echo\",run_id=\"a\\\"b\",kind=\"timeout\"} 2\n"
        ));
        assert!(t.contains("le=\"0.00005\"} 4\n"), "{t}");
        assert!(t.contains("le=\"0.0025\"} 5\n"), "{t}");
        assert!(
            t.contains("wirebench_latency_seconds_count{protocol=\"echo\",run_id=\"a\\\"b\"} 5\n")
        );
        assert!(!t.contains("# EOF"));
        assert!(!t.contains("rate_asked"), "closed loop: no rate asked");
    }

    #[test]
    fn openmetrics_names_families_without_total_and_ends_with_eof() {
        let t = render(&figures(), Format::OpenMetrics);
        assert!(t.contains("# TYPE wirebench_requests_ok counter\n"), "{t}");
        assert!(t.contains("# UNIT wirebench_latency_seconds seconds\n"));
        assert!(t.ends_with("# EOF\n"));
    }

    #[test]
    fn only_an_accept_that_names_openmetrics_gets_it() {
        let om = "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4";
        assert_eq!(Format::accepting(Some(om)), Format::OpenMetrics);
        assert_eq!(Format::accepting(Some("image/png")), Format::Text);
        assert_eq!(Format::accepting(Some("*/*")), Format::Text);
        assert_eq!(Format::accepting(None), Format::Text);
    }
}
