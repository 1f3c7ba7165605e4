//! Measuring interference over a window (a load's measured phase, a `serve`, a suite
//! point): /proc/stat's busy and steal time of each CPU the run used at both ends,
//! minus the CPU time of the run's own processes over the same window. What is left
//! is what other processes took.
//!
//! Whose time is "ours" is the caller's to say (`OurProcess`): a load's is this
//! process and its descendants (a built-in server's threads, `--processes` workers);
//! a suite's is its server's family and its generator. A process allowed on one CPU
//! is charged to that CPU exactly; one allowed on several is shared among them in
//! proportion to what is left of each CPU's busy time (so the sums stay exact).

use super::figures::{CpuUse, Interference, LoadAverage};
use crate::sys::proc_fs::{self, CpuTimes, ProcStat};
use std::collections::BTreeMap;
use std::time::Instant;

/// One process of the run at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct OurProcess {
    pub pid: i32,
    /// CPU ticks so far: its own, plus its waited-for children's unless the caller
    /// charges those apart (`Reaped`).
    pub ticks: u64,
    /// The CPUs it may run on.
    pub cpus: Vec<u32>,
    /// It does the run's work (a generator, a server): its CPUs are the CPUs the run
    /// used. A bookkeeper (the suite itself) is charged, but its CPUs are not.
    pub runs_the_load: bool,
}

/// CPU time of the run's processes that ended, and were waited for, within the window
/// (a suite point's generator), and the CPUs they could run on.
pub struct Reaped {
    pub cpu_s: f64,
    pub cpus: Vec<u32>,
}

/// A process and its CPUs from its stat line; `with_children`: its waited-for
/// children's ticks count as its own.
pub fn our_process(s: &ProcStat, with_children: bool, runs_the_load: bool) -> OurProcess {
    OurProcess {
        pid: s.pid,
        ticks: s.own_ticks + if with_children { s.children_ticks } else { 0 },
        cpus: proc_fs::allowed_cpus(s.pid).unwrap_or_default(),
        runs_the_load,
    }
}

/// `root` and every live descendant of it, from a listing of all processes.
pub fn tree(root: i32, all: &[ProcStat]) -> Vec<ProcStat> {
    let mut keep: Vec<ProcStat> = all.iter().filter(|p| p.pid == root).copied().collect();
    let mut i = 0;
    while i < keep.len() {
        let parent = keep[i].pid;
        for p in all.iter().filter(|p| p.ppid == parent && !p.zombie) {
            if !keep.iter().any(|k| k.pid == p.pid) {
                keep.push(*p);
            }
        }
        i += 1;
    }
    keep
}

/// This process and its live descendants (a built-in server's threads are in this
/// process; `--processes` workers and connect's workers are its children).
pub fn this_process_tree() -> Vec<OurProcess> {
    let me = std::process::id() as i32;
    tree(me, &proc_fs::all_stats())
        .iter()
        .map(|s| our_process(s, true, true))
        .collect()
}

/// The machine at the start of a window.
pub struct Window {
    at: Instant,
    cpus: Vec<CpuTimes>,
    load: [f64; 3],
    ours: Vec<OurProcess>,
}

impl Window {
    /// Opens a window now, with the run's processes as they are.
    pub fn open(ours: Vec<OurProcess>) -> Window {
        Window {
            at: Instant::now(),
            cpus: proc_fs::cpu_times(),
            load: proc_fs::loadavg(),
            ours,
        }
    }

    /// Closes it now: `ours` as they are at the end, `reaped` charged apart. None when
    /// /proc/stat could not be read.
    pub fn close(self, ours: Vec<OurProcess>, reaped: &[Reaped]) -> Option<Interference> {
        let window_s = self.at.elapsed().as_secs_f64();
        let end = proc_fs::cpu_times();
        let tick = 1.0 / proc_fs::clock_ticks();
        let used = used_cpus(&self.ours, &ours, reaped);
        let mut busy = BTreeMap::new();
        let mut steal = BTreeMap::new();
        for e in end.iter().filter(|e| used.contains(&e.cpu)) {
            let s = self.cpus.iter().find(|s| s.cpu == e.cpu)?;
            busy.insert(e.cpu, e.busy.saturating_sub(s.busy) as f64 * tick);
            steal.insert(e.cpu, e.steal.saturating_sub(s.steal) as f64 * tick);
        }
        if busy.is_empty() {
            return None;
        }
        let mut charges: Vec<(f64, Vec<u32>)> = ours
            .iter()
            .map(|p| {
                let before = self.ours.iter().find(|b| b.pid == p.pid);
                let ticks = p.ticks.saturating_sub(before.map_or(0, |b| b.ticks));
                (ticks as f64 * tick, p.cpus.clone())
            })
            .collect();
        charges.extend(reaped.iter().map(|r| (r.cpu_s, r.cpus.clone())));
        let (ours_on, exact) = attribute(&busy, &charges);
        let cpus: Vec<CpuUse> = busy
            .iter()
            .map(|(&cpu, &b)| {
                let o = ours_on.get(&cpu).copied().unwrap_or(0.0);
                CpuUse {
                    cpu,
                    window_s,
                    busy_s: b,
                    ours_s: o,
                    others_s: (b - o).max(0.0),
                    steal_s: steal.get(&cpu).copied().unwrap_or(0.0),
                }
            })
            .collect();
        Some(Interference {
            window_s,
            others_s: cpus.iter().map(|c| c.others_s).sum(),
            steal_s: cpus.iter().map(|c| c.steal_s).sum(),
            per_cpu_exact: exact,
            cpus,
            load_average: LoadAverage {
                start: self.load,
                end: proc_fs::loadavg(),
            },
        })
    }
}

/// The CPUs of the processes that run the load, at either end, and of the reaped.
fn used_cpus(start: &[OurProcess], end: &[OurProcess], reaped: &[Reaped]) -> Vec<u32> {
    let mut used: Vec<u32> = start
        .iter()
        .chain(end)
        .filter(|p| p.runs_the_load)
        .flat_map(|p| p.cpus.iter().copied())
        .chain(reaped.iter().flat_map(|r| r.cpus.iter().copied()))
        .collect();
    used.sort_unstable();
    used.dedup();
    used
}

/// Charges each (seconds, CPUs) to the used CPUs (`busy`: each one's busy seconds):
/// one CPU exactly, several in proportion to what each has left once the exact
/// charges are made (evenly when nothing is left). CPUs outside `busy` take nothing.
/// Returns seconds charged per CPU, and whether every charge was exact.
pub fn attribute(
    busy: &BTreeMap<u32, f64>,
    charges: &[(f64, Vec<u32>)],
) -> (BTreeMap<u32, f64>, bool) {
    let mut ours: BTreeMap<u32, f64> = busy.keys().map(|c| (*c, 0.0)).collect();
    let mut exact = true;
    let within = |cpus: &[u32]| -> Vec<u32> {
        cpus.iter()
            .copied()
            .filter(|c| busy.contains_key(c))
            .collect()
    };
    for (secs, cpus) in charges {
        if let [one] = within(cpus)[..] {
            *ours.entry(one).or_default() += secs;
        }
    }
    for (secs, cpus) in charges {
        let set = within(cpus);
        if set.len() < 2 || *secs <= 0.0 {
            continue;
        }
        exact = false;
        let left: Vec<f64> = set.iter().map(|c| (busy[c] - ours[c]).max(0.0)).collect();
        let total: f64 = left.iter().sum();
        for (c, l) in set.iter().zip(&left) {
            let part = if total > 0.0 {
                secs * l / total
            } else {
                secs / set.len() as f64
            };
            *ours.entry(*c).or_default() += part;
        }
    }
    (ours, exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(pid: i32, ppid: i32, zombie: bool) -> ProcStat {
        ProcStat {
            pid,
            ppid,
            pgrp: pid,
            zombie,
            own_ticks: 1,
            children_ticks: 0,
            rss_pages: 0,
        }
    }

    #[test]
    fn the_tree_is_the_root_and_its_live_descendants() {
        let all = [
            stat(1, 0, false),
            stat(10, 1, false),
            stat(11, 10, false),
            stat(12, 11, true),
            stat(20, 1, false),
            stat(21, 20, false),
        ];
        let pids: Vec<i32> = tree(10, &all).iter().map(|s| s.pid).collect();
        assert_eq!(pids, [10, 11]);
        assert!(tree(99, &all).is_empty());
        let me = this_process_tree();
        assert_eq!(me[0].pid, std::process::id() as i32);
        assert!(!me[0].cpus.is_empty() && me[0].runs_the_load);
    }

    #[test]
    fn pinned_time_is_charged_exactly_and_the_rest_in_proportion() {
        // CPU 0: 2.0 s busy (the server's 1.4 s pinned there); CPU 1: 1.0 s busy (the
        // generator's 0.8 s). A bookkeeper on both took 0.3 s: shared 0.6 : 0.2.
        let busy = BTreeMap::from([(0, 2.0), (1, 1.0)]);
        let (pinned, exact) = attribute(&busy, &[(1.4, vec![0]), (0.8, vec![1])]);
        assert!(exact);
        assert_eq!(pinned, BTreeMap::from([(0, 1.4), (1, 0.8)]));
        let (all, exact) = attribute(
            &busy,
            &[(1.4, vec![0]), (0.8, vec![1]), (0.3, vec![0, 1, 5])],
        );
        assert!(!exact);
        assert!((all[&0] - 1.625).abs() < 1e-9 && (all[&1] - 0.875).abs() < 1e-9);
        // Time on a CPU the run did not use is not charged to the run's CPUs.
        let (none, exact) = attribute(&busy, &[(5.0, vec![7])]);
        assert!(exact);
        assert_eq!(none, BTreeMap::from([(0, 0.0), (1, 0.0)]));
    }

    #[test]
    fn a_window_over_a_busy_loop_of_ours_finds_no_one_else_took_it() {
        // Ours burns CPU in this thread; what the window finds of others is whatever
        // else ran, which cannot be asserted; the sums must hold exactly.
        let w = Window::open(this_process_tree());
        let end = std::time::Instant::now() + std::time::Duration::from_millis(200);
        let mut x = 0u64;
        while std::time::Instant::now() < end {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        assert_ne!(x, 1);
        let i = w.close(this_process_tree(), &[]).expect("/proc/stat reads");
        assert!(i.window_s >= 0.2);
        let others: f64 = i.cpus.iter().map(|c| c.others_s).sum();
        assert!((others - i.others_s).abs() < 1e-9);
        for c in &i.cpus {
            assert!(c.others_s >= 0.0 && c.busy_s + 1e-9 >= c.others_s);
        }
    }
}
