//! HTTP in a suite: a load's own settings (`http = { method = "PUT", path = "/x" }`),
//! the argv of `wirebench http` for a point, the external generators that drive it
//! (wrk, ab, h2load: `gen/`), and a server's readiness as an answered GET.

use super::gen::{ab::Ab, h2load::H2load, wrk::Wrk};
use crate::proto::entry::{string_keys, ReadyProbe, SuiteLoad, SuitePoint};
use crate::proto::generator::Generator;

/// The external generators that drive HTTP loads.
pub const GENERATORS: &[&str] = &["wrk", "ab", "h2load"];

/// A suite load's HTTP settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpSuite {
    /// The request method: the block's, else POST when the load sends a body, GET when not.
    pub method: String,
    /// The URL path, "/" unless the block says.
    pub path: String,
}

impl HttpSuite {
    /// The load's `http` block, validated; `sizes` are its body sizes.
    pub fn from_block(block: Option<&toml::Value>, sizes: &[u64]) -> Result<HttpSuite, String> {
        let mut s = HttpSuite {
            method: if sizes.iter().any(|b| *b > 0) {
                "POST"
            } else {
                "GET"
            }
            .into(),
            path: "/".into(),
        };
        for (key, value) in string_keys(block, &["method", "path"])? {
            match key {
                "method" => s.method = method(value)?,
                _ => s.path = path(value)?,
            }
        }
        Ok(s)
    }

    /// What a point is aimed at: its URL.
    pub fn url(&self, addr: &str) -> String {
        format!("http://{addr}{}", self.path)
    }
}

fn method(m: &str) -> Result<String, String> {
    if m.is_empty() || !m.chars().all(|c| c.is_ascii_uppercase()) {
        return Err(format!("method '{m}' is not an HTTP method"));
    }
    Ok(m.into())
}

/// A URL path: from '/', with nothing a request line cannot carry.
pub fn path(p: &str) -> Result<String, String> {
    if !p.starts_with('/') {
        return Err("the path must start with '/'".into());
    }
    if p.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the path {p:?} holds a space or a control character"
        ));
    }
    Ok(p.into())
}

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
            "--pipeline".into(),
            p.pipeline.to_string(),
        ];
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

    fn block(text: &str) -> toml::Value {
        toml::from_str::<toml::Table>(&format!("b = {text}")).expect("toml")["b"].clone()
    }

    #[test]
    fn the_block_sets_method_and_path_and_refuses_the_rest() {
        let s = HttpSuite::from_block(Some(&block(r#"{ method = "PUT", path = "/x" }"#)), &[0]);
        assert_eq!(
            s,
            Ok(HttpSuite {
                method: "PUT".into(),
                path: "/x".into()
            })
        );
        let d = HttpSuite::from_block(None, &[0, 1024]).expect("defaults");
        assert_eq!((d.method.as_str(), d.path.as_str()), ("POST", "/"));
        let e = |t: &str| HttpSuite::from_block(Some(&block(t)), &[0]).unwrap_err();
        assert_eq!(
            e(r#"{ method = "get" }"#),
            "method 'get' is not an HTTP method"
        );
        assert_eq!(e(r#"{ path = "x" }"#), "the path must start with '/'");
        assert_eq!(
            e(r#"{ verb = "GET" }"#),
            "`verb` is not one of method, path"
        );
        assert_eq!(e(r#"{ method = 1 }"#), "`method` must be a string");
        assert_eq!(
            e("3"),
            "write the settings as a table, as { key = \"value\" }"
        );
    }

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
