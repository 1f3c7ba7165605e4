//! Address ranges on the command line: `127.0.0.2-127.0.0.254` (sources) and
//! `127.0.0.1-127.0.0.20:9000` (listen addresses, targets). A range multiplies the
//! (source, destination) pairs, each of which gives at most one ephemeral port range
//! of connections.

use crate::error::{Error, Result};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Longest range accepted: more addresses than this is a typo, not a plan.
pub const MAX_ADDRESSES: usize = 1 << 16;

fn bad(flag: &str, text: &str, why: &str) -> Error {
    Error::usage(format!("{flag}: '{text}' {why}"))
}

/// Parses `IP`, `IP-IP` (IPv4, inclusive, ascending) or a comma-separated list of them.
pub fn parse_ips(flag: &str, text: &str) -> Result<Vec<IpAddr>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            None => out.push(part.parse::<IpAddr>().map_err(|_| {
                bad(
                    flag,
                    part,
                    "is not an IP address or range (for example 127.0.0.2-127.0.0.254)",
                )
            })?),
            Some((a, b)) => {
                let parse = |s: &str| {
                    s.trim().parse::<Ipv4Addr>().map_err(|_| {
                        bad(
                            flag,
                            part,
                            "is not an IPv4 range (for example 127.0.0.2-127.0.0.254)",
                        )
                    })
                };
                let (lo, hi) = (u32::from(parse(a)?), u32::from(parse(b)?));
                if lo > hi {
                    return Err(bad(
                        flag,
                        part,
                        "runs backwards (write the lower address first)",
                    ));
                }
                if (hi - lo) as usize >= MAX_ADDRESSES {
                    return Err(bad(
                        flag,
                        part,
                        &format!("holds more than {MAX_ADDRESSES} addresses"),
                    ));
                }
                out.extend((lo..=hi).map(|v| IpAddr::V4(Ipv4Addr::from(v))));
            }
        }
        if out.len() > MAX_ADDRESSES {
            return Err(bad(
                flag,
                text,
                &format!("holds more than {MAX_ADDRESSES} addresses"),
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = out.iter().find(|a| !seen.insert(**a)) {
        return Err(bad(flag, text, &format!("names {dup} twice")));
    }
    Ok(out)
}

/// Parses `RANGE:PORT` (`127.0.0.1-127.0.0.20:9000`, `127.0.0.1:9000`, `[::1]:9000`)
/// into one socket address per IP, all on the same port.
pub fn parse_socket_range(flag: &str, text: &str) -> Result<Vec<SocketAddr>> {
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(vec![a]);
    }
    let (ips, port) = text.rsplit_once(':').ok_or_else(|| {
        bad(
            flag,
            text,
            "is not ADDRESS:PORT or RANGE:PORT (for example 127.0.0.1-127.0.0.20:9000)",
        )
    })?;
    let port: u16 = port
        .parse()
        .map_err(|_| bad(flag, text, "has no valid port after the last ':'"))?;
    Ok(parse_ips(flag, ips)?
        .into_iter()
        .map(|ip| SocketAddr::new(ip, port))
        .collect())
}

/// Whether `text` names more than one address (so it needs the range parser).
pub fn is_range(text: &str) -> bool {
    text.contains('-') || text.contains(',')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_lists_and_errors() {
        let v = parse_ips("--source", "127.0.0.2-127.0.0.254").unwrap();
        assert_eq!(v.len(), 253);
        assert_eq!(v[0].to_string(), "127.0.0.2");
        assert_eq!(v[252].to_string(), "127.0.0.254");
        let v = parse_ips("--source", "127.0.0.255-127.0.1.1").unwrap();
        assert_eq!(v.len(), 3, "ranges cross octet boundaries");
        assert_eq!(parse_ips("x", "10.0.0.1, 10.0.0.3").unwrap().len(), 2);
        for bad in [
            "127.0.0.9-127.0.0.2",
            "127.0.0.1-",
            "abc",
            "127.0.0.1-::1",
            "0.0.0.0-255.255.255.255",
            "127.0.0.1,127.0.0.1",
        ] {
            let e = parse_ips("--source", bad).unwrap_err().to_string();
            assert!(e.starts_with("--source: '"), "{bad}: {e}");
        }
    }

    #[test]
    fn socket_ranges() {
        let v = parse_socket_range("--listen", "127.0.0.1-127.0.0.20:9000").unwrap();
        assert_eq!(v.len(), 20);
        assert!(v.iter().all(|a| a.port() == 9000));
        assert_eq!(v[19].to_string(), "127.0.0.20:9000");
        assert_eq!(
            parse_socket_range("--listen", "[::1]:80").unwrap()[0].to_string(),
            "[::1]:80"
        );
        assert!(parse_socket_range("--listen", "127.0.0.1-127.0.0.2").is_err());
        assert!(parse_socket_range("--listen", "127.0.0.1-127.0.0.2:70000").is_err());
        assert!(is_range("127.0.0.1-127.0.0.2:1") && !is_range("127.0.0.1:1"));
    }
}
