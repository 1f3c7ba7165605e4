//! The curve of a capacity search (`--search`, a suite load's `search`): for each
//! point that searched, its steps as two charts over the rate asked (p50 and p99
//! latency; errors per step) and a table of every step's exact figures, in the order
//! run, as the point's JSON holds them (`search.steps`).

use super::chart::{esc, svg, Chart, Line, Pt};
use crate::stats::search::{SearchFigures, SearchStep};
use std::fmt::Write as _;

/// One point file that searched: its figures and what its steps count.
#[derive(Clone, Debug)]
pub struct Searched {
    pub file: String,
    pub load: String,
    pub server: String,
    /// "requests/s": what a step's rate counts.
    pub per_s: String,
    pub figures: SearchFigures,
}

/// Points of a line, by rate asked (a rerun is a point of its own at the same rate).
fn line(label: &str, steps: &[&SearchStep], y: fn(&SearchStep) -> Option<f64>) -> Line {
    let points = steps
        .iter()
        .filter_map(|s| {
            y(s).map(|v| Pt {
                x: s.asked_per_s,
                y: v,
                lo: v,
                hi: v,
            })
        })
        .collect();
    Line {
        label: label.into(),
        points,
    }
}

/// A value as the JSON holds it (`null` as "-"): the table shows the exact figures.
fn exact(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// The HTML of every point's search: a section with, per point, its charts and table.
pub fn section(o: &mut String, searched: &[Searched]) {
    if searched.is_empty() {
        return;
    }
    o.push_str("<h2 id=\"searches\">Capacity searches</h2>");
    for s in searched {
        let f = &s.figures;
        let mut steps: Vec<&SearchStep> = f.steps.iter().collect();
        steps.sort_by(|a, b| a.asked_per_s.total_cmp(&b.asked_per_s));
        let rate = format!("rate asked ({})", s.per_s);
        let latency = [
            line("p50", &steps, |s| s.p50_us),
            line("p99", &steps, |s| s.p99_us),
        ];
        let errors = [line("errors", &steps, |s| Some(s.errors as f64))];
        let title = format!("{} on {}", s.load, s.server);
        let _ = write!(
            o,
            "<section class=\"search\" data-search=\"{}\"><h3>{}: {}</h3><p>highest rate that met {}: {}; first that failed: {}; {}</p><div class=\"charts\">",
            esc(&s.file),
            esc(&title),
            esc(&s.file),
            esc(&f.conditions.join(", ")),
            exact(f.highest_pass_per_s),
            exact(f.first_fail_per_s),
            if f.confidence.settled { "settled (every rerun agreed)" } else { "not settled (a rerun disagreed)" }
        );
        for (what, lines, y_label) in [
            ("latency", &latency[..], "latency (microseconds)"),
            ("errors", &errors[..], "errors per step"),
        ] {
            let chart = Chart {
                title: &format!("{title}: {what} by rate"),
                x_label: &rate,
                y_label,
                lines,
                log_y: false,
                x_bytes: false,
            };
            let _ = write!(
                o,
                "<figure class=\"chart\" data-chart=\"search-{what}\">{}</figure>",
                svg(&chart)
            );
        }
        o.push_str("</div><table><tr><th>step</th><th>rate asked</th><th>achieved</th><th>p50 (us)</th><th>p99 (us)</th><th>sent</th><th>errors</th><th>verdict</th></tr>");
        for (i, st) in f.steps.iter().enumerate() {
            let _ = write!(
                o,
                "<tr data-step=\"{}\"><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                i + 1,
                i + 1,
                if st.rerun { " (rerun)" } else { "" },
                st.asked_per_s,
                exact(st.achieved_per_s),
                exact(st.p50_us),
                exact(st.p99_us),
                st.sent,
                st.errors,
                match (&st.why, st.pass) {
                    (_, true) => "pass".to_string(),
                    (Some(why), false) => format!("FAIL: {}", esc(why)),
                    (None, false) => "FAIL".to_string(),
                }
            );
        }
        o.push_str("</table></section>");
    }
}
