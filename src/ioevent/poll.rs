//! poll(2): the whole pollfd array is handed to the kernel on every pass, and re-arming
//! rewrites it, so its cost grows with N whatever the activity.

use super::method::{recv_some, stalled, Backend, Pairs, Shape, Tally, Timing, STALL_LIMIT};
use std::io;
use std::time::Instant;

pub struct Poll {
    pairs: Pairs,
    fds: Vec<libc::pollfd>,
}

impl Poll {
    pub fn new(pairs: Pairs) -> Poll {
        let fds = (0..pairs.len())
            .map(|i| libc::pollfd {
                fd: pairs.rx(i),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        Poll { pairs, fds }
    }

    fn pass(&mut self, tally: &mut Tally) -> io::Result<usize> {
        // SAFETY: fds is a valid array of its length.
        let n = unsafe { libc::poll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(0)
            } else {
                Err(e)
            };
        }
        let mut byte = [0u8; 1];
        let mut seen = 0;
        for idx in 0..self.fds.len() {
            if seen == n as usize {
                break;
            }
            if self.fds[idx].revents != 0 {
                seen += 1;
                let got = recv_some(self.pairs.rx(idx), &mut byte);
                tally.on_read(&self.pairs, idx, got);
            }
        }
        Ok(n as usize)
    }
}

impl Backend for Poll {
    fn name(&self) -> &'static str {
        "poll"
    }

    fn iterate(&mut self, shape: &Shape) -> io::Result<Timing> {
        let t0 = Instant::now();
        for (i, p) in self.fds.iter_mut().enumerate() {
            *p = libc::pollfd {
                fd: self.pairs.rx(i),
                events: libc::POLLIN,
                revents: 0,
            };
        }
        let mut tally = Tally::default();
        self.pass(&mut tally)?;
        let mut tally = Tally::kickoff(&self.pairs, shape);
        let t1 = Instant::now();
        let mut last_progress = t1;
        while !tally.done() {
            if self.pass(&mut tally)? > 0 {
                last_progress = Instant::now();
            } else if last_progress.elapsed() > STALL_LIMIT {
                return Err(stalled(self.name()));
            }
        }
        let t2 = Instant::now();
        Ok(Timing {
            total_ns: (t2 - t0).as_nanos() as u64,
            loop_ns: (t2 - t1).as_nanos() as u64,
            reads: tally.reads,
            fired: tally.fired,
        })
    }
}
