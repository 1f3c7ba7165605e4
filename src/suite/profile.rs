//! --profile: `perf record -e cpu-clock` (software event: no hardware counters here)
//! on every process of a server, and a flame graph SVG of it drawn with inferno.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub struct Recording {
    child: Child,
    data: PathBuf,
    /// Our ends of perf's control and ack pipes, open while it records (an end of
    /// its control input is not what perf expects before SIGINT).
    _control: Option<(std::fs::File, std::fs::File)>,
}

/// A pipe, (read end, write end), closed on exec.
fn pipe() -> std::io::Result<(std::fs::File, std::fs::File)> {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors it creates, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are fresh descriptors owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((r.into(), w.into()))
}

/// Most time perf may take to start recording before the load goes ahead without it.
const PERF_START_LIMIT_MS: i32 = 30_000;

/// Starts recording the given processes (all their threads), with call graphs, and
/// returns once perf records: it starts with its events off (`-D -1`) and answers
/// "ack" on a pipe once it has turned them on when told. Without that handshake the
/// load ran while perf was still starting (on a loaded machine longer than a 2 s
/// load: "perf recorded no samples").
pub fn start(pids: &[i32], data: &Path) -> Result<Recording> {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
    let pipe_err =
        |e: std::io::Error| Error::runtime(format!("--profile: cannot make a pipe: {e}"));
    let (ctl_r, mut ctl_w) = pipe().map_err(pipe_err)?;
    let (mut ack_r, ack_w) = pipe().map_err(pipe_err)?;
    let (ctl_fd, ack_fd) = (ctl_r.as_raw_fd(), ack_w.as_raw_fd());
    let mut cmd = Command::new("perf");
    cmd.args(["record", "-e", "cpu-clock", "-F", "999", "-g", "-D", "-1"])
        .arg(format!("--control=fd:{ctl_fd},{ack_fd}"))
        .arg("--pid")
        .arg(list.join(","))
        .arg("-o")
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: fcntl only, between fork and exec: perf keeps its two pipe ends.
    unsafe {
        cmd.pre_exec(move || {
            for fd in [ctl_fd, ack_fd] {
                if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| {
        Error::runtime(format!(
            "--profile: cannot start perf ({e}); install linux-perf"
        ))
    })?;
    // Only perf holds these ends now: its exit ends the wait for "ack" below.
    drop((ctl_r, ack_w));
    let mut rec = Recording {
        child,
        data: data.to_path_buf(),
        _control: None,
    };
    let mut ack = [0u8; 16];
    let mut pfd = libc::pollfd {
        fd: ack_r.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let acked = ctl_w.write_all(b"enable\n").is_ok()
        // SAFETY: one pollfd that lives across the call.
        && unsafe { libc::poll(&mut pfd, 1, PERF_START_LIMIT_MS) } == 1
        && ack_r
            .read(&mut ack)
            .is_ok_and(|n| ack[..n].starts_with(b"ack"));
    if !acked {
        let _ = rec.child.kill();
        let _ = rec.child.wait();
        return Err(Error::runtime(format!(
            "--profile: perf did not start recording within {} s",
            PERF_START_LIMIT_MS / 1000
        )));
    }
    rec._control = Some((ctl_w, ack_r));
    Ok(rec)
}

impl Recording {
    /// Stops perf (SIGINT makes it write its file) and draws the flame graph.
    pub fn finish(mut self, title: &str, svg: &Path) -> Result<()> {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let status = self
            .child
            .wait()
            .map_err(|e| Error::runtime(format!("perf: {e}")))?;
        if !self.data.exists() {
            return Err(Error::runtime(format!(
                "perf record wrote nothing ({status})"
            )));
        }
        let script = Command::new("perf")
            .args(["script", "-i"])
            .arg(&self.data)
            .stderr(Stdio::null())
            .output()
            .map_err(|e| Error::runtime(format!("perf script: {e}")))?;
        flame_graph(&script.stdout, title, svg)
    }
}

/// Folds `perf script` output and writes a flame graph SVG.
pub fn flame_graph(perf_script: &[u8], title: &str, svg: &Path) -> Result<()> {
    use inferno::collapse::Collapse;
    let mut folded = Vec::new();
    inferno::collapse::perf::Folder::default()
        .collapse(perf_script, &mut folded)
        .map_err(|e| Error::runtime(format!("cannot fold the perf samples: {e}")))?;
    if folded.is_empty() {
        return Err(Error::runtime("perf recorded no samples".to_string()));
    }
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    // perf script reports each cpu-clock sample with its period in nanoseconds.
    opts.count_name = "ns of CPU (cpu-clock)".into();
    let file = std::fs::File::create(svg)
        .map_err(|e| Error::runtime(format!("cannot write {}: {e}", svg.display())))?;
    inferno::flamegraph::from_reader(&mut opts, folded.as_slice(), std::io::BufWriter::new(file))
        .map_err(|e| Error::runtime(format!("cannot draw the flame graph: {e}")))
}
