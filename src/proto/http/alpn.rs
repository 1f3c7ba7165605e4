//! Which HTTP an `https://` load speaks: one TLS handshake before the run
//! (`net::alpn_probe`) offers h2 and http/1.1 by ALPN, as curl, oha and h2load do, and
//! the server's choice picks the session for the whole run (HTTP/2 with `--max-streams`
//! streams, or HTTP/1.1); the run's connections then offer only the chosen protocol.
//! `--http1.1` offers only http/1.1 and skips the handshake; `--h2` offers only h2 and
//! refuses a server that does not choose it. An `http://` URL is HTTP/1.1, or h2c by
//! prior knowledge with `--h2`.

use super::config::HttpArgs;
use super::url;
use crate::config::ClientConfig;
use crate::error::{Error, Result};
use crate::flags::LoadArgs;
use crate::net::{alpn_probe, tls};
use std::time::Duration;

/// Whether the load speaks HTTP/2; sets `a.h2`, and `a.alpn` to what the server chose
/// ("none": no protocol).
pub fn speak_h2(a: &mut HttpArgs, shared: &LoadArgs) -> Result<bool> {
    if a.h2 && a.http1_1 {
        return Err(Error::usage("choose one of --h2 and --http1.1"));
    }
    let url = match (&a.url, &a.request_set) {
        (Some(u), None) => url::parse(u).map_err(Error::usage)?,
        _ => return Ok(a.h2),
    };
    if !url.tls || a.http1_1 {
        return Ok(a.h2);
    }
    // The flags are checked again, whole, by the run's config.
    let client = ClientConfig::from_args(&shared.client, Some(true), Duration::ZERO)?;
    let Some(trust) = client.tls else {
        return Ok(a.h2);
    };
    let (addr, host) = crate::net::connect_to::aim(&url.host_port(), shared.connect_to.as_deref())?;
    let offer: &[&[u8]] = if a.h2 {
        &[b"h2"]
    } else {
        &[b"h2", b"http/1.1"]
    };
    let config = tls::client_config(&trust, client.identity.as_ref(), offer)?;
    let name = tls::server_name(&host)?;
    // A server that cannot be reached here cannot be in the run either: the run's
    // connections meet the same failure, and count and word it as every load does.
    let Ok(chosen) = alpn_probe::chosen_protocol(addr, config, name, client.timeout) else {
        return Ok(a.h2);
    };
    let h2 = chosen.as_deref() == Some(b"h2".as_slice());
    let chose = match chosen.as_deref() {
        Some(p) => format!("chose {}", String::from_utf8_lossy(p)),
        None => "chose no protocol".to_string(),
    };
    let at = url.host_port();
    if a.h2 && !h2 {
        return Err(Error::runtime(format!(
            "the server at {at} does not speak HTTP/2 over TLS: offered only h2 by ALPN (--h2), it {chose}; leave out --h2 to speak HTTP/1.1 with it"
        )));
    }
    if !h2 && a.max_streams.is_some() {
        return Err(Error::usage(format!(
            "the server at {at} {chose} by ALPN, HTTP/1.1: --max-streams counts HTTP/2 streams (HTTP/1.1 pipelines with --pipeline)"
        )));
    }
    a.h2 = h2;
    a.alpn = Some(match chosen {
        Some(p) => String::from_utf8_lossy(&p).into_owned(),
        None => "none".to_string(),
    });
    Ok(h2)
}
