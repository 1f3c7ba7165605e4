//! The opening and closing exchanges of a protocol defined only here (HELLO, LOGIN,
//! then PINGs, then BYE): a session whose opening fails with a request-level kind (a
//! refusal: `status`) is counted as a failed connection attempt, never as a failed
//! request (sent = ok + errors + in_flight holds, and the protocol's kind is kept in
//! the detail); and every round trip of the exchanges is counted by the engine
//! (`Counters::exchanges`), with no engine change for the protocol.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;
use wirebench::engine::connector::Connector;
use wirebench::engine::session::{
    ClientSession, Decode, Exchanges, InFlight, SessionFactory, Setup,
};
use wirebench::engine::{self, EngineOutput, LoadShape, LoadSpec, Observer, Plan};
use wirebench::stats::ErrorKind;

/// HELLO, answered OK or NO (refused); LOGIN, answered OK; then PING n / PONG n;
/// then BYE, answered BYE.
#[derive(Default)]
struct Gate {
    /// Answers of the current exchange read so far.
    answers: u8,
}

fn line(input: &[u8]) -> Option<&[u8]> {
    input.iter().position(|&b| b == b'\n').map(|n| &input[..n])
}

impl ClientSession for Gate {
    type Figures = ();

    fn open(&mut self, input: &[u8], out: &mut Vec<u8>, _f: &mut (), n: &mut Exchanges) -> Setup {
        match line(input) {
            None if input.is_empty() && self.answers == 0 => {
                out.extend_from_slice(b"HELLO\n");
                n.sent += 1;
                Setup::Continue { used: 0 }
            }
            None => Setup::Continue { used: 0 },
            Some(answer) => {
                n.answered += 1;
                self.answers += 1;
                match (answer, self.answers) {
                    (b"OK", 1) => {
                        out.extend_from_slice(b"LOGIN guest\n");
                        n.sent += 1;
                        Setup::Continue { used: 3 }
                    }
                    (b"OK", _) => {
                        self.answers = 0;
                        Setup::Done { used: 3 }
                    }
                    _ => Setup::Failed {
                        kind: ErrorKind::Status,
                        detail: "the server said NO".into(),
                    },
                }
            }
        }
    }

    fn close(&mut self, input: &[u8], out: &mut Vec<u8>, _f: &mut (), n: &mut Exchanges) -> Setup {
        match line(input) {
            None if input.is_empty() && self.answers == 0 => {
                out.extend_from_slice(b"BYE\n");
                n.sent += 1;
                self.answers = 1;
                Setup::Continue { used: 0 }
            }
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
        out.extend_from_slice(format!("PING {seq}\n").as_bytes());
        0
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
            (Some(l), Some(r)) if l == format!("PONG {}", r.seq).as_bytes() => {
                Decode::reply(l.len() + 1, engine::session::Verdict::Ok)
            }
            _ => Decode::Fail {
                kind: ErrorKind::Protocol,
            },
        }
    }
}

struct GateFactory;
impl SessionFactory for GateFactory {
    type Session = Gate;
    fn session(&self, _conn_id: u64) -> Gate {
        Gate::default()
    }
}

struct Quiet;
impl Observer for Quiet {}

/// Serves connections forever (the test process ends it): the first `refuse` get NO,
/// the rest OK and PONGs. Returns the address and how many were refused so far.
fn server(refuse: u64) -> (std::net::SocketAddr, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let refused = Arc::new(AtomicU64::new(0));
    let r = refused.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let r = r.clone();
            std::thread::spawn(move || serve(s, refuse, &r));
        }
    });
    (addr, refused)
}

fn serve(s: TcpStream, refuse: u64, refused: &AtomicU64) {
    let mut w = s.try_clone().unwrap();
    for l in BufReader::new(s).lines() {
        let Ok(l) = l else { return };
        let answer = match l.as_str() {
            "HELLO" if refused.fetch_add(1, Relaxed) < refuse => "NO\n".to_string(),
            "HELLO" => {
                refused.fetch_sub(1, Relaxed);
                "OK\n".to_string()
            }
            "LOGIN guest" => "OK\n".to_string(),
            "BYE" => "BYE\n".to_string(),
            p => format!("PONG {}\n", p.trim_start_matches("PING ")),
        };
        if w.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

fn run(addr: std::net::SocketAddr, requests: u64, timeout: Duration) -> EngineOutput {
    run_with(addr, requests, timeout, 1, None)
}

/// `connections` slots, each opening a new connection after `per_connection` requests.
fn run_with(
    addr: std::net::SocketAddr,
    requests: u64,
    timeout: Duration,
    connections: usize,
    per_connection: Option<u64>,
) -> EngineOutput {
    let spec = LoadSpec {
        connector: Connector::new(addr, None, true, timeout, Default::default()),
        shape: LoadShape {
            threads: 1,
            connections,
            pipeline: 1,
            refill: engine::Refill::EachReply,
            plan: Plan::Count(requests),
            rate: None,
            warmup: Duration::ZERO,
            ramp: None,
            stages: Default::default(),
            timeout,
            memory_budget: engine::DEFAULT_MEMORY_BUDGET,
            coalesce: true,
        },
        interval: Duration::from_secs(1),
        keep_interval_histograms: false,
        interval_handshakes: false,
        stop: Arc::new(AtomicBool::new(false)),
        per_connection,
        attempts: Default::default(),
        release: None,
    };
    engine::run(spec, GateFactory, &mut Quiet).unwrap()
}

#[test]
fn a_refused_opening_counts_one_failed_connection_and_no_request() {
    // Two refusals, then a connection that does all the requests.
    let (addr, refused) = server(2);
    let out = run(addr, 50, Duration::from_secs(5));
    let m = &out.measured;
    assert_eq!(refused.load(Relaxed), 2);
    assert_eq!(m.sent, 50);
    assert_eq!(m.ok, 50, "errors: {:?}", m.error_list());
    assert_eq!(m.request_errors(), 0, "errors: {:?}", m.error_list());
    assert_eq!(m.in_flight, 0);
    assert!(m.invariant_holds());
    // Connections count when TCP is up, before the opening exchange.
    assert_eq!(m.connections, 3);
    assert_eq!(m.error_list(), vec![(ErrorKind::ConnectFailed, 2)]);
    assert_eq!(
        out.first_connect_error.as_deref(),
        Some("handshake failed (status): the server said NO")
    );
}

#[test]
fn a_server_that_refuses_every_opening_sends_no_request() {
    let (addr, refused) = server(u64::MAX);
    let out = run(addr, 10, Duration::from_millis(300));
    let m = &out.measured;
    // Every refusal the server gave is one failed connection, and nothing else.
    let n = refused.load(Relaxed);
    assert!(n >= 1);
    assert_eq!(m.error_list(), vec![(ErrorKind::ConnectFailed, n)]);
    assert_eq!((m.sent, m.ok, m.in_flight, m.connections), (0, 0, 0, n));
    assert!(m.invariant_holds());
}

#[test]
fn every_round_trip_of_the_opening_and_closing_exchanges_is_counted() {
    // 60 requests over 3 slots, a new connection every 4: 15 connections, each HELLO,
    // LOGIN and BYE, each answered.
    let (addr, _) = server(0);
    let out = run_with(addr, 60, Duration::from_secs(5), 3, Some(4));
    let m = &out.measured;
    assert_eq!((m.sent, m.ok), (60, 60), "errors: {:?}", m.error_list());
    assert_eq!(m.connections, 15);
    assert_eq!(
        m.exchanges,
        Exchanges {
            sent: 45,
            answered: 45
        }
    );
    assert_eq!(out.warmup.exchanges, Exchanges::default());

    // Two refused at HELLO (one round trip each, the refusal is an answer), then one
    // connection with all three.
    let (addr, _) = server(2);
    let out = run(addr, 20, Duration::from_secs(5));
    let m = &out.measured;
    assert_eq!(
        (m.ok, m.connections),
        (20, 3),
        "errors: {:?}",
        m.error_list()
    );
    assert_eq!(
        m.exchanges,
        Exchanges {
            sent: 5,
            answered: 5
        }
    );
}
