//! Resource limits: the descriptor limit (raised to the hard limit where allowed) and
//! the kernel settings that bound mass connections.

use super::proc_fs::{ephemeral_ports, sysctl};
use serde::{Deserialize, Serialize};

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force.
pub fn raise_nofile_limit() -> u64 {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: rl is a valid rlimit to fill and then read back.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) != 0 {
            return 1024;
        }
        if rl.rlim_cur < rl.rlim_max {
            let want = libc::rlimit {
                rlim_cur: rl.rlim_max,
                rlim_max: rl.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                rl.rlim_cur = rl.rlim_max;
            }
        }
    }
    rl.rlim_cur
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
    fn limits_are_read() {
        assert!(KernelLimits::read().nofile_hard >= 1);
        assert!(raise_nofile_limit() <= nofile_hard_limit());
    }
}
