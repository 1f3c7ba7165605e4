//! The Redis client session: an opening exchange (`HELLO 3`, `AUTH`, `SELECT`, as
//! asked), then the workload's commands, every reply checked: its type, and for a GET
//! of a key this tool writes, its value. Error replies are in step (`error_reply`,
//! counted by first word in the figures, their text told to the engine); RESP3 pushes
//! are events, not replies, in the opening exchange too (without `--resp3` a push is
//! not RESP2: a protocol error). A reply that arrives in pieces is scanned once
//! (`codec::ReplyScan`), not again from its first byte at every read.

use super::codec::{push_command, scan_reply, ReplyLimits, ReplyScan, Scan, Top};
use super::command::{Expect, Values, Workload};
use super::figures::ClientFigures;
use super::keys::{Distribution, Keys};
use crate::engine::session::{
    ClientSession, Decode, Exchanges, InFlight, SessionFactory, Setup, Verdict, Words,
};
use crate::stats::ErrorKind;
use std::sync::Arc;

/// What a reply may claim. A bulk past Redis's own `proto-max-bulk-len` (512 MiB) is
/// `too_large` at its header; what a connection holds of an unfinished reply is also
/// capped by the engine (64 MiB, and the run's memory budget). Values counted past a
/// million in one reply likewise. RESP3 as here; a session without `--resp3` reads
/// RESP2 only.
pub const REPLY_LIMITS: ReplyLimits = ReplyLimits {
    max_bulk: 512 << 20,
    max_values: 1 << 20,
    resp3: true,
};

/// One command of the opening exchange and the reply it must get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Hello,
    Auth,
    Select,
}

/// What every connection of a run shares.
#[derive(Clone)]
pub struct Plan {
    pub workload: Workload,
    pub values: Values,
    pub keyspace: u64,
    pub distribution: Distribution,
    /// `--auth`: user (None: the default user) and password.
    pub auth: Option<(Option<String>, String)>,
    /// `--db`: SELECT it when not 0.
    pub db: u32,
    pub resp3: bool,
}

pub struct RedisFactory {
    plan: Arc<Plan>,
    /// The opening exchange's bytes and the replies it awaits, made once.
    open_bytes: Arc<[u8]>,
    steps: Arc<[Step]>,
}

impl RedisFactory {
    pub fn new(plan: Plan) -> RedisFactory {
        let mut out = Vec::new();
        let mut steps = Vec::new();
        if plan.resp3 {
            push_command(&mut out, &[b"HELLO", b"3"]);
            steps.push(Step::Hello);
        }
        if let Some((user, pass)) = &plan.auth {
            match user {
                Some(u) => push_command(&mut out, &[b"AUTH", u.as_bytes(), pass.as_bytes()]),
                None => push_command(&mut out, &[b"AUTH", pass.as_bytes()]),
            }
            steps.push(Step::Auth);
        }
        if plan.db != 0 {
            push_command(&mut out, &[b"SELECT", plan.db.to_string().as_bytes()]);
            steps.push(Step::Select);
        }
        RedisFactory {
            plan: Arc::new(plan),
            open_bytes: out.into(),
            steps: steps.into(),
        }
    }

    /// Commands each connection's opening exchange sends (the server counts them).
    pub fn open_commands(&self) -> usize {
        self.steps.len()
    }
}

impl SessionFactory for RedisFactory {
    type Session = RedisClient;

    fn session(&self, conn_id: u64) -> RedisClient {
        RedisClient {
            keys: Keys::new(self.plan.keyspace, self.plan.distribution, conn_id),
            plan: self.plan.clone(),
            open_bytes: self.open_bytes.clone(),
            steps: self.steps.clone(),
            opened: None,
            scan: ReplyScan::default(),
            limits: ReplyLimits {
                resp3: self.plan.resp3,
                ..REPLY_LIMITS
            },
        }
    }
}

pub struct RedisClient {
    plan: Arc<Plan>,
    keys: Keys,
    open_bytes: Arc<[u8]>,
    steps: Arc<[Step]>,
    /// Replies of the opening exchange received; None until it is sent.
    opened: Option<usize>,
    /// The reply being received, as far as it was scanned.
    scan: ReplyScan,
    limits: ReplyLimits,
}

fn text(input: &[u8], at: usize, len: usize) -> &[u8] {
    &input[at..at + len]
}

/// A reply's type in words, for a reply of the wrong type.
fn described(top: Top) -> &'static str {
    match top {
        Top::Simple { .. } => "a simple string",
        Top::Error { .. } => "an error",
        Top::Integer(_) => "an integer",
        Top::Bulk { .. } => "a bulk string",
        Top::Null => "a null",
        Top::Aggregate { .. } => "an array, set or map",
        Top::Push => "a push",
        Top::Scalar => "a boolean, double or big number",
    }
}

impl ClientSession for RedisClient {
    type Figures = ClientFigures;

    /// HELLO, AUTH and SELECT, written at once and counted as the engine's exchange
    /// requests (`count`), each reply as an answer (a refusal too); a push before them
    /// is an event, as while requests run.
    fn open(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        figures: &mut ClientFigures,
        count: &mut Exchanges,
    ) -> Setup {
        let Some(mut done) = self.opened else {
            self.opened = Some(0);
            out.extend_from_slice(&self.open_bytes);
            count.sent += self.steps.len() as u64;
            return if self.steps.is_empty() {
                Setup::Done { used: 0 }
            } else {
                Setup::Continue { used: 0 }
            };
        };
        let mut used = 0;
        while done < self.steps.len() {
            let (len, top) = match self.scan.scan(&input[used..], &self.limits) {
                Scan::Incomplete => break,
                Scan::Whole { len, frame } => (len, frame),
                Scan::TooLarge => {
                    return Setup::Failed {
                        kind: ErrorKind::TooLarge,
                        detail: "a reply to the opening exchange went past a cap".into(),
                    }
                }
                Scan::Invalid => {
                    return Setup::Failed {
                        kind: ErrorKind::Protocol,
                        detail: "the server's reply to the opening exchange is not RESP".into(),
                    }
                }
            };
            let reply = &input[used..used + len];
            let step = self.steps[done];
            let ok = match (step, top) {
                // An event, at the start of what the engine hands over next.
                (_, Top::Push) if used > 0 => break,
                (_, Top::Push) => {
                    figures.pushes += 1;
                    self.opened = Some(done);
                    return Setup::Event { used: len };
                }
                (Step::Hello, Top::Aggregate { .. }) => true,
                (Step::Auth | Step::Select, Top::Simple { at, len }) => {
                    text(reply, at, len) == b"OK"
                }
                _ => false,
            };
            count.answered += 1;
            if !ok {
                let name = match step {
                    Step::Hello => "HELLO 3",
                    Step::Auth => "AUTH",
                    Step::Select => "SELECT",
                };
                let said = match top {
                    Top::Error { at, len } => {
                        String::from_utf8_lossy(text(reply, at, len)).into_owned()
                    }
                    other => format!("the reply was {}", described(other)),
                };
                let kind = if matches!(top, Top::Error { .. }) {
                    ErrorKind::ErrorReply
                } else {
                    ErrorKind::Mismatch
                };
                return Setup::Failed {
                    kind,
                    detail: format!("{name} was refused: {said}"),
                };
            }
            used += len;
            done += 1;
        }
        self.opened = Some(done);
        if done == self.steps.len() {
            Setup::Done { used }
        } else {
            Setup::Continue { used }
        }
    }

    #[inline]
    fn encode(&mut self, seq: u64, _sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        let t = self.plan.workload.template(seq);
        let key = if t.keyed { self.keys.next_key() } else { 0 };
        t.encode(key, &self.plan.values, out);
        key as u32
    }

    #[inline]
    fn decode(
        &mut self,
        input: &[u8],
        oldest: Option<&InFlight>,
        _out: &mut Vec<u8>,
        figures: &mut ClientFigures,
    ) -> Decode {
        let (len, top) = match self.scan.scan(input, &self.limits) {
            Scan::Incomplete => return Decode::Incomplete,
            Scan::Whole { len, frame } => (len, frame),
            Scan::TooLarge => {
                return Decode::Fail {
                    kind: ErrorKind::TooLarge,
                }
            }
            // Not RESP (an HTTP server, a byte echo): the stream cannot be trusted.
            Scan::Invalid => {
                return Decode::Fail {
                    kind: ErrorKind::Protocol,
                }
            }
        };
        if top == Top::Push {
            figures.pushes += 1;
            return Decode::Event { used: len };
        }
        let Some(req) = oldest else {
            return Decode::Fail {
                kind: ErrorKind::Unsolicited,
            };
        };
        let expect = self.plan.workload.template(req.seq).expect;
        Decode::reply(
            len,
            judge(expect, top, input, req.tag, &self.plan.values, figures),
        )
    }

    /// An error reply: its text as the server sent it (`ERR unknown command 'SETT',
    /// with args beginning with: ...`). Bytes that are not RESP: their start.
    fn error_words(&mut self, kind: ErrorKind, input: &[u8], words: &mut Words) {
        match (kind, scan_reply(input, &REPLY_LIMITS)) {
            (
                ErrorKind::ErrorReply,
                Scan::Whole {
                    frame: Top::Error { at, len },
                    ..
                },
            ) => {
                words.push(text(input, at, len));
            }
            (ErrorKind::Protocol, _) => {
                words.push(b"not RESP: ");
                words.push(&input[..input.len().min(48)]);
            }
            _ => {}
        }
    }
}

/// The verdict on one reply.
#[inline]
fn judge(
    expect: Expect,
    top: Top,
    input: &[u8],
    key: u32,
    values: &Values,
    figures: &mut ClientFigures,
) -> Verdict {
    let wrong = Verdict::Error(ErrorKind::Mismatch);
    if let Top::Error { at, len } = top {
        figures.error_reply(text(input, at, len));
        return Verdict::Error(ErrorKind::ErrorReply);
    }
    let right = match (expect, top) {
        (Expect::Ok, Top::Simple { at, len }) => text(input, at, len) == b"OK",
        (Expect::Pong, Top::Simple { at, len }) => text(input, at, len) == b"PONG",
        (Expect::Integer, Top::Integer(_)) => true,
        (Expect::BulkOrNull { checked }, Top::Bulk { at, len }) => {
            figures.hits += 1;
            !checked || values.matches(u64::from(key), text(input, at, len))
        }
        (Expect::BulkOrNull { .. }, Top::Null) => {
            figures.misses += 1;
            true
        }
        (Expect::Aggregate, Top::Aggregate { .. } | Top::Null) => true,
        (Expect::Any, _) => true,
        _ => false,
    };
    if right {
        Verdict::Ok
    } else {
        wrong
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::session::Lane;

    fn factory(command: &str, resp3: bool, auth: bool, db: u32) -> RedisFactory {
        RedisFactory::new(Plan {
            workload: Workload::parse(command).expect("valid"),
            values: Values::new(16, 16),
            keyspace: 100,
            distribution: Distribution::Uniform,
            auth: auth.then(|| (Some("u".to_string()), "p".to_string())),
            db,
            resp3,
        })
    }

    fn inflight(seq: u64, tag: u32) -> InFlight {
        InFlight {
            seq,
            intended_ns: 0,
            sent_ns: 0,
            tag,
            lane: Lane::ANY,
            measured: true,
            on_write: false,
        }
    }

    #[test]
    fn pushes_in_the_opening_exchange_are_events() {
        let f = factory("ping", true, false, 0);
        let mut s = f.session(1);
        let (mut out, mut fig) = (Vec::new(), ClientFigures::default());
        let mut n = Exchanges::default();
        s.open(b"", &mut out, &mut fig, &mut n);
        let input = b">1\r\n+a\r\n>1\r\n+b\r\n%0\r\n";
        assert_eq!(
            s.open(input, &mut out, &mut fig, &mut n),
            Setup::Event { used: 8 }
        );
        assert_eq!(
            s.open(&input[8..], &mut out, &mut fig, &mut n),
            Setup::Event { used: 8 }
        );
        assert_eq!(
            s.open(&input[16..], &mut out, &mut fig, &mut n),
            Setup::Done { used: 4 }
        );
        assert_eq!((fig.pushes, n.answered), (2, 1));
        // Without RESP3 a push is no RESP2 reply.
        let mut s = factory("ping", false, false, 0).session(1);
        let mut o = Vec::new();
        let req = s.encode(0, 0, &mut o);
        assert_eq!(
            s.decode(b">1\r\n+a\r\n", Some(&inflight(0, req)), &mut o, &mut fig),
            Decode::Fail {
                kind: ErrorKind::Protocol
            }
        );
    }

    #[test]
    fn the_opening_exchange_sends_hello_auth_select_and_checks_each_reply() {
        let f = factory("ping", true, true, 3);
        assert_eq!(f.open_commands(), 3);
        let mut s = f.session(1);
        let (mut out, mut fig) = (Vec::new(), ClientFigures::default());
        let mut n = Exchanges::default();
        assert_eq!(
            s.open(b"", &mut out, &mut fig, &mut n),
            Setup::Continue { used: 0 }
        );
        assert_eq!(
            out,
            b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*3\r\n$4\r\nAUTH\r\n$1\r\nu\r\n$1\r\np\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n"
        );
        let replies = b"%1\r\n+proto\r\n:3\r\n+OK\r\n+OK\r\n:9";
        // Every split point: at most what is whole is used, and nothing is lost.
        for cut in 0..replies.len() {
            let mut s = f.session(1);
            n = Exchanges::default();
            s.open(b"", &mut Vec::new(), &mut fig, &mut n);
            let first = match s.open(&replies[..cut], &mut out, &mut fig, &mut n) {
                Setup::Continue { used } => used,
                Setup::Done { used } => used,
                other => panic!("{other:?}"),
            };
            let rest = s.open(&replies[first..], &mut out, &mut fig, &mut n);
            assert_eq!(
                rest,
                Setup::Done {
                    used: replies.len() - 2 - first
                },
                "cut {cut}"
            );
            // Three commands written, three replies read (the push is not one).
            let all = Exchanges {
                sent: 3,
                answered: 3,
            };
            assert_eq!(n, all, "cut {cut}");
        }
        n = Exchanges::default();
        let mut s = f.session(1);
        s.open(b"", &mut out, &mut fig, &mut n);
        match s.open(
            b"%0\r\n-WRONGPASS invalid username-password pair\r\n",
            &mut out,
            &mut fig,
            &mut n,
        ) {
            Setup::Failed { kind, detail } => {
                assert_eq!(kind, ErrorKind::ErrorReply);
                assert_eq!(
                    detail,
                    "AUTH was refused: WRONGPASS invalid username-password pair"
                );
                // The refusal is an answer; SELECT's never came.
                let two = Exchanges {
                    sent: 3,
                    answered: 2,
                };
                assert_eq!(n, two);
            }
            other => panic!("{other:?}"),
        }
        // Nothing to open: done at once, nothing sent.
        let mut out = Vec::new();
        let mut s = factory("ping", false, false, 0).session(1);
        assert_eq!(
            s.open(b"", &mut out, &mut fig, &mut n),
            Setup::Done { used: 0 }
        );
        assert!(out.is_empty());
    }

    #[test]
    fn replies_are_judged_by_type_and_value() {
        let f = factory("mixed:1:1", false, false, 0);
        let mut s = f.session(7);
        let (mut out, mut fig) = (Vec::new(), ClientFigures::default());
        let set_tag = s.encode(0, 0, &mut out);
        let get_tag = s.encode(1, 0, &mut out);
        let (set, get) = (inflight(0, set_tag), inflight(1, get_tag));
        assert_eq!(
            s.decode(b"+OK\r\n", Some(&set), &mut out, &mut fig),
            Decode::reply(5, Verdict::Ok)
        );
        assert_eq!(
            s.decode(b":1\r\n", Some(&set), &mut out, &mut fig),
            Decode::reply(4, Verdict::Error(ErrorKind::Mismatch))
        );
        let mut good = Vec::new();
        f.plan.values.write(u64::from(get_tag), &mut good);
        let mut reply = format!("${}\r\n", good.len()).into_bytes();
        reply.extend_from_slice(&good);
        reply.extend_from_slice(b"\r\n");
        assert_eq!(
            s.decode(&reply, Some(&get), &mut out, &mut fig),
            Decode::reply(reply.len(), Verdict::Ok)
        );
        let mut other = Vec::new();
        f.plan.values.write(u64::from(get_tag) + 1, &mut other);
        let mut bad = format!("${}\r\n", other.len()).into_bytes();
        bad.extend_from_slice(&other);
        bad.extend_from_slice(b"\r\n");
        assert_eq!(
            s.decode(&bad, Some(&get), &mut out, &mut fig),
            Decode::reply(bad.len(), Verdict::Error(ErrorKind::Mismatch))
        );
        assert_eq!(
            s.decode(b"$-1\r\n", Some(&get), &mut out, &mut fig),
            Decode::reply(5, Verdict::Ok)
        );
        assert_eq!(
            s.decode(b"-WRONGTYPE x\r\n", Some(&get), &mut out, &mut fig),
            Decode::reply(14, Verdict::Error(ErrorKind::ErrorReply))
        );
        let mut w = Words::new();
        s.error_words(ErrorKind::ErrorReply, b"-WRONGTYPE x\r\n+OK\r\n", &mut w);
        assert_eq!(w.as_str(), "WRONGTYPE x");
        // A push is RESP3: an event with --resp3, not RESP2 without it.
        let mut s3 = factory("mixed:1:1", true, false, 0).session(7);
        assert_eq!(
            s3.decode(b">1\r\n+x\r\n", Some(&get), &mut out, &mut fig),
            Decode::Event { used: 8 }
        );
        assert_eq!(
            s3.decode(b">1\r\n+x\r\n", None, &mut out, &mut fig),
            Decode::Event { used: 8 }
        );
        assert_eq!(
            s.decode(b">1\r\n+x\r\n", Some(&get), &mut out, &mut fig),
            Decode::Fail {
                kind: ErrorKind::Protocol
            }
        );
        assert_eq!(
            (fig.hits, fig.misses, fig.wrongtype, fig.pushes),
            (2, 1, 1, 2)
        );
        assert_eq!(
            s.decode(
                b"HTTP/1.1 400 Bad Request\r\n",
                Some(&get),
                &mut out,
                &mut fig
            ),
            Decode::Fail {
                kind: ErrorKind::Protocol
            }
        );
        assert_eq!(
            s.decode(b"$4294967296\r\n", Some(&get), &mut out, &mut fig),
            Decode::Fail {
                kind: ErrorKind::TooLarge
            }
        );
        assert_eq!(
            s.decode(b"+OK\r\n", None, &mut out, &mut fig),
            Decode::Fail {
                kind: ErrorKind::Unsolicited
            }
        );
        assert_eq!(
            s.decode(b"+O", Some(&set), &mut out, &mut fig),
            Decode::Incomplete
        );
    }
}
