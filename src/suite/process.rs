//! Child processes the suite starts (servers, setup steps, generators): each in a
//! process group of its own, pinned before exec, and stopped as a whole family:
//! SIGTERM, then SIGKILL after a grace period, until no member is left.

use super::cpuset::CpuSet;
use crate::sys::proc_fs::{all_stats, ProcStat};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A started child and the process group it leads.
pub struct Family {
    pub child: Child,
    pub pid: i32,
    status: Option<ExitStatus>,
}

/// What to start: argv, directory, environment, CPUs, where output goes.
pub struct Launch<'a> {
    pub argv: Vec<String>,
    pub cwd: Option<&'a Path>,
    pub env: Option<&'a BTreeMap<String, String>>,
    pub cpus: Option<&'a CpuSet>,
    pub stdout: Stdio,
    pub stderr: Stdio,
}

/// argv for a shell command line; `exec` keeps a simple command as the group leader.
pub fn shell(cmd: &str) -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), format!("exec {cmd}")]
}

impl Family {
    pub fn start(l: Launch<'_>) -> std::io::Result<Family> {
        let (prog, args) = l
            .argv
            .split_first()
            .ok_or_else(|| std::io::Error::other("empty command"))?;
        let mut cmd = Command::new(prog);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(l.stdout)
            .stderr(l.stderr);
        if let Some(d) = l.cwd {
            cmd.current_dir(d);
        }
        if let Some(env) = l.env {
            cmd.envs(env);
        }
        let cpus = l.cpus.cloned();
        // SAFETY: the closure runs in the forked child before exec and calls only
        // async-signal-safe functions (setpgid, prctl, sched_setaffinity).
        unsafe {
            cmd.pre_exec(move || {
                // Own group: Ctrl-C at the terminal reaches the suite, which stops the
                // family itself; and the whole family can be signalled at once.
                if libc::setpgid(0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // If the suite itself is killed, its direct children go too.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if let Some(c) = &cpus {
                    c.apply_to_self()?;
                }
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        let pid = child.id() as i32;
        Ok(Family {
            child,
            pid,
            status: None,
        })
    }

    /// The leader's exit status once it has exited (reaps it).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Every live process of the family: the group, plus descendants that left it.
    pub fn members(&self) -> Vec<i32> {
        family_of(self.pid)
    }

    fn signal_all(&self, sig: i32) {
        // SAFETY: kill with a negative pid signals our own child's group.
        unsafe { libc::kill(-self.pid, sig) };
        // Only members that left the group: one signal each. A second SIGTERM or
        // SIGINT is "exit now" to wirebench (its server's final counters and a
        // load's report would be lost).
        for p in self.members() {
            // SAFETY: p is a live descendant of a process we started.
            if unsafe { libc::getpgid(p) } != self.pid {
                // SAFETY: as above.
                unsafe { libc::kill(p, sig) };
            }
        }
    }

    /// Sends `sig` to the group (the generator gets SIGINT to stop and report).
    pub fn signal(&self, sig: i32) {
        self.signal_all(sig);
    }

    /// SIGTERM, wait up to `grace`, then SIGKILL; returns whether SIGKILL was needed.
    pub fn stop(&mut self, grace: Duration) -> bool {
        if self.exited().is_some() && self.members().is_empty() {
            return false;
        }
        self.signal_all(libc::SIGTERM);
        if self.wait_gone(grace) {
            return false;
        }
        self.signal_all(libc::SIGKILL);
        self.wait_gone(Duration::from_secs(5));
        true
    }

    /// Waits until the leader is reaped and no member is left.
    pub fn wait_gone(&mut self, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        loop {
            let leader_done = self.exited().is_some();
            if leader_done && self.members().is_empty() {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Family {
    /// Never leave a family behind, whatever path dropped it.
    fn drop(&mut self) {
        if self.exited().is_none() || !self.members().is_empty() {
            self.signal_all(libc::SIGKILL);
            self.wait_gone(Duration::from_secs(5));
        }
    }
}

/// Live (non-zombie) members: process group `leader`, and descendants of `leader`.
pub fn family_stats(leader: i32) -> Vec<ProcStat> {
    let all = all_stats();
    let mut keep: Vec<i32> = vec![leader];
    let mut grew = true;
    while grew {
        grew = false;
        for p in &all {
            if !keep.contains(&p.pid) && (p.pgrp == leader || keep.contains(&p.ppid)) {
                keep.push(p.pid);
                grew = true;
            }
        }
    }
    all.into_iter()
        .filter(|p| keep.contains(&p.pid) && !p.zombie)
        .collect()
}

pub fn family_of(leader: i32) -> Vec<i32> {
    family_stats(leader).iter().map(|p| p.pid).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::proc_fs::alive;

    #[test]
    fn stop_kills_a_child_that_ignores_sigterm_and_its_children() {
        let mut f = Family::start(Launch {
            argv: shell("sh -c 'trap \"\" TERM; sleep 60 & trap \"\" TERM; sleep 60'"),
            cwd: None,
            env: None,
            cpus: None,
            stdout: Stdio::null(),
            stderr: Stdio::null(),
        })
        .unwrap();
        // Both sleeps have exec'd (so both shells set their trap first): only then does
        // the family ignore SIGTERM. A fixed wait raced a loaded machine's fork.
        let sleeps = |members: &[i32]| {
            members
                .iter()
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/comm"))
                        .is_ok_and(|c| c.trim_end() == "sleep")
                })
                .count()
        };
        let end = std::time::Instant::now() + Duration::from_secs(30);
        while sleeps(&f.members()) < 2 && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        let members = f.members();
        assert_eq!(sleeps(&members), 2, "{members:?}");
        assert!(f.stop(Duration::from_millis(300)), "needed SIGKILL");
        for p in members {
            assert!(!alive(p), "pid {p} survived");
        }
    }
}
