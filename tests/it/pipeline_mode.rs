//! `--pipeline-mode`: the engine's pipelining policy. `sliding` refills each place a
//! reply frees; `burst` sends a connection's whole window in one write and the next only
//! when every reply of it is in (redis-benchmark's -P, evh_perf's pipelined batch).
//! Counts stay exact with burst (the last window partial), and a server that sees how
//! requests arrive tells the two apart.

use crate::common::*;
use crate::http_support::stat;
use std::io::{ErrorKind as IoKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[test]
fn burst_counts_are_exact_against_serve_echo_when_n_is_not_a_multiple_of_the_window() {
    let mut server = Served::start(&["--threads", "2"]);
    let addr = server.addr();
    // 2 threads x 7 connections, windows of 16: 1003 = 62 x 16 + 11, shared by two workers.
    let r = run_json(&[
        "echo",
        &addr,
        "-t",
        "2",
        "-c",
        "14",
        "--pipeline",
        "16",
        "--pipeline-mode",
        "burst",
        "-n",
        "1003",
    ]);
    r.assert_clean(1003);
    assert_eq!(r.u("/totals/sent"), 1003, "{}", r.explain());
    assert_eq!(r.u("/totals/in_flight"), 0, "{}", r.explain());
    assert_eq!(r.u("/totals/connections"), 14, "{}", r.explain());
    let j = r.json();
    assert_eq!(j["config"]["pipeline_mode"], "burst");
    assert_eq!(j["config"]["pipeline"], 16);
    let v = schema_validator("result.schema.json");
    let errors: Vec<String> = v.iter_errors(j).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    // The server read every frame once: nothing more went out than was counted.
    let last = server.stop_final_line();
    assert_eq!(stat(&last, "bytes in"), 1003 * ECHO_FRAME, "{last}");
}

#[test]
fn the_plan_text_and_config_name_the_mode_and_echo_keeps_sliding() {
    let mut p = Proc::wirebench(&[
        "echo",
        "-t",
        "1",
        "-c",
        "2",
        "--pipeline",
        "4",
        "--pipeline-mode",
        "burst",
        "-n",
        "10",
    ]);
    let (code, out, err) = (p.finish(Duration::from_secs(60)), p.stdout(), p.stderr());
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains(
            "pipeline:    4 per connection in one write, the next 4 when all are answered (burst)"
        ),
        "{out}"
    );
    let r = run_json(&["echo", "-t", "1", "-c", "2", "--pipeline", "4", "-n", "10"]);
    r.assert_clean(10);
    assert_eq!(r.json()["config"]["pipeline_mode"], "sliding");
}

/// What the recording server saw on all its connections.
#[derive(Default)]
struct Seen {
    /// Frames per blocking read, in order.
    per_read: Vec<u64>,
    /// Times new bytes had arrived while the server still owed replies.
    early: u64,
    frames: u64,
}

/// An echo peer that answers one frame at a time, 2 ms apart, and notes after each
/// answer but the last it owes whether the client sent more meanwhile: with burst it
/// cannot (its window is not answered yet); with sliding it does at once.
fn recording_peer(mut s: TcpStream, seen: Arc<Mutex<Seen>>) {
    let _ = s.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        let _ = s.set_nonblocking(false);
        let n = match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut frames = split_frames(&mut buf);
        seen.lock().unwrap().per_read.push(frames.len() as u64);
        while !frames.is_empty() {
            let f = frames.remove(0);
            if s.write_all(&f).is_err() {
                return;
            }
            seen.lock().unwrap().frames += 1;
            if frames.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
            // Still owing replies: did the client send anything meanwhile?
            let _ = s.set_nonblocking(true);
            match s.read(&mut chunk) {
                Ok(0) => return,
                Ok(n) => {
                    seen.lock().unwrap().early += 1;
                    buf.extend_from_slice(&chunk[..n]);
                    frames.extend(split_frames(&mut buf));
                }
                Err(e) if e.kind() == IoKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    }
}

/// Takes the whole echo frames off the front of `buf`.
fn split_frames(buf: &mut Vec<u8>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while buf.len() >= 4 {
        let len = 4 + u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        if buf.len() < len {
            break;
        }
        out.push(buf.drain(..len).collect());
    }
    out
}

fn run_against_recorder(mode: &str) -> (RunOut, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(Mutex::new(Seen::default()));
    // Ends once all 3 peers have seen their connection's end: what they saw is complete.
    let peers = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let peers: Vec<_> = listener
                .incoming()
                .take(3)
                .flatten()
                .map(|s| {
                    let seen = seen.clone();
                    std::thread::spawn(move || recording_peer(s, seen))
                })
                .collect();
            for p in peers {
                let _ = p.join();
            }
        })
    };
    // One worker, 3 connections, windows of 8: 100 = 12 x 8 + 4.
    let r = run_json(&[
        "echo",
        &addr,
        "-t",
        "1",
        "-c",
        "3",
        "--pipeline",
        "8",
        "--pipeline-mode",
        mode,
        "-n",
        "100",
    ]);
    // The connections closed with the run, so the peers end at their EOF; a peer that
    // was slow to note its last frame (a loaded machine) is waited for, not raced.
    let done = wait_until(RUN_LIMIT, || peers.is_finished());
    assert!(done, "the recording peers did not end\n{}", r.explain());
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    (r, seen)
}

#[test]
fn burst_sends_a_window_only_once_all_of_it_is_answered() {
    let (r, seen) = run_against_recorder("burst");
    r.assert_clean(100);
    assert_eq!(r.u("/totals/sent"), 100, "{}", r.explain());
    assert_eq!(seen.frames, 100);
    assert_eq!(seen.early, 0, "bytes came while replies were owed");
    // Every read brought one whole window: twelve of 8 and the last, partial one of 4.
    let mut reads = seen.per_read.clone();
    reads.sort_unstable();
    let mut want = vec![4u64];
    want.extend([8u64; 12]);
    assert_eq!(reads, want, "frames per read: {:?}", seen.per_read);
}

#[test]
fn sliding_refills_while_the_window_is_still_being_answered() {
    // The same peer tells the policies apart: sliding sends as soon as a place frees.
    let (r, seen) = run_against_recorder("sliding");
    r.assert_clean(100);
    assert_eq!(seen.frames, 100);
    assert!(seen.early > 0, "frames per read: {:?}", seen.per_read);
}
