//! Raw epoll, level-triggered, one read watcher per pair. Watchers live in user space;
//! re-arming (stop, then start) reaches the kernel only where the registration really
//! changes, so an unchanged watcher costs no system call. (libev's ev_io_set + ev_io_start
//! issues one epoll_ctl per watcher, an ADD failing with EEXIST; libevent two, DEL + ADD.)

use super::method::{ready_count, recv_some, Pairs, PassLoop, Tally};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub struct Epoll {
    pairs: Pairs,
    epfd: OwnedFd,
    events: Vec<libc::epoll_event>,
    /// Watchers the program wants started, and what the kernel has registered.
    wanted: Vec<bool>,
    in_kernel: Vec<bool>,
}

fn ctl(epfd: i32, op: i32, fd: i32, idx: usize) -> io::Result<()> {
    let mut ev = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: idx as u64,
    };
    // SAFETY: valid descriptors and a valid event.
    if unsafe { libc::epoll_ctl(epfd, op, fd, &mut ev) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl Epoll {
    pub fn new(pairs: Pairs) -> io::Result<Epoll> {
        // SAFETY: plain syscall, result checked.
        let raw = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: raw is a fresh descriptor.
        let epfd = unsafe { OwnedFd::from_raw_fd(raw) };
        let n = pairs.len();
        Ok(Epoll {
            pairs,
            epfd,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 256],
            wanted: vec![false; n],
            in_kernel: vec![false; n],
        })
    }

    /// Brings the kernel's registrations in line with the started watchers.
    fn flush(&mut self) -> io::Result<()> {
        for i in 0..self.wanted.len() {
            if self.wanted[i] != self.in_kernel[i] {
                let op = if self.wanted[i] {
                    libc::EPOLL_CTL_ADD
                } else {
                    libc::EPOLL_CTL_DEL
                };
                ctl(self.epfd.as_raw_fd(), op, self.pairs.rx(i), i)?;
                self.in_kernel[i] = self.wanted[i];
            }
        }
        Ok(())
    }
}

impl PassLoop for Epoll {
    const NAME: &'static str = "epoll";

    fn pairs(&self) -> &Pairs {
        &self.pairs
    }

    fn rearm(&mut self) -> io::Result<()> {
        // Stop and start every watcher with the same interest: nothing for the kernel.
        self.wanted.fill(true);
        self.flush()
    }

    /// One non-blocking pass: wait with timeout 0, run every ready callback.
    fn pass(&mut self, tally: &mut Tally) -> io::Result<usize> {
        // SAFETY: events has room for its length.
        let n = unsafe {
            libc::epoll_wait(
                self.epfd.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as i32,
                0,
            )
        };
        let n = ready_count(n)?;
        let mut byte = [0u8; 1];
        for ev in &self.events[..n] {
            let idx = ev.u64 as usize;
            let got = recv_some(self.pairs.rx(idx), &mut byte);
            tally.on_read(&self.pairs, idx, got);
        }
        Ok(n)
    }
}
