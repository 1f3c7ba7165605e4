//! `wirebench::fuzzing::http_chunked` (src/fuzzing/http_chunked.rs) under libFuzzer: `cargo +nightly fuzz run http_chunked`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::http_chunked::run(data));
