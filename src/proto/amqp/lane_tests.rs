//! Confirms of several channels interleaved, decoded by the publisher and settled by
//! the engine's own settle: each confirm takes its channel's publishes, so latency and
//! nacks are charged to the messages they confirm, not to the oldest on the connection.

use super::client::{AmqpClient, ClientOptions};
use super::client_figures::ClientFigures;
use super::codec::write_method;
use crate::engine::busy::Busy;
use crate::engine::session::{ClientSession, Decode, InFlight, Lane, Verdict};
use crate::engine::settle::{holds, settle};
use crate::engine::tally::Tally;
use crate::stats::{ErrorKind, WorkerStats};
use amq_protocol::protocol::{basic, AMQPClass};

fn client(channels: u16) -> AmqpClient {
    AmqpClient::new(ClientOptions {
        user: "guest".into(),
        password: "guest".into(),
        vhost: "/".into(),
        channels,
        confirm: true,
        exchange: String::new(),
        routing_key: "rk".into(),
        size: 10,
        declare_queue: None,
        per_connection: None,
    })
}

fn ack(out: &mut Vec<u8>, ch: u16, tag: u64, multiple: bool) {
    let m = basic::Ack {
        delivery_tag: tag,
        multiple,
    };
    write_method(out, ch, AMQPClass::Basic(basic::AMQPMethod::Ack(m)));
}

fn nack(out: &mut Vec<u8>, ch: u16, tag: u64) {
    let m = basic::Nack {
        delivery_tag: tag,
        multiple: false,
        requeue: false,
    };
    write_method(out, ch, AMQPClass::Basic(basic::AMQPMethod::Nack(m)));
}

/// Publishes `sent.len()` messages as the engine does (encode, then an entry on the
/// lane the session names), message k sent at `sent[k].0`, measured as `sent[k].1`.
fn publish(c: &mut AmqpClient, sent: &[(u64, bool)]) -> Busy {
    let mut b = Busy::default();
    let mut wire = Vec::new();
    for (seq, &(at, measured)) in sent.iter().enumerate() {
        let seq = seq as u64;
        let tag = c.encode(seq, at, &mut wire);
        b.inflight.push_back(InFlight {
            seq,
            intended_ns: at,
            sent_ns: at,
            tag,
            lane: c.lane_of(seq),
            measured,
            on_write: false,
        });
    }
    b
}

/// Decodes one confirm from `input` with the oldest entry in flight, as the engine
/// asks, and settles it at `now`. Returns the bytes used and what it settled.
fn confirm(
    c: &mut AmqpClient,
    b: &mut Busy,
    input: &[u8],
    now: u64,
    stats: &mut WorkerStats,
    figures: &mut ClientFigures,
) -> (usize, u32, Lane, Verdict) {
    let oldest = b.inflight.front().copied();
    let d = c.decode(input, oldest.as_ref(), &mut Vec::new(), figures);
    let Decode::Reply {
        used,
        settles,
        lane,
        verdict,
        close: false,
    } = d
    else {
        panic!("not a confirm: {d:?}");
    };
    assert!(holds(b, lane, settles), "{settles} on {lane:?}");
    let (mut tally, mut answered) = (Tally::default(), 0);
    settle(
        b,
        lane,
        settles,
        verdict,
        now,
        stats,
        &mut tally,
        &mut answered,
    );
    tally.commit(stats);
    assert_eq!(answered, settles as u64);
    (used, settles, lane, verdict)
}

fn seqs(b: &Busy) -> Vec<u64> {
    b.inflight.iter().map(|r| r.seq).collect()
}

/// Measured latencies recorded, as (ns, count), lowest first.
fn latencies(stats: &WorkerStats) -> Vec<(u64, u64)> {
    let h = stats.interval.inner();
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

#[test]
fn publishes_go_round_robin_on_their_channels_lanes() {
    let mut c = client(3);
    let b = publish(&mut c, &[(0, true); 7]);
    let lanes: Vec<u16> = b.inflight.iter().map(|r| r.lane.0).collect();
    assert_eq!(lanes, [1, 2, 3, 1, 2, 3, 1]);
}

#[test]
fn interleaved_channel_confirms_settle_their_own_publishes() {
    let mut c = client(2);
    // seq 0: ch1 tag 1, seq 1: ch2 tag 1, seq 2: ch1 tag 2 (in the warm-up), seq 3: ch2
    // tag 2; sent at 100, 200, 300, 400.
    let mut b = publish(
        &mut c,
        &[(100, true), (200, true), (300, false), (400, true)],
    );
    let mut input = Vec::new();
    ack(&mut input, 2, 2, true);
    let first = input.len();
    ack(&mut input, 1, 1, false);
    nack(&mut input, 1, 2);
    let (mut stats, mut figures) = (WorkerStats::new(false), ClientFigures::default());

    // Channel 2's multiple ack of tag 2: seqs 1 and 3, at 1000.
    let (used, n, lane, verdict) = confirm(&mut c, &mut b, &input, 1_000, &mut stats, &mut figures);
    assert_eq!((used, n, lane, verdict), (first, 2, Lane(2), Verdict::Ok));
    assert_eq!(seqs(&b), [0, 2]);
    assert_eq!(latencies(&stats), [(600, 1), (800, 1)]);

    // Channel 1's ack of tag 1: seq 0, at 2000.
    let rest = &input[used..];
    let (used, n, lane, verdict) = confirm(&mut c, &mut b, rest, 2_000, &mut stats, &mut figures);
    assert_eq!((n, lane, verdict), (1, Lane(1), Verdict::Ok));
    assert_eq!(seqs(&b), [2]);
    assert_eq!(latencies(&stats), [(600, 1), (800, 1), (1_900, 1)]);

    // Channel 1's nack of tag 2: seq 2, the warm-up's, not a measured one.
    let rest = &rest[used..];
    let (used, n, lane, verdict) = confirm(&mut c, &mut b, rest, 3_000, &mut stats, &mut figures);
    let nacked = Verdict::Error(ErrorKind::Nack);
    assert_eq!((used, n, lane, verdict), (rest.len(), 1, Lane(1), nacked));
    assert!(b.inflight.is_empty());
    assert_eq!(stats.warmup.errors_of(ErrorKind::Nack), 1);
    assert_eq!(stats.measured.errors_of(ErrorKind::Nack), 0);
    assert_eq!((stats.measured.ok, stats.warmup.ok), (3, 0));
    assert_eq!(latencies(&stats).len(), 3, "no latency for a nack");
    assert_eq!(figures.nacked, 1);
}

#[test]
fn a_channels_multiple_ack_leaves_the_other_channels_publishes_in_flight() {
    let mut c = client(3);
    // Seven publishes: ch1 gets seqs 0, 3, 6; ch2 1, 4; ch3 2, 5.
    let sent: Vec<(u64, bool)> = (0..7).map(|k| (100 * (k + 1), true)).collect();
    let mut b = publish(&mut c, &sent);
    let mut input = Vec::new();
    ack(&mut input, 3, 2, true);
    let (mut stats, mut figures) = (WorkerStats::new(false), ClientFigures::default());
    let (_, n, lane, _) = confirm(&mut c, &mut b, &input, 1_000, &mut stats, &mut figures);
    assert_eq!((n, lane), (2, Lane(3)));
    assert_eq!(seqs(&b), [0, 1, 3, 4, 6]);
    // seq 2 sent at 300, seq 5 at 600.
    assert_eq!(latencies(&stats), [(400, 1), (700, 1)]);
}
