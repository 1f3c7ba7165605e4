//! The report as one self-contained HTML file: inline CSS, inline SVG charts, the
//! flame graphs as data: URIs; no script, no network fetch.

use super::dataset::{Dataset, LoadView};
use super::table::{self, COLUMNS};
use super::verdict;
use base64::Engine as _;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:DejaVu Sans,Arial,sans-serif;margin:24px;color:#222;max-width:1250px}\
h1{font-size:24px}h2{font-size:19px;margin-top:36px;border-bottom:1px solid #ccc}\
.charts{display:flex;flex-wrap:wrap;gap:10px}.charts figure{margin:0}\
table{border-collapse:collapse;font-size:13px;margin:10px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}\
th{background:#f3f3f3}.bad{background:#fde2e2}.noisy{background:#fff1c2}.verdict li{font-size:15px}.ok{background:#e6f4e6}.env td{text-align:left}\
pre{background:#f7f7f7;padding:10px;overflow:auto;font-size:12px}.note{color:#555;font-size:13px}";

fn environment(o: &mut String, env: &Value) {
    o.push_str("<table class=\"env\">");
    if let Some(m) = env.as_object() {
        for (k, v) in m {
            let v = v
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| v.to_string());
            let _ = write!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
        }
    }
    o.push_str("</table>");
}

fn servers(o: &mut String, servers: &Value, dir: &Path) {
    let Some(list) = servers.as_array() else {
        return;
    };
    // A suite with rounds starts each server once per round: say which start a row is.
    let rounds = list
        .iter()
        .any(|s| s["round"].as_u64().is_some_and(|r| r > 1));
    let _ = write!(
        o,
        "<h2>Servers</h2><table><tr><th>server</th>{}<th>state</th><th>points</th><th>fell short</th><th>command</th><th>note</th></tr>",
        if rounds { "<th>round</th>" } else { "" }
    );
    for s in list {
        let state = s["state"].as_str().unwrap_or("?");
        let class = if state == "ok" { "ok" } else { "bad" };
        let round = if rounds {
            format!("<td>{}</td>", s["round"].as_u64().unwrap_or(1))
        } else {
            String::new()
        };
        let _ = write!(
            o,
            "<tr><td>{}</td>{round}<td class=\"{class}\">{}</td><td>{}</td><td>{}</td><td style=\"text-align:left\"><code>{}</code></td><td style=\"text-align:left\">{}</td></tr>",
            esc(s["name"].as_str().unwrap_or("")),
            esc(state),
            s["points"],
            s["points_failed"],
            esc(s["command"].as_str().unwrap_or("")),
            esc(s["message"].as_str().unwrap_or("")),
        );
    }
    o.push_str("</table>");
    for s in list {
        if let Some(f) = s["flame_graph"].as_str() {
            if let Ok(bytes) = std::fs::read(dir.join(f)) {
                let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                let _ = write!(
                    o,
                    "<h3>Flame graph: {} (perf, cpu-clock)</h3><img alt=\"flame graph of {}\" style=\"max-width:100%\" src=\"data:image/svg+xml;base64,{data}\">",
                    esc(s["name"].as_str().unwrap_or("")),
                    esc(s["name"].as_str().unwrap_or(""))
                );
            }
        }
    }
}

/// The verdict first: one line per server, then the ratios per load as a table.
fn verdict(o: &mut String, d: &Dataset) {
    let rows = verdict::rows(d);
    o.push_str("<h2 id=\"verdict\">Verdict</h2><ul class=\"verdict\">");
    for l in verdict::lines(d) {
        let _ = write!(o, "<li>{}</li>", esc(&l));
    }
    o.push_str("</ul>");
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<table class=\"verdict\"><tr>{}</tr>",
        verdict::COLUMNS
            .iter()
            .map(|c| format!("<th>{}</th>", esc(c)))
            .collect::<String>()
    );
    for r in &rows {
        let cells = verdict::cells(r);
        let noisy = if r.pairs.iter().all(|p| p.troubles.is_empty()) {
            ""
        } else {
            " class=\"noisy\""
        };
        let last = cells.len() - 1;
        o.push_str("<tr>");
        for (i, c) in cells.iter().enumerate() {
            let class = if i == last { noisy } else { "" };
            let _ = write!(o, "<td{class}>{}</td>", esc(c));
        }
        o.push_str("</tr>");
    }
    let _ = write!(
        o,
        "</table><p class=\"note\">Ratios to the baseline server over the sweep's points: per point the median of the rounds, then their geometric mean, ± the rounds' standard deviation carried into the ratio as hyperfine does, and the smallest..largest point. Faster or slower only when every point differs beyond the noise of its rounds (the test <code>compare</code> uses). Not counted, and shaded: points with a round measured while other processes or the hypervisor took more than {:.0}% of a CPU it used, or whose rounds disagree by more than {:.0}% ((max-min)/median of throughput or CPU per request); one such point makes the verdict inconclusive.</p>",
        crate::stats::interference::THRESHOLD * 100.0,
        verdict::DISAGREE * 100.0
    );
}

/// The HTML of a load's time series: one figure per series and point, in a section
/// of its own, folded (a sweep has many); nothing when no point has intervals.
fn series_section(o: &mut String, load: &LoadView) {
    let per_s = load.unit.per_s();
    let per_s = per_s.as_str();
    let figures: Vec<String> = load
        .series
        .iter()
        .flat_map(|s| {
            s.points.iter().filter_map(move |p| {
                let at = super::axis_value(&load.axis, p.x);
                let title = format!("{} at {at} {}", s.label, super::axis_title(&load.axis));
                super::series::svg(&title, per_s, &p.series).map(|svg| {
                    format!(
                        "<figure class=\"series\" data-series=\"{}\">{svg}</figure>",
                        esc(&format!("{}@{at}", s.label))
                    )
                })
            })
        })
        .collect();
    if figures.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<details class=\"series\"><summary>Time series: {} per interval of each point, its rounds one after another</summary><div class=\"charts\">{}</div></details>",
        esc(per_s),
        figures.concat()
    );
}

pub fn render(d: &Dataset, dir: &Path) -> String {
    let title = if d.suite_name.is_empty() {
        "wirebench suite".to_string()
    } else {
        d.suite_name.clone()
    };
    let mut o = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"generator\" content=\"{}\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        super::guard::MARK,
        esc(&title),
        esc(&title)
    );
    let _ = write!(
        o,
        "<p class=\"note\">{} result files from {}. Throughput: median of the repeats (whiskers: smallest to largest). Latency: the repeats' HDR histograms added, so the percentiles are exact. Server CPU: user+sys of every process of the server, sampled each second.</p>",
        d.files,
        esc(&dir.display().to_string())
    );
    verdict(&mut o, d);
    environment(&mut o, &d.environment);
    servers(&mut o, &d.servers, dir);
    for load in &d.loads {
        load_section(&mut o, load);
    }
    super::search_curve::section(&mut o, &d.searched);
    if let Some(text) = &d.suite_text {
        let _ = write!(o, "<h2>Suite file</h2><pre>{}</pre>", esc(text));
    }
    o.push_str("</body></html>\n");
    o
}

/// One load: its charts, its time series, its table and the runs that fell short.
fn load_section(o: &mut String, load: &LoadView) {
    let _ = write!(
        o,
        "<h2 id=\"load-{}\">{} <small>({} via {})</small></h2><div class=\"charts\">",
        esc(&load.name),
        esc(&load.name),
        esc(&load.protocol),
        esc(&load.generator)
    );
    for c in super::charts(load) {
        let _ = write!(
            o,
            "<figure class=\"chart\" data-chart=\"{}\">{}</figure>",
            esc(&c.slug),
            c.svg
        );
    }
    o.push_str("</div>");
    series_section(o, load);
    load_table(o, load);
    short_runs(o, load);
}

/// The load's table: a column group per server, a row per swept value; a run that
/// fell short shaded, a noisy one marked.
fn load_table(o: &mut String, load: &LoadView) {
    let t = table::of(load);
    let _ = write!(o, "<table><tr><th rowspan=\"2\">{}</th>", esc(&t.axis));
    for g in &t.groups {
        let _ = write!(o, "<th colspan=\"{}\">{}</th>", COLUMNS.len(), esc(g));
    }
    o.push_str("</tr><tr>");
    for _ in &t.groups {
        for c in COLUMNS {
            let _ = write!(o, "<th>{c}</th>");
        }
    }
    o.push_str("</tr>");
    for r in &t.rows {
        let _ = write!(o, "<tr><th>{}</th>", esc(&r.x));
        for ((c, short), noisy) in r.cells.iter().zip(&r.short).zip(&r.noisy) {
            let class = if *short { " class=\"bad\"" } else { "" };
            match c {
                Some(v) => {
                    for (i, s) in v.iter().enumerate() {
                        let class = if i == 0 && *noisy && !*short {
                            " class=\"noisy\""
                        } else {
                            class
                        };
                        let _ = write!(o, "<td{class}>{}</td>", esc(s));
                    }
                }
                None => {
                    for _ in COLUMNS {
                        o.push_str("<td>-</td>");
                    }
                }
            }
        }
        o.push_str("</tr>");
    }
    o.push_str("</table>");
}

/// Why each run that fell short did, under the table.
fn short_runs(o: &mut String, load: &LoadView) {
    let reasons: Vec<String> = load
        .series
        .iter()
        .flat_map(|s| {
            s.points.iter().flat_map(move |p| {
                p.reasons.iter().map(move |r| {
                    format!("{} at {}: {r}", s.label, super::axis_value(&load.axis, p.x))
                })
            })
        })
        .collect();
    if !reasons.is_empty() {
        o.push_str("<p class=\"note\">Runs that fell short (shaded above):</p><ul class=\"note\">");
        for r in reasons {
            let _ = write!(o, "<li>{}</li>", esc(&r));
        }
        o.push_str("</ul>");
    }
}
