//! `wirebench::fuzzing::urls` (src/fuzzing/urls.rs) under libFuzzer: `cargo +nightly fuzz run urls`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::urls::run(data));
