//! `wirebench::fuzzing::ws_handshake` (src/fuzzing/ws_handshake.rs) under libFuzzer: `cargo +nightly fuzz run ws_handshake`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wirebench::fuzzing::ws_handshake::run(data));
