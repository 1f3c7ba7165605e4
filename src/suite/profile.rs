//! --profile: `perf record -e cpu-clock` (software event: no hardware counters here)
//! on every process of a server, and a flame graph SVG of it drawn with inferno.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub struct Recording {
    child: Child,
    data: PathBuf,
}

/// Starts recording the given processes (all their threads), with call graphs.
pub fn start(pids: &[i32], data: &Path) -> Result<Recording> {
    let list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
    let child = Command::new("perf")
        .args(["record", "-e", "cpu-clock", "-F", "999", "-g", "--pid"])
        .arg(list.join(","))
        .arg("-o")
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            Error::runtime(format!(
                "--profile: cannot start perf ({e}); install linux-perf"
            ))
        })?;
    Ok(Recording {
        child,
        data: data.to_path_buf(),
    })
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
