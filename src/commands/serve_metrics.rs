//! `serve --metrics-listen`: the server's own counters on the live `/metrics` endpoint
//! (docs/metrics.md), in the same formats as a load's. The server threads already keep
//! their counters in per-thread atomics that the `--stats` loop sums every 50 ms; that
//! loop hands each sum here, so a scrape costs the server threads nothing (no lock, no
//! allocation, no extra read per request).

use crate::error::Result;
use crate::flags::ServerArgs;
use crate::metrics::figures::{ServerFigures, ServerSample};
use crate::metrics::{Endpoint, Labels, LiveFigures, MetricsConfig};
use crate::server::counters::ServerTotals;

pub struct ServeMetrics {
    endpoint: Endpoint,
}

impl ServeMetrics {
    /// The endpoint `args` ask for, listening (a busy or remote address refused in one
    /// sentence before the server listens), or None without `--metrics-listen`.
    pub fn start(args: &ServerArgs, protocol: &str) -> Result<Option<Self>> {
        let Some(cfg) = MetricsConfig::from_args(&args.metrics_args())? else {
            return Ok(None);
        };
        let initial = LiveFigures {
            labels: Labels {
                protocol: protocol.to_string(),
                ..Labels::default()
            },
            load: None,
            server: Some(server_figures(&ServerTotals::default(), None)),
        };
        Ok(Some(ServeMetrics {
            endpoint: Endpoint::start(cfg.addr, initial)?,
        }))
    }

    /// What scrapes see from now on: the runtime's counters, and the protocol's own
    /// figures (its serve line's, as JSON) when it has any.
    pub fn publish(&self, totals: &ServerTotals, protocol: Option<&serde_json::Value>) {
        let figures = server_figures(totals, protocol);
        self.endpoint.publish(|f| f.server = Some(figures));
    }
}

/// The runtime's counters as samples, then every number of the protocol's figures.
pub fn server_figures(t: &ServerTotals, protocol: Option<&serde_json::Value>) -> ServerFigures {
    let mut samples = vec![
        counter(
            "wirebench_server_connections_accepted",
            "Connections accepted.",
            t.accepts,
        ),
        counter(
            "wirebench_server_connections_closed",
            "Connections closed, by either side.",
            t.closes,
        ),
        ServerSample {
            name: "wirebench_server_connections_open",
            help: "Connections open now (accepted minus closed).",
            counter: false,
            label: None,
            value: t.active as f64,
        },
        counter(
            "wirebench_server_requests",
            "Requests answered, for protocols that count requests (0 for echo).",
            t.requests,
        ),
        counter(
            "wirebench_server_reads",
            "Reads that brought bytes.",
            t.reads,
        ),
        counter(
            "wirebench_server_bytes_received",
            "Bytes read from clients.",
            t.bytes_in,
        ),
        counter(
            "wirebench_server_bytes_sent",
            "Bytes written to clients.",
            t.bytes_out,
        ),
    ];
    for (kind, n) in [
        ("rejected", t.rejected),
        ("tls_failure", t.tls_failures),
        ("header_timeout", t.header_timeouts),
        ("idle_timeout", t.idle_timeouts),
        ("too_large", t.too_large),
        ("held_full", t.held_full),
    ] {
        samples.push(ServerSample {
            name: "wirebench_server_errors",
            help: "Connections closed or stalled for a fault, by kind.",
            counter: true,
            label: Some(("kind", kind.to_string())),
            value: n as f64,
        });
    }
    if let Some(p) = protocol {
        numbers("", p, &mut samples);
    }
    ServerFigures { samples }
}

fn counter(name: &'static str, help: &'static str, n: u64) -> ServerSample {
    ServerSample {
        name,
        help,
        counter: true,
        label: None,
        value: n as f64,
    }
}

/// Every number in the protocol's figures, named by its path (`refused`,
/// `commands.get`), as one gauge family.
fn numbers(path: &str, v: &serde_json::Value, out: &mut Vec<ServerSample>) {
    match v {
        serde_json::Value::Number(n) => out.push(ServerSample {
            name: "wirebench_server_protocol_figure",
            help: "The protocol's own counts, as its serve line prints them, by name.",
            counter: false,
            label: Some(("figure", path.to_string())),
            value: n.as_f64().unwrap_or(0.0),
        }),
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                numbers(&p, v, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::exposition::{render, Format};

    #[test]
    fn counters_kinds_and_protocol_figures_are_written_once_per_family() {
        let t = ServerTotals {
            accepts: 5,
            closes: 3,
            active: 2,
            requests: 40,
            too_large: 1,
            ..ServerTotals::default()
        };
        let proto = serde_json::json!({"refused": 7, "nested": {"a": 2}, "name": "x"});
        let f = LiveFigures {
            labels: Labels {
                protocol: "http".into(),
                ..Labels::default()
            },
            load: None,
            server: Some(server_figures(&t, Some(&proto))),
        };
        let text = render(&f, Format::Text);
        for line in [
            "wirebench_server_connections_accepted_total{protocol=\"http\"} 5\n",
            "wirebench_server_connections_open{protocol=\"http\"} 2\n",
            "wirebench_server_requests_total{protocol=\"http\"} 40\n",
            "wirebench_server_errors_total{protocol=\"http\",kind=\"too_large\"} 1\n",
            "wirebench_server_protocol_figure{protocol=\"http\",figure=\"refused\"} 7\n",
            "wirebench_server_protocol_figure{protocol=\"http\",figure=\"nested.a\"} 2\n",
        ] {
            assert!(text.contains(line), "{line} not in\n{text}");
        }
        assert_eq!(
            text.matches("# TYPE wirebench_server_errors_total counter")
                .count(),
            1
        );
        assert_eq!(
            text.matches("# TYPE wirebench_server_protocol_figure gauge")
                .count(),
            1
        );
        assert!(!text.contains("figure=\"name\""), "strings are not figures");
        let om = render(&f, Format::OpenMetrics);
        assert!(om.contains("# TYPE wirebench_server_requests counter\n"));
        assert!(om.ends_with("# EOF\n"));
    }
}
