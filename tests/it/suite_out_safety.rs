//! Results directories and reports never destroy what wirebench did not write: a
//! suite run into a directory of the user's own files is refused before anything is
//! removed; a re-run removes only what the previous run listed in its manifest;
//! `report -o` refuses a name of the wrong kind and a file that is not its report.

use crate::common::*;
use std::path::Path;
use std::time::Duration;

const SUITE: &str = r#"
name = "out safety"
[[server]]
name = "wb"
command = "{wirebench} serve echo --listen {addr} --threads 1"
[[load]]
name = "echo"
protocol = "echo"
connections = [1]
count = 200
warmup = "0s"
"#;

fn suite(file: &Path, out: &Path) -> Proc {
    Proc::wirebench(&[
        "suite",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ])
}

fn put(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn same(root: &Path, rel: &str, bytes: &[u8]) {
    assert_eq!(
        std::fs::read(root.join(rel)).unwrap(),
        bytes,
        "{rel} changed"
    );
}

#[test]
fn suite_out_keeps_the_users_files() {
    let tmp = TempPath::new("suite-out-safety", "");
    let dir = tmp.path();
    // The reported case: `wirebench suite suite.toml --out .` among the user's files.
    let pcap = pseudo_random_bytes(7, 3000);
    put(dir, "suite.toml", SUITE.as_bytes());
    put(dir, "points/my.json", b"{\"mine\": true}\n");
    put(dir, "raw/experiment1/capture.pcap", &pcap);
    let mut p = suite(&dir.join("suite.toml"), dir);
    assert_eq!(p.finish(RUN_LIMIT), 2, "{}{}", p.stdout(), p.stderr());
    assert_eq!(
        p.stderr().trim(),
        format!(
            "wirebench: --out {}: it holds points/my.json, which wirebench did not write; move it away or choose another directory",
            dir.display()
        )
    );
    same(dir, "suite.toml", SUITE.as_bytes());
    same(dir, "points/my.json", b"{\"mine\": true}\n");
    same(dir, "raw/experiment1/capture.pcap", &pcap);
    assert!(!dir.join(".wirebench-manifest.json").exists());

    // A results directory of its own: a re-run replaces what the first run wrote and
    // leaves the user's notes (outside the places it writes) alone.
    let out = dir.join("out");
    let mut p = suite(&dir.join("suite.toml"), &out);
    assert_eq!(p.finish(Duration::from_secs(60)), 0, "{}", p.stderr());
    // The closing lines state the verdict (one server: nothing to compare it with).
    let closing: Vec<String> = p.stdout().lines().skip(1).map(String::from).collect();
    // The hint names the binary as it was called (here by its path), so it works as
    // printed.
    let hint = format!("{} report {} -o report.html", bin(), out.display());
    assert_eq!(
        closing,
        [
            "wb: not compared (no other server ran its loads)".to_string(),
            format!("results in {} (render with: {hint})", out.display())
        ],
        "{}",
        p.stdout()
    );
    let rendered = std::process::Command::new("sh")
        .args(["-c", &hint])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        rendered.status.success(),
        "{hint}: {}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    assert!(dir.join("report.html").exists());
    let point = "points/echo__wb__c1-b64-p1__r1.json";
    assert!(out.join(point).exists());
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join(".wirebench-manifest.json")).unwrap(),
    )
    .unwrap();
    for f in [
        point,
        "servers.json",
        "suite.toml",
        "raw/wb.round1.server.log",
    ] {
        assert!(
            manifest["files"][f]["sha256"].is_string(),
            "{f}: {manifest}"
        );
    }
    put(&out, "notes.txt", b"my notes");
    put(&out, "report.html", b"<html>mine</html>");
    let mut p = suite(&dir.join("suite.toml"), &out);
    assert_eq!(p.finish(Duration::from_secs(60)), 0, "{}", p.stderr());
    same(&out, "notes.txt", b"my notes");
    same(&out, "report.html", b"<html>mine</html>");

    // A capture dropped into raw/ afterwards is the user's: the next run is refused
    // and removes nothing, not even its own earlier points.
    put(&out, "raw/experiment1/capture.pcap", &pcap);
    let mut p = suite(&dir.join("suite.toml"), &out);
    assert_eq!(p.finish(RUN_LIMIT), 2, "{}", p.stderr());
    assert!(
        p.stderr()
            .contains("it holds raw/experiment1/capture.pcap, which wirebench did not write"),
        "{}",
        p.stderr()
    );
    same(&out, "raw/experiment1/capture.pcap", &pcap);
    assert!(out.join(point).exists());
    // A point file the user edited is no longer wirebench's either.
    std::fs::remove_file(out.join("raw/experiment1/capture.pcap")).unwrap();
    put(&out, point, b"{\"edited\": 1}");
    let mut p = suite(&dir.join("suite.toml"), &out);
    assert_eq!(p.finish(RUN_LIMIT), 2, "{}", p.stderr());
    assert!(
        p.stderr()
            .contains(&format!("{point} was changed after wirebench wrote it")),
        "{}",
        p.stderr()
    );
    same(&out, point, b"{\"edited\": 1}");
}

#[test]
fn report_never_overwrites_a_result() {
    let tmp = TempPath::new("report-out-safety", "");
    let dir = tmp.path();
    put(dir, "s.toml", SUITE.as_bytes());
    let out = dir.join("out");
    let mut p = suite(&dir.join("s.toml"), &out);
    assert_eq!(p.finish(Duration::from_secs(60)), 0, "{}", p.stderr());
    let point = out.join("points/echo__wb__c1-b64-p1__r1.json");
    let before = std::fs::read(&point).unwrap();
    let report = |o: &Path, extra: &[&str]| {
        let mut args = vec!["report", out.to_str().unwrap(), "-o", o.to_str().unwrap()];
        args.extend_from_slice(extra);
        let mut p = Proc::wirebench(&args);
        let code = p.finish(RUN_LIMIT);
        (code, p.stderr().trim().to_string())
    };
    // The reported case: -o naming a result file.
    assert_eq!(
        report(&point, &[]),
        (
            2,
            format!(
                "wirebench: -o {}: the report is HTML, so its name must end in .html or .htm",
                point.display()
            )
        )
    );
    assert_eq!(std::fs::read(&point).unwrap(), before);
    // A result (or any file) under an .html name is not a report either.
    let disguised = out.join("mine.html");
    std::fs::write(&disguised, &before).unwrap();
    assert_eq!(
        report(&disguised, &[]),
        (
            2,
            format!(
                "wirebench: -o {}: the file exists and is not a report wirebench wrote; remove it or choose another name",
                disguised.display()
            )
        )
    );
    assert_eq!(std::fs::read(&disguised).unwrap(), before);
    // --markdown: the same two rules.
    let html = dir.join("r.html");
    let notes = dir.join("notes.md");
    std::fs::write(&notes, "# my notes\n").unwrap();
    let (code, err) = report(&html, &["--markdown", notes.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.ends_with(
            "the file exists and is not a report wirebench wrote; remove it or choose another name"
        ),
        "{err}"
    );
    assert!(
        !html.exists(),
        "nothing is written when one output is refused"
    );
    let (code, err) = report(&html, &["--markdown", point.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.ends_with("the report is Markdown, so its name must end in .md or .markdown"),
        "{err}"
    );
    // Its own reports it rewrites.
    let md = dir.join("r.md");
    for _ in 0..2 {
        let (code, err) = report(&html, &["--markdown", md.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(std::fs::read(&point).unwrap(), before);
    same(dir, "notes.md", b"# my notes\n");

    // --png: its own charts it replaces; a PNG of the user's there stops it.
    let charts = dir.join("charts");
    for _ in 0..2 {
        let (code, err) = report(&html, &["--png", charts.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
    }
    let n = |d: &Path| std::fs::read_dir(d).unwrap().count();
    assert_eq!(n(&charts), 8, "seven charts and .wirebench-charts.json");
    put(&charts, "photo.png", b"not a chart");
    let (code, err) = report(&html, &["--png", charts.to_str().unwrap()]);
    assert_eq!(
        (code, err),
        (
            2,
            format!(
                "wirebench: --png {}: it holds photo.png, which wirebench did not write; move it away or choose another directory",
                charts.display()
            )
        )
    );
    same(&charts, "photo.png", b"not a chart");
    assert_eq!(n(&charts), 9, "nothing removed");
}
