//! A suite load's HTTP settings (`http = { method = "PUT", path = "/x", version = "2" }`),
//! read and validated: what the suite's argv and the external generators (`gen/`) take.

use crate::proto::entry::string_keys;

/// A suite load's HTTP settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpSuite {
    /// The request method: the block's, else POST when the load sends a body, GET when not.
    pub method: String,
    /// The URL path, "/" unless the block says.
    pub path: String,
    /// HTTP/1.1, or HTTP/2 (h2c by prior knowledge: the point's URL is `http://`).
    pub version: Version,
}

/// The HTTP version a suite load speaks: `version = "1.1"` (the default) or `"2"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    H1,
    H2,
}

impl Version {
    /// As the block spells it.
    pub fn text(self) -> &'static str {
        match self {
            Version::H1 => "1.1",
            Version::H2 => "2",
        }
    }
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
            version: Version::H1,
        };
        for (key, value) in string_keys(block, &["method", "path", "version"])? {
            match key {
                "method" => s.method = method(value)?,
                "version" => s.version = version(value)?,
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

fn version(v: &str) -> Result<Version, String> {
    match v {
        "1.1" => Ok(Version::H1),
        "2" => Ok(Version::H2),
        _ => Err(format!(
            "version '{v}' is not one of \"1.1\", \"2\" (HTTP/2 is h2c by prior knowledge)"
        )),
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
                path: "/x".into(),
                version: Version::H1,
            })
        );
        let d = HttpSuite::from_block(None, &[0, 1024]).expect("defaults");
        assert_eq!((d.method.as_str(), d.path.as_str()), ("POST", "/"));
        let h2 = HttpSuite::from_block(Some(&block(r#"{ version = "2" }"#)), &[0]);
        assert_eq!(h2.map(|s| s.version), Ok(Version::H2));
        let e = |t: &str| HttpSuite::from_block(Some(&block(t)), &[0]).unwrap_err();
        assert_eq!(
            e(r#"{ method = "get" }"#),
            "method 'get' is not an HTTP method"
        );
        assert_eq!(e(r#"{ path = "x" }"#), "the path must start with '/'");
        assert_eq!(
            e(r#"{ verb = "GET" }"#),
            "`verb` is not one of method, path, version"
        );
        assert_eq!(e(r#"{ method = 1 }"#), "`method` must be a string");
        assert_eq!(
            e(r#"{ version = "3" }"#),
            "version '3' is not one of \"1.1\", \"2\" (HTTP/2 is h2c by prior knowledge)"
        );
        assert_eq!(
            e("3"),
            "write the settings as a table, as { key = \"value\" }"
        );
    }
}
