//! A real suite (wirebench's echo server and a Python echo server, two points, two
//! repeats) rendered as HTML, opened in headless Chromium and screenshotted: the
//! screenshot must show the charts (the series colors drawn across the chart grid),
//! and --png must write every chart as a non-blank image.

use crate::common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

// The first two series colors of src/report/suite/chart.rs.
const BLUE: (u8, u8, u8) = (0x1f, 0x77, 0xb4);
const RED: (u8, u8, u8) = (0xd6, 0x27, 0x28);

fn near(p: (u8, u8, u8), c: (u8, u8, u8)) -> bool {
    (p.0 as i32 - c.0 as i32).abs() < 30
        && (p.1 as i32 - c.1 as i32).abs() < 30
        && (p.2 as i32 - c.2 as i32).abs() < 30
}

/// (pixels of color c, distinct 300x300 cells holding at least 30 of them)
fn color_spread(png: &Path, c: (u8, u8, u8)) -> (usize, usize) {
    let img = resvg::tiny_skia::Pixmap::load_png(png).expect("a PNG");
    let (w, h) = (img.width() as usize, img.height() as usize);
    let mut cells = std::collections::HashMap::new();
    let mut n = 0;
    for (i, px) in img.pixels().iter().enumerate() {
        let px = px.demultiply();
        if near((px.red(), px.green(), px.blue()), c) {
            n += 1;
            *cells.entry(((i % w) / 300, (i / w) / 300)).or_insert(0) += 1;
        }
    }
    assert!(w > 0 && h > 0);
    (n, cells.values().filter(|v| **v >= 30).count())
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

#[test]
fn report_renders_charts_in_chromium_and_png() {
    let dir = TempPath::new("suite-report", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let py = format!(
        "{}/tests/fixtures/echo_server.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let suite = dir.path().join("s.toml");
    std::fs::write(
        &suite,
        format!(
            r#"
name = "report test"
rounds = 2
[[server]]
name = "wirebench"
command = "{{wirebench}} serve echo --listen {{addr}} --threads 1"
[[server]]
name = "python"
command = "python3 {py} {{host}} {{port}}"
[[load]]
name = "sweep"
protocol = "echo"
connections = [1, 4]
duration = "1s"
warmup = "0s"
repeat = 1
"#
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let mut p = Proc::wirebench(&[
        "suite",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(
        p.finish(Duration::from_secs(120)),
        0,
        "{}\n{}",
        p.stdout(),
        p.stderr()
    );
    assert_eq!(std::fs::read_dir(out.join("points")).unwrap().count(), 8);
    // Two rounds: the servers took turns (wirebench, python, wirebench, python).
    let st: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("servers.json")).unwrap()).unwrap();
    let order: Vec<(String, u64)> = st
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["round"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("wirebench", 1),
        ("python", 1),
        ("wirebench", 2),
        ("python", 2),
    ];
    assert_eq!(order, want.map(|(n, r)| (n.to_string(), r)));
    assert!(out
        .join("points/sweep__python__c4-b64-p1__r2.json")
        .exists());

    // compare: the same results are no regression. Then two copies whose repeats
    // agree exactly (no noise): a baseline at 1000/s everywhere, and one where the
    // python server halves; with two rounds a side, their ranges do not overlap:
    // worse at both of its points, and only there.
    let mut same = Proc::wirebench(&["compare", out.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(
        same.finish(RUN_LIMIT),
        0,
        "{}{}",
        same.stdout(),
        same.stderr()
    );
    let copy = |name: &str, python_rate: f64| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(d.join("points")).unwrap();
        for e in std::fs::read_dir(out.join("points")).unwrap() {
            let path = e.unwrap().path();
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let rate = if v["suite"]["server"] == "python" {
                python_rate
            } else {
                1000.0
            };
            v["throughput"]["msgs_per_s"] = serde_json::json!(rate);
            // No noise at all: every round's CPU alike, and no other process's
            // interference (on a busy test machine the run's rounds may have some).
            v["suite"]["server_cost"]["cpu_s"] = serde_json::json!(0.5);
            v.as_object_mut().unwrap().remove("machine");
            std::fs::write(
                d.join("points").join(path.file_name().unwrap()),
                v.to_string(),
            )
            .unwrap();
        }
        d
    };
    let (base, worse) = (copy("base", 1000.0), copy("worse", 500.0));
    let mut cmp = Proc::wirebench(&[
        "compare",
        base.to_str().unwrap(),
        worse.to_str().unwrap(),
        "--threshold",
        "10",
    ]);
    assert_eq!(cmp.finish(RUN_LIMIT), 1, "{}{}", cmp.stdout(), cmp.stderr());
    let regressions: Vec<String> = cmp
        .stdout()
        .lines()
        .filter(|l| l.ends_with(" worse"))
        .map(String::from)
        .collect();
    assert_eq!(regressions.len(), 2, "{}", cmp.stdout());
    assert!(
        regressions
            .iter()
            .all(|l| l.contains("python") && l.contains("throughput") && l.contains("-50.0%")),
        "{regressions:?}"
    );
    // Past the threshold only: a 60% threshold lets the halving through.
    let mut lax = Proc::wirebench(&[
        "compare",
        base.to_str().unwrap(),
        worse.to_str().unwrap(),
        "--threshold",
        "60",
    ]);
    assert_eq!(lax.finish(RUN_LIMIT), 0, "{}", lax.stdout());

    let html = dir.path().join("report.html");
    let pngs = dir.path().join("charts");
    let mut r = Proc::wirebench(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
        "--png",
        pngs.to_str().unwrap(),
    ]);
    assert_eq!(r.finish(RUN_LIMIT), 0, "{}", r.stderr());
    let text = std::fs::read_to_string(&html).unwrap();
    // Self-contained: no fetch of anything.
    for needle in ["http://", "https://", "<script", "<link"] {
        let hits: Vec<&str> = text.matches(needle).collect();
        let allowed = text.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
        let n = if needle == "http://" {
            hits.len() - allowed
        } else {
            hits.len()
        };
        assert_eq!(n, 0, "the report references {needle}");
    }
    assert_eq!(
        text.matches("<figure class=\"chart\" data-chart=").count(),
        7,
        "seven charts for the one load"
    );
    // The load's charts come before its time series (tests/it/intervals.rs).
    let charts = text.split("<details class=\"series\">").next().unwrap();
    assert_eq!(
        charts.matches("<polyline").count(),
        14,
        "two series per chart"
    );

    // Every PNG chart has both series drawn.
    // (Beside them, .wirebench-charts.json lists what the report wrote there.)
    let files: Vec<_> = std::fs::read_dir(&pngs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "png"))
        .collect();
    assert_eq!(files.len(), 7, "{files:?}");
    for f in &files {
        let (blue, _) = color_spread(f, BLUE);
        let (red, _) = color_spread(f, RED);
        // A missing series draws 0 pixels; two series can overlap where their values
        // meet (the server CPU chart on a loaded machine drew blue 90, red 542), so
        // the bound is well below a full line and well above nothing.
        assert!(
            blue > 20 && red > 20,
            "{}: blue {blue}, red {red}",
            f.display()
        );
    }

    let browser = chromium()
        .expect("headless Chromium is needed for this test (Debian: apt-get install chromium)");
    let shot = dir.path().join("shot.png");
    let profile = dir.path().join("chromium-profile");
    let status = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--window-size=1200,2600",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run chromium");
    assert!(
        status.success() && shot.exists(),
        "chromium wrote no screenshot ({status})"
    );
    let (blue, blue_cells) = color_spread(&shot, BLUE);
    let (red, red_cells) = color_spread(&shot, RED);
    // Seven charts in two columns: the series colors fill many 300 px cells, not one corner.
    assert!(blue > 2000 && red > 2000, "blue {blue}, red {red} pixels");
    assert!(
        blue_cells >= 6 && red_cells >= 6,
        "charts in only {blue_cells}/{red_cells} regions"
    );
}
