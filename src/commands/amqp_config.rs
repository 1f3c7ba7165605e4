//! `wirebench amqp` and `serve amqp` flags, validated into run configurations.

use crate::cli::{AmqpArgs, BrokerArgs};
use crate::config::LoadConfig;
use crate::engine::Plan;
use crate::error::{Error, Result};
use crate::proto::amqp::client::ClientOptions;
use crate::proto::amqp::server::BrokerConfig;
use crate::proto::amqp::url::Target;
use crate::units::{parse_bytes, parse_duration};
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;

/// AMQP 0-9-1 names (exchange, routing key, queue, vhost, user) travel as "short
/// strings": one length octet, so at most 255 bytes.
pub const MAX_SHORT_STRING: usize = 255;

/// Refuses a name that cannot be encoded, before any connection is made.
fn short_string(what: &str, value: &str) -> Result<()> {
    if value.len() > MAX_SHORT_STRING {
        return Err(Error::usage(format!(
            "{what} is {} bytes long; AMQP 0-9-1 allows at most {MAX_SHORT_STRING}",
            value.len()
        )));
    }
    Ok(())
}

/// Largest message body accepted (RabbitMQ's own default limit is 128 MiB).
pub const MAX_BODY: u64 = 128 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Churn,
    Publish,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Churn => "churn",
            Mode::Publish => "publish",
        }
    }
}

pub struct AmqpConfig {
    pub load: LoadConfig,
    pub mode: Mode,
    /// None: the built-in broker.
    pub target: Option<(Target, SocketAddr)>,
    pub client: ClientOptions,
    pub clients: Option<u64>,
    pub server_threads: usize,
    pub broker: BrokerConfig,
}

impl AmqpConfig {
    pub fn from_args(a: &AmqpArgs) -> Result<Self> {
        let mode = match a.mode.as_str() {
            "churn" => Mode::Churn,
            "publish" => Mode::Publish,
            m => {
                return Err(Error::usage(format!(
                    "--mode must be churn or publish, not {m:?}"
                )))
            }
        };
        let target = a.url.as_deref().map(Target::parse).transpose()?;
        short_string("--exchange", &a.exchange)?;
        short_string("--routing-key", &a.routing_key)?;
        if let Some(q) = &a.declare_queue {
            short_string("--declare-queue", q)?;
        }
        if let Some(t) = &target {
            short_string("the URL's vhost", &t.vhost)?;
            short_string("the URL's user", &t.user)?;
        }
        let mut load_args = a.load.clone();
        if let Some(t) = &target {
            if a.load.tls && !t.tls {
                return Err(Error::usage(
                    "--tls contradicts the amqp:// URL; use amqps:// for TLS",
                ));
            }
            // amqps:// is the TLS switch; --insecure and --ca still choose the trust.
            load_args.tls = t.tls;
        }
        if a.load.pipeline != 1 {
            return Err(Error::usage(
                "--pipeline does not apply to amqp; use --inflight",
            ));
        }
        let batch =
            a.load.iterations.is_some() || a.load.reconnects.is_some() || a.load.sleep.is_some();
        // The engine runs the handshake and the goodbye on every plan, batch included.
        if batch && mode == Mode::Churn {
            return Err(Error::usage(
                "--iterations/--reconnects/--sleep make a batch plan, which --mode churn does not take; use --clients and --messages",
            ));
        }
        let size = parse_bytes(&a.size).map_err(|e| Error::usage(format!("--size: {e}")))?;
        if size > MAX_BODY {
            return Err(Error::usage(format!(
                "--size: at most {MAX_BODY} body bytes per message"
            )));
        }
        // By default at most ~8 MiB of messages are encoded or unconfirmed per connection,
        // so large messages do not pile up gigabytes in output buffers.
        let inflight = a
            .inflight
            .unwrap_or_else(|| ((8 << 20) / (size + 64)).clamp(1, 100) as usize);
        if inflight == 0 || inflight > crate::config::MAX_PIPELINE {
            return Err(Error::usage(format!(
                "--inflight must be between 1 and {}",
                crate::config::MAX_PIPELINE
            )));
        }
        load_args.pipeline = inflight;
        if a.channels == 0 {
            return Err(Error::usage("--channels must be at least 1"));
        }
        let ramp = a
            .load
            .ramp
            .as_deref()
            .map(|r| parse_duration(r).map_err(|e| Error::usage(format!("--ramp: {e}"))))
            .transpose()?
            .unwrap_or(Duration::ZERO);
        if let Some(w) = a.publish_wait {
            if !(w.is_finite() && w > 0.0) {
                return Err(Error::usage(
                    "--publish-wait must be a positive number of milliseconds",
                ));
            }
            if a.load.rate.is_some() {
                return Err(Error::usage("choose one of --publish-wait and -R/--rate"));
            }
        }

        let mut clients = None;
        let mut per_connection = None;
        match mode {
            Mode::Churn => {
                if a.messages == 0 {
                    return Err(Error::usage(
                        "--messages must be at least 1 (a client's confirmed or written publishes are what churn counts)",
                    ));
                }
                if a.channels != 1 {
                    return Err(Error::usage("--channels applies to --mode publish only"));
                }
                if a.load.requests.is_some() {
                    return Err(Error::usage(
                        "-n does not apply to --mode churn; use --clients and --messages",
                    ));
                }
                if a.load.warmup != "0s" {
                    return Err(Error::usage("--warmup does not apply to --mode churn"));
                }
                if a.concurrency == 0 {
                    return Err(Error::usage("--concurrency must be at least 1"));
                }
                // Threads split the clients at once evenly.
                let threads = a
                    .load
                    .threads
                    .unwrap_or_else(|| default_threads(&target))
                    .clamp(1, a.concurrency);
                if a.concurrency % threads != 0 {
                    return Err(Error::usage(format!(
                        "--concurrency {} must be a multiple of --threads {threads}",
                        a.concurrency
                    )));
                }
                load_args.threads = Some(threads);
                load_args.connections = a.concurrency / threads;
                per_connection = Some(a.messages);
                match (a.clients, &a.load.duration) {
                    (Some(_), Some(_)) => {
                        return Err(Error::usage("choose one of --clients and -d/--duration"))
                    }
                    (Some(0), None) => return Err(Error::usage("--clients must be at least 1")),
                    (c, None) => {
                        let c = c.unwrap_or(100);
                        clients = Some(c);
                        load_args.requests =
                            Some(c.checked_mul(a.messages).ok_or_else(|| {
                                Error::usage("--clients x --messages is too large")
                            })?);
                    }
                    (None, Some(_)) => {}
                }
            }
            Mode::Publish => {
                if a.clients.is_some() {
                    return Err(Error::usage(
                        "--clients applies to --mode churn; publish uses -c connections per thread",
                    ));
                }
                if target.is_none() && a.load.threads.is_none() {
                    load_args.threads = Some(default_threads(&target));
                }
            }
        }
        let mut load = LoadConfig::from_args(&load_args)?;
        if let Some(w) = a.publish_wait {
            // Each connection publishes every `w` ms: an open-loop schedule over all of them.
            let rate = load.sockets() as f64 * 1000.0 / w;
            if crate::config::check_rate(rate).is_err() {
                return Err(Error::usage(format!(
                    "--publish-wait {} ms over {} connections asks {} messages per second: at most 100,000,000 in all",
                    crate::config::show_number(w),
                    load.sockets(),
                    crate::config::show_number(rate)
                )));
            }
            load.rate = Some(rate);
        }
        let cpus = crate::sys::affinity_cpus();
        if target.is_some() && (a.server_threads.is_some() || a.ack_multiple) {
            return Err(Error::usage(
                "--server-threads and --ack-multiple only apply to the built-in broker (no URL)",
            ));
        }
        let server_threads = a
            .server_threads
            .unwrap_or_else(|| cpus.saturating_sub(load.threads).max(1))
            .max(1);
        let resolved = match target {
            Some(t) => {
                let (addr, _) = crate::net::addr::resolve_target(&t.host_port())?;
                Some((t, addr))
            }
            None => None,
        };
        let (user, password, vhost) = match &resolved {
            Some((t, _)) => (
                t.user.clone(),
                t.password.clone(),
                if t.vhost.is_empty() {
                    "/".into()
                } else {
                    t.vhost.clone()
                },
            ),
            None => ("guest".into(), "guest".into(), "/".into()),
        };
        Ok(AmqpConfig {
            client: ClientOptions {
                user,
                password,
                vhost,
                channels: a.channels,
                confirm: a.confirm,
                exchange: a.exchange.clone(),
                routing_key: a.routing_key.clone(),
                size: size as usize,
                declare_queue: a.declare_queue.clone(),
                per_connection,
                ramp,
            },
            load,
            mode,
            target: resolved,
            clients,
            server_threads,
            broker: BrokerConfig {
                ack_multiple: a.ack_multiple,
                ..BrokerConfig::default()
            },
        })
    }

    pub fn to_json(&self) -> serde_json::Value {
        let mut v = self.load.to_json();
        let c = &self.client;
        v["mode"] = json!(self.mode.name());
        v["confirm"] = json!(c.confirm);
        v["inflight"] = json!(self.load.pipeline);
        v["channels"] = json!(c.channels);
        v["size"] = json!(c.size);
        v["exchange"] = json!(c.exchange);
        v["routing_key"] = json!(c.routing_key);
        v["vhost"] = json!(c.vhost);
        v["clients"] = json!(self.clients);
        v["messages_per_client"] = json!(c.per_connection);
        v["ramp_s"] = json!(c.ramp.as_secs_f64());
        v["builtin_server"] = json!(self.target.is_none());
        if self.target.is_none() {
            v["server_threads"] = json!(self.server_threads);
            v["ack_multiple"] = json!(self.broker.ack_multiple);
        }
        v
    }

    pub fn plan_text(&self) -> String {
        match (self.mode, self.load.plan) {
            (Mode::Churn, Plan::Count(_)) => format!(
                "{} clients, {} at once, {} messages each",
                self.clients.unwrap_or(0),
                self.load.sockets(),
                self.client.per_connection.unwrap_or(0)
            ),
            (Mode::Churn, Plan::Duration(d)) => format!(
                "clients for {}, {} at once, {} messages each",
                crate::report::format::seconds(d),
                self.load.sockets(),
                self.client.per_connection.unwrap_or(0)
            ),
            (_, Plan::Count(n)) => format!("{n} messages"),
            (_, Plan::Duration(d)) => format!("for {}", crate::report::format::seconds(d)),
            (_, Plan::Batch { .. }) => "batch".into(),
        }
    }
}

/// With the built-in broker the load takes half the CPUs (it shares them); else all.
fn default_threads(target: &Option<Target>) -> usize {
    let cpus = crate::sys::affinity_cpus();
    if target.is_none() {
        (cpus / 2).max(1)
    } else {
        cpus
    }
}

/// Largest `--frame-max` of `serve amqp`: a connection buffers up to one frame.
pub const MAX_FRAME_MAX: u32 = 16 << 20;

pub fn broker_config(a: &BrokerArgs) -> Result<BrokerConfig> {
    let min = crate::proto::amqp::codec::FRAME_MIN_SIZE;
    if !(min..=MAX_FRAME_MAX).contains(&a.frame_max) {
        return Err(Error::usage(format!(
            "--frame-max must be at least {min} bytes (the spec's minimum) and at most {MAX_FRAME_MAX} (16 MiB, one frame is buffered per connection)"
        )));
    }
    if a.channel_max == 0 {
        return Err(Error::usage("--channel-max must be at least 1"));
    }
    Ok(BrokerConfig {
        channel_max: a.channel_max,
        frame_max: a.frame_max,
        heartbeat: a.heartbeat,
        ack_multiple: a.ack_multiple,
    })
}
