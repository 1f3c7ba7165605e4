//! One client connection driven by hand-written polling: in one poll it sends what the
//! plan allows, writes, reads, decodes every complete reply and records it, and arms a
//! single timer for whichever comes first (reply timeout, next scheduled send, end of run).
//! Reading and writing in the same poll means a large pipeline never deadlocks against a
//! server that stops reading while its replies are unread.

use super::protocol::{ClientProtocol, Decode, InFlight, Verdict};
use super::shared::Shared;
use crate::stats::ErrorKind;
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// How a connection's run ended.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum End {
    /// The plan has nothing more for it and every reply is in.
    Done,
    /// The connection must be dropped; requests still in flight end as this kind.
    Failed(ErrorKind),
    /// The protocol closes the connection after a reply (HTTP `Connection: close`): not
    /// an error; requests still in flight end as `Closed` and the slot reconnects if
    /// the plan goes on.
    Reconnect,
    /// The run's end plus the drain grace has passed with requests still unanswered:
    /// they stay `in_flight` and the connection is dropped without its goodbye.
    Cut,
}

/// Polls in a row before yielding to the other connections of the worker.
const FAIRNESS_ROUNDS: u32 = 32;
const INITIAL_READ_BUFFER: usize = 16 * 1024;
/// Most bytes one unfinished reply may hold in the read buffer. Protocols keep less
/// (HTTP: a 64 KiB head, bodies are consumed as they arrive; echo: 16 MiB payloads);
/// this catches any protocol that does not, as the error kind `too_large`.
pub const MAX_READ_BUFFER: usize = 64 << 20;

pub struct Conn<P> {
    proto: P,
    seq: u64,
    /// Replies received on the current connection.
    answered: u64,
    inflight: VecDeque<InFlight>,
    /// Settles-on-write requests already written (warm-up, measured): not counted yet,
    /// as nothing says the peer read them until the connection closes cleanly.
    written: [u64; 2],
    out: Vec<u8>,
    wpos: usize,
    /// Written into a buffering layer (TLS) whose flush has not finished: retried on
    /// every poll, or its bytes would never leave.
    flushing: bool,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    /// Bytes of the oldest reply already consumed (`Decode::Consumed`), counted with it.
    consumed: u64,
    /// Batch plans: requests this connection may still send in this iteration.
    pub local_budget: Option<u64>,
    /// Churn: `local_budget` was already taken from the plan's budget when the
    /// connection opened, so sends draw on it alone.
    pub prepaid: bool,
    /// Open loop: nanoseconds between this connection's scheduled sends, and the next one.
    interval_ns: u64,
    next_intended: u64,
    sleep: Pin<Box<Sleep>>,
    sleep_at: u64,
    /// Open loop: the send time this connection asked the pacer to wake it for.
    paced_at: u64,
}

impl<P: ClientProtocol> Conn<P> {
    pub fn new(proto: P, pipeline: usize, schedule: Option<(u64, u64)>) -> Self {
        let (interval_ns, next_intended) = schedule.unwrap_or((0, 0));
        Conn {
            proto,
            seq: 0,
            answered: 0,
            inflight: VecDeque::with_capacity(pipeline),
            written: [0; 2],
            out: Vec::with_capacity(4096),
            wpos: 0,
            flushing: false,
            rbuf: vec![0; INITIAL_READ_BUFFER],
            rstart: 0,
            rend: 0,
            consumed: 0,
            local_budget: None,
            prepaid: false,
            interval_ns,
            next_intended,
            sleep: Box::pin(tokio::time::sleep_until(tokio::time::Instant::now())),
            sleep_at: u64::MAX,
            paced_at: u64::MAX,
        }
    }

    /// A fresh connection: new protocol state, empty buffers; the send schedule goes on.
    pub fn reset(&mut self, proto: P) {
        self.proto = proto;
        self.seq = 0;
        self.answered = 0;
        self.inflight.clear();
        self.written = [0; 2];
        self.out.clear();
        self.wpos = 0;
        self.flushing = false;
        self.rstart = 0;
        self.rend = 0;
        self.consumed = 0;
    }

    /// Replies received on the current connection.
    pub fn answered(&self) -> u64 {
        self.answered
    }

    /// The protocol state, for the connection-level exchanges around the requests.
    pub fn proto_mut(&mut self) -> &mut P {
        &mut self.proto
    }

    /// Bytes a handshake read past its end: they are the start of the replies.
    pub fn preload(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.rbuf.len() - self.rend < bytes.len() {
            self.rbuf.resize(self.rend + bytes.len(), 0);
        }
        self.rbuf[self.rend..self.rend + bytes.len()].copy_from_slice(bytes);
        self.rend += bytes.len();
    }

    /// Requests with no reply leave the pipeline once written (`settles_on_write`); they
    /// are counted when the connection ends (`settle_written_at_close`, `abandon`).
    fn settle_written(&mut self) {
        for r in self.inflight.drain(..) {
            self.written[r.measured as usize] += 1;
            self.answered += 1;
        }
    }

    /// The closing handshake completed: the peer read every written request.
    pub fn settle_written_at_close(&mut self, shared: &Shared) {
        let mut stats = shared.stats.borrow_mut();
        for (measured, count) in [(false, self.written[0]), (true, self.written[1])] {
            if count > 0 {
                stats.record_ok(measured, count, 0);
            }
        }
        self.written = [0; 2];
    }

    /// Ends every request still in flight, or written and unsettled, as `kind` (the
    /// connection is gone without a clean close).
    pub fn abandon(&mut self, kind: ErrorKind, shared: &Shared) {
        let mut stats = shared.stats.borrow_mut();
        for r in self.inflight.drain(..) {
            stats.record_error(r.measured, kind, 0);
        }
        for (measured, count) in [(false, self.written[0]), (true, self.written[1])] {
            if count > 0 {
                stats.phase(measured).error(kind, count);
            }
        }
        self.written = [0; 2];
    }

    /// Requests left unanswered when the connection task ends without a failure.
    pub fn leave_in_flight(&mut self, shared: &Shared) {
        let mut stats = shared.stats.borrow_mut();
        for r in self.inflight.drain(..) {
            stats.phase(r.measured).in_flight += 1;
        }
        for (measured, count) in [(false, self.written[0]), (true, self.written[1])] {
            stats.phase(measured).in_flight += count;
        }
        self.written = [0; 2];
    }

    /// Whether the plan lets this connection send, now, a request intended at `intended`.
    /// The measured phase ends at the deadline by the clock, whatever the schedule's
    /// backlog: an open loop that fell behind must not go on sending its arrears.
    #[inline]
    fn may_send(&self, intended: u64, now: u64, shared: &Shared) -> bool {
        if shared.stopping() || shared.deadline_ns.is_some_and(|d| intended.max(now) >= d) {
            return false;
        }
        if self.local_budget == Some(0) {
            return false;
        }
        self.prepaid
            || !(intended >= shared.measure_start_ns
                && shared.budget.as_ref().is_some_and(|b| b.get() == 0))
    }

    fn open_loop(&self) -> bool {
        self.interval_ns > 0
    }

    /// Encodes as many requests as the pipeline, the schedule and the budget allow.
    fn fill(&mut self, now: u64, shared: &Shared) {
        if self.open_loop() {
            // Before the room check: a connection whose replies are late falls behind
            // its schedule too, and that must show.
            shared.note_lag(now, self.next_intended);
        }
        let room = shared.pipeline - self.inflight.len();
        if room == 0 {
            return;
        }
        if self.open_loop() {
            self.fill_scheduled(now, shared);
            return;
        }
        // Closed loop: every request of this call is intended now, so the plan is
        // asked once for how many may go, not once per request.
        if !self.may_send(now, now, shared) {
            return;
        }
        let measured = now >= shared.measure_start_ns;
        let mut n = room as u64;
        if measured && !self.prepaid {
            if let Some(b) = shared.budget.as_ref() {
                n = n.min(b.get());
                b.set(b.get() - n);
            }
        }
        if let Some(l) = self.local_budget.as_mut() {
            n = n.min(*l);
            *l -= n;
        }
        let before = self.out.len();
        for _ in 0..n {
            let tag = self.proto.encode(self.seq, now, &mut self.out);
            self.inflight.push_back(InFlight {
                seq: self.seq,
                intended_ns: now,
                sent_ns: now,
                tag,
                measured,
            });
            self.seq += 1;
        }
        if n > 0 {
            let bytes = (self.out.len() - before) as u64;
            shared.stats.borrow_mut().record_sent(measured, n, bytes);
        }
    }

    /// Open loop: sends every request whose intended time has come.
    fn fill_scheduled(&mut self, now: u64, shared: &Shared) {
        // Counted per call, not per request: (count, bytes) for warm-up and measured.
        let mut tally = [(0u64, 0u64); 2];
        while self.inflight.len() < shared.pipeline && self.next_intended <= now {
            let intended = self.next_intended;
            if !self.may_send(intended, now, shared) {
                break;
            }
            let measured = intended >= shared.measure_start_ns;
            if let Some(l) = self.local_budget.as_mut() {
                *l -= 1;
            }
            if measured && !self.prepaid {
                if let Some(b) = shared.budget.as_ref() {
                    b.set(b.get() - 1);
                }
            }
            self.next_intended = self.next_intended.saturating_add(self.interval_ns);
            let before = self.out.len();
            let tag = self.proto.encode(self.seq, now, &mut self.out);
            self.inflight.push_back(InFlight {
                seq: self.seq,
                intended_ns: intended,
                sent_ns: now,
                tag,
                measured,
            });
            self.seq += 1;
            let t = &mut tally[measured as usize];
            t.0 += 1;
            t.1 += (self.out.len() - before) as u64;
        }
        if tally[0].0 + tally[1].0 > 0 {
            let mut stats = shared.stats.borrow_mut();
            for (measured, (count, bytes)) in [(false, tally[0]), (true, tally[1])] {
                if count > 0 {
                    stats.record_sent(measured, count, bytes);
                }
            }
        }
    }

    /// Records the reply to the oldest request: `used` bytes, judged `verdict`.
    /// Correct replies are tallied in `ok` (added once per read by the caller).
    #[inline]
    fn settle(
        &mut self,
        used: usize,
        verdict: Verdict,
        now: u64,
        stats: &mut crate::stats::WorkerStats,
        ok: &mut [(u64, u64); 2],
    ) -> Option<End> {
        let req = self.inflight.pop_front()?;
        self.rstart += used;
        self.answered += 1;
        let bytes = used as u64 + std::mem::take(&mut self.consumed);
        if let Some(class) = self.proto.reply_class() {
            if let Some(c) = stats.phase(req.measured).classes.get_mut(class) {
                *c += 1;
            }
        }
        match verdict {
            Verdict::Ok => {
                let t = &mut ok[req.measured as usize];
                t.0 += 1;
                t.1 += bytes;
                if req.measured {
                    stats.record_latency(
                        now.saturating_sub(req.intended_ns),
                        now.saturating_sub(req.sent_ns),
                    );
                }
            }
            Verdict::Error(k) => stats.record_error(req.measured, k, bytes),
            Verdict::Fatal(k) => {
                stats.record_error(req.measured, k, bytes);
                return Some(End::Failed(ErrorKind::Dropped));
            }
        }
        self.proto.close_after_reply().then_some(End::Reconnect)
    }

    fn add_ok(stats: &mut crate::stats::WorkerStats, ok: [(u64, u64); 2]) {
        for (measured, (n, bytes)) in [(false, ok[0]), (true, ok[1])] {
            if n > 0 {
                stats.record_ok(measured, n, bytes);
            }
        }
    }

    /// The peer closed: a reply that runs to the close is complete now (and recorded).
    fn consume_at_close(&mut self, now: u64, shared: &Shared) {
        let Some(req) = self.inflight.front() else {
            return;
        };
        if let Decode::Reply { used, verdict } = self
            .proto
            .decode_at_close(&self.rbuf[self.rstart..self.rend], req)
        {
            let mut stats = shared.stats.borrow_mut();
            let mut ok = [(0u64, 0u64); 2];
            let _ = self.settle(used, verdict, now, &mut stats, &mut ok);
            Self::add_ok(&mut stats, ok);
        }
    }

    /// Decodes and records every complete reply in the read buffer.
    fn consume(&mut self, now: u64, shared: &Shared) -> Option<End> {
        if self.proto.settles_on_write() {
            return self.consume_idle();
        }
        let mut stats = shared.stats.borrow_mut();
        // Correct replies are tallied here and added once per read.
        let mut ok = [(0u64, 0u64); 2];
        let mut end = None;
        while let Some(req) = self.inflight.front() {
            match self.proto.decode(&self.rbuf[self.rstart..self.rend], req) {
                Decode::Incomplete | Decode::Consumed { used: 0 } => break,
                Decode::Consumed { used } => {
                    self.rstart += used;
                    self.consumed += used as u64;
                }
                Decode::Reply { used, verdict } => {
                    end = self.settle(used, verdict, now, &mut stats, &mut ok);
                    if end.is_some() {
                        break;
                    }
                }
            }
        }
        Self::add_ok(&mut stats, ok);
        if end.is_some() {
            return end;
        }
        if self.inflight.is_empty() && self.rstart < self.rend {
            // Bytes nobody asked for: an echo server never sends them, and keeping them
            // would let a hostile server grow this buffer without bound.
            stats
                .phase(now >= shared.measure_start_ns)
                .error(ErrorKind::Unsolicited, 1);
            return Some(End::Failed(ErrorKind::Dropped));
        }
        if self.compact_read_buffer() {
            if let Some(r) = self.inflight.pop_front() {
                stats.record_error(r.measured, ErrorKind::TooLarge, 0);
            }
            return Some(End::Failed(ErrorKind::Dropped));
        }
        None
    }

    /// Settles-on-write protocols: no reply is awaited, so whatever arrives is an
    /// event for the protocol (a heartbeat, the peer's goodbye), never a reply.
    fn consume_idle(&mut self) -> Option<End> {
        while self.rstart < self.rend {
            match self.proto.decode_idle(&self.rbuf[self.rstart..self.rend]) {
                Ok(0) => break,
                Ok(n) => self.rstart += n,
                Err(kind) => return Some(End::Failed(kind)),
            }
        }
        if self.compact_read_buffer() {
            return Some(End::Failed(ErrorKind::TooLarge));
        }
        None
    }

    /// Frees the read buffer's front, or grows it when one partial reply fills it (the
    /// protocol bounds a reply's size, e.g. AMQP's negotiated frame-max). True when one
    /// unfinished reply already fills `MAX_READ_BUFFER`: the caller ends the connection.
    fn compact_read_buffer(&mut self) -> bool {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        } else if self.rend == self.rbuf.len() {
            // Make room: move the partial reply to the front, or grow for a large one.
            if self.rstart > 0 {
                self.rbuf.copy_within(self.rstart..self.rend, 0);
                self.rend -= self.rstart;
                self.rstart = 0;
            } else if self.rbuf.len() >= MAX_READ_BUFFER {
                return true;
            } else {
                let n = (self.rbuf.len() * 2).min(MAX_READ_BUFFER);
                self.rbuf.resize(n, 0);
            }
        }
        false
    }

    /// Drives the connection until the plan is done or the connection fails.
    pub async fn run<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        io: &mut S,
        shared: &Shared,
    ) -> End {
        poll_fn(|cx| self.poll_run(cx, io, shared)).await
    }

    fn poll_run<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        io: &mut S,
        shared: &Shared,
    ) -> Poll<End> {
        let mut rounds = 0;
        // The clock is read once per poll and again after each read (for latency).
        let mut now = shared.clock.now_ns();
        loop {
            let late = self
                .inflight
                .front()
                .is_some_and(|oldest| now.saturating_sub(oldest.sent_ns) >= shared.timeout_ns);
            if late {
                // The late request is a timeout; the rest of its connection is dropped.
                if let Some(r) = self.inflight.pop_front() {
                    shared
                        .stats
                        .borrow_mut()
                        .record_error(r.measured, ErrorKind::Timeout, 0);
                }
                return Poll::Ready(End::Failed(ErrorKind::Dropped));
            }
            self.fill(now, shared);

            // Write what is pending; a partial write keeps the rest for the next poll.
            let mut wrote = false;
            while self.wpos < self.out.len() {
                match Pin::new(&mut *io).poll_write(cx, &self.out[self.wpos..]) {
                    Poll::Ready(Ok(0)) => return Poll::Ready(End::Failed(ErrorKind::Closed)),
                    Poll::Ready(Ok(n)) => {
                        self.wpos += n;
                        wrote = true;
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(End::Failed(ErrorKind::from_io(&e))),
                    Poll::Pending => break,
                }
            }
            if wrote || self.flushing {
                match Pin::new(&mut *io).poll_flush(cx) {
                    Poll::Ready(Ok(())) => self.flushing = false,
                    Poll::Ready(Err(e)) => return Poll::Ready(End::Failed(ErrorKind::from_io(&e))),
                    Poll::Pending => self.flushing = true,
                }
            }
            if self.wpos == self.out.len() {
                self.out.clear();
                self.wpos = 0;
                if !self.inflight.is_empty() && self.proto.settles_on_write() {
                    self.settle_written();
                }
            }

            // Read whatever has arrived and settle every complete reply.
            let mut progressed = false;
            let mut rb = ReadBuf::new(&mut self.rbuf[self.rend..]);
            match Pin::new(&mut *io).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) => {
                    let n = rb.filled().len();
                    if n == 0 {
                        // The peer closed. A reply that runs to the close ends here.
                        // That ends the connection's work only if it had none left;
                        // otherwise the slot reconnects.
                        self.consume_at_close(now, shared);
                        let idle = self.inflight.is_empty() && self.out.is_empty();
                        let wanted = if self.open_loop() {
                            self.next_intended
                        } else {
                            now
                        };
                        return Poll::Ready(if idle && !self.may_send(wanted, now, shared) {
                            End::Done
                        } else {
                            End::Failed(ErrorKind::Closed)
                        });
                    }
                    self.rend += n;
                    progressed = true;
                    now = shared.clock.now_ns();
                    if let Some(end) = self.consume(now, shared) {
                        return Poll::Ready(end);
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(End::Failed(ErrorKind::from_io(&e))),
                Poll::Pending => {}
            }

            let idle = self.inflight.is_empty() && self.out.is_empty();
            let next_send = if self.open_loop() {
                self.next_intended
            } else {
                now
            };
            let can_send = self.may_send(next_send, now, shared);
            if idle && !can_send {
                return Poll::Ready(End::Done);
            }
            let cut_at = shared.cut_ns();
            if !can_send && now >= cut_at {
                return Poll::Ready(End::Cut);
            }
            if progressed {
                rounds += 1;
                if rounds >= FAIRNESS_ROUNDS {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                continue;
            }

            // Nothing to do until a reply arrives or one timer: the oldest request's
            // timeout, the next scheduled send, or the end of the run for an idle sender.
            let mut wake = u64::MAX;
            if let Some(oldest) = self.inflight.front() {
                wake = oldest.sent_ns + shared.timeout_ns;
            }
            if can_send && self.inflight.len() < shared.pipeline {
                if self.open_loop() {
                    match &shared.pacer {
                        Some(p) => {
                            if self.paced_at != self.next_intended {
                                p.schedule(self.next_intended, cx.waker());
                                self.paced_at = self.next_intended;
                            }
                        }
                        None => wake = wake.min(self.next_intended),
                    }
                } else if self.out.is_empty() {
                    // Closed loop with room and permission: send now.
                    continue;
                }
            }
            if let Some(d) = shared.deadline_ns {
                // Replies still due are waited for no longer than the drain grace.
                wake = wake.min(if idle { d } else { cut_at });
            }
            if wake == u64::MAX {
                return Poll::Pending;
            }
            // Re-armed only for an earlier deadline: the oldest request's deadline moves
            // later with every reply, and a timer firing early just means a re-check.
            if wake < self.sleep_at {
                self.sleep_at = wake;
                self.sleep
                    .as_mut()
                    .reset(shared.clock.instant_at(wake).into());
            }
            // Always poll: the timer may hold no waker (tokio's cooperative budget can
            // return Pending without registering one), and a lost timer is a lost timeout.
            if self.sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.sleep_at = u64::MAX;
            now = shared.clock.now_ns();
        }
    }
}
