//! `wirebench::fuzzing::generator_output` (src/fuzzing/generator_output.rs) under libFuzzer: `cargo +nightly fuzz run generator_output`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::generator_output::run(data));
