//! `wirebench::fuzzing::amqp_frames` (src/fuzzing/amqp_frames.rs) under libFuzzer: `cargo +nightly fuzz run amqp_frames`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::amqp_frames::run(data));
