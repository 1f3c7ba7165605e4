//! Whether this machine can hold a `connect` plan at all: sockets per process (both
//! sides), ephemeral ports per (source, destination) pair, `fs.file-max` and kernel
//! memory. An impossible plan is refused before anything starts, in one sentence
//! naming the limit and the way out.

use crate::error::{Error, Result};
use crate::report::format::group;
use crate::sys::limits::KernelLimits;

/// Descriptors a worker keeps for itself (stdio, epoll, runtime) beyond its sockets.
pub const FD_MARGIN: u64 = 64;
/// Most worker processes on either side: more is a typo, not a plan.
pub const MAX_PROCESSES: usize = 1024;
/// Kernel memory per connection end (socket, inode, dentry, epoll item...): about half
/// of the ~9.6 KB per connection measured here with both ends on this machine.
pub const KERNEL_BYTES_PER_SOCKET: u64 = 4_800;
/// Connections per built-in server process by default: SO_REUSEPORT spreads by hash,
/// so leave room under the descriptor limit for an uneven share.
pub const SERVER_SHARE: u64 = 15_000;

/// Sockets one process may hold: the hard descriptor limit less a margin.
pub fn per_process_fds(limits: &KernelLimits) -> u64 {
    limits.nofile_hard.saturating_sub(FD_MARGIN).max(1)
}

/// The processes a plan needs when the user named none: `open` sockets at `share` per
/// process. Beyond MAX_PROCESSES the plan is refused naming what the user gave (`asked`)
/// and how far to bring it down, not a flag never typed.
pub fn processes_for(asked: &str, open: u64, share: u64, side: &str) -> Result<usize> {
    let p = open.div_ceil(share).max(1);
    if p > MAX_PROCESSES as u64 {
        return Err(Error::usage(format!(
            "{asked} would need {} {side} processes of {} sockets each, more than the {} allowed: ask for at most {}",
            group(p),
            group(share),
            group(MAX_PROCESSES as u64),
            group(share * MAX_PROCESSES as u64)
        )));
    }
    Ok(p as usize)
}

/// What a plan asks of this machine (`ConnectConfig::needs`).
pub struct Needs {
    /// Sockets open at once on the client side: every connection (hold), or the
    /// concurrent cycles (churn).
    pub open: u64,
    pub processes: usize,
    pub server_processes: usize,
    /// The built-in server: its processes hold the other ends.
    pub builtin: bool,
    pub sources: usize,
    pub destinations: usize,
    /// Every destination is on loopback: both ends are this machine's.
    pub loopback: bool,
    /// The sources are every usable loopback address already, chosen by connect.
    pub loopback_sources_chosen: bool,
}

/// Refuses a plan this machine cannot hold, naming the limit in one sentence.
pub fn check(n: &Needs, limits: &KernelLimits) -> Result<()> {
    check_processes(n, limits)?;
    check_ports(n, limits)?;
    check_kernel(n, limits)
}

/// Each side's processes: within bounds, and each able to hold its share of sockets.
fn check_processes(n: &Needs, limits: &KernelLimits) -> Result<()> {
    let (open, per_process) = (n.open, per_process_fds(limits));
    for (flag, p) in [
        ("--processes", n.processes),
        ("--server-processes", n.server_processes),
    ] {
        if p == 0 || p > MAX_PROCESSES {
            return Err(Error::usage(format!(
                "{flag} must be between 1 and {MAX_PROCESSES}"
            )));
        }
    }
    // Each side's processes hold their share of the sockets; what to ask for instead is
    // the client's fill of a process, or the share the built-in server plans for.
    let sides = [
        (
            "client",
            "--processes",
            n.processes,
            open.div_ceil(per_process),
        ),
        (
            "built-in server",
            "--server-processes",
            n.server_processes,
            open.div_ceil(SERVER_SHARE),
        ),
    ];
    for (side, flag, p, enough) in sides.into_iter().take(if n.builtin { 2 } else { 1 }) {
        let need = open.div_ceil(p as u64);
        if need > per_process {
            return Err(Error::usage(format!(
                "{} connections over {p} {side} processes need {} sockets per process, but a process may open only {} files here (ulimit -n {}): use {flag} {enough} or more",
                group(open),
                group(need),
                group(per_process),
                limits.nofile_hard,
            )));
        }
    }
    Ok(())
}

/// One (source, destination) pair gives one ephemeral port range of connections.
fn check_ports(n: &Needs, limits: &KernelLimits) -> Result<()> {
    let (lo, hi) = limits.ip_local_port_range;
    let ports = u64::from(hi - lo) + 1;
    let sources = n.sources.max(1) as u64;
    let dests = n.destinations.max(1) as u64;
    let pairs = sources * dests;
    let open = n.open;
    if open <= pairs * ports {
        return Ok(());
    }
    // With every loopback source already chosen, only destinations can add pairs.
    let remedy = if n.loopback_sources_chosen {
        "add destinations (a target range such as 127.0.0.1-127.0.0.20:PORT, served with --listen on the same range)"
    } else {
        "add source addresses with --source (e.g. 127.0.0.2-127.0.0.254) or destinations"
    };
    Err(Error::usage(format!(
        "{} connections need more than the {} ephemeral ports ({lo}-{hi}, net.ipv4.ip_local_port_range) that {} source x {} destination address pairs give: {remedy}",
        group(open),
        group(pairs * ports),
        sources,
        dests
    )))
}

/// The machine's open files and kernel memory, both ends counted on loopback.
fn check_kernel(n: &Needs, limits: &KernelLimits) -> Result<()> {
    let sockets = n.open * if n.loopback { 2 } else { 1 };
    if let Some(max) = limits.file_max {
        if sockets > max {
            return Err(Error::usage(format!(
                "{} sockets exceed the system-wide limit of {} open files (fs.file-max)",
                group(sockets),
                group(max)
            )));
        }
    }
    let kernel = sockets * KERNEL_BYTES_PER_SOCKET;
    if let Some(avail) = crate::sys::proc_fs::meminfo_bytes("MemAvailable") {
        if kernel > avail {
            return Err(Error::usage(format!(
                "{} sockets need about {:.1} GB of kernel memory but only {:.1} GB is available (MemAvailable)",
                group(sockets),
                kernel as f64 / 1e9,
                avail as f64 / 1e9
            )));
        }
    }
    Ok(())
}
