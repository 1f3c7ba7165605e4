//! The crate's files import one way (the project's design rules, `../shared/DESIGN.md`
//! beside the repository: "Data flows one way ... Nothing below imports from above"):
//! no two files of src/ import each other, and no folder imports one that `NEVER` puts
//! above it. `scan` reads the imports from the source text; the tests at the end hold
//! the scan to small made-up crates, so a rule that can no longer fail shows.

mod scan;

use crate::common::sorted_entries;
use scan::{imports, Import};
use std::collections::BTreeMap;
use std::path::Path;

/// (importing folder, imported folder, why never).
const NEVER: &[(&str, &str, &str)] = &[(
    "src/stats/",
    "src/engine/",
    "stats sit below the engine: the engine fills them, they never read it",
)];

/// Every .rs file under src/, as (src/..., text).
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
        for p in sorted_entries(dir) {
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).expect("under the root");
                let text = std::fs::read_to_string(&p)
                    .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
                out.push((rel.to_string_lossy().replace('\\', "/"), text));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    walk(&root.join("src"), root, &mut out);
    out
}

/// Each pair of files that import each other, with what ties them either way.
fn two_file_cycles(found: &[Import]) -> Vec<String> {
    let mut by_pair: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for i in found {
        by_pair
            .entry((i.from.as_str(), i.to.as_str()))
            .or_default()
            .push(i.at.as_str());
    }
    by_pair
        .iter()
        .filter(|((a, b), _)| a < b)
        .filter_map(|((a, b), there)| {
            let back = by_pair.get(&(*b, *a))?;
            Some(format!(
                "{a} <-> {b}\n    {}\n    {}",
                there.join("\n    "),
                back.join("\n    ")
            ))
        })
        .collect()
}

/// Each import that `never` forbids, with the reason.
fn upward(found: &[Import], never: &[(&str, &str, &str)]) -> Vec<String> {
    found
        .iter()
        .flat_map(|i| {
            never
                .iter()
                .filter(|(low, high, _)| i.from.starts_with(low) && i.to.starts_with(high))
                .map(move |(_, _, why)| format!("{}  ({why})", i.at))
        })
        .collect()
}

#[test]
fn no_two_files_of_src_import_each_other() {
    let found = imports(&sources());
    // The scan reads the crate at all (several hundred imports today).
    assert!(
        found.len() > 300,
        "only {} imports found in src/",
        found.len()
    );
    let cycles = two_file_cycles(&found);
    assert!(
        cycles.is_empty(),
        "{} pairs of files import each other; move what the child takes from its \
         parent's mod.rs into a leaf file of its own and import that:\n{}",
        cycles.len(),
        cycles.join("\n")
    );
}

#[test]
fn no_folder_imports_one_above_it() {
    let found = imports(&sources());
    let bad = upward(&found, NEVER);
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

// ------------------------------------------------ the scan, on made-up crates

fn crate_of(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

fn pairs(found: &[Import]) -> Vec<(String, String)> {
    let mut v: Vec<_> = found
        .iter()
        .map(|i| (i.from.clone(), i.to.clone()))
        .collect();
    v.sort();
    v.dedup();
    v
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

#[test]
fn a_child_that_imports_its_parents_mod_rs_is_a_cycle() {
    let tangled = crate_of(&[
        ("src/lib.rs", "pub mod engine;\n"),
        (
            "src/engine/mod.rs",
            "mod spec;\nmod worker;\npub use worker::run;\npub struct Plan;\n",
        ),
        (
            "src/engine/worker.rs",
            "use super::Plan;\npub fn run() {}\n",
        ),
    ]);
    let found = imports(&tangled);
    assert_eq!(
        two_file_cycles(&found),
        ["src/engine/mod.rs <-> src/engine/worker.rs\n    \
          src/engine/mod.rs:3 engine::worker::run\n    \
          src/engine/worker.rs:1 engine::Plan"]
    );
    // The same crate with `Plan` in a leaf file of its own.
    let untied = crate_of(&[
        ("src/lib.rs", "pub mod engine;\n"),
        (
            "src/engine/mod.rs",
            "mod spec;\nmod worker;\npub use spec::Plan;\npub use worker::run;\n",
        ),
        ("src/engine/spec.rs", "pub struct Plan;\n"),
        (
            "src/engine/worker.rs",
            "use super::spec::Plan;\npub fn run() {}\n",
        ),
    ]);
    let found = imports(&untied);
    assert_eq!(two_file_cycles(&found), Vec::<String>::new());
    assert_eq!(
        pairs(&found),
        [
            pair("src/engine/mod.rs", "src/engine/spec.rs"),
            pair("src/engine/mod.rs", "src/engine/worker.rs"),
            pair("src/engine/worker.rs", "src/engine/spec.rs"),
        ]
    );
}

#[test]
fn paths_in_code_trees_and_globs_are_imports() {
    let files = crate_of(&[
        ("src/lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        (
            "src/a.rs",
            "use crate::{b::{self, B}, c::*};\nfn f() { let _ = super::c::C; }\n",
        ),
        (
            "src/b.rs",
            "pub struct B;\nfn g() -> u8 { crate::a::h() }\n",
        ),
        ("src/c.rs", "pub struct C;\n"),
    ]);
    assert_eq!(
        pairs(&imports(&files)),
        [
            pair("src/a.rs", "src/b.rs"),
            pair("src/a.rs", "src/c.rs"),
            pair("src/b.rs", "src/a.rs"),
        ]
    );
}

#[test]
fn comments_strings_std_and_a_files_own_tests_are_no_imports() {
    let files = crate_of(&[
        ("src/lib.rs", "pub mod a;\npub mod b;\n"),
        (
            "src/a.rs",
            "// use crate::b::B;\n/* crate::b::B */\nconst S: &str = \"crate::b::B\";\n\
             const R: &str = r#\"super::b\"#;\nconst Q: char = '\\'';\n\
             use std::sync::Arc;\nfn f<'x>(v: &'x u8) {}\n\
             #[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        ),
        ("src/b.rs", "pub struct B;\n"),
    ]);
    assert_eq!(pairs(&imports(&files)), Vec::<(String, String)>::new());
}

#[test]
fn an_import_that_never_forbids_is_named() {
    let files = crate_of(&[
        ("src/lib.rs", "pub mod engine;\npub mod stats;\n"),
        ("src/engine/mod.rs", "pub const CLASSES: usize = 6;\n"),
        (
            "src/stats/mod.rs",
            "use crate::engine::CLASSES;\npub struct S([u64; CLASSES]);\n",
        ),
    ]);
    assert_eq!(
        upward(&imports(&files), NEVER),
        [
            "src/stats/mod.rs:1 engine::CLASSES  (stats sit below the engine: the engine \
          fills them, they never read it)"
        ]
    );
}
