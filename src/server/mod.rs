//! The shared server runtime: one thread per core, each with its own SO_REUSEPORT
//! listener and current-thread runtime; connection limits, TLS, counters and shutdown.
//! Protocols plug in a `Handler`.

pub mod conn;
pub mod counters;
pub mod handler;

use crate::error::{Error, Result};
use conn::{Closed, ThreadBuffers};
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
    if cfg.threads == 0 {
        return Err(Error::usage("--threads must be at least 1"));
    }
    crate::sys::raise_nofile_limit();
    let listeners = crate::net::listen::bind_reuseport(cfg.listen, cfg.threads, 4096)?;
    let addr = listeners[0]
        .local_addr()
        .map_err(|e| Error::runtime(format!("cannot read the listening address: {e}")))?;
    let factory = Arc::new(factory);
    let (tx, rx) = watch::channel(false);
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let mut threads = Vec::new();
    let mut counters = Vec::new();
    for (i, l) in listeners.into_iter().enumerate() {
        let c = Arc::new(ThreadCounters::default());
        counters.push(c.clone());
        let (cfg, factory, rx, tid_tx) = (cfg.clone(), factory.clone(), rx.clone(), tid_tx.clone());
        let t = std::thread::Builder::new()
            .name(format!("wb-serve-{i}"))
            .spawn(move || {
                let _ = tid_tx.send(crate::sys::gettid());
                drop(tid_tx);
                if let Err(e) = server_thread(l, cfg, factory, c, rx) {
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
    listener: std::net::TcpListener,
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
        let listener = TcpListener::from_std(listener)?;
        let bufs = Rc::new(RefCell::new(ThreadBuffers {
            read: vec![0; cfg.read_buffer.max(1)],
            out: Vec::new(),
        }));
        let tls = cfg.tls.clone().map(tokio_rustls::TlsAcceptor::from);
        loop {
            let accepted = tokio::select! {
                r = listener.accept() => r,
                _ = shutdown.changed() => break,
            };
            let (stream, peer) = match accepted {
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
            if cfg.debug {
                eprintln!("accept {peer}");
            }
            let handler = factory.handler();
            let (bufs, counters, tls) = (bufs.clone(), counters.clone(), tls.clone());
            let debug = cfg.debug;
            tokio::task::spawn_local(async move {
                // Counted on drop, so connections still open at shutdown count as closed.
                let _close = CountClose(counters.clone());
                let closed = serve_one(stream, tls, handler, &bufs, &counters).await;
                if debug {
                    eprintln!("close {peer}: {closed:?}");
                }
            });
        }
        Ok::<(), std::io::Error>(())
    })
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
) -> Closed {
    match tls {
        None => {
            let mut s = stream;
            conn::serve(&mut s, handler, bufs, counters).await
        }
        Some(acceptor) => {
            match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream)).await {
                Ok(Ok(mut s)) => conn::serve(&mut s, handler, bufs, counters).await,
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
