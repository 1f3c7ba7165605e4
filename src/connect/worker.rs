//! One `connect` worker process: its share of the run on the load engine (one engine
//! worker thread), with the parent's lines around it: `go`, `ping` and `stop` on
//! stdin; ready, progress, connected and final as JSON lines on stdout.
//!
//! Holding is `Plan::Hold` (the slots connect and stay, tallying what they lose), at
//! most `concurrency` attempts in flight and `rate` new ones a second
//! (`engine::Attempts`), no retry: a failed attempt or a lost connection is counted,
//! not replaced. Pings are the echo session's requests with a 16-byte payload, in
//! open loop at one per connection per interval, released by the parent's `ping`.
//! Churn is one echo per connection (`per_connection = 1`) on `concurrency` slots.

use super::messages::{Counts, TlsSpec, WorkerMsg, WorkerSpec, CMD_GO, CMD_PING};
use super::worker_steps::{engine_interval, StepRows};
use crate::engine::connector::{ClientTls, Connector, Spread};
use crate::engine::session::OffsetIds;
use crate::engine::{self, Attempts, LoadShape, LoadSpec, Observer, Plan};
use crate::error::{Error, Result};
use crate::net::socket::errno_name;
use crate::net::tls::Trust;
use crate::procs::group::STOP;
use crate::procs::workers::{emit, read_commands};
use crate::proto::echo::client::EchoFactory;
use crate::stats::{ConnTally, Counters, ErrorKind, IntervalRow, Latency};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// Payload bytes of a ping or churn echo frame (28-byte header besides).
pub const PING_PAYLOAD: usize = 16;

/// The whole life of a worker: ready, wait for go, connect (and hold, or churn), report.
pub fn run(spec: WorkerSpec) -> Result<()> {
    if spec.dests.is_empty() {
        return Err(Error::runtime("a connect worker got no destination"));
    }
    let tls = spec
        .tls
        .as_ref()
        .map(|t| client_tls(t, &spec.server_name))
        .transpose()?;
    let stop = Arc::new(AtomicBool::new(false));
    let release = Arc::new(AtomicBool::new(false));
    let cpu_at_stop = Arc::new(AtomicU64::new(0));
    let go = listen(
        stop.clone(),
        release.clone(),
        cpu_at_stop.clone(),
        spec.ping_interval_ms.is_some(),
    )?;
    emit(&WorkerMsg::Ready);
    // The parent's `go` (or `stop`, or its end: the sender is gone).
    let _ = go.recv();
    if stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    let load = load_spec(&spec, tls, stop.clone(), release);
    let factory = OffsetIds {
        inner: EchoFactory::new(PING_PAYLOAD, PING_PAYLOAD),
        base: spec.id_base | ((spec.index as u64) << 32),
    };
    let mut told = Reporter {
        churn: spec.churn,
        connected: false,
        steps: StepRows::new(step(&spec)),
    };
    let out = engine::run(load, factory, &mut told)
        .map_err(|e| Error::runtime(format!("a connect worker failed: {e}")))?;
    if let Some((step, row)) = told.steps.take() {
        emit(&WorkerMsg::Interval { step, row });
    }
    let (c, ramp) = phases(&out, spec.churn, spec.ramp.is_some_and(|r| !r.measured));
    if !told.connected {
        emit(&WorkerMsg::Connected {
            c: c.clone(),
            ramp: ramp.clone(),
        });
    }
    // Hold: the connections are the parent's until it says stop, even if every one
    // of them failed already.
    if !spec.churn {
        while !stop.load(Ordering::Relaxed) && go.recv().is_ok() {}
    }
    let rss = crate::sys::proc_fs::rss_bytes(std::process::id()).unwrap_or(0);
    emit(&WorkerMsg::Final {
        c,
        ramp,
        measured_s: out.elapsed.as_secs_f64(),
        connect_hist: out.handshake.encode(),
        echo_hist: out.latency.encode(),
        cpu_s: cpu_s(&cpu_at_stop),
        rss_bytes: rss,
        peak_rss_bytes: crate::sys::proc_fs::own_peak_rss_bytes(),
        event_loop: out.event_loop,
        stages: out.stages,
    });
    Ok(())
}

/// The run's counts: the measured phase's, and apart from them the ramp's when it was
/// left out of the figures (the engine's warm-up: `LoadSpec::measure_start`). Each
/// phase's counts are the engine's of that phase, so the two add up to the whole run;
/// only `open` (a reading of the moment, not of a phase) is the whole run's, in the
/// measured counts.
fn phases<X>(
    out: &engine::EngineOutput<X>,
    churn: bool,
    ramp_excluded: bool,
) -> (Counts, Option<Counts>) {
    let mut c = counts(&out.measured, &out.conns, churn);
    if !ramp_excluded {
        return (c, None);
    }
    let mut ramp = counts(&out.warmup, &out.warmup_conns, churn);
    let (mut all, mut all_conns) = (out.measured, out.conns);
    all.add(&out.warmup);
    all_conns.add(&out.warmup_conns);
    c.open = counts(&all, &all_conns, churn).open;
    ramp.open = 0;
    (c, Some(ramp))
}

fn client_tls(spec: &TlsSpec, server_name: &str) -> Result<ClientTls> {
    let trust = match spec {
        TlsSpec::Insecure => Trust::Insecure,
        TlsSpec::CaFile(p) => Trust::CaFile(p.into()),
        TlsSpec::CaPem(p) => Trust::CaPem(p.clone()),
        TlsSpec::System => Trust::System,
    };
    ClientTls::new(&trust, server_name)
}

/// The worker's CPU time up to the parent's `stop` (what the plan asked for: coming
/// up, holding, pinging, churning), not the teardown of its connections after it.
fn cpu_s(at_stop: &AtomicU64) -> f64 {
    match at_stop.load(Ordering::Relaxed) {
        0 => crate::sys::process_cpu_time().as_secs_f64(),
        ns => ns as f64 / 1e9,
    }
}

/// Reads the parent's lines on a thread of its own (`procs::workers::read_commands`):
/// `ping` and `stop` set their flags (the engine looks at them every 50 ms at most),
/// and `go`, `stop` and the end of stdin are also sent on the returned channel for
/// whoever waits on them.
fn listen(
    stop: Arc<AtomicBool>,
    release: Arc<AtomicBool>,
    cpu_at_stop: Arc<AtomicU64>,
    pings: bool,
) -> Result<mpsc::Receiver<()>> {
    let (tx, rx) = mpsc::channel();
    let stopped = stop.clone();
    read_commands(
        move |line| {
            match line {
                CMD_GO => {}
                CMD_PING if pings => {
                    release.store(true, Ordering::Relaxed);
                    return;
                }
                STOP => {
                    let cpu = crate::sys::process_cpu_time().as_nanos() as u64;
                    cpu_at_stop.store(cpu.max(1), Ordering::Relaxed);
                    stop.store(true, Ordering::Relaxed);
                }
                _ => return,
            }
            let _ = tx.send(());
        },
        // The parent closed our stdin, or is gone: stop (and the channel's sender
        // goes with the reading thread, so a wait on it ends).
        move || stopped.store(true, Ordering::Relaxed),
    )?;
    Ok(rx)
}

/// This worker's share as the engine's load.
fn load_spec(
    spec: &WorkerSpec,
    tls: Option<ClientTls>,
    stop: Arc<AtomicBool>,
    release: Arc<AtomicBool>,
) -> LoadSpec {
    let timeout = Duration::from_millis(spec.timeout_ms);
    let (connections, plan) = match (spec.churn, spec.duration_ms) {
        (true, Some(d)) => (
            spec.concurrency.max(1),
            Plan::Duration(Duration::from_millis(d)),
        ),
        (true, None) => (spec.concurrency.max(1), Plan::Count(spec.count)),
        (false, _) => (spec.count as usize, Plan::Hold),
    };
    // Pings: each held connection once per interval, the connections spread over it.
    let rate = match (spec.churn, spec.ping_interval_ms) {
        (false, Some(ms)) if spec.count > 0 => Some(spec.count as f64 * 1000.0 / ms.max(1) as f64),
        _ => None,
    };
    LoadSpec {
        connector: Connector::new(
            spec.dests[0],
            tls,
            true,
            timeout,
            Spread {
                targets: spec.dests.clone(),
                sources: spec.sources.clone(),
                first: spec.first,
            },
        ),
        shape: LoadShape {
            threads: 1,
            connections,
            pipeline: 1,
            refill: Default::default(),
            plan,
            rate,
            stages: Default::default(),
            warmup: Duration::ZERO,
            // As the plan made it: a hold counts its ramp (the measured phase starts at
            // once); a churn ramp without --ramp-measured is the engine's warm-up, its
            // counts kept apart (`phases`).
            ramp: spec.ramp,
            timeout,
            // A ping's 16 bytes: the default is never near.
            memory_budget: crate::engine::DEFAULT_MEMORY_BUDGET,
            // What connect measures is handshakes, read as they come.
            coalesce: false,
        },
        // Progress every engine interval; the series' steps are sums of its rows.
        interval: engine_interval(step(spec)),
        keep_interval_histograms: false,
        interval_handshakes: true,
        stop,
        per_connection: spec.churn.then_some(1),
        attempts: Attempts {
            max_connecting: (!spec.churn).then_some(spec.concurrency.max(1)),
            per_s: (spec.rate > 0.0).then_some(spec.rate),
            // Held connections are counted, not replaced; a churn slot goes on.
            retry: spec.churn,
            // Churn stages: cycle m of the whole run starts when their curve asks for
            // m, this process taking every `processes`-th.
            stages: crate::engine::Stages::new(&spec.stages),
            place: (spec.index as u64, spec.processes.max(1) as u64),
        },
        release: rate.map(|_| release),
    }
}

/// The length of one step of the series (`--interval`).
fn step(spec: &WorkerSpec) -> Duration {
    Duration::from_millis(spec.step_ms.max(1))
}

/// Tells the parent the counts as they come: progress every engine interval, (hold)
/// `connected` once every connection of the share has come up or failed, and each
/// step of the series once it is over.
struct Reporter {
    churn: bool,
    connected: bool,
    steps: StepRows,
}

impl Reporter {
    fn row(&mut self, row: &IntervalRow, latency: &Latency) {
        if let Some((step, row)) = self.steps.add(row, latency) {
            emit(&WorkerMsg::Interval { step, row });
        }
    }
}

impl Observer for Reporter {
    fn on_interval(&mut self, row: &IntervalRow, latency: &Latency) {
        self.row(row, latency);
    }

    fn on_drain(&mut self, row: &IntervalRow, latency: &Latency) {
        self.row(row, latency);
    }

    fn on_connections(&mut self, counters: &Counters, conns: &ConnTally, all_up: bool) {
        let c = counts(counters, conns, self.churn);
        if all_up && !self.churn && !self.connected {
            self.connected = true;
            emit(&WorkerMsg::Connected { c, ramp: None });
        } else {
            emit(&WorkerMsg::Progress { c });
        }
    }
}

/// The engine's counts in the words of connect's report: failures by errno (TLS as
/// `TLS`), held connections lost by kind, echo errors by kind.
pub fn counts(c: &Counters, conns: &ConnTally, churn: bool) -> Counts {
    let mut failures: BTreeMap<String, u64> = BTreeMap::new();
    for (errno, n) in conns.failures() {
        *failures.entry(errno_name(errno)).or_default() += n;
    }
    let tls = c.errors_of(ErrorKind::Tls);
    if tls > 0 {
        failures.insert("TLS".into(), tls);
    }
    let lost: BTreeMap<String, u64> = conns.losses().map(|(k, n)| (k.name().into(), n)).collect();
    let errors: BTreeMap<String, u64> = c
        .error_list()
        .into_iter()
        .filter(|(k, _)| !k.is_connect())
        .map(|(k, n)| (k.name().into(), n))
        .collect();
    let failed = [
        ErrorKind::ConnectRefused,
        ErrorKind::ConnectTimeout,
        ErrorKind::ConnectFailed,
        ErrorKind::Tls,
    ]
    .iter()
    .map(|k| c.errors_of(*k))
    .sum::<u64>();
    let lost_total: u64 = lost.values().sum();
    let settled = c.ok + errors.values().sum::<u64>();
    Counts {
        attempts: c.connections + failed,
        established: c.connections,
        failures,
        lost,
        // Churn closes each connection after its echo.
        open: match churn {
            true => c.connections.saturating_sub(settled),
            false => c.connections.saturating_sub(lost_total),
        },
        sent: c.sent,
        ok: c.ok,
        errors,
        in_flight: c.in_flight,
        cycles_ok: if churn { c.ok } else { 0 },
        bytes_sent: c.bytes_sent,
        bytes_received: c.bytes_received,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_counts_read_as_connect_counts() {
        let mut c = Counters {
            connections: 7,
            sent: 5,
            ok: 3,
            in_flight: 1,
            ..Default::default()
        };
        c.error(ErrorKind::ConnectRefused, 2);
        c.error(ErrorKind::Tls, 1);
        c.error(ErrorKind::Timeout, 1);
        let mut t = ConnTally::default();
        t.failed(libc::ECONNREFUSED);
        t.failed(libc::ECONNREFUSED);
        t.lost(ErrorKind::Closed);
        let k = counts(&c, &t, false);
        assert_eq!(k.attempts, 10);
        assert_eq!(k.established, 7);
        assert_eq!(k.failed(), 3);
        assert_eq!(k.failures["ECONNREFUSED"], 2);
        assert_eq!(k.failures["TLS"], 1);
        assert_eq!(k.lost["closed"], 1);
        assert_eq!(k.open, 6);
        assert_eq!(k.errors["timeout"], 1);
        assert!(k.invariant_holds());
    }
}
