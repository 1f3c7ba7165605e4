//! Requests that settle on write, request by request: a line protocol defined only here
//! sends two publishes that get no reply ("PUB n", as an MQTT QoS 0 publish or a
//! memcached `noreply`) for every request that does ("REQ n", answered "ACK n"), on the
//! same connections, and says goodbye ("BYE", answered "BYE"). Its server side runs on
//! wirebench's server runtime. Every publish counts once its connection closes cleanly
//! and only then; a reply settles its own request, passing over the publishes (those
//! sent before it, and those not written yet when it comes: 4 MiB publishes); only
//! replies are timed. On the io_uring loop (closed loop) and on epoll (open loop).

use crate::common::plain_server_config;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use wirebench::engine::connector::Connector;
use wirebench::engine::session::{
    ClientSession, Decode, Exchanges, InFlight, SessionFactory, Setup, Verdict,
};
use wirebench::engine::{self, EngineOutput, LoadShape, LoadSpec, Observer, Plan};
use wirebench::server::session::{Reply, ServerFactory, ServerSession};
use wirebench::stats::{ErrorKind, Figures};

/// Request `seq` is answered (a REQ) when this holds; else it is a PUB.
fn answered(seq: u64) -> bool {
    seq % 3 == 2
}

fn line(input: &[u8]) -> Option<&[u8]> {
    input.iter().position(|&b| b == b'\n').map(|n| &input[..n])
}

struct Mixed {
    bye_sent: bool,
    /// Payload bytes of each publish ("PUB n SIZE\n" and SIZE bytes).
    size: usize,
}

impl ClientSession for Mixed {
    type Figures = ();

    fn close(&mut self, input: &[u8], out: &mut Vec<u8>, _f: &mut (), n: &mut Exchanges) -> Setup {
        if !self.bye_sent {
            self.bye_sent = true;
            out.extend_from_slice(b"BYE\n");
            n.sent += 1;
            return Setup::Continue { used: 0 };
        }
        match line(input) {
            None => Setup::Continue { used: 0 },
            Some(b"BYE") => {
                n.answered += 1;
                Setup::Done { used: 4 }
            }
            Some(_) => Setup::Failed {
                kind: ErrorKind::Protocol,
                detail: "expected BYE".into(),
            },
        }
    }

    fn encode(&mut self, seq: u64, _sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        if answered(seq) {
            out.extend_from_slice(format!("REQ {seq}\n").as_bytes());
        } else {
            out.extend_from_slice(format!("PUB {seq} {}\n", self.size).as_bytes());
            out.resize(out.len() + self.size, b'x');
        }
        0
    }

    const SETTLES_ON_WRITE: bool = true;

    fn settles_on_write(&self, seq: u64) -> bool {
        !answered(seq)
    }

    fn decode(
        &mut self,
        input: &[u8],
        oldest: Option<&InFlight>,
        _o: &mut Vec<u8>,
        _f: &mut (),
    ) -> Decode {
        match (line(input), oldest) {
            (None, _) => Decode::Incomplete,
            // The reply names the request it answers: the oldest awaited one, never a PUB.
            (Some(l), Some(r)) if !r.on_write && l == format!("ACK {}", r.seq).as_bytes() => {
                Decode::reply(l.len() + 1, Verdict::Ok)
            }
            _ => Decode::Fail {
                kind: ErrorKind::Protocol,
            },
        }
    }
}

struct MixedFactory {
    size: usize,
}

impl SessionFactory for MixedFactory {
    type Session = Mixed;
    fn session(&self, _conn_id: u64) -> Mixed {
        Mixed {
            bye_sent: false,
            size: self.size,
        }
    }
}

/// What the server read, merged over its threads.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Read {
    publishes: u64,
    requests: u64,
    byes: u64,
}

impl Figures for Read {
    fn merge(&mut self, o: &Self) {
        self.publishes += o.publishes;
        self.requests += o.requests;
        self.byes += o.byes;
    }
}

/// The server side; `goodbye`: false closes at BYE instead of answering it.
struct MixedServer {
    goodbye: bool,
    answered: u64,
    /// Payload bytes of the current publish still to come.
    skip: usize,
}

impl ServerSession for MixedServer {
    type Figures = Read;

    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, f: &mut Read) -> Reply {
        let mut used = 0;
        loop {
            let n = self.skip.min(input.len() - used);
            (used, self.skip) = (used + n, self.skip - n);
            if self.skip > 0 {
                break;
            }
            let Some(l) = line(&input[used..]) else {
                break;
            };
            used += l.len() + 1;
            if let Some(seq) = l.strip_prefix(b"REQ ") {
                f.requests += 1;
                self.answered += 1;
                out.extend_from_slice(b"ACK ");
                out.extend_from_slice(seq);
                out.push(b'\n');
            } else if let Some(rest) = l.strip_prefix(b"PUB ") {
                f.publishes += 1;
                let size = std::str::from_utf8(rest)
                    .ok()
                    .and_then(|r| r.split(' ').nth(1));
                match size.and_then(|n| n.parse().ok()) {
                    Some(n) => self.skip = n,
                    None => return Reply::Close,
                }
            } else if l == b"BYE" {
                f.byes += 1;
                if !self.goodbye {
                    return Reply::Close;
                }
                out.extend_from_slice(b"BYE\n");
            } else {
                return Reply::Close;
            }
        }
        Reply::Consumed(used)
    }

    fn take_requests(&mut self) -> u64 {
        std::mem::take(&mut self.answered)
    }
}

struct MixedServerFactory {
    goodbye: bool,
}

impl ServerFactory for MixedServerFactory {
    type Session = MixedServer;
    type Thread = ();

    fn session(&self) -> MixedServer {
        MixedServer {
            goodbye: self.goodbye,
            answered: 0,
            skip: 0,
        }
    }

    fn thread_state(&self) {}
}

struct Quiet;
impl Observer for Quiet {}

/// `requests` over 2 x 2 connections, 4 in flight each, publishes of `size` payload
/// bytes; open loop at `rate`.
fn run(goodbye: bool, requests: u64, size: usize, rate: Option<f64>) -> (EngineOutput, Read) {
    let server = wirebench::server::start(plain_server_config(2), MixedServerFactory { goodbye })
        .expect("start the server");
    let spec = LoadSpec {
        connector: Connector::new(
            server.addr,
            None,
            true,
            Duration::from_secs(5),
            Default::default(),
        ),
        shape: LoadShape {
            threads: 2,
            connections: 4,
            pipeline: 4,
            refill: engine::Refill::EachReply,
            plan: Plan::Count(requests),
            rate,
            warmup: Duration::ZERO,
            ramp: None,
            stages: Default::default(),
            timeout: Duration::from_secs(5),
            memory_budget: engine::DEFAULT_MEMORY_BUDGET,
            coalesce: true,
        },
        interval: Duration::from_secs(1),
        keep_interval_histograms: false,
        interval_handshakes: false,
        stop: Arc::new(AtomicBool::new(false)),
        per_connection: None,
        attempts: Default::default(),
        release: None,
    };
    let out = engine::run(spec, MixedFactory { size }, &mut Quiet).expect("the load runs");
    let (_, figures) = server.shutdown_with_figures();
    (
        out,
        serde_json::from_value(figures).expect("the server's figures"),
    )
}

fn check_counts(out: &EngineOutput, read: &Read, requests: u64) {
    let m = &out.measured;
    assert_eq!(m.sent, requests);
    assert_eq!(m.ok, requests, "errors: {:?}", m.error_list());
    assert_eq!(
        (m.request_errors(), m.connect_errors(), m.in_flight),
        (0, 0, 0)
    );
    assert_eq!(read.publishes + read.requests, requests);
    assert_eq!(read.byes, 4);
    assert_eq!((m.exchanges.sent, m.exchanges.answered), (4, 4));
    // Only replies are timed: one latency per REQ, none per PUB.
    assert_eq!(out.latency.count(), read.requests);
    // On each connection, of its first k requests k / 3 are REQs: the PUBs are twice
    // the REQs and up to two more per connection.
    let extra = read.publishes - 2 * read.requests;
    assert!(extra <= 2 * 4, "{read:?}");
}

#[test]
fn publishes_with_no_reply_and_requests_share_a_connection_on_io_uring() {
    let (out, read) = run(true, 1_200, 0, None);
    check_counts(&out, &read, 1_200);
    assert_eq!(
        out.event_loop.io_uring, 2,
        "closed loop on plain TCP: {:?}",
        out.event_loop
    );
}

#[test]
fn publishes_with_no_reply_and_requests_share_a_connection_on_epoll() {
    let (out, read) = run(true, 600, 0, Some(3_000.0));
    check_counts(&out, &read, 600);
    assert_eq!(out.event_loop.epoll, 2, "open loop: {:?}", out.event_loop);
}

#[test]
fn publishes_count_only_once_the_goodbye_is_answered() {
    // The server reads everything, then closes at BYE instead of answering it: nothing
    // says it read the publishes, so each is an error; the requests were answered.
    let (out, read) = run(false, 600, 0, None);
    let m = &out.measured;
    assert_eq!(read.publishes + read.requests, 600);
    assert_eq!(m.sent, 600);
    assert_eq!(m.ok, read.requests, "errors: {:?}", m.error_list());
    assert_eq!(m.errors_of(ErrorKind::Closed), read.publishes);
    assert_eq!(m.sent, m.ok + m.request_errors() + m.in_flight);
    assert_eq!(out.latency.count(), read.requests);
}

#[test]
fn a_reply_passes_over_publishes_not_written_yet() {
    // Each connection's window holds two 4 MiB publishes around every request: the
    // socket takes a part of it, so the replies to the requests come while publishes
    // sent before and after them wait in the connection's output.
    let (out, read) = run(true, 60, 4 << 20, None);
    check_counts(&out, &read, 60);
}
