//! Facts from the operating system, in one place: CPUs we may run on, the environment
//! recorded with every result, and (one file each) everything read from /proc
//! (`proc_fs`), getrusage (`rusage`), resource limits (`limits`), a thread's own
//! descriptor table (`fd_table`) and the allocator's mmap threshold (`malloc`). No other module
//! parses /proc or calls getrusage.

pub mod fd_table;
pub mod limits;
pub mod malloc;
pub mod proc_fs;
pub mod rusage;

pub use limits::raise_nofile_limit;
pub use proc_fs::task_cpu_time;
pub use rusage::{process_cpu_time, thread_cpu_time};

use serde::{Deserialize, Serialize};

/// Number of CPUs in this process's affinity mask, so `taskset -c 1` means one worker.
pub fn affinity_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The kernel's id of the calling thread.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// Where a result was measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub cpus_online: usize,
    pub cpus_in_affinity: usize,
    pub wirebench_version: String,
}

impl Environment {
    pub fn capture() -> Self {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        // SAFETY: sysconf has no preconditions.
        let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
        Environment {
            hostname: read("/proc/sys/kernel/hostname"),
            os: std::env::consts::OS.to_string(),
            kernel: read("/proc/sys/kernel/osrelease"),
            arch: std::env::consts::ARCH.to_string(),
            cpus_online: online,
            cpus_in_affinity: affinity_cpus(),
            wirebench_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_thread_is_visible() {
        assert!(task_cpu_time(gettid()).is_some());
        assert!(affinity_cpus() >= 1);
    }
}
