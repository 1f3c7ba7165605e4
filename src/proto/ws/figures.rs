//! WebSocket's own figures, merged exactly (sums): the client's per worker and phase
//! (the result's `ws` block), the server's per thread and process (the `ws` block of
//! the result's `server` counters, and `serve ws --stats`).

use crate::stats::Figures;
use crate::stats::RunResult;

/// The name of the block, in the result and in its `server` counters.
pub const BLOCK: &str = "ws";

/// What the load's sessions saw besides replies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClientFigures {
    /// Upgrades completed (101 with the right Sec-WebSocket-Accept).
    pub upgrades: u64,
    /// Pings from the server, in every phase of a connection, each answered by a pong
    /// (its own, or a later ping's) and counted in `totals.events`.
    pub pings_answered: u64,
    /// Of them, pings that came during our closing handshake (older results lack it).
    #[serde(default)]
    pub pings_answered_closing: u64,
    /// Of them, pings answered by a later ping's pong (RFC 6455 5.5.3): a pong was
    /// still owed when the next ping came, because the server had not read what was
    /// written before it. Pongs written: `pings_answered - pings_superseded`, less one
    /// per connection that ended owing one. Older results lack it.
    #[serde(default)]
    pub pings_superseded: u64,
    /// Pongs nobody asked for (allowed as heartbeats; also events).
    pub pongs: u64,
    /// Continuation frames read: echoes the server sent in fragments.
    pub continuation_frames: u64,
    /// Close handshakes completed (our 1000, the server's close back).
    pub clean_closes: u64,
    /// Close frames from the server in the middle of a run.
    pub server_closes: u64,
}

impl Figures for ClientFigures {
    fn merge(&mut self, o: &Self) {
        self.upgrades += o.upgrades;
        self.pings_answered += o.pings_answered;
        self.pings_answered_closing += o.pings_answered_closing;
        self.pings_superseded += o.pings_superseded;
        self.pongs += o.pongs;
        self.continuation_frames += o.continuation_frames;
        self.clean_closes += o.clean_closes;
        self.server_closes += o.server_closes;
    }
}

/// What `serve ws` saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServerFigures {
    pub upgrades: u64,
    /// Messages echoed (text and binary).
    pub messages: u64,
    /// Of those, messages that came in several frames and were reassembled.
    pub fragmented: u64,
    /// Pings sent (`--ping-every`), and pongs received.
    pub pings_sent: u64,
    pub pongs: u64,
    /// Pings from clients, answered.
    pub pings_answered: u64,
    /// Clients' close handshakes answered with their own valid code (1000 and others).
    pub clean_closes: u64,
    /// Upgrade requests refused (400/431): not a WebSocket handshake.
    pub bad_handshakes: u64,
    /// Closed with 1002: an unmasked client frame.
    pub unmasked: u64,
    /// Closed with 1002: a reserved opcode or bit, a control frame too long or
    /// fragmented, a continuation with no message begun or a new message inside one.
    pub bad_frames: u64,
    /// Closed with 1002: a close frame with a code that may not be sent.
    pub bad_close_codes: u64,
    /// Closed with 1007: a text message (or close reason) that is not UTF-8.
    pub invalid_utf8: u64,
    /// Closed with 1009: a frame or reassembled message past `--max-message`.
    pub too_big: u64,
}

impl Figures for ServerFigures {
    fn merge(&mut self, o: &Self) {
        self.upgrades += o.upgrades;
        self.messages += o.messages;
        self.fragmented += o.fragmented;
        self.pings_sent += o.pings_sent;
        self.pongs += o.pongs;
        self.pings_answered += o.pings_answered;
        self.clean_closes += o.clean_closes;
        self.bad_handshakes += o.bad_handshakes;
        self.unmasked += o.unmasked;
        self.bad_frames += o.bad_frames;
        self.bad_close_codes += o.bad_close_codes;
        self.invalid_utf8 += o.invalid_utf8;
        self.too_big += o.too_big;
    }
}

impl ServerFigures {
    /// One line for `serve ws --stats` and the final report.
    pub fn line(&self) -> String {
        format!(
            "ws: {} upgrades, {} messages ({} fragmented), {} pings sent, {} pongs, {} clean closes; refused: {} handshakes, {} unmasked, {} bad frames, {} bad close codes, {} invalid UTF-8, {} too big; {} client pings answered",
            self.upgrades,
            self.messages,
            self.fragmented,
            self.pings_sent,
            self.pongs,
            self.clean_closes,
            self.bad_handshakes,
            self.unmasked,
            self.bad_frames,
            self.bad_close_codes,
            self.invalid_utf8,
            self.too_big,
            self.pings_answered
        )
    }
}

/// The client block read back from a result, when it has one.
pub fn client_figures_of(r: &RunResult) -> Option<ClientFigures> {
    serde_json::from_value(r.extra(BLOCK)?.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_merge_as_sums() {
        let mut a = ServerFigures {
            messages: 3,
            unmasked: 1,
            ..Default::default()
        };
        a.merge(&a.clone());
        assert_eq!((a.messages, a.unmasked), (6, 2));
        let mut c = ClientFigures {
            pings_answered: 2,
            ..Default::default()
        };
        c.merge(&ClientFigures {
            pings_answered: 5,
            clean_closes: 1,
            ..Default::default()
        });
        assert_eq!((c.pings_answered, c.clean_closes), (7, 1));
    }
}
