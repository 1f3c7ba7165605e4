//! `wirebench::fuzzing::h2_frames` (src/fuzzing/h2_frames.rs) under libFuzzer: `cargo +nightly fuzz run h2_frames`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::h2_frames::run(data));
