//! HTTP in a suite: the argv of `wirebench http` for a point, the external generators
//! that drive it (wrk, ab, h2load: `gen/`), set up with the load's settings
//! (`suite_settings.rs`), and a server's readiness as an answered GET.

use super::gen::{ab::Ab, h2load::H2load, wrk::Wrk};
use super::suite_settings::{path, HttpSuite, Version};
use crate::proto::entry::{ReadyProbe, SuiteLoad, SuitePoint};
use crate::proto::generator::Generator;

/// The external generators that drive HTTP loads.
pub const GENERATORS: &[&str] = &["wrk", "ab", "h2load"];

impl SuiteLoad for HttpSuite {
    fn args(&self, p: &SuitePoint<'_>) -> Vec<String> {
        let mut a: Vec<String> = vec![
            "http".into(),
            self.url(p.addr),
            "-t".into(),
            p.threads.to_string(),
            "-c".into(),
            p.connections.to_string(),
            "-m".into(),
            self.method.clone(),
        ];
        // HTTP/2's requests in flight per connection are streams.
        a.extend(match self.version {
            Version::H1 => ["--pipeline".into(), p.pipeline.to_string()].to_vec(),
            Version::H2 => [
                "--h2".into(),
                "--max-streams".into(),
                p.pipeline.to_string(),
            ]
            .to_vec(),
        });
        if p.size > 0 {
            a.extend(["--body-size".into(), p.size.to_string()]);
        }
        a.extend(p.shared_args());
        a
    }

    fn generator(&self, name: &str) -> Option<Box<dyn Generator + '_>> {
        Some(match name {
            "wrk" => Box::new(Wrk(self)),
            "ab" => Box::new(Ab(self)),
            "h2load" => Box::new(H2load(self)),
            _ => return None,
        })
    }

    fn settings_json(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("method".into(), self.method.clone().into());
        m.insert("http_version".into(), self.version.text().into());
        m
    }
}

/// `ready = { http = "/PATH" }`: a GET of PATH answered with any status line.
pub fn ready_probe(value: &toml::Value) -> Result<ReadyProbe, String> {
    let p = path(
        value
            .as_str()
            .ok_or("give the path to GET, as { http = \"/\" }")?,
    )?;
    Ok(ReadyProbe {
        send: format!("GET {p} HTTP/1.1\r\nHost: {{addr}}\r\nConnection: close\r\n\r\n"),
        answer_starts: b"HTTP/1.",
        asks: format!("GET {p}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_is_an_answered_get() {
        let p = ready_probe(&toml::Value::String("/health".into())).expect("a probe");
        assert_eq!(
            p.send,
            "GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(
            (p.answer_starts, p.asks.as_str()),
            (&b"HTTP/1."[..], "GET /health")
        );
        let e = ready_probe(&toml::Value::String("health".into())).unwrap_err();
        assert_eq!(e, "the path must start with '/'");
    }
}
