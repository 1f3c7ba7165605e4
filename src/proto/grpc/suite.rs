//! A suite load of gRPC (its settings: `suite_settings.rs`), each key of its block
//! passed on as the command's flag of that name, so every point sends the message
//! given (an empty one with none; `call` by default `wirebench.Echo/Call`, which
//! `serve grpc` answers), with the point's pipeline as the streams per connection
//! (`-m`); or driven by ghz (`ghz.rs`).

use super::ghz::Ghz;
use super::suite_settings::GrpcSuite;
use crate::proto::entry::SuiteLoad;
use crate::proto::generator::Generator;
use crate::proto::suite_point::SuitePoint;

/// The external generators that drive gRPC loads.
pub const GENERATORS: &[&str] = &["ghz"];

/// `Entry::suite_load` of gRPC.
pub fn load(block: Option<&toml::Value>, sizes: &[u64]) -> Result<Box<dyn SuiteLoad>, String> {
    Ok(Box::new(GrpcSuite::from_block(block, sizes)?))
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

    fn generator(&self, name: &str) -> Option<Box<dyn Generator + '_>> {
        (name == "ghz").then(|| Box::new(Ghz(self)) as Box<dyn Generator + '_>)
    }

    fn settings_json(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("call".into(), self.call.clone().into());
        m
    }
}
