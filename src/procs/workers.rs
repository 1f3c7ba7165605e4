//! Worker processes: this binary re-executed with `WIREBENCH_WORKER` set. A worker
//! reads commands as lines on its stdin and writes JSON lines on its stdout; the
//! parent reads every worker's lines from one channel. Workers sit in their own
//! process group (Ctrl-C reaches the parent only, which forwards a stop), die with the
//! parent (PR_SET_PDEATHSIG), and are killed and reaped when `Workers` is dropped, so
//! nothing is ever left behind.

use super::WORKER_ENV;
use crate::error::{Error, Result};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// What came from a worker.
#[derive(Debug)]
pub enum Msg {
    Line(usize, String),
    /// The worker closed its stdout (it exited or is about to).
    Gone(usize),
}

struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
}

pub struct Workers {
    workers: Vec<Worker>,
    rx: Receiver<Msg>,
}

/// How to start workers: their command line and extra environment (a serialized plan).
#[derive(Clone, Debug, Default)]
pub struct Launch {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// Starts `n` workers of `role`; `args(i)` gives worker i's command-line arguments and
/// `env(i)` its extra environment.
pub fn spawn(
    role: &str,
    n: usize,
    args: impl Fn(usize) -> Vec<String>,
    env: impl Fn(usize) -> Vec<(String, String)>,
) -> Result<Workers> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::runtime(format!("cannot find this program to start workers: {e}")))?;
    let (tx, rx) = mpsc::channel();
    let mut workers = Workers {
        workers: Vec::with_capacity(n),
        rx,
    };
    let parent = std::process::id() as i32;
    for i in 0..n {
        let mut cmd = Command::new(&exe);
        cmd.args(args(i))
            .env(WORKER_ENV, role)
            .envs(env(i))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // The parent may have died before prctl took effect.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| Error::runtime(format!("cannot start worker process {i}: {e}")))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child.stdin.take();
        workers.workers.push(Worker { child, stdin });
        let tx = tx.clone();
        std::thread::Builder::new()
            .name(format!("wb-worker-{i}"))
            .stack_size(64 * 1024)
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    match line {
                        Ok(l) => {
                            if tx.send(Msg::Line(i, l)).is_err() {
                                return;
                            }
                        }
                        Err(_) => break,
                    }
                }
                let _ = tx.send(Msg::Gone(i));
            })
            .map_err(|e| Error::runtime(format!("cannot start a reader thread: {e}")))?;
    }
    Ok(workers)
}

impl Workers {
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.workers.is_empty()
    }

    pub fn pids(&self) -> Vec<u32> {
        self.workers.iter().map(|w| w.child.id()).collect()
    }

    /// The next message, or None after `wait`.
    pub fn recv(&self, wait: Duration) -> Option<Msg> {
        match self.rx.recv_timeout(wait) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Sends one command line to every worker still listening.
    pub fn tell_all(&mut self, line: &str) {
        // A worker that already exited makes the write fail with EPIPE; SIGPIPE (left
        // at its default so `| head` ends quietly) must not kill the parent for it.
        without_sigpipe(|| {
            for w in &mut self.workers {
                if let Some(s) = &mut w.stdin {
                    if writeln!(s, "{line}").and_then(|_| s.flush()).is_err() {
                        w.stdin = None;
                    }
                }
            }
        });
    }

    /// Closes every worker's stdin: a worker takes that as "stop".
    pub fn close_stdin(&mut self) {
        for w in &mut self.workers {
            w.stdin = None;
        }
    }

    /// Waits up to `limit` for every worker to exit, then kills the rest. Returns how
    /// each one ended.
    pub fn reap(&mut self, limit: Duration) -> Vec<Ended> {
        self.close_stdin();
        let end = Instant::now() + limit;
        let mut out = Vec::with_capacity(self.workers.len());
        for w in &mut self.workers {
            loop {
                match w.child.try_wait() {
                    Ok(Some(st)) => {
                        out.push(if st.success() {
                            Ended::Ok
                        } else {
                            Ended::Failed
                        });
                        break;
                    }
                    Ok(None) if Instant::now() < end => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    _ => {
                        let _ = w.child.kill();
                        let _ = w.child.wait();
                        out.push(Ended::Killed);
                        break;
                    }
                }
            }
        }
        out
    }
}

/// How a worker process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Ok,
    /// It exited with a failure status.
    Failed,
    /// It did not exit in time and was killed.
    Killed,
}

impl Drop for Workers {
    fn drop(&mut self) {
        for w in &mut self.workers {
            if let Ok(None) = w.child.try_wait() {
                let _ = w.child.kill();
            }
            let _ = w.child.wait();
        }
    }
}

/// In a worker: a thread that reads command lines from stdin and hands them to `on_line`;
/// end of input (the parent closed it or died) calls `on_eof`, then drops `on_line`.
pub fn read_commands(
    mut on_line: impl FnMut(&str) + Send + 'static,
    on_eof: impl FnOnce() + Send + 'static,
) -> Result<()> {
    std::thread::Builder::new()
        .name("wb-commands".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            let stdin = std::io::stdin();
            for line in stdin.lock().lines() {
                match line {
                    Ok(l) => on_line(l.trim()),
                    Err(_) => break,
                }
            }
            on_eof();
        })
        .map(|_| ())
        .map_err(|e| Error::runtime(format!("a worker cannot read its commands: {e}")))
}

/// In a worker: writes one JSON line to stdout for the parent.
pub fn emit<T: serde::Serialize>(msg: &T) {
    if let Ok(text) = serde_json::to_string(msg) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }
}

/// Runs `f` with SIGPIPE blocked on this thread, then discards a SIGPIPE it raised (a
/// write to a closed pipe sends it to the writing thread) before unblocking.
fn without_sigpipe<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: signal-mask calls on valid, initialized sigset_t values.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        let mut old = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let out = f();
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        while libc::sigtimedwait(&set, std::ptr::null_mut(), &zero) > 0 {}
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        out
    }
}
