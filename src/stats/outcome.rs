//! Where every request ends: ok, or exactly one error kind. Plus the plain counters
//! a worker keeps while running (no atomics, no locks: one worker owns them).

use serde::Serialize;

/// Why a request (or a connection attempt) failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The reply came back but was not what was sent (payload, id, sequence, length).
    Mismatch,
    /// No reply within `--timeout` (the JMeter rule: a late reply is an error).
    Timeout,
    /// The connection was reset with the request in flight.
    Reset,
    /// The peer closed the connection with the request in flight.
    Closed,
    /// In flight on a connection dropped because of another request's error.
    Dropped,
    /// The reply could not be parsed at all.
    Protocol,
    /// Another socket error with the request in flight.
    Io,
    /// Connection attempts: refused.
    ConnectRefused,
    /// Connection attempts: no answer within the timeout.
    ConnectTimeout,
    /// Connection attempts: any other failure (EADDRNOTAVAIL, EMFILE, ...).
    ConnectFailed,
    /// Connection attempts: the TLS handshake failed.
    Tls,
    /// Connections: the server sent bytes with no request in flight; the connection was dropped.
    Unsolicited,
    /// A well-formed reply with a status the run does not accept (HTTP: non-2xx by default).
    Status,
    /// The peer sent more than a documented cap allows (a head, a body, a frame, a run of
    /// interim replies); the connection was dropped instead of buffering without bound.
    TooLarge,
    /// The peer refused the request on purpose (an AMQP broker's Basic.Nack): answered,
    /// in step, but not accepted.
    Nack,
    /// A Redis error reply (`-ERR ...`, `-WRONGTYPE ...`): answered, in step, with an
    /// error; its text is in the result's error texts.
    ErrorReply,
    /// HTTP/2: the server reset the request's stream (RST_STREAM); its code is in the
    /// error texts. The connection goes on.
    RstStream,
    /// HTTP/2: the server ended the connection with GOAWAY while the request was in
    /// flight; its code and debug text are in the error texts.
    Goaway,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 18] = [
        ErrorKind::Mismatch,
        ErrorKind::Timeout,
        ErrorKind::Reset,
        ErrorKind::Closed,
        ErrorKind::Dropped,
        ErrorKind::Protocol,
        ErrorKind::Io,
        ErrorKind::ConnectRefused,
        ErrorKind::ConnectTimeout,
        ErrorKind::ConnectFailed,
        ErrorKind::Tls,
        ErrorKind::Unsolicited,
        ErrorKind::Status,
        ErrorKind::TooLarge,
        ErrorKind::Nack,
        ErrorKind::ErrorReply,
        ErrorKind::RstStream,
        ErrorKind::Goaway,
    ];
    pub const COUNT: usize = Self::ALL.len();

    /// Connection-level kinds count connections (failed attempts, dropped connections), not requests.
    pub fn is_connect(self) -> bool {
        matches!(
            self,
            ErrorKind::ConnectRefused
                | ErrorKind::ConnectTimeout
                | ErrorKind::ConnectFailed
                | ErrorKind::Tls
                | ErrorKind::Unsolicited
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Mismatch => "mismatch",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::Closed => "closed",
            ErrorKind::Dropped => "dropped",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Io => "io",
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::ConnectTimeout => "connect_timeout",
            ErrorKind::ConnectFailed => "connect_failed",
            ErrorKind::Tls => "tls",
            ErrorKind::Unsolicited => "unsolicited",
            ErrorKind::Status => "status",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::Nack => "nack",
            ErrorKind::ErrorReply => "error_reply",
            ErrorKind::RstStream => "rst_stream",
            ErrorKind::Goaway => "goaway",
        }
    }

    /// Classifies a socket error seen with requests in flight.
    pub fn from_io(e: &std::io::Error) -> ErrorKind {
        use std::io::ErrorKind as K;
        match e.kind() {
            K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => ErrorKind::Reset,
            K::UnexpectedEof => ErrorKind::Closed,
            K::InvalidData => ErrorKind::Tls,
            _ => ErrorKind::Io,
        }
    }

    /// Classifies a failed connection attempt.
    pub fn from_connect(e: &std::io::Error) -> ErrorKind {
        use std::io::ErrorKind as K;
        match e.kind() {
            K::ConnectionRefused => ErrorKind::ConnectRefused,
            K::TimedOut => ErrorKind::ConnectTimeout,
            _ => ErrorKind::ConnectFailed,
        }
    }
}

/// Counters of one phase (warm-up or measured) of one worker, or their sum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Requests written to a connection.
    pub sent: u64,
    /// Replies that came back whole and correct.
    pub ok: u64,
    /// Requests still unanswered when their connection task ended.
    pub in_flight: u64,
    pub bytes_sent: u64,
    /// Every byte read from the peer in this phase, counted at its read: replies,
    /// events, the exchanges' answers, wrong replies' bytes.
    pub bytes_received: u64,
    /// Connections established (after TLS, when used).
    pub connections: u64,
    /// Measured phase: connections opened during the warm-up that were still working
    /// when it ended (counted once each, when they end).
    pub connections_carried: u64,
    pub errors: [u64; ErrorKind::COUNT],
    /// Bytes from the peer that belong to no request (pings, pushes, heartbeats),
    /// decoded and answered without dropping the connection.
    pub events: u64,
    /// Requests of the connections' opening and closing exchanges (not in `sent`).
    pub exchanges: Exchanges,
    /// Connections dropped because the bytes the run's connections kept together
    /// reached its memory budget, `--memory-budget` (their requests end as `too_large`).
    pub over_budget: u64,
}

/// Requests (commands) the connections' opening and closing exchanges wrote, and the
/// answers to them read: a handshake's AUTH and SELECT, an upgrade, a goodbye. The
/// session counts them as it writes and reads them (`ClientSession::open`, `close`);
/// the engine keeps them in the phase its connection was opened in, like
/// `connections`. They are not requests of the run: never in `sent` or `ok`. A
/// refusal is an answer too; the connection then counts as failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exchanges {
    pub sent: u64,
    pub answered: u64,
}

impl Exchanges {
    pub fn add(&mut self, o: &Exchanges) {
        self.sent += o.sent;
        self.answered += o.answered;
    }
}

impl Counters {
    #[inline]
    pub fn error(&mut self, kind: ErrorKind, n: u64) {
        self.errors[kind as usize] += n;
    }

    pub fn errors_of(&self, kind: ErrorKind) -> u64 {
        self.errors[kind as usize]
    }

    /// Failed requests (connection attempts excluded).
    pub fn request_errors(&self) -> u64 {
        ErrorKind::ALL
            .iter()
            .filter(|k| !k.is_connect())
            .map(|k| self.errors[*k as usize])
            .sum()
    }

    pub fn connect_errors(&self) -> u64 {
        ErrorKind::ALL
            .iter()
            .filter(|k| k.is_connect())
            .map(|k| self.errors[*k as usize])
            .sum()
    }

    /// sent = ok + errors + in flight: every request ends in exactly one bucket.
    pub fn invariant_holds(&self) -> bool {
        self.sent == self.ok + self.request_errors() + self.in_flight
    }

    pub fn add(&mut self, o: &Counters) {
        self.sent += o.sent;
        self.ok += o.ok;
        self.in_flight += o.in_flight;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        self.connections += o.connections;
        self.connections_carried += o.connections_carried;
        for (a, b) in self.errors.iter_mut().zip(o.errors.iter()) {
            *a += b;
        }
        self.events += o.events;
        self.exchanges.add(&o.exchanges);
        self.over_budget += o.over_budget;
    }

    /// The non-zero error counts, by name, in a fixed order.
    pub fn error_list(&self) -> Vec<(ErrorKind, u64)> {
        ErrorKind::ALL
            .iter()
            .map(|k| (*k, self.errors[*k as usize]))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invariant_counts_request_errors_only() {
        let mut c = Counters {
            sent: 10,
            ok: 7,
            in_flight: 1,
            ..Default::default()
        };
        c.error(ErrorKind::Timeout, 2);
        c.error(ErrorKind::ConnectRefused, 5);
        assert!(c.invariant_holds());
        assert_eq!(c.request_errors(), 2);
        assert_eq!(c.connect_errors(), 5);
        c.error(ErrorKind::Mismatch, 1);
        assert!(!c.invariant_holds());
    }

    #[test]
    fn add_is_exact() {
        let mut a = Counters {
            sent: 3,
            ok: 2,
            ..Default::default()
        };
        a.error(ErrorKind::Reset, 1);
        a.exchanges = Exchanges {
            sent: 4,
            answered: 3,
        };
        let mut b = a;
        b.add(&a);
        assert_eq!(b.sent, 6);
        assert_eq!(
            b.exchanges,
            Exchanges {
                sent: 8,
                answered: 6
            }
        );
        assert_eq!(b.errors_of(ErrorKind::Reset), 2);
    }
}
