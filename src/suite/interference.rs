//! A suite point's interference (`stats::interference`): the window around its
//! generator's run, the whole of what the suite started counted as the run's own: the
//! server's family, the generator (waited for by the end: its CPU time on its CPUs),
//! anything else the suite runs meanwhile (perf), and the suite itself, whose CPUs are
//! not the run's (it only watches).

use super::cpuset::CpuSet;
use super::process::family_stats;
use crate::stats::interference::{our_process, tree, Interference, OurProcess, Reaped, Window};
use crate::sys::proc_fs;

/// Opens the point's window; `server`: the leader of the server's family.
pub fn open(server: i32) -> Window {
    Window::open(ours(server))
}

/// Closes it once the generator was waited for: `generator_cpu_s`, its CPU time over
/// the point, ran on `generator_cpus` (None: wherever the suite may run).
pub fn close(
    w: Window,
    server: i32,
    generator_cpu_s: f64,
    generator_cpus: Option<&CpuSet>,
) -> Option<Interference> {
    let me = std::process::id() as i32;
    let cpus = match generator_cpus {
        Some(set) => set.0.iter().map(|c| *c as u32).collect(),
        None => proc_fs::allowed_cpus(me).unwrap_or_default(),
    };
    let generator = Reaped {
        cpu_s: generator_cpu_s,
        cpus,
    };
    w.close(ours(server), &[generator])
}

/// The suite's processes now: its own time (its waited-for children, the generators,
/// are charged apart), the server's family, and its other live descendants.
fn ours(server: i32) -> Vec<OurProcess> {
    let me = std::process::id() as i32;
    let all = proc_fs::all_stats();
    let family = family_stats(server);
    let mut v: Vec<OurProcess> = Vec::new();
    for s in all.iter().filter(|s| s.pid == me) {
        v.push(our_process(s, false, false));
    }
    for s in &family {
        v.push(our_process(s, true, true));
    }
    for s in tree(me, &all).iter().skip(1) {
        if !v.iter().any(|o| o.pid == s.pid) {
            v.push(our_process(s, true, false));
        }
    }
    v
}
