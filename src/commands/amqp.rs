//! `wirebench amqp [URL]`: AMQP publishers against a broker (or the built-in one in this
//! process), in churn mode (connection rate) or publish mode (message throughput); and
//! `wirebench serve amqp`, the dummy broker.

use super::amqp_config::{broker_config, AmqpConfig, Mode};
use super::harness;
use super::load::{self, ResultInputs};
use crate::cli::{AmqpArgs, ServeAmqpArgs};
use crate::engine::{self, EngineOutput};
use crate::error::Result;
use crate::proto::amqp::client::AmqpFactory;
use crate::proto::amqp::client_figures::ClientFigures;
use crate::proto::amqp::server::AmqpHandlerFactory;
use crate::report::format::{count_of, group, mib_per_s, micros, rate, seconds};
use crate::report::json::JsonSink;
use crate::report::text;
use crate::stats::amqp_figures::AmqpFigures;
use crate::stats::result::HistogramBlob;
use crate::stats::RunResult;
use crate::stats::Unit;

pub fn serve(a: &ServeAmqpArgs) -> Result<()> {
    let factory = AmqpHandlerFactory::new(broker_config(&a.broker)?);
    let counters = factory.counters.clone();
    let timing = super::serve::ProtocolTiming::default();
    super::serve::serve_with(&a.server, timing, factory, "amqp", &move || {
        Some(counters.totals().line())
    })
}

pub fn run(args: &AmqpArgs) -> Result<()> {
    let cfg = AmqpConfig::from_args(args)?;
    let l = &cfg.load;
    let builtin = cfg.target.is_none();
    load::check_fd_budget(l.sockets() * if builtin { 2 } else { 1 })?;
    let json = l.output.json.as_deref().map(JsonSink::create).transpose()?;
    let stop = load::stop_flag()?;

    let broker = AmqpHandlerFactory::new(cfg.broker);
    let broker_counters = broker.counters.clone();
    let (server, trust, addr, host) = match &cfg.target {
        Some((t, addr)) => (None, l.tls.clone(), *addr, t.host.clone()),
        None => {
            let (handle, trust) = harness::start_builtin(l, cfg.server_threads, broker)?;
            let addr = handle.addr;
            (Some(handle), trust, addr, "127.0.0.1".to_string())
        }
    };
    let tls = harness::client_tls(trust.as_ref(), &host)?;
    let target_text = match &cfg.target {
        Some((t, _)) => t.display(),
        None => format!("amqp://guest@{addr}/"),
    };
    if !l.output.quiet {
        print!(
            "{}",
            text::config_table(
                &format!("wirebench amqp {}", env!("CARGO_PKG_VERSION")),
                &config_rows(&cfg, &target_text)
            )
        );
    }

    let factory = AmqpFactory::new(cfg.client.clone());
    let mut spec = harness::load_spec(l, addr, tls, stop);
    spec.per_connection = factory.per_connection();
    // Churn claims each connection's messages from the plan before it opens: the
    // ramp's connections are the plan's, so the ramp counts.
    if cfg.client.per_connection.is_some() {
        spec.ramp = spec.ramp.map(|r| engine::Ramp {
            measured: true,
            ..r
        });
    }
    // The ramp is warm-up unless measured: the result says the real warm-up.
    let measure_start = spec.measure_start();
    let (mut progress, server_cpu) =
        harness::progress(l, &spec, server.as_ref(), unit(cfg.client.confirm));
    let started = load::unix_ms();
    let out = engine::run(spec, factory, &mut progress)?;
    progress.finish();

    let server = server.map(|s| {
        let mut figures = server_cpu.figures(s);
        figures.counters["amqp"] =
            serde_json::to_value(broker_counters.totals()).unwrap_or_default();
        figures
    });
    let mut result = load::build_result(
        ResultInputs {
            kind: "amqp",
            target: target_text,
            config: cfg.to_json(),
            started_unix_ms: started,
            warmup: measure_start,
            server,
            unit: unit(cfg.client.confirm),
        },
        &out,
    );
    let figures = figures(&cfg, &out);
    if let (None, Some(why)) = (&result.outcome.reason, shortfall(&cfg, &figures, &out)) {
        result.outcome.success = false;
        result.outcome.reason = Some(why);
    }
    result.amqp = Some(figures);
    let outcome = load::report(&result, &out, &l.output, json);
    print!("{}", amqp_summary(&result));
    if cfg.mode == Mode::Churn {
        if let Some(bucket) = l.output.histogram_bucket_us {
            println!("handshake latency:");
            print!("{}", text::histogram(&out.handshake, bucket));
        }
    }
    outcome
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

/// What an AMQP run counts: publishes, confirmed by the broker (a reply to time) or,
/// without confirms, written (settled on write: no reply, no latency, no bytes back).
fn unit(confirm: bool) -> Unit {
    if confirm {
        Unit::new("publishes", "confirmed", true)
    } else {
        Unit::new("publishes", "written", false)
    }
}

fn amqp_summary(r: &RunResult) -> String {
    let Some(f) = &r.amqp else {
        return String::new();
    };
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

fn config_rows(cfg: &AmqpConfig, target: &str) -> Vec<(&'static str, String)> {
    let l = &cfg.load;
    let c = &cfg.client;
    let target = match &cfg.target {
        Some(_) => target.to_string(),
        None => format!(
            "{target} (built-in broker, {} thread{}{})",
            cfg.server_threads,
            if cfg.server_threads == 1 { "" } else { "s" },
            if cfg.broker.ack_multiple {
                ", multiple acks"
            } else {
                ""
            }
        ),
    };
    vec![
        ("target", target),
        ("mode", cfg.mode.name().to_string()),
        ("threads", l.threads.to_string()),
        (
            "connections",
            format!(
                "{} per thread ({} at once), {} channel{} each",
                l.connections,
                l.sockets(),
                c.channels,
                if c.channels == 1 { "" } else { "s" }
            ),
        ),
        ("plan", cfg.plan_text()),
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
                format!("on, at most {} unconfirmed per connection", l.pipeline)
            } else {
                "off: a message counts once its connection closes cleanly".into()
            },
        ),
        (
            "rate",
            l.rate
                .map(|r| format!("{r} publishes/s open loop"))
                .unwrap_or_else(|| "closed loop".into()),
        ),
        ("ramp", seconds(c.ramp)),
        ("timeout", seconds(l.timeout)),
        (
            "tls",
            if l.tls.is_some() {
                "on".into()
            } else {
                "off".into()
            },
        ),
    ]
}
