//! Shards started by Slurm, for real (issue 14): munged, slurmctld and slurmd of our
//! own (a generated slurm.conf in a temp dir, ports below 32768, no systemd), then
//! `srun -n 3 wirebench echo ... --start-at ...`: three results, shards 0/3, 1/3 and
//! 2/3 read from SLURM_PROCID/SLURM_NTASKS, one run id (the job and step), counts
//! that add up to the whole run and to the server's own. Every daemon is stopped by
//! its PID when the test ends, also when it fails.

use crate::common::*;
use crate::shards::{assert_shards_add_up, merge_shards, start_in};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;
use wirebench::report::format::group;

/// munged, slurmctld and slurmd in the foreground, stopped (reverse order) on drop.
struct Cluster {
    conf: String,
    daemons: Vec<Proc>,
    dir: TempPath,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        while let Some(mut p) = self.daemons.pop() {
            p.terminate();
            // Proc::wait_for kills (SIGKILL) what has not left after SIGTERM.
            let _ = p.wait_for(Duration::from_secs(10));
        }
    }
}

fn uid_gid(user: &str) -> (u32, u32) {
    let id = |flag: &str| {
        let out = std::process::Command::new("id")
            .args([flag, user])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<u32>()
            .unwrap()
    };
    (id("-u"), id("-g"))
}

fn owned_dir(path: &Path, user: Option<&str>) {
    std::fs::create_dir_all(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    if let Some(u) = user {
        let (uid, gid) = uid_gid(u);
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    }
}

impl Cluster {
    fn start() -> Cluster {
        let dir = TempPath::new("slurm", "");
        let d = dir.path().to_path_buf();
        owned_dir(&d, None);
        owned_dir(&d.join("munge"), Some("munge"));
        owned_dir(&d.join("state"), Some("slurm"));
        owned_dir(&d.join("spool"), None);
        owned_dir(&d.join("log"), Some("slurm"));
        let s = |p: &str| d.join(p).to_string_lossy().into_owned();
        let sock = s("munge/sock");
        // Below the ephemeral range (Slurm's ports must stay out of it: a busy port
        // makes slurmd fail), each given out once per process, so no parallel test's
        // peer is handed the same one.
        let (ctld_port, d_port) = (free_port(), free_port());
        let conf = s("slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "ClusterName=wbtest\nSlurmctldHost=localhost\nSlurmctldPort={ctld_port}\nSlurmdPort={d_port}\n\
                 SlurmUser=slurm\nSlurmdUser=root\nAuthType=auth/munge\nAuthInfo=socket={sock}\nCredType=cred/munge\n\
                 StateSaveLocation={}\nSlurmdSpoolDir={}\nSlurmctldPidFile={}\nSlurmdPidFile={}\n\
                 SlurmctldLogFile={}\nSlurmdLogFile={}\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
                 SelectType=select/cons_tres\nMpiDefault=none\nReturnToService=2\n\
                 NodeName=localhost CPUs=2 RealMemory=20000\n\
                 PartitionName=debug Nodes=localhost Default=YES OverSubscribe=YES\n",
                s("state"), s("spool"), s("slurmctld.pid"), s("slurmd.pid"),
                s("log/slurmctld.log"), s("log/slurmd.log"),
            ),
        )
        .unwrap();
        let mut c = Cluster {
            conf: conf.clone(),
            daemons: Vec::new(),
            dir,
        };
        // munged as the munge user, in the foreground (setpriv execs: the PID is munged's).
        let (pid_file, log, seed) = (s("munge/pid"), s("munge/log"), s("munge/seed"));
        c.daemons.push(Proc::spawn(
            "setpriv",
            &[
                "--reuid",
                "munge",
                "--regid",
                "munge",
                "--clear-groups",
                "/usr/sbin/munged",
                "-F",
                "-f",
                "-S",
                &sock,
                "--pid-file",
                &pid_file,
                "--log-file",
                &log,
                "--seed-file",
                &seed,
            ],
            false,
        ));
        assert!(
            wait_until(Duration::from_secs(10), || Path::new(&sock).exists()),
            "munged did not start: {}",
            c.daemons[0].stderr()
        );
        c.daemons.push(Proc::spawn(
            "/usr/sbin/slurmctld",
            &["-D", "-f", &conf],
            false,
        ));
        c.daemons.push(Proc::spawn(
            "/usr/sbin/slurmd",
            &["-D", "-N", "localhost", "-f", &conf],
            false,
        ));
        let idle = wait_until(Duration::from_secs(30), || {
            let out = std::process::Command::new("sinfo")
                .args(["-h", "-o", "%T"])
                .env("SLURM_CONF", &conf)
                .output();
            out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        assert!(idle, "the Slurm node never became idle:\n{}", c.logs());
        c
    }

    fn logs(&self) -> String {
        ["log/slurmctld.log", "log/slurmd.log", "munge/log"]
            .iter()
            .map(|f| {
                let t = std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default();
                let tail: Vec<&str> = t.lines().rev().take(15).collect();
                format!(
                    "== {f}\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn slurm_here() -> bool {
    if unsafe { libc::geteuid() } != 0 {
        missing("starting munged and slurmd needs root");
        return false;
    }
    ["srun", "sinfo", "slurmctld", "slurmd", "munged", "setpriv"]
        .iter()
        .all(|p| have(p))
}

#[test]
fn srun_starts_three_shards_whose_counts_add_up() {
    if !slurm_here() {
        return;
    }
    let cluster = Cluster::start();
    let mut server = Served::start(&["--threads", "1"]);
    let out_dir = TempPath::new("slurm-results", "");
    std::fs::create_dir(out_dir.path()).unwrap();
    let at = start_in(Duration::from_secs(4));
    // Each task writes its own file, named by its SLURM_PROCID; no --shard is given.
    let script = format!(
        "exec \"$0\" echo {} -t 1 -c 10 -n 3000 --start-at {at} -q --json {}/shard-$SLURM_PROCID.json",
        server.addr(),
        out_dir.s()
    );
    // srun finds our cluster through SLURM_CONF (env execs srun: the PID is srun's).
    let conf = format!("SLURM_CONF={}", cluster.conf);
    let mut srun = Proc::spawn(
        "env",
        &[&conf, "srun", "-O", "-n", "3", "bash", "-c", &script, bin()],
        false,
    );
    let code = srun.finish(Duration::from_secs(90));
    assert_eq!(
        code,
        0,
        "srun failed\nstdout:\n{}\nstderr:\n{}\n{}",
        srun.stdout(),
        srun.stderr(),
        cluster.logs()
    );
    let results: Vec<Value> = (0..3)
        .map(|i| {
            let f = out_dir.path().join(format!("shard-{i}.json"));
            let t = std::fs::read_to_string(&f)
                .unwrap_or_else(|e| panic!("{}: {e}\n{}", f.display(), srun.stdout()));
            serde_json::from_str(&t).unwrap()
        })
        .collect();
    // The run id is Slurm's job and step, the same on every shard.
    let run_id = results[0]["shard"]["run_id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let (job, step) = run_id.split_once('.').expect("run id JOB.STEP");
    assert!(
        job.parse::<u64>().is_ok() && step.parse::<u64>().is_ok(),
        "{run_id}"
    );
    assert_shards_add_up(&results, 3000, 10, Some(&run_id));
    // The shards merge into one exact result: the whole run, once.
    let files: Vec<String> = (0..3)
        .map(|i| format!("{}/shard-{i}.json", out_dir.s()))
        .collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let merged = merge_shards(&files, &out_dir.path().join("merged.json"), 3000);
    assert_eq!(
        merged["merge"]["parts"][0]["shard"]["run_id"],
        run_id.as_str()
    );
    let line = server.stop_final_line();
    assert!(line.contains("accepts 10 closes 10 "), "{line}");
    let bytes = format!("bytes in {} out {}", group(3000 * 92), group(3000 * 92));
    assert!(line.contains(&bytes), "want '{bytes}' in: {line}");
}
