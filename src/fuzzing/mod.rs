//! The fuzz targets' bodies: one module per parser that reads the network or a file,
//! each with `run(data)`, the whole of what its target in `fuzz/fuzz_targets/` does
//! with one input. The targets are one line each, and the stable corpus replay
//! (`tests/it/fuzz_corpus.rs`) calls the same functions, so CI replays exactly what
//! libFuzzer ran. A body asserts what must hold and panics when it does not: the
//! panic is the finding.

pub mod amqp_frames;
pub mod echo_frames;
pub mod generator_output;
pub mod h2_frames;
pub mod http_chunked;
pub mod http_request;
pub mod http_response;
pub mod merge_shards;
pub mod redis_resp;
pub mod result_json;
pub mod suite_toml;
pub mod urls;
pub mod worker_messages;
pub mod ws_frames;
pub mod ws_handshake;

/// A target's body: one input, run whole.
pub type Body = fn(&[u8]);

/// Every target by name (its `fuzz/fuzz_targets/<name>.rs` and `fuzz/corpus/<name>/`).
pub const TARGETS: &[(&str, Body)] = &[
    ("amqp_frames", amqp_frames::run),
    ("echo_frames", echo_frames::run),
    ("generator_output", generator_output::run),
    ("h2_frames", h2_frames::run),
    ("http_chunked", http_chunked::run),
    ("http_request", http_request::run),
    ("http_response", http_response::run),
    ("merge_shards", merge_shards::run),
    ("redis_resp", redis_resp::run),
    ("result_json", result_json::run),
    ("suite_toml", suite_toml::run),
    ("urls", urls::run),
    ("worker_messages", worker_messages::run),
    ("ws_frames", ws_frames::run),
    ("ws_handshake", ws_handshake::run),
];

/// The target named `name`.
pub fn target(name: &str) -> Option<Body> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}
