//! The read path: every complete reply in what was read decoded, checked against the
//! requests in flight and settled; what is unfinished kept for the next read.

use super::slot::{work, Conn, End};
use crate::engine::busy::Busy;
use crate::engine::ctx::Ctx;
use crate::engine::limits::MAX_READ_BUFFER;
use crate::engine::session::{
    tell, ClientSession, Decode, InFlight, Lane, SessionFactory, Verdict,
};
use crate::engine::settle::{holds, holds_among_writes, settle};
use crate::engine::tally::Tally;
use crate::stats::{ErrorKind, WorkerStats};

impl<S: ClientSession> Conn<S> {
    /// The peer closed: a reply that runs to the close is complete now (and recorded).
    pub(super) fn consume_at_close<F: SessionFactory<Session = S>>(
        &mut self,
        now: u64,
        ctx: &mut Ctx<F>,
    ) {
        let (Some(b), Some(session)) = (self.busy.as_deref_mut(), self.session.as_mut()) else {
            return;
        };
        let Some(req) = b.awaited().copied() else {
            return;
        };
        let d = session.decode_at_close(&b.input, &req, ctx.figures_at(req.measured));
        if let Decode::Reply {
            settles,
            lane,
            verdict,
            ..
        } = d
        {
            b.written_before_awaited();
            if let (Verdict::Error(k) | Verdict::Fatal(k), true) = (verdict, req.measured) {
                tell(session, &b.input, k, settles.into(), &mut ctx.stats.texts);
            }
            let mut tally = Tally::default();
            let answered = &mut self.answered;
            settle(
                b,
                lane,
                settles,
                verdict,
                now,
                &mut ctx.stats,
                &mut tally,
                answered,
            );
            ctx.commit(tally);
        }
    }

    /// Decodes and records everything complete in what was read (after what was kept).
    pub(super) fn consume<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        fresh: &[u8],
        now: u64,
        ctx: &mut Ctx<F>,
    ) -> Option<End> {
        let mut kept = self
            .busy
            .as_mut()
            .map_or_else(Vec::new, |b| std::mem::take(&mut b.input));
        let from_kept = !kept.is_empty();
        if from_kept {
            // The room it grows to (doubling) is checked against the budget before it
            // grows, so an endless reply never takes its worker past its share.
            let need = kept.len() + fresh.len();
            let grows = need.saturating_sub(kept.capacity());
            if grows > 0 && !self.may_grow(need.max(2 * kept.capacity()) - kept.capacity(), ctx) {
                return Some(self.drop_over_budget(ctx));
            }
            kept.extend_from_slice(fresh);
        }
        let data: &[u8] = if from_kept { &kept } else { fresh };
        let (pos, end) = self.decode_all(data, now, ctx);
        if end.is_some() {
            return end;
        }
        self.keep_rest(slot, kept, from_kept, fresh, pos, ctx)
    }

    /// Hands the session every reply and event complete in `data`; returns how far it
    /// got and how the connection ends, if it does. Correct replies are tallied here
    /// and added to the stats once per read.
    fn decode_all<F: SessionFactory<Session = S>>(
        &mut self,
        data: &[u8],
        now: u64,
        ctx: &mut Ctx<F>,
    ) -> (usize, Option<End>) {
        let mut pos = 0;
        let mut tally = Tally::default();
        let mut end = None;
        let now_measured = now >= ctx.measure_start_ns;
        // The session, the Busy part and the reply count are disjoint fields: borrowed
        // apart, once per read, not once per reply.
        let (session, busy, answered) = (&mut self.session, &mut self.busy, &mut self.answered);
        while let Some(session) = session.as_mut() {
            // Requests that settle on write wait in the queue (none, for a protocol
            // whose requests all get replies): replies pass over them.
            let on_write = S::SETTLES_ON_WRITE && busy.as_deref().is_some_and(|b| b.on_write > 0);
            let oldest = first_awaited(busy.as_deref(), on_write);
            // With no byte left the session is still asked while a request waits: one
            // acknowledgement may have settled more than the replies handed over yet.
            if pos == data.len() && oldest.is_none() {
                break;
            }
            let measured = oldest.map_or(now_measured, |r| r.measured);
            let figures = &mut ctx.figures[measured as usize];
            let at = pos;
            match session.decode(&data[pos..], oldest, &mut ctx.out, figures) {
                Decode::Incomplete | Decode::Consumed { used: 0 } | Decode::Event { used: 0 } => {
                    break
                }
                Decode::Consumed { used } => {
                    pos += used.min(data.len() - pos);
                }
                Decode::Event { used } => {
                    pos += used.min(data.len() - pos);
                    ctx.stats.phase(now_measured).events += 1;
                }
                Decode::Reply {
                    used,
                    settles,
                    lane,
                    verdict,
                    close,
                } => {
                    let asked = oldest.is_some();
                    let Some(b) = settled_in(busy.as_deref_mut(), asked, on_write, lane, settles)
                    else {
                        // A reply to nothing asked: the stream cannot be trusted.
                        ctx.stats
                            .phase(now_measured)
                            .error(ErrorKind::Unsolicited, 1);
                        end = Some(End::Dropped(ErrorKind::Unsolicited));
                        break;
                    };
                    pos += used.min(data.len() - pos);
                    if let (Verdict::Error(k) | Verdict::Fatal(k), true) = (verdict, measured) {
                        tell(
                            session,
                            &data[at..],
                            k,
                            settles.into(),
                            &mut ctx.stats.texts,
                        );
                    }
                    if settle(
                        b,
                        lane,
                        settles,
                        verdict,
                        now,
                        &mut ctx.stats,
                        &mut tally,
                        answered,
                    ) {
                        let cause = match verdict {
                            Verdict::Fatal(k) => k,
                            _ => ErrorKind::Dropped,
                        };
                        end = Some(End::Dropped(cause));
                        break;
                    }
                    if close {
                        end = Some(End::Reconnect);
                        break;
                    }
                }
                Decode::Fail { kind } => {
                    if measured {
                        tell(session, &data[at..], kind, 1, &mut ctx.stats.texts);
                    }
                    end = Some(failed_as(kind, &mut ctx.stats, now_measured));
                    break;
                }
            }
        }
        ctx.commit(tally);
        (pos, end)
    }

    /// What is left of a read after its last complete reply (`pos` on): kept for the
    /// next read, within the caps; returns how the connection ends, if it does.
    fn keep_rest<F: SessionFactory<Session = S>>(
        &mut self,
        slot: u32,
        mut kept: Vec<u8>,
        from_kept: bool,
        fresh: &[u8],
        pos: usize,
        ctx: &mut Ctx<F>,
    ) -> Option<End> {
        let left = if from_kept { kept.len() } else { fresh.len() } - pos;
        if left > MAX_READ_BUFFER {
            // The reply past the cap is the oldest awaited request's; with none awaited
            // the connection's requests end as `too_large`.
            let Some(r) = self.busy.as_mut().and_then(|b| b.pop_awaited()) else {
                return Some(End::Failed(ErrorKind::TooLarge));
            };
            ctx.stats
                .record_error(r.measured, ErrorKind::TooLarge, r.intended_ns, None);
            return Some(End::Dropped(ErrorKind::TooLarge));
        }
        if from_kept {
            kept.drain(..pos);
            work(&mut self.busy, &mut ctx.busy).input = kept;
        } else if left > 0 || kept.capacity() > 0 {
            // Into the room the connection kept from its last unfinished reply (empty
            // now; kept while the connection is busy, `release_if_idle`), not a new
            // allocation per read that ends inside a reply.
            kept.extend_from_slice(&fresh[pos..]);
            work(&mut self.busy, &mut ctx.busy).input = kept;
        } else {
            return None;
        }
        if !self.within_budget(slot, ctx) {
            return Some(self.drop_over_budget(ctx));
        }
        None
    }
}

/// The request a reply answers first: the oldest in flight or, while requests that
/// settle on write wait in the queue (`on_write`), the oldest awaited.
#[inline]
fn first_awaited(busy: Option<&Busy>, on_write: bool) -> Option<&InFlight> {
    match busy {
        Some(b) if on_write => b.awaited(),
        b => b.and_then(|b| b.inflight.front()),
    }
}

/// The `Busy` part a reply settles in, if it answers something `asked` that holds as
/// many as it `settles` on its `lane`; with requests that settle on write waiting
/// (`on_write`), those written before the awaited one settle first.
#[inline]
fn settled_in(
    busy: Option<&mut Busy>,
    asked: bool,
    on_write: bool,
    lane: Lane,
    settles: u32,
) -> Option<&mut Busy> {
    let b = busy?;
    if on_write {
        b.written_before_awaited();
    }
    let fits = asked
        && match on_write {
            false => holds(b, lane, settles),
            true => holds_among_writes(b, lane, settles),
        };
    fits.then_some(b)
}

/// How a session's `Decode::Fail` of `kind` ends the connection: a connection-level
/// kind is counted once, for the connection, and its requests are dropped.
fn failed_as(kind: ErrorKind, stats: &mut WorkerStats, now_measured: bool) -> End {
    if kind.is_connect() {
        stats.phase(now_measured).error(kind, 1);
        End::Dropped(kind)
    } else {
        End::Failed(kind)
    }
}
