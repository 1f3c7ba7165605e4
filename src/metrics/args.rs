//! `--metrics-listen`, `--metrics-linger`, `--metrics-allow-remote` (`flags::MetricsArgs`,
//! shared by every load and every server), validated once.

use crate::error::{Error, Result};
use crate::flags::MetricsArgs;
use std::net::SocketAddr;
use std::time::Duration;

/// The endpoint asked for: where, and how long it stays up after the run.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsConfig {
    pub addr: SocketAddr,
    pub linger: Duration,
}

impl MetricsConfig {
    /// None when no `--metrics-listen` was given; a bad address or an address other
    /// than loopback without `--metrics-allow-remote` is one sentence.
    pub fn from_args(a: &MetricsArgs) -> Result<Option<MetricsConfig>> {
        let linger = crate::config::duration_flag("--metrics-linger", &a.metrics_linger)?;
        let Some(text) = a.metrics_listen.as_deref() else {
            if !linger.is_zero() || a.metrics_allow_remote {
                return Err(Error::usage(
                    "--metrics-linger and --metrics-allow-remote need --metrics-listen",
                ));
            }
            return Ok(None);
        };
        let addr: SocketAddr = text.parse().map_err(|_| {
            Error::usage(format!(
                "--metrics-listen {text}: not an address with a port (e.g. 127.0.0.1:9464 or [::1]:9464)"
            ))
        })?;
        if !addr.ip().is_loopback() && !a.metrics_allow_remote {
            return Err(Error::usage(format!(
                "--metrics-listen {text} is not a loopback address: add --metrics-allow-remote to serve the metrics to other hosts"
            )));
        }
        Ok(Some(MetricsConfig { addr, linger }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(listen: Option<&str>, linger: &str, remote: bool) -> MetricsArgs {
        MetricsArgs {
            metrics_listen: listen.map(str::to_string),
            metrics_linger: linger.into(),
            metrics_allow_remote: remote,
        }
    }

    #[test]
    fn loopback_by_default_and_other_addresses_when_asked() {
        let ok = MetricsConfig::from_args(&args(Some("127.0.0.1:9464"), "2s", false)).unwrap();
        assert_eq!(ok.unwrap().linger, Duration::from_secs(2));
        assert!(MetricsConfig::from_args(&args(Some("[::1]:9"), "0s", false)).is_ok());
        let e = MetricsConfig::from_args(&args(Some("0.0.0.0:9464"), "0s", false)).unwrap_err();
        assert!(e.to_string().contains("--metrics-allow-remote"), "{e}");
        assert!(MetricsConfig::from_args(&args(Some("0.0.0.0:9464"), "0s", true)).is_ok());
        assert!(MetricsConfig::from_args(&args(Some("localhost"), "0s", false)).is_err());
        assert!(MetricsConfig::from_args(&args(None, "3s", false)).is_err());
        assert_eq!(
            MetricsConfig::from_args(&args(None, "0s", false)).unwrap(),
            None
        );
    }
}
