//! The proof that a protocol needs no engine change: a tiny line protocol defined only
//! here (HELLO/WELCOME, PING n/PONG n, BYE/BYE, and HEARTBEAT lines the server sends on
//! its own, with and without requests in flight, each answered ACK) runs through
//! `wirebench::engine::run` with exact counts: against a test-local server of plain
//! threads, and against its own server side (`LineServer`, also defined only here)
//! served by wirebench's server runtime (`wirebench::server::start`), which sends the
//! heartbeats through the session's wake-ups.

use crate::common::plain_server_config;
use std::io::{ErrorKind as IoKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wirebench::engine::connector::Connector;
use wirebench::engine::session::{ClientSession, Decode, InFlight, SessionFactory, Setup, Verdict};
use wirebench::engine::{self, LoadShape, LoadSpec, Observer, Plan};
use wirebench::server::session::{Reply, ServerFactory, ServerSession};
use wirebench::stats::{ErrorKind, Figures};

/// The protocol's own figures: heartbeats seen with and without a request in flight.
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct Beats {
    busy: u64,
    idle: u64,
}

impl Figures for Beats {
    fn merge(&mut self, o: &Self) {
        self.busy += o.busy;
        self.idle += o.idle;
    }
}

struct Line {
    /// Heartbeats read during the goodbye (not events: the exchange owns those bytes).
    late: Arc<AtomicU64>,
    bye_sent: bool,
}

fn line(input: &[u8]) -> Option<&[u8]> {
    input.iter().position(|&b| b == b'\n').map(|n| &input[..n])
}

impl ClientSession for Line {
    type Figures = Beats;

    fn open(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        _figures: &mut Beats,
        _count: &mut wirebench::engine::session::Exchanges,
    ) -> Setup {
        match line(input) {
            None if input.is_empty() && out.is_empty() => {
                out.extend_from_slice(b"HELLO\n");
                Setup::Continue { used: 0 }
            }
            None => Setup::Continue { used: 0 },
            Some(b"WELCOME") => Setup::Done { used: 8 },
            Some(other) => Setup::Failed {
                kind: ErrorKind::Protocol,
                detail: format!("expected WELCOME, got {:?}", String::from_utf8_lossy(other)),
            },
        }
    }

    fn close(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        _figures: &mut Beats,
        _count: &mut wirebench::engine::session::Exchanges,
    ) -> Setup {
        if !self.bye_sent {
            self.bye_sent = true;
            out.extend_from_slice(b"BYE\n");
        }
        match line(input) {
            None => Setup::Continue { used: 0 },
            Some(b"HEARTBEAT") => {
                self.late.fetch_add(1, Relaxed);
                Setup::Continue { used: 10 }
            }
            Some(b"BYE") => Setup::Done { used: 4 },
            Some(_) => Setup::Failed {
                kind: ErrorKind::Protocol,
                detail: "expected BYE".into(),
            },
        }
    }

    fn encode(&mut self, seq: u64, _sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        out.extend_from_slice(format!("PING {seq}\n").as_bytes());
        0
    }

    fn decode(
        &mut self,
        input: &[u8],
        oldest: Option<&InFlight>,
        out: &mut Vec<u8>,
        figures: &mut Beats,
    ) -> Decode {
        let Some(l) = line(input) else {
            return if input.len() > 64 {
                Decode::Fail {
                    kind: ErrorKind::TooLarge,
                }
            } else {
                Decode::Incomplete
            };
        };
        if l == b"HEARTBEAT" {
            match oldest {
                Some(_) => figures.busy += 1,
                None => figures.idle += 1,
            }
            out.extend_from_slice(b"ACK\n");
            return Decode::Event { used: l.len() + 1 };
        }
        let Some(req) = oldest else {
            return Decode::Fail {
                kind: ErrorKind::Unsolicited,
            };
        };
        let verdict = if l == format!("PONG {}", req.seq).as_bytes() {
            Verdict::Ok
        } else {
            Verdict::Error(ErrorKind::Mismatch)
        };
        Decode::reply(l.len() + 1, verdict)
    }
}

struct LineFactory {
    late: Arc<AtomicU64>,
}

impl SessionFactory for LineFactory {
    type Session = Line;

    fn session(&self, _conn_id: u64) -> Line {
        Line {
            late: self.late.clone(),
            bye_sent: false,
        }
    }
}

#[derive(Default)]
struct ServerCounts {
    heartbeats: AtomicU64,
    acks: AtomicU64,
    pings: AtomicU64,
    byes: AtomicU64,
}

/// One connection of the test server: answers lines, and every 2 ms sends a heartbeat
/// of its own (after WELCOME, until BYE); each PONG goes out behind a heartbeat, so
/// heartbeats also arrive while a request is in flight.
fn serve_conn(mut s: TcpStream, counts: Arc<ServerCounts>) {
    let _ = s.set_read_timeout(Some(Duration::from_millis(1)));
    let _ = s.set_nodelay(true);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut beating = false;
    let mut next_beat = Instant::now();
    loop {
        match s.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), IoKind::WouldBlock | IoKind::TimedOut) => {}
            Err(_) => return,
        }
        let mut out = Vec::new();
        let mut bye = false;
        while let Some(n) = buf.iter().position(|&b| b == b'\n') {
            let l: Vec<u8> = buf.drain(..=n).collect();
            match &l[..l.len() - 1] {
                b"HELLO" => {
                    out.extend_from_slice(b"WELCOME\n");
                    beating = true;
                    next_beat = Instant::now() + Duration::from_millis(2);
                }
                b"ACK" => {
                    counts.acks.fetch_add(1, Relaxed);
                }
                b"BYE" => {
                    out.extend_from_slice(b"BYE\n");
                    counts.byes.fetch_add(1, Relaxed);
                    beating = false;
                    bye = true;
                }
                p if p.starts_with(b"PING ") => {
                    counts.pings.fetch_add(1, Relaxed);
                    counts.heartbeats.fetch_add(1, Relaxed);
                    out.extend_from_slice(b"HEARTBEAT\nPONG ");
                    out.extend_from_slice(&p[5..]);
                    out.push(b'\n');
                }
                _ => return,
            }
        }
        if beating && Instant::now() >= next_beat {
            counts.heartbeats.fetch_add(1, Relaxed);
            out.extend_from_slice(b"HEARTBEAT\n");
            next_beat += Duration::from_millis(2);
        }
        if !out.is_empty() && s.write_all(&out).is_err() {
            return;
        }
        if bye {
            // The client closes after reading BYE; wait for that.
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = s.read(&mut chunk);
            return;
        }
    }
}

/// `requests` PINGs over `connections` connections in total, spread over `threads`,
/// 2 in flight each, in open loop at `rate` per second.
fn spec(
    addr: std::net::SocketAddr,
    threads: usize,
    connections: usize,
    requests: u64,
    rate: f64,
) -> LoadSpec {
    LoadSpec {
        connector: Connector::new(addr, None, true, Duration::from_secs(5), Default::default()),
        shape: LoadShape {
            threads,
            connections,
            pipeline: 2,
            refill: engine::Refill::EachReply,
            plan: Plan::Count(requests),
            rate: Some(rate),
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
    }
}

struct Quiet;
impl Observer for Quiet {}

#[test]
fn a_protocol_defined_in_a_test_runs_on_the_engine_with_exact_counts() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let counts = Arc::new(ServerCounts::default());
    let connections = 3usize;
    {
        let counts = counts.clone();
        std::thread::spawn(move || {
            for s in listener.incoming().take(connections).flatten() {
                let counts = counts.clone();
                std::thread::spawn(move || serve_conn(s, counts));
            }
        });
    }
    let late = Arc::new(AtomicU64::new(0));
    let requests = 300;
    // 600/s over 3 connections: 5 ms between a connection's requests, so the 2 ms
    // heartbeats also find nothing in flight.
    let spec = spec(addr, 1, connections, requests, 600.0);
    let out = engine::run(spec, LineFactory { late: late.clone() }, &mut Quiet).unwrap();
    let m = &out.measured;
    assert_eq!(m.sent, requests);
    assert_eq!(m.ok, requests, "errors: {:?}", m.error_list());
    assert_eq!(m.request_errors(), 0);
    assert_eq!(m.connect_errors(), 0);
    assert_eq!(m.in_flight, 0);
    assert_eq!(m.connections, connections as u64);
    assert_eq!(counts.pings.load(Relaxed), requests);
    assert_eq!(counts.byes.load(Relaxed), connections as u64);
    // Every heartbeat the server sent was read: as an event (and answered), or during
    // the goodbye.
    let sent = counts.heartbeats.load(Relaxed);
    assert_eq!(m.events + late.load(Relaxed), sent);
    assert_eq!(counts.acks.load(Relaxed), m.events);
    // Both kinds happened: with a request in flight (one per PONG at least) and without.
    assert!(out.figures.busy >= requests, "busy {}", out.figures.busy);
    assert!(out.figures.idle > 0, "idle {}", out.figures.idle);
    assert_eq!(out.figures.busy + out.figures.idle, m.events);
}

/// The heartbeat period of `LineServer`, ns.
const BEAT_NS: u64 = 2_000_000;

/// The server side's own figures, merged over the server's threads.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct LineServerFigures {
    heartbeats: u64,
    acks: u64,
    pings: u64,
    byes: u64,
}

impl Figures for LineServerFigures {
    fn merge(&mut self, o: &Self) {
        self.heartbeats += o.heartbeats;
        self.acks += o.acks;
        self.pings += o.pings;
        self.byes += o.byes;
    }
}

/// The line protocol's server side as a `ServerSession`: the same conversation as
/// `serve_conn`, with the 2 ms heartbeats sent from `on_wake` (after WELCOME, until
/// BYE) and one in front of every PONG.
struct LineServer {
    beating: bool,
    next_beat: u64,
    pings: u64,
}

impl ServerSession for LineServer {
    type Figures = LineServerFigures;

    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, f: &mut LineServerFigures) -> Reply {
        let mut used = 0;
        while let Some(l) = line(&input[used..]) {
            used += l.len() + 1;
            match l {
                b"HELLO" => {
                    out.extend_from_slice(b"WELCOME\n");
                    self.beating = true;
                }
                b"ACK" => f.acks += 1,
                b"BYE" => {
                    out.extend_from_slice(b"BYE\n");
                    f.byes += 1;
                    self.beating = false;
                }
                p if p.starts_with(b"PING ") => {
                    f.pings += 1;
                    f.heartbeats += 1;
                    self.pings += 1;
                    out.extend_from_slice(b"HEARTBEAT\nPONG ");
                    out.extend_from_slice(&p[5..]);
                    out.push(b'\n');
                }
                _ => return Reply::Close,
            }
        }
        Reply::Consumed(used)
    }

    fn take_requests(&mut self) -> u64 {
        std::mem::take(&mut self.pings)
    }

    fn next_wake(&self) -> Option<u64> {
        self.beating.then_some(self.next_beat)
    }

    fn on_wake(&mut self, now_ns: u64, out: &mut Vec<u8>, f: &mut LineServerFigures) {
        // Woken before HELLO is impossible (no wake is asked then); after it, one beat
        // per wake-up, the next a period from now (a late wake-up does not make a burst).
        f.heartbeats += 1;
        out.extend_from_slice(b"HEARTBEAT\n");
        self.next_beat = now_ns + BEAT_NS;
    }
}

struct LineServerFactory;

impl ServerFactory for LineServerFactory {
    type Session = LineServer;
    type Thread = ();

    fn session(&self) -> LineServer {
        LineServer {
            beating: false,
            next_beat: 0,
            pings: 0,
        }
    }

    fn thread_state(&self) {}

    fn session_in(&self, _thread: &(), now_ns: u64) -> LineServer {
        // The first beat is due a period after the accept; it is sent only once the
        // greeting has turned the beat on.
        LineServer {
            next_beat: now_ns + BEAT_NS,
            ..self.session()
        }
    }
}

#[test]
fn a_protocol_defined_in_a_test_is_served_by_the_server_runtime_with_exact_counts() {
    let server = wirebench::server::start(plain_server_config(2), LineServerFactory)
        .expect("start the line server");
    // Two load threads of two connections each.
    let (threads, connections) = (2usize, 4usize);
    let requests = 400;
    let late = Arc::new(AtomicU64::new(0));
    // 800/s over 4 connections: 5 ms between a connection's requests, so the 2 ms
    // heartbeats also find nothing in flight.
    let spec = spec(server.addr, threads, connections, requests, 800.0);
    let out = engine::run(spec, LineFactory { late: late.clone() }, &mut Quiet).unwrap();
    let (totals, figures) = server.shutdown_with_figures();
    let f: LineServerFigures = serde_json::from_value(figures).unwrap();
    let m = &out.measured;
    assert_eq!(m.sent, requests);
    assert_eq!(m.ok, requests, "errors: {:?}", m.error_list());
    assert_eq!(m.request_errors(), 0);
    assert_eq!(m.connect_errors(), 0);
    assert_eq!(m.in_flight, 0);
    assert_eq!(m.connections, connections as u64);
    // The server side's own figures and counters, exact.
    assert_eq!(f.pings, requests);
    assert_eq!(totals.requests, requests);
    assert_eq!(f.byes, connections as u64);
    assert_eq!(
        (totals.accepts, totals.closes),
        (connections as u64, connections as u64)
    );
    // Every heartbeat the runtime sent was read, as an event (and answered) or during
    // the goodbye; every answer reached the server.
    assert_eq!(m.events + late.load(Relaxed), f.heartbeats);
    assert_eq!(f.acks, m.events);
    assert!(out.figures.busy >= requests, "busy {}", out.figures.busy);
    assert!(out.figures.idle > 0, "idle {}", out.figures.idle);
    assert_eq!(out.figures.busy + out.figures.idle, m.events);
}
