//! The shared server runtime: one thread per core, each with its own SO_REUSEPORT
//! listeners and one loop (io_uring, `uring.rs`, for plain TCP; epoll, `epoll.rs`,
//! otherwise: `Machinery`) under one connection driver (`thread.rs`, `driver.rs`,
//! `conn.rs`) of sans-IO server sessions (`session.rs`); connection limits, TLS,
//! timeouts, pacing, counters and shutdown.

mod config;
pub mod conn;
pub mod counters;
pub mod driver;
pub mod epoll;
pub mod group;
pub mod held;
pub mod pacing;
pub mod session;
pub mod thread;
pub mod timeouts;
pub mod uring;
#[cfg(test)]
mod wake_tests;

use crate::error::{Error, Result};
use crate::stats::EventLoop;
use crate::stats::Figures;
pub use config::ServerConfig;
use counters::{ServerTotals, ThreadCounters};
use session::ServerFactory;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use thread::Figs;

/// The protocol figures of every thread, merged on demand (as JSON, so the handle
/// needs no type parameter; `ServerHandle::figures` gives them back typed).
type FiguresReader = Arc<dyn Fn() -> serde_json::Value + Send + Sync>;

/// A running server. Dropping it without `shutdown` leaves the threads running.
pub struct ServerHandle {
    /// The TCP address listened on (the first, with several); unspecified (0.0.0.0:0)
    /// for a server on a unix socket, whose path is `unix`.
    pub addr: SocketAddr,
    /// The unix socket listened on (`start_unix`).
    pub unix: Option<std::path::PathBuf>,
    /// One eventfd per thread: written to stop it.
    stop_fds: Vec<i32>,
    threads: Vec<std::thread::JoinHandle<()>>,
    counters: Vec<Arc<ThreadCounters>>,
    figures: FiguresReader,
    tids: Vec<i32>,
}

impl ServerHandle {
    pub fn totals(&self) -> ServerTotals {
        ServerTotals::sum(&self.counters)
    }

    /// The protocol's own figures (merged over threads) as JSON, as published by the
    /// threads at most 50 ms ago (exact after `shutdown`).
    pub fn figures_json(&self) -> serde_json::Value {
        (self.figures)()
    }

    /// The protocol's own figures, typed (`G` is its session's `Figures`).
    pub fn figures<G: Figures>(&self) -> G {
        serde_json::from_value(self.figures_json()).unwrap_or_default()
    }

    /// A reader of the figures that outlives borrows of the handle (a stats closure).
    pub fn figures_reader(&self) -> impl Fn() -> serde_json::Value + Send + Sync + 'static {
        let f = self.figures.clone();
        move || f()
    }

    /// Reads the server threads' CPU time, also from another thread or closure.
    pub fn cpu_probe(&self) -> CpuProbe {
        CpuProbe {
            tids: self.tids.clone(),
        }
    }

    /// Stops accepting, closes every connection, joins the threads; returns the final
    /// counts (`shutdown_with_figures` also returns the protocol's figures).
    pub fn shutdown(self) -> ServerTotals {
        self.shutdown_with_figures().0
    }

    /// `shutdown`, also returning the protocol figures, final and exact.
    pub fn shutdown_with_figures(self) -> (ServerTotals, serde_json::Value) {
        for fd in &self.stop_fds {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a valid u64 to an eventfd this handle owns.
            unsafe { libc::write(*fd, &one as *const u64 as *const libc::c_void, 8) };
        }
        for t in self.threads {
            let _ = t.join();
        }
        for fd in &self.stop_fds {
            crate::net::socket::close(*fd);
        }
        (ServerTotals::sum(&self.counters), (self.figures)())
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

/// What a server thread's loop runs on (ARCHITECTURE.md#which-loop-runs): chosen by
/// measurement, BENCHMARKS.md#design-choices-and-the-measurements-behind-them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Machinery {
    /// The epoll loop (`epoll.rs`): for TLS, --delay/--stall, --debug, a
    /// kernel or policy without what the io_uring loop needs, and
    /// `WIREBENCH_SERVER_LOOP=epoll`.
    Epoll,
    /// io_uring (`uring.rs`), the default for plain TCP; `fixed`: connections are
    /// direct descriptors in the ring's table (`WIREBENCH_SERVER_LOOP=uring-fixed`).
    Uring { fixed: bool },
}

impl Machinery {
    /// io_uring when the server can run on it (plain TCP, no --delay/--stall, no
    /// --debug, a kernel that has it) unless `WIREBENCH_SERVER_LOOP=epoll` asks for
    /// the epoll loop. io_uring measured 1.06x epoll's requests per server CPU-second
    /// for serve http and no worse for serve echo
    /// (BENCHMARKS.md#design-choices-and-the-measurements-behind-them). A thread whose
    /// ring is refused still runs on epoll.
    pub fn for_config(cfg: &ServerConfig) -> Machinery {
        let asked = std::env::var("WIREBENCH_SERVER_LOOP").unwrap_or_default();
        if asked == "epoll"
            || cfg.tls.is_some()
            || cfg.pacing.active()
            || cfg.debug
            // A million connections took 36.8 s on epoll servers against 46.7-53.2 s on
            // io_uring (which arms a receive per connection), and an idle connection
            // costs 46 B against 136 B
            // (BENCHMARKS.md#design-choices-and-the-measurements-behind-them).
            || cfg.one_of_processes
            || !crate::reactor::uring::available()
        {
            return Machinery::Epoll;
        }
        Machinery::Uring {
            fixed: asked == "uring-fixed",
        }
    }
}

/// Binds the listeners (errors come back here, before anything runs) and starts the threads.
pub fn start<F: ServerFactory>(cfg: ServerConfig, factory: F) -> Result<ServerHandle> {
    let addrs = [cfg.listen];
    start_many(cfg, &addrs, true, factory)
}

/// Like `start`, listening on every address in `addrs` (each thread accepts on all of
/// them). Returns once every thread's loop is set up (its epoll instance made, in
/// the thread's own descriptor table). `probe`: first check with a plain bind that
/// each port is free; worker processes that share their siblings' SO_REUSEPORT
/// listeners skip it.
pub fn start_many<F: ServerFactory>(
    cfg: ServerConfig,
    addrs: &[SocketAddr],
    probe: bool,
    factory: F,
) -> Result<ServerHandle> {
    if cfg.threads == 0 {
        return Err(Error::usage("--threads must be at least 1"));
    }
    let (addr, per_thread) = bind_per_thread(cfg.threads, addrs, probe)?;
    run_threads(cfg, addr, per_thread, factory)
}

/// Like `start`, listening on the unix socket at `path` (a stale socket file there is
/// replaced, any other file refused: `net::unix::listen`). Every thread accepts on the
/// one listener (unix sockets have no SO_REUSEPORT); TCP_NODELAY does not apply.
pub fn start_unix<F: ServerFactory>(
    mut cfg: ServerConfig,
    path: &std::path::Path,
    factory: F,
) -> Result<ServerHandle> {
    if cfg.threads == 0 {
        return Err(Error::usage("--threads must be at least 1"));
    }
    cfg.nodelay = false;
    let listener = std::os::fd::OwnedFd::from(crate::net::unix::listen(path, 4096)?);
    let mut per_thread = Vec::with_capacity(cfg.threads);
    for _ in 1..cfg.threads {
        let copy = listener
            .try_clone()
            .map_err(|e| Error::runtime(format!("cannot share the listener: {e}")))?;
        per_thread.push(vec![copy]);
    }
    per_thread.push(vec![listener]);
    let unspecified = SocketAddr::from(([0, 0, 0, 0], 0));
    let mut handle = run_threads(cfg, unspecified, per_thread, factory)?;
    handle.unix = Some(path.to_path_buf());
    Ok(handle)
}

/// Starts a thread per listener set (`per_thread[t]`: thread t's), returning once
/// every thread's loop is set up.
fn run_threads<F: ServerFactory>(
    mut cfg: ServerConfig,
    addr: SocketAddr,
    per_thread: Vec<Vec<std::os::fd::OwnedFd>>,
    factory: F,
) -> Result<ServerHandle> {
    crate::sys::raise_nofile_limit();
    cfg.pacing.epoch = std::time::Instant::now();
    let factory = Arc::new(factory);
    let machinery = Machinery::for_config(&cfg);
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let mut threads = Vec::new();
    let mut counters = Vec::new();
    let mut stop_fds = Vec::new();
    let mut published: Vec<Arc<Mutex<Figs<F>>>> = Vec::new();
    for (i, ls) in per_thread.into_iter().enumerate() {
        // SAFETY: no preconditions; the descriptor is owned by the handle.
        let stop_fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if stop_fd < 0 {
            return Err(Error::runtime(format!(
                "cannot start a server thread: {}",
                std::io::Error::last_os_error()
            )));
        }
        stop_fds.push(stop_fd);
        let c = Arc::new(ThreadCounters::default());
        counters.push(c.clone());
        let figures = Arc::new(Mutex::new(Figs::<F>::default()));
        published.push(figures.clone());
        let input = thread::ThreadInput {
            listeners: ls,
            counters: c,
            stop_fd,
            figures,
        };
        let (cfg, factory, tid_tx) = (cfg.clone(), factory.clone(), tid_tx.clone());
        let t = std::thread::Builder::new()
            .name(format!("wb-serve-{i}"))
            .spawn(move || serve_thread(i, machinery, cfg, factory, input, tid_tx))
            .map_err(|e| Error::runtime(format!("cannot start a server thread: {e}")))?;
        threads.push(t);
    }
    drop(tid_tx);
    let mut tids = Vec::with_capacity(threads.len());
    for (tid, moved) in (0..threads.len()).filter_map(|_| tid_rx.recv().ok()) {
        tids.push(tid);
        // The listeners of a thread with its own table are open there: the process's
        // references go, so they close with the thread (and count once in /proc).
        for fd in moved.into_iter().flatten() {
            crate::net::socket::close(fd);
        }
    }
    let figures: FiguresReader = Arc::new(move || {
        let mut sum = Figs::<F>::default();
        for p in &published {
            if let Ok(g) = p.lock() {
                sum.merge(&g);
            }
        }
        serde_json::to_value(&sum).unwrap_or_default()
    });
    Ok(ServerHandle {
        addr,
        unix: None,
        stop_fds,
        threads,
        counters,
        figures,
        tids,
    })
}

/// Each thread's SO_REUSEPORT listener on every address (`[t]`: thread t's), and the
/// address of the first.
fn bind_per_thread(
    threads: usize,
    addrs: &[SocketAddr],
    probe: bool,
) -> Result<(SocketAddr, Vec<Vec<std::os::fd::OwnedFd>>)> {
    let mut per_thread: Vec<Vec<std::os::fd::OwnedFd>> = (0..threads).map(|_| Vec::new()).collect();
    let mut first = None;
    for a in addrs {
        let ls = if probe && a.port() != 0 {
            crate::net::listen::bind_reuseport(*a, threads, 4096)?
        } else {
            crate::net::listen::bind_reuseport_shared(*a, threads, 4096)?
        };
        for (t, l) in ls.into_iter().enumerate() {
            if first.is_none() {
                first = Some(l.local_addr().map_err(|e| {
                    Error::runtime(format!("cannot read the listening address: {e}"))
                })?);
            }
            per_thread[t].push(l.into());
        }
    }
    let addr = first.ok_or_else(|| Error::usage("no address to listen on"))?;
    Ok((addr, per_thread))
}

/// What a server thread tells `start_many` once its loop is set up: its kernel thread
/// id, and the listeners it holds in a descriptor table of its own (the process's
/// references to them can go).
type SetUp = std::sync::mpsc::Sender<(i32, Option<Vec<i32>>)>;

/// The body of server thread `i`: a descriptor table of its own, its loop (io_uring
/// when `machinery` says so and the ring is given, else epoll) until it is stopped.
fn serve_thread<F: ServerFactory>(
    i: usize,
    machinery: Machinery,
    cfg: ServerConfig,
    factory: Arc<F>,
    input: thread::ThreadInput<Figs<F>>,
    set_up: SetUp,
) {
    // All the thread uses of the process's descriptor table: its listeners and its
    // stop eventfd.
    let listener_fds: Vec<i32> = input.listeners.iter().map(|l| l.as_raw_fd()).collect();
    let mut mine = listener_fds.clone();
    mine.push(input.stop_fd);
    // A table of its own: while a table is shared by the process's threads, every
    // system call on a connection takes and drops a reference on its file
    // (`sys::fd_table`; fdget+fput were ~2% of `serve http`'s CPU). Its connections and
    // epoll then live only there and close with it.
    let own = crate::sys::fd_table::own_fd_table_keeping(&mine);
    // Said once the loop is set up (its epoll instance or ring exists, its listeners
    // are armed), or at once if setting it up failed.
    let mut report = Some((set_up, own.then_some(listener_fds)));
    let mut ready = || {
        if let Some((tx, moved)) = report.take() {
            let _ = tx.send((crate::sys::gettid(), moved));
        }
    };
    // The ring, when this thread runs on io_uring. Refused on this thread (a seccomp
    // policy, a locked-memory limit): the epoll loop serves instead, the same way.
    let ring = match machinery {
        Machinery::Uring { fixed } => uring::setup(&cfg, fixed, input.stop_fd)
            .ok()
            .map(|r| (r, fixed)),
        Machinery::Epoll => None,
    };
    // Noted before the loop runs, so it is in the counters by the time the thread says
    // it is set up (`ServerTotals::event_loop`).
    input.counters.ran_on(if ring.is_some() {
        EventLoop::IoUring
    } else {
        EventLoop::Epoll
    });
    let r = match ring {
        Some((ring, fixed)) => uring::run(cfg, factory, input, ring, fixed, &mut ready),
        None => epoll::run(cfg, factory, input, &mut ready),
    };
    ready();
    if let Err(e) = r {
        eprintln!("wirebench: server thread {i} stopped: {e}");
    }
}
