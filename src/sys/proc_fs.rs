//! Everything read from /proc, and the one parser of each file: /proc/PID/stat (CPU
//! ticks, parent, group, state, RSS pages), statm and status (RSS, peak RSS, the CPUs
//! a process may run on), the open descriptors, /proc/stat (each CPU's busy and steal
//! time), /proc/loadavg, /proc/meminfo (slab), and numbers under /proc/sys.

use std::time::Duration;

/// One /proc/PID/stat line (or /proc/PID/task/TID/stat), the fields wirebench reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcStat {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    /// A zombie (Z) or dead (X) process: it runs nothing and holds nothing.
    pub zombie: bool,
    /// utime + stime, clock ticks.
    pub own_ticks: u64,
    /// cutime + cstime: children waited for, clock ticks.
    pub children_ticks: u64,
    pub rss_pages: u64,
}

/// Parses a stat line; None when it is not one.
pub fn parse_stat(pid: i32, stat: &str) -> Option<ProcStat> {
    // The command name may contain spaces and parentheses; fields resume after the last ')'.
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    // f starts at field 3 (state); fields are 1-based in proc(5).
    let num = |i: usize| -> Option<u64> { f.get(i - 3)?.parse().ok() };
    Some(ProcStat {
        pid,
        ppid: num(4)? as i32,
        pgrp: num(5)? as i32,
        zombie: matches!(f.first(), Some(&"Z") | Some(&"X")),
        own_ticks: num(14)? + num(15)?,
        children_ticks: num(16)? + num(17)?,
        rss_pages: num(24)?,
    })
}

/// /proc/PID/stat of process `pid` (None once it is gone).
pub fn stat(pid: i32) -> Option<ProcStat> {
    parse_stat(
        pid,
        &std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?,
    )
}

/// Every process on the machine that /proc lets us read.
pub fn all_stats() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let pid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        stat(pid)
    })
    .collect()
}

/// Whether `pid` is a live process (not a zombie).
pub fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|s| !s.zombie)
}

/// Clock ticks per second, the unit of /proc/PID/stat's CPU times.
pub fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// Clock ticks as a duration.
pub fn ticks(n: u64) -> Duration {
    Duration::from_secs_f64(n as f64 / clock_ticks())
}

/// User+system CPU time of process `pid` (every thread), clock-tick resolution.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    Some(ticks(stat(pid as i32)?.own_ticks))
}

/// User+system CPU time of thread `tid` of this process, clock-tick resolution.
pub fn task_cpu_time(tid: i32) -> Option<Duration> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    Some(ticks(parse_stat(tid, &text)?.own_ticks))
}

/// Bytes per page, the unit of statm and of stat's RSS.
pub fn page_size() -> u64 {
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

/// One CPU's times from /proc/stat, clock ticks since boot.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTimes {
    /// The CPU's number (`cpuN`).
    pub cpu: u32,
    /// user + nice + system: time the CPU ran processes (guest time is inside user).
    /// Interrupts and softirqs are left out: the kernel charges them to no process, and
    /// on loopback they are mostly the benchmark's own packets.
    pub busy: u64,
    /// Time a hypervisor gave this virtual CPU to someone else.
    pub steal: u64,
}

/// The `cpuN` lines of /proc/stat (the summed `cpu` line left out); lines cut short
/// or not numbers are skipped.
pub fn parse_cpu_times(text: &str) -> Vec<CpuTimes> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_ascii_whitespace();
            let cpu: u32 = f.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = f.map_while(|x| x.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal
            (v.len() >= 8).then(|| CpuTimes {
                cpu,
                busy: v[0] + v[1] + v[2],
                steal: v[7],
            })
        })
        .collect()
}

/// Every CPU's times now (empty when /proc/stat cannot be read).
pub fn cpu_times() -> Vec<CpuTimes> {
    parse_cpu_times(&std::fs::read_to_string("/proc/stat").unwrap_or_default())
}

/// The 1, 5 and 15 minute load averages of /proc/loadavg.
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut f = text.split_ascii_whitespace().map(|x| x.parse::<f64>().ok());
    Some([f.next()??, f.next()??, f.next()??])
}

/// The load averages now ([0, 0, 0] when /proc/loadavg cannot be read).
pub fn loadavg() -> [f64; 3] {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| parse_loadavg(&t))
        .unwrap_or_default()
}

/// A CPU list as the kernel writes it ("0-3,8,10-11"); None when it is not one.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?),
            None => {
                let n = part.parse::<u32>().ok()?;
                (n, n)
            }
        };
        if hi < lo || hi - lo > 65_535 {
            return None;
        }
        out.extend(lo..=hi);
    }
    Some(out)
}

/// The CPUs process `pid` may run on (Cpus_allowed_list of its status), None once it
/// is gone.
pub fn allowed_cpus(pid: i32) -> Option<Vec<u32>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(parse_cpu_list)
}

/// The children of process `pid`, from every thread's /proc/PID/task/TID/children.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|s| {
            s.split_ascii_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .collect()
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

/// A number under /proc/sys (`net/core/somaxconn`), as found.
pub fn sysctl(path: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/sys/{path}"))
        .ok()?
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()
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
        assert!(rss_bytes(u32::MAX).is_none());
        let (lo, hi) = ephemeral_ports();
        assert!(lo <= hi);
        assert!(meminfo_bytes("MemTotal").unwrap() > 0);
        let peak = own_peak_rss_bytes().unwrap();
        assert!(peak >= rss_bytes(me).unwrap() / 2 && peak % 1024 == 0);
        assert_eq!(
            status_kib("Name:\tx\nVmHWM:\t  5120 kB\n", "VmHWM:"),
            Some(5120)
        );
        let own = stat(me as i32).unwrap();
        assert!(!own.zombie && own.rss_pages > 0 && alive(me as i32));
        assert!(cpu_time(me).is_some() && !alive(i32::MAX));
    }

    #[test]
    fn parses_a_stat_line() {
        let line = "42 (a b) S 7 42 42 0 -1 0 0 0 0 0 150 50 10 5 20 0 3 0 100 4096 321 x";
        let s = parse_stat(42, line).unwrap();
        assert_eq!(
            (s.ppid, s.pgrp, s.own_ticks, s.children_ticks),
            (7, 42, 200, 15)
        );
        assert_eq!((s.rss_pages, s.zombie), (321, false));
        let odd = "123 (my (odd) name) Z 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0 1 1 9";
        let s = parse_stat(123, odd).unwrap();
        assert_eq!((s.own_ticks, s.zombie), (300, true));
        // Cut short, or nothing after the name: refused, never a panic.
        assert_eq!(parse_stat(1, "1 (x)"), None);
        assert_eq!(parse_stat(1, "1 (x) S 1"), None);
        assert_eq!(parse_stat(1, ""), None);
    }

    #[test]
    fn parses_cpu_times_load_averages_and_cpu_lists() {
        let stat = "cpu  86017 36 22652 25345 4380 0 2169 2335 0 0\n\
                    cpu0 41948 5 10483 15203 1714 0 974 1148 0 0\n\
                    cpu1 44069 31 12168 10142 2665 7 1194 1187 0 0\n\
                    cpu2 1 2\n\
                    intr 1 2 3\nctxt 5\n";
        assert_eq!(
            parse_cpu_times(stat),
            [
                CpuTimes {
                    cpu: 0,
                    busy: 41948 + 5 + 10483,
                    steal: 1148
                },
                CpuTimes {
                    cpu: 1,
                    busy: 44069 + 31 + 12168,
                    steal: 1187
                },
            ]
        );
        assert!(!cpu_times().is_empty());
        assert_eq!(
            parse_loadavg("7.82 4.24 2.09 11/186 569\n"),
            Some([7.82, 4.24, 2.09])
        );
        assert_eq!(parse_loadavg("7.82 x"), None);
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("1"), Some(vec![1]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
        assert!(!allowed_cpus(std::process::id() as i32).unwrap().is_empty());
        assert_eq!(allowed_cpus(i32::MAX), None);
    }
}
