//! The summary tables as Markdown (for a pull request or BENCHMARKS.md).

use super::dataset::Dataset;
use super::table::{self, COLUMNS};

pub fn render(d: &Dataset) -> String {
    let mut o = format!(
        "<!-- {} -->\n# {}\n\n",
        super::guard::MARK,
        if d.suite_name.is_empty() {
            "wirebench suite"
        } else {
            &d.suite_name
        }
    );
    o.push_str("## Verdict\n\n");
    for l in super::verdict::lines(d) {
        o.push_str(&format!("- {l}\n"));
    }
    o.push('\n');
    let rows = super::verdict::rows(d);
    if !rows.is_empty() {
        o.push_str(&format!("| {} |\n", super::verdict::COLUMNS.join(" | ")));
        o.push_str(&format!(
            "|{}\n",
            "---|".repeat(super::verdict::COLUMNS.len())
        ));
        for r in &rows {
            o.push_str(&format!("| {} |\n", super::verdict::cells(r).join(" | ")));
        }
        o.push('\n');
    }
    for load in &d.loads {
        let t = table::of(load);
        o.push_str(&format!(
            "## {} ({} via {}; throughput in {}, median of repeats ± half their range)\n\n",
            load.name,
            load.protocol,
            load.generator,
            load.unit.per_s()
        ));
        let mut head = vec![t.axis.clone()];
        for g in &t.groups {
            for c in COLUMNS {
                head.push(format!("{g} {c}"));
            }
        }
        o.push_str(&format!("| {} |\n", head.join(" | ")));
        o.push_str(&format!("|{}\n", "---|".repeat(head.len())));
        for r in &t.rows {
            let mut cells = vec![r.x.clone()];
            for (c, short) in r.cells.iter().zip(&r.short) {
                match c {
                    Some(v) => {
                        for (i, s) in v.iter().enumerate() {
                            cells.push(if i == 0 && *short {
                                format!("{s} (fell short)")
                            } else {
                                s.clone()
                            });
                        }
                    }
                    None => cells.extend(COLUMNS.iter().map(|_| "-".to_string())),
                }
            }
            o.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        o.push('\n');
    }
    o
}
