//! `wirebench connect [TARGET]`: mass connections against a server, or against the
//! built-in echo server started in its own processes.

use super::load;
use super::serve_plan::{worker_args, ServePlan};
use crate::config::{ProtocolTiming, ServeConfig, ServerTlsChoice};
use crate::connect::args::ConnectArgs;
use crate::connect::parent::{self, BuiltinServer};
use crate::connect::plan::{ConnectConfig, Mode};
use crate::connect::{judge, report, summary};
use crate::error::{Error, Result};
use crate::procs::workers::Launch;
use crate::proto::echo::plugin::Echo;
use crate::proto::plugin::Protocol;
use crate::report::console::Console;
use crate::report::format::{group, seconds};
use crate::report::json::JsonSink;
use crate::report::text;
use crate::stats::interference::{this_process_tree, Window};
use crate::sys::limits::KernelLimits;

pub fn run(args: &ConnectArgs) -> Result<()> {
    if crate::procs::worker_role().as_deref() == Some("connect") {
        return crate::connect::worker_main();
    }
    let limits = KernelLimits::read();
    let cfg = ConnectConfig::from_args(args, &limits)?;
    let json = cfg
        .output
        .json
        .as_deref()
        .map(JsonSink::create)
        .transpose()?;
    // `--json -`: the JSON takes stdout, the rest goes to stderr.
    let console = Console::for_json(cfg.output.json.as_deref());
    let hlog = super::harness::interval_log_at(cfg.hlog.as_deref(), &cfg.coordination, "connect")?;
    let stop = load::stop_flag()?;
    if !cfg.output.quiet {
        console.print(&text::config_table(
            &format!("wirebench connect {}", env!("CARGO_PKG_VERSION")),
            &config_rows(&cfg, &limits),
        ));
        if let Some(line) = cfg.chosen.line() {
            console.print(&format!("{line}\n"));
        }
    }
    // The built-in server's processes share one certificate, made here.
    let cert = match (cfg.builtin(), cfg.tls.is_some()) {
        (true, true) => Some(SelfSignedFiles::create()?),
        _ => None,
    };
    let builtin = match cfg.builtin() {
        true => Some(builtin_server(cert.as_ref())?),
        false => None,
    };
    let started = load::unix_ms();
    // Interference from the workers' start to their end: they are this process's
    // children, so their time is the run's own.
    let machine = Window::open(this_process_tree());
    let run = parent::run(&cfg, &stop, builtin, hlog)?;
    let interference = machine.close(this_process_tree(), &[]);
    drop(cert);
    let outcome = judge::judge(&cfg, &run);
    let mut result = report::build(&cfg, &run, outcome, started, limits);
    result.base.set_interference(interference);
    if let Some(sink) = json {
        sink.write(&result)?;
    }
    console.print(&summary::summary(&result));
    if let Some(line) = text::interference_line(&result.base) {
        console.print(&format!("{line}\n"));
    }
    if let Some(bucket) = cfg.output.histogram_bucket_us {
        console.print(&format!(
            "connect {}",
            text::histogram(&run.connect_hist, bucket)
        ));
        if run.echo_hist.count() > 0 {
            let what = if cfg.is_churn() { "echo" } else { "ping" };
            console.print(&format!(
                "{what} {}",
                text::histogram(&run.echo_hist, bucket)
            ));
        }
    }
    match &result.base.outcome.reason {
        None => Ok(()),
        Some(why) => Err(Error::ShortFall(format!("the run fell short: {why}"))),
    }
}

/// The built-in echo server's worker processes: their command line, their validated
/// plan (serialized, never flags) and the CA PEM a TLS client checks them with.
fn builtin_server(cert: Option<&SelfSignedFiles>) -> Result<BuiltinServer> {
    let listen: std::net::SocketAddr = ([127, 0, 0, 1], 0).into();
    let plan = ServePlan {
        protocol: Echo::NAME.to_string(),
        serve: ServeConfig {
            listen,
            listen_all: vec![listen],
            unix: None,
            // Each worker serves in its own process; the group starts
            // `cfg.server_processes` of them.
            processes: 1,
            threads: 1,
            max_conns_per_thread: 0,
            read_buffer: 64 * 1024,
            tls: match cert.and_then(|c| Some((c.files.cert.clone(), c.files.key.clone()?))) {
                Some((cert, key)) => ServerTlsChoice::Files { cert, key },
                None => ServerTlsChoice::Off,
            },
            client_ca: None,
            stats: None,
            stats_json: None,
            debug: false,
            nodelay: true,
            // Held connections may sit silent longer than any idle timeout.
            idle_timeout: None,
        },
        proto: ProtocolTiming::default(),
    };
    Ok(BuiltinServer {
        launch: Launch {
            args: worker_args(Echo::NAME),
            env: vec![plan.to_env()?],
        },
        ca_pem: cert.map(|c| c.pem.clone()),
    })
}

fn config_rows(cfg: &ConnectConfig, limits: &KernelLimits) -> Vec<(&'static str, String)> {
    let target = match &cfg.targets {
        Some(t) if t.len() > 1 => format!("{} addresses from {}", t.len(), t[0]),
        Some(t) => t[0].to_string(),
        None => format!(
            "built-in echo server, {} process{}",
            cfg.server_processes,
            if cfg.server_processes == 1 { "" } else { "es" }
        ),
    };
    let plan = match &cfg.mode {
        Mode::Hold { hold, ping } => format!(
            "open {} connections, hold {}{}",
            group(cfg.total),
            seconds(*hold),
            ping.map(|p| format!(", ping each every {}", seconds(p)))
                .unwrap_or_default()
        ),
        Mode::Churn { duration: Some(_) } if !cfg.stages.is_empty() => format!(
            "churn (connect, echo, close) by stages of cycles started: {}",
            stages_text(&cfg.stages)
        ),
        Mode::Churn { duration: Some(d) } => {
            format!("churn (connect, echo, close) for {}", seconds(*d))
        }
        Mode::Churn { duration: None } => {
            format!("churn (connect, echo, close) {} times", group(cfg.total))
        }
    };
    let plan = match cfg.ramp {
        Some(r) => format!(
            "{plan}; {} spread over {}",
            if cfg.is_churn() {
                "the slots' first cycles"
            } else {
                "connection starts"
            },
            seconds(r.over)
        ),
        None => plan,
    };
    let plan = match cfg.coordination.plan_text() {
        Some(shard) => format!("{plan}; {shard}"),
        None => plan,
    };
    let sources = match cfg.sources.len() {
        0 => "kernel's choice".to_string(),
        1 => cfg.sources[0].to_string(),
        n => format!("{n} addresses from {}", cfg.sources[0]),
    };
    let (lo, hi) = limits.ip_local_port_range;
    vec![
        ("target", target),
        ("plan", plan),
        ("processes", cfg.processes.to_string()),
        ("sources", sources),
        (
            "connect rate",
            if !cfg.stages.is_empty() {
                "by the stages".into()
            } else if cfg.rate > 0.0 {
                format!("{}/s", group(cfg.rate as u64))
            } else {
                "as fast as possible".into()
            },
        ),
        (
            "concurrency",
            format!("{} attempts in flight", cfg.concurrency),
        ),
        ("timeout", seconds(cfg.timeout)),
        (
            "limits",
            format!(
                "nofile {} per process, ports {lo}-{hi}, somaxconn {}",
                limits.nofile_hard,
                limits
                    .somaxconn
                    .map(|v| v.to_string())
                    .unwrap_or("?".into())
            ),
        ),
    ]
}

/// The stages as the plan line says them: `10.000s to 500/s, 5.000s to 0/s`.
fn stages_text(stages: &crate::engine::Stages) -> String {
    let list: Vec<String> = stages
        .list()
        .iter()
        .map(|s| {
            format!(
                "{} to {}/s",
                seconds(s.over),
                group(s.target.round() as u64)
            )
        })
        .collect();
    list.join(", ")
}

/// A self-signed certificate and key for localhost/127.0.0.1 in a private temp
/// directory (removed on drop), and the certificate's PEM for the clients.
struct SelfSignedFiles {
    files: crate::net::tls::CertFiles,
    pem: String,
}

impl SelfSignedFiles {
    fn create() -> Result<Self> {
        let ck = crate::net::tls::generate_self_signed()?;
        let pem = ck.cert.pem();
        let files =
            crate::net::tls::CertFiles::write("connect", &pem, Some(&ck.key_pair.serialize_pem()))?;
        Ok(SelfSignedFiles { files, pem })
    }
}
