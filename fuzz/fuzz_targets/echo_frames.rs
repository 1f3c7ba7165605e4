//! `wirebench::fuzzing::echo_frames` (src/fuzzing/echo_frames.rs) under libFuzzer: `cargo +nightly fuzz run echo_frames`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::echo_frames::run(data));
