//! AMQP hardening: publishes without confirms count only on a clean close, frame-max is
//! negotiated and honoured end to end, over-long names are refused up front, hostile
//! peers cost bounded memory on both sides, and the help and defaults a user meets first.

use crate::amqp_common::*;
use crate::common::*;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use wirebench::proto::amqp::server::{AmqpHandlerFactory, BrokerConfig, BrokerTotals};
use wirebench::server::session::{Reply, ServerFactory, ServerSession};

/// What a test broker does with connection number `k` (1-based) once the handshake is done.
#[derive(Clone, Copy)]
enum Misbehave {
    /// Connections with k % every == 0 are cut (no CloseOk) once `after` messages were
    /// read, or at their Close if they published fewer: a cut client reconnects for what
    /// it had not sent yet, and that connection must not close cleanly either (how
    /// much it had sent when cut depends on the timing).
    Cut { every: u64, after: u64 },
    /// Offers this frame-max in Connection.Tune (the CLI would refuse one below 4096).
    Offer(u32),
    /// After Confirm.SelectOk: a frame header announcing ~4 GiB, then up to 512 MiB of bytes.
    Endless,
}

#[derive(Default)]
struct Tally {
    /// Messages read on connections that ended with the client's Close and our CloseOk.
    clean: AtomicU64,
    /// Messages read on connections this broker cut.
    cut: AtomicU64,
    cut_conns: AtomicU64,
    conns: AtomicU64,
}

/// wirebench's own broker handler over std::net, one thread per connection, misbehaving
/// as told. Stops accepting on drop.
struct TestBroker {
    addr: SocketAddr,
    tally: Arc<Tally>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl TestBroker {
    fn start(how: Misbehave) -> TestBroker {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let tally = Arc::new(Tally::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (t, flag) = (tally.clone(), stop.clone());
        let acceptor = std::thread::spawn(move || {
            for s in listener.incoming() {
                if flag.load(SeqCst) {
                    break;
                }
                let Ok(s) = s else { continue };
                let k = t.conns.fetch_add(1, SeqCst) + 1;
                let t = t.clone();
                std::thread::spawn(move || serve_one(s, k, how, &t));
            }
        });
        TestBroker {
            addr,
            tally,
            stop,
            acceptor: Some(acceptor),
        }
    }

    fn url(&self) -> String {
        format!("amqp://guest:guest@{}/", self.addr)
    }
}

impl Drop for TestBroker {
    fn drop(&mut self) {
        self.stop.store(true, SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }
}

fn serve_one(mut s: TcpStream, k: u64, how: Misbehave, tally: &Tally) {
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // A session and its own figures per connection: the figures are this connection's.
    let frame_max = match how {
        Misbehave::Offer(m) => m,
        _ => BrokerConfig::default().frame_max,
    };
    let f = AmqpHandlerFactory::new(BrokerConfig {
        frame_max,
        ..BrokerConfig::default()
    });
    let mut h = f.session();
    let mut figures = BrokerTotals::default();
    let mut carry = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        carry.extend_from_slice(&buf[..n]);
        let mut out = Vec::new();
        let reply = h.on_bytes(&carry, &mut out, &mut figures);
        let read = figures.messages;
        match how {
            Misbehave::Cut { every, after }
                if k % every == 0
                    && (read >= after || (read > 0 && matches!(reply, Reply::Close))) =>
            {
                // Cut before writing this read's answers: no CloseOk ever leaves.
                tally.cut.fetch_add(read, SeqCst);
                tally.cut_conns.fetch_add(1, SeqCst);
                let _ = s.shutdown(Shutdown::Both);
                return;
            }
            Misbehave::Endless if out.ends_with(&SELECT_OK) => {
                let _ = s.write_all(&out);
                endless_frame(&mut s);
                return;
            }
            _ => {}
        }
        if s.write_all(&out).is_err() {
            return;
        }
        match reply {
            Reply::Consumed(used) => {
                carry.drain(..used);
            }
            Reply::Close => {
                tally.clean.fetch_add(read, SeqCst);
                return;
            }
            Reply::Reflect(_) | Reply::TooLarge | Reply::More(_) => {
                unreachable!("the broker answers Consumed or Close")
            }
        }
    }
}

/// Confirm.SelectOk on channel 1: a publisher with confirms is ready once it has it.
const SELECT_OK: [u8; 12] = [1, 0, 1, 0, 0, 0, 4, 0, 85, 0, 11, 0xCE];

/// A method frame header announcing 0xFFFF_FFF0 bytes, then its "payload" until the peer
/// stops reading (bounded: 512 MiB at most).
fn endless_frame(s: &mut TcpStream) {
    if s.write_all(&[1, 0, 0, 0xFF, 0xFF, 0xFF, 0xF0]).is_err() {
        return;
    }
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..512 {
        if s.write_all(&chunk).is_err() {
            return;
        }
    }
}

fn errors_of(r: &RunOut, kind: &str) -> u64 {
    r.json()["errors"][kind].as_u64().unwrap_or(0)
}

/// Peak resident memory (VmHWM) of a process, in KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    wirebench::sys::proc_fs::peak_rss_bytes(pid).map(|b| b / 1024)
}

/// Stated bound of the hostile-peer tests: far above a normal run (~20 MB), far below
/// what buffering an announced 4 GiB frame would take.
const RSS_BOUND_KIB: u64 = 200 * 1024;

#[test]
fn without_confirms_only_cleanly_closed_connections_count() {
    // Churn: every second connection is cut once the broker has read 5 of its 10 messages.
    let broker = TestBroker::start(Misbehave::Cut { every: 2, after: 5 });
    let r = run_json(&[
        "amqp",
        &broker.url(),
        "--mode",
        "churn",
        "--clients",
        "20",
        "--concurrency",
        "2",
        "--messages",
        "10",
        "-t",
        "1",
        "--timeout",
        "5s",
    ]);
    let t = &broker.tally;
    // 20 clients: connections 2, 4, ..., 20 were cut, the other 10 closed cleanly.
    let ok = r.u("/totals/ok");
    assert_eq!(ok, 100, "{}", r.explain());
    assert_eq!(
        ok,
        t.clean.load(SeqCst),
        "ok is what the broker read cleanly"
    );
    assert_eq!(r.u("/amqp/clean_closes"), 10);
    assert_eq!(r.u("/amqp/handshakes"), 20);
    assert_eq!(t.cut_conns.load(SeqCst), 10);
    assert!(t.cut.load(SeqCst) >= 5 * 10);
    // Every publish on a cut connection ends as closed or reset, none as ok.
    let cut_errors = errors_of(&r, "closed") + errors_of(&r, "reset");
    assert_eq!(cut_errors, 100, "{}", r.explain());
    assert_eq!(r.code, 1, "10 of 20 clients closed cleanly: a shortfall");
    assert_eq!(r.u("/totals/sent"), ok + r.u("/totals/errors"));
    assert_eq!(r.u("/totals/in_flight"), 0);
    drop(broker);

    // Publish: the only connection is cut after 1,000 messages; nothing counts.
    let broker = TestBroker::start(Misbehave::Cut {
        every: 1,
        after: 1000,
    });
    let r = run_json(&[
        "amqp",
        &broker.url(),
        "-n",
        "5000",
        "-t",
        "1",
        "-c",
        "1",
        "--timeout",
        "5s",
    ]);
    let t = &broker.tally;
    assert_eq!(r.u("/totals/ok"), 0, "{}", r.explain());
    assert_eq!(r.u("/amqp/messages"), 0);
    assert!(t.cut.load(SeqCst) >= 1000);
    assert_eq!(t.clean.load(SeqCst), 0);
    let sent = r.u("/totals/sent");
    assert!(sent > 0);
    assert_eq!(
        errors_of(&r, "closed") + errors_of(&r, "reset"),
        sent,
        "{}",
        r.explain()
    );
    assert_ne!(r.code, 0, "a run where nothing counted must not pass");
}

#[test]
fn a_broker_offering_frame_max_below_4096_is_refused_in_one_sentence() {
    let broker = TestBroker::start(Misbehave::Offer(1));
    let r = run_json(&[
        "amqp",
        &broker.url(),
        "-n",
        "10",
        "-t",
        "1",
        "-c",
        "1",
        "--timeout",
        "1s",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0);
    assert_eq!(r.u("/totals/sent"), 0);
    assert!(r.u("/errors/connect_failed") >= 1, "{}", r.explain());
    let reason = r.json()["outcome"]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("the broker offered frame-max 1 bytes in Connection.Tune, below the AMQP 0-9-1 minimum of 4096"),
        "{reason}"
    );
}

#[test]
fn serve_amqp_with_frame_max_4096_gets_10000_byte_messages_in_small_frames() {
    let broker = Broker::start(&["--frame-max", "4096"]);
    let url = format!("amqp://guest:guest@127.0.0.1:{}/", broker.port);
    let r = run_json(&[
        "amqp",
        &url,
        "--confirm",
        "-n",
        "300",
        "--size",
        "10000",
        "-t",
        "1",
        "-c",
        "2",
    ]);
    r.assert_clean(300);
    let r = run_json(&[
        "amqp", &url, "-n", "200", "--size", "10000", "-t", "1", "-c", "1",
    ]);
    r.assert_clean(200);
    let b = broker.finish();
    // Any frame over 4096 bytes would have been a 501 fault.
    assert_eq!(b["faults"], 0, "{b:?}");
    assert_eq!(b["messages"], 500);
    assert_eq!(b["bytes"], 500 * 10_000);
}

#[test]
fn an_endless_frame_is_too_large_for_the_client_and_memory_stays_bounded() {
    let broker = TestBroker::start(Misbehave::Endless);
    let file = TempPath::new("result", ".json");
    let mut p = Proc::wirebench(&[
        "amqp",
        &broker.url(),
        "--confirm",
        "-n",
        "500",
        "--inflight",
        "100",
        "-t",
        "1",
        "-c",
        "1",
        "--timeout",
        "5s",
        "--json",
        file.s(),
        "-q",
    ]);
    let pid = p.pid();
    let mut peak = 0;
    let done = wait_until(RUN_LIMIT, || {
        if let Some(k) = vm_hwm_kib(pid) {
            peak = peak.max(k);
        }
        p.exited()
    });
    assert!(done, "the client did not finish");
    assert!(peak > 0, "VmHWM never read");
    eprintln!("client against an endless frame: peak RSS {peak} KiB");
    assert!(
        peak < RSS_BOUND_KIB,
        "client peak RSS {peak} KiB, bound {RSS_BOUND_KIB}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
    let handshakes = ju(&j, "/amqp/handshakes");
    assert!(handshakes >= 1);
    // Each connection: one request ends as too_large, the rest of its window as dropped.
    assert_eq!(ju(&j, "/errors/too_large"), handshakes, "{}", j["errors"]);
    assert_eq!(ju(&j, "/totals/ok"), 0);
    assert_eq!(ju(&j, "/totals/sent"), ju(&j, "/totals/errors"));
    assert!(
        j["amqp"]["broker_close"]
            .as_str()
            .unwrap_or_default()
            .contains("larger than the negotiated frame-max of 131072 bytes"),
        "{}",
        j["amqp"]
    );
}

/// Basic.Publish on channel 1 and a content header announcing `body_size` bytes.
fn publish_announcing(body_size: u64) -> Vec<u8> {
    let mut v = vec![1, 0, 1, 0, 0, 0, 9, 0, 60, 0, 40, 0, 0, 0, 0, 0, 0xCE];
    v.extend_from_slice(&[2, 0, 1, 0, 0, 0, 14, 0, 60, 0, 0]);
    v.extend_from_slice(&body_size.to_be_bytes());
    v.extend_from_slice(&[0, 0, 0xCE]);
    v
}

/// The reply code of the Connection.Close in `got`.
fn close_code(got: &[u8]) -> u16 {
    let at = got
        .windows(4)
        .position(|w| w == [0, 10, 0, 50])
        .unwrap_or_else(|| panic!("no Connection.Close in {got:?}"));
    u16::from_be_bytes([got[at + 4], got[at + 5]])
}

#[test]
fn serve_amqp_refuses_oversized_frames_and_endless_bodies_cost_no_memory() {
    // The spec's minimum, which this broker once refused to offer.
    let broker = Broker::start(&["--frame-max", "4096"]);
    let pid = broker.proc.pid();

    // A body frame announcing ~4 GiB: Connection.Close 501 from its header alone.
    let mut s = opened_connection(broker.port);
    s.write_all(&publish_announcing(1 << 40)).unwrap();
    s.write_all(&[3, 0, 1, 0xFF, 0xFF, 0xFF, 0xF0]).unwrap();
    assert_eq!(close_code(&read_to_close(&mut s)), 501);

    // One byte over the negotiated 4096 (the whole frame counted): also 501.
    let mut s = opened_connection(broker.port);
    s.write_all(&publish_announcing(1 << 40)).unwrap();
    s.write_all(&[3, 0, 1, 0, 0, 0x0F, 0xF9]).unwrap();
    assert_eq!(close_code(&read_to_close(&mut s)), 501);

    // The same header followed by endless bytes: the broker stops reading at once.
    let mut s = opened_connection(broker.port);
    s.write_all(&publish_announcing(1 << 40)).unwrap();
    s.write_all(&[3, 0, 1, 0xFF, 0xFF, 0xFF, 0xF0]).unwrap();
    let chunk = vec![b'x'; 1 << 20];
    let mut sent_mb = 0;
    while sent_mb < 512 && s.write_all(&chunk).is_ok() {
        sent_mb += 1;
    }
    assert!(sent_mb < 512, "the broker kept reading an oversized frame");
    drop(s);

    // A message announcing 1 TiB, sent as 64 MiB of valid 4 KiB body frames: counted as
    // it streams, never buffered.
    let mut s = opened_connection(broker.port);
    s.write_all(&publish_announcing(1 << 40)).unwrap();
    let mut frame = vec![3, 0, 1, 0, 0, 0x0F, 0xF8];
    frame.extend_from_slice(&vec![b'y'; 4096 - 8]);
    frame.push(0xCE);
    let frames: Vec<u8> = frame.repeat(256);
    for _ in 0..64 {
        s.write_all(&frames).unwrap();
    }
    drop(s);

    // Everyone else is still served.
    let url = format!("amqp://guest:guest@127.0.0.1:{}/", broker.port);
    run_json(&[
        "amqp",
        &url,
        "--confirm",
        "-n",
        "1000",
        "-t",
        "1",
        "-c",
        "2",
    ])
    .assert_clean(1000);
    let peak = vm_hwm_kib(pid).expect("serve amqp's VmHWM");
    eprintln!("serve amqp after oversized and endless peers: peak RSS {peak} KiB");
    assert!(
        peak < RSS_BOUND_KIB,
        "serve amqp peak RSS {peak} KiB, bound {RSS_BOUND_KIB}"
    );
    let b = broker.finish();
    assert_eq!(b["faults"], 3, "{b:?}");
    assert_eq!(b["messages"], 1000);
}

fn refuse(args: &[&str], phrase: &str) {
    let what = format!("wirebench {}", args.join(" "));
    let mut p = Proc::wirebench(args);
    assert_eq!(p.finish(RUN_LIMIT), 2, "{what}: {}", p.stderr());
    let line = assert_one_line_error(&p.stderr(), &what);
    assert!(line.contains(phrase), "{what}: want {phrase:?} in {line:?}");
}

#[test]
fn over_long_names_and_frame_max_are_refused_up_front() {
    let long = "x".repeat(300);
    // Pointed at a port nothing listens on: the refusal must come before any connection.
    refuse(
        &["amqp", "amqp://127.0.0.1:1/", "--exchange", &long],
        "--exchange is 300 bytes long; AMQP 0-9-1 allows at most 255",
    );
    refuse(
        &["amqp", "--routing-key", &long],
        "--routing-key is 300 bytes",
    );
    refuse(
        &["amqp", "--declare-queue", &long],
        "--declare-queue is 300 bytes",
    );
    let vhost = format!("amqp://guest:guest@127.0.0.1:1/{}", "v".repeat(256));
    refuse(&["amqp", &vhost], "the URL's vhost is 256 bytes");
    let user = format!("amqp://{}:pw@127.0.0.1:1/", "u".repeat(256));
    refuse(&["amqp", &user], "the URL's user is 256 bytes");
    refuse(&["serve", "amqp", "--frame-max", "4095"], "at least 4096");
    refuse(&["serve", "amqp", "--frame-max", "0"], "at least 4096");
    refuse(
        &["serve", "amqp", "--frame-max", "16777217"],
        "at most 16777216",
    );
}

#[test]
fn help_shows_amqp_flags_only_and_serve_amqp_listens_on_5672() {
    let help = |args: &[&str]| {
        let mut p = Proc::wirebench(args);
        assert_eq!(p.finish(RUN_LIMIT), 0, "{}", p.stderr());
        p.stdout()
    };
    let amqp = help(&["amqp", "--help"]);
    assert!(
        !amqp.contains("--pipeline"),
        "amqp --help lists --pipeline:\n{amqp}"
    );
    // The batch plan works in publish mode (amqp::a_batch_plan_against_serve_amqp_counts_exactly).
    for flag in ["--iterations", "--reconnects", "--sleep"] {
        assert!(amqp.contains(flag), "amqp --help hides {flag}:\n{amqp}");
    }
    assert!(amqp.contains("--inflight"), "{amqp}");
    let serve = help(&["serve", "amqp", "--help"]);
    assert!(serve.contains("[default: 127.0.0.1:5672]"), "{serve}");
    let echo = help(&["serve", "echo", "--help"]);
    assert!(echo.contains("[default: 127.0.0.1:8081]"), "{echo}");
}
