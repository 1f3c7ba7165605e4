//! `ws://HOST[:PORT][/PATH]` and `wss://...`: the same forms as an HTTP target, so
//! parsed by `http::url` with the scheme swapped, mistakes named with the URL as written.

use crate::proto::http::url::{self, Url};

pub fn parse(text: &str) -> Result<Url, String> {
    let Some((scheme, rest)) = text.split_once("://") else {
        return Err(format!(
            "'{text}' is not a WebSocket URL: write it as ws://HOST[:PORT][/PATH] or wss://..."
        ));
    };
    let http = match scheme.to_ascii_lowercase().as_str() {
        "ws" => "http",
        "wss" => "https",
        other => {
            return Err(format!(
                "the URL scheme '{other}' is not supported: use ws:// or wss://"
            ))
        }
    };
    let as_http = format!("{http}://{rest}");
    url::parse(&as_http).map_err(|e| e.replace(&as_http, text))
}

/// The URL as the result names it.
pub fn text(u: &Url) -> String {
    format!(
        "{}://{}{}",
        if u.tls { "wss" } else { "ws" },
        u.authority(),
        u.path
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_and_mistakes() {
        let u = parse("wss://example.org/chat?room=1").unwrap();
        assert_eq!(
            (u.tls, u.port, u.path.as_str()),
            (true, 443, "/chat?room=1")
        );
        assert_eq!(text(&u), "wss://example.org/chat?room=1");
        let u = parse("ws://127.0.0.1:9001").unwrap();
        assert_eq!(
            (u.tls, u.port, text(&u).as_str()),
            (false, 9001, "ws://127.0.0.1:9001/")
        );
        assert!(parse("http://h/")
            .unwrap_err()
            .contains("'http' is not supported"));
        assert!(parse("127.0.0.1:80")
            .unwrap_err()
            .contains("not a WebSocket URL"));
        let e = parse("ws://h:0/").unwrap_err();
        assert!(
            e.contains("'ws://h:0/'") && e.contains("no valid port"),
            "{e}"
        );
    }
}
