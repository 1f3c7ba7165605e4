//! The live terminal view, driven under a real pseudo-terminal (openpty): its frames
//! redraw in place, the final frame holds the result's own counts, no exit path (the
//! run's end, Ctrl-C, a failed run) changes the terminal's modes, and with stdout not
//! a terminal no escape code is written at all.

use crate::common::{bin, free_port, ju, TempPath, RUN_LIMIT};
use serde_json::Value;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a run under a pseudo-terminal wrote, how it ended, and the terminal's modes
/// before and after it.
struct Seen {
    text: String,
    status: ExitStatus,
    modes_before: Vec<u8>,
    modes_after: Vec<u8>,
}

/// The terminal's modes (termios), as bytes to compare.
fn modes(fd: &OwnedFd) -> Vec<u8> {
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::tcgetattr(fd.as_raw_fd(), &mut t) }, 0);
    let bytes = unsafe {
        std::slice::from_raw_parts(
            &t as *const libc::termios as *const u8,
            std::mem::size_of::<libc::termios>(),
        )
    };
    bytes.to_vec()
}

/// Runs wirebench with `args`, stdout and stderr on a pseudo-terminal of 100 columns;
/// `during` gets the child's pid and the output so far until it returns true once.
fn under_pty(args: &[&str], mut during: impl FnMut(u32, &str) -> bool) -> Seen {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 50,
        ws_col: 100,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(r, 0, "openpty");
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let modes_before = modes(&slave);
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave.try_clone().unwrap())
        .spawn()
        .unwrap();
    let text = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let reader = {
        let text = text.clone();
        let mut m = File::from(master);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO once every copy of the slave is closed: the end.
            while let Ok(n) = m.read(&mut buf) {
                if n == 0 {
                    break;
                }
                text.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let start = Instant::now();
    let mut done_during = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < RUN_LIMIT, "the run did not end");
        if !done_during {
            let so_far = String::from_utf8_lossy(&text.lock().unwrap()).into_owned();
            done_during = during(child.id(), &so_far);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let modes_after = modes(&slave);
    drop(slave);
    reader.join().unwrap();
    let text = String::from_utf8(text.lock().unwrap().clone()).unwrap();
    Seen {
        text,
        status,
        modes_before,
        modes_after,
    }
}

/// The frames drawn, in order: each starts by erasing what follows the cursor.
fn frames(text: &str) -> Vec<&str> {
    text.split("\x1b[0J").skip(1).collect()
}

/// The number after `label` on the frame's line that starts with it.
fn figure(frame: &str, label: &str) -> u64 {
    let line = frame
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} line in {frame:?}"));
    line[label.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("{line:?}"))
}

fn result(json: &TempPath) -> Value {
    serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap()).unwrap()
}

/// The final frame: the last, marked done, its counts the result's, and what every
/// frame says only grows.
fn check_final_frame(seen: &Seen, r: &Value) {
    let all = frames(&seen.text);
    let last = all.last().expect("no frame drawn");
    assert!(last.lines().next().unwrap().ends_with("done"), "{last:?}");
    assert_eq!(figure(last, "ok "), ju(r, "/totals/ok"), "{last}");
    assert_eq!(figure(last, "errors "), ju(r, "/totals/errors"), "{last}");
    assert_eq!(figure(last, "ok ") > 0, ju(r, "/totals/ok") > 0);
    let oks: Vec<u64> = all.iter().map(|f| figure(f, "ok ")).collect();
    assert!(oks.windows(2).all(|w| w[0] <= w[1]), "{oks:?}");
    // The terminal as found: no mode changed, no private mode set (alternate screen,
    // hidden cursor), the cursor on a fresh line after the frame.
    assert_eq!(
        seen.modes_before, seen.modes_after,
        "the terminal's modes changed"
    );
    assert!(!seen.text.contains("\x1b[?"), "a private mode was set");
    // (The terminal's line discipline writes each newline as CR LF.)
    assert!(last.contains("done\r\n"), "{last:?}");
}

#[test]
fn frames_redraw_in_place_and_the_last_holds_the_results_counts() {
    let json = TempPath::new("tui", "json");
    let seen = under_pty(
        &[
            "echo",
            "-c",
            "4",
            "-d",
            "2s",
            "--interval",
            "200ms",
            "--json",
            json.s(),
        ],
        |_, _| true,
    );
    assert!(seen.status.success(), "{}", seen.text);
    let r = result(&json);
    check_final_frame(&seen, &r);
    let all = frames(&seen.text);
    assert!(all.len() >= 3, "{} frames: {}", all.len(), seen.text);
    // Every frame after the first moves up over the one before, exactly its lines.
    for pair in all.windows(2) {
        let lines = pair[0].matches('\n').count();
        assert!(
            pair[0].ends_with(&format!("\x1b[{lines}F")),
            "{:?}",
            pair[0]
        );
    }
    let last = all.last().unwrap();
    let whole = last.lines().find(|l| l.starts_with(" whole run")).unwrap();
    let p99 = whole.split_whitespace().nth(4).unwrap().replace(',', "");
    let want = r
        .pointer("/latency_us/p99")
        .and_then(Value::as_f64)
        .unwrap();
    assert!(
        (p99.parse::<f64>().unwrap() - want).abs() <= want * 0.01 + 0.05,
        "frame p99 {p99}, result {want}"
    );
    // The histogram's rows hold every reply timed.
    let timed: u64 = last
        .lines()
        .filter(|l| l.contains(" |"))
        .map(|l| {
            l.rsplit(' ')
                .next()
                .unwrap()
                .replace(',', "")
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(timed, ju(&r, "/latency_us/count"), "{last}");
}

#[test]
fn ctrl_c_ends_with_a_final_frame_and_the_terminal_as_found() {
    let json = TempPath::new("tui-int", "json");
    let seen = under_pty(
        &[
            "echo",
            "-c",
            "2",
            "-d",
            "60s",
            "--interval",
            "100ms",
            "--json",
            json.s(),
        ],
        |pid, so_far| {
            // Interrupted once a few frames are up.
            if frames(so_far).len() >= 3 {
                unsafe { libc::kill(pid as i32, libc::SIGINT) };
                return true;
            }
            false
        },
    );
    let r = result(&json);
    check_final_frame(&seen, &r);
    assert!(seen.status.code().is_some(), "{:?}", seen.status);
}

#[test]
fn a_failed_run_leaves_the_terminal_as_found() {
    // Nothing listens at a free loopback port: every attempt fails, the run falls short.
    let target = format!("127.0.0.1:{}", free_port());
    let json = TempPath::new("tui-fail", "json");
    let seen = under_pty(
        &["echo", &target, "-c", "1", "-d", "1s", "--json", json.s()],
        |_, _| true,
    );
    assert_eq!(seen.status.code(), Some(1), "{}", seen.text);
    let r = result(&json);
    check_final_frame(&seen, &r);
    let last = frames(&seen.text).pop().unwrap();
    assert!(figure(last, "errors    0  connect errors ") > 0, "{last}");
}

#[test]
fn no_tui_under_a_terminal_draws_no_frame() {
    let seen = under_pty(&["echo", "-c", "1", "-d", "1s", "--no-tui"], |_, _| true);
    assert!(seen.status.success(), "{}", seen.text);
    assert!(frames(&seen.text).is_empty(), "{}", seen.text);
}

#[test]
fn with_stdout_not_a_terminal_no_escape_code_is_written() {
    let out = Command::new(bin())
        .args(["echo", "-c", "1", "-d", "1s", "--tui"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(
        !stdout.contains('\x1b') && !stderr.contains('\x1b'),
        "{stdout}{stderr}"
    );
    // Plain progress lines instead, as without the view.
    assert!(stderr.contains("] echoed "), "{stderr}");
    assert!(stdout.contains("echoed"), "{stdout}");
}
