//! State the connections of one server thread share, with no lock: a protocol defined
//! only here keeps a per-thread record (`ServerFactory::Thread`, an `Rc`, so it could
//! not even cross threads) of the connections its thread accepted, and answers "WHO"
//! with its thread's number and the connection's place on that thread. Served by
//! wirebench's server runtime on both loops: each thread's state is made once, on that
//! thread, and every connection of the thread sees the same one.

use crate::common::plain_server_config;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use wirebench::server::session::{Reply, ServerFactory, ServerSession};

/// One server thread's own record.
struct ThreadRecord {
    /// Which thread's state this is (1, 2, ... in the order they were made).
    number: u64,
    accepted: Cell<u64>,
}

struct Who {
    thread: Rc<ThreadRecord>,
    /// This connection's place among its thread's connections (1, 2, ...).
    place: u64,
}

impl ServerSession for Who {
    type Figures = ();

    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, _f: &mut ()) -> Reply {
        match input.iter().position(|&b| b == b'\n') {
            None => Reply::Consumed(0),
            Some(n) if &input[..n] == b"WHO" => {
                // Read at the time of asking: the record is shared, not copied.
                let t = &self.thread;
                out.extend_from_slice(
                    format!("{} {} {}\n", t.number, self.place, t.accepted.get()).as_bytes(),
                );
                Reply::Consumed(n + 1)
            }
            Some(_) => Reply::Close,
        }
    }
}

struct WhoFactory {
    /// Thread states made so far, over all threads.
    made: Arc<AtomicU64>,
}

impl ServerFactory for WhoFactory {
    type Session = Who;
    type Thread = Rc<ThreadRecord>;

    fn session(&self) -> Who {
        self.session_in(&self.thread_state(), 0)
    }

    fn thread_state(&self) -> Rc<ThreadRecord> {
        Rc::new(ThreadRecord {
            number: self.made.fetch_add(1, Relaxed) + 1,
            accepted: Cell::new(0),
        })
    }

    fn session_in(&self, thread: &Rc<ThreadRecord>, _now_ns: u64) -> Who {
        thread.accepted.set(thread.accepted.get() + 1);
        Who {
            thread: thread.clone(),
            place: thread.accepted.get(),
        }
    }
}

/// Opens `n` connections (all held open), asks each WHO, and returns each answer as
/// (thread, place), then asks them all again for the threads' final counts.
fn ask(addr: std::net::SocketAddr, n: usize) -> (Vec<(u64, u64)>, BTreeMap<u64, u64>) {
    let mut conns: Vec<(TcpStream, BufReader<TcpStream>)> = (0..n)
        .map(|_| {
            let s = TcpStream::connect(addr).expect("connect");
            let r = BufReader::new(s.try_clone().expect("clone"));
            (s, r)
        })
        .collect();
    let answers = |conns: &mut Vec<(TcpStream, BufReader<TcpStream>)>| {
        conns
            .iter_mut()
            .map(|(s, r)| {
                s.write_all(b"WHO\n").expect("write");
                let mut l = String::new();
                r.read_line(&mut l).expect("read");
                let f: Vec<u64> = l
                    .split_whitespace()
                    .map(|x| x.parse().expect("a number"))
                    .collect();
                assert_eq!(f.len(), 3, "{l:?}");
                (f[0], f[1], f[2])
            })
            .collect::<Vec<_>>()
    };
    // A connection is accepted by then: it answered.
    let first = answers(&mut conns);
    let again = answers(&mut conns);
    let places = first.iter().map(|(t, p, _)| (*t, *p)).collect();
    let totals = again.iter().map(|(t, _, total)| (*t, *total)).collect();
    (places, totals)
}

/// Serves 24 connections on 3 threads, on the epoll loop or (the default for plain
/// TCP) io_uring.
fn check(epoll: bool) {
    let made = Arc::new(AtomicU64::new(0));
    let threads = 3;
    let cfg = wirebench::server::ServerConfig {
        // A worker process of `serve --processes` runs epoll (server::Machinery).
        one_of_processes: epoll,
        ..plain_server_config(threads)
    };
    let server =
        wirebench::server::start(cfg, WhoFactory { made: made.clone() }).expect("start the server");
    let n = 24;
    let (places, totals) = ask(server.addr, n);
    let counts = server.shutdown();
    // One state per server thread, made once.
    assert_eq!(made.load(Relaxed), threads as u64);
    // Each thread numbered its own connections 1, 2, ... with no gap and no repeat, and
    // every connection of a thread sees that thread's final count.
    let mut by_thread: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (t, p) in &places {
        by_thread.entry(*t).or_default().push(*p);
    }
    for (t, mut ps) in by_thread.clone() {
        ps.sort_unstable();
        assert_eq!(ps, (1..=ps.len() as u64).collect::<Vec<_>>(), "thread {t}");
        assert_eq!(totals[&t], ps.len() as u64, "thread {t}");
    }
    assert_eq!(by_thread.values().map(Vec::len).sum::<usize>(), n);
    assert_eq!(counts.accepts, n as u64);
}

#[test]
fn a_server_threads_connections_share_its_state_on_io_uring() {
    check(false);
}

#[test]
fn a_server_threads_connections_share_its_state_on_epoll() {
    check(true);
}
