//! Drives a protocol's connection-level exchange (`ClientProtocol::setup`): write what it
//! asks, read, hand it the bytes, until it is done, fails, or the timeout passes. Runs
//! once per connection, before the first request or after the last, so it may allocate.

use super::protocol::{ClientProtocol, Setup, SetupPhase};
use crate::stats::ErrorKind;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Why an exchange failed: the kind for the counters, the text for the report.
#[derive(Debug)]
pub struct SetupError {
    pub kind: ErrorKind,
    pub detail: String,
}

impl SetupError {
    /// What requests still unsettled on the connection end as: the exchange failed, so
    /// the peer never confirmed reading them.
    pub fn request_kind(&self) -> ErrorKind {
        match self.kind {
            ErrorKind::ConnectTimeout => ErrorKind::Timeout,
            _ => ErrorKind::Closed,
        }
    }
}

/// Runs `phase` to its end. Returns the bytes received after it (they belong to the requests).
pub async fn exchange<P: ClientProtocol, S: AsyncRead + AsyncWrite + Unpin>(
    proto: &mut P,
    io: &mut S,
    phase: SetupPhase,
    timeout: Duration,
) -> Result<Vec<u8>, SetupError> {
    let what = match phase {
        SetupPhase::Open => "handshake",
        SetupPhase::Close => "closing handshake",
    };
    match tokio::time::timeout(timeout, run(proto, io, phase, what)).await {
        Ok(r) => r,
        Err(_) => Err(SetupError {
            kind: ErrorKind::ConnectTimeout,
            detail: format!("the {what} did not finish within {timeout:?}"),
        }),
    }
}

async fn run<P: ClientProtocol, S: AsyncRead + AsyncWrite + Unpin>(
    proto: &mut P,
    io: &mut S,
    phase: SetupPhase,
    what: &str,
) -> Result<Vec<u8>, SetupError> {
    let io_err = |e: std::io::Error| SetupError {
        kind: ErrorKind::ConnectFailed,
        detail: format!("{what}: {e}"),
    };
    let mut input: Vec<u8> = Vec::with_capacity(4096);
    let mut out: Vec<u8> = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let step = proto.setup(phase, &input, &mut out);
        if !out.is_empty() {
            io.write_all(&out).await.map_err(io_err)?;
            io.flush().await.map_err(io_err)?;
            out.clear();
        }
        let used = match step {
            Setup::Done { used } => {
                input.drain(..used.min(input.len()));
                return Ok(input);
            }
            Setup::Failed { kind, detail } => return Err(SetupError { kind, detail }),
            Setup::Continue { used } => used.min(input.len()),
        };
        input.drain(..used);
        if used > 0 {
            continue;
        }
        let n = io.read(&mut chunk).await.map_err(io_err)?;
        if n == 0 {
            return Err(SetupError {
                kind: ErrorKind::ConnectFailed,
                detail: format!("the server closed the connection during the {what}"),
            });
        }
        input.extend_from_slice(&chunk[..n]);
    }
}
