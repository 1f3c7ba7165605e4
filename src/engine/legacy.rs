//! Transition only: runs a protocol written for the old seam (`protocol.rs`:
//! `ClientProtocol`, `ProtocolFactory`) as a `ClientSession`, so the engine can move to
//! the new seam before every protocol does. Deleted with `protocol.rs` once the last
//! protocol speaks `session.rs` natively.

use super::protocol::{self, ClientProtocol, ProtocolFactory, SetupPhase};
use super::session::{ClientSession, Decode, Figures, InFlight, SessionFactory, Setup};
use crate::stats::ErrorKind;

/// Replies per class (HTTP: status / 100), as the old seam's `reply_class` told them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReplyClasses(pub [u64; protocol::REPLY_CLASSES]);

impl ReplyClasses {
    /// Measured replies by status class, "1xx" to "5xx" (HTTP).
    pub fn status_classes(&self) -> std::collections::BTreeMap<String, u64> {
        (1..self.0.len())
            .map(|i| (format!("{i}xx"), self.0[i]))
            .collect()
    }
}

impl Figures for ReplyClasses {
    fn merge(&mut self, other: &Self) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
}

/// An old-seam protocol client as a session.
pub struct Legacy<P> {
    pub inner: P,
    settles_on_write: bool,
}

impl<P: ClientProtocol> ClientSession for Legacy<P> {
    type Figures = ReplyClasses;

    fn open(&mut self, input: &[u8], out: &mut Vec<u8>) -> Setup {
        self.inner.setup(SetupPhase::Open, input, out)
    }

    fn close(&mut self, input: &[u8], out: &mut Vec<u8>) -> Setup {
        self.inner.setup(SetupPhase::Close, input, out)
    }

    fn encode(&mut self, seq: u64, sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        self.inner.encode(seq, sent_ns, out)
    }

    fn decode(
        &mut self,
        input: &[u8],
        oldest: Option<&InFlight>,
        _out: &mut Vec<u8>,
        figures: &mut ReplyClasses,
    ) -> Decode {
        let Some(req) = oldest else {
            if !self.settles_on_write {
                return Decode::Fail {
                    kind: ErrorKind::Unsolicited,
                };
            }
            return match self.inner.decode_idle(input) {
                Ok(0) => Decode::Incomplete,
                Ok(used) => Decode::Event { used },
                Err(kind) => Decode::Fail { kind },
            };
        };
        let d = self.inner.decode(input, req);
        self.convert(d, figures)
    }

    fn decode_at_close(
        &mut self,
        input: &[u8],
        oldest: &InFlight,
        figures: &mut ReplyClasses,
    ) -> Decode {
        let d = self.inner.decode_at_close(input, oldest);
        self.convert(d, figures)
    }
}

impl<P: ClientProtocol> Legacy<P> {
    fn convert(&mut self, d: protocol::Decode, figures: &mut ReplyClasses) -> Decode {
        match d {
            protocol::Decode::Incomplete => Decode::Incomplete,
            protocol::Decode::Consumed { used } => Decode::Consumed { used },
            protocol::Decode::Reply { used, verdict } => {
                if let Some(c) = self.inner.reply_class().and_then(|c| figures.0.get_mut(c)) {
                    *c += 1;
                }
                Decode::Reply {
                    used,
                    settles: 1,
                    verdict,
                    close: self.inner.close_after_reply(),
                }
            }
        }
    }
}

/// An old-seam factory as a session factory. Its `requests_per_connection` and
/// `start_delay` are connection policy, which the engine now owns: read them with
/// `policy()` when building the load.
pub struct LegacyFactory<F>(pub F);

impl<F: ProtocolFactory> SessionFactory for LegacyFactory<F> {
    type Session = Legacy<F::Client>;

    fn session(&self, conn_id: u64) -> Self::Session {
        let inner = self.0.client(conn_id);
        let settles_on_write = inner.settles_on_write();
        Legacy {
            inner,
            settles_on_write,
        }
    }

    fn settles_on_write(&self) -> bool {
        // Constant per protocol configuration: ask a throwaway client.
        self.0.client(u64::MAX).settles_on_write()
    }
}
