//! `wirebench::fuzzing::http_response` (src/fuzzing/http_response.rs) under libFuzzer: `cargo +nightly fuzz run http_response`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::http_response::run(data));
