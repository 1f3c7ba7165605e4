//! Raw non-blocking client sockets for mass connections: a plain descriptor per
//! connection (no runtime object, no buffer), optionally bound to a source address
//! with IP_BIND_ADDRESS_NO_PORT so the kernel picks the port at connect time, per
//! (source, destination) pair, instead of one port per source for all destinations.

use std::net::{IpAddr, SocketAddr};

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The errno's symbolic name, as the report counts failures.
pub fn errno_name(e: i32) -> String {
    let name = match e {
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::EADDRNOTAVAIL => "EADDRNOTAVAIL",
        libc::EADDRINUSE => "EADDRINUSE",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ECONNRESET => "ECONNRESET",
        libc::ECONNABORTED => "ECONNABORTED",
        libc::EHOSTUNREACH => "EHOSTUNREACH",
        libc::ENETUNREACH => "ENETUNREACH",
        libc::ENOBUFS => "ENOBUFS",
        libc::ENOMEM => "ENOMEM",
        libc::EPIPE => "EPIPE",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        _ => return format!("errno {e}"),
    };
    name.to_string()
}

/// Starts a non-blocking connect. Ok(true): connected at once; Ok(false): in progress
/// (wait for writability); Err(errno) with the descriptor already closed.
pub fn start_connect(
    dest: SocketAddr,
    source: Option<IpAddr>,
    nodelay: bool,
) -> Result<(i32, bool), i32> {
    let domain = if dest.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain system calls on a descriptor this function owns until it returns it.
    unsafe {
        let fd = libc::socket(
            domain,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        );
        if fd < 0 {
            return Err(errno());
        }
        let fail = |fd: i32| {
            let e = errno();
            libc::close(fd);
            Err(e)
        };
        let one: libc::c_int = 1;
        let opt = |level, name| {
            libc::setsockopt(
                fd,
                level,
                name,
                &one as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if nodelay {
            opt(libc::IPPROTO_TCP, libc::TCP_NODELAY);
        }
        if let Some(src) = source {
            if src.is_ipv4() && opt(libc::IPPROTO_IP, libc::IP_BIND_ADDRESS_NO_PORT) != 0 {
                return fail(fd);
            }
            let sa = socket2::SockAddr::from(SocketAddr::new(src, 0));
            if libc::bind(fd, sa.as_ptr(), sa.len()) != 0 {
                return fail(fd);
            }
        }
        let sa = socket2::SockAddr::from(dest);
        if libc::connect(fd, sa.as_ptr(), sa.len()) == 0 {
            return Ok((fd, true));
        }
        match errno() {
            libc::EINPROGRESS => Ok((fd, false)),
            _ => fail(fd),
        }
    }
}

/// The pending error of a socket (SO_ERROR): 0 once a connect succeeded.
pub fn take_error(fd: i32) -> i32 {
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: err and len are valid for getsockopt to write.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            &mut err as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        errno()
    } else {
        err
    }
}

pub fn close(fd: i32) {
    // SAFETY: the caller owns fd and never uses it again.
    unsafe { libc::close(fd) };
}

/// read(2): Ok(0) at end of stream, Err(errno) on error (EAGAIN included).
pub fn read(fd: i32, buf: &mut [u8]) -> Result<usize, i32> {
    // SAFETY: buf is valid for writes of its length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    if n < 0 {
        Err(errno())
    } else {
        Ok(n as usize)
    }
}

/// send(2) without SIGPIPE.
pub fn write(fd: i32, data: &[u8]) -> Result<usize, i32> {
    // SAFETY: data is valid for reads of its length.
    let n = unsafe {
        libc::send(
            fd,
            data.as_ptr() as *const libc::c_void,
            data.len(),
            libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 {
        Err(errno())
    } else {
        Ok(n as usize)
    }
}

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
        let ts = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
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
