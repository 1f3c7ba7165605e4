//! A thin epoll instance, shared by every event loop.

use super::socket::{close, errno};

/// A thin epoll instance.
pub struct Epoll(i32);

impl Epoll {
    pub fn new() -> std::io::Result<Epoll> {
        // SAFETY: no preconditions.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Epoll(fd))
    }

    fn ctl(&self, op: i32, fd: i32, events: u32, data: u64) -> i32 {
        let mut ev = libc::epoll_event { events, u64: data };
        // SAFETY: ev is a valid epoll_event.
        unsafe { libc::epoll_ctl(self.0, op, fd, &mut ev) }
    }

    pub fn add(&self, fd: i32, events: u32, data: u64) -> Result<(), i32> {
        if self.ctl(libc::EPOLL_CTL_ADD, fd, events, data) != 0 {
            return Err(errno());
        }
        Ok(())
    }

    pub fn modify(&self, fd: i32, events: u32, data: u64) -> Result<(), i32> {
        if self.ctl(libc::EPOLL_CTL_MOD, fd, events, data) != 0 {
            return Err(errno());
        }
        Ok(())
    }

    /// Waits up to `timeout_ns` (nanosecond precision with epoll_pwait2, so a ping is
    /// not sent up to a millisecond late); returns how many entries were filled.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ns: u64) -> usize {
        // `as _`: each field's own type on this libc (musl's libc crate deprecates
        // naming `time_t`, whose width changed in musl 1.2).
        let ts = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as _,
            tv_nsec: (timeout_ns % 1_000_000_000) as _,
        };
        // SAFETY: events is valid for writes of its length; ts outlives the call.
        let n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.0,
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        if n >= 0 {
            return n as usize;
        }
        if errno() != libc::ENOSYS {
            return 0;
        }
        // Kernels before 5.11: millisecond timeouts, rounded up.
        let ms = timeout_ns.div_ceil(1_000_000).min(i32::MAX as u64) as i32;
        // SAFETY: events is valid for writes of its length.
        let n = unsafe { libc::epoll_wait(self.0, events.as_mut_ptr(), events.len() as i32, ms) };
        n.max(0) as usize
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        close(self.0);
    }
}
