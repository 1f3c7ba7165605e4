//! Where a load's connections come from: a load of 1,024 connections or more to an
//! IPv4 loopback target spreads them over the loopback sources by default (so the
//! kernel's ephemeral port search never walks a full pair), says so in its plan and
//! its JSON, and `--source` overrides it. A server of the test's own records each
//! connection's source address, so the counts are the server's, not the client's.

use crate::common::*;
use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A byte-echo server on one thread (non-blocking sockets, polled) that counts, by
/// source address, the connections that closed; it ends once `n` of them did (or
/// after 60 s).
///
/// Why "closed" and not "accepted": a burst of a thousand connects can overflow a
/// listen queue, the kernel then answers with SYN cookies and can hand `accept` a
/// second socket for one connection (its cookie validated twice); that socket never
/// sees a byte or a close (seen here with std's backlog of 128: 1,070 accepts for
/// 1,024 connects, the client's TcpActiveOpens exactly 1,024). The deep backlog makes
/// that rare; counting closes makes the count the client's. (Not "carried a request":
/// with `-n` equal to `-c`, a connection up early may send two of the plan's messages
/// and one up late none.)
fn echo_counting_sources(n: usize) -> (String, JoinHandle<BTreeMap<IpAddr, u64>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    // std listens with a backlog of 128; ask for the system's maximum (somaxconn).
    assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 4096) }, 0);
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = std::thread::spawn(move || {
        let mut seen = BTreeMap::new();
        // Each open connection and its source.
        let mut open: Vec<(TcpStream, IpAddr)> = Vec::new();
        let mut closed = 0;
        let mut buf = [0u8; 4096];
        let limit = Instant::now() + Duration::from_secs(60);
        while closed < n && Instant::now() < limit {
            let mut busy = false;
            while let Ok((s, peer)) = listener.accept() {
                s.set_nonblocking(true).unwrap();
                open.push((s, peer.ip()));
                busy = true;
            }
            open.retain_mut(|(s, ip)| {
                let keep = loop {
                    match s.read(&mut buf) {
                        Ok(0) => break false,
                        Ok(k) => {
                            busy = true;
                            let mut left = &buf[..k];
                            while !left.is_empty() {
                                match s.write(left) {
                                    Ok(w) => left = &left[w..],
                                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                                        std::thread::sleep(Duration::from_millis(1))
                                    }
                                    Err(_) => break,
                                }
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break true,
                        Err(_) => break false,
                    }
                };
                if !keep {
                    *seen.entry(*ip).or_insert(0u64) += 1;
                    closed += 1;
                }
                keep
            });
            if !busy {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        seen
    });
    (addr, server)
}

#[test]
fn a_large_loopback_load_spreads_over_loopback_sources_and_says_so() {
    const N: usize = 1024;
    let (addr, server) = echo_counting_sources(N);
    let out = run_json(&["echo", &addr, "-t", "1", "-c", "1024", "-n", "1024"]);
    out.assert_clean(1024);
    assert_eq!(out.u("/totals/connections"), 1024, "{}", out.explain());
    let chosen = &out.json()["config"]["sources"];
    assert_eq!(chosen["from"], "loopback", "{}", out.explain());
    let count = chosen["count"].as_u64().unwrap();
    assert!(count > 1, "{chosen}");
    let seen = server.join().unwrap();
    // Every connection seen once, from the chosen sources only, taken in turn:
    // connection n from the (n mod count)-th.
    assert_eq!(seen.values().sum::<u64>(), 1024, "{}", out.explain());
    assert_eq!(seen.len() as u64, count.min(1024), "{seen:?}");
    assert!(!seen.contains_key(&"127.0.0.1".parse::<IpAddr>().unwrap()));
    let (lo, hi) = (1024 / count, 1024 / count + 1);
    assert!(seen.values().all(|&c| c == lo || c == hi), "{seen:?}");
    let more = seen.values().filter(|&&c| c == hi).count() as u64;
    assert_eq!(more, 1024 % count, "{seen:?}");
}

#[test]
fn source_overrides_the_choice_and_is_said_in_the_plan() {
    // Given: three sources, two connections each.
    let (addr, server) = echo_counting_sources(6);
    let mut p = Proc::wirebench(&[
        "echo",
        &addr,
        "-t",
        "1",
        "-c",
        "6",
        "-n",
        "6",
        "--source",
        "127.0.0.7-127.0.0.9",
    ]);
    assert_eq!(p.finish(Duration::from_secs(60)), 0, "{}", p.stderr());
    assert!(
        p.stdout()
            .contains("sources:     127.0.0.7-127.0.0.9 (3 given)\n"),
        "{}",
        p.stdout()
    );
    let seen = server.join().unwrap();
    let want: BTreeMap<IpAddr, u64> = ["127.0.0.7", "127.0.0.8", "127.0.0.9"]
        .iter()
        .map(|a| (a.parse().unwrap(), 2))
        .collect();
    assert_eq!(seen, want);

    // `kernel`: one source however many connections.
    let (addr, server) = echo_counting_sources(1100);
    let out = run_json(&[
        "echo", &addr, "-t", "1", "-c", "1100", "-n", "1100", "--source", "kernel",
    ]);
    out.assert_clean(1100);
    assert_eq!(out.json()["config"]["sources"]["from"], "kernel");
    let seen = server.join().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen.values().sum::<u64>(), 1100);

    // A small load says nothing and keeps the kernel's choice (as before).
    let out = run_json(&["echo", "-t", "1", "-c", "4", "-n", "8"]);
    out.assert_clean(8);
    assert!(out.json()["config"].get("sources").is_none());
}
