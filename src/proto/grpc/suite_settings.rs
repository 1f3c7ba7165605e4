//! A suite load's gRPC settings, `grpc = { call = "package.Service/Method", proto =
//! "FILE", data = "JSON" }` (or `data_file`, raw protobuf bytes), read and checked:
//! what the suite's argv (`suite.rs`) and ghz (`ghz.rs`) take.

use super::config::BUILTIN_CALL;
use super::message::CallName;
use crate::proto::entry::string_keys;

#[derive(Debug)]
pub struct GrpcSuite {
    /// `package.Service/Method`; by default `wirebench.Echo/Call`.
    pub call: String,
    /// `proto`, `data`, `data_file` as `wirebench grpc`'s flags and values, by key.
    pub message: Vec<String>,
}

impl GrpcSuite {
    /// The load's own block, checked (the command checks the message itself when a
    /// point runs); a point size is refused (the message is the one given).
    pub fn from_block(block: Option<&toml::Value>, sizes: &[u64]) -> Result<GrpcSuite, String> {
        if sizes.iter().any(|s| *s != 0) {
            return Err(
                "gRPC points send the message given (data or data_file): drop body_size".into(),
            );
        }
        let mut call = BUILTIN_CALL.to_string();
        let mut message = Vec::new();
        for (key, value) in string_keys(block, &["call", "proto", "data", "data_file"])? {
            if key == "call" {
                CallName::parse(value).map_err(|e| e.to_string())?;
                call = value.to_string();
            } else {
                message.extend([format!("--{}", key.replace('_', "-")), value.to_string()]);
            }
        }
        Ok(GrpcSuite { call, message })
    }
}
