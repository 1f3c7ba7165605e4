//! AMQP 0-9-1 as a `Protocol`: `wirebench amqp` (publishers, churn or publish mode)
//! and `wirebench serve amqp` (the dummy broker).

use super::client::AmqpFactory;
use super::client_figures::ClientFigures;
use super::config::{broker_config, AmqpArgs, AmqpConfig, Mode, ServeAmqpArgs};
use super::figures::AmqpFigures;
use super::server::{AmqpHandlerFactory, BrokerConfig, BrokerTotals};
use crate::config::ProtocolTiming;
use crate::engine::{EngineOutput, LoadSpec};
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::entry::{plain, SuiteLoad, SuitePoint};
use crate::proto::plugin::{Aim, ConfigOf, Protocol};
use crate::report::format::{count_of, group, mib_per_s, micros, rate, seconds};
use crate::report::text;
use crate::stats::result::HistogramBlob;
use crate::stats::{RunResult, Unit};

pub struct Amqp;

impl Protocol for Amqp {
    const NAME: &'static str = "amqp";
    type Args = AmqpArgs;
    type ServeArgs = ServeAmqpArgs;
    type Config = AmqpConfig;
    type ServeConfig = BrokerConfig;
    type Client = AmqpFactory;
    type Server = AmqpHandlerFactory;

    fn config(args: &AmqpArgs, shared: &LoadArgs) -> Result<ConfigOf<Self>> {
        AmqpConfig::from_args(args, shared)
    }

    fn builtin_server(cfg: &ConfigOf<Self>) -> Self::Server {
        AmqpHandlerFactory::new(cfg.own.broker)
    }

    fn client(cfg: &ConfigOf<Self>, _aim: &Aim) -> Self::Client {
        AmqpFactory::new(cfg.own.client.clone())
    }

    /// Publishes, confirmed by the broker (a reply to time) or, without confirms,
    /// written (settled on write: no reply, no latency, no bytes back).
    fn unit(cfg: &ConfigOf<Self>) -> Unit {
        if cfg.own.client.confirm {
            Unit::new("publishes", "confirmed", true)
        } else {
            Unit::new("publishes", "written", false)
        }
    }

    fn target_text(cfg: &ConfigOf<Self>, aim: &Aim) -> String {
        match &cfg.own.target {
            Some(t) => t.display(),
            None => format!("amqp://guest@{}/", aim.addr),
        }
    }

    fn plan_rows(cfg: &ConfigOf<Self>, aim: &Aim) -> Vec<(&'static str, String)> {
        let mut target = cfg
            .base
            .target_row(Self::target_text(cfg, aim), aim, "broker");
        let (l, cfg) = (&cfg.base.load, &cfg.own);
        if cfg.target.is_none() && cfg.broker.ack_multiple {
            target.pop();
            target.push_str(", multiple acks)");
        }
        let c = &cfg.client;
        vec![
            ("target", target),
            ("mode", cfg.mode.name().to_string()),
            ("threads", l.shape.threads.to_string()),
            (
                "connections",
                format!(
                    "{}; {} channel{} each",
                    l.connections_text(),
                    c.channels,
                    if c.channels == 1 { "" } else { "s" }
                ),
            ),
            ("plan", cfg.plan_text(l)),
            (
                "messages",
                format!(
                    "{} body bytes to exchange {:?} with routing key {:?}",
                    c.size, c.exchange, c.routing_key
                ),
            ),
            (
                "confirms",
                if c.confirm {
                    format!(
                        "on, at most {} unconfirmed per connection",
                        l.shape.pipeline
                    )
                } else {
                    "off: a message counts once its connection closes cleanly".into()
                },
            ),
            (
                "rate",
                l.shape
                    .rate
                    .map(|r| format!("{r} publishes/s open loop"))
                    .unwrap_or_else(|| "closed loop".into()),
            ),
            ("timeout", seconds(l.shape.timeout)),
            ("tls", l.tls_text()),
        ]
    }

    fn own_json(cfg: &ConfigOf<Self>, v: &mut serde_json::Value) {
        cfg.own.add_json(v, &cfg.base.load);
    }

    /// Churn: each connection publishes its messages, says goodbye, and the next
    /// opens (its ramp always counts: see `AmqpConfig::from_args`).
    fn connection_policy(cfg: &ConfigOf<Self>, spec: &mut LoadSpec) {
        spec.per_connection = cfg.own.client.per_connection;
    }

    fn finish(cfg: &ConfigOf<Self>, out: &EngineOutput<ClientFigures>, result: &mut RunResult) {
        let cfg = &cfg.own;
        let figures = figures(cfg, out);
        if let Some(why) = shortfall(cfg, &figures, out) {
            result.fall_short(why);
        }
        result.extras.insert(
            AmqpFigures::BLOCK.to_string(),
            serde_json::to_value(&figures).unwrap_or_default(),
        );
    }

    fn closing_lines(
        cfg: &ConfigOf<Self>,
        result: &RunResult,
        out: &EngineOutput<ClientFigures>,
    ) -> String {
        let mut s = amqp_summary(result);
        if cfg.own.mode == Mode::Churn {
            if let Some(bucket) = cfg.base.load.output.histogram_bucket_us {
                s.push_str("handshake latency:\n");
                s.push_str(&text::histogram(&out.handshake, bucket));
            }
        }
        s
    }

    fn serve_config(args: &ServeAmqpArgs) -> Result<BrokerConfig> {
        broker_config(&args.broker)
    }

    fn serve_timing(_cfg: &BrokerConfig) -> ProtocolTiming {
        ProtocolTiming::default()
    }

    fn server(cfg: &BrokerConfig) -> Self::Server {
        AmqpHandlerFactory::new(*cfg)
    }

    fn serve_line(figures: &BrokerTotals) -> Option<String> {
        Some(figures.line())
    }

    fn server_block(figures: &BrokerTotals) -> Option<serde_json::Value> {
        serde_json::to_value(figures).ok()
    }

    fn result_blocks_schema() -> &'static str {
        include_str!("figures.schema.json")
    }

    /// The `amqp` block holds rates and handshake histograms: it merges itself.
    fn block_merge() -> crate::stats::merge::BlockMerge {
        super::figures_merge::block_merge
    }

    fn suite_load(
        block: Option<&toml::Value>,
        _: &[u64],
    ) -> std::result::Result<Box<dyn SuiteLoad>, String> {
        plain(block, suite_args)
    }
}

/// A suite point publishes (as RabbitMQ's default user, guest): its connections,
/// messages of its size.
fn suite_args(p: &SuitePoint<'_>) -> Vec<String> {
    let mut a: Vec<String> = vec![
        Amqp::NAME.into(),
        format!("amqp://guest:guest@{}/", p.addr),
        "--mode".into(),
        "publish".into(),
        "-t".into(),
        p.threads.to_string(),
        "-c".into(),
        p.connections.to_string(),
        "--size".into(),
        p.size.to_string(),
    ];
    a.extend(p.shared_args());
    a
}

fn figures(cfg: &AmqpConfig, out: &EngineOutput<ClientFigures>) -> AmqpFigures {
    let s = &out.figures;
    let secs = out.elapsed.as_secs_f64();
    let per_sec = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
    let messages = out.measured.ok;
    let payload = messages * cfg.client.size as u64;
    let handshakes = out.handshake.count();
    AmqpFigures {
        mode: cfg.mode.name().into(),
        confirm: cfg.client.confirm,
        counted_from: if cfg.client.confirm {
            "confirmed by the broker".into()
        } else {
            "written, then a clean close (no confirms)".into()
        },
        handshakes,
        connections_per_s: (cfg.mode == Mode::Churn).then(|| per_sec(handshakes as f64)),
        clean_closes: s.clean_closes,
        messages,
        nacked: s.nacked,
        payload_bytes: payload,
        msgs_per_s: per_sec(messages as f64),
        payload_mb_per_s: per_sec(payload as f64) / 1e6,
        handshake_latency_us: out.handshake.summary(),
        handshake_histogram: HistogramBlob::of(&out.handshake),
        broker_close: s.broker_close.clone(),
    }
}

/// Churn asks for every client to have closed cleanly, and the broker to have closed none.
fn shortfall<X>(cfg: &AmqpConfig, f: &AmqpFigures, out: &EngineOutput<X>) -> Option<String> {
    if let Some(why) = &f.broker_close {
        return Some(why.clone());
    }
    match (cfg.mode, cfg.clients) {
        (Mode::Churn, Some(c)) if f.clean_closes < c && !out.interrupted => Some(format!(
            "{} of {} clients closed cleanly",
            group(f.clean_closes),
            group(c)
        )),
        _ => None,
    }
}

fn amqp_summary(r: &RunResult) -> String {
    let Some(f) = r
        .extra(AmqpFigures::BLOCK)
        .and_then(|v| serde_json::from_value::<AmqpFigures>(v.clone()).ok())
    else {
        return String::new();
    };
    let f = &f;
    let h = &f.handshake_latency_us;
    let us = |v: f64| format!("{} us", micros(v));
    // Publish mode opens its connections once: a rate of them would mean nothing.
    let per_s = f
        .connections_per_s
        .map(|c| format!(" = {} connections/s", rate(c)))
        .unwrap_or_default();
    let handshake = if h.count > 0 {
        format!(
            "p50 {}  p90 {}  p99 {}  max {}  (connect to ready to publish)",
            us(h.p50),
            us(h.p90),
            us(h.p99),
            us(h.max)
        )
    } else {
        "n/a (no connection got ready in the measured phase)".to_string()
    };
    let payload_per_s = f.payload_bytes as f64 / r.elapsed_s.max(1e-9);
    format!(
        "amqp:         {} mode; {} ({} closed cleanly){per_s}\n\
         handshake:    {handshake}\n\
         published:    {} messages {} = {} publishes/s, {} of payload{}\n",
        f.mode,
        count_of(f.handshakes, "connection"),
        group(f.clean_closes),
        group(f.messages),
        f.counted_from,
        rate(f.msgs_per_s),
        mib_per_s(payload_per_s),
        if f.nacked > 0 {
            format!("; {} nacked", group(f.nacked))
        } else {
            String::new()
        }
    )
}
