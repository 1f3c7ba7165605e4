//! Helpers shared by the integration tests: running the binary with a time bound,
//! child processes that are always killed, temp files, free ports, an in-process
//! server that always shuts down, and a foreign (std::net) echo server.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_wirebench")
}

/// One echo message with the default 64-byte payload, its 28-byte header included.
pub const ECHO_FRAME: u64 = 28 + 64;

/// How long a short run of the binary may take before the test kills it and fails: a
/// bound, not an assertion (a 30,000-connection run took over 60 s on a 2-core machine
/// busy with builds).
pub const RUN_LIMIT: Duration = Duration::from_secs(180);

// ---------------------------------------------------------------- temp files

static UNIQUE: AtomicU64 = AtomicU64::new(0);

/// A path under the temp dir, unique per process, call and time; removed on drop.
pub struct TempPath(pub PathBuf);

impl TempPath {
    pub fn new(tag: &str, ext: &str) -> Self {
        let n = UNIQUE.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        TempPath(std::env::temp_dir().join(format!(
            "wirebench-test-{tag}-{}-{n}-{nanos}{ext}",
            std::process::id()
        )))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn s(&self) -> &str {
        self.0.to_str().expect("temp path is UTF-8")
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if self.0.is_dir() {
            let _ = std::fs::remove_dir_all(&self.0);
        } else {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

/// The entries of a folder, sorted, so a walk of the source tree goes the same way every run.
pub fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    entries
}

/// A port free a moment ago, below the ephemeral range and given to no other test
/// (`net::free_port`): no parallel test's bind to port 0 or outgoing connection can
/// take it before the peer binds, so a readiness probe never reaches another test's
/// server, and a port where "nothing listens" stays that way.
pub fn free_port() -> u16 {
    wirebench::net::free_port::free_port("127.0.0.1").expect("a free port on 127.0.0.1")
}

/// Polls `f` every 20 ms until it holds or `limit` passes; returns whether it held.
pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Deterministic pseudo-random bytes (xorshift64*), for garbage and bulk data.
pub fn pseudo_random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    out
}

// ---------------------------------------------------------------- child processes

/// A child process with its stdout and stderr collected by threads (stdout also line by
/// line on a channel). Dropping it kills the child if it still runs, so no test leaks one.
pub struct Proc {
    child: Child,
    pub stdin: Option<ChildStdin>,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    lines: Receiver<String>,
    readers: Vec<JoinHandle<()>>,
    status: Option<ExitStatus>,
    pub what: String,
}

fn collect(
    mut r: impl Read + Send + 'static,
    into: Arc<Mutex<String>>,
    lines: Option<mpsc::Sender<String>>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut br = BufReader::new(&mut r);
        let mut line = Vec::new();
        loop {
            line.clear();
            match br.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line).into_owned();
                    into.lock().unwrap().push_str(&text);
                    if let Some(tx) = &lines {
                        let _ = tx.send(text.trim_end_matches(['\n', '\r']).to_string());
                    }
                }
            }
        }
    })
}

impl Proc {
    pub fn spawn(program: &str, args: &[&str], with_stdin: bool) -> Proc {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(if with_stdin {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, lines) = mpsc::channel();
        let readers = vec![
            collect(child.stdout.take().unwrap(), stdout.clone(), Some(tx)),
            collect(child.stderr.take().unwrap(), stderr.clone(), None),
        ];
        Proc {
            stdin: child.stdin.take(),
            child,
            stdout,
            stderr,
            lines,
            readers,
            status: None,
            what: format!("{program} {}", args.join(" ")),
        }
    }

    /// Runs the wirebench binary.
    pub fn wirebench(args: &[&str]) -> Proc {
        Proc::spawn(bin(), args, false)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Whether the child has exited (reaps it when it has).
    pub fn exited(&mut self) -> bool {
        if self.status.is_none() {
            self.status = self.child.try_wait().expect("try_wait");
        }
        self.status.is_some()
    }

    /// Waits up to `limit` for the child to exit; None (and the child killed) if it did not.
    pub fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let done = wait_until(limit, || self.exited());
        if !done {
            self.kill();
            return None;
        }
        // The child is gone: its pipes end, so the readers finish.
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        self.status
    }

    /// Waits for the child to exit and returns its exit code; fails the test (after
    /// killing it) if it runs longer than `limit` or dies from a signal.
    pub fn finish(&mut self, limit: Duration) -> i32 {
        match self.wait_for(limit) {
            None => panic!(
                "`{}` still ran after {limit:?}; killed it\nstdout:\n{}\nstderr:\n{}",
                self.what,
                self.stdout(),
                self.stderr()
            ),
            Some(s) => s.code().unwrap_or_else(|| {
                panic!(
                    "`{}` ended without an exit code ({s})\nstdout:\n{}\nstderr:\n{}",
                    self.what,
                    self.stdout(),
                    self.stderr()
                )
            }),
        }
    }

    /// The child's peak RSS so far (VmHWM), bytes; 0 once it is gone.
    pub fn peak_rss(&self) -> u64 {
        wirebench::sys::proc_fs::peak_rss_bytes(self.pid()).unwrap_or(0)
    }

    /// `finish`, sampling the child's peak RSS every 20 ms while it runs (VmHWM is gone
    /// once it exits). Returns the exit code and the peak RSS in bytes.
    pub fn finish_watching_memory(&mut self, limit: Duration) -> (i32, u64) {
        let mut peak = 0;
        wait_until(limit, || {
            peak = peak.max(self.peak_rss());
            self.exited()
        });
        (self.finish(limit), peak)
    }

    /// The next stdout line that starts with `prefix`, waiting up to `limit`.
    pub fn wait_line(&mut self, prefix: &str, limit: Duration) -> Option<String> {
        let end = Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return Some(l),
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
    }

    /// SIGKILL (std's Child::kill) and reap.
    pub fn kill(&mut self) {
        if !self.exited() {
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
    }

    /// SIGTERM to this child (by its own pid).
    pub fn terminate(&mut self) {
        if !self.exited() {
            // SAFETY: kill(2) on the pid of a child we started and have not reaped.
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
            }
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

// ---------------------------------------------------------------- runs with JSON results

/// A finished run of the binary: exit code, output, and the JSON result if one was written.
pub struct RunOut {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub json: Option<Value>,
}

impl RunOut {
    /// The finished run `p` that exited `code`, with the result it wrote to `file`
    /// (None when it wrote nothing; a file that is not JSON fails the test).
    pub fn of(p: &Proc, code: i32, file: &TempPath) -> RunOut {
        let json = std::fs::read_to_string(file.path())
            .ok()
            .filter(|t| !t.trim().is_empty())
            .map(|t| {
                serde_json::from_str(&t).unwrap_or_else(|e| panic!("result is not JSON: {e}\n{t}"))
            });
        RunOut {
            code,
            stdout: p.stdout(),
            stderr: p.stderr(),
            json,
        }
    }

    pub fn json(&self) -> &Value {
        self.json.as_ref().unwrap_or_else(|| {
            panic!(
                "no JSON result (exit {})\nstdout:\n{}\nstderr:\n{}",
                self.code, self.stdout, self.stderr
            )
        })
    }

    /// The run succeeded: exit 0, exactly `ok` correct replies, no failed request.
    #[track_caller]
    pub fn assert_clean(&self, ok: u64) {
        assert_eq!(self.code, 0, "{}", self.explain());
        assert_eq!(self.u("/totals/ok"), ok, "{}", self.explain());
        assert_eq!(self.u("/totals/errors"), 0, "{}", self.explain());
    }

    /// A number at a JSON pointer (`/totals/ok`), as u64.
    pub fn u(&self, pointer: &str) -> u64 {
        ju(self.json(), pointer)
    }

    pub fn explain(&self) -> String {
        format!(
            "exit {}\nstdout:\n{}\nstderr:\n{}\njson totals: {}\njson errors: {}",
            self.code,
            self.stdout,
            self.stderr,
            self.json
                .as_ref()
                .map(|j| j["totals"].to_string())
                .unwrap_or_default(),
            self.json
                .as_ref()
                .map(|j| j["errors"].to_string())
                .unwrap_or_default(),
        )
    }
}

/// A u64 at a JSON pointer; fails the test when absent or not an unsigned integer.
pub fn ju(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} is not an unsigned integer in {v}"))
}

/// Runs the binary with a JSON file but without -q: progress lines go to stderr (a
/// pipe here, so plain lines), the summary to stdout.
pub fn run_with_progress(args: &[&str]) -> RunOut {
    let file = TempPath::new("progress", ".json");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", file.s()]);
    let mut p = Proc::wirebench(&all);
    let code = p.finish(RUN_LIMIT);
    RunOut::of(&p, code, &file)
}

/// The progress lines of a run's stderr (plain lines: `[   1.0s ...`).
pub fn progress_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.starts_with("[ ")).collect()
}

/// At most how many requests an open-loop run had not sent when its deadline came:
/// how far it says it fell behind its schedule (`rate.behind_s`) at `rate_per_s`,
/// rounded up. The measured phase ends at the deadline by the clock, so a loaded
/// machine's loop that is behind then has not sent that much of its schedule.
pub fn behind_by(result: &Value, rate_per_s: f64) -> u64 {
    let behind_s = result["rate"]["behind_s"].as_f64().unwrap_or(0.0);
    (behind_s * rate_per_s).ceil() as u64
}

/// Runs `wirebench <args> --json FILE -q` to its end (bounded) and reads the result.
pub fn run_json(args: &[&str]) -> RunOut {
    run_json_watching_memory(args).0
}

/// `run_json`, also returning the run's peak RSS in bytes (VmHWM, sampled every 20 ms).
pub fn run_json_watching_memory(args: &[&str]) -> (RunOut, u64) {
    let file = TempPath::new("result", ".json");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", file.s(), "-q"]);
    let mut p = Proc::wirebench(&all);
    let (code, peak) = p.finish_watching_memory(RUN_LIMIT);
    (RunOut::of(&p, code, &file), peak)
}

// ---------------------------------------------------------------- servers

/// `wirebench serve echo` (or another protocol) as a child on a free port, started
/// once it says it listens.
pub struct Served {
    pub proc: Proc,
    pub port: u16,
    /// The "listening on" line.
    pub banner: String,
}

impl Served {
    pub fn start(extra: &[&str]) -> Served {
        Served::start_as("echo", extra)
    }

    /// `wirebench serve <protocol> <extra>` (echo, http, amqp).
    pub fn start_as(protocol: &str, extra: &[&str]) -> Served {
        // The port may be taken between choosing and binding: try a few.
        let mut last = String::new();
        let ready = format!("wirebench serve {protocol}: listening on");
        for _ in 0..5 {
            let port = free_port();
            let listen = format!("127.0.0.1:{port}");
            let mut args = vec!["serve", protocol, "--listen", &listen];
            args.extend_from_slice(extra);
            let mut proc = Proc::wirebench(&args);
            if let Some(banner) = proc.wait_line(&ready, Duration::from_secs(20)) {
                return Served { proc, port, banner };
            }
            proc.kill();
            last = format!("stdout:\n{}\nstderr:\n{}", proc.stdout(), proc.stderr());
            if !last.contains("already in use") {
                break;
            }
        }
        panic!(
            "`wirebench serve {protocol} {}` did not start\n{last}",
            extra.join(" ")
        );
    }

    /// SIGTERM, then the server's final counters line ("...; final: accepts ...").
    pub fn stop_final_line(&mut self) -> String {
        self.proc.terminate();
        let code = self.proc.finish(Duration::from_secs(30));
        let out = self.proc.stdout();
        assert_eq!(
            code,
            0,
            "server exit\nstdout:\n{out}\nstderr:\n{}",
            self.proc.stderr()
        );
        out.lines()
            .find(|l| l.contains("; final: accepts "))
            .unwrap_or_else(|| panic!("no final counters line:\n{out}"))
            .to_string()
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// A built-in server on 127.0.0.1 (a free port) with `threads` threads: plain TCP, no
/// limits, timeouts or pacing.
pub fn plain_server_config(threads: usize) -> wirebench::server::ServerConfig {
    wirebench::server::ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        threads,
        max_conns_per_thread: 0,
        read_buffer: 65536,
        tls: None,
        nodelay: true,
        debug: false,
        timeouts: Default::default(),
        pacing: wirebench::server::pacing::Pacing::off(),
        one_of_processes: false,
    }
}

/// The library's echo server, in this process; shut down on drop.
pub struct InProc {
    handle: Option<wirebench::server::ServerHandle>,
    pub addr: SocketAddr,
}

impl InProc {
    pub fn start(threads: usize) -> InProc {
        let handle = wirebench::server::start(
            plain_server_config(threads),
            wirebench::proto::echo::server::EchoHandlerFactory,
        )
        .expect("start the in-process echo server");
        InProc {
            addr: handle.addr,
            handle: Some(handle),
        }
    }

    pub fn addr_string(&self) -> String {
        self.addr.to_string()
    }

    pub fn totals(&self) -> wirebench::server::counters::ServerTotals {
        self.handle.as_ref().unwrap().totals()
    }

    /// Stops the server (joins its threads) and returns the final counters.
    pub fn shutdown(mut self) -> wirebench::server::counters::ServerTotals {
        self.handle.take().unwrap().shutdown()
    }
}

impl Drop for InProc {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            h.shutdown();
        }
    }
}

/// An echo peer that is not wirebench: std::net, one thread per connection, running
/// `serve_conn` on each. Stops accepting on drop.
pub struct Foreign {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl Foreign {
    pub fn start(serve_conn: fn(TcpStream)) -> Foreign {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind foreign server");
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let acceptor = std::thread::spawn(move || {
            for s in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(s) = s {
                    std::thread::spawn(move || serve_conn(s));
                }
            }
        });
        Foreign {
            addr,
            stop,
            acceptor: Some(acceptor),
        }
    }

    pub fn addr_string(&self) -> String {
        self.addr.to_string()
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocked accept so the thread sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }
}

/// The stderr of a usage failure: exactly one line, "wirebench: ...", no panic.
pub fn assert_one_line_error(stderr: &str, what: &str) -> String {
    assert!(!stderr.contains("panicked"), "{what}: panicked:\n{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: want one stderr line, got:\n{stderr}"
    );
    assert!(
        lines[0].starts_with("wirebench: "),
        "{what}: stderr must start with 'wirebench: ':\n{stderr}"
    );
    lines[0].to_string()
}

/// Whether the real peer `program` is on this machine (PATH, /usr/sbin, /sbin).
/// scripts/test.sh installs every peer. A bare `cargo test` without them skips
/// those tests and says so; under `CI=true` a missing peer fails the test, so CI
/// cannot pass by skipping.
pub fn have(program: &str) -> bool {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
        || ["/usr/sbin", "/sbin"]
            .iter()
            .any(|d| Path::new(d).join(program).is_file());
    if !found {
        missing(&format!(
            "{program} is not installed (scripts/test.sh installs it)"
        ));
    }
    found
}

/// A test that cannot run here: fails under `CI=true`, says SKIPPED otherwise.
#[track_caller]
pub fn missing(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true and {what}");
    }
    eprintln!("SKIPPED: {what}");
}

/// The compiled JSON schema `schema/NAME` (result.schema.json, ioevent.schema.json).
pub fn schema_validator(name: &str) -> jsonschema::Validator {
    let path = format!("{}/schema/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

/// A server's closing line (`... stopped after ...; final: ...`): its last line, past
/// the interference line a busy machine adds after it.
pub fn closing_line(out: &str) -> &str {
    out.lines()
        .rev()
        .find(|l| !l.contains(": interference: "))
        .unwrap_or("")
}

/// SIGTERM to a peer server of our own (tests/peers/*.py), then its counts line, the one
/// starting with `prefix` ("calls 10 ok 10 bytes 60"): the numbers after its 1st, 3rd
/// and 5th words.
pub fn peer_counts(mut p: Proc, prefix: &str, within: Duration) -> (u64, u64, u64) {
    p.terminate();
    p.finish(within);
    let out = p.stdout();
    let line = out
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| {
            panic!(
                "no '{prefix}' counts from the peer server:\n{out}\n{}",
                p.stderr()
            )
        });
    let w: Vec<&str> = line.split(' ').collect();
    let n = |i: usize| w[i].parse::<u64>().expect("a count");
    (n(1), n(3), n(5))
}

/// Echoes wirebench's echo frames on `s`, each read whole (4-byte length, then the
/// send time at bytes 20..28, ns from the client's run start), counting each in the
/// stage its send time lies in: `ends_ns` holds each stage's end, a time past the
/// last counting in the last.
pub fn echo_frames_by_stage(mut s: TcpStream, ends_ns: &[u64], counts: &[AtomicU64]) {
    use std::io::Write;
    let _ = s.set_nodelay(true);
    let mut held = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let last = ends_ns.len().saturating_sub(1);
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            return;
        }
        held.extend_from_slice(&buf[..n]);
        while held.len() >= 28 {
            let len = u32::from_be_bytes(held[..4].try_into().unwrap()) as usize;
            if held.len() < 4 + len {
                break;
            }
            let sent_ns = u64::from_be_bytes(held[20..28].try_into().unwrap());
            let stage = ends_ns.iter().position(|e| sent_ns < *e).unwrap_or(last);
            counts[stage].fetch_add(1, Ordering::Relaxed);
            if s.write_all(&held[..4 + len]).is_err() {
                return;
            }
            held.drain(..4 + len);
        }
    }
}

/// The summary's stage table in `stdout`: its header line and a row per stage, held
/// to that many lines.
pub fn stage_table(stdout: &str, stages: usize) -> Vec<&str> {
    let rows: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("stages:"))
        .take(stages + 1)
        .collect();
    assert_eq!(rows.len(), stages + 1, "{stdout}");
    rows
}
