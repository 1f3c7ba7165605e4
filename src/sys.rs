//! Facts from the operating system: CPUs we may run on, CPU time of threads,
//! file-descriptor limits, and the environment recorded with every result.

use serde::{Deserialize, Serialize};
use std::time::Duration;

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

/// User+system CPU time of the calling thread.
pub fn thread_cpu_time() -> Duration {
    rusage_cpu_time(libc::RUSAGE_THREAD)
}

/// User+system CPU time of this whole process (every thread) so far.
pub fn process_cpu_time() -> Duration {
    rusage_cpu_time(libc::RUSAGE_SELF)
}

/// User+system CPU time from getrusage(who); zero if the call fails.
fn rusage_cpu_time(who: libc::c_int) -> Duration {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: ru is valid writable memory for one rusage.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    if rc != 0 {
        return Duration::ZERO;
    }
    // SAFETY: getrusage succeeded and filled the struct.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// User+system CPU time of thread `tid` of this process, from /proc (clock-tick resolution).
pub fn task_cpu_time(tid: i32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    stat_cpu_time(&stat)
}

/// Parses utime+stime out of a /proc/.../stat line (fields 14 and 15).
pub fn stat_cpu_time(stat: &str) -> Option<Duration> {
    // The command name may contain spaces; fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut f = rest.split_ascii_whitespace();
    let utime: u64 = f.nth(11)?.parse().ok()?;
    let stime: u64 = f.next()?.parse().ok()?;
    Some(Duration::from_secs_f64(
        (utime + stime) as f64 / clock_ticks(),
    ))
}

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
    fn parses_stat_with_spaces_in_name() {
        let tck = clock_ticks();
        let line = "123 (my (odd) name) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0";
        let t = stat_cpu_time(line).unwrap();
        assert!((t.as_secs_f64() - 300.0 / tck).abs() < 1e-9);
    }

    #[test]
    fn own_thread_is_visible() {
        assert!(task_cpu_time(gettid()).is_some());
        assert!(affinity_cpus() >= 1);
    }
}
