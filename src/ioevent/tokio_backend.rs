//! tokio, the runtime the rest of wirebench uses: one current-thread runtime, one task
//! per pair awaiting readiness on an `AsyncFd`, reading one byte per callback. Registrations and tasks persist across
//! iterations (as a tokio program keeps them), so re-arming costs nothing here.

use super::method::{recv_some, stalled, Backend, Pairs, Shape, Tally, Timing, STALL_LIMIT};
use std::cell::{Cell, RefCell};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::rc::Rc;
use std::time::Instant;
use tokio::io::unix::AsyncFd;
use tokio::runtime::Runtime;
use tokio::sync::Notify;
use tokio::task::LocalSet;

/// A descriptor owned by `Pairs`, which outlives every task that watches it.
struct Borrowed(RawFd);

impl AsRawFd for Borrowed {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

struct State {
    pairs: Pairs,
    tally: RefCell<Tally>,
    done: Cell<bool>,
    wake: Notify,
}

pub struct Tokio {
    rt: Runtime,
    local: LocalSet,
    state: Rc<State>,
}

async fn reader(idx: usize, fd: AsyncFd<Borrowed>, st: Rc<State>) {
    let mut byte = [0u8; 1];
    loop {
        let Ok(mut guard) = fd.readable().await else {
            return;
        };
        // Readiness is edge-triggered: drain one byte per callback, as the method's
        // callback reads one, until the socket says EAGAIN (the price of edges).
        loop {
            let n = recv_some(st.pairs.rx(idx), &mut byte);
            if n <= 0 {
                if n == 0 {
                    guard.clear_ready();
                } else {
                    st.tally.borrow_mut().failures += 1;
                }
                break;
            }
            let mut t = st.tally.borrow_mut();
            t.on_read(&st.pairs, idx, n);
            if t.done() && !st.done.get() {
                st.done.set(true);
                st.wake.notify_one();
            }
        }
    }
}

impl Tokio {
    pub fn new(pairs: Pairs) -> io::Result<Tokio> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let local = LocalSet::new();
        let n = pairs.len();
        let state = Rc::new(State {
            pairs,
            tally: RefCell::new(Tally::default()),
            done: Cell::new(true),
            wake: Notify::new(),
        });
        let _guard = rt.enter();
        for idx in 0..n {
            // SAFETY: the descriptor belongs to `state.pairs`, which every task keeps alive.
            let fd = unsafe { AsyncFd::register(Borrowed(state.pairs.rx(idx))) }
                .map_err(|e| e.into_parts().1)?;
            local.spawn_local(reader(idx, fd, state.clone()));
        }
        Ok(Tokio { rt, local, state })
    }
}

impl Backend for Tokio {
    fn name(&self) -> &'static str {
        "tokio"
    }

    fn iterate(&mut self, shape: &Shape) -> io::Result<Timing> {
        let t0 = Instant::now();
        self.local.block_on(&self.rt, tokio::task::yield_now());
        let st = self.state.clone();
        *st.tally.borrow_mut() = Tally::kickoff(&st.pairs, shape);
        st.done.set(st.tally.borrow().done());
        let t1 = Instant::now();
        let finished = self.local.block_on(&self.rt, async {
            let wait = async {
                while !st.done.get() {
                    st.wake.notified().await;
                }
            };
            tokio::time::timeout(STALL_LIMIT, wait).await.is_ok()
        });
        let t2 = Instant::now();
        if !finished {
            return Err(stalled(self.name()));
        }
        let tally = *st.tally.borrow();
        Ok(Timing::new(t0, t1, t2, &tally))
    }
}
