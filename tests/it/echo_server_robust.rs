//! The library's echo server under odd peers: garbage, instant closes, half-closes, a
//! peer that does not read (backpressure), all while a real load runs exactly.

use crate::common::*;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const MIB: u64 = 1 << 20;

/// Reads until EOF (bounded by the stream's read timeout); fails the test on an error.
fn read_to_eof(s: &mut TcpStream, what: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => panic!("{what}: read failed after {} bytes: {e}", out.len()),
        }
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect to the in-process server");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

#[test]
fn odd_peers_do_not_disturb_a_load() {
    let server = InProc::start(2);
    let addr = server.addr;

    // Garbage: 64 KiB of random bytes, then a half-close; all of it must come back.
    let garbage = pseudo_random_bytes(0x5eed, 64 * 1024);
    let mut g = connect(addr);
    let writer = {
        let mut w = g.try_clone().unwrap();
        let data = garbage.clone();
        std::thread::spawn(move || {
            w.write_all(&data).unwrap();
            w.shutdown(Shutdown::Write).unwrap();
        })
    };

    // Connects and closes at once.
    drop(TcpStream::connect(addr).unwrap());
    // Half-closes without sending anything, and stays open during the load.
    let mut half = connect(addr);
    half.shutdown(Shutdown::Write).unwrap();

    let r = run_json(&[
        "echo",
        &server.addr_string(),
        "-n",
        "2000",
        "-t",
        "2",
        "-c",
        "8",
        "--pipeline",
        "2",
    ]);
    r.assert_clean(2000);

    let back = read_to_eof(&mut g, "garbage connection");
    writer.join().unwrap();
    assert_eq!(back.len(), garbage.len());
    assert!(back == garbage, "the garbage came back changed");
    // The server closes the half-closed connection: EOF, no bytes.
    assert_eq!(
        read_to_eof(&mut half, "half-closed connection"),
        Vec::<u8>::new()
    );
    drop(g);
    drop(half);

    // 3 odd connections + 8 of the load, all closed by now.
    let settled = wait_until(Duration::from_secs(10), || {
        let t = server.totals();
        t.accepts == 11 && t.closes == 11
    });
    let t = server.shutdown();
    assert!(settled, "{t:?}");
    assert_eq!(t.active, 0, "{t:?}");
    let load_bytes = r.u("/totals/bytes_sent");
    assert_eq!(t.bytes_in, garbage.len() as u64 + load_bytes, "{t:?}");
    assert_eq!(t.bytes_out, t.bytes_in, "{t:?}");
}

#[test]
fn a_peer_that_does_not_read_stops_being_read() {
    const TOTAL: usize = 32 << 20;
    let server = InProc::start(1);

    // Small client buffers (no autotuning), so what the server may read before its
    // replies back up is bounded by its own send buffer, not by this machine's sysctls.
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(64 * 1024).unwrap();
    sock.set_send_buffer_size(64 * 1024).unwrap();
    sock.connect(&server.addr.into()).unwrap();
    let mut s: TcpStream = sock.into();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(30))).unwrap();

    let data = Arc::new(pseudo_random_bytes(0xbac4, TOTAL));
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let (mut w, data, written) = (s.try_clone().unwrap(), data.clone(), written.clone());
        std::thread::spawn(move || {
            for chunk in data.chunks(64 * 1024) {
                w.write_all(chunk).expect("write to the echo server");
                written.fetch_add(chunk.len() as u64, Ordering::SeqCst);
            }
        })
    };

    // Let the writer run without reading until nothing moves any more (bounded).
    std::thread::sleep(Duration::from_secs(1));
    let mut last = (u64::MAX, u64::MAX);
    let mut still = 0;
    let stalled = wait_until(Duration::from_secs(15), || {
        let now = (written.load(Ordering::SeqCst), server.totals().bytes_in);
        still = if now == last { still + 1 } else { 0 };
        last = now;
        still >= 25
    });
    let (wrote, read_by_server) = last;
    let t = server.totals();
    eprintln!("stalled: client wrote {wrote} bytes, server read {read_by_server}: {t:?}");
    assert!(stalled, "the transfer never stalled: wrote {wrote}, {t:?}");
    assert!(
        read_by_server < 16 * MIB,
        "the server kept reading from a peer that does not read: {t:?}, client wrote {wrote}"
    );
    assert!(wrote > read_by_server, "wrote {wrote}, {t:?}");
    assert!(t.bytes_out <= t.bytes_in, "{t:?}");

    // Now read everything back while the writer finishes: exactly the bytes sent.
    let mut got = 0usize;
    let mut buf = vec![0u8; 256 * 1024];
    while got < TOTAL {
        let n = match s.read(&mut buf) {
            Ok(0) => panic!("EOF after {got} of {TOTAL} bytes"),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => panic!("read failed after {got} of {TOTAL} bytes: {e}"),
        };
        assert!(n <= TOTAL - got, "more bytes came back than were sent");
        if buf[..n] != data[got..got + n] {
            let at = (0..n).find(|&i| buf[i] != data[got + i]).unwrap();
            panic!("echoed byte {} differs", got + at);
        }
        got += n;
    }
    writer.join().unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    assert_eq!(read_to_eof(&mut s, "after the bulk echo"), Vec::<u8>::new());
    drop(s);
    assert!(wait_until(Duration::from_secs(10), || server
        .totals()
        .closes
        == 1));
    let t = server.shutdown();
    assert_eq!(t.bytes_in, TOTAL as u64, "{t:?}");
    assert_eq!(t.bytes_out, TOTAL as u64, "{t:?}");
    assert_eq!((t.accepts, t.closes), (1, 1), "{t:?}");
}

/// Connections still open when the server shuts down count as closed in its final counters.
#[test]
fn shutdown_counts_open_connections_as_closed() {
    let server = InProc::start(2);
    let held: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(server.addr).expect("connect"))
        .collect();
    assert!(wait_until(RUN_LIMIT, || server.totals().accepts == 3));
    let totals = server.shutdown();
    assert_eq!((totals.accepts, totals.closes, totals.active), (3, 3, 0));
    drop(held);
}
