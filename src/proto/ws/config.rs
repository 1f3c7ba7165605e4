//! `wirebench ws` and `wirebench serve ws`: their own flags, validated once (a bad
//! value is `Error::Usage`, one sentence, exit 2).

use super::codec::MAX_MESSAGE;
use super::server::Limits;
use super::url;
use crate::config::{LoadConfig, LoadOverrides, ProtocolTiming};
use crate::error::{Error, Result};
use crate::flags::LoadArgs;
use crate::proto::base::{url_tls, Configured};
use crate::proto::http::url::Url;
use crate::units::{parse_bytes, parse_size_range};
use clap::Args;
use serde_json::json;

/// `wirebench ws`'s own flags (the shared load flags are `LoadArgs`).
#[derive(Args, Debug)]
#[command(
    about = "Load a WebSocket echo server at URL (ws:// or wss://; no URL: start the built-in one)",
    after_long_help = "Examples:
  wirebench ws                                            # the built-in server, 10 s
  wirebench ws ws://127.0.0.1:8081/ -c 100 --size 1k -d 30s  # wirebench serve ws listens there
  wirebench ws ws://127.0.0.1:8081/ -c 10 --size 4k --fragment 256 --text"
)]
pub struct WsArgs {
    /// ws://HOST[:PORT][/PATH] or wss://...; none starts the built-in server.
    pub url: Option<String>,
    /// Payload bytes per message, MIN or MIN..MAX (uniform random per message).
    #[arg(long, default_value = "64")]
    pub size: String,
    /// Send text messages (opcode 1) instead of binary (opcode 2); echoes must stay text.
    #[arg(long)]
    pub text: bool,
    /// Send each message in frames of at most N payload bytes (fragmentation).
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub fragment: Option<String>,
    /// Offer this subprotocol (Sec-WebSocket-Protocol); the server must choose it.
    #[arg(long, value_name = "NAME", hide_short_help = true)]
    pub subprotocol: Option<String>,
    /// Open the URL's connections (its path and Host) on the unix socket at PATH, as curl's --unix-socket.
    #[arg(long, value_name = "PATH", hide_short_help = true)]
    pub unix_socket: Option<std::path::PathBuf>,
    /// Connect through an HTTP CONNECT proxy: http://[USER:PASS@]HOST[:PORT], as curl's and oha's -x.
    #[arg(short = 'x', long, value_name = "URL", hide_short_help = true)]
    pub proxy: Option<String>,
    /// Built-in server only: its threads [default: the CPUs the load threads leave].
    #[arg(long, hide_short_help = true)]
    pub server_threads: Option<usize>,
}

/// `wirebench serve ws`'s own flags (the shared server flags are `ServerArgs`).
#[derive(Args, Debug)]
#[command(
    about = "WebSocket echo server (RFC 6455): echoes every message, pings at --ping-every, close codes"
)]
pub struct ServeWsArgs {
    /// Send a ping to every open connection this often, e.g. 10ms; 0: never.
    #[arg(long, value_name = "DURATION", default_value = "0")]
    pub ping_every: String,
    /// Largest message, in one frame or reassembled from fragments; beyond it: close 1009.
    #[arg(long, value_name = "BYTES", default_value = "16m")]
    pub max_message: String,
    /// Choose this subprotocol when a client offers it.
    #[arg(long, value_name = "NAME")]
    pub subprotocol: Option<String>,
    /// Close a connection whose upgrade request is not complete this long after the accept; 0: never.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub header_timeout: String,
}

/// `wirebench ws`'s own settings, validated.
#[derive(Clone, Debug)]
pub struct WsConfig {
    /// None: start the built-in server.
    pub url: Option<Url>,
    pub min: usize,
    pub max: usize,
    pub text: bool,
    /// Payload bytes per frame.
    pub fragment: usize,
    pub subprotocol: Option<String>,
}

/// A subprotocol is an HTTP token (RFC 6455 4.1).
fn token(flag: &str, name: &Option<String>) -> Result<()> {
    match name {
        Some(n)
            if n.is_empty()
                || !n
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)) =>
        {
            Err(Error::usage(format!(
                "{flag} '{n}' is not a subprotocol name (letters, digits and !#$%&'*+-.^_`|~ only)"
            )))
        }
        _ => Ok(()),
    }
}

impl WsConfig {
    pub fn from_args(a: &WsArgs, shared: &LoadArgs) -> Result<Configured<Self>> {
        let url = a
            .url
            .as_deref()
            .map(url::parse)
            .transpose()
            .map_err(Error::usage)?;
        let mut over = LoadOverrides::default();
        if let Some(u) = &url {
            url_tls(shared, u.tls, ("ws", "wss"), &mut over)?;
        }
        let load = LoadConfig::from_args(shared, over)?;
        let (min, max) =
            parse_size_range(&a.size).map_err(|e| Error::usage(format!("--size: {e}")))?;
        if max > MAX_MESSAGE as u64 {
            return Err(Error::usage(format!(
                "--size: at most {MAX_MESSAGE} bytes per message"
            )));
        }
        let fragment = match &a.fragment {
            None => max.max(1),
            Some(t) => {
                let n = parse_bytes(t).map_err(|e| Error::usage(format!("--fragment: {e}")))?;
                if n == 0 {
                    return Err(Error::usage("--fragment must be at least 1 byte per frame"));
                }
                n
            }
        } as usize;
        token("--subprotocol", &a.subprotocol)?;
        let target = url.as_ref().map(|u| u.host_port());
        let unix_socket = a.unix_socket.as_deref().map(|p| {
            let host = url.as_ref().map(|u| u.host.as_str());
            (p, host, "wirebench ws ws://localhost/")
        });
        Ok(Configured {
            base: crate::proto::proxied::aim_url(
                load,
                a.proxy.as_deref(),
                target.as_deref(),
                url.as_ref().map(|u| u.host.as_str()),
                unix_socket,
                a.server_threads,
                shared,
            )?,
            own: WsConfig {
                url,
                min: min as usize,
                max: max as usize,
                text: a.text,
                fragment,
                subprotocol: a.subprotocol.clone(),
            },
        })
    }

    /// Its lines of the config block, after the shared ones (`Base::to_json`).
    pub fn add_json(&self, v: &mut serde_json::Value) {
        v["url"] = json!(self.url.as_ref().map(url::text));
        v["size_min"] = json!(self.min);
        v["size_max"] = json!(self.max);
        v["text"] = json!(self.text);
        v["fragment_bytes"] = json!(self.fragment);
        v["subprotocol"] = json!(self.subprotocol);
    }

    /// The config table's line for the messages.
    pub fn message_text(&self) -> String {
        let size = if self.min == self.max {
            format!("{} bytes", self.min)
        } else {
            format!("{}..{} bytes, uniform", self.min, self.max)
        };
        let kind = if self.text { "text" } else { "binary" };
        if self.fragment < self.max {
            format!("{kind}, {size}, in frames of {} bytes", self.fragment)
        } else {
            format!("{kind}, {size}, one frame each")
        }
    }

    /// The built-in server's limits: it takes whatever this load sends.
    pub fn builtin_limits(&self) -> Limits {
        Limits {
            max_message: MAX_MESSAGE,
            ping_every_ns: 0,
            subprotocol: self.subprotocol.clone(),
        }
    }
}

/// `wirebench serve ws`, validated.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ServeWsConfig {
    pub limits: Limits,
    pub timing: ProtocolTiming,
}

impl ServeWsConfig {
    pub fn from_args(a: &ServeWsArgs) -> Result<Self> {
        let every = crate::config::timeout_flag("--ping-every", &a.ping_every)?;
        let max =
            parse_bytes(&a.max_message).map_err(|e| Error::usage(format!("--max-message: {e}")))?;
        if !(1..=1 << 30).contains(&max) {
            return Err(Error::usage(
                "--max-message must be between 1 byte and 1 GiB",
            ));
        }
        token("--subprotocol", &a.subprotocol)?;
        Ok(ServeWsConfig {
            limits: Limits {
                max_message: max as usize,
                ping_every_ns: every.map_or(0, |d| d.as_nanos().max(1) as u64),
                subprotocol: a.subprotocol.clone(),
            },
            timing: ProtocolTiming {
                header_timeout: crate::config::timeout_flag("--header-timeout", &a.header_timeout)?,
                pacing: crate::server::pacing::Pacing::off(),
            },
        })
    }
}
