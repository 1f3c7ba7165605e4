//! Several hosts on one machine (issue 14, item 6): network namespaces of our own, a
//! veth pair per host to a bridge, addresses from 198.18.0.0/15 (set aside for
//! network benchmarks). The server runs in one namespace and three shards in three
//! others; the server sees each shard's connections come from that shard's host.
//! Names are unique per test run; every namespace and link is removed when the test
//! ends, also when it fails. No traffic leaves the namespaces made here.

use crate::common::*;
use crate::shards::{assert_shards_add_up, merge_shards, start_in};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// The hosts: namespaces, their veth pairs and the bridge joining them; all removed on drop.
struct Hosts {
    prefix: String,
    names: Vec<String>,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Hosts {
    /// `n` hosts, host k at 198.18.0.(k+1)/24.
    fn make(n: usize) -> Hosts {
        // Interface names have at most 15 bytes: wb + 5 digits of the pid + a suffix.
        let prefix = format!("wb{:05}", std::process::id() % 100_000);
        let mut h = Hosts {
            prefix: prefix.clone(),
            names: Vec::new(),
        };
        let bridge = format!("{prefix}br");
        ip(&["link", "add", &bridge, "type", "bridge"]);
        h.names.push(String::new()); // the bridge exists: drop removes it
        ip(&["link", "set", &bridge, "up"]);
        for k in 0..n {
            let ns = format!("{prefix}h{k}");
            let (outer, inner) = (format!("{prefix}o{k}"), format!("{prefix}i{k}"));
            ip(&["netns", "add", &ns]);
            h.names.push(ns.clone());
            ip(&[
                "link", "add", &outer, "type", "veth", "peer", "name", &inner,
            ]);
            ip(&["link", "set", &inner, "netns", &ns]);
            ip(&["link", "set", &outer, "master", &bridge, "up"]);
            let addr = format!("198.18.0.{}/24", k + 1);
            ip(&["-n", &ns, "addr", "add", &addr, "dev", &inner]);
            ip(&["-n", &ns, "link", "set", &inner, "up"]);
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
        }
        h
    }

    fn ns(&self, k: usize) -> String {
        format!("{}h{k}", self.prefix)
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end inside it, and so its peer.
        for (k, name) in self.names.iter().enumerate().skip(1) {
            let _ = Command::new("ip").args(["netns", "del", name]).status();
            let outer = format!("{}o{}", self.prefix, k - 1);
            let _ = Command::new("ip")
                .args(["link", "del", &outer])
                .stderr(std::process::Stdio::null())
                .status();
        }
        if !self.names.is_empty() {
            let bridge = format!("{}br", self.prefix);
            let _ = Command::new("ip").args(["link", "del", &bridge]).status();
        }
    }
}

fn netns_here() -> bool {
    if unsafe { libc::geteuid() } != 0 {
        missing("network namespaces need root");
        return false;
    }
    have("ip")
}

#[test]
fn three_shards_on_three_hosts_against_a_fourth() {
    if !netns_here() {
        return;
    }
    let hosts = Hosts::make(4);
    let server_ns = hosts.ns(0);
    let mut server = Proc::spawn(
        "ip",
        &[
            "netns",
            "exec",
            &server_ns,
            bin(),
            "serve",
            "echo",
            "--listen",
            "198.18.0.1:9000",
            "--threads",
            "1",
            "--debug",
        ],
        false,
    );
    assert!(
        server
            .wait_line(
                "wirebench serve echo: listening on",
                Duration::from_secs(20)
            )
            .is_some(),
        "server did not start: {}",
        server.stderr()
    );
    let files: Vec<TempPath> = (0..3).map(|_| TempPath::new("netns", ".json")).collect();
    let at = start_in(Duration::from_millis(1500));
    let mut shards: Vec<Proc> = (0..3)
        .map(|i| {
            let ns = hosts.ns(i + 1);
            let shard = format!("{i}/3");
            Proc::spawn(
                "ip",
                &[
                    "netns",
                    "exec",
                    &ns,
                    bin(),
                    "echo",
                    "198.18.0.1:9000",
                    "-t",
                    "1",
                    "-c",
                    "10",
                    "-n",
                    "3000",
                    "--shard",
                    &shard,
                    "--run-id",
                    "netns",
                    "--start-at",
                    &at,
                    "--json",
                    files[i].s(),
                    "-q",
                ],
                false,
            )
        })
        .collect();
    let results: Vec<Value> = shards
        .iter_mut()
        .zip(&files)
        .map(|(p, f)| {
            let code = p.finish(Duration::from_secs(60));
            assert_eq!(code, 0, "{}\n{}", p.stdout(), p.stderr());
            serde_json::from_str(&std::fs::read_to_string(f.path()).unwrap()).unwrap()
        })
        .collect();
    assert_shards_add_up(&results, 3000, 10, Some("netns"));
    for r in &results {
        assert_eq!(r["target"], "198.18.0.1:9000");
    }
    // Three hosts' shards merge into the one run they were.
    let merged_file = TempPath::new("netns-merged", ".json");
    let names: Vec<&str> = files.iter().map(|f| f.s()).collect();
    let merged = merge_shards(&names, merged_file.path(), 3000);
    assert_eq!(merged["target"], "198.18.0.1:9000");
    server.terminate();
    assert_eq!(
        server.finish(Duration::from_secs(30)),
        0,
        "{}",
        server.stderr()
    );
    let out = server.stdout();
    assert!(out.contains("accepts 10 closes 10 "), "{out}");
    // Each host's connections came from its own address: 4, 3 and 3 of them.
    let log = server.stderr();
    let accepted_from = |addr: &str| {
        log.lines()
            .filter(|l| l.contains("accept") && l.contains(&format!("{addr}:")))
            .count()
    };
    assert_eq!(
        [
            accepted_from("198.18.0.2"),
            accepted_from("198.18.0.3"),
            accepted_from("198.18.0.4")
        ],
        [4, 3, 3],
        "server's accepts:\n{log}"
    );
}
