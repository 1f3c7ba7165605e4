//! `wirebench::fuzzing::suite_toml` (src/fuzzing/suite_toml.rs) under libFuzzer: `cargo +nightly fuzz run suite_toml`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::suite_toml::run(data));
