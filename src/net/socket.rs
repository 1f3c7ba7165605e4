//! Raw non-blocking sockets for the event loops: a plain descriptor per
//! connection (no runtime object, no buffer), optionally bound to a source address
//! with IP_BIND_ADDRESS_NO_PORT so the kernel picks the port at connect time, per
//! (source, destination) pair, instead of one port per source for all destinations.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr};

pub(crate) fn errno() -> i32 {
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

/// Whether a connected socket's local address is its peer's: a connection that met
/// itself (simultaneous open on a free ephemeral port).
pub fn connected_to_itself(fd: i32) -> bool {
    // SAFETY: the caller's descriptor stays open for the length of this call.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let s = socket2::SockRef::from(&fd);
    match (s.local_addr(), s.peer_addr()) {
        (Ok(l), Ok(p)) => l.as_socket().is_some() && l.as_socket() == p.as_socket(),
        _ => false,
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

// Why `libc::syscall` and not `libc::read`/`libc::send`: glibc's read and send
// are pthread cancellation points, and in a multi-threaded process each call
// wraps the syscall in __pthread_enable/disable_asynccancel (two atomic
// read-modify-writes). Callgrind measured that pair at ~65 instructions per echo
// message on `serve echo`, more than the C reference spends in user space per
// message (it is single-threaded, so glibc skips it). wirebench never cancels a
// thread, so the generic syscall(2) entry, which is not a cancellation point,
// does the same work. It still sets errno on failure. Every argument goes as a
// full `c_long`, as syscall(2)'s variadic arguments are read.

/// read(2): Ok(0) at end of stream, Err(errno) on error (EAGAIN included).
pub fn read(fd: i32, buf: &mut [u8]) -> Result<usize, i32> {
    // SAFETY: buf is valid for writes of its length.
    let n = unsafe {
        libc::syscall(
            libc::SYS_read,
            fd as libc::c_long,
            buf.as_mut_ptr() as *mut libc::c_void,
            buf.len(),
        )
    };
    if n < 0 {
        Err(errno())
    } else {
        Ok(n as usize)
    }
}

/// send(2) without SIGPIPE.
pub fn write(fd: i32, data: &[u8]) -> Result<usize, i32> {
    // SAFETY: data is valid for reads of its length.
    // sendto with no address is send(2); see above for why through syscall(2).
    let n = unsafe {
        libc::syscall(
            libc::SYS_sendto,
            fd as libc::c_long,
            data.as_ptr() as *const libc::c_void,
            data.len(),
            libc::MSG_NOSIGNAL as libc::c_long,
            std::ptr::null::<libc::sockaddr>(),
            0 as libc::c_long,
        )
    };
    if n < 0 {
        Err(errno())
    } else {
        Ok(n as usize)
    }
}

/// recv(2) on a socket: what `read` does, for sockets only, without the VFS layer.
/// read(2) goes vfs_read -> sock_read_iter -> sock_recvmsg with an fdget_pos on the
/// way; recvfrom goes straight to sock_recvmsg. Under `perf` (cpu-clock) that VFS
/// detour was ~150 ns of kernel time per `serve http` request (vfs_read,
/// sock_read_iter, ksys_read, fdget_pos), about 2% of the request's whole cost here.
/// Ok(0) at end of stream, Err(errno) on error (EAGAIN included).
#[inline]
pub fn recv(fd: i32, buf: &mut [u8]) -> Result<usize, i32> {
    // SAFETY: buf is valid for writes of its length; no address is asked for.
    let n = unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            fd as libc::c_long,
            buf.as_mut_ptr() as *mut libc::c_void,
            buf.len(),
            0 as libc::c_long,
            std::ptr::null_mut::<libc::sockaddr>(),
            std::ptr::null_mut::<libc::socklen_t>(),
        )
    };
    if n < 0 {
        Err(errno())
    } else {
        Ok(n as usize)
    }
}

/// A raw non-blocking descriptor as Read + Write for rustls.
pub struct FdIo(pub i32);

impl Read for FdIo {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        recv(self.0, b).map_err(std::io::Error::from_raw_os_error)
    }
}

impl Write for FdIo {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        write(self.0, b).map_err(std::io::Error::from_raw_os_error)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes what a rustls session (client or server) has queued to `fd`.
/// Ok(true): all out; Ok(false): the socket is full, try again when it is writable.
pub fn flush_tls<D>(s: &mut rustls::ConnectionCommon<D>, fd: i32) -> std::io::Result<bool> {
    let mut io = FdIo(fd);
    while s.wants_write() {
        match s.write_tls(&mut io) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Turns Nagle's algorithm off on a connected socket (best effort).
pub fn set_nodelay(fd: i32) {
    let one: libc::c_int = 1;
    // SAFETY: one is a valid c_int for setsockopt to read.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            &one as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}
