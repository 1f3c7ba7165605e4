//! CPU sets ("0", "0-1", "0,2-3"): parsed, checked against the CPUs this process may
//! use, and applied to a child with sched_setaffinity before it execs.

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CpuSet(pub Vec<usize>);

impl CpuSet {
    /// Parses a CPU list; no checks against the machine.
    pub fn parse(s: &str) -> Result<CpuSet, String> {
        let mut cpus = Vec::new();
        for part in s.split(',').map(str::trim) {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let num = |x: &str| {
                x.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("'{s}' is not a CPU list (try \"0\", \"0-1\" or \"0,2\")"))
            };
            let (a, b) = (num(a)?, num(b)?);
            if a > b || b >= libc::CPU_SETSIZE as usize {
                return Err(format!(
                    "'{s}' is not a CPU list (try \"0\", \"0-1\" or \"0,2\")"
                ));
            }
            cpus.extend(a..=b);
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(CpuSet(cpus))
    }

    /// Parses and checks that every CPU is one this process may run on.
    pub fn parse_usable(s: &str) -> Result<CpuSet, String> {
        let set = CpuSet::parse(s)?;
        let allowed = allowed_cpus();
        if let Some(bad) = set.0.iter().find(|c| !allowed.contains(c)) {
            return Err(format!(
                "CPU {bad} is not available here (usable CPUs: {})",
                CpuSet(allowed).to_string_list()
            ));
        }
        Ok(set)
    }

    pub fn to_string_list(&self) -> String {
        self.0
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Pins the calling process (meant for a forked child before exec: async-signal-safe).
    pub fn apply_to_self(&self) -> std::io::Result<()> {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET stays within it
        // because parse() refused CPUs >= CPU_SETSIZE.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in &self.0 {
                libc::CPU_SET(c, &mut set);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// The CPUs in this process's affinity mask.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: the set is plain memory that sched_getaffinity fills.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..crate::sys::affinity_cpus()).collect();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_ranges() {
        assert_eq!(CpuSet::parse("0").unwrap().0, vec![0]);
        assert_eq!(CpuSet::parse("0-2,5,1").unwrap().0, vec![0, 1, 2, 5]);
        assert!(CpuSet::parse("2-1").is_err());
        assert!(CpuSet::parse("a").is_err());
        assert!(CpuSet::parse("").is_err());
        assert!(CpuSet::parse("99999").is_err());
    }

    #[test]
    fn refuses_cpus_that_do_not_exist() {
        let e = CpuSet::parse_usable("1000").unwrap_err();
        assert!(e.contains("CPU 1000 is not available"), "{e}");
        assert!(CpuSet::parse_usable(&allowed_cpus()[0].to_string()).is_ok());
    }
}
