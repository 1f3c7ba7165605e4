//! One worker process's connections, driven by a raw epoll loop (a plain TCP socket is
//! registered once, edge-triggered; a TLS one level-triggered while it handshakes): a
//! held connection costs a 24-byte slot here and its kernel socket, nothing else (no
//! task, no buffer: replies are read into one shared buffer). The parent's commands
//! arrive on stdin (fd 0, watched by the same epoll); counters go out as JSON lines.

use super::messages::{io_kind, Counts, WorkerMsg, WorkerSpec, CMD_GO, CMD_PING, CMD_STOP};
use super::tls::{self, ClientTls, Input};
use crate::clock::monotonic_ns;
use crate::error::{Error, Result};
use crate::net::epoll::Epoll;
use crate::net::socket::{self, errno_name};
use crate::procs::workers::emit;
use crate::proto::echo::codec::{self, Check, Expected};
use crate::stats::Latency;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};

/// Payload bytes of a ping or churn echo frame (28-byte header besides).
pub const PING_PAYLOAD: usize = 16;
const STDIN_TOKEN: u64 = u64::MAX;
const PROGRESS_NS: u64 = 100_000_000;
const MAX_EVENTS: usize = 1024;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum St {
    Free,
    Connecting,
    /// TCP is up; the TLS handshake is under way.
    Handshaking,
    /// Established and idle.
    Held,
    /// An echo frame is out; its reply is awaited.
    Waiting,
}

#[derive(Clone, Copy)]
struct Slot {
    fd: i32,
    /// Bumped whenever the slot's descriptor closes, so stale events and timers are ignored.
    gen: u32,
    state: St,
    /// The sequence number of the frame in flight.
    seq: u32,
    /// Connect start, or the intended send time of the frame in flight (ns).
    t_ns: u64,
}

const FREE: Slot = Slot {
    fd: -1,
    gen: 0,
    state: St::Free,
    seq: 0,
    t_ns: 0,
};

fn token(slot: u32, gen: u32) -> u64 {
    u64::from(slot) | (u64::from(gen) << 32)
}

fn bump(map: &mut std::collections::BTreeMap<String, u64>, key: &str) {
    *map.entry(key.to_string()).or_default() += 1;
}

struct Commands {
    go: bool,
    ping: bool,
    stop: bool,
    partial: Vec<u8>,
}

pub struct Worker {
    spec: WorkerSpec,
    ep: Epoll,
    slots: Vec<Slot>,
    c: Counts,
    connect_hist: Latency,
    echo_hist: Latency,
    /// Connects in flight, oldest first: (slot, gen, started).
    connecting: VecDeque<(u32, u32, u64)>,
    in_connect: usize,
    /// Frames in flight, oldest first: (slot, gen, seq, intended send time).
    waiting: VecDeque<(u32, u32, u32, u64)>,
    /// Partial replies, by slot (rare: a 44-byte frame nearly always arrives whole).
    carry: HashMap<u32, Vec<u8>>,
    buf: Vec<u8>,
    events: Vec<libc::epoll_event>,
    frame: Vec<u8>,
    pattern: Vec<u8>,
    cmd: Commands,
    /// Connections (or cycles) started so far.
    started: u64,
    t0: u64,
    next_progress: u64,
    timeout_ns: u64,
    /// Churn: slots free for the next cycle.
    free: Vec<u32>,
    ping_start: u64,
    ping_cursor: u64,
    tls: Option<ClientTls>,
    /// TLS sessions by slot (only with --tls).
    sessions: HashMap<u32, Box<rustls::ClientConnection>>,
}

impl Worker {
    pub fn new(spec: WorkerSpec) -> Result<Worker> {
        if spec.dests.is_empty() {
            return Err(Error::runtime("a connect worker got no destination"));
        }
        let ep = Epoll::new().map_err(|e| Error::runtime(format!("epoll_create1: {e}")))?;
        ep.add(0, libc::EPOLLIN as u32, STDIN_TOKEN)
            .map_err(|e| Error::runtime(format!("cannot watch stdin: {}", errno_name(e))))?;
        let tls = spec
            .tls
            .as_ref()
            .map(|t| ClientTls::new(t, &spec.server_name))
            .transpose()?;
        let slots = if spec.churn {
            spec.concurrency.max(1)
        } else {
            spec.count as usize
        };
        Ok(Worker {
            ep,
            slots: vec![FREE; slots],
            c: Counts::default(),
            connect_hist: Latency::new(),
            echo_hist: Latency::new(),
            connecting: VecDeque::new(),
            in_connect: 0,
            waiting: VecDeque::new(),
            carry: HashMap::new(),
            buf: vec![0; 64 * 1024],
            events: vec![libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS],
            frame: Vec::with_capacity(64),
            pattern: codec::pattern(PING_PAYLOAD),
            cmd: Commands {
                go: false,
                ping: false,
                stop: false,
                partial: Vec::new(),
            },
            started: 0,
            t0: 0,
            next_progress: 0,
            timeout_ns: spec.timeout_ms.saturating_mul(1_000_000),
            free: (0..slots as u32).rev().collect(),
            ping_start: 0,
            ping_cursor: 0,
            tls,
            sessions: HashMap::new(),
            spec,
        })
    }

    /// The whole life of a worker: ready, wait for go, connect (and hold, or churn), report.
    pub fn run(mut self) -> Result<()> {
        emit(&WorkerMsg::Ready);
        while !self.cmd.go && !self.cmd.stop {
            self.turn(100_000_000);
        }
        if self.cmd.stop {
            return Ok(());
        }
        self.t0 = monotonic_ns();
        self.next_progress = self.t0 + PROGRESS_NS;
        if self.spec.churn {
            self.churn();
            emit(&WorkerMsg::Connected { c: self.counts() });
        } else {
            self.connect_all();
            emit(&WorkerMsg::Connected { c: self.counts() });
            self.hold();
        }
        let rss = crate::sys::proc_fs::rss_bytes(std::process::id()).unwrap_or(0);
        emit(&WorkerMsg::Final {
            c: self.counts(),
            connect_hist: self.connect_hist.encode(),
            echo_hist: self.echo_hist.encode(),
            cpu_s: process_cpu_s(),
            rss_bytes: rss,
        });
        Ok(())
    }

    fn counts(&self) -> Counts {
        self.c.clone()
    }

    // ------------------------------------------------------------------ phases

    fn connect_all(&mut self) {
        let total = self.spec.count;
        while !self.cmd.stop && (self.started < total || self.in_connect > 0) {
            let now = monotonic_ns();
            while self.started < total
                && self.in_connect < self.spec.concurrency
                && self.may_start(now)
                && self.ramp_allows(now, self.started)
            {
                let slot = self.started as u32;
                let global = self.spec.first + self.started;
                self.started += 1;
                self.open(slot, global);
            }
            let wait = self.wait_ns(now, self.started < total);
            self.turn(wait);
        }
        // Stopped early: what is still connecting will not be waited for.
        let pending: Vec<(u32, u32, u64)> = self.connecting.drain(..).collect();
        for (slot, gen, _) in pending {
            if self.connecting_now(slot, gen) {
                bump(&mut self.c.failures, "interrupted");
                self.close(slot);
            }
        }
    }

    fn hold(&mut self) {
        while !self.cmd.stop {
            let now = monotonic_ns();
            if self.cmd.ping {
                if self.ping_start == 0 {
                    self.ping_start = now;
                }
                self.send_due_pings(now);
            }
            let wait = self.wait_ns(now, false);
            self.turn(wait);
        }
        // Let the pings in flight come back (or time out).
        while !self.waiting.is_empty() {
            let wait = self.wait_ns(monotonic_ns(), false);
            self.turn(wait);
        }
    }

    fn churn(&mut self) {
        let end = self
            .spec
            .duration_ms
            .map(|d| self.t0 + d.saturating_mul(1_000_000));
        loop {
            let now = monotonic_ns();
            let more = !self.cmd.stop
                && match end {
                    Some(e) => now < e,
                    None => self.started < self.spec.count,
                };
            if !more && self.free.len() == self.slots.len() {
                break;
            }
            while more
                && self.may_start(now)
                && self.ramp_allows(now, (self.slots.len() - self.free.len()) as u64)
            {
                let Some(slot) = self.free.pop() else { break };
                let global = self.spec.first + self.started;
                self.started += 1;
                self.open(slot, global);
                if end.is_none() && self.started >= self.spec.count {
                    break;
                }
            }
            let wait = self.wait_ns(now, more);
            self.turn(wait);
        }
    }

    // ------------------------------------------------------------------ pacing

    fn may_start(&self, now: u64) -> bool {
        if self.spec.rate <= 0.0 {
            return true;
        }
        let allowed = ((now - self.t0) as f64 / 1e9 * self.spec.rate) as u64 + 1;
        self.started < allowed
    }

    /// This worker's units under the ramp: its connections (hold) or its slots (churn).
    fn ramp_units_here(&self) -> u64 {
        if self.spec.churn {
            self.slots.len() as u64
        } else {
            self.spec.count
        }
    }

    /// `--ramp`: whether unit `n` of this worker (the n+1-th connection, or with churn
    /// the n+1-th slot in use at once) may start by `now`.
    fn ramp_allows(&self, now: u64, n: u64) -> bool {
        self.spec.ramp.map_or(true, |r| {
            n < r.started_by(
                now.saturating_sub(self.t0),
                self.spec.index as u64,
                self.spec.ramp_stride,
                self.ramp_units_here(),
                self.spec.ramp_units,
            )
        })
    }

    /// `--ramp`: when unit `n` of this worker starts (rounded up, so that it may start then).
    fn ramp_start(&self, n: u64) -> Option<u64> {
        let r = self.spec.ramp?;
        if n >= self.ramp_units_here() {
            return None;
        }
        let g = u128::from(n) * u128::from(self.spec.ramp_stride.max(1)) + self.spec.index as u128;
        let at = (r.over.as_nanos() * g).div_ceil(u128::from(self.spec.ramp_units.max(1)));
        Some(self.t0.saturating_add(at.min(u128::from(u64::MAX)) as u64))
    }

    /// How long epoll may sleep: until the next progress report, connect token, ramp
    /// start, ping or timeout.
    fn wait_ns(&self, now: u64, starting: bool) -> u64 {
        let mut next = self.next_progress;
        if starting && self.spec.rate > 0.0 {
            let at = self.t0 + ((self.started as f64) / self.spec.rate * 1e9) as u64;
            next = next.min(at);
        }
        if starting {
            let n = match self.spec.churn {
                true => (self.slots.len() - self.free.len()) as u64,
                false => self.started,
            };
            // A start already due waits for something else (a free slot, an attempt
            // in flight, the rate): no wake-up for it, or the loop would spin.
            if let Some(at) = self.ramp_start(n).filter(|at| *at > now) {
                next = next.min(at);
            }
        }
        // Once stopped no ping is sent, so the next ping's time soon lies in the past:
        // counting it would make every wait zero and spin until the last reply times out.
        if self.cmd.ping && !self.cmd.stop && self.ping_start > 0 {
            if let Some(iv) = self.spec.ping_interval_ms {
                let m = self.slots.len().max(1) as u128;
                let at = self.ping_start as u128
                    + self.ping_cursor as u128 * u128::from(iv) * 1_000_000 / m;
                next = next.min(at.min(u128::from(u64::MAX)) as u64);
            }
        }
        if let Some(&(_, _, t)) = self.connecting.front() {
            next = next.min(t + self.timeout_ns);
        }
        if let Some(&(_, _, _, t)) = self.waiting.front() {
            next = next.min(t + self.timeout_ns);
        }
        next.saturating_sub(now).min(100_000_000)
    }

    // ------------------------------------------------------------------ the loop

    /// One epoll round: handle events, expire timers, report progress.
    fn turn(&mut self, wait_ns: u64) {
        // The event array lives in the worker: not 12 KiB zeroed on every turn.
        let mut events = std::mem::take(&mut self.events);
        let n = self.ep.wait(&mut events, wait_ns);
        for ev in &events[..n] {
            let (bits, data) = (ev.events, ev.u64);
            if data == STDIN_TOKEN {
                self.read_commands();
                continue;
            }
            let (slot, gen) = (data as u32, (data >> 32) as u32);
            if (slot as usize) < self.slots.len() && self.slots[slot as usize].gen == gen {
                self.on_event(slot, bits);
            }
        }
        self.events = events;
        let now = monotonic_ns();
        self.expire(now);
        if now >= self.next_progress {
            emit(&WorkerMsg::Progress { c: self.counts() });
            self.next_progress = now + PROGRESS_NS;
        }
    }

    fn read_commands(&mut self) {
        let mut b = [0u8; 256];
        match socket::read(0, &mut b) {
            Ok(0) | Err(_) => {
                // The parent closed our stdin, or is gone: stop.
                self.cmd.stop = true;
                let _ = self.ep.modify(0, 0, STDIN_TOKEN);
            }
            Ok(n) => {
                self.cmd.partial.extend_from_slice(&b[..n]);
                while let Some(pos) = self.cmd.partial.iter().position(|c| *c == b'\n') {
                    let line: Vec<u8> = self.cmd.partial.drain(..=pos).collect();
                    match std::str::from_utf8(&line).unwrap_or("").trim() {
                        CMD_GO => self.cmd.go = true,
                        CMD_PING => self.cmd.ping = self.spec.ping_interval_ms.is_some(),
                        CMD_STOP => self.cmd.stop = true,
                        _ => {}
                    }
                }
            }
        }
    }

    /// Still coming up: TCP connect or TLS handshake.
    fn connecting_now(&self, slot: u32, gen: u32) -> bool {
        self.is(slot, gen, St::Connecting) || self.is(slot, gen, St::Handshaking)
    }

    fn is(&self, slot: u32, gen: u32, st: St) -> bool {
        let s = &self.slots[slot as usize];
        s.gen == gen && s.state == st
    }

    fn pick(&self, global: u64) -> (SocketAddr, Option<IpAddr>) {
        let d = self.spec.dests.len() as u64;
        let dest = self.spec.dests[(global % d) as usize];
        let source = (!self.spec.sources.is_empty())
            .then(|| self.spec.sources[((global / d) % self.spec.sources.len() as u64) as usize]);
        (dest, source)
    }

    fn open(&mut self, slot: u32, global: u64) {
        let (dest, source) = self.pick(global);
        // Each attempt's own start: a batch of connect() calls takes a while.
        let now = monotonic_ns();
        self.c.attempts += 1;
        match socket::start_connect(dest, source, true) {
            Err(e) => {
                bump(&mut self.c.failures, &errno_name(e));
                self.release(slot);
            }
            Ok((fd, connected)) => {
                let s = &mut self.slots[slot as usize];
                s.fd = fd;
                s.state = St::Connecting;
                s.t_ns = now;
                let gen = s.gen;
                // Plain TCP registers once, edge-triggered, for everything it will want
                // (the connect's completion, then input): no epoll_ctl when it comes up,
                // one system call less per connection. A TLS handshake switches interest
                // as it goes, so it stays level-triggered.
                let interest = match self.tls {
                    None => {
                        (libc::EPOLLOUT | libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET) as u32
                    }
                    Some(_) => libc::EPOLLOUT as u32,
                };
                if let Err(e) = self.ep.add(fd, interest, token(slot, gen)) {
                    bump(&mut self.c.failures, &errno_name(e));
                    self.close(slot);
                    return;
                }
                self.in_connect += 1;
                if connected {
                    self.tcp_up(slot, now);
                } else {
                    self.connecting.push_back((slot, gen, now));
                }
            }
        }
    }

    /// Churn: the slot takes the next cycle; hold: it stays empty.
    fn release(&mut self, slot: u32) {
        if self.spec.churn {
            self.free.push(slot);
        }
    }

    /// Closes the slot's connection (if any) and frees the slot.
    fn close(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        match s.state {
            St::Free => return,
            St::Connecting | St::Handshaking => self.in_connect -= 1,
            St::Held | St::Waiting => self.c.open -= 1,
        }
        if !self.sessions.is_empty() {
            self.sessions.remove(&slot);
        }
        socket::close(s.fd);
        s.fd = -1;
        s.state = St::Free;
        s.gen = s.gen.wrapping_add(1);
        if !self.carry.is_empty() {
            self.carry.remove(&slot);
        }
        self.release(slot);
    }

    fn on_event(&mut self, slot: u32, bits: u32) {
        let gen = self.slots[slot as usize].gen;
        let was_connecting = self.slots[slot as usize].state == St::Connecting;
        match self.slots[slot as usize].state {
            St::Connecting => {
                // Writable with no error or hangup flagged: connected, no need to ask
                // the socket (one system call less per connection, a million times).
                let failed = (libc::EPOLLERR | libc::EPOLLHUP) as u32;
                if bits & libc::EPOLLOUT as u32 != 0 && bits & failed == 0 {
                    self.tcp_up(slot, monotonic_ns());
                } else {
                    let fd = self.slots[slot as usize].fd;
                    match socket::take_error(fd) {
                        0 if bits & libc::EPOLLOUT as u32 != 0 => self.tcp_up(slot, monotonic_ns()),
                        0 => {}
                        e => {
                            bump(&mut self.c.failures, &errno_name(e));
                            self.close(slot);
                        }
                    }
                }
            }
            St::Handshaking => self.advance_handshake(slot),
            St::Held => self.on_idle_readable(slot),
            St::Waiting => self.on_reply(slot),
            St::Free => {}
        }
        // Edge-triggered (plain TCP): what this event reported but the handling above
        // did not read (input that came with the connect's completion, a hangup after
        // the bytes of a reply) is reported no more, so it is read now, as a
        // level-triggered registration would have reported it again.
        if self.tls.is_some() {
            return;
        }
        let hangup = (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
        let unread = bits & hangup != 0 || (was_connecting && bits & libc::EPOLLIN as u32 != 0);
        if unread && self.is(slot, gen, St::Held) {
            self.on_idle_readable(slot);
        } else if bits & hangup != 0 && self.is(slot, gen, St::Waiting) {
            self.on_reply(slot);
        }
    }

    /// TCP is connected: established now, or after a TLS handshake.
    fn tcp_up(&mut self, slot: u32, now: u64) {
        let Some(t) = &self.tls else {
            return self.established(slot, now);
        };
        match t.session() {
            Ok(sess) => {
                self.sessions.insert(slot, sess);
                self.slots[slot as usize].state = St::Handshaking;
                self.advance_handshake(slot);
            }
            Err(k) => {
                bump(&mut self.c.failures, k);
                self.close(slot);
            }
        }
    }

    fn advance_handshake(&mut self, slot: u32) {
        let Slot { fd, gen, .. } = self.slots[slot as usize];
        let Some(sess) = self.sessions.get_mut(&slot) else {
            return;
        };
        match tls::handshake(sess, fd) {
            Ok(true) => self.established(slot, monotonic_ns()),
            Ok(false) => {
                let mut ev = libc::EPOLLIN as u32;
                if sess.wants_write() {
                    ev |= libc::EPOLLOUT as u32;
                }
                if let Err(e) = self.ep.modify(fd, ev, token(slot, gen)) {
                    bump(&mut self.c.failures, &errno_name(e));
                    self.close(slot);
                }
            }
            Err(k) => {
                let name = if k == "tls" {
                    "TLS".to_string()
                } else {
                    format!("TLS {k}")
                };
                bump(&mut self.c.failures, &name);
                self.close(slot);
            }
        }
    }

    /// One read of a connection, through TLS when it has a session.
    fn input(&mut self, slot: u32) -> Input {
        let fd = self.slots[slot as usize].fd;
        if let Some(sess) = self.sessions.get_mut(&slot) {
            return tls::read(sess, fd, &mut self.buf);
        }
        match socket::read(fd, &mut self.buf) {
            Ok(0) => Input::Eof,
            Ok(n) => Input::Data(n),
            Err(libc::EAGAIN) => Input::Nothing,
            Err(e) => Input::Failed(io_kind(e)),
        }
    }

    fn established(&mut self, slot: u32, now: u64) {
        let s = &mut self.slots[slot as usize];
        let (fd, gen, started) = (s.fd, s.gen, s.t_ns);
        s.state = St::Held;
        self.in_connect -= 1;
        self.c.established += 1;
        self.c.open += 1;
        self.connect_hist.record(now.saturating_sub(started));
        // From now on only input matters: a reply, or the peer closing or resetting
        // (plain TCP registered for it at the start, edge-triggered).
        if self.tls.is_some() {
            if let Err(e) = self.ep.modify(
                fd,
                (libc::EPOLLIN | libc::EPOLLRDHUP) as u32,
                token(slot, gen),
            ) {
                bump(&mut self.c.lost, &errno_name(e));
                self.close(slot);
                return;
            }
        }
        if self.spec.churn {
            self.send(slot, 0, now);
        }
    }

    /// Input on a connection with nothing in flight: the peer closed, reset, or spoke unasked.
    fn on_idle_readable(&mut self, slot: u32) {
        let why = match self.input(slot) {
            Input::Eof => "closed",
            Input::Data(_) => "unsolicited",
            Input::Nothing => return,
            Input::Failed(k) => k,
        };
        bump(&mut self.c.lost, why);
        self.close(slot);
    }

    fn send(&mut self, slot: u32, seq: u32, intended: u64) {
        let s = self.slots[slot as usize];
        let id = self.spec.id_base | ((self.spec.index as u64) << 32) | u64::from(slot);
        self.frame.clear();
        codec::encode(
            &mut self.frame,
            id,
            u64::from(seq),
            intended,
            PING_PAYLOAD,
            &self.pattern,
        );
        self.c.sent += 1;
        let wrote = match self.sessions.get_mut(&slot) {
            Some(sess) => match tls::write(sess, s.fd, &self.frame) {
                Ok(true) => Ok(self.frame.len()),
                Ok(false) => Ok(0),
                Err(k) => return self.echo_failed(slot, k),
            },
            None => socket::write(s.fd, &self.frame),
        };
        match wrote {
            Ok(n) if n == self.frame.len() => {
                self.c.bytes_sent += n as u64;
                let s = &mut self.slots[slot as usize];
                s.state = St::Waiting;
                s.seq = seq;
                s.t_ns = intended;
                self.c.in_flight += 1;
                self.waiting.push_back((slot, s.gen, seq, intended));
            }
            // A 44-byte write to an idle socket goes out whole or not at all.
            Ok(_) | Err(libc::EAGAIN) => self.echo_failed(slot, "io"),
            Err(e) => self.echo_failed(slot, io_kind(e)),
        }
    }

    fn echo_failed(&mut self, slot: u32, kind: &str) {
        // A frame that failed while awaited leaves flight; one whose write failed never entered.
        if self.slots[slot as usize].state == St::Waiting {
            self.c.in_flight = self.c.in_flight.saturating_sub(1);
        }
        bump(&mut self.c.errors, kind);
        if !self.spec.churn {
            bump(&mut self.c.lost, kind);
        }
        self.close(slot);
    }

    fn on_reply(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        let n = match self.input(slot) {
            Input::Eof => return self.echo_failed(slot, "closed"),
            Input::Data(n) => n,
            Input::Nothing => return,
            Input::Failed(k) => return self.echo_failed(slot, k),
        };
        self.c.bytes_received += n as u64;
        let id = self.spec.id_base | ((self.spec.index as u64) << 32) | u64::from(slot);
        let exp = Expected {
            conn_id: id,
            seq: u64::from(s.seq),
            sent_ns: s.t_ns,
            payload_len: PING_PAYLOAD,
        };
        let mut carried = self.carry.remove(&slot);
        let input: &[u8] = match &mut carried {
            Some(c) => {
                c.extend_from_slice(&self.buf[..n]);
                c
            }
            None => &self.buf[..n],
        };
        match codec::check(input, &exp, &self.pattern) {
            Check::Incomplete => {
                let keep = input.to_vec();
                self.carry.insert(slot, keep);
            }
            Check::Match { len } => {
                let extra = len < input.len();
                self.c.ok += 1;
                self.c.in_flight = self.c.in_flight.saturating_sub(1);
                self.echo_hist.record(monotonic_ns().saturating_sub(s.t_ns));
                if extra {
                    bump(&mut self.c.lost, "unsolicited");
                    self.close(slot);
                } else if self.spec.churn {
                    self.c.cycles_ok += 1;
                    self.close(slot);
                } else {
                    self.slots[slot as usize].state = St::Held;
                }
            }
            Check::Mismatch { .. } | Check::BadLength => self.echo_failed(slot, "mismatch"),
            Check::TooLarge => self.echo_failed(slot, "too_large"),
        }
    }

    /// Sends the pings whose turn has come: each connection once per interval, spread evenly.
    fn send_due_pings(&mut self, now: u64) {
        let Some(iv) = self.spec.ping_interval_ms else {
            return;
        };
        let m = self.slots.len() as u128;
        if m == 0 {
            return;
        }
        let iv_ns = u128::from(iv) * 1_000_000;
        // Ping k is due at ping_start + k * interval / connections (k = 0 at once).
        let due = (u128::from(now - self.ping_start) * m / iv_ns) as u64 + 1;
        while self.ping_cursor < due {
            let k = self.ping_cursor;
            self.ping_cursor += 1;
            let slot = (k % m as u64) as u32;
            let round = (k / m as u64) as u32;
            let intended = self.ping_start + (u128::from(k) * iv_ns / m) as u64;
            match self.slots[slot as usize].state {
                St::Held => self.send(slot, round, intended),
                St::Waiting => self.c.skipped += 1,
                _ => {}
            }
        }
    }

    /// Connects and replies older than the timeout fail.
    fn expire(&mut self, now: u64) {
        while let Some(&(slot, gen, t)) = self.connecting.front() {
            if !self.connecting_now(slot, gen) {
                self.connecting.pop_front();
                continue;
            }
            if now.saturating_sub(t) < self.timeout_ns {
                break;
            }
            self.connecting.pop_front();
            bump(&mut self.c.failures, "ETIMEDOUT");
            self.close(slot);
        }
        while let Some(&(slot, gen, seq, t)) = self.waiting.front() {
            let s = self.slots[slot as usize];
            if !(s.gen == gen && s.state == St::Waiting && s.seq == seq) {
                self.waiting.pop_front();
                continue;
            }
            if now.saturating_sub(t) < self.timeout_ns {
                break;
            }
            self.waiting.pop_front();
            self.echo_failed(slot, "timeout");
        }
    }
}

fn process_cpu_s() -> f64 {
    crate::sys::process_cpu_time().as_secs_f64()
}
