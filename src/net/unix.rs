//! Unix domain stream sockets (`unix:/path`): a target to connect to, and a path to
//! listen on. A load or a server reaches a unix socket through the same descriptors and
//! the same loops as TCP; what differs is the address, that there is no source address
//! and no TCP option, and that the path is a file (checked before anything starts).

use crate::error::{Error, Result};
use std::fmt;
use std::net::SocketAddr;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The prefix that names a unix socket where an address is asked for.
pub const PREFIX: &str = "unix:";

/// Where a load's connections go: a TCP address or a unix socket's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dest {
    Tcp(SocketAddr),
    Unix(Arc<Path>),
}

impl From<SocketAddr> for Dest {
    fn from(a: SocketAddr) -> Dest {
        Dest::Tcp(a)
    }
}

impl fmt::Display for Dest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dest::Tcp(a) => write!(f, "{a}"),
            Dest::Unix(p) => write!(f, "{PREFIX}{}", p.display()),
        }
    }
}

impl Dest {
    /// The TCP address, None for a unix socket.
    pub fn tcp(&self) -> Option<SocketAddr> {
        match self {
            Dest::Tcp(a) => Some(*a),
            Dest::Unix(_) => None,
        }
    }
}

/// The path of `text` when it names a unix socket (`unix:/run/app.sock`).
pub fn path_of(text: &str) -> Option<&str> {
    text.strip_prefix(PREFIX)
}

/// A unix socket to connect to: the path must exist and be a socket, said in one
/// sentence otherwise (`what` names where the path came from, for the sentence).
pub fn target(path: &str, what: &str) -> Result<Dest> {
    if path.is_empty() {
        return Err(Error::usage(format!(
            "{what}: 'unix:' needs a socket's path (for example unix:/run/redis.sock)"
        )));
    }
    let meta = std::fs::metadata(path).map_err(|e| {
        Error::usage(format!(
            "{what}: cannot use unix socket {path}: {}",
            words(&e)
        ))
    })?;
    if !meta.file_type().is_socket() {
        return Err(Error::usage(format!(
            "{what}: {path} is not a unix socket (it is {})",
            kind_of(&meta.file_type())
        )));
    }
    Ok(Dest::Unix(Arc::from(Path::new(path))))
}

/// An I/O error as a user reads it: the system's sentence without "(os error N)".
fn words(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_lowercase(),
        None => text,
    }
}

fn kind_of(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a regular file"
    } else if t.is_fifo() {
        "a FIFO"
    } else {
        "not a socket"
    }
}

/// Starts a non-blocking connect to the unix socket at `path`: (descriptor, connected
/// at once), or the errno with the descriptor closed. A unix connect never stays in
/// progress: it is done at once, or fails (EAGAIN: the server's backlog is full).
pub fn start_connect(path: &Path) -> std::result::Result<(i32, bool), i32> {
    let sa = socket2::SockAddr::unix(path).map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))?;
    // SAFETY: plain system calls on a descriptor this function owns until it returns it.
    unsafe {
        let fd = libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        );
        if fd < 0 {
            return Err(crate::net::socket::errno());
        }
        if libc::connect(fd, sa.as_ptr(), sa.len()) == 0 {
            return Ok((fd, true));
        }
        let e = crate::net::socket::errno();
        libc::close(fd);
        Err(e)
    }
}

/// A listening unix socket at `path`. A socket file left there by a server that is
/// gone (nothing accepts on it) is removed first; any other file, or a socket a live
/// server still listens on, is refused and left alone.
pub fn listen(path: &Path, backlog: i32) -> Result<std::os::unix::net::UnixListener> {
    let shown = path.display();
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(Error::usage(format!(
                "cannot listen on {PREFIX}{shown}: the path exists and is {}, not a socket (it is left alone)",
                kind_of(&meta.file_type())
            )));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(Error::usage(format!(
                "cannot listen on {PREFIX}{shown}: a server is listening there"
            )));
        }
        std::fs::remove_file(path).map_err(|e| {
            Error::usage(format!(
                "cannot remove the stale socket {shown}: {}",
                words(&e)
            ))
        })?;
    }
    let s = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM, None)
        .and_then(|s| {
            s.bind(&socket2::SockAddr::unix(path)?)?;
            s.listen(backlog)?;
            s.set_nonblocking(true)?;
            Ok(s)
        })
        .map_err(|e| Error::usage(format!("cannot listen on {PREFIX}{shown}: {}", words(&e))))?;
    Ok(std::os::unix::net::UnixListener::from(
        std::os::fd::OwnedFd::from(s),
    ))
}

/// The path of a `--listen` address that names a unix socket, refusing what cannot
/// go with one.
pub fn listen_path(text: &str) -> Result<Option<PathBuf>> {
    let Some(path) = path_of(text) else {
        return Ok(None);
    };
    if path.is_empty() {
        return Err(Error::usage(
            "--listen unix: needs a path (for example --listen unix:/tmp/echo.sock)",
        ));
    }
    Ok(Some(PathBuf::from(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_must_be_a_socket_and_a_listener_leaves_other_files_alone() {
        let dir = std::env::temp_dir().join(format!("wb-unix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("s.sock");
        let file = dir.join("plain");
        std::fs::write(&file, b"keep me").unwrap();
        let missing = target(dir.join("none").to_str().unwrap(), "TARGET")
            .unwrap_err()
            .to_string();
        assert!(missing.contains("cannot use unix socket"), "{missing}");
        let plain = target(file.to_str().unwrap(), "TARGET")
            .unwrap_err()
            .to_string();
        assert!(
            plain.ends_with("is not a unix socket (it is a regular file)"),
            "{plain}"
        );
        let refused = listen(&file, 16).unwrap_err().to_string();
        assert!(
            refused.contains("is a regular file, not a socket"),
            "{refused}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), b"keep me");

        let live = listen(&sock, 16).unwrap();
        assert!(matches!(
            target(sock.to_str().unwrap(), "TARGET"),
            Ok(Dest::Unix(_))
        ));
        let busy = listen(&sock, 16).unwrap_err().to_string();
        assert!(busy.contains("a server is listening there"), "{busy}");
        drop(live);
        // The socket file stays after its server is gone: stale, and taken over.
        assert!(sock.exists());
        let again = listen(&sock, 16).unwrap();
        let (fd, done) = start_connect(&sock).unwrap();
        assert!(done);
        crate::net::socket::close(fd);
        drop(again);
        let shown = Dest::Unix(Arc::from(sock.as_path())).to_string();
        assert_eq!(shown, format!("unix:{}", sock.display()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
