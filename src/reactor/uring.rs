//! io_uring pieces shared by the loops that use it: a ring of provided receive
//! buffers (`BufRing`: one allocation per thread, lent to the kernel and given back
//! once consumed, so an idle connection owns no buffer), the user_data layout (a kind
//! in the top two bits, a slot token below), and whether this kernel has what the
//! loops need. The loop itself is `uring_loop.rs`, under both the load engine and the
//! server.

use io_uring::{squeue, types, IoUring};

/// A completion's kind is its user_data's top two bits; the rest is a slab token
/// (below 2^62, `reactor::OWN_TOKENS`) or the loop's own number.
pub const KIND_SHIFT: u32 = 62;
pub const TOKEN_MASK: u64 = (1 << KIND_SHIFT) - 1;

/// user_data of kind `kind` for `what`.
#[inline]
pub fn user_data(kind: u64, what: u64) -> u64 {
    (kind << KIND_SHIFT) | (what & TOKEN_MASK)
}

/// Whether this kernel gives what the io_uring loops need (a ring with a single
/// issuer and deferred task work, 6.1+; io_uring not disabled by sysctl).
pub fn available() -> bool {
    IoUring::<squeue::Entry>::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(8)
        .is_ok()
}

/// One `io_uring_enter` of a loop turn: submits what is queued, runs the deferred task
/// work (the completions), and sleeps for one completion at most `timeout` only when
/// there is none. A timeout, a signal or a full completion queue is a normal return.
pub fn enter_for(ring: &IoUring, timeout: std::time::Duration) -> std::io::Result<()> {
    let ts = types::Timespec::from(timeout);
    let args = types::SubmitArgs::new().timespec(&ts);
    match ring.submitter().submit_with_args(1, &args) {
        Err(e)
            if !matches!(
                e.raw_os_error(),
                Some(libc::ETIME | libc::EINTR | libc::EBUSY)
            ) =>
        {
            Err(e)
        }
        _ => Ok(()),
    }
}

/// `IORING_ENTER_GETEVENTS` (the io_uring crate keeps its `sys` module private).
const ENTER_GETEVENTS: u32 = 1;

/// Cancels every request `ring` still has in the kernel and waits (at most a second)
/// until they are gone. Without it a ring's requests (a listener's multishot accept, a
/// socket's receive) end in a kernel worker after the thread closes the ring, holding
/// their sockets until then: a server's port stays bound for a moment after it exits,
/// and a restart on that port fails.
pub fn cancel_all(ring: &mut IoUring) {
    let wait = types::Timespec::new().sec(1);
    // ENOENT: nothing was in flight. Any other error (a kernel before 6.0 has no
    // synchronous cancel) leaves it to the ring's own teardown, as before.
    let _ = ring
        .submitter()
        .register_sync_cancel(Some(wait), types::CancelBuilder::any());
    // The cancelled requests let go of their files when their completions are flushed,
    // which a deferred-task-work ring does only inside a wait: one that waits for none.
    // SAFETY: no submissions, no argument.
    let _ = unsafe {
        ring.submitter()
            .enter::<libc::sigset_t>(0, 0, ENTER_GETEVENTS, None)
    };
    ring.completion().for_each(drop);
}

/// The thread's receive buffers: one allocation, lent to the kernel through a
/// registered buffer ring, each returned once its bytes are consumed.
pub struct BufRing {
    ring: *mut types::BufRingEntry,
    ring_len: usize,
    bufs: Vec<u8>,
    count: u16,
    size: usize,
    tail: u16,
}

impl BufRing {
    /// `count` buffers (a power of two) of `size` bytes, registered with `uring` as
    /// group `bgid`.
    pub fn new(uring: &IoUring, count: u16, size: usize, bgid: u16) -> std::io::Result<BufRing> {
        debug_assert!(count.is_power_of_two());
        let ring_len = count as usize * std::mem::size_of::<types::BufRingEntry>();
        // SAFETY: an anonymous private mapping; checked for failure below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ring_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let mut b = BufRing {
            ring: p as *mut types::BufRingEntry,
            ring_len,
            bufs: vec![0; size * count as usize],
            count,
            size,
            tail: 0,
        };
        // SAFETY: the mapping is page aligned and lives until `b` is dropped; its owner
        // drops the ring first.
        unsafe {
            uring
                .submitter()
                .register_buf_ring_with_flags(p as u64, count, bgid, 0)?;
        }
        for bid in 0..count {
            b.give(bid);
        }
        b.publish();
        Ok(b)
    }

    /// Puts buffer `bid` back at the tail (seen by the kernel after `publish`).
    pub fn give(&mut self, bid: u16) {
        let idx = (self.tail & (self.count - 1)) as usize;
        // SAFETY: idx < count, inside the mapping; the kernel does not read entries
        // past the published tail.
        let e = unsafe { &mut *self.ring.add(idx) };
        e.set_addr(self.bufs.as_ptr() as u64 + bid as u64 * self.size as u64);
        e.set_len(self.size as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Lets the kernel see the buffers given back since the last call.
    pub fn publish(&self) {
        // SAFETY: the tail field of the first entry, per the buf_ring layout.
        let tail =
            unsafe { types::BufRingEntry::tail(self.ring) } as *const std::sync::atomic::AtomicU16;
        // SAFETY: an aligned u16 inside the mapping; the kernel reads it with acquire.
        unsafe { (*tail).store(self.tail, std::sync::atomic::Ordering::Release) };
    }

    /// The `n` bytes the kernel put in buffer `bid`.
    pub fn data(&self, bid: u16, n: usize) -> &[u8] {
        let at = (bid % self.count) as usize * self.size;
        &self.bufs[at..at + n.min(self.size)]
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`.
        unsafe { libc::munmap(self.ring as *mut libc::c_void, self.ring_len) };
    }
}
