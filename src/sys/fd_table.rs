//! A thread's own descriptor table, for a thread that owns every descriptor it uses.
//!
//! Every system call on a descriptor looks it up in its thread's table (the kernel's
//! `fdget`). While that table is shared by more than one thread, as a process's is by
//! all its threads, each lookup also takes and drops a reference on the file: two
//! atomic operations per call (`fdget` and `fput`, 1.8% of the echo client's CPU at
//! 100 connections x 16 in flight, `perf` on this VM; the C client, one thread, pays
//! none). A load worker creates its epoll and every socket itself, so it can have a
//! table of its own: `unshare(CLONE_FILES)` gives the thread a copy, and the copy's
//! references to the rest of the process's descriptors are closed at once (standard
//! input, output and error kept), so a socket another thread closes is closed, not held
//! open by the copy. The thread's descriptors close with it when it ends.

/// Gives the calling thread a table of its own holding only descriptors 0-2. Returns
/// false, changing nothing, where the kernel cannot (no `close_range`, before 5.9; or
/// `unshare` refused): the thread keeps sharing the process's table.
pub fn own_fd_table() -> bool {
    own_fd_table_keeping(&[])
}

/// Like `own_fd_table`, keeping also `keep` open in the thread's copy: descriptors the
/// process opened for this thread (a server thread's listeners). The process's table
/// still holds them too; once this returned true, the process closes its references
/// (the thread's copy keeps the files open).
pub fn own_fd_table_keeping(keep: &[i32]) -> bool {
    let mut keep: Vec<u32> = keep
        .iter()
        .filter(|&&fd| fd > 2)
        .map(|&fd| fd as u32)
        .collect();
    keep.sort_unstable();
    keep.dedup();
    // Probe close_range first (closing nothing: no descriptor is that high), so the
    // table is never unshared without a way to drop the copied references.
    // SAFETY: close_range and unshare act on this thread's descriptor table only, and
    // no descriptor of the copy is in use by this thread yet but those in `keep`,
    // which stay open.
    unsafe {
        if libc::syscall(libc::SYS_close_range, u32::MAX, u32::MAX, 0u32) != 0 {
            return false;
        }
        if libc::unshare(libc::CLONE_FILES) != 0 {
            return false;
        }
        // Close the gaps around the kept descriptors: [3, k0), (k0, k1), ..., (kn, MAX].
        let mut from = 3u32;
        for &k in &keep {
            if k > from && libc::syscall(libc::SYS_close_range, from, k - 1, 0u32) != 0 {
                return false;
            }
            from = k + 1;
        }
        libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_thread_with_its_own_table_sees_no_other_descriptor_and_keeps_none_open() {
        let (a, b) = UnixStream::pair().expect("socketpair");
        let fd = a.as_raw_fd();
        let (told, seen) = mpsc::channel();
        let (finish, finished) = mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            if !own_fd_table() {
                return told.send(None).expect("send");
            }
            // SAFETY: fcntl(F_GETFD) on a number only asks whether it is open.
            let open_here = unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0;
            // Its own descriptors work as usual.
            let (mut c, mut d) = UnixStream::pair().expect("own socketpair");
            c.write_all(b"y").expect("own write");
            let mut got = [0u8; 1];
            d.read_exact(&mut got).expect("own read");
            told.send(Some((open_here, got))).expect("send");
            // Alive, with its table, while the other thread closes its socket.
            let _ = finished.recv();
        });
        let Some((open_here, got)) = seen.recv().expect("thread") else {
            return t.join().expect("thread"); // a kernel that cannot: nothing to check
        };
        assert!(
            !open_here,
            "the copy of another thread's descriptor is closed"
        );
        assert_eq!(&got, b"y");
        // The process's table is untouched: the pair still talks.
        (&a).write_all(b"x").expect("write");
        let mut one = [0u8; 1];
        (&b).read_exact(&mut one).expect("read");
        assert_eq!(&one, b"x");
        // Closed in the process's table, it is closed: the live thread's copy does not
        // hold it open (the peer reads its end, not a timeout).
        drop(a);
        b.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut rest = Vec::new();
        (&b).read_to_end(&mut rest)
            .expect("end of stream, not a timeout");
        assert!(rest.is_empty());
        finish.send(()).expect("finish");
        t.join().expect("thread");
    }

    #[test]
    fn a_kept_descriptor_stays_open_in_the_copy_and_the_others_close() {
        let (kept, peer) = UnixStream::pair().expect("socketpair");
        let (other, _other_peer) = UnixStream::pair().expect("socketpair");
        let (k, o) = (kept.as_raw_fd(), other.as_raw_fd());
        let t = std::thread::spawn(move || {
            if !own_fd_table_keeping(&[k, 1, k]) {
                return None;
            }
            // SAFETY: fcntl(F_GETFD) on a number only asks whether it is open.
            let open = |fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0;
            // SAFETY: k is open in this thread's table (kept); writes one valid byte.
            let wrote = unsafe { libc::write(k, b"k".as_ptr().cast(), 1) };
            Some((open(k), open(o), open(1), wrote))
        });
        let Some((k_open, o_open, stdout_open, wrote)) = t.join().expect("thread") else {
            return; // a kernel that cannot: nothing to check
        };
        assert!(k_open && stdout_open, "kept and 0-2 stay open");
        assert!(!o_open, "every other copied descriptor is closed");
        assert_eq!(wrote, 1);
        let mut got = [0u8; 1];
        (&peer).read_exact(&mut got).expect("read");
        assert_eq!(&got, b"k");
        // The thread ended: its copy closed; the process's own descriptor still works.
        (&kept)
            .write_all(b"p")
            .expect("the process's copy is untouched");
        drop(other);
    }
}
