//! A suite load of gRPC: `grpc = { call = "package.Service/Method" }` (default
//! `wirebench.Echo/Call`, which `serve grpc` answers), every point an empty message
//! with the point's pipeline as the streams per connection (`-m`).

use super::config::BUILTIN_CALL;
use super::message::CallName;
use crate::proto::entry::{string_keys, SuiteLoad};
use crate::proto::suite_point::SuitePoint;

#[derive(Debug)]
pub struct GrpcSuite {
    call: String,
}

/// The load's own block, checked; a point size is refused (the message is empty).
pub fn load(block: Option<&toml::Value>, sizes: &[u64]) -> Result<Box<dyn SuiteLoad>, String> {
    if sizes.iter().any(|s| *s != 0) {
        return Err("gRPC points send an empty message: drop body_size".into());
    }
    let mut call = BUILTIN_CALL.to_string();
    for (_, value) in string_keys(block, &["call"])? {
        CallName::parse(value).map_err(|e| e.to_string())?;
        call = value.to_string();
    }
    Ok(Box::new(GrpcSuite { call }))
}

impl SuiteLoad for GrpcSuite {
    fn args(&self, p: &SuitePoint<'_>) -> Vec<String> {
        let mut a: Vec<String> = vec![
            "grpc".into(),
            p.addr.to_string(),
            "--call".into(),
            self.call.clone(),
            "-t".into(),
            p.threads.to_string(),
            "-c".into(),
            p.connections.to_string(),
            "-m".into(),
            p.pipeline.to_string(),
        ];
        a.extend(p.shared_args());
        a
    }
}
