//! Target URLs: `http://host[:port][/path]` and `https://...`, parsed by hand (the
//! only forms a load target needs), each mistake named in one sentence.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    pub tls: bool,
    /// The host as written, without brackets for IPv6 literals.
    pub host: String,
    pub port: u16,
    /// Path and query, starting with '/'.
    pub path: String,
}

impl Url {
    /// The Host header's value: the port only when it is not the scheme's default.
    pub fn authority(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let default = if self.tls { 443 } else { 80 };
        if self.port == default {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }

    /// `host:port` for address resolution.
    pub fn host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

pub fn parse(text: &str) -> Result<Url, String> {
    let Some((scheme, rest)) = text.split_once("://") else {
        return Err(format!(
            "'{text}' is not a URL: write it as http://HOST[:PORT][/PATH] or https://..."
        ));
    };
    let tls = match scheme.to_ascii_lowercase().as_str() {
        "http" => false,
        "https" => true,
        other => {
            return Err(format!(
                "the URL scheme '{other}' is not supported: use http:// or https://"
            ))
        }
    };
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    // A fragment never goes on the wire.
    let path = path.split('#').next().unwrap_or("");
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(format!(
            "the URL '{text}' has a space or control character in its path: percent-encode it"
        ));
    }
    if authority.contains('@') {
        return Err(format!(
            "the URL '{text}' carries user information, which is not supported: send an Authorization header with -H"
        ));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let Some((h, after)) = v6.split_once(']') else {
            return Err(format!("the URL '{text}' has an unclosed '[' in its host"));
        };
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(|| {
                format!("the URL '{text}' has text after its IPv6 host that is not a :PORT")
            })?),
        };
        (h, port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(format!("the URL '{text}' has no host"));
    }
    // Brackets only enclose an IPv6 literal: one left in the host would be sent on in
    // a Host header no server reads as the host asked for.
    if host.contains(['[', ']']) {
        return Err(format!(
            "the URL '{text}' has a '[' or ']' in its host outside an IPv6 address's brackets"
        ));
    }
    if host
        .bytes()
        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        return Err(format!(
            "the URL '{text}' has a host with spaces or control characters"
        ));
    }
    let port = match port {
        None => {
            if tls {
                443
            } else {
                80
            }
        }
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(format!(
                    "the URL '{text}' has no valid port ('{p}' is not 1-65535)"
                ))
            }
        },
    };
    Ok(Url {
        tls,
        host: host.to_string(),
        port,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let u = parse("http://127.0.0.1:8080/a/b?x=1#frag").unwrap();
        assert_eq!(
            (u.tls, u.host.as_str(), u.port, u.path.as_str()),
            (false, "127.0.0.1", 8080, "/a/b?x=1")
        );
        assert_eq!(u.authority(), "127.0.0.1:8080");
        let u = parse("https://localhost").unwrap();
        assert_eq!((u.tls, u.port, u.path.as_str()), (true, 443, "/"));
        assert_eq!(u.authority(), "localhost");
        let u = parse("HTTP://[::1]:81?q").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("::1", 81, "/?q")
        );
        assert_eq!(u.authority(), "[::1]:81");
        assert_eq!(u.host_port(), "[::1]:81");
    }

    #[test]
    fn mistakes() {
        for (bad, phrase) in [
            ("127.0.0.1:80", "not a URL"),
            ("ftp://x/", "scheme 'ftp' is not supported"),
            ("http://", "no host"),
            ("http://:80/", "no host"),
            ("http://h:0/", "no valid port"),
            ("http://h:99999/", "no valid port"),
            ("http://h:x/", "no valid port"),
            ("http://[::1/", "unclosed"),
            ("http://u:p@h/", "user information"),
            ("http://h/a b", "space"),
            // Found by fuzzing (fuzz/regressions/urls/, as wss://): a host with a
            // bracket inside was accepted and its Host header written as
            // "[f[e80::1%25eth0]]:11".
            ("http://f[e80::1%25eth0]:11?y", "outside an IPv6"),
            ("http://Wfe80::1%25eth0]:221/x", "outside an IPv6"),
            ("http://e1f8%[025eth0]:4:4/x", "outside an IPv6"),
            ("http://[a[b]:80/", "outside an IPv6"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(phrase), "{bad}: {e}");
        }
    }
}
