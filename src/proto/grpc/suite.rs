//! A suite load of gRPC: `grpc = { call = "package.Service/Method", proto = "FILE",
//! data = "JSON" }` (or `data_file`, raw protobuf bytes), each key passed on as the
//! command's flag of that name, so every point sends the message given (an empty one
//! with none; `call` by default `wirebench.Echo/Call`, which `serve grpc` answers),
//! with the point's pipeline as the streams per connection (`-m`).

use super::config::BUILTIN_CALL;
use super::message::CallName;
use crate::proto::entry::{string_keys, SuiteLoad};
use crate::proto::suite_point::SuitePoint;

#[derive(Debug)]
pub struct GrpcSuite {
    call: String,
    /// `proto`, `data`, `data_file` as their flags and values, in the block's order.
    message: Vec<String>,
}

/// The load's own block, checked (the command checks the message itself when a point
/// runs); a point size is refused (the message is the one given).
pub fn load(block: Option<&toml::Value>, sizes: &[u64]) -> Result<Box<dyn SuiteLoad>, String> {
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
    Ok(Box::new(GrpcSuite { call, message }))
}

impl SuiteLoad for GrpcSuite {
    fn args(&self, p: &SuitePoint<'_>) -> Vec<String> {
        let mut a: Vec<String> = vec![
            "grpc".into(),
            p.addr.to_string(),
            "--call".into(),
            self.call.clone(),
        ];
        a.extend(self.message.iter().cloned());
        a.extend([
            "-t".into(),
            p.threads.to_string(),
            "-c".into(),
            p.connections.to_string(),
            "-m".into(),
            p.pipeline.to_string(),
        ]);
        a.extend(p.shared_args());
        a
    }
}
