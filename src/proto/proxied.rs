//! `-x/--proxy URL` of the loads that reach a URL through an HTTP CONNECT proxy (http,
//! ws, grpc; curl's and oha's flag): the load's connections go to the proxy, each asks
//! it for a tunnel to the target (`net::proxy`, `engine/conn/tunnel.rs`), and TLS and
//! the protocol run through the tunnel. The target is named to the proxy as typed and
//! resolved by it, so it need not resolve here; TLS still checks the target's host.

use crate::config::LoadConfig;
use crate::error::{Error, Result};
use crate::flags::LoadArgs;
use crate::net::proxy::{self, Tunnel};
use crate::net::unix::Dest;
use crate::proto::base::Base;
use std::sync::Arc;

/// What a load gives to be aimed through a proxy.
pub struct Through<'a> {
    /// `--proxy` as typed.
    pub proxy: &'a str,
    /// The target's HOST:PORT, None: the built-in server (refused).
    pub authority: Option<&'a str>,
    /// The host TLS checks and the requests name.
    pub host: &'a str,
    /// A unix socket was given too (refused: a proxy reaches TCP targets).
    pub unix: bool,
}

/// `load` aimed at `t.authority` through the proxy `t.proxy`.
pub fn aim(
    load: LoadConfig,
    t: Through<'_>,
    server_threads: Option<usize>,
    shared: &LoadArgs,
) -> Result<Base> {
    let url = proxy::parse(t.proxy)?;
    if t.unix {
        return Err(Error::usage(
            "--proxy does not combine with a unix socket: a proxy tunnels to a TCP HOST:PORT",
        ));
    }
    if shared.connect_to.is_some() {
        return Err(Error::usage(
            "--connect-to and --proxy each say where connections go: give one",
        ));
    }
    let Some(authority) = t.authority else {
        return Err(Error::usage(
            "--proxy needs a target: the built-in server is reached directly, not through a proxy",
        ));
    };
    let tunnel = Tunnel::new(&url, authority)?;
    let target = Some((Dest::Tcp(tunnel.proxy), t.host.to_string()));
    let mut base = Base::aim_resolved(load, target, server_threads, shared)?;
    base.tunnel = Some(Arc::new(tunnel));
    Ok(base)
}

/// A URL's load (http, ws): through `proxy` when given, else at the URL's `target`
/// (HOST:PORT) or its `--unix-socket` (`Base::aim_or_unix`).
pub fn aim_url(
    load: LoadConfig,
    proxy: Option<&str>,
    target: Option<&str>,
    url_host: Option<&str>,
    unix_socket: Option<(&std::path::Path, Option<&str>, &str)>,
    server_threads: Option<usize>,
    shared: &LoadArgs,
) -> Result<Base> {
    let Some(proxy) = proxy else {
        return Base::aim_or_unix(load, target, unix_socket, server_threads, shared);
    };
    let through = Through {
        proxy,
        authority: target,
        host: url_host.unwrap_or_default(),
        unix: unix_socket.is_some(),
    };
    aim(load, through, server_threads, shared)
}
