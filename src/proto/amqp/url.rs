//! `amqp://user:pass@host:port/vhost` and `amqps://...` targets, parsed by
//! amq-protocol's URI parser; the host is taken from the URL itself because that
//! parser keeps only domain names (an IP address would become "localhost").

use crate::error::{Error, Result};
use amq_protocol::uri::{AMQPScheme, AMQPUri};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub vhost: String,
}

impl Target {
    pub fn parse(text: &str) -> Result<Target> {
        let bad = |why: String| {
            Error::usage(format!(
                "{text:?} is not an AMQP URL ({why}); expected amqp://user:pass@host:port/vhost or amqps://..."
            ))
        };
        if !(text.starts_with("amqp://") || text.starts_with("amqps://")) {
            return Err(bad("it must start with amqp:// or amqps://".into()));
        }
        let uri: AMQPUri = text.parse().map_err(|e: String| bad(e.to_lowercase()))?;
        let parsed = ::url::Url::parse(text).map_err(|e| bad(e.to_string()))?;
        let host = match parsed.host_str() {
            Some(h) if !h.is_empty() => h.trim_start_matches('[').trim_end_matches(']').to_string(),
            _ => return Err(bad("it names no host".into())),
        };
        Ok(Target {
            tls: uri.scheme == AMQPScheme::AMQPS,
            host,
            port: uri.authority.port,
            user: uri.authority.userinfo.username,
            password: uri.authority.userinfo.password,
            vhost: if uri.vhost.is_empty() {
                "/".into()
            } else {
                uri.vhost
            },
        })
    }

    /// `host:port`, for the address resolver.
    pub fn host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The URL without its password, for reports.
    pub fn display(&self) -> String {
        format!(
            "{}://{}@{}/{}",
            if self.tls { "amqps" } else { "amqp" },
            self.user,
            self.host_port(),
            self.vhost.trim_start_matches('/')
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_url_with_ip_host() {
        let t = Target::parse("amqp://bob:s%40cret@127.0.0.1:5673/prod").unwrap();
        assert_eq!(
            t,
            Target {
                tls: false,
                host: "127.0.0.1".into(),
                port: 5673,
                user: "bob".into(),
                password: "s@cret".into(),
                vhost: "prod".into(),
            }
        );
    }

    #[test]
    fn defaults_and_amqps() {
        let t = Target::parse("amqps://localhost").unwrap();
        assert_eq!(
            (t.tls, t.port, t.user.as_str(), t.vhost.as_str()),
            (true, 5671, "guest", "/")
        );
        // An empty vhost (trailing slash) means the default one, as pika reads it.
        let t = Target::parse("amqp://127.0.0.1:5672/").unwrap();
        assert_eq!(t.vhost, "/");
    }

    #[test]
    fn bad_urls_are_usage_errors() {
        for u in [
            "http://x",
            "amqp://",
            "amqp://h:99999",
            "127.0.0.1:5672",
            "amqp://h:5672?heartbeat=x",
        ] {
            assert!(matches!(Target::parse(u), Err(Error::Usage(_))), "{u}");
        }
    }
}
