//! merge(split(samples)) == record(samples), on results made by the one builder.

use super::*;
use crate::stats::latency::Latency;
use crate::stats::result::Totals;
use crate::stats::result_builder::Measured;
use crate::stats::shard::ShardInfo;
use crate::stats::unit::Unit;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A result of `samples` (ns), one byte count per sample, as shard `index` of `count`.
fn result(samples: &[u64], index: u32, count: u32, start_ms: u64) -> RunResult {
    let mut l = Latency::new();
    for &ns in samples {
        l.record(ns);
    }
    let n = samples.len() as u64;
    let mut errors = BTreeMap::new();
    errors.insert("timeout".to_string(), u64::from(index) + 1);
    let mut r = RunResult::builder(Measured {
        kind: "echo",
        target: "127.0.0.1:7".into(),
        config: json!({"connections": 3}),
        started_unix_ms: start_ms,
        elapsed_s: 2.0,
        totals: Totals {
            sent: n + u64::from(index) + 1,
            ok: n,
            errors: u64::from(index) + 1,
            bytes_sent: n * 64,
            bytes_received: n * 64,
            connections: 1,
            invariant_holds: Some(true),
            ..Totals::default()
        },
        errors,
        unit: Unit::new("messages", "echoed", true),
        latency: &l,
        client_cpu_s: 0.25,
    })
    .extra("status_classes", json!({"2xx": n, "5xx": 1}))
    .finish((index == 2).then(|| "2 timeouts".to_string()));
    r.shard = Some(ShardInfo {
        index,
        count,
        run_id: Some("job-7".into()),
        start_at_unix_ms: None,
        measured_start_unix_ms: start_ms + 100,
        portion: json!({"connections": 1}),
    });
    r
}

fn parts<'a>(rs: &'a [RunResult], names: &'a [String]) -> Vec<Part<'a>> {
    rs.iter()
        .zip(names)
        .map(|(r, n)| Part { name: n, result: r })
        .collect()
}

#[test]
fn a_merge_of_split_samples_is_the_recording_of_them_all() {
    let samples: Vec<u64> = (1..=9_000u64)
        .map(|i| (i * 7_919) % 5_000_000 + 500)
        .collect();
    let mut split: [Vec<u64>; 3] = Default::default();
    for (i, &s) in samples.iter().enumerate() {
        split[(i * 31 / 7) % 3].push(s);
    }
    // Shards given out of order; started 0, 30 and 10 ms apart.
    let rs = vec![
        result(&split[2], 2, 3, 1_000_030),
        result(&split[0], 0, 3, 1_000_000),
        result(&split[1], 1, 3, 1_000_010),
    ];
    let names: Vec<String> = (0..3).map(|i| format!("s{i}.json")).collect();
    let m = merge(
        &parts(&rs, &names),
        Of::Shards {
            allow_partial: false,
        },
        no_block_merge,
    )
    .unwrap();
    let mut whole = Latency::new();
    for &s in &samples {
        whole.record(s);
    }
    assert_eq!(
        m.histogram.data,
        whole.encode(),
        "the same serialized bytes"
    );
    assert_eq!(m.latency_us, whole.summary());
    assert_eq!(m.totals.ok, 9_000);
    assert_eq!(m.totals.sent, 9_006);
    assert_eq!(m.totals.bytes_received, 9_000 * 64);
    assert_eq!(m.totals.invariant_holds, Some(true));
    assert_eq!(m.errors["timeout"], 6);
    assert_eq!(m.extras["status_classes"], json!({"2xx": 9_000, "5xx": 3}));
    assert_eq!(m.cpu.client_s, 0.75);
    // From the earliest measured start to the latest end: 30 ms later plus 2 s.
    assert!((m.elapsed_s - 2.03).abs() < 1e-9);
    assert!((m.throughput.msgs_per_s - 9_000.0 / 2.03).abs() < 1e-6);
    assert!(!m.outcome.success);
    assert_eq!(m.outcome.reason.as_deref(), Some("shard 2: 2 timeouts"));
    let info = m.merge.as_ref().unwrap();
    assert_eq!(
        (info.of.as_str(), info.expected, info.partial),
        ("shards", 3, false)
    );
    assert_eq!(info.present, [0, 1, 2]);
    assert_eq!(info.start_spread_ms, 30.0);
    assert_eq!(info.parts.len(), 3);
    assert_eq!(info.parts[0]["shard"]["index"], 0);
    assert_eq!(info.parts[2]["totals"]["ok"], split[2].len() as u64);
    assert!(m.shard.is_none());
}

#[test]
fn shards_that_do_not_belong_together_are_refused() {
    let names: Vec<String> = (0..3).map(|i| format!("s{i}.json")).collect();
    let go = |rs: &[RunResult], partial| {
        merge(
            &parts(rs, &names),
            Of::Shards {
                allow_partial: partial,
            },
            no_block_merge,
        )
        .map(|_| ())
    };
    let base = || {
        vec![
            result(&[1000], 0, 3, 1),
            result(&[2000], 1, 3, 1),
            result(&[3000], 2, 3, 1),
        ]
    };
    let mut rs = base();
    rs[1].shard.as_mut().unwrap().run_id = Some("job-8".into());
    assert_eq!(
        go(&rs, false).unwrap_err(),
        "s1.json belongs to run job-8, s0.json to run job-7: only shards of one run merge"
    );
    let mut rs = base();
    rs[2].config = json!({"connections": 4});
    assert_eq!(
        go(&rs, false).unwrap_err(),
        "s2.json is a different config from s0.json: only parts of one run merge"
    );
    let mut rs = base();
    rs[2].shard.as_mut().unwrap().index = 1;
    assert_eq!(
        go(&rs, false).unwrap_err(),
        "s2.json is shard 1 of 3 again: each shard merges once"
    );
    let mut rs = base();
    rs[1].shard = None;
    assert!(go(&rs, false)
        .unwrap_err()
        .starts_with("s1.json is not a shard"));
    let mut rs = base();
    rs[0].schema_version = 99;
    assert_eq!(
        go(&rs, false).unwrap_err(),
        "s0.json is a result of schema version 99, this wirebench reads version 1"
    );
    let rs = base();
    let two = &rs[..2];
    assert_eq!(
        merge(
            &parts(two, &names),
            Of::Shards {
                allow_partial: false
            },
            no_block_merge
        )
        .map(|_| ())
        .unwrap_err(),
        "shard 2 of 3 is missing (give every shard, or --allow-partial to merge those present)"
    );
    let m = merge(
        &parts(two, &names),
        Of::Shards {
            allow_partial: true,
        },
        no_block_merge,
    )
    .unwrap();
    let info = m.merge.unwrap();
    assert!(info.partial);
    assert_eq!((info.present, info.expected), (vec![0, 1], 3));
}

#[test]
fn rounds_follow_each_other_and_a_protocol_merges_its_own_block() {
    let rs = vec![
        result(&[1000, 1000], 0, 3, 1),
        result(&[9000], 1, 3, 50_000),
    ];
    let names: Vec<String> = (0..2).map(|i| format!("r{i}.json")).collect();
    fn own(name: &str, blocks: &[&Value], merged: &RunResult) -> Option<Result<Value, String>> {
        (name == "status_classes").then(|| Ok(json!({"n": blocks.len(), "ok": merged.totals.ok})))
    }
    let m = merge(&parts(&rs, &names), Of::Rounds, own).unwrap();
    assert_eq!(m.elapsed_s, 4.0);
    assert_eq!(m.extras["status_classes"], json!({"n": 2, "ok": 3}));
    let info = m.merge.unwrap();
    assert_eq!(
        (info.of.as_str(), info.expected, info.present),
        ("rounds", 2, vec![0, 1])
    );
    // The p99 of the rounds together (9 us, as HDR stores it), not the mean of
    // theirs (1 and 9 us).
    let mut all = Latency::new();
    for ns in [1000, 1000, 9000] {
        all.record(ns);
    }
    assert_eq!(m.latency_us, all.summary());
    assert_eq!(m.latency_us.p99, 9.007);
    assert_eq!(m.latency_us.p50, 1.0);
}

#[test]
fn threads_per_event_loop_add_up_over_parts_client_and_server() {
    use crate::stats::event_loop::{EventLoop, LoopCounts};
    let loops = |epoll: u64, io_uring: u64| LoopCounts { epoll, io_uring };
    let with = |index: u32, client: Option<LoopCounts>, server: Value| {
        let mut r = result(&[1000], index, 3, 1_000_000);
        r.client_process = Some(ClientProcess {
            peak_rss_bytes: 1 << 20,
            includes_builtin_server: true,
            event_loop: client,
        });
        r.server = Some(server);
        r
    };
    let names: Vec<String> = (0..3).map(|i| format!("s{i}.json")).collect();
    // One shard's workers split over both loops (a ring refused on one thread), the
    // others on io_uring; servers on io_uring and epoll.
    let rs = vec![
        with(
            0,
            Some(LoopCounts::one(EventLoop::IoUring)),
            json!({"accepts": 1, "event_loop": {"io_uring": 2}}),
        ),
        with(
            1,
            Some(loops(1, 1)),
            json!({"accepts": 2, "event_loop": {"epoll": 1}}),
        ),
        with(
            2,
            Some(loops(0, 2)),
            json!({"accepts": 3, "event_loop": {"io_uring": 1}}),
        ),
    ];
    let shards = Of::Shards {
        allow_partial: false,
    };
    let m = merge(&parts(&rs, &names), shards, no_block_merge).unwrap();
    let p = m.client_process.as_ref().unwrap();
    assert_eq!(p.event_loop, Some(loops(1, 4)));
    assert_eq!(p.peak_rss_bytes, 3 << 20);
    assert_eq!(
        m.server,
        Some(json!({"accepts": 6, "event_loop": {"epoll": 1, "io_uring": 3}}))
    );
    let v = serde_json::to_value(&m).unwrap();
    assert_eq!(
        v["client_process"]["event_loop"],
        json!({"epoll": 1, "io_uring": 4})
    );
    // Rounds add up the same way.
    let m = merge(&parts(&rs[..2], &names[..2]), Of::Rounds, no_block_merge).unwrap();
    assert_eq!(m.client_process.unwrap().event_loop, Some(loops(1, 2)));
    // A part written before the loops were recorded: the sum is unknown, not short.
    let mut old = rs.clone();
    old[1].client_process.as_mut().unwrap().event_loop = None;
    let m = merge(&parts(&old, &names), shards, no_block_merge).unwrap();
    let p = m.client_process.unwrap();
    assert_eq!(p.event_loop, None);
    assert_eq!(p.peak_rss_bytes, 3 << 20);
    let v = serde_json::to_value(&old[1]).unwrap();
    assert!(v["client_process"].get("event_loop").is_none(), "{v}");
}
