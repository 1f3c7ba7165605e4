//! `--connect-to` (curl's and oha's): a target's connections go to another address,
//! while everything that names the server (the Host header, `:authority`, the TLS
//! server name and the name its certificate is checked against) stays the target's.
//! The target's own host is then never resolved, so a name no resolver knows (or one
//! that would resolve elsewhere) can be loaded at a loopback address.

use super::addr;
use crate::error::{Error, Result};
use std::net::SocketAddr;

/// Where a load's connections go and the host that names its server: `target`
/// (HOST:PORT) resolved, or with `connect_to`, that address and the target's host.
pub fn aim(target: &str, connect_to: Option<&str>) -> Result<(SocketAddr, String)> {
    let Some(to) = connect_to else {
        return addr::resolve_target(target);
    };
    let (host, port) = split(target)
        .ok_or_else(|| Error::usage(format!("'{target}' is not a HOST:PORT address")))?;
    let to = match curl_form(to) {
        Some((from_host, from_port, rest)) => {
            let host_ok = from_host.is_empty() || from_host.eq_ignore_ascii_case(host);
            if !host_ok || !(from_port.is_empty() || from_port == port) {
                return Err(Error::usage(format!(
                    "--connect-to {to} maps {from_host}:{from_port}, not the target's {host}:{port}"
                )));
            }
            rest
        }
        None => to,
    };
    if split(to).is_none() {
        return Err(Error::usage(format!(
            "--connect-to '{to}' has no port: write HOST:PORT (for example 127.0.0.1:8080)"
        )));
    }
    let (addr, _) = addr::resolve_target(to)?;
    Ok((
        addr,
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
    ))
}

/// A load with no target (the built-in server) refuses `--connect-to`.
pub fn without_target(connect_to: Option<&str>) -> Result<()> {
    match connect_to {
        Some(_) => Err(Error::usage(
            "--connect-to sends a target's connections elsewhere: give the target (a URL or HOST:PORT)",
        )),
        None => Ok(()),
    }
}

/// HOST:PORT split at its last colon (an IPv6 host in brackets); None without a port.
fn split(text: &str) -> Option<(&str, &str)> {
    let (host, port) = text.rsplit_once(':')?;
    let bracketed = host.starts_with('[') == host.ends_with(']');
    (!host.is_empty() && !port.is_empty() && bracketed && port.parse::<u16>().is_ok())
        .then_some((host, port))
}

/// curl's FROM_HOST:FROM_PORT:TO_HOST:TO_PORT (either FROM part empty: any), as
/// (FROM_HOST, FROM_PORT, "TO_HOST:TO_PORT"); None for HOST:PORT. Names and IPv4
/// only: an IPv6 address in this form has more colons than it can be told apart by.
fn curl_form(text: &str) -> Option<(&str, &str, &str)> {
    if text.contains('[') || text.matches(':').count() != 3 {
        return None;
    }
    let (from_host, rest) = text.split_once(':')?;
    let (from_port, to) = rest.split_once(':')?;
    Some((from_host, from_port, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_names_the_server_and_connect_to_is_where_it_connects() {
        let (a, host) = aim("wirebench.test:8080", Some("127.0.0.1:9000")).unwrap();
        assert_eq!(
            (a.to_string(), host.as_str()),
            ("127.0.0.1:9000".into(), "wirebench.test")
        );
        let (a, host) = aim(
            "wirebench.test:8080",
            Some("wirebench.test:8080:127.0.0.1:9001"),
        )
        .unwrap();
        assert_eq!(
            (a.to_string(), host.as_str()),
            ("127.0.0.1:9001".into(), "wirebench.test")
        );
        let (a, _) = aim("wirebench.test:8080", Some("::127.0.0.1:9002")).unwrap();
        assert_eq!(a.to_string(), "127.0.0.1:9002");
        let (a, host) = aim("[::1]:8080", Some("[::1]:9003")).unwrap();
        assert_eq!((a.to_string(), host.as_str()), ("[::1]:9003".into(), "::1"));
    }

    #[test]
    fn a_missing_port_or_another_targets_mapping_is_one_sentence() {
        let e = aim("wirebench.test:8080", Some("127.0.0.1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no port"), "{e}");
        let e = aim("wirebench.test:8080", Some("[::1]"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no port"), "{e}");
        let e = aim("wirebench.test:8080", Some("other.test:80:127.0.0.1:9000"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not the target's wirebench.test:8080"), "{e}");
    }
}
