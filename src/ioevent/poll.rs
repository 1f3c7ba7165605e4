//! poll(2): the whole pollfd array is handed to the kernel on every pass, and re-arming
//! rewrites it, so its cost grows with N whatever the activity.

use super::method::{ready_count, recv_some, Pairs, PassLoop, Tally};
use std::io;

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
}

impl PassLoop for Poll {
    const NAME: &'static str = "poll";

    fn pairs(&self) -> &Pairs {
        &self.pairs
    }

    fn rearm(&mut self) -> io::Result<()> {
        for (i, p) in self.fds.iter_mut().enumerate() {
            *p = libc::pollfd {
                fd: self.pairs.rx(i),
                events: libc::POLLIN,
                revents: 0,
            };
        }
        Ok(())
    }

    fn pass(&mut self, tally: &mut Tally) -> io::Result<usize> {
        // SAFETY: fds is a valid array of its length.
        let n = unsafe { libc::poll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, 0) };
        let n = ready_count(n)?;
        let mut byte = [0u8; 1];
        let mut seen = 0;
        for idx in 0..self.fds.len() {
            if seen == n {
                break;
            }
            if self.fds[idx].revents != 0 {
                seen += 1;
                let got = recv_some(self.pairs.rx(idx), &mut byte);
                tally.on_read(&self.pairs, idx, got);
            }
        }
        Ok(n)
    }
}
