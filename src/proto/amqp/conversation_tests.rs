//! The publisher and the dummy broker talking to each other in memory, byte for byte:
//! exact handshake frames, every split point of the whole conversation, confirm counts,
//! and the broker's answers to broken input.

use super::client::{AmqpClient, ClientOptions};
use super::client_figures::ClientFigures;
use super::codec::{split_frame, Split, PROTOCOL_HEADER};
use super::server::{AmqpHandler, AmqpHandlerFactory, BrokerConfig, BrokerTotals};
use crate::engine::session::{ClientSession, Decode, InFlight, Lane, Setup, Verdict};
use crate::server::session::{Reply, ServerFactory, ServerSession};

/// Which connection-level exchange a test drives.
#[derive(Clone, Copy)]
enum SetupPhase {
    Open,
    Close,
}

fn step(c: &mut AmqpClient, phase: SetupPhase, input: &[u8], out: &mut Vec<u8>) -> Setup {
    let mut figures = ClientFigures::default();
    match phase {
        SetupPhase::Open => c.open(input, out, &mut figures, &mut Default::default()),
        SetupPhase::Close => c.close(input, out, &mut figures, &mut Default::default()),
    }
}

fn opts(confirm: bool, channels: u16) -> ClientOptions {
    ClientOptions {
        user: "guest".into(),
        password: "guest".into(),
        vhost: "/".into(),
        channels,
        confirm,
        exchange: String::new(),
        routing_key: "rk".into(),
        size: 10,
        declare_queue: Some("q".into()),
        per_connection: None,
    }
}

/// Feeds `input` to a handler the way the server runtime does: unconsumed bytes wait.
struct Feeder {
    h: AmqpHandler,
    /// The broker's figures, as the server thread would keep them.
    figures: BrokerTotals,
    carry: Vec<u8>,
    out: Vec<u8>,
    closed: bool,
}

impl Feeder {
    fn new(f: &AmqpHandlerFactory) -> Self {
        Feeder {
            h: f.session(),
            figures: BrokerTotals::default(),
            carry: Vec::new(),
            out: Vec::new(),
            closed: false,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        assert!(!self.closed, "fed after close");
        self.carry.extend_from_slice(bytes);
        let mut out = Vec::new();
        match self.h.on_bytes(&self.carry, &mut out, &mut self.figures) {
            Reply::Consumed(n) => {
                self.carry.drain(..n);
            }
            Reply::Close => self.closed = true,
            Reply::Reflect(_) | Reply::TooLarge | Reply::More(_) => {
                panic!("the broker never echoes, stops early or refuses as too large")
            }
        }
        self.out.extend_from_slice(&out);
    }
}

/// Runs a setup phase of `c` against the broker; returns the client's bytes of it.
fn setup(c: &mut AmqpClient, b: &mut Feeder, phase: SetupPhase) -> Vec<u8> {
    let mut sent = Vec::new();
    let mut input: Vec<u8> = Vec::new();
    let mut seen = b.out.len();
    for _ in 0..100 {
        let mut out = Vec::new();
        let step = step(c, phase, &input, &mut out);
        sent.extend_from_slice(&out);
        if !out.is_empty() {
            b.feed(&out);
        }
        match step {
            Setup::Done { used } => {
                assert_eq!(used, input.len(), "nothing follows the handshake");
                return sent;
            }
            Setup::Failed { detail, .. } => panic!("setup failed: {detail}"),
            Setup::Continue { used } | Setup::Event { used } => {
                input.drain(..used);
                if used == 0 {
                    input.extend_from_slice(&b.out[seen..]);
                    seen = b.out.len();
                }
            }
        }
    }
    panic!("setup did not finish");
}

fn inflight(seq: u64) -> InFlight {
    InFlight {
        seq,
        intended_ns: 0,
        sent_ns: 0,
        tag: 0,
        lane: Lane::ANY,
        measured: true,
        on_write: false,
    }
}

/// A whole connection: handshake, `n` publishes (confirmed), close. Returns the client's
/// bytes, the broker's bytes, and how many confirms the client settled.
fn conversation(cfg: BrokerConfig, n: u64, channels: u16) -> (Vec<u8>, Vec<u8>, u64) {
    let f = AmqpHandlerFactory::new(cfg);
    let mut b = Feeder::new(&f);
    let mut c = AmqpClient::new(opts(true, channels));
    let mut sent = setup(&mut c, &mut b, SetupPhase::Open);
    let handshake_end = b.out.len();
    let mut pubs = Vec::new();
    for seq in 0..n {
        c.encode(seq, 0, &mut pubs);
    }
    b.feed(&pubs);
    sent.extend_from_slice(&pubs);
    let mut replies = &b.out[handshake_end..];
    let mut settled = 0;
    let mut seq = 0;
    while settled < n {
        let mut figures = ClientFigures::default();
        match c.decode(replies, Some(&inflight(seq)), &mut Vec::new(), &mut figures) {
            Decode::Reply {
                used,
                settles,
                verdict,
                close,
                lane: _,
            } => {
                assert_eq!(verdict, Verdict::Ok);
                assert!(!close);
                replies = &replies[used..];
                settled += settles as u64;
                seq += settles as u64;
            }
            Decode::Consumed { used } | Decode::Event { used } => replies = &replies[used..],
            Decode::Incomplete => break,
            Decode::Fail { kind } => panic!("failed: {kind:?}"),
        }
    }
    assert!(replies.is_empty(), "unread replies: {replies:?}");
    sent.extend_from_slice(&setup(&mut c, &mut b, SetupPhase::Close));
    assert!(b.closed, "the broker closes after CloseOk");
    let totals = b.figures;
    assert_eq!(
        (totals.messages, totals.confirmed, totals.clean_closes),
        (n, n, 1)
    );
    (sent, b.out, settled)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn handshake_bytes_are_exact() {
    let (client, broker, _) = conversation(BrokerConfig::default(), 0, 2);
    assert_eq!(client[..8], PROTOCOL_HEADER);
    assert_eq!(PROTOCOL_HEADER, *b"AMQP\x00\x00\x09\x01");
    // Connection.Tune: channel_max 2047, frame_max 131072, heartbeat 60.
    let tune = [
        1, 0, 0, 0, 0, 0, 12, 0, 10, 0, 30, 0x07, 0xFF, 0, 2, 0, 0, 0, 60, 0xCE,
    ];
    // Connection.TuneOk: the client's 2 channels, 131072, heartbeats off.
    let tune_ok = [
        1, 0, 0, 0, 0, 0, 12, 0, 10, 0, 31, 0, 2, 0, 2, 0, 0, 0, 0, 0xCE,
    ];
    // Connection.Open "/" and OpenOk.
    let open = [1, 0, 0, 0, 0, 0, 8, 0, 10, 0, 40, 1, b'/', 0, 0, 0xCE];
    let open_ok = [1, 0, 0, 0, 0, 0, 5, 0, 10, 0, 41, 0, 0xCE];
    // Channel.Open and OpenOk on channel 2.
    let ch_open = [1, 0, 2, 0, 0, 0, 5, 0, 20, 0, 10, 0, 0xCE];
    let ch_open_ok = [1, 0, 2, 0, 0, 0, 8, 0, 20, 0, 11, 0, 0, 0, 0, 0xCE];
    // Queue.DeclareOk "q" (0 messages, 0 consumers) and Confirm.SelectOk on channel 1.
    let declare_ok = [
        1, 0, 1, 0, 0, 0, 14, 0, 50, 0, 11, 1, b'q', 0, 0, 0, 0, 0, 0, 0, 0, 0xCE,
    ];
    let select_ok = [1, 0, 1, 0, 0, 0, 4, 0, 85, 0, 11, 0xCE];
    // Connection.Close 200 "done" and CloseOk.
    let close = [
        1, 0, 0, 0, 0, 0, 15, 0, 10, 0, 50, 0, 200, 4, b'd', b'o', b'n', b'e', 0, 0, 0, 0, 0xCE,
    ];
    let close_ok = [1, 0, 0, 0, 0, 0, 4, 0, 10, 0, 51, 0xCE];
    for (name, frame, from_client) in [
        ("tune", &tune[..], false),
        ("tune-ok", &tune_ok[..], true),
        ("open", &open[..], true),
        ("open-ok", &open_ok[..], false),
        ("channel.open", &ch_open[..], true),
        ("channel.open-ok", &ch_open_ok[..], false),
        ("queue.declare-ok", &declare_ok[..], false),
        ("confirm.select-ok", &select_ok[..], false),
        ("close", &close[..], true),
        ("close-ok", &close_ok[..], false),
    ] {
        let side = if from_client { &client } else { &broker };
        assert!(contains(side, frame), "{name} not found byte for byte");
    }
    // Connection.Start comes first, and offers PLAIN, en_US, product wirebench.
    assert_eq!(broker[..3], [1, 0, 0]);
    assert_eq!(broker[7..11], [0, 10, 0, 10]);
    for word in [&b"PLAIN"[..], b"en_US", b"wirebench", b"publisher_confirms"] {
        assert!(contains(&broker, word));
    }
    // StartOk answers with PLAIN "\0guest\0guest".
    assert!(contains(
        &client,
        b"\x05PLAIN\x00\x00\x00\x0c\x00guest\x00guest\x05en_US"
    ));
}

#[test]
fn publish_frames_and_acks_are_exact() {
    let (client, broker, settled) = conversation(BrokerConfig::default(), 3, 1);
    assert_eq!(settled, 3);
    // Basic.Publish "" "rk", the content header (class 60, 10 bytes), the body.
    let publish = [
        1, 0, 1, 0, 0, 0, 11, 0, 60, 0, 40, 0, 0, 0, 2, b'r', b'k', 0, 0xCE,
    ];
    let header = [
        2, 0, 1, 0, 0, 0, 14, 0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0xCE,
    ];
    let mut body = vec![3, 0, 1, 0, 0, 0, 10];
    body.extend_from_slice(&[0; 10]);
    body.push(0xCE);
    let one: Vec<u8> = [&publish[..], &header[..], &body[..]].concat();
    assert_eq!(
        client.windows(one.len()).filter(|w| *w == &one[..]).count(),
        3
    );
    for tag in 1..=3u8 {
        let ack = [
            1, 0, 1, 0, 0, 0, 13, 0, 60, 0, 80, 0, 0, 0, 0, 0, 0, 0, tag, 0, 0xCE,
        ];
        assert!(contains(&broker, &ack), "ack {tag}");
    }
}

#[test]
fn multiple_acks_confirm_everything_once() {
    let cfg = BrokerConfig {
        ack_multiple: true,
        ..BrokerConfig::default()
    };
    // 3 channels x 7 messages in one read: one Basic.Ack (multiple) per channel.
    let (_, broker, settled) = conversation(cfg, 21, 3);
    assert_eq!(settled, 21);
    for ch in 1..=3u8 {
        let ack = [
            1, 0, ch, 0, 0, 0, 13, 0, 60, 0, 80, 0, 0, 0, 0, 0, 0, 0, 7, 1, 0xCE,
        ];
        assert!(contains(&broker, &ack), "multiple ack on channel {ch}");
    }
}

/// The broker's output for `input` fed in pieces cut at `cuts`.
fn broker_output(input: &[u8], cuts: &[usize]) -> Vec<u8> {
    let f = AmqpHandlerFactory::new(BrokerConfig::default());
    let mut b = Feeder::new(&f);
    let mut at = 0;
    for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
        b.feed(&input[at..cut]);
        at = cut;
    }
    assert_eq!(b.figures.messages, 4);
    b.out
}

#[test]
fn every_split_of_the_conversation_gives_the_same_replies() {
    let (client, broker, _) = conversation(BrokerConfig::default(), 4, 2);
    let whole = broker_output(&client, &[]);
    assert_eq!(whole, broker);
    for cut in 1..client.len() {
        assert_eq!(broker_output(&client, &[cut]), whole, "cut at {cut}");
    }
    let every: Vec<usize> = (1..client.len()).collect();
    assert_eq!(broker_output(&client, &every), whole, "one byte at a time");

    // And the client reads the broker's replies cut anywhere.
    let handshake_len = {
        let mut n = 0;
        let mut frames = 0;
        // Start, Tune, OpenOk, 2 x Channel.OpenOk, Queue.DeclareOk, 2 x Confirm.SelectOk.
        while frames < 8 {
            match split_frame(&broker[n..], 131072) {
                Split::Frame(f) => n += f.used,
                other => panic!("{other:?}"),
            }
            frames += 1;
        }
        n
    };
    for cut in 0..handshake_len {
        let mut c = AmqpClient::new(opts(true, 2));
        let mut scratch = Vec::new();
        let mut input = broker[..cut].to_vec();
        let mut rest = &broker[cut..handshake_len];
        let mut done = false;
        for _ in 0..64 {
            match step(&mut c, SetupPhase::Open, &input, &mut scratch) {
                Setup::Continue { used: 0 } => {
                    input.extend_from_slice(rest);
                    rest = &[];
                }
                Setup::Continue { used } | Setup::Event { used } => {
                    input.drain(..used);
                }
                Setup::Done { used } => {
                    assert_eq!(used, input.len());
                    done = true;
                    break;
                }
                Setup::Failed { detail, .. } => panic!("cut {cut}: {detail}"),
            }
        }
        assert!(done, "cut {cut}: handshake did not finish");
    }
}

fn opened_broker() -> (AmqpHandlerFactory, Feeder) {
    let f = AmqpHandlerFactory::new(BrokerConfig::default());
    let mut b = Feeder::new(&f);
    let mut c = AmqpClient::new(opts(false, 1));
    setup(&mut c, &mut b, SetupPhase::Open);
    b.out.clear();
    (f, b)
}

/// The reply code of the Connection.Close at the start of `out`.
fn close_code(out: &[u8]) -> (u16, u16, u16) {
    match split_frame(out, 131072) {
        Split::Frame(f) => {
            assert_eq!(
                &f.payload[..4],
                &[0, 10, 0, 50],
                "not Connection.Close: {out:?}"
            );
            let code = u16::from_be_bytes([f.payload[4], f.payload[5]]);
            let tl = f.payload[6] as usize;
            let at = 7 + tl;
            let class = u16::from_be_bytes([f.payload[at], f.payload[at + 1]]);
            let method = u16::from_be_bytes([f.payload[at + 2], f.payload[at + 3]]);
            (code, class, method)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_method_closes_with_540() {
    let (_, mut b) = opened_broker();
    b.feed(&[1, 0, 1, 0, 0, 0, 4, 0, 60, 0, 99, 0xCE]);
    assert!(b.closed);
    assert_eq!(close_code(&b.out), (540, 60, 99));
    assert_eq!(b.figures.faults, 1);
}

#[test]
fn broken_input_gets_the_right_reply_code() {
    let cases: [(&[u8], u16); 6] = [
        // Frame end octet wrong.
        (&[8, 0, 0, 0, 0, 0, 0, 0xCD], 501),
        // Unknown frame type.
        (&[7, 0, 0, 0, 0, 0, 0, 0xCE], 501),
        // Content header with no Basic.Publish before it.
        (
            &[
                2, 0, 1, 0, 0, 0, 14, 0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0xCE,
            ],
            505,
        ),
        // A method on channel 5, never opened.
        (&[1, 0, 5, 0, 0, 0, 5, 0, 85, 0, 10, 0, 0xCE], 504),
        // Channel.Open with junk after its argument.
        (&[1, 0, 2, 0, 0, 0, 6, 0, 20, 0, 10, 0, 9, 0xCE], 502),
        // Connection.Open again, once open.
        (
            &[1, 0, 0, 0, 0, 0, 8, 0, 10, 0, 40, 1, b'/', 0, 0, 0xCE],
            503,
        ),
    ];
    for (bytes, code) in cases {
        let (_, mut b) = opened_broker();
        b.feed(bytes);
        assert!(b.closed, "{bytes:?}");
        assert_eq!(close_code(&b.out).0, code, "{bytes:?}");
    }
}

#[test]
fn wrong_protocol_header_gets_the_spec_header_and_a_close() {
    for header in [
        &b"AMQP\x00\x00\x09\x00"[..],
        b"GET / HTTP/1.1\r\n",
        b"AMQP\x01\x01\x00\x0a",
    ] {
        let f = AmqpHandlerFactory::new(BrokerConfig::default());
        let mut b = Feeder::new(&f);
        b.feed(header);
        assert!(b.closed);
        assert_eq!(b.out, PROTOCOL_HEADER);
    }
    // A right header in pieces is just waited for.
    let f = AmqpHandlerFactory::new(BrokerConfig::default());
    let mut b = Feeder::new(&f);
    b.feed(b"AMQ");
    assert!(!b.closed && b.out.is_empty());
    b.feed(b"P\x00\x00\x09\x01");
    assert_eq!(b.out[..3], [1, 0, 0]);
}

#[test]
fn heartbeats_are_answered_and_bad_ones_refused() {
    let (_, mut b) = opened_broker();
    b.feed(&[8, 0, 0, 0, 0, 0, 0, 0xCE]);
    assert!(!b.closed);
    assert_eq!(b.out, [8, 0, 0, 0, 0, 0, 0, 0xCE]);
    let (_, mut b) = opened_broker();
    b.feed(&[8, 0, 1, 0, 0, 0, 0, 0xCE]);
    assert!(b.closed);
    assert_eq!(close_code(&b.out).0, 501);
}
