//! Memory, descriptors and kernel limits read from /proc: RSS of a set of processes,
//! the kernel's slab total, open descriptors, the ephemeral port range.

use serde::{Deserialize, Serialize};

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Resident set size of process `pid`, bytes (None once it is gone).
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = statm.split_ascii_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size())
}

/// Peak resident set size (VmHWM) of this process, bytes: every thread's memory,
/// a built-in server's included when one runs in the process.
pub fn own_peak_rss_bytes() -> Option<u64> {
    peak_rss_at("/proc/self/status")
}

/// Summed peak RSS (VmHWM) of these processes, bytes; None when none could be read.
/// Each process peaked on its own, so the sum is an upper bound of a simultaneous peak.
pub fn total_peak_rss(pids: &[u32]) -> Option<u64> {
    let peaks: Vec<u64> = pids
        .iter()
        .filter_map(|p| peak_rss_at(&format!("/proc/{p}/status")))
        .collect();
    (!peaks.is_empty()).then(|| peaks.iter().sum())
}

fn peak_rss_at(path: &str) -> Option<u64> {
    let status = std::fs::read_to_string(path).ok()?;
    status_kib(&status, "VmHWM:").map(|kib| kib * 1024)
}

/// A "Field:   123 kB" line of /proc/PID/status, in KiB.
fn status_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Peak resident set size of process `pid` so far (VmHWM), bytes (None once it is gone).
pub fn peak_rss_bytes(pid: u32) -> Option<u64> {
    peak_rss_at(&format!("/proc/{pid}/status"))
}

/// Summed RSS of these processes, bytes.
pub fn total_rss(pids: &[u32]) -> u64 {
    pids.iter().filter_map(|p| rss_bytes(*p)).sum()
}

/// One field of /proc/meminfo, bytes.
pub fn meminfo_bytes(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kb * 1024)
    })
}

/// The kernel's slab memory (sockets, dentries, ...), bytes: system-wide.
pub fn slab_bytes() -> u64 {
    meminfo_bytes("Slab").unwrap_or(0)
}

/// Open descriptors of process `pid`.
pub fn open_fds(pid: u32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count())
}

/// The ephemeral ports connect() picks from (net.ipv4.ip_local_port_range).
pub fn ephemeral_ports() -> (u16, u16) {
    let text =
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default();
    let mut it = text.split_ascii_whitespace().map(|v| v.parse::<u16>().ok());
    match (it.next().flatten(), it.next().flatten()) {
        (Some(lo), Some(hi)) if lo <= hi => (lo, hi),
        _ => (32768, 60999),
    }
}

/// The hard RLIMIT_NOFILE: the most descriptors any process here may get.
pub fn nofile_hard_limit() -> u64 {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: rl is a valid rlimit to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
        return 1024;
    }
    rl.rlim_max
}

/// Kernel settings that bound mass connections, as found (None: not present).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelLimits {
    pub somaxconn: Option<u64>,
    pub tcp_max_syn_backlog: Option<u64>,
    pub file_max: Option<u64>,
    pub nr_open: Option<u64>,
    pub nofile_hard: u64,
    pub ip_local_port_range: (u16, u16),
    pub nf_conntrack_max: Option<u64>,
    pub nf_conntrack_count: Option<u64>,
    pub tcp_max_tw_buckets: Option<u64>,
}

fn sysctl(path: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/sys/{path}"))
        .ok()?
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()
}

impl KernelLimits {
    pub fn read() -> Self {
        KernelLimits {
            somaxconn: sysctl("net/core/somaxconn"),
            tcp_max_syn_backlog: sysctl("net/ipv4/tcp_max_syn_backlog"),
            file_max: sysctl("fs/file-max"),
            nr_open: sysctl("fs/nr_open"),
            nofile_hard: nofile_hard_limit(),
            ip_local_port_range: ephemeral_ports(),
            nf_conntrack_max: sysctl("net/netfilter/nf_conntrack_max"),
            nf_conntrack_count: sysctl("net/netfilter/nf_conntrack_count"),
            tcp_max_tw_buckets: sysctl("net/ipv4/tcp_max_tw_buckets"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_process() {
        let me = std::process::id();
        assert!(rss_bytes(me).unwrap() > 0);
        assert!(peak_rss_bytes(me).unwrap() >= rss_bytes(me).unwrap() / 2);
        assert!(peak_rss_bytes(u32::MAX).is_none());
        assert!(open_fds(me).unwrap() >= 3);
        assert!(rss_bytes(u32::MAX).is_none());
        let (lo, hi) = ephemeral_ports();
        assert!(lo <= hi);
        assert!(meminfo_bytes("MemTotal").unwrap() > 0);
        assert!(KernelLimits::read().nofile_hard >= 1);
        let peak = own_peak_rss_bytes().unwrap();
        assert!(peak >= rss_bytes(me).unwrap() / 2 && peak % 1024 == 0);
        assert_eq!(
            status_kib("Name:\tx\nVmHWM:\t  5120 kB\n", "VmHWM:"),
            Some(5120)
        );
    }
}
