//! `wirebench::fuzzing::merge_shards` (src/fuzzing/merge_shards.rs) under libFuzzer: `cargo +nightly fuzz run merge_shards`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::merge_shards::run(data));
