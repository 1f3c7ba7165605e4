//! Server-initiated frames through the runtime: a test-only session that pings its
//! peer on its own schedule (`next_wake`/`on_wake`) and echoes lines, with figures of
//! its own merged over connections and threads.

use super::session::{Reply, ServerFactory, ServerSession};
use super::{start, ServerConfig};
use crate::stats::Figures;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const PINGS: u32 = 3;
const EVERY_NS: u64 = 20_000_000;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct PingFigures {
    pings: u64,
    lines: u64,
}

impl Figures for PingFigures {
    fn merge(&mut self, o: &Self) {
        self.pings += o.pings;
        self.lines += o.lines;
    }
}

struct Pinger {
    next: u64,
    sent: u32,
}

impl ServerSession for Pinger {
    type Figures = PingFigures;

    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, f: &mut PingFigures) -> Reply {
        match input.iter().rposition(|&b| b == b'\n') {
            Some(end) => {
                f.lines += input[..=end].iter().filter(|&&b| b == b'\n').count() as u64;
                out.extend_from_slice(&input[..=end]);
                Reply::Consumed(end + 1)
            }
            None => Reply::Consumed(0),
        }
    }

    fn next_wake(&self) -> Option<u64> {
        (self.sent < PINGS).then_some(self.next)
    }

    fn on_wake(&mut self, now_ns: u64, out: &mut Vec<u8>, f: &mut PingFigures) {
        self.sent += 1;
        f.pings += 1;
        out.extend_from_slice(format!("ping {}\n", self.sent).as_bytes());
        self.next = now_ns + EVERY_NS;
    }
}

struct PingerFactory;

impl ServerFactory for PingerFactory {
    type Session = Pinger;
    type Thread = ();

    fn thread_state(&self) {}

    fn session(&self) -> Pinger {
        Pinger { next: 0, sent: 0 }
    }
}

fn read_exact_or_fail(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut got = vec![0; n];
    s.read_exact(&mut got).expect("the server's bytes");
    got
}

#[test]
fn sessions_send_unsolicited_frames_when_woken_and_figures_merge() {
    let h = start(
        ServerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            threads: 2,
            max_conns_per_thread: 0,
            read_buffer: 4096,
            tls: None,
            nodelay: true,
            debug: false,
            timeouts: Default::default(),
            pacing: super::pacing::Pacing::off(),
            one_of_processes: false,
        },
        PingerFactory,
    )
    .unwrap();
    let mut conns: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(h.addr).unwrap())
        .collect();
    for s in &mut conns {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        // Three pings arrive with nothing asked.
        assert_eq!(
            read_exact_or_fail(s, 21),
            b"ping 1\nping 2\nping 3\n".to_vec()
        );
        // The connection still serves requests, in between or after.
        s.write_all(b"one\ntwo\n").unwrap();
        assert_eq!(read_exact_or_fail(s, 8), b"one\ntwo\n".to_vec());
    }
    // No fourth ping: the session stopped asking to be woken.
    let s = &mut conns[0];
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut b = [0u8; 16];
    match s.read(&mut b) {
        Err(e) => assert!(
            matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
            "{e}"
        ),
        Ok(n) => panic!("unexpected {:?}", &b[..n]),
    }
    let (totals, figures) = h.shutdown_with_figures();
    let figures: PingFigures = serde_json::from_value(figures).unwrap();
    assert_eq!(
        figures,
        PingFigures {
            pings: 12,
            lines: 8
        }
    );
    assert_eq!(totals.accepts, 4);
    assert_eq!(totals.closes, 4);
    assert_eq!(totals.bytes_in, 4 * 8);
    assert_eq!(totals.bytes_out, 4 * (21 + 8));
}
