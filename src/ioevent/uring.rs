//! io_uring: one multishot POLL_ADD per pair stays armed across iterations; a readiness
//! completion queues a RECV (of what is there: several wake-ups may fold into one
//! completion, so one byte at a time could lose one), a RECV's completion queues one
//! forwarding SEND per byte read, and each
//! pass submits them all with one io_uring_enter. Reads and writes are batched through
//! the ring instead of costing a system call each.

use super::method::{next_pair, Pairs, PassLoop, Tally, E};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::io;

const KIND_SHIFT: u32 = 62;
const POLL: u64 = 1;
const RECV: u64 = 2;
const SEND: u64 = 3;
const IDX_MASK: u64 = (1 << KIND_SHIFT) - 1;

pub struct Uring {
    pairs: Pairs,
    ring: IoUring,
    /// One receive buffer per pair, never moved while a RECV may use it.
    bufs: Vec<[u8; 16]>,
    /// Completions of the current pass, reused so a pass allocates nothing.
    cqes: Vec<(u64, i32, u32)>,
}

fn poll_entry(pairs: &Pairs, idx: usize) -> squeue::Entry {
    opcode::PollAdd::new(types::Fd(pairs.rx(idx)), libc::POLLIN as u32)
        .multi(true)
        .build()
        .user_data((POLL << KIND_SHIFT) | idx as u64)
}

impl Uring {
    pub fn new(pairs: Pairs) -> io::Result<Uring> {
        let ring = IoUring::builder().setup_cqsize(16384).build(4096)?;
        let mut u = Uring {
            bufs: vec![[0u8; 16]; pairs.len()],
            cqes: Vec::with_capacity(16384),
            pairs,
            ring,
        };
        for i in 0..u.pairs.len() {
            let e = poll_entry(&u.pairs, i);
            u.push(&e)?;
        }
        u.ring.submit()?;
        Ok(u)
    }

    fn push(&mut self, e: &squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every buffer an entry points to (bufs, E) outlives its operation.
            if unsafe { self.ring.submission().push(e) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
    }
}

impl PassLoop for Uring {
    const NAME: &'static str = "uring";

    fn pairs(&self) -> &Pairs {
        &self.pairs
    }

    fn rearm(&mut self) -> io::Result<()> {
        // The multishot polls stay armed: re-arming costs nothing here.
        Ok(())
    }

    /// One non-blocking pass: submit what is queued, handle every completion.
    fn pass(&mut self, tally: &mut Tally) -> io::Result<usize> {
        self.ring.submit()?;
        let mut cqes = std::mem::take(&mut self.cqes);
        cqes.clear();
        cqes.extend(
            self.ring
                .completion()
                .map(|c| (c.user_data(), c.result(), c.flags())),
        );
        for &(data, res, flags) in &cqes {
            let idx = (data & IDX_MASK) as usize;
            match data >> KIND_SHIFT {
                POLL => {
                    if !cqueue::more(flags) {
                        let e = poll_entry(&self.pairs, idx);
                        self.push(&e)?;
                    }
                    let buf = self.bufs[idx].as_mut_ptr();
                    let e = opcode::Recv::new(types::Fd(self.pairs.rx(idx)), buf, 16)
                        .build()
                        .user_data((RECV << KIND_SHIFT) | idx as u64);
                    self.push(&e)?;
                }
                RECV => {
                    let n = if res == -libc::EAGAIN {
                        0
                    } else {
                        res as isize
                    };
                    // One write per byte read, as the method's callback does one each.
                    let forward = tally.settle(n);
                    let to = self.pairs.tx(next_pair(&self.pairs, idx));
                    for _ in 0..forward {
                        let e = opcode::Send::new(types::Fd(to), E.as_ptr(), 1)
                            .build()
                            .flags(squeue::Flags::SKIP_SUCCESS)
                            .user_data(SEND << KIND_SHIFT);
                        self.push(&e)?;
                    }
                }
                _ => tally.failures += 1, // a SEND completes only when it failed
            }
        }
        let n = cqes.len();
        self.cqes = cqes;
        Ok(n)
    }
}
