//! A server as several processes: the parent starts N workers (this binary, `serve
//! <protocol>`, role `serve`) that each bind SO_REUSEPORT listeners on the same
//! addresses, so the kernel spreads connections over all of them; each worker reports
//! its counters and its protocol's figures as JSON lines, and the parent adds them up
//! exactly (the figures with the protocol's own `Figures::merge`). Used by `serve
//! --processes` and by `connect`'s built-in server.

use super::counters::ServerTotals;
use super::session::ServerFactory;
use super::{start_many, ServerConfig};
use crate::error::{Error, Result};
use crate::net::listen;
use crate::procs::workers::{self, Msg, Workers};
use crate::stats::Figures;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Tells a worker where to listen (the parent settled the port and holds it until every
/// worker listens there).
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
    a.event_loop.add(&b.event_loop);
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

/// Sockets that keep a settled port ours until the servers listen on it: bound with
/// SO_REUSEPORT and never listening, so the servers join them and no connection
/// reaches them. Drop it once every server has bound its listeners.
pub struct PortHold {
    _sockets: Vec<socket2::Socket>,
}

/// Gives every address the same concrete port and holds it (`PortHold`) until the
/// servers listen. Port 0 picks one that is free on all of them; a given port is
/// probed on each, so "in use" is reported before anything starts. Letting the port
/// go before the servers bind would let anything else take it in between (another
/// bind to port 0, an outgoing connection's source port).
pub fn settle_port(addrs: &[SocketAddr]) -> Result<(Vec<SocketAddr>, PortHold)> {
    let first = *addrs
        .first()
        .ok_or_else(|| Error::usage("no address to listen on"))?;
    if first.port() != 0 {
        return hold_all(addrs, Vec::new()).map(|h| (addrs.to_vec(), h));
    }
    let mut last_err = None;
    for _ in 0..20 {
        let held = listen::hold_reuseport(first)?;
        let port = held
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .ok_or_else(|| Error::runtime("cannot read the listening address"))?
            .port();
        let all: Vec<SocketAddr> = addrs
            .iter()
            .map(|a| SocketAddr::new(a.ip(), port))
            .collect();
        match hold_all(&all[1..], vec![(all[0], held)]) {
            Ok(h) => return Ok((all, h)),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err.unwrap_or_else(|| Error::runtime("cannot find a free port")))
}

/// Probes and holds each address after those in `held`. An address our own hold
/// already covers (the same one, or a wildcard of its family) is not probed: the
/// plain probe would meet our hold, not someone else's socket.
fn hold_all(
    addrs: &[SocketAddr],
    mut held: Vec<(SocketAddr, socket2::Socket)>,
) -> Result<PortHold> {
    let covers = |h: &SocketAddr, a: &SocketAddr| {
        h.is_ipv4() == a.is_ipv4()
            && (h.ip() == a.ip() || h.ip().is_unspecified() || a.ip().is_unspecified())
    };
    for a in addrs {
        if !held.iter().any(|(h, _)| covers(h, a)) {
            listen::probe_free(*a)?;
        }
        held.push((*a, listen::hold_reuseport(*a)?));
    }
    Ok(PortHold {
        _sockets: held.into_iter().map(|(_, s)| s).collect(),
    })
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
        let (addrs, hold) = settle_port(addrs)?;
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
        // Every worker listens on the port now: it stays taken without the hold.
        drop(hold);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    fn bind_kind(a: SocketAddr) -> Option<std::io::ErrorKind> {
        TcpListener::bind(a).err().map(|e| e.kind())
    }

    #[test]
    fn a_settled_port_stays_ours_until_the_servers_listen() {
        let asked: Vec<SocketAddr> = vec![
            "127.0.0.1:0".parse().unwrap(),
            "127.0.0.2:0".parse().unwrap(),
        ];
        let (addrs, hold) = settle_port(&asked).unwrap();
        let port = addrs[0].port();
        assert_ne!(port, 0);
        assert_eq!(addrs[1], SocketAddr::new(asked[1].ip(), port));
        // Nothing else can take it while the workers start (a parallel test's server)...
        for a in &addrs {
            assert_eq!(bind_kind(*a), Some(std::io::ErrorKind::AddrInUse), "{a}");
        }
        // ...but the workers join it, and connections reach their listeners.
        let workers: Vec<_> = addrs
            .iter()
            .map(|a| listen::bind_reuseport_shared(*a, 2, 16).unwrap())
            .collect();
        for a in &addrs {
            TcpStream::connect(a).unwrap();
        }
        // Once they listen, the port stays taken without the hold.
        drop(hold);
        assert_eq!(bind_kind(addrs[0]), Some(std::io::ErrorKind::AddrInUse));
        drop(workers);
    }

    #[test]
    fn a_given_port_is_probed_on_every_address_and_held() {
        // Below the ephemeral range: no parallel test is handed this port on any address.
        let port = crate::net::free_port::free_port("127.0.0.1").unwrap();
        let on = |ip: &str| SocketAddr::new(ip.parse().unwrap(), port);
        let taken = TcpListener::bind(on("127.0.0.1")).unwrap();
        let e = settle_port(&[on("127.0.0.2"), on("127.0.0.1")])
            .err()
            .unwrap();
        assert!(e.to_string().contains("already in use"), "{e}");
        assert_eq!(
            bind_kind(on("127.0.0.2")),
            None,
            "nothing held after a refusal"
        );
        drop(taken);
        let (addrs, hold) = settle_port(&[on("127.0.0.1"), on("127.0.0.2")]).unwrap();
        assert_eq!(addrs, vec![on("127.0.0.1"), on("127.0.0.2")]);
        assert_eq!(
            bind_kind(on("127.0.0.2")),
            Some(std::io::ErrorKind::AddrInUse)
        );
        drop(hold);
    }

    #[test]
    fn a_wildcard_and_an_address_it_covers_settle_together() {
        let asked: Vec<SocketAddr> =
            vec!["0.0.0.0:0".parse().unwrap(), "127.0.0.1:0".parse().unwrap()];
        let (addrs, hold) = settle_port(&asked).unwrap();
        assert_eq!(addrs[0].port(), addrs[1].port());
        drop(hold);
    }
}
