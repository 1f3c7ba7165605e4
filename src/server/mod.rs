//! The shared server runtime: one thread per core, each with its own SO_REUSEPORT
//! listener and current-thread runtime; connection limits, TLS, counters and shutdown.
//! Protocols plug in a `Handler`.

pub mod conn;
pub mod counters;
pub mod group;
pub mod handler;
pub mod pacing;
pub mod session;
pub mod timeouts;

use crate::error::{Error, Result};
use conn::{Closed, ThreadBuffers, Timing};
use counters::{bump, ServerTotals, ThreadCounters};
use handler::HandlerFactory;
use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::LocalSet;

#[derive(Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    pub threads: usize,
    /// 0: no limit.
    pub max_conns_per_thread: usize,
    pub read_buffer: usize,
    pub tls: Option<Arc<rustls::ServerConfig>>,
    pub nodelay: bool,
    /// Print one line per connection event on stderr.
    pub debug: bool,
    /// --header-timeout and --idle-timeout.
    pub timeouts: timeouts::Timeouts,
    /// --delay and --stall (the stall schedule counts from `start`).
    pub pacing: pacing::Pacing,
}

/// A running server. Dropping it without `shutdown` leaves the threads running.
pub struct ServerHandle {
    pub addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    counters: Vec<Arc<ThreadCounters>>,
    tids: Vec<i32>,
}

impl ServerHandle {
    pub fn totals(&self) -> ServerTotals {
        ServerTotals::sum(&self.counters)
    }

    /// Reads the server threads' CPU time, also from another thread or closure.
    pub fn cpu_probe(&self) -> CpuProbe {
        CpuProbe {
            tids: self.tids.clone(),
        }
    }

    /// Stops accepting, closes every connection, joins the threads; returns the final counts.
    pub fn shutdown(self) -> ServerTotals {
        let _ = self.shutdown.send(true);
        for t in self.threads {
            let _ = t.join();
        }
        ServerTotals::sum(&self.counters)
    }
}

/// The kernel thread ids of a server's threads, to read their CPU time from /proc.
#[derive(Clone, Debug)]
pub struct CpuProbe {
    tids: Vec<i32>,
}

impl CpuProbe {
    /// CPU time (user+system) the server threads have used so far.
    pub fn cpu_time(&self) -> Duration {
        self.tids
            .iter()
            .filter_map(|t| crate::sys::task_cpu_time(*t))
            .sum()
    }
}

/// Binds the listeners (errors come back here, before anything runs) and starts the threads.
pub fn start<F: HandlerFactory>(cfg: ServerConfig, factory: F) -> Result<ServerHandle> {
    let addrs = [cfg.listen];
    start_many(cfg, &addrs, true, factory)
}

/// Like `start`, listening on every address in `addrs` (each thread accepts on all of
/// them). `probe`: first check with a plain bind that each port is free; worker
/// processes that share their siblings' SO_REUSEPORT listeners skip it.
pub fn start_many<F: HandlerFactory>(
    mut cfg: ServerConfig,
    addrs: &[SocketAddr],
    probe: bool,
    factory: F,
) -> Result<ServerHandle> {
    if cfg.threads == 0 {
        return Err(Error::usage("--threads must be at least 1"));
    }
    if addrs.is_empty() {
        return Err(Error::usage("no address to listen on"));
    }
    crate::sys::raise_nofile_limit();
    cfg.pacing.epoch = std::time::Instant::now();
    // per_thread[t] holds thread t's listener on each address.
    let mut per_thread: Vec<Vec<std::net::TcpListener>> =
        (0..cfg.threads).map(|_| Vec::new()).collect();
    let mut first = None;
    for a in addrs {
        let ls = if probe && a.port() != 0 {
            crate::net::listen::bind_reuseport(*a, cfg.threads, 4096)?
        } else {
            crate::net::listen::bind_reuseport_shared(*a, cfg.threads, 4096)?
        };
        for (t, l) in ls.into_iter().enumerate() {
            if first.is_none() {
                first = Some(l.local_addr().map_err(|e| {
                    Error::runtime(format!("cannot read the listening address: {e}"))
                })?);
            }
            per_thread[t].push(l);
        }
    }
    let addr = first.ok_or_else(|| Error::usage("no address to listen on"))?;
    let factory = Arc::new(factory);
    let (tx, rx) = watch::channel(false);
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let mut threads = Vec::new();
    let mut counters = Vec::new();
    for (i, ls) in per_thread.into_iter().enumerate() {
        let c = Arc::new(ThreadCounters::default());
        counters.push(c.clone());
        let (cfg, factory, rx, tid_tx) = (cfg.clone(), factory.clone(), rx.clone(), tid_tx.clone());
        let t = std::thread::Builder::new()
            .name(format!("wb-serve-{i}"))
            .spawn(move || {
                let _ = tid_tx.send(crate::sys::gettid());
                drop(tid_tx);
                if let Err(e) = server_thread(ls, cfg, factory, c, rx) {
                    eprintln!("wirebench: server thread {i} stopped: {e}");
                }
            })
            .map_err(|e| Error::runtime(format!("cannot start a server thread: {e}")))?;
        threads.push(t);
    }
    drop(tid_tx);
    let tids = (0..threads.len())
        .filter_map(|_| tid_rx.recv().ok())
        .collect();
    Ok(ServerHandle {
        addr,
        shutdown: tx,
        threads,
        counters,
        tids,
    })
}

fn server_thread<F: HandlerFactory>(
    listeners: Vec<std::net::TcpListener>,
    cfg: ServerConfig,
    factory: Arc<F>,
    counters: Arc<ThreadCounters>,
    mut shutdown: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = LocalSet::new();
    local.block_on(&rt, async move {
        let bufs = Rc::new(RefCell::new(ThreadBuffers {
            read: vec![0; cfg.read_buffer.max(1)],
            out: Vec::new(),
        }));
        let tls = cfg.tls.clone().map(tokio_rustls::TlsAcceptor::from);
        let clock = cfg.timeouts.any().then(|| {
            let clock = Rc::new(timeouts::CoarseClock::new(cfg.timeouts.tick()));
            tokio::task::spawn_local(clock.clone().run());
            clock
        });
        let timing = Rc::new(Timing {
            timeouts: cfg.timeouts,
            clock,
            pacing: cfg.pacing,
        });
        let cfg = Rc::new(cfg);
        for l in listeners {
            let listener = TcpListener::from_std(l)?;
            tokio::task::spawn_local(accept_loop(
                listener,
                cfg.clone(),
                factory.clone(),
                counters.clone(),
                bufs.clone(),
                tls.clone(),
                timing.clone(),
            ));
        }
        // Returning drops the LocalSet: every connection task ends (and counts its close).
        let _ = shutdown.changed().await;
        Ok::<(), std::io::Error>(())
    })
}

async fn accept_loop<F: HandlerFactory>(
    listener: TcpListener,
    cfg: Rc<ServerConfig>,
    factory: Arc<F>,
    counters: Arc<ThreadCounters>,
    bufs: Rc<RefCell<ThreadBuffers>>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    timing: Rc<Timing>,
) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                // EMFILE and friends: back off briefly instead of spinning on accept.
                if cfg.debug {
                    eprintln!("accept failed: {e}");
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        bump(&counters.accepts, 1);
        let active = counters.accepts.load(Relaxed) - counters.closes.load(Relaxed);
        if cfg.max_conns_per_thread > 0 && active as usize > cfg.max_conns_per_thread {
            bump(&counters.rejected, 1);
            bump(&counters.closes, 1);
            if cfg.debug {
                eprintln!(
                    "reject {peer}: thread at --max-conns-per-thread {}",
                    cfg.max_conns_per_thread
                );
            }
            drop(stream);
            continue;
        }
        if cfg.nodelay {
            let _ = stream.set_nodelay(true);
        }
        let handler = factory.handler();
        let (bufs, counters, timing) = (bufs.clone(), counters.clone(), timing.clone());
        // The task of an idle connection is most of its user-space cost: keep its
        // future small (the peer address only when --debug prints it; TLS boxed).
        if cfg.debug {
            eprintln!("accept {peer}");
            let tls = tls.clone();
            tokio::task::spawn_local(async move {
                let _close = CountClose(counters.clone());
                let closed = serve_one(stream, tls, handler, &bufs, &counters, &timing).await;
                eprintln!("close {peer}: {closed:?}");
            });
        } else if let Some(acceptor) = tls.clone() {
            tokio::task::spawn_local(async move {
                let _close = CountClose(counters.clone());
                serve_one(stream, Some(acceptor), handler, &bufs, &counters, &timing).await;
            });
        } else {
            let fut = async move {
                let _close = CountClose(counters.clone());
                let mut s = stream;
                conn::serve(&mut s, handler, &bufs, &counters, &timing).await;
            };
            tokio::task::spawn_local(fut);
        }
    }
}

/// Bumps the thread's close counter when a connection task ends or is dropped.
struct CountClose(Arc<ThreadCounters>);

impl Drop for CountClose {
    fn drop(&mut self) {
        bump(&self.0.closes, 1);
    }
}

async fn serve_one<H: handler::Handler>(
    stream: TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
    handler: H,
    bufs: &RefCell<ThreadBuffers>,
    counters: &ThreadCounters,
    timing: &Timing,
) -> Closed {
    match tls {
        None => {
            let mut s = stream;
            conn::serve(&mut s, handler, bufs, counters, timing).await
        }
        Some(acceptor) => {
            match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream)).await {
                Ok(Ok(mut s)) => conn::serve(&mut s, handler, bufs, counters, timing).await,
                Ok(Err(e)) => {
                    bump(&counters.tls_failures, 1);
                    Closed::Error(e.kind())
                }
                Err(_) => {
                    bump(&counters.tls_failures, 1);
                    Closed::Error(std::io::ErrorKind::TimedOut)
                }
            }
        }
    }
}
