//! The fuzz targets' corpora, replayed on stable in every test run: each file of
//! `fuzz/corpus/<target>/` (what fuzzing kept) and `fuzz/regressions/<target>/` (the
//! inputs that once crashed a target, kept after their fix) goes through its target's
//! body, `wirebench::fuzzing::<target>::run`, the very function libFuzzer ran. A panic
//! (a failed check of the target, or a crash of the parser) fails the test and names
//! the file. The folders, the targets and fuzz/Cargo.toml are held to each other, so
//! a target without a corpus, or a corpus no target reads, shows.

use crate::common::sorted_entries;
use std::path::{Path, PathBuf};
use wirebench::fuzzing::{target, TARGETS};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The files of `dir/<name>/`, none when the folder does not exist.
fn inputs(dir: &str, name: &str) -> Vec<PathBuf> {
    let d = fuzz_dir().join(dir).join(name);
    if !d.is_dir() {
        return Vec::new();
    }
    sorted_entries(&d)
        .into_iter()
        .filter(|p| p.is_file())
        .collect()
}

#[test]
fn every_corpus_and_regression_input_replays_without_a_panic() {
    let mut failed = Vec::new();
    let mut replayed = 0;
    for (name, run) in TARGETS {
        for dir in ["corpus", "regressions"] {
            for path in inputs(dir, name) {
                let data = std::fs::read(&path)
                    .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
                replayed += 1;
                if std::panic::catch_unwind(|| run(&data)).is_err() {
                    failed.push(format!("{name}: {}", path.display()));
                }
            }
        }
    }
    assert!(replayed > 0, "no corpus file was found");
    assert!(
        failed.is_empty(),
        "{} of {replayed} fuzz inputs panic (messages above):\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn every_target_has_a_corpus_a_fuzz_binary_and_only_those() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for (name, _) in TARGETS {
        assert!(
            !inputs("corpus", name).is_empty(),
            "fuzz/corpus/{name}/ holds no seed"
        );
        assert!(
            manifest.contains(&format!(
                "name = \"{name}\"\npath = \"fuzz_targets/{name}.rs\""
            )),
            "fuzz/Cargo.toml builds no {name}"
        );
        let src = std::fs::read_to_string(fuzz_dir().join(format!("fuzz_targets/{name}.rs")))
            .unwrap_or_else(|e| panic!("fuzz/fuzz_targets/{name}.rs: {e}"));
        assert!(
            src.contains(&format!("wirebench::fuzzing::{name}::run(data)")),
            "fuzz/fuzz_targets/{name}.rs does not run wirebench::fuzzing::{name}::run"
        );
    }
    for dir in ["corpus", "regressions"] {
        let d = fuzz_dir().join(dir);
        if !d.is_dir() {
            continue;
        }
        for sub in sorted_entries(&d) {
            let name = sub.file_name().unwrap().to_string_lossy().into_owned();
            assert!(target(&name).is_some(), "fuzz/{dir}/{name}/ is no target's");
        }
    }
    let bins = manifest.matches("[[bin]]").count();
    assert_eq!(bins, TARGETS.len(), "fuzz/Cargo.toml builds {bins} targets");
}
