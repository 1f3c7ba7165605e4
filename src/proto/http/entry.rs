//! HTTP in a suite and in the schema (`proto::entry::Entry`): the only protocol the
//! external HTTP generators (wrk, ab, h2load) drive; its `status_classes` block.

use super::plugin::Http;
use crate::proto::entry::{Entry, SuitePoint};
use crate::proto::plugin::Protocol;

impl Entry for Http {
    fn name(&self) -> &'static str {
        <Http as Protocol>::NAME
    }

    fn result_blocks_schema(&self) -> &'static str {
        include_str!("figures.schema.json")
    }

    fn suite_generators(&self) -> &'static [&'static str] {
        &["wrk", "ab", "h2load"]
    }

    fn suite_target(&self, addr: &str, path: &str) -> String {
        format!("http://{addr}{path}")
    }

    fn suite_args(&self, p: &SuitePoint<'_>) -> Vec<String> {
        let mut a: Vec<String> = vec![
            self.name().into(),
            self.suite_target(p.addr, p.path),
            "-t".into(),
            p.threads.to_string(),
            "-c".into(),
            p.connections.to_string(),
            "-m".into(),
            p.method.into(),
            "--pipeline".into(),
            p.pipeline.to_string(),
        ];
        if p.size > 0 {
            a.extend(["--body-size".into(), p.size.to_string()]);
        }
        a.extend(p.shared_args());
        a
    }
}
