//! `wirebench::fuzzing::ws_frames` (src/fuzzing/ws_frames.rs) under libFuzzer: `cargo +nightly fuzz run ws_frames`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::ws_frames::run(data));
