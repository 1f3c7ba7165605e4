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

/// (importing folder or file, imported folder or file, why never).
const NEVER: &[(&str, &str, &str)] = &[
    (
        "src/stats/",
        "src/engine/",
        "stats sit below the engine: the engine fills them, they never read it",
    ),
    (
        "src/stats/",
        "src/server/",
        "stats sit below the server: the server fills them, they never read it",
    ),
    (
        "src/server/",
        "src/engine/",
        "the server and the load engine are siblings on the reactor: what both use sits below them (stats::Figures)",
    ),
    (
        "src/engine/",
        "src/server/",
        "the load engine and the server are siblings on the reactor: what both use sits below them",
    ),
    (
        "src/reactor/",
        "src/engine/",
        "the reactor sits below the load engine and names none of its slots",
    ),
    (
        "src/reactor/",
        "src/server/",
        "the reactor sits below the server and names none of its connections",
    ),
    // The server's connection driver, bottom up: conn.rs (the entry), driver.rs (how it
    // is driven, and the `Core` a core gives it), thread.rs (the thread over either
    // core), then the cores, epoll.rs and uring.rs, side by side.
    (DRIVER_CONN, DRIVER, DRIVER_LOW),
    (DRIVER_CONN, DRIVER_THREAD, DRIVER_LOW),
    (DRIVER_CONN, CORE_EPOLL, DRIVER_LOW),
    (DRIVER_CONN, CORE_URING, DRIVER_LOW),
    (DRIVER, DRIVER_THREAD, DRIVER_LOW),
    (DRIVER, CORE_EPOLL, DRIVER_LOW),
    (DRIVER, CORE_URING, DRIVER_LOW),
    (DRIVER_THREAD, CORE_EPOLL, DRIVER_LOW),
    (DRIVER_THREAD, CORE_URING, DRIVER_LOW),
    (CORE_EPOLL, CORE_URING, CORES),
    (CORE_URING, CORE_EPOLL, CORES),
];

const DRIVER_CONN: &str = "src/server/conn.rs";
const DRIVER: &str = "src/server/driver.rs";
const DRIVER_THREAD: &str = "src/server/thread.rs";
const CORE_EPOLL: &str = "src/server/epoll.rs";
const CORE_URING: &str = "src/server/uring.rs";
const DRIVER_LOW: &str =
    "the server's connection driver is one for both cores: it never names a core or what sits above it";
const CORES: &str =
    "the epoll and io_uring cores each add their own part to the one driver, never the other's";

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
fn a_driver_file_that_names_a_core_is_named() {
    let files = crate_of(&[
        ("src/lib.rs", "pub mod server;\n"),
        (
            "src/server/mod.rs",
            "mod conn;\nmod driver;\nmod epoll;\nmod uring;\n",
        ),
        ("src/server/conn.rs", "pub struct Conn;\n"),
        (
            "src/server/driver.rs",
            "use super::conn::Conn;\nuse super::uring::Ring;\n",
        ),
        ("src/server/epoll.rs", "use super::driver::drive;\n"),
        (
            "src/server/uring.rs",
            "use super::driver::drive;\npub struct Ring;\n",
        ),
    ]);
    assert_eq!(
        upward(&imports(&files), NEVER),
        [format!(
            "src/server/driver.rs:2 server::uring::Ring  ({DRIVER_LOW})"
        )]
    );
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
