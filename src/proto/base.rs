//! What every protocol's load holds beside its own settings, defined once: the shared
//! load (`LoadConfig`), where it goes (the target given, or the built-in server and its
//! threads), how a URL's scheme turns TLS on, the config block's and the config
//! table's shared lines. A protocol's config is `Configured<its own settings>`.

use crate::config::{LoadConfig, LoadOverrides};
use crate::error::{Error, Result};
use crate::flags::LoadArgs;
use crate::net::unix::Dest;
use crate::report::format::{count_of, seconds};
use serde_json::json;

/// Where a run's load goes, known once its built-in server (if any) listens.
#[derive(Clone, Debug)]
pub struct Aim {
    /// The address connected to: TCP, or a unix socket.
    pub addr: Dest,
    /// The host a TLS client checks the certificate against.
    pub host: String,
    /// The load started the built-in server at `addr`.
    pub builtin: bool,
    /// The client speaks TLS.
    pub tls: bool,
}

/// The part of every protocol's validated load that is not the protocol's own.
#[derive(Clone, Debug)]
pub struct Base {
    /// The shared load flags, validated (the engine's load shape among them).
    pub load: LoadConfig,
    /// The target given: its address (TCP, or `unix:/path`) and the host a TLS
    /// client checks; None: the built-in server.
    pub target: Option<(Dest, String)>,
    /// The built-in server's threads (with no target).
    pub server_threads: usize,
    /// `--proxy`: `target` is then the proxy's address, and this its tunnel to the
    /// target (`proto::proxied`).
    pub tunnel: Option<std::sync::Arc<crate::net::proxy::Tunnel>>,
}

/// A protocol's validated load: the shared part and its own settings.
#[derive(Clone, Debug)]
pub struct Configured<C> {
    pub base: Base,
    pub own: C,
}

/// A URL's scheme is its TLS switch (https://, wss://, amqps://): `--tls` with a plain
/// scheme is refused, and the scheme sets the load's TLS (`--insecure` and `--ca`
/// still choose the trust). `schemes`: the plain and the secure scheme's names.
pub fn url_tls(
    shared: &LoadArgs,
    tls: bool,
    schemes: (&str, &str),
    over: &mut LoadOverrides,
) -> Result<()> {
    if shared.client.tls && !tls {
        let (plain, secure) = schemes;
        return Err(Error::usage(format!(
            "--tls does not combine with the {plain}:// URL: for TLS, use {secure}:// (write {secure}:// instead of {plain}://)"
        )));
    }
    over.tls = Some(tls);
    Ok(())
}

/// `--unix-socket PATH` of a URL's load (http, ws; curl's and oha's flag): the URL's
/// requests go to the unix socket, and the URL's host is still the one TLS checks and
/// the requests name. Without a URL there is nothing to send: refused.
pub fn unix_socket_target(
    path: &std::path::Path,
    url_host: Option<&str>,
    example: &str,
) -> Result<(Dest, String)> {
    let Some(host) = url_host else {
        return Err(Error::usage(format!(
            "--unix-socket sends a URL's requests to a unix socket: give the URL too (its path and Host are sent), e.g. {example} --unix-socket /run/app.sock"
        )));
    };
    let dest = crate::net::unix::target(&path.to_string_lossy(), "--unix-socket")?;
    Ok((dest, host.to_string()))
}

/// A target as typed: `unix:/path` (a unix socket, said `localhost` to TLS), or
/// HOST:PORT resolved, or sent to `connect_to` (`--connect-to`) with its host kept.
pub fn resolve_dest(text: &str, connect_to: Option<&str>) -> Result<(Dest, String)> {
    match (crate::net::unix::path_of(text), connect_to) {
        (Some(_), Some(_)) => Err(Error::usage(
            "--connect-to sends a HOST:PORT target's connections elsewhere; a unix: target has no host to map",
        )),
        (Some(path), None) => Ok((
            crate::net::unix::target(path, "TARGET")?,
            "localhost".to_string(),
        )),
        (None, _) => crate::net::connect_to::aim(text, connect_to).map(|(a, host)| (Dest::Tcp(a), host)),
    }
}

impl Base {
    /// `load` aimed at `target` (HOST:PORT, resolved here, or `unix:/path`: a socket
    /// that must exist, its host `localhost`), or with none at the
    /// built-in server with `server_threads` threads (`--server-threads`, refused with a
    /// target; by default the CPUs the load's threads leave, the load taking half of
    /// them without `-t`: `config::builtin_server_threads`).
    pub fn aim(
        load: LoadConfig,
        target: Option<&str>,
        server_threads: Option<usize>,
        shared: &LoadArgs,
    ) -> Result<Base> {
        let connect_to = shared.connect_to.as_deref();
        if target.is_none() {
            crate::net::connect_to::without_target(connect_to)?;
        }
        let target = target.map(|t| resolve_dest(t, connect_to)).transpose()?;
        Base::aim_resolved(load, target, server_threads, shared)
    }

    /// `aim` at `target`, or at the unix socket `--unix-socket` names instead
    /// (`unix_socket_target`, `url_host`: the URL's host).
    pub fn aim_or_unix(
        load: LoadConfig,
        target: Option<&str>,
        unix_socket: Option<(&std::path::Path, Option<&str>, &str)>,
        server_threads: Option<usize>,
        shared: &LoadArgs,
    ) -> Result<Base> {
        match unix_socket {
            None => Base::aim(load, target, server_threads, shared),
            Some((path, url_host, example)) => {
                if shared.connect_to.is_some() {
                    return Err(Error::usage(
                        "--connect-to and --unix-socket each say where connections go: give one",
                    ));
                }
                let dest = unix_socket_target(path, url_host, example)?;
                Base::aim_resolved(load, Some(dest), server_threads, shared)
            }
        }
    }

    /// `aim` with the target already resolved.
    pub fn aim_resolved(
        mut load: LoadConfig,
        target: Option<(Dest, String)>,
        server_threads: Option<usize>,
        shared: &LoadArgs,
    ) -> Result<Base> {
        let server_threads = crate::config::builtin_server_threads(
            target.is_some(),
            server_threads,
            &mut load,
            shared.threads.is_some(),
        )?;
        Ok(Base {
            load,
            target,
            server_threads,
            tunnel: None,
        })
    }

    /// The config block's shared part: the load's, and the built-in server's.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = self.load.to_json();
        v["builtin_server"] = json!(self.target.is_none());
        if self.target.is_none() {
            v["server_threads"] = json!(self.server_threads);
        }
        v
    }

    /// The config table's target row: `text` (the target as the result names it),
    /// the address it resolved to when that is not `text` itself, or the built-in
    /// `server` ("server", "broker") and its threads.
    pub fn target_row(&self, text: String, aim: &Aim, server: &str) -> String {
        let threads = count_of(self.server_threads as u64, "thread");
        match self.target {
            Some(_) if text == aim.addr.to_string() => text,
            Some(_) => format!("{text} ({})", aim.addr),
            None => format!("{text} (built-in {server}, {threads})"),
        }
    }

    /// The config table's rows every load shares, after the protocol's own; `per_s`
    /// names its rate ("messages/s").
    pub fn rows(&self, per_s: &str) -> Vec<(&'static str, String)> {
        let l = &self.load;
        vec![
            ("threads", l.shape.threads.to_string()),
            ("connections", l.connections_text()),
            ("pipeline", l.pipeline_text()),
            ("plan", l.plan_text()),
            ("rate", l.rate_text(per_s)),
            ("timeout", seconds(l.shape.timeout)),
            ("warmup", seconds(l.shape.warmup)),
            ("tls", l.tls_text()),
            ("nodelay", l.nodelay.to_string()),
            ("coalesce", l.coalesce_text().into()),
        ]
    }
}
