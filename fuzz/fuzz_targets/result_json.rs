//! `wirebench::fuzzing::result_json` (src/fuzzing/result_json.rs) under libFuzzer: `cargo +nightly fuzz run result_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::result_json::run(data));
