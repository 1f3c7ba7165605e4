//! `wirebench amqp` and `serve amqp` flags, validated into run configurations.

use super::client::ClientOptions;
use super::server::BrokerConfig;
use super::url::Target;
use crate::config::{LoadConfig, LoadOverrides};
use crate::engine::Plan;
use crate::error::{Error, Result};
use crate::flags::LoadArgs;
use crate::proto::base::{url_tls, Base, Configured};
use crate::units::parse_bytes;
use clap::Args;
use serde_json::json;

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

/// `wirebench amqp`'s own flags (the shared load flags are `LoadArgs`).
// --pipeline and --pipeline-mode mean nothing here (--inflight does), so they stay out
// of --help; the batch plan works in publish mode (tests/it/amqp.rs: a_batch_plan_...),
// its handshake and goodbye on every connection, so its flags show, in AMQP's words.
#[derive(Args, Debug)]
#[command(
    about = "AMQP 0-9-1 publishers: connection churn or publish throughput (no URL: the built-in broker)",
    mut_arg("pipeline", |a| a.hide(true).long_help("use --inflight")),
    mut_arg("pipeline_mode", |a| a.hide(true).long_help("a publish window that waits for all its confirms is the batch plan (--iterations)")),
    mut_arg("iterations", |a| a.hide(false).help("Batch plan (publish mode): iterations per reconnect round, each publishing --inflight messages per connection and waiting for them")),
    mut_arg("reconnects", |a| a.hide(false).help("Batch plan (publish mode): reconnect rounds, each a full handshake and goodbye per connection")),
    mut_arg("sleep", |a| a.hide(false)),
    after_long_help = "Examples:
  wirebench amqp                                    # publish to the built-in broker for 10 s
  wirebench amqp amqp://guest:guest@127.0.0.1:5672/ -c 4 --confirm -d 30s
  wirebench amqp --mode churn --clients 1000 --concurrency 10 --messages 10",
)]
pub struct AmqpArgs {
    /// amqp://user:pass@host:port/vhost or amqps://...; none starts the built-in broker.
    pub url: Option<String>,
    /// churn: clients connect, publish --messages, close, repeat; publish: long-lived publishers.
    #[arg(long, default_value = "publish")]
    pub mode: String,
    /// Churn: clients in total (each one connection).
    #[arg(long)]
    pub clients: Option<u64>,
    /// Churn: clients at once, over all threads.
    #[arg(long, default_value_t = 10, hide_short_help = true)]
    pub concurrency: usize,
    /// Churn: messages each client publishes.
    #[arg(long, default_value_t = 10, hide_short_help = true)]
    pub messages: u64,
    /// Body bytes per message.
    #[arg(long, default_value = "100")]
    pub size: String,
    /// Exchange to publish to ("" is the default exchange).
    #[arg(long, default_value = "", hide_short_help = true)]
    pub exchange: String,
    /// Routing key of every message.
    #[arg(long, default_value = "wirebench", hide_short_help = true)]
    pub routing_key: String,
    /// Declare this queue (non-durable) on each connection before publishing.
    #[arg(long, value_name = "QUEUE", hide_short_help = true)]
    pub declare_queue: Option<String>,
    /// Publisher confirms: a message counts when the broker acks it.
    #[arg(long)]
    pub confirm: bool,
    /// Unconfirmed messages in flight per connection (without --confirm: encoded per batch) [default: 100, fewer for messages over 80 KiB].
    #[arg(long, hide_short_help = true)]
    pub inflight: Option<usize>,
    /// Publish mode: channels per connection (publishes go round-robin over them).
    #[arg(long, default_value_t = 1, hide_short_help = true)]
    pub channels: u16,
    /// Milliseconds between a connection's publishes (an open-loop schedule).
    #[arg(long, value_name = "MS", hide_short_help = true)]
    pub publish_wait: Option<f64>,
    /// Built-in broker only: its threads [default: the CPUs the load threads leave].
    #[arg(long, hide_short_help = true)]
    pub server_threads: Option<usize>,
    /// Built-in broker only: one Basic.Ack (multiple) per channel per read.
    #[arg(long, hide_short_help = true)]
    pub ack_multiple: bool,
}

/// Connection.Tune values and confirm batching of `serve amqp`.
#[derive(Args, Debug, Clone)]
pub struct BrokerArgs {
    /// Most channels per connection offered in Connection.Tune.
    #[arg(long, default_value_t = 2047)]
    pub channel_max: u16,
    /// Largest frame offered in Connection.Tune, bytes (4096 to 16 MiB); a larger frame from a client gets a close with 501.
    #[arg(long, default_value_t = 131_072)]
    pub frame_max: u32,
    /// Heartbeat interval offered in Connection.Tune, seconds (0: none).
    #[arg(long, default_value_t = 60)]
    pub heartbeat: u16,
    /// One Basic.Ack (multiple) per channel per read instead of one per message.
    #[arg(long)]
    pub ack_multiple: bool,
}

/// Where `serve amqp` listens by default: AMQP's own port, where clients look for a
/// broker.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:5672";

/// `wirebench serve amqp`'s own flags (the shared server flags are `ServerArgs`).
#[derive(Args, Debug)]
#[command(
    about = "Dummy AMQP 0-9-1 broker: handshake, channels, declares, confirms; counts what is published",
    mut_arg("listen", |a| a.default_value(DEFAULT_LISTEN)),
)]
pub struct ServeAmqpArgs {
    #[command(flatten)]
    pub broker: BrokerArgs,
}

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

/// `wirebench amqp`'s own settings, validated.
pub struct AmqpConfig {
    pub mode: Mode,
    /// The URL given; None: the built-in broker.
    pub target: Option<Target>,
    pub client: ClientOptions,
    pub clients: Option<u64>,
    pub broker: BrokerConfig,
}

impl AmqpConfig {
    /// AMQP's own flags with the shared ones, validated once, in the order a user
    /// reads them: the mode and names, the message, then the load's shape.
    pub fn from_args(a: &AmqpArgs, shared: &LoadArgs) -> Result<Configured<Self>> {
        let mode = parse_mode(&a.mode)?;
        let target = a.url.as_deref().map(Target::parse).transpose()?;
        check_names(a, target.as_ref())?;
        // What AMQP's own flags decide in place of the shared ones, validated by
        // LoadConfig like the flags they stand for.
        let mut overrides = LoadOverrides::default();
        if let Some(t) = &target {
            url_tls(shared, t.tls, ("amqp", "amqps"), &mut overrides)?;
        }
        refuse_shared_flags(shared, mode)?;
        let size = message_size(&a.size)?;
        overrides.pipeline = Some(inflight(a.inflight, size)?);
        if a.channels == 0 {
            return Err(Error::usage("--channels must be at least 1"));
        }
        if let Some(w) = a.publish_wait {
            if !(w.is_finite() && w > 0.0) {
                return Err(Error::usage(
                    "--publish-wait must be a positive number of milliseconds",
                ));
            }
            if shared.rate.is_some() {
                return Err(Error::usage("choose one of --publish-wait and -R/--rate"));
            }
        }
        let (clients, per_connection) = match mode {
            Mode::Churn => (
                churn_shape(a, shared, target.as_ref(), &mut overrides)?,
                Some(a.messages),
            ),
            Mode::Publish => {
                if a.clients.is_some() {
                    return Err(Error::usage(
                        "--clients applies to --mode churn; publish uses -c connections",
                    ));
                }
                if target.is_none() && shared.threads.is_none() {
                    overrides.threads = Some(default_threads(target.as_ref()));
                }
                (None, None)
            }
        };
        let mut load = LoadConfig::from_args(shared, overrides)?;
        // Churn claims each connection's messages from the plan before it opens, so
        // the ramp's connections are the plan's: the ramp counts, and says so.
        if per_connection.is_some() {
            load.shape.ramp = load.shape.ramp.map(|r| crate::engine::Ramp {
                measured: true,
                ..r
            });
        }
        if let Some(w) = a.publish_wait {
            load.shape.rate = Some(publish_wait_rate(w, load.sockets())?);
        }
        if target.is_some() && (a.server_threads.is_some() || a.ack_multiple) {
            return Err(Error::usage(
                "--server-threads and --ack-multiple only apply to the built-in broker (no URL)",
            ));
        }
        let server_threads = a
            .server_threads
            .unwrap_or_else(|| {
                crate::sys::affinity_cpus()
                    .saturating_sub(load.shape.threads)
                    .max(1)
            })
            .max(1);
        let aimed = target
            .as_ref()
            .map(|t| crate::net::connect_to::aim(&t.host_port(), shared.connect_to.as_deref()))
            .transpose()?
            .map(|(a, host)| (a.into(), host));
        if aimed.is_none() {
            crate::net::connect_to::without_target(shared.connect_to.as_deref())?;
        }
        let (user, password, vhost) = credentials(target.as_ref());
        let base = Base {
            load,
            target: aimed,
            server_threads,
            tunnel: None,
        };
        let own = AmqpConfig {
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
            },
            mode,
            target,
            clients,
            broker: BrokerConfig {
                ack_multiple: a.ack_multiple,
                ..BrokerConfig::default()
            },
        };
        Ok(Configured { base, own })
    }

    /// Its lines of the config block, after the shared ones (`Base::to_json`).
    pub fn add_json(&self, v: &mut serde_json::Value, load: &LoadConfig) {
        let c = &self.client;
        v["mode"] = json!(self.mode.name());
        v["confirm"] = json!(c.confirm);
        v["inflight"] = json!(load.shape.pipeline);
        v["channels"] = json!(c.channels);
        v["size"] = json!(c.size);
        v["exchange"] = json!(c.exchange);
        v["routing_key"] = json!(c.routing_key);
        v["vhost"] = json!(c.vhost);
        v["clients"] = json!(self.clients);
        v["messages_per_client"] = json!(c.per_connection);
        v["ramp_s"] = json!(load.shape.ramp.map_or(0.0, |r| r.over.as_secs_f64()));
        if self.target.is_none() {
            v["ack_multiple"] = json!(self.broker.ack_multiple);
        }
    }

    /// The plan row: AMQP's own words for the plan, with the ramp and the shard added
    /// as for every protocol (`LoadConfig::with_ramp_and_shard`).
    pub fn plan_text(&self, load: &LoadConfig) -> String {
        let plan = match (self.mode, load.shape.plan) {
            // The clients of this generator: a shard's share of --clients.
            (Mode::Churn, Plan::Count(n)) => format!(
                "{} clients, {} at once, {} messages each",
                n / self.client.per_connection.unwrap_or(1).max(1),
                load.sockets(),
                self.client.per_connection.unwrap_or(0)
            ),
            (Mode::Churn, Plan::Duration(d)) => format!(
                "clients for {}, {} at once, {} messages each",
                crate::report::format::seconds(d),
                load.sockets(),
                self.client.per_connection.unwrap_or(0)
            ),
            (_, Plan::Count(n)) => format!("{n} messages"),
            (_, Plan::Duration(d)) => format!("for {}", crate::report::format::seconds(d)),
            (_, Plan::Batch { .. }) => "batch".into(),
            (_, Plan::Hold) => "connections held until stopped".into(),
        };
        load.with_ramp_and_shard(plan)
    }
}

fn parse_mode(text: &str) -> Result<Mode> {
    match text {
        "churn" => Ok(Mode::Churn),
        "publish" => Ok(Mode::Publish),
        m => Err(Error::usage(format!(
            "--mode must be churn or publish, not {m:?}"
        ))),
    }
}

/// Every name that travels as a short string, refused before any connection.
fn check_names(a: &AmqpArgs, target: Option<&Target>) -> Result<()> {
    short_string("--exchange", &a.exchange)?;
    short_string("--routing-key", &a.routing_key)?;
    if let Some(q) = &a.declare_queue {
        short_string("--declare-queue", q)?;
    }
    if let Some(t) = target {
        short_string("the URL's vhost", &t.vhost)?;
        short_string("the URL's user", &t.user)?;
    }
    Ok(())
}

/// The shared load flags AMQP has its own words for.
fn refuse_shared_flags(shared: &LoadArgs, mode: Mode) -> Result<()> {
    if shared.pipeline != 1 {
        return Err(Error::usage(
            "--pipeline does not apply to amqp; use --inflight",
        ));
    }
    // Publishes keep --inflight unconfirmed (the broker confirms as it goes); a window
    // that waits for all of its confirms is the batch plan's (--iterations).
    if shared.pipeline_mode.is_some() {
        return Err(Error::usage(
            "--pipeline-mode does not apply to amqp; a publish window that waits for all its confirms is the batch plan (--iterations)",
        ));
    }
    let batch =
        shared.iterations.is_some() || shared.reconnects.is_some() || shared.sleep.is_some();
    // The engine runs the handshake and the goodbye on every plan, batch included.
    if batch && mode == Mode::Churn {
        return Err(Error::usage(
            "--iterations/--reconnects/--sleep make a batch plan, which --mode churn does not take; use --clients and --messages",
        ));
    }
    Ok(())
}

fn message_size(text: &str) -> Result<u64> {
    let size = parse_bytes(text).map_err(|e| Error::usage(format!("--size: {e}")))?;
    if size > MAX_BODY {
        return Err(Error::usage(format!(
            "--size: at most {MAX_BODY} body bytes per message"
        )));
    }
    Ok(size)
}

/// Messages in flight per connection. By default at most ~8 MiB of messages are
/// encoded or unconfirmed per connection, so large messages do not pile up gigabytes
/// in output buffers.
fn inflight(asked: Option<usize>, size: u64) -> Result<usize> {
    let inflight = asked.unwrap_or_else(|| ((8 << 20) / (size + 64)).clamp(1, 100) as usize);
    if inflight == 0 || inflight > crate::config::MAX_PIPELINE {
        return Err(Error::usage(format!(
            "--inflight must be between 1 and {}",
            crate::config::MAX_PIPELINE
        )));
    }
    Ok(inflight)
}

/// Churn's shape: `--concurrency` clients at once split evenly over the threads, each
/// publishing `--messages` per connection; `--clients` of them in all (default 100)
/// unless `-d` gives a time. Returns the clients in all.
fn churn_shape(
    a: &AmqpArgs,
    shared: &LoadArgs,
    target: Option<&Target>,
    overrides: &mut LoadOverrides,
) -> Result<Option<u64>> {
    if a.messages == 0 {
        return Err(Error::usage(
            "--messages must be at least 1 (a client's confirmed or written publishes are what churn counts)",
        ));
    }
    if a.channels != 1 {
        return Err(Error::usage("--channels applies to --mode publish only"));
    }
    if shared.requests.is_some() {
        return Err(Error::usage(
            "-n does not apply to --mode churn; use --clients and --messages",
        ));
    }
    if shared.warmup != "0s" {
        return Err(Error::usage("--warmup does not apply to --mode churn"));
    }
    if a.concurrency == 0 {
        return Err(Error::usage("--concurrency must be at least 1"));
    }
    let threads = shared
        .threads
        .unwrap_or_else(|| default_threads(target))
        .clamp(1, a.concurrency);
    if a.concurrency % threads != 0 {
        return Err(Error::usage(format!(
            "--concurrency {} must be a multiple of --threads {threads}",
            a.concurrency
        )));
    }
    overrides.threads = Some(threads);
    overrides.connections = Some(a.concurrency);
    match (a.clients, &shared.duration) {
        (Some(_), Some(_)) => Err(Error::usage("choose one of --clients and -d/--duration")),
        (Some(0), None) => Err(Error::usage("--clients must be at least 1")),
        (c, None) => {
            let c = c.unwrap_or(100);
            overrides.request_unit = Some(a.messages);
            overrides.requests = Some(
                c.checked_mul(a.messages)
                    .ok_or_else(|| Error::usage("--clients x --messages is too large"))?,
            );
            Ok(Some(c))
        }
        (None, Some(_)) => Ok(None),
    }
}

/// `--publish-wait W`: each connection publishes every W ms, an open-loop schedule
/// over all `sockets` of them.
fn publish_wait_rate(w: f64, sockets: u64) -> Result<f64> {
    let rate = sockets as f64 * 1000.0 / w;
    if crate::config::check_rate(rate).is_err() {
        return Err(Error::usage(format!(
            "--publish-wait {} ms over {} connections asks {} messages per second: at most 100,000,000 in all",
            crate::config::show_number(w),
            sockets,
            crate::config::show_number(rate)
        )));
    }
    Ok(rate)
}

/// User, password and vhost: the URL's, or the built-in broker's guest on "/".
fn credentials(target: Option<&Target>) -> (String, String, String) {
    match target {
        Some(t) => (
            t.user.clone(),
            t.password.clone(),
            if t.vhost.is_empty() {
                "/".into()
            } else {
                t.vhost.clone()
            },
        ),
        None => ("guest".into(), "guest".into(), "/".into()),
    }
}

/// With the built-in broker the load takes half the CPUs (it shares them); else all.
fn default_threads(target: Option<&Target>) -> usize {
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
