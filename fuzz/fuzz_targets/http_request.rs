//! `wirebench::fuzzing::http_request` (src/fuzzing/http_request.rs) under libFuzzer: `cargo +nightly fuzz run http_request`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::http_request::run(data));
