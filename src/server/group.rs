//! A server as several processes: the parent starts N workers (this binary, `serve
//! <protocol>`, role `serve`) that each bind SO_REUSEPORT listeners on the same
//! addresses, so the kernel spreads connections over all of them; each worker reports
//! its counters and its protocol's figures as JSON lines, and the parent adds them up
//! exactly (the figures with the protocol's own `Figures::merge`). Used by `serve
//! --processes` and by `connect`'s built-in server.

use super::counters::ServerTotals;
use super::session::{Figures, ServerFactory};
use super::{start_many, ServerConfig};
use crate::error::{Error, Result};
use crate::procs::workers::{self, Msg, Workers};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Tells a worker where to listen (the parent resolved port 0 and probed the port).
pub const LISTEN_ENV: &str = "WIREBENCH_LISTEN";

/// How often a worker reports its counters.
const REPORT_EVERY: Duration = Duration::from_millis(100);

#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum ServerMsg {
    Ready {
        pid: u32,
    },
    /// The runtime's counters and the protocol's figures (`f`, its `Figures` as JSON;
    /// null for protocols without any), so far.
    Totals {
        t: ServerTotals,
        #[serde(default)]
        f: serde_json::Value,
    },
    /// The same, final.
    Final {
        t: ServerTotals,
        #[serde(default)]
        f: serde_json::Value,
    },
}

pub fn add(a: &mut ServerTotals, b: &ServerTotals) {
    a.accepts += b.accepts;
    a.closes += b.closes;
    a.active += b.active;
    a.reads += b.reads;
    a.bytes_in += b.bytes_in;
    a.bytes_out += b.bytes_out;
    a.rejected += b.rejected;
    a.tls_failures += b.tls_failures;
    a.requests += b.requests;
    a.header_timeouts += b.header_timeouts;
    a.idle_timeouts += b.idle_timeouts;
    a.held_full += b.held_full;
    a.too_large += b.too_large;
}

/// In a worker: the addresses the parent chose, if it did.
pub fn listen_override() -> Result<Option<Vec<SocketAddr>>> {
    let Ok(text) = std::env::var(LISTEN_ENV) else {
        return Ok(None);
    };
    text.split(',')
        .map(|a| {
            a.parse::<SocketAddr>()
                .map_err(|_| Error::runtime(format!("{LISTEN_ENV} holds a bad address '{a}'")))
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// In a worker: serve until the parent says stop (a line "stop", end of stdin, or
/// SIGTERM), reporting counters every 100 ms and once more at the end.
pub fn run_worker<F: ServerFactory>(
    cfg: ServerConfig,
    addrs: &[SocketAddr],
    factory: F,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    let handle = start_many(cfg, addrs, false, factory)?;
    workers::emit(&ServerMsg::Ready {
        pid: std::process::id(),
    });
    let (s1, s2) = (stop.clone(), stop.clone());
    workers::read_commands(
        move |line| {
            if line == "stop" {
                s1.store(true, Ordering::Relaxed);
            }
        },
        move || s2.store(true, Ordering::Relaxed),
    );
    let mut next = Instant::now() + REPORT_EVERY;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(10));
        if Instant::now() >= next {
            workers::emit(&ServerMsg::Totals {
                t: handle.totals(),
                f: handle.figures_json(),
            });
            next += REPORT_EVERY;
        }
    }
    let (t, f) = handle.shutdown_with_figures();
    workers::emit(&ServerMsg::Final { t, f });
    Ok(())
}

/// Gives every address the same concrete port: port 0 picks one that is free on all of
/// them; a given port is probed on each, so "in use" is reported before anything starts.
pub fn settle_port(addrs: &[SocketAddr]) -> Result<Vec<SocketAddr>> {
    let with =
        |p: u16| -> Vec<SocketAddr> { addrs.iter().map(|a| SocketAddr::new(a.ip(), p)).collect() };
    let first = *addrs
        .first()
        .ok_or_else(|| Error::usage("no address to listen on"))?;
    if first.port() != 0 {
        for a in addrs {
            crate::net::listen::probe_free(*a)?;
        }
        return Ok(addrs.to_vec());
    }
    let mut last_err = None;
    for _ in 0..20 {
        let l = std::net::TcpListener::bind(first)
            .map_err(|e| Error::usage(format!("cannot listen on {first}: {e}")))?;
        let port = l
            .local_addr()
            .map_err(|e| Error::runtime(format!("cannot read the listening address: {e}")))?
            .port();
        drop(l);
        let all = with(port);
        match all
            .iter()
            .try_for_each(|a| crate::net::listen::probe_free(*a))
        {
            Ok(()) => return Ok(all),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err.unwrap_or_else(|| Error::runtime("cannot find a free port")))
}

/// The parent's view of a multi-process server.
pub struct ServerGroup {
    workers: Workers,
    pub addrs: Vec<SocketAddr>,
    latest: Vec<ServerTotals>,
    /// Each worker's latest protocol figures, as it sent them (merged when asked, by
    /// the protocol's type).
    figures: Vec<serde_json::Value>,
    finals: Vec<Option<ServerTotals>>,
    gone: Vec<bool>,
}

impl ServerGroup {
    /// Starts `processes` workers with these arguments (`serve <protocol>`) and this
    /// extra environment (their serialized plan) on `addrs` (port settled first) and
    /// waits until every one listens, or `stop` is set (Ctrl-C): then every worker
    /// started so far is killed by its PID (on drop).
    pub fn start(
        args: &[String],
        env: &[(String, String)],
        addrs: &[SocketAddr],
        processes: usize,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<ServerGroup> {
        let addrs = settle_port(addrs)?;
        let listen = addrs
            .iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let workers = workers::spawn(
            "serve",
            processes,
            |_| args.to_vec(),
            |_| {
                let mut e = env.to_vec();
                e.push((LISTEN_ENV.to_string(), listen.clone()));
                e
            },
        )?;
        let mut g = ServerGroup {
            latest: vec![ServerTotals::default(); processes],
            figures: vec![serde_json::Value::Null; processes],
            finals: vec![None; processes],
            gone: vec![false; processes],
            workers,
            addrs,
        };
        let mut ready = vec![false; processes];
        let end = Instant::now() + Duration::from_secs(30);
        while ready.iter().any(|r| !r) {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::runtime(
                    "the server's worker processes did not all start within 30 s",
                ));
            }
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(Error::runtime(
                    "interrupted while the server's worker processes were starting; all were stopped",
                ));
            }
            match g.workers.recv(left.min(Duration::from_millis(200))) {
                Some(Msg::Line(i, l)) => {
                    if let Ok(ServerMsg::Ready { .. }) = serde_json::from_str(&l) {
                        ready[i] = true;
                    } else {
                        g.take(i, &l);
                    }
                }
                Some(Msg::Gone(i)) => {
                    return Err(Error::runtime(format!(
                        "server worker process {i} exited while starting (see its message above)"
                    )))
                }
                None => {}
            }
        }
        Ok(g)
    }

    fn take(&mut self, i: usize, line: &str) {
        match serde_json::from_str::<ServerMsg>(line) {
            Ok(ServerMsg::Totals { t, f }) => {
                self.latest[i] = t;
                self.figures[i] = f;
            }
            Ok(ServerMsg::Final { t, f }) => {
                self.latest[i] = t;
                self.figures[i] = f;
                self.finals[i] = Some(t);
            }
            _ => {}
        }
    }

    pub fn pids(&self) -> Vec<u32> {
        self.workers.pids()
    }

    pub fn processes(&self) -> usize {
        self.workers.len()
    }

    /// Workers that have exited so far.
    pub fn gone(&self) -> usize {
        self.gone.iter().filter(|g| **g).count()
    }

    /// Takes in what the workers reported, waiting at most `wait` for the first line.
    pub fn poll(&mut self, wait: Duration) {
        let mut wait = wait;
        while let Some(m) = self.workers.recv(wait) {
            match m {
                Msg::Line(i, l) => self.take(i, &l),
                Msg::Gone(i) => self.gone[i] = true,
            }
            wait = Duration::ZERO;
        }
    }

    /// The sum of the latest counters of every worker.
    pub fn totals(&self) -> ServerTotals {
        let mut t = ServerTotals::default();
        for w in &self.latest {
            add(&mut t, w);
        }
        t
    }

    /// The sum of the latest protocol figures of every worker, merged exactly by the
    /// protocol's `Figures` (`G`); a worker's figures that do not read as `G` (none
    /// reported yet) count as zero.
    pub fn figures<G: Figures>(&self) -> G {
        let mut sum = G::default();
        for f in &self.figures {
            if !f.is_null() {
                if let Ok(g) = serde_json::from_value::<G>(f.clone()) {
                    sum.merge(&g);
                }
            }
        }
        sum
    }

    /// Polls until `f(totals)` holds or `limit` passes; returns whether it held.
    pub fn wait_for(&mut self, limit: Duration, f: impl Fn(&ServerTotals) -> bool) -> bool {
        let end = Instant::now() + limit;
        loop {
            if f(&self.totals()) {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            self.poll(Duration::from_millis(20));
        }
    }

    /// Stops every worker and returns the final counters (the latest ones of a worker
    /// that died without a final report).
    pub fn stop(self) -> ServerTotals {
        self.stop_with_figures::<()>().0
    }

    /// `stop`, also returning the protocol figures merged over every worker.
    pub fn stop_with_figures<G: Figures>(mut self) -> (ServerTotals, G) {
        self.workers.close_stdin();
        let end = Instant::now() + Duration::from_secs(20);
        while self.gone.iter().any(|g| !g) && Instant::now() < end {
            self.poll(Duration::from_millis(50));
        }
        self.workers.reap(Duration::from_secs(30));
        (self.totals(), self.figures())
    }
}
