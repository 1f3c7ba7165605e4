//! `--metrics-listen`: the live /metrics endpoint of a load, scraped by a real
//! Prometheus (Debian's `prometheus`, started here with a generated config on
//! loopback) and by hand: the final counters are the result's, the histogram's p99
//! lands in the bucket of the result's exact p99; bad addresses and scrapers.

use crate::common::{free_port, have, ju, wait_until, Proc, TempPath, RUN_LIMIT};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// `GET path` with an Accept header (or none): the status line, the headers, the body.
pub(crate) fn get(
    addr: &str,
    path: &str,
    accept: Option<&str>,
) -> Option<(String, String, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{accept}\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let (status, headers) = head.split_once("\r\n")?;
    Some((status.into(), headers.into(), body.into()))
}

/// The value of the sample line that starts with `prefix` (name and labels).
pub(crate) fn sample(body: &str, prefix: &str) -> Option<f64> {
    body.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// A load with the endpoint at `port`, its result in `json`.
fn load(port: u16, json: &TempPath, extra: &[&str]) -> Proc {
    let listen = format!("127.0.0.1:{port}");
    let mut args = vec![
        "echo",
        "--metrics-listen",
        &listen,
        "--json",
        json.s(),
        "-q",
    ];
    args.extend(extra);
    Proc::wirebench(&args)
}

fn result(json: &TempPath) -> Value {
    serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap()).unwrap()
}

#[test]
fn the_last_scrape_holds_the_results_figures_in_either_format() {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let json = TempPath::new("metrics", ".json");
    let mut p = load(
        port,
        &json,
        &["-n", "20000", "-c", "4", "--metrics-linger", "30s"],
    );
    // The run is over once its result is written; the endpoint lingers.
    assert!(wait_until(RUN_LIMIT, || std::fs::metadata(json.path())
        .is_ok_and(|m| m.len() > 0)
        && get(&addr, "/metrics", None).is_some_and(
            |(_, _, b)| b.contains("wirebench_run_finished{protocol=\"echo\"} 1")
        )));
    let r = result(&json);
    let (status, headers, text) = get(&addr, "/metrics", Some("image/png")).unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(
        headers.contains("Content-Type: text/plain; version=0.0.4"),
        "{headers}"
    );
    let ok = ju(&r, "/totals/ok");
    assert_eq!(ok, 20_000);
    assert_eq!(
        sample(&text, "wirebench_requests_ok_total{"),
        Some(ok as f64),
        "{text}"
    );
    assert_eq!(
        sample(&text, "wirebench_requests_sent_total{"),
        Some(20_000.0)
    );
    assert_eq!(
        sample(&text, "wirebench_latency_seconds_count{"),
        Some(ju(&r, "/latency_us/count") as f64)
    );
    assert_eq!(
        sample(&text, "wirebench_bytes_received_total{"),
        Some(ju(&r, "/totals/bytes_received") as f64)
    );
    let om = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
    let (_, headers, text) = get(&addr, "/metrics", Some(om)).unwrap();
    assert!(
        headers.contains("application/openmetrics-text; version=1.0.0"),
        "{headers}"
    );
    assert!(text.ends_with("# EOF\n"));
    assert!(text.contains("# TYPE wirebench_requests_ok counter\n"));
    let (status, _, _) = get(&addr, "/nothing", None).unwrap();
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    p.kill();
}

#[test]
fn connections_open_counts_the_runs_connections_while_it_goes_then_none() {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let json = TempPath::new("metrics-open", ".json");
    let mut p = load(
        port,
        &json,
        &[
            "-d",
            "4s",
            "-c",
            "6",
            "--threads",
            "2",
            "--progress",
            "100ms",
            "--metrics-linger",
            "30s",
        ],
    );
    let open = || {
        get(&addr, "/metrics", None).and_then(|(_, _, b)| sample(&b, "wirebench_connections_open{"))
    };
    // Mid-run: each of the 6 connections once, from both workers' reports.
    assert!(
        wait_until(RUN_LIMIT, || open() == Some(6.0)),
        "{:?}",
        open()
    );
    assert!(wait_until(RUN_LIMIT, || get(&addr, "/metrics", None)
        .is_some_and(
            |(_, _, b)| b.contains("wirebench_run_finished{protocol=\"echo\"} 1")
        )));
    assert_eq!(open(), Some(0.0), "the run is over: none open");
    // The endpoint's last publish comes before the result file is written.
    let written = || {
        std::fs::read_to_string(json.path())
            .is_ok_and(|s| serde_json::from_str::<Value>(&s).is_ok())
    };
    assert!(wait_until(RUN_LIMIT, written), "no result written");
    assert_eq!(ju(&result(&json), "/totals/connections"), 6);
    p.kill();
}

#[test]
fn a_busy_or_remote_address_is_refused_before_the_run() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = held.local_addr().unwrap().to_string();
    for (addr, says) in [
        (busy.as_str(), "cannot listen there: the address is in use"),
        (
            "0.0.0.0:9464",
            "is not a loopback address: add --metrics-allow-remote",
        ),
        ("nowhere", "not an address with a port"),
    ] {
        let mut p = Proc::wirebench(&["echo", "-n", "10", "--metrics-listen", addr]);
        assert_eq!(p.finish(RUN_LIMIT), 2, "{addr}");
        let err = p.stderr();
        assert!(err.contains(says), "{addr}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
        assert!(!err.contains("result:"), "nothing ran: {err}");
    }
}

#[test]
fn scrapers_that_never_read_or_never_ask_do_not_hold_the_run() {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let json = TempPath::new("metrics-stuck", ".json");
    let mut p = load(port, &json, &["-d", "3s", "-c", "2", "--progress", "100ms"]);
    assert!(wait_until(RUN_LIMIT, || TcpStream::connect(&addr).is_ok()));
    // One asks and never reads its answer, one connects and never asks: each holds the
    // endpoint's thread for its timeout at most, and the run not at all.
    let mut stuck = Vec::new();
    for _ in 0..20 {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        stuck.push(s);
        stuck.push(TcpStream::connect(&addr).unwrap());
    }
    assert_eq!(p.finish(RUN_LIMIT), 0, "{}", p.stderr());
    let r = result(&json);
    assert_eq!(ju(&r, "/totals/sent"), ju(&r, "/totals/ok"));
    assert!(ju(&r, "/totals/ok") > 0);
}

/// Prometheus' HTTP API: the values of a range query's one series over the last 10
/// minutes, in time order.
pub(crate) fn range(prom: &str, query: &str) -> Vec<f64> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let q: String = query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let path = format!(
        "/api/v1/query_range?query={q}&start={}&end={}&step=1",
        now - 600,
        now + 5
    );
    let (status, _, body) = get(prom, &path, None).unwrap();
    assert!(status.contains("200"), "{status}: {body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let series = v["data"]["result"].as_array().cloned().unwrap_or_default();
    assert!(series.len() <= 1, "{query}: one series, not {body}");
    series
        .first()
        .map(|s| {
            s["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p[1].as_str().unwrap().parse().unwrap())
                .collect()
        })
        .unwrap_or_default()
}

/// A real Prometheus on a free loopback port scraping `127.0.0.1:port` every second
/// (job `wb`): the process, its address, and its directory (kept while it runs).
pub(crate) fn prometheus_scraping(port: u16) -> (Proc, String, TempPath) {
    let prom_port = free_port();
    let dir = TempPath::new("prometheus", "");
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: wb\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
        ),
    )
    .unwrap();
    let prom = format!("127.0.0.1:{prom_port}");
    let server = Proc::spawn(
        "prometheus",
        &[
            &format!("--config.file={}", config.display()),
            &format!("--storage.tsdb.path={}", dir.path().join("data").display()),
            &format!("--web.listen-address={prom}"),
        ],
        false,
    );
    assert!(
        wait_until(RUN_LIMIT, || get(&prom, "/-/ready", None)
            .is_some_and(|(s, _, _)| s.contains("200"))),
        "prometheus never got ready: {}",
        server.stderr()
    );
    (server, prom, dir)
}

#[test]
fn a_real_prometheus_scrapes_a_run_and_reads_its_final_figures() {
    if !have("prometheus") {
        return;
    }
    let port = free_port();
    let (mut server, prom, _dir) = prometheus_scraping(port);
    let json = TempPath::new("metrics-prom", ".json");
    let mut p = load(
        port,
        &json,
        &[
            "-d",
            "20s",
            "-c",
            "4",
            "--progress",
            "1s",
            "--metrics-linger",
            "4s",
            "--shard",
            "0/1",
            "--run-id",
            "prom-test",
        ],
    );
    assert_eq!(p.finish(RUN_LIMIT), 0, "{}", p.stderr());
    let r = result(&json);
    let labels = "{job=\"wb\",protocol=\"echo\",shard=\"0\",run_id=\"prom-test\"}";
    let ok = range(&prom, &format!("wirebench_requests_ok_total{labels}"));
    assert!(ok.len() >= 15, "a scrape a second over 20 s: {ok:?}");
    assert_eq!(*ok.last().unwrap(), ju(&r, "/totals/ok") as f64);
    let p99 = range(
        &prom,
        &format!("histogram_quantile(0.99, wirebench_latency_seconds_bucket{labels})"),
    );
    let exact_ns = (r["latency_us"]["p99"].as_f64().unwrap() * 1e3).round() as u64;
    let bounds = wirebench::metrics::buckets::BOUNDS;
    let i = bounds.partition_point(|(_, le)| *le < exact_ns);
    let lower = if i == 0 {
        0.0
    } else {
        bounds[i - 1].1 as f64 / 1e9
    };
    let upper = bounds.get(i).map_or(f64::INFINITY, |b| b.1 as f64 / 1e9);
    let seen = *p99.last().unwrap();
    assert!(
        lower <= seen && seen <= upper,
        "histogram_quantile says {seen} s, the result's p99 is {exact_ns} ns, in ({lower}, {upper}]"
    );
    server.terminate();
}
