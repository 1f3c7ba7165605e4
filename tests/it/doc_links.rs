//! The Markdown of the repository points at things that are there: every relative link
//! names a file that exists (and, with `#anchor`, a heading of it), and every raw run a
//! document names (`benchsuite/runs/...`, linked or in a command) is in the tree. Old
//! raw runs leave the tree (git keeps them), so a page that still cites one fails here.

use crate::common::{sorted_entries, TempPath};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every .md file under `root`, but not the runs' own reports (benchsuite/runs), build
/// output (target) or hidden folders (.git).
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
        for p in sorted_entries(dir) {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if p.is_dir() {
                let skip = name.starts_with('.')
                    || name == "target"
                    || p.strip_prefix(root)
                        .is_ok_and(|r| r == Path::new("benchsuite/runs"));
                if !skip {
                    walk(&p, root, out);
                }
            } else if name.ends_with(".md") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// The lines of a Markdown text outside fenced code blocks.
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The targets of inline links, `[text](target)`, outside fenced code.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            // A title (`[a](b "title")`) is not part of the target.
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push(target.to_string());
            rest = &after[end..];
        }
    }
    out
}

/// Every `benchsuite/runs/...` path a text names, in prose or in code, up to the first
/// character that cannot be in a path; a sentence's full stop is not part of it.
fn run_paths(text: &str) -> Vec<String> {
    const RUNS: &str = "benchsuite/runs/";
    let is_path = |c: char| c.is_ascii_alphanumeric() || "._/-".contains(c);
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(RUNS) {
        let tail = &rest[at..];
        let end = tail.find(|c: char| !is_path(c)).unwrap_or(tail.len());
        out.push(tail[..end].trim_end_matches('.').to_string());
        rest = &tail[RUNS.len()..];
    }
    out
}

/// The anchors GitHub gives a text's headings: lowercase; letters, digits, spaces, `-`
/// and `_` kept; spaces become `-`; a repeated heading gets `-1`, `-2`, ...
pub(crate) fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in prose_lines(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        let Some(title) = line[hashes..]
            .strip_prefix(' ')
            .filter(|_| (1..=6).contains(&hashes))
        else {
            continue;
        };
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut name = slug.clone();
        let mut n = 0;
        while out.contains(&name) {
            n += 1;
            name = format!("{slug}-{n}");
        }
        out.insert(name);
    }
    out
}

/// Whether a link leaves the repository (a URL, a mail address).
fn is_external(target: &str) -> bool {
    target.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphabetic())
    })
}

/// What one link of `file` misses, if anything: the file it names, or the heading.
fn check_link(root: &Path, file: &Path, text: &str, target: &str) -> Option<String> {
    if target.is_empty() || is_external(target) {
        return None;
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let dest = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().unwrap_or(root).join(path)
    };
    if !dest.exists() {
        return Some(format!("links to {target}, which does not exist"));
    }
    if anchor.is_empty() || dest.extension().map_or(true, |x| x != "md") {
        return None;
    }
    let dest_text = if path.is_empty() {
        text.to_string()
    } else {
        std::fs::read_to_string(&dest).unwrap_or_default()
    };
    (!anchors(&dest_text).contains(anchor))
        .then(|| format!("links to {target}, whose file has no heading #{anchor}"))
}

/// Every broken link and missing raw run in the Markdown under `root`, one line each.
fn broken(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for file in markdown_files(root) {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for target in link_targets(&text) {
            if let Some(why) = check_link(root, &file, &text, &target) {
                out.push(format!("{shown}: {why}"));
            }
        }
        for run in run_paths(&text) {
            if !root.join(&run).exists() {
                out.push(format!("{shown}: names {run}, which is not in the tree"));
            }
        }
    }
    out
}

#[test]
fn every_relative_link_and_named_raw_run_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = broken(root);
    assert!(
        found.is_empty(),
        "broken links or raw runs named but not in the tree (a raw run named by a page \
         stays in benchsuite/runs; git keeps the others):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_reads_links_runs_and_anchors() {
    let text = "# Top\n## `serve echo` vs C: 1.0x\n## Top\n\
                see [a](docs/a.md#x), [b](https://e.org/y) and [c](#top-1 \"t\").\n\
                ```sh\n[not](a/link) OUT=benchsuite/runs/2026-11-23/code/\n```\n\
                raw: benchsuite/runs/2026-11-23/final8/pooled.txt.\n";
    assert_eq!(
        link_targets(text),
        ["docs/a.md#x", "https://e.org/y", "#top-1"]
    );
    assert_eq!(
        run_paths(text),
        [
            "benchsuite/runs/2026-11-23/code/",
            "benchsuite/runs/2026-11-23/final8/pooled.txt"
        ]
    );
    let want: BTreeSet<String> = ["top", "serve-echo-vs-c-10x", "top-1"]
        .map(String::from)
        .into();
    assert_eq!(anchors(text), want);
    assert!(is_external("mailto:x@e.org") && !is_external("docs/a.md"));
}

#[test]
fn a_missing_file_heading_or_raw_run_is_reported() {
    let root = TempPath::new("doc-links", "");
    let runs = root.path().join("benchsuite/runs/2026-11-23/kept");
    std::fs::create_dir_all(&runs).expect("make the runs folder");
    std::fs::create_dir_all(root.path().join("docs")).expect("make docs/");
    std::fs::write(runs.join("raw.tsv"), "").expect("write a raw run");
    // A report inside a run links to nothing that exists: runs are not checked.
    std::fs::write(runs.join("report.md"), "[x](gone.png)").expect("write a report");
    std::fs::write(root.path().join("docs/a.md"), "# Shards\n").expect("write docs/a.md");
    std::fs::write(
        root.path().join("README.md"),
        "[ok](docs/a.md#shards) [ok](benchsuite/runs/2026-11-23/kept/raw.tsv)\n\
         [gone](docs/b.md) [no heading](docs/a.md#merge) [here](#nowhere)\n\
         raw: benchsuite/runs/2026-11-22/removed/summary.md\n",
    )
    .expect("write README.md");
    assert_eq!(
        broken(root.path()),
        [
            "README.md: links to docs/b.md, which does not exist",
            "README.md: links to docs/a.md#merge, whose file has no heading #merge",
            "README.md: links to #nowhere, whose file has no heading #nowhere",
            "README.md: names benchsuite/runs/2026-11-22/removed/summary.md, which is not in the tree",
        ]
    );
}
