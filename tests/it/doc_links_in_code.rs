//! Comments, scripts and prose point at sections of the docs that are there. A section
//! is cited as `FILE.md#anchor` (BENCHMARKS.md, ARCHITECTURE.md, README.md,
//! docs/NAME.md): the file must exist and the anchor be one of its headings. A section
//! cited by its quoted title (`BENCHMARKS.md, "The load engine on io_uring"`) is
//! refused: when the section is renamed or folded away, nothing would notice the
//! citation went stale.

use crate::common::sorted_entries;
use crate::doc_links::anchors;
use std::path::{Path, PathBuf};

/// Files of code, scripts, data and prose under `root` that may cite the docs (the
/// Markdown too: its links are tests/it/doc_links.rs's, its quoted titles this file's):
/// not the raw runs, build output, fuzz inputs or hidden folders, and not the two
/// checkers, whose tests cite made-up files on purpose.
fn code_files(root: &Path) -> Vec<PathBuf> {
    const SKIP: &[&str] = &[
        "benchsuite/runs",
        "target",
        "fuzz/corpus",
        "fuzz/regressions",
        "fuzz/artifacts",
        "fuzz/target",
        "tests/it/doc_links.rs",
        "tests/it/doc_links_in_code.rs",
    ];
    const EXTS: &[&str] = &[
        "rs", "sh", "py", "toml", "c", "go", "yaml", "json", "in", "md",
    ];
    fn walk(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
        for p in sorted_entries(dir) {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            let hidden = rel
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.') && n != ".ci");
            if hidden || SKIP.iter().any(|s| rel == Path::new(s)) {
                continue;
            }
            if p.is_dir() {
                walk(&p, root, out);
            } else if p
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| EXTS.contains(&x))
                || p.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == ".ci")
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// One citation of a Markdown file of the repository in a code file.
#[derive(Debug, PartialEq, Eq)]
struct Citation {
    line: usize,
    /// The cited file, relative to the repository's root.
    file: String,
    /// `#anchor`, when cited with one.
    anchor: Option<String>,
    /// Cited by a quoted title after the file's name.
    quoted: Option<String>,
}

/// Whether a path named in code is one of the docs: README.md, BENCHMARKS.md,
/// ARCHITECTURE.md or docs/NAME.md (a leading `../` or `./` of a relative link dropped).
fn doc_named(token: &str) -> Option<String> {
    let mut t = token;
    while let Some(rest) = t.strip_prefix("../").or_else(|| t.strip_prefix("./")) {
        t = rest;
    }
    let top = ["README.md", "BENCHMARKS.md", "ARCHITECTURE.md"].contains(&t);
    let page = t.strip_prefix("docs/").is_some_and(|n| {
        n.strip_suffix(".md").is_some_and(|stem| {
            !stem.is_empty()
                && stem
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
    });
    (top || page).then(|| t.to_string())
}

/// Every citation of the docs in `text`: the path before each `.md`, then what follows
/// it: `#anchor`, or a quoted title after a separator (a comma, spaces, a line break
/// and the next line's comment marker), kept up to its line's end.
fn citations(text: &str) -> Vec<Citation> {
    let is_path = |c: char| c.is_ascii_alphanumeric() || "._/-".contains(c);
    let is_anchor = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(".md").map(|i| from + i) {
        let end = at + 3;
        from = end;
        if text[end..].chars().next().is_some_and(is_anchor) {
            continue; // .mdx, .md5: not a Markdown file's name
        }
        let start = text[..at].rfind(|c: char| !is_path(c)).map_or(0, |i| i + 1);
        let Some(file) = doc_named(&text[start..end]) else {
            continue;
        };
        let line = text[..at].matches('\n').count() + 1;
        let rest = &text[end..];
        let anchor = rest
            .strip_prefix('#')
            .filter(|r| r.starts_with(is_anchor))
            .map(|r| r[..r.find(|c| !is_anchor(c)).unwrap_or(r.len())].to_string());
        let gap = rest.len()
            - rest
                .trim_start_matches([',', ' ', '\t', '\n', '/', '!', '#'])
                .len();
        let quoted = (anchor.is_none() && gap > 0)
            .then(|| rest[gap..].strip_prefix('"'))
            .flatten()
            .map(|r| r[..r.find(['"', '\n']).unwrap_or(r.len())].to_string());
        out.push(Citation {
            line,
            file,
            anchor,
            quoted,
        });
    }
    out
}

/// Every citation under `root` that points at nothing, or at a section by its title,
/// one line each.
fn stale(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for path in code_files(root) {
        let Some(text) = std::fs::read(&path)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
        else {
            continue; // not text
        };
        let shown = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        for c in citations(&text) {
            let at = format!("{shown}:{}", c.line);
            let Ok(doc) = std::fs::read_to_string(root.join(&c.file)) else {
                out.push(format!("{at}: cites {}, which does not exist", c.file));
                continue;
            };
            if let Some(title) = c.quoted {
                out.push(format!(
                    "{at}: cites {} by the title \"{title}\": cite it as {}#anchor",
                    c.file, c.file
                ));
            } else if let Some(a) = c.anchor.filter(|a| !anchors(&doc).contains(a)) {
                out.push(format!(
                    "{at}: cites {}#{a}, which has no such heading",
                    c.file
                ));
            }
        }
    }
    out
}

#[test]
fn every_section_code_cites_is_a_heading_of_its_file() {
    let found = stale(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(
        found.is_empty(),
        "citations of the docs in code that point at nothing (cite a section as \
         FILE.md#anchor, the anchor of a heading it has now):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_stale_anchor_a_quoted_title_or_a_missing_page_is_reported() {
    let root = crate::common::TempPath::new("doc-links-in-code", "");
    let dir = |d: &str| std::fs::create_dir_all(root.path().join(d)).expect("make a folder");
    let write = |f: &str, text: &str| std::fs::write(root.path().join(f), text).expect("write");
    dir("src/engine");
    dir("docs");
    dir("benchsuite/runs/old");
    write(
        "BENCHMARKS.md",
        "# Benchmarks\n## Memory per idle connection\n",
    );
    write("docs/serve.md", "# Serve\n## Caveats\n");
    write(
        "src/engine/busy.rs",
        "//! 217 B (BENCHMARKS.md#memory-per-idle-connection; docs/serve.md#caveats).\n\
         //! Gone: BENCHMARKS.md#client-memory-per-idle-connection-again.\n\
         // (BENCHMARKS.md, \"Client: per-request cost and\n\
         // memory, again\"); read(\"docs/serve.md\") and docs/shards.md; x.mdx\n",
    );
    write(
        "benchsuite/a.sh",
        "# a wake-up (BENCHMARKS.md\n# \"Who pays for a sleep\")\n",
    );
    write(
        "README.md",
        "[ok](BENCHMARKS.md#memory-per-idle-connection); BENCHMARKS.md, \"WebSocket\".\n",
    );
    // Raw runs are not checked.
    write(
        "benchsuite/runs/old/a.sh",
        "# BENCHMARKS.md \"Fifth session\"\n",
    );
    assert_eq!(
        stale(root.path()),
        [
            "README.md:1: cites BENCHMARKS.md by the title \"WebSocket\": cite it as \
             BENCHMARKS.md#anchor",
            "benchsuite/a.sh:1: cites BENCHMARKS.md by the title \"Who pays for a sleep\": \
             cite it as BENCHMARKS.md#anchor",
            "src/engine/busy.rs:2: cites BENCHMARKS.md#client-memory-per-idle-connection-again, \
             which has no such heading",
            "src/engine/busy.rs:3: cites BENCHMARKS.md by the title \"Client: per-request cost \
             and\": cite it as BENCHMARKS.md#anchor",
            "src/engine/busy.rs:4: cites docs/shards.md, which does not exist",
        ]
    );
}
