//! `wirebench::fuzzing::worker_messages` (src/fuzzing/worker_messages.rs) under libFuzzer: `cargo +nightly fuzz run worker_messages`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::worker_messages::run(data));
