//! What a result says about the machine while it was measured (`machine.interference`):
//! per CPU the run used, the CPU time other processes took and the time the hypervisor
//! stole, and the load averages at the start and the end. A run marked by it (others or
//! steal above `THRESHOLD` of one of its CPUs) is not a figure to compare: the report's
//! verdict and `compare` never call a difference from it.

use serde::{Deserialize, Serialize};

/// Others (or steal) above this share of a CPU the run used mark the run.
pub const THRESHOLD: f64 = 0.05;

/// The `machine` block of a result.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    pub interference: Interference,
}

/// What other processes and the hypervisor took from the CPUs a run used.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Interference {
    /// Seconds watched: the measured phase (merged: the parts' sum).
    pub window_s: f64,
    /// CPU-seconds other processes took on the CPUs the run used, summed over them.
    pub others_s: f64,
    /// Seconds the hypervisor gave those CPUs to someone else, summed over them.
    pub steal_s: f64,
    /// False when a process of the run could run on several of its CPUs: its time is
    /// then shared among them in proportion to how busy each was, so the sums are
    /// exact and each CPU's `ours_s` and `others_s` an estimate.
    pub per_cpu_exact: bool,
    /// Each CPU the run used, by number.
    pub cpus: Vec<CpuUse>,
    pub load_average: LoadAverage,
}

/// One CPU over the window, seconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuUse {
    pub cpu: u32,
    pub window_s: f64,
    /// Time it ran processes (user + nice + system of /proc/stat).
    pub busy_s: f64,
    /// Of that, the run's own processes (wirebench, its server, a suite's generator).
    pub ours_s: f64,
    /// Of that, every other process: busy minus ours, never below 0.
    pub others_s: f64,
    pub steal_s: f64,
}

/// The 1, 5 and 15 minute load averages; merged, each the largest of the parts'.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LoadAverage {
    pub start: [f64; 3],
    pub end: [f64; 3],
}

/// Why a run does not count: who took how much of which CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mark {
    pub cpu: u32,
    /// Of the CPU's time over the window, 0..1.
    pub share: f64,
    /// The hypervisor's steal, not another process.
    pub steal: bool,
}

impl Mark {
    /// "other processes took 30% of CPU 0", "the hypervisor took 12% of CPU 1 (steal)".
    pub fn describe(&self) -> String {
        let pct = (self.share * 100.0).round();
        if self.steal {
            format!("the hypervisor took {pct:.0}% of CPU {} (steal)", self.cpu)
        } else {
            format!("other processes took {pct:.0}% of CPU {}", self.cpu)
        }
    }
}

impl CpuUse {
    fn share(&self, s: f64) -> f64 {
        if self.window_s > 0.0 {
            s / self.window_s
        } else {
            0.0
        }
    }

    /// Others' and the hypervisor's marks on this CPU, where above the threshold.
    fn marks(&self) -> impl Iterator<Item = Mark> + '_ {
        [(self.others_s, false), (self.steal_s, true)]
            .into_iter()
            .map(|(s, steal)| Mark {
                cpu: self.cpu,
                share: self.share(s),
                steal,
            })
            .filter(|m| m.share > THRESHOLD)
    }
}

impl Interference {
    /// Every mark above the threshold, by CPU (others before steal).
    pub fn marks(&self) -> Vec<Mark> {
        self.cpus.iter().flat_map(CpuUse::marks).collect()
    }

    /// The largest mark, when the run is marked at all.
    pub fn worst(&self) -> Option<Mark> {
        self.marks()
            .into_iter()
            .max_by(|a, b| a.share.total_cmp(&b.share))
    }

    /// The line under a run's summary when it is marked, else None: "interference:
    /// other processes took 31% of CPU 0 during the measured phase (load average 0.52
    /// at the start, 1.87 at the end); a busy machine's figures do not compare".
    /// `among`: who else may be counted in others ("the target server", when the run
    /// did not start its server itself).
    pub fn line(&self, among: Option<&str>) -> Option<String> {
        let marks = self.marks();
        if marks.is_empty() {
            return None;
        }
        let said: Vec<String> = marks.iter().map(Mark::describe).collect();
        let la = &self.load_average;
        Some(format!(
            "interference: {} during the measured phase (load average {:.2} at the start, {:.2} at the end{}{}); a busy machine's figures do not compare",
            said.join(", "),
            la.start[0],
            la.end[0],
            if self.per_cpu_exact {
                ""
            } else {
                "; per CPU estimated"
            },
            among
                .map(|who| format!("; {who} among them if it runs on this machine"))
                .unwrap_or_default()
        ))
    }

    /// The exact sum of several parts' (shards, rounds): seconds add up, per CPU by its
    /// number; the load averages are the largest of the parts' at the start and at the
    /// end. None for no parts.
    pub fn merge(parts: &[&Interference]) -> Option<Interference> {
        let first = parts.first()?;
        let mut m = Interference {
            window_s: 0.0,
            others_s: 0.0,
            steal_s: 0.0,
            per_cpu_exact: true,
            cpus: Vec::new(),
            load_average: first.load_average.clone(),
        };
        for p in parts {
            m.window_s += p.window_s;
            m.others_s += p.others_s;
            m.steal_s += p.steal_s;
            m.per_cpu_exact &= p.per_cpu_exact;
            for (i, v) in p.load_average.start.iter().enumerate() {
                m.load_average.start[i] = m.load_average.start[i].max(*v);
                m.load_average.end[i] = m.load_average.end[i].max(p.load_average.end[i]);
            }
            for c in &p.cpus {
                let at = match m.cpus.iter().position(|x| x.cpu == c.cpu) {
                    Some(i) => i,
                    None => {
                        m.cpus.push(CpuUse {
                            cpu: c.cpu,
                            ..CpuUse::default()
                        });
                        m.cpus.len() - 1
                    }
                };
                let x = &mut m.cpus[at];
                x.window_s += c.window_s;
                x.busy_s += c.busy_s;
                x.ours_s += c.ours_s;
                x.others_s += c.others_s;
                x.steal_s += c.steal_s;
            }
        }
        m.cpus.sort_by_key(|c| c.cpu);
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpu: u32, window_s: f64, others_s: f64, steal_s: f64) -> CpuUse {
        CpuUse {
            cpu,
            window_s,
            busy_s: 1.0 + others_s,
            ours_s: 1.0,
            others_s,
            steal_s,
        }
    }

    fn of(cpus: Vec<CpuUse>, start: f64, end: f64) -> Interference {
        Interference {
            window_s: cpus.iter().map(|c| c.window_s).fold(0.0, f64::max),
            others_s: cpus.iter().map(|c| c.others_s).sum(),
            steal_s: cpus.iter().map(|c| c.steal_s).sum(),
            per_cpu_exact: true,
            cpus,
            load_average: LoadAverage {
                start: [start, 0.5, 0.25],
                end: [end, 0.5, 0.25],
            },
        }
    }

    #[test]
    fn a_cpu_past_the_threshold_marks_the_run_and_says_so() {
        let quiet = of(vec![cpu(0, 2.0, 0.1, 0.0), cpu(1, 2.0, 0.0, 0.1)], 0.1, 0.2);
        assert_eq!(quiet.worst(), None, "5% exactly is not past the threshold");
        assert_eq!(quiet.line(None), None);
        let busy = of(
            vec![cpu(0, 2.0, 0.6, 0.0), cpu(1, 2.0, 0.0, 0.3)],
            0.5,
            1.87,
        );
        assert_eq!(
            busy.worst(),
            Some(Mark {
                cpu: 0,
                share: 0.3,
                steal: false
            })
        );
        assert_eq!(
            busy.line(None).unwrap(),
            "interference: other processes took 30% of CPU 0, the hypervisor took 15% of CPU 1 (steal) during the measured phase (load average 0.50 at the start, 1.87 at the end); a busy machine's figures do not compare"
        );
        assert!(busy
            .line(Some("the target server is"))
            .unwrap()
            .contains("; the target server is among them if it runs on this machine)"));
    }

    #[test]
    fn parts_merge_to_their_exact_sums_and_the_largest_load_averages() {
        let a = of(vec![cpu(0, 2.0, 0.5, 0.0), cpu(1, 2.0, 0.0, 0.0)], 0.5, 3.0);
        let mut b = of(vec![cpu(1, 1.0, 0.25, 0.5)], 2.0, 1.0);
        b.per_cpu_exact = false;
        let m = Interference::merge(&[&a, &b]).unwrap();
        assert_eq!((m.window_s, m.others_s, m.steal_s), (3.0, 0.75, 0.5));
        assert!(!m.per_cpu_exact);
        assert_eq!(m.cpus.len(), 2);
        assert_eq!(m.cpus[1], {
            let mut c = cpu(1, 3.0, 0.25, 0.5);
            c.busy_s = 1.0 + 1.25;
            c.ours_s = 2.0;
            c
        });
        assert_eq!(m.load_average.start, [2.0, 0.5, 0.25]);
        assert_eq!(m.load_average.end, [3.0, 0.5, 0.25]);
        // A round under a hog still marks the merged point: 0.5 of CPU 0's 2 s.
        assert_eq!(m.worst().map(|w| w.cpu), Some(0));
        assert_eq!(Interference::merge(&[]), None);
    }
}
