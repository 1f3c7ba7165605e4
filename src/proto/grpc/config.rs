//! `wirebench grpc` and `wirebench serve grpc`: their own flags, validated once (a
//! bad value is `Error::Usage`, one sentence, exit 2).

use super::call::timeout_value;
use super::message::{self, CallName};
use crate::config::{LoadConfig, LoadOverrides, ProtocolTiming, MAX_PIPELINE};
use crate::error::{Error, Result};
use crate::flags::LoadArgs;
use crate::proto::base::{Base, Configured};
use crate::proto::http::config::parse_header;
use crate::proto::http::server::Limits;
use crate::proto::http::url;
use crate::units::parse_bytes;
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The largest request message (gRPC's own default limit, 4 MiB).
pub const MAX_MESSAGE: u64 = 4 << 20;
/// The method the built-in server is called with when no `--call` is given.
pub const BUILTIN_CALL: &str = "wirebench.Echo/Call";

/// `wirebench grpc`'s own flags (the shared load flags are `LoadArgs`).
#[derive(Args, Debug)]
#[command(
    about = "Load a gRPC server with unary calls over h2c, or over TLS with https:// or --tls (no target: start the built-in one)",
    mut_arg("pipeline", |a| a.hide(true).long_help("use -m/--max-streams")),
    after_long_help = "Examples:
  wirebench grpc                                      # the built-in echo server, 10 s
  wirebench grpc 127.0.0.1:50051 --call helloworld.Greeter/SayHello \\
      --proto helloworld.proto --data '{\"name\": \"x\"}' -c 10 -m 10
  wirebench grpc 127.0.0.1:50051 --call bench.Svc/Get --data-file req.bin --deadline 200ms
  wirebench grpc https://127.0.0.1:50051 --ca ca.pem --call bench.Svc/Get --data-file req.bin"
)]
pub struct GrpcArgs {
    /// HOST:PORT or http://HOST:PORT of an h2c gRPC server, https://HOST:PORT (or --tls) over TLS, unix:/PATH; none starts the built-in one.
    pub target: Option<String>,
    /// Connect through an HTTP CONNECT proxy: http://[USER:PASS@]HOST[:PORT], as curl's and oha's -x.
    #[arg(short = 'x', long, value_name = "URL", hide_short_help = true)]
    pub proxy: Option<String>,
    /// The method: package.Service/Method [required with a target].
    #[arg(long, value_name = "METHOD")]
    pub call: Option<String>,
    /// The .proto file that defines the method (compiled at run time); needed for --data.
    #[arg(long, value_name = "FILE")]
    pub proto: Option<PathBuf>,
    /// The request message as JSON (proto3's JSON mapping), encoded through --proto.
    #[arg(long, value_name = "JSON")]
    pub data: Option<String>,
    /// The request message as raw protobuf bytes from a file.
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub data_file: Option<PathBuf>,
    /// Metadata sent with every call, "key: value" (repeatable).
    #[arg(
        short = 'H',
        long = "metadata",
        value_name = "KEY: VALUE",
        hide_short_help = true
    )]
    pub metadata: Vec<String>,
    /// The call's deadline, sent as grpc-timeout (e.g. 200ms); none by default.
    #[arg(long, value_name = "DURATION", hide_short_help = true)]
    pub deadline: Option<String>,
    /// Calls in flight per connection, each a stream, as ghz's and h2load's concurrency [default: 1].
    #[arg(short = 'm', long, value_name = "N")]
    pub max_streams: Option<usize>,
    /// Built-in server only: its threads [default: the CPUs the load threads leave].
    #[arg(long, hide_short_help = true)]
    pub server_threads: Option<usize>,
}

/// `wirebench serve grpc`'s own flags (the shared server flags are `ServerArgs`).
#[derive(Args, Debug)]
#[command(
    about = "gRPC server over h2c: echoes every unary call's message, answers grpc.health.v1.Health/Check"
)]
pub struct ServeGrpcArgs {
    /// Largest request message; a longer length prefix: RESOURCE_EXHAUSTED and the connection closed.
    #[arg(long, value_name = "BYTES", default_value = "4m")]
    pub max_message: String,
    /// Streams a connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub max_streams: u32,
    /// Largest request header list; beyond it the connection is closed.
    #[arg(long, default_value = "16k", hide_short_help = true)]
    pub max_header: String,
    /// Close a connection that has not sent the HTTP/2 preface this long after the accept; 0: never.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "10s",
        hide_short_help = true
    )]
    pub header_timeout: String,
}

/// `wirebench grpc`'s own settings, validated.
#[derive(Clone, Debug)]
pub struct GrpcConfig {
    /// `host:port` of the target, None: the built-in server.
    pub authority: Option<String>,
    pub call: CallName,
    /// The message (without its prefix).
    pub message: Vec<u8>,
    /// Where it came from, for the config table.
    pub message_source: String,
    pub metadata: Vec<(String, String)>,
    pub deadline_ms: Option<u64>,
}

/// The host of HOST:PORT (IPv6 without its brackets).
fn host_of(authority: &str) -> &str {
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// The target as `host:port` and whether its URL asks for TLS: HOST:PORT (None),
/// http://HOST:PORT[/] or https://HOST:PORT[/].
fn target(text: &str) -> Result<(String, Option<bool>)> {
    if text.contains("://") {
        let u = url::parse(text).map_err(Error::usage)?;
        if u.path != "/" {
            return Err(Error::usage(format!(
                "the target {text} has a path: the method goes in --call"
            )));
        }
        return Ok((u.host_port(), Some(u.tls)));
    }
    Ok((text.to_string(), None))
}

/// A file of at most `MAX_MESSAGE` bytes.
fn read_message(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let shown = path.display();
    let unreadable =
        |e: std::io::Error| Error::usage(format!("cannot read --data-file {shown}: {e}"));
    let file = std::fs::File::open(path).map_err(unreadable)?;
    if file.metadata().map_err(unreadable)?.is_dir() {
        return Err(Error::usage(format!("--data-file {shown} is a directory")));
    }
    let mut b = Vec::new();
    file.take(MAX_MESSAGE + 1)
        .read_to_end(&mut b)
        .map_err(unreadable)?;
    if b.len() as u64 > MAX_MESSAGE {
        return Err(Error::usage(format!(
            "--data-file {shown} is larger than a gRPC message may be (4 MiB)"
        )));
    }
    Ok(b)
}

/// The message and where it came from: --data through --proto, --data-file, or none.
fn message(a: &GrpcArgs, call: &CallName) -> Result<(Vec<u8>, String)> {
    let method = a
        .proto
        .as_deref()
        .map(|p| message::method(p, call))
        .transpose()?;
    match (&a.data, &a.data_file, &method) {
        (Some(_), Some(_), _) => Err(Error::usage("choose one of --data and --data-file")),
        (Some(_), None, None) => Err(Error::usage(
            "--data is JSON: give the .proto file that defines the method with --proto",
        )),
        (Some(json), None, Some(m)) => {
            let bytes = message::encode_json(m, json)?;
            let source = format!("{} from JSON, {} bytes", m.input().full_name(), bytes.len());
            Ok((bytes, source))
        }
        (None, Some(path), _) => {
            let bytes = read_message(path)?;
            let source = format!("{} bytes from {}", bytes.len(), path.display());
            Ok((bytes, source))
        }
        (None, None, _) => Ok((Vec::new(), "empty (0 bytes)".to_string())),
    }
}

/// `-m`: the streams in flight per connection.
fn streams(a: &GrpcArgs, shared: &LoadArgs) -> Result<usize> {
    let n = a.max_streams.unwrap_or(1);
    if n == 0 {
        return Err(Error::usage("-m/--max-streams must be at least 1"));
    }
    if n > MAX_PIPELINE {
        return Err(Error::usage(format!(
            "-m/--max-streams must be at most {MAX_PIPELINE} streams per connection"
        )));
    }
    if shared.pipeline != 1 {
        return Err(Error::usage(
            "calls in flight per connection are streams: use -m/--max-streams, not --pipeline",
        ));
    }
    Ok(n)
}

/// `-H`'s metadata, names in lower case (HTTP/2 sends no upper case).
fn metadata(a: &GrpcArgs) -> Result<Vec<(String, String)>> {
    a.metadata
        .iter()
        .map(|m| {
            let (n, v) = parse_header(m).map_err(|_| {
                Error::usage(format!(
                    "-H '{m}' is not metadata: write it as \"key: value\""
                ))
            })?;
            let n = n.to_ascii_lowercase();
            if matches!(n.as_str(), "content-type" | "te" | "grpc-timeout" | "host") {
                return Err(Error::usage(format!(
                    "-H {n} is set by wirebench grpc itself (--deadline sets grpc-timeout)"
                )));
            }
            Ok((n, v))
        })
        .collect()
}

impl GrpcConfig {
    pub fn from_args(a: &GrpcArgs, shared: &LoadArgs) -> Result<Configured<Self>> {
        let target = a.target.as_deref().map(target).transpose()?;
        let mut overrides = LoadOverrides {
            pipeline: Some(streams(a, shared)?),
            ..LoadOverrides::default()
        };
        if let Some((_, Some(tls))) = &target {
            crate::proto::base::url_tls(shared, *tls, ("http", "https"), &mut overrides)?;
        }
        let authority = target.map(|(authority, _)| authority);
        let call = match (&a.call, &authority) {
            (Some(c), _) => CallName::parse(c)?,
            (None, None) => CallName::parse(BUILTIN_CALL)?,
            (None, Some(_)) => {
                return Err(Error::usage(
                    "give the method to call: --call package.Service/Method",
                ))
            }
        };
        let load = LoadConfig::from_args(shared, overrides)?;
        let (message, message_source) = message(a, &call)?;
        let deadline_ms = match &a.deadline {
            None => None,
            Some(t) => Some(
                crate::config::timeout_flag("--deadline", t)?
                    .ok_or_else(|| Error::usage("--deadline must be above 0"))?
                    .as_millis()
                    .max(1) as u64,
            ),
        };
        Ok(Configured {
            base: match a.proxy.as_deref() {
                Some(proxy) => crate::proto::proxied::aim(
                    load,
                    crate::proto::proxied::Through {
                        proxy,
                        authority: authority.as_deref(),
                        host: authority.as_deref().map_or("", host_of),
                        unix: authority
                            .as_deref()
                            .is_some_and(|t| t.starts_with(crate::net::unix::PREFIX)),
                    },
                    a.server_threads,
                    shared,
                )?,
                None => Base::aim(load, authority.as_deref(), a.server_threads, shared)?,
            },
            own: GrpcConfig {
                // A unix socket's calls name localhost, as gRPC's own clients do.
                authority: authority.map(|t| match crate::net::unix::path_of(&t) {
                    Some(_) => "localhost".to_string(),
                    None => t,
                }),
                call,
                message,
                message_source,
                metadata: metadata(a)?,
                deadline_ms,
            },
        })
    }

    /// `grpc-timeout`'s value.
    pub fn timeout(&self) -> Option<String> {
        self.deadline_ms.map(timeout_value)
    }

    /// Its lines of the config block, after the shared ones (`Base::to_json`).
    pub fn add_json(&self, v: &mut serde_json::Value) {
        v["call"] = json!(self.call.path());
        v["message_bytes"] = json!(self.message.len());
        v["metadata"] = json!(self
            .metadata
            .iter()
            .map(|(n, v)| format!("{n}: {v}"))
            .collect::<Vec<_>>());
        v["deadline_ms"] = json!(self.deadline_ms);
    }
}

/// `wirebench serve grpc`, validated.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct ServeGrpcConfig {
    pub limits: Limits,
    pub timing: ProtocolTiming,
}

impl ServeGrpcConfig {
    pub fn from_args(a: &ServeGrpcArgs) -> Result<Self> {
        let max_message =
            parse_bytes(&a.max_message).map_err(|e| Error::usage(format!("--max-message: {e}")))?;
        if !(1..=1 << 30).contains(&max_message) {
            return Err(Error::usage(
                "--max-message must be between 1 byte and 1 GiB",
            ));
        }
        let max_head =
            parse_bytes(&a.max_header).map_err(|e| Error::usage(format!("--max-header: {e}")))?;
        if !(256..=1 << 20).contains(&max_head) {
            return Err(Error::usage(
                "--max-header must be between 256 bytes and 1 MiB",
            ));
        }
        if !(1..=1_000_000).contains(&a.max_streams) {
            return Err(Error::usage("--max-streams must be between 1 and 1000000"));
        }
        Ok(ServeGrpcConfig {
            limits: grpc_limits(max_message as usize, max_head as usize, a.max_streams),
            timing: ProtocolTiming {
                header_timeout: crate::config::timeout_flag("--header-timeout", &a.header_timeout)?,
                ..ProtocolTiming::default()
            },
        })
    }
}

/// The HTTP/2 server's limits for gRPC: a body is one message and its prefix.
pub fn grpc_limits(max_message: usize, max_head: usize, max_streams: u32) -> Limits {
    Limits {
        max_head,
        max_body: max_message + 5,
        max_streams,
        ..Limits::default()
    }
}
