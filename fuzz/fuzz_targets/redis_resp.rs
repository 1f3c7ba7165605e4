//! `wirebench::fuzzing::redis_resp` (src/fuzzing/redis_resp.rs) under libFuzzer: `cargo +nightly fuzz run redis_resp`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::redis_resp::run(data));
