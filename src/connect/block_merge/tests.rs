//! The merge of real-shaped `connect` blocks (built from `report::ConnectSection`, as a
//! run writes them): exact sums, the histogram bytes of one recording of the same
//! samples, rates and memory recomputed, a differing setting refused.

use super::merge;
use crate::connect::report::{ConnectSection, MemorySection, PingSection, RampSection};
use crate::stats::result::HistogramBlob;
use crate::stats::Latency;
use crate::sys::limits::KernelLimits;
use serde_json::Value;
use std::collections::BTreeMap;

fn kernel() -> KernelLimits {
    KernelLimits {
        somaxconn: Some(4096),
        nofile_hard: 20_000,
        ip_local_port_range: (32768, 60999),
        nf_conntrack_count: Some(7),
        ..Default::default()
    }
}

/// One part's block: `samples` connect times (ns), `lost` connections reset.
fn block(samples: &[u64], reach_s: f64, hold_s: f64, failed: u64, rss: (u64, u64)) -> Value {
    let mut h = Latency::new();
    samples.iter().for_each(|&ns| h.record(ns));
    let n = samples.len() as u64;
    let failures: BTreeMap<String, u64> = (failed > 0)
        .then(|| ("ECONNREFUSED".to_string(), failed))
        .into_iter()
        .collect();
    let s = ConnectSection {
        mode: "hold",
        requested: n + failed,
        attempts: n + failed,
        established: n,
        failed,
        failures,
        lost: BTreeMap::from([("reset".to_string(), 1)]),
        time_to_establish_s: reach_s,
        connect_rate_per_s: (n + failed) as f64 / reach_s,
        hold_s,
        teardown_s: hold_s / 10.0,
        processes: 1,
        server_processes: None,
        server_active: None,
        connect_latency_us: h.summary(),
        connect_histogram: HistogramBlob::of(&h),
        churn: None,
        ramp: None,
        ping: Some(PingSection {
            interval_s: 0.5,
            sent: 2 * n,
            ok: 2 * n - 1,
        }),
        memory: MemorySection {
            connections: n,
            server_processes: 0,
            server_rss_bytes_before: None,
            server_rss_bytes_after: None,
            server_rss_per_conn_bytes: None,
            client_rss_bytes_before: rss.0,
            client_rss_bytes_after: rss.1,
            client_rss_per_conn_bytes: Some((rss.1 - rss.0) as f64 / n as f64),
            slab_bytes_before: 1_000,
            slab_bytes_after: 9_000,
            slab_per_conn_bytes: Some(8_000.0 / n as f64),
        },
        kernel: kernel(),
    };
    serde_json::to_value(&s).unwrap()
}

#[test]
fn three_blocks_sum_exactly_and_their_histograms_add_to_one_recording() {
    let samples: Vec<u64> = (1..=900u64)
        .map(|i| i * i * 53 % 7_000_000 + 1_000)
        .collect();
    let (a, rest) = samples.split_at(400);
    let (b, c) = rest.split_at(300);
    let blocks = [
        block(a, 0.5, 1.02, 0, (1_000_000, 2_000_000)),
        block(b, 0.8, 1.01, 3, (1_000_000, 1_600_000)),
        block(c, 0.4, 1.03, 0, (1_000_000, 1_400_000)),
    ];
    let refs: Vec<&Value> = blocks.iter().collect();
    let m = merge(&refs).unwrap();

    assert_eq!(m["mode"], "hold");
    assert_eq!(m["requested"], 903);
    assert_eq!(m["attempts"], 903);
    assert_eq!(m["established"], 900);
    assert_eq!(m["failed"], 3);
    assert_eq!(m["failures"], serde_json::json!({"ECONNREFUSED": 3}));
    assert_eq!(m["lost"], serde_json::json!({"reset": 3}));
    assert_eq!(m["processes"], 3);
    assert_eq!(
        m["ping"],
        serde_json::json!({"interval_s": 0.5, "sent": 1800, "ok": 1797})
    );
    // The teardown ends with the last part's.
    assert_eq!(m["teardown_s"], 1.03 / 10.0);
    // The slowest part's time; the rate over it.
    assert_eq!(m["time_to_establish_s"], 0.8);
    assert_eq!(m["connect_rate_per_s"], 903.0 / 0.8);
    assert_eq!(m["hold_s"], 1.01);

    // The histogram: the same bytes as the 900 samples recorded in one place, and the
    // summary read from it.
    let mut whole = Latency::new();
    samples.iter().for_each(|&ns| whole.record(ns));
    let merged = Latency::decode(m["connect_histogram"]["data"].as_str().unwrap()).unwrap();
    assert_eq!(merged.encode(), whole.encode());
    assert_eq!(m["connect_histogram"]["count"], 900);
    assert_eq!(
        m["connect_latency_us"],
        serde_json::to_value(whole.summary()).unwrap()
    );

    // Memory: RSS summed, per connection from the sums; the slab (whole machine) null.
    let mem = &m["memory"];
    assert_eq!(mem["connections"], 900);
    assert_eq!(mem["client_rss_bytes_before"], 3_000_000);
    assert_eq!(mem["client_rss_bytes_after"], 5_000_000);
    assert_eq!(mem["client_rss_per_conn_bytes"], 2_000_000.0 / 900.0);
    assert_eq!(mem["server_rss_per_conn_bytes"], Value::Null);
    assert_eq!(mem["slab_per_conn_bytes"], Value::Null);
    assert_eq!(mem["slab_bytes_before"], Value::Null);
    // Kernel limits kept; the conntrack count (a reading) the largest.
    assert_eq!(m["kernel"], serde_json::to_value(kernel()).unwrap());
}

#[test]
fn a_differing_setting_is_refused_naming_the_field() {
    let a = block(&[1_000, 2_000], 0.1, 1.0, 0, (10, 20));
    let mut b = block(&[3_000], 0.1, 1.0, 0, (10, 20));
    b["mode"] = "churn".into();
    assert_eq!(
        merge(&[&a, &b]).unwrap_err(),
        "connect.mode differs between the parts: only parts of one run merge"
    );
    let mut b = block(&[3_000], 0.1, 1.0, 0, (10, 20));
    b["ping"]["interval_s"] = 0.25.into();
    assert!(merge(&[&a, &b])
        .unwrap_err()
        .starts_with("connect.ping.interval_s differs"));
    let mut b = block(&[3_000], 0.1, 1.0, 0, (10, 20));
    b["kernel"]["nofile_hard"] = 1024.into();
    assert!(merge(&[&a, &b])
        .unwrap_err()
        .starts_with("connect.kernel differs between the parts"));
    // The conntrack count is a reading, not a limit: it may differ.
    let mut b = block(&[3_000], 0.1, 1.0, 0, (10, 20));
    b["kernel"]["nf_conntrack_count"] = 9.into();
    let m = merge(&[&a, &b]).unwrap();
    assert_eq!(m["kernel"]["nf_conntrack_count"], 9);
    assert_eq!(m["established"], 3);
}

#[test]
fn an_older_parts_ping_skipped_is_not_carried_on() {
    let mut old = block(&[1_000, 2_000], 0.5, 1.0, 0, (1_000, 2_000));
    old["ping"]["skipped"] = serde_json::json!(0);
    old.as_object_mut().unwrap().remove("teardown_s");
    let new = block(&[3_000], 0.5, 1.0, 0, (1_000, 2_000));
    let m = merge(&[&old, &new]).unwrap();
    assert_eq!(
        m["ping"],
        serde_json::json!({"interval_s": 0.5, "sent": 6, "ok": 4})
    );
    assert_eq!(m["teardown_s"], 0.1);
}

#[test]
fn churn_ramps_left_out_sum_exactly_and_stay_apart() {
    let ramp = |established: u64, failed: u64| {
        serde_json::to_value(RampSection {
            attempts: established + failed,
            established,
            failed,
            failures: BTreeMap::from([("ECONNREFUSED".to_string(), failed)]),
            lost: BTreeMap::new(),
            cycles_ok: established,
            sent: established,
            ok: established,
            errors: BTreeMap::new(),
            in_flight: 0,
        })
        .unwrap()
    };
    let mut a = block(&[1_000, 2_000], 1.0, 0.0, 0, (10, 20));
    let mut b = block(&[3_000], 2.0, 0.0, 0, (10, 20));
    a["ramp"] = ramp(700, 1);
    b["ramp"] = ramp(300, 2);
    let m = merge(&[&a, &b]).unwrap();
    assert_eq!(m["established"], 3);
    assert_eq!(m["ramp"]["established"], 1000);
    assert_eq!(m["ramp"]["attempts"], 1003);
    assert_eq!(m["ramp"]["failed"], 3);
    assert_eq!(m["ramp"]["failures"]["ECONNREFUSED"], 3);
    assert_eq!(
        (m["ramp"]["sent"].clone(), m["ramp"]["ok"].clone()),
        (1000.into(), 1000.into())
    );
    // Counted apart: the measured figures and their rates do not take it in.
    assert_eq!(m["attempts"], 3);
    assert_eq!(m["connect_rate_per_s"], 1.5);
}
