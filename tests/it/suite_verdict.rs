//! Reports and `compare` from constructed results directories (no run): the verdict
//! lines and table against a baseline, rounds that disagree flagged, `compare`
//! telling a difference from noise with the rounds, p99 from merged histograms,
//! and sizes in IEC units.

use crate::common::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use wirebench::stats::latency::Latency;

/// One round of one point, as the suite runner writes it.
struct Pt<'a> {
    load: &'a str,
    protocol: &'a str,
    axis: &'a str,
    server: &'a str,
    x: u64,
    round: u64,
    rate: f64,
    /// Server CPU seconds over `ok` requests.
    cpu_s: f64,
    ok: u64,
    /// Every request of the round took this long.
    latency_us: u64,
}

fn write_point(dir: &Path, p: &Pt) {
    let mut lat = Latency::new();
    lat.record_n(p.latency_us * 1000, p.ok);
    let (connections, body) = if p.axis == "body_size" {
        (10, p.x)
    } else {
        (p.x, 64)
    };
    let v = json!({
        "throughput": {"msgs_per_s": p.rate},
        "totals": {"ok": p.ok, "errors": 0},
        "histogram": {"data": lat.encode()},
        "outcome": {"success": true},
        "suite": {
            "name": "constructed", "load": p.load, "server": p.server,
            "protocol": p.protocol, "generator": "wirebench", "swept": [p.axis],
            "point": {"connections": connections, "body_size": body, "pipeline": 1},
            "repeat": p.round, "round": p.round,
            "server_cost": {"cpu_s": p.cpu_s, "cpu_percent": {"avg": 50.0}, "rss_bytes": {"max": 1048576.0}}
        }
    });
    let name = format!("{}__{}__x{}__r{}.json", p.load, p.server, p.x, p.round);
    std::fs::create_dir_all(dir.join("points")).unwrap();
    std::fs::write(dir.join("points").join(name), v.to_string()).unwrap();
}

fn write_servers(dir: &Path, names: &[&str], rounds: u64, suite_extra: &str) {
    let list: Vec<_> = (1..=rounds)
        .flat_map(|r| {
            names.iter().map(move |n| {
                json!({"name": n, "round": r, "state": "ok", "points": 4, "points_failed": 0, "command": format!("{n} --port 1")})
            })
        })
        .collect();
    std::fs::write(dir.join("servers.json"), json!(list).to_string()).unwrap();
    std::fs::write(
        dir.join("suite.toml"),
        format!("name = \"constructed\"\n{suite_extra}"),
    )
    .unwrap();
}

fn wb(args: &[&str]) -> (i32, String, String) {
    let mut p = Proc::wirebench(args);
    let code = p.finish(RUN_LIMIT);
    (code, p.stdout(), p.stderr())
}

/// Two servers over a four-point connection sweep, two rounds each: `wb` against the
/// baseline `c-epoll` at `ks` times its throughput (every round alike), its CPU per
/// message at 0.5 times; with `noisy`, wb's rounds at 500 connections disagree (1000
/// vs 1400, 1.2 times the baseline's between them).
fn verdict_dir(root: &Path, extra: &str, ks: [f64; 4], noisy: bool) -> PathBuf {
    let dir = root.join("results");
    let xs = [1, 10, 100, 500];
    for (x, k) in xs.into_iter().zip(ks) {
        for round in 1..=2 {
            let base_rate = 10_000.0;
            let wb_rate = match (noisy && x == 500, round) {
                (true, 1) => 10_000.0,
                (true, _) => 14_000.0,
                (false, _) => base_rate * k,
            };
            for (server, rate, cpu_per_msg_us) in
                [("c-epoll", base_rate, 2.0), ("wb", wb_rate, 1.0)]
            {
                let ok = 100_000;
                write_point(
                    &dir,
                    &Pt {
                        load: "connections",
                        protocol: "echo",
                        axis: "connections",
                        server,
                        x,
                        round,
                        rate,
                        cpu_s: cpu_per_msg_us * ok as f64 / 1e6,
                        ok,
                        latency_us: 100,
                    },
                );
            }
        }
    }
    write_servers(&dir, &["c-epoll", "wb"], 2, extra);
    dir
}

/// Marks one round of one point as measured while other processes took `share` of
/// CPU `cpu` (its `machine.interference`, as the suite writes it).
fn mark_busy(dir: &Path, file: &str, cpu: u32, share: f64) {
    let path = dir.join("points").join(file);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let others = 2.0 * share;
    v["machine"] = json!({"interference": {
        "window_s": 2.0, "others_s": others, "steal_s": 0.0, "per_cpu_exact": true,
        "cpus": [{"cpu": cpu, "window_s": 2.0, "busy_s": 1.0 + others, "ours_s": 1.0,
                  "others_s": others, "steal_s": 0.0}],
        "load_average": {"start": [1.0, 1.0, 1.0], "end": [2.0, 1.0, 1.0]}
    }});
    std::fs::write(&path, v.to_string()).unwrap();
}

/// `wirebench report DIR` (HTML and Markdown beside it): its verdict lines, the HTML
/// and the Markdown.
fn report(root: &Path, dir: &Path) -> (Vec<String>, String, String) {
    let (html, md) = (root.join("report.html"), root.join("report.md"));
    let (code, out, err) = wb(&[
        "report",
        dir.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let lines = out.lines().skip(2).map(String::from).collect();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    (lines, read(&html), read(&md))
}

#[test]
fn report_states_the_verdict_first() {
    // Every point faster beyond the noise of its rounds: hyperfine's words.
    let tmp = TempPath::new("suite-verdict", "");
    let dir = verdict_dir(tmp.path(), "", [1.04, 1.05, 1.03, 1.04], false);
    let (lines, text, md) = report(tmp.path(), &dir);
    assert_eq!(
        lines,
        [
            "c-epoll: the baseline",
            "wb is 1.04x ± 0.00 faster than c-epoll (throughput) and uses 0.50x the CPU per message, over 4 points of load connections (1.03x..1.05x)",
        ],
    );
    let verdict = text
        .find("<h2 id=\"verdict\">Verdict</h2>")
        .expect("a verdict");
    assert!(
        verdict < text.find("<h2 id=\"load-").unwrap(),
        "the verdict comes first"
    );
    assert!(text.contains("<tr><td>connections</td><td>wb</td><td>c-epoll</td><td>faster</td><td>1.04x ± 0.00</td><td>1.03x..1.05x</td><td>0.50x</td><td>none of 4</td></tr>"), "{text}");
    assert!(text.contains("<li>wb is 1.04x ± 0.00 faster than c-epoll (throughput)"));
    assert!(md.contains("| connections | wb | c-epoll | faster | 1.04x ± 0.00 | 1.03x..1.05x | 0.50x | none of 4 |\n"), "{md}");

    // One point whose rounds disagree: inconclusive, whatever the others say.
    let tmp = TempPath::new("suite-verdict-noisy", "");
    let dir = verdict_dir(tmp.path(), "", [1.0, 1.1, 0.9, 1.2], true);
    let (lines, text, md) = report(tmp.path(), &dir);
    assert_eq!(
        lines,
        [
            "c-epoll: the baseline",
            "wb against c-epoll: inconclusive (1 of 4 with rounds that disagree by more than 20%), over 4 points of load connections",
        ],
    );
    assert!(text.contains("<td>inconclusive</td><td>1.04x ± 0.12</td><td>0.90x..1.20x</td><td>0.50x</td><td class=\"noisy\">1 of 4: 500 (rounds disagree)</td></tr>"), "{text}");
    // The disagreeing point is marked in the load's own table too (12,000 ±17%).
    assert!(
        text.contains("<td class=\"noisy\">12,000 ±17% (noisy)</td>"),
        "{text}"
    );
    assert_eq!(text.matches("(noisy)").count(), 1);
    assert!(md.contains("| inconclusive | 1.04x ± 0.12 | 0.90x..1.20x | 0.50x | 1 of 4: 500 (rounds disagree) |\n"), "{md}");

    // Clean rounds that differ both ways: mixed, point by point; `baseline = "wb"`
    // turns the ratios round.
    let tmp = TempPath::new("suite-verdict-base", "");
    let dir = verdict_dir(
        tmp.path(),
        "baseline = \"wb\"\n",
        [1.0, 1.1, 0.9, 1.2],
        false,
    );
    let (lines, _, _) = report(tmp.path(), &dir);
    assert_eq!(
        lines,
        [
            "c-epoll is faster than wb at 100, slower than wb at 10, 500, within noise of wb at 1 (0.83x..1.11x its throughput), and uses 2.00x the CPU per message, over 4 points of load connections",
            "wb: the baseline",
        ],
    );

    // A round measured while another process took 30% of the server's CPU: that
    // point does not count, and the verdict says so instead of a ratio.
    let tmp = TempPath::new("suite-verdict-busy", "");
    let dir = verdict_dir(tmp.path(), "", [1.5, 1.5, 1.5, 1.5], false);
    mark_busy(&dir, "connections__c-epoll__x1__r2.json", 0, 0.3);
    mark_busy(&dir, "connections__wb__x10__r1.json", 0, 0.12);
    let (lines, text, _) = report(tmp.path(), &dir);
    assert_eq!(
        lines[1],
        "wb against c-epoll: inconclusive (2 of 4 points measured while other processes took up to 30% of CPU 0), over 4 points of load connections"
    );
    assert!(text.contains("2 of 4: 1 (busy: other processes took 30% of CPU 0), 10 (busy: other processes took 12% of CPU 0)"), "{text}");
    assert!(
        text.contains("<td class=\"noisy\">15,000 ±0% (busy)</td>"),
        "{text}"
    );
}

/// One point, `rounds` rounds per side, throughput per round given.
fn compare_dir(root: &Path, name: &str, rates: &[f64], latency_us: &[u64]) -> PathBuf {
    let dir = root.join(name);
    for (i, (rate, lat)) in rates.iter().zip(latency_us).enumerate() {
        write_point(
            &dir,
            &Pt {
                load: "http",
                protocol: "http",
                axis: "body_size",
                server: "s",
                x: 1024,
                round: i as u64 + 1,
                rate: *rate,
                cpu_s: 1.0,
                ok: 1000,
                latency_us: *lat,
            },
        );
    }
    write_servers(&dir, &["s"], rates.len() as u64, "");
    dir
}

fn compare_rows(a: &Path, b: &Path) -> (i32, Vec<String>) {
    let (code, out, err) = wb(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(err.is_empty() || code != 0, "{err}");
    (
        code,
        out.lines().skip(1).take(2).map(String::from).collect(),
    )
}

#[test]
fn compare_tells_a_difference_from_noise() {
    let tmp = TempPath::new("suite-compare-noise", "");
    let root = tmp.path();
    let lat = [100, 100, 100, 100];
    let a = compare_dir(root, "a", &[1000.0, 1100.0, 900.0, 1050.0], &lat);
    // The same within noise: the rounds interleave, though the medians differ by 7.3%.
    let same = compare_dir(root, "same", &[1080.0, 1150.0, 950.0, 1120.0], &lat);
    let (code, rows) = compare_rows(&a, &same);
    assert_eq!(code, 0);
    assert_eq!(
        rows,
        [
            "http / s / 1 KiB body_size                                 throughput        1,025        1,100    +7.3%    4/4 U p=0.343       within noise",
            "http / s / 1 KiB body_size                                 p99 us              100          100    +0.0%    4/4 U p=1.000       within noise",
        ]
    );
    // Clearly apart: every round of B above every round of A (p = 2/70), and a
    // lower latency: both better, with the right signs.
    let fast = compare_dir(
        root,
        "fast",
        &[2000.0, 2100.0, 1900.0, 2050.0],
        &[50, 50, 50, 50],
    );
    let (code, rows) = compare_rows(&a, &fast);
    assert_eq!(code, 0);
    assert_eq!(
        rows,
        [
            "http / s / 1 KiB body_size                                 throughput        1,025        2,025   +97.6%    4/4 U p=0.029       better",
            "http / s / 1 KiB body_size                                 p99 us              100         50.0   -50.0%    4/4 U p=0.029       better",
        ]
    );
    // The other way round: worse, and exit 1.
    let (code, rows) = compare_rows(&fast, &a);
    assert_eq!(code, 1);
    assert!(
        rows[0].ends_with("-49.4%    4/4 U p=0.029       worse"),
        "{rows:?}"
    );
    // One round a side: no verdict either way.
    let one_a = compare_dir(root, "one-a", &[1000.0], &[100]);
    let one_b = compare_dir(root, "one-b", &[3000.0], &[100]);
    let (code, rows) = compare_rows(&one_a, &one_b);
    assert_eq!(code, 0);
    assert!(
        rows[0].ends_with("+200.0%    1/1 -               one round: cannot tell noise"),
        "{rows:?}"
    );
}

#[test]
fn compare_reads_p99_from_merged_histograms() {
    // Round 1: 1000 requests at 100 us; round 2: 10 requests at 1000 us. Merged, the
    // 99th percentile is 100 us; the mean of the rounds' p99s would be 550.
    let tmp = TempPath::new("suite-compare-merge", "");
    let a = compare_dir(tmp.path(), "a", &[1000.0, 1000.0], &[100, 1000]);
    // write_point gives every round `ok` = 1000 requests: rewrite round 2 with 10.
    write_point(
        &a,
        &Pt {
            load: "http",
            protocol: "http",
            axis: "body_size",
            server: "s",
            x: 1024,
            round: 2,
            rate: 1000.0,
            cpu_s: 1.0,
            ok: 10,
            latency_us: 1000,
        },
    );
    let (_, rows) = compare_rows(&a, &a);
    assert_eq!(
        rows[1],
        "http / s / 1 KiB body_size                                 p99 us              100          100    +0.0%    2/2 ranges overlap  within noise"
    );
}

#[test]
fn sizes_in_iec_units_and_rounds_labelled() {
    let tmp = TempPath::new("suite-iec", "");
    let dir = compare_dir(tmp.path(), "r", &[1000.0, 1100.0], &[100, 100]);
    for (x, round) in [(16384, 1), (16384, 2)] {
        write_point(
            &dir,
            &Pt {
                load: "http",
                protocol: "http",
                axis: "body_size",
                server: "s",
                x,
                round,
                rate: 500.0,
                cpu_s: 1.0,
                ok: 1000,
                latency_us: 200,
            },
        );
    }
    let html = tmp.path().join("r.html");
    let (code, _, err) = wb(&[
        "report",
        dir.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&html).unwrap();
    // Table rows and chart axes: 1 KiB and 16 KiB, never the SI 1.02k / 16.4k.
    assert!(text.contains("<tr><th>1 KiB</th>") && text.contains("<tr><th>16 KiB</th>"));
    assert!(text.contains(">1 KiB</text>") && text.contains(">16 KiB</text>"));
    assert!(
        !text.contains("1.02k") && !text.contains("16.4k"),
        "SI sizes left"
    );
    assert!(text.contains("<th rowspan=\"2\">body size</th>"));
    // The Servers table: one row per start, each labelled with its round.
    assert!(text.contains("<tr><th>server</th><th>round</th><th>state</th>"));
    assert!(text.contains("<tr><td>s</td><td>1</td><td class=\"ok\">ok</td>"));
    assert!(text.contains("<tr><td>s</td><td>2</td><td class=\"ok\">ok</td>"));
}

#[test]
fn a_baseline_must_name_a_server() {
    let tmp = TempPath::new("suite-baseline", "");
    std::fs::create_dir_all(tmp.path()).unwrap();
    let f = tmp.path().join("s.toml");
    std::fs::write(
        &f,
        "baseline = \"nope\"\n[[server]]\nname = \"a\"\ncommand = \"true\"\n[[load]]\nprotocol = \"echo\"\nduration = \"1s\"\n",
    )
    .unwrap();
    let (code, _, err) = wb(&["suite", f.to_str().unwrap(), "--check"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim(),
        format!(
            "wirebench: {}:1: key `baseline`: no server is named 'nope'",
            f.display()
        )
    );
}
