//! A server that falls behind is not fooled by its own clock: peers in the middle of a
//! request reset while the server is stopped (SIGSTOP, as a thread starved of CPU by a
//! busy machine is, for seconds) past both its timeouts; when it runs again, their
//! resets are still queued (epoll's ready list, io_uring's completions) behind a clock
//! that says every deadline passed. Each is closed as the reset it is, on either loop:
//! no timeout is counted, every byte sent is read.

use crate::server_timeouts::served_on;
use std::io::Write;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// A POST's head and 5 of its 64 body bytes: the server is in the body when the reset
/// comes, where the idle timeout (not the head's) applies.
const HALF_POST: &[u8] = b"POST / HTTP/1.1\r\nHost: r\r\nContent-Length: 64\r\n\r\nxxxxx";
const PEERS: u64 = 500;

/// Closes `s` with SO_LINGER 0: a reset.
fn reset(s: TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and a linger of the size given.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "SO_LINGER");
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: a signal to the server this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0, "kill {sig}");
}

/// The number after `label` in the server's final counters line.
fn counter(line: &str, label: &str) -> u64 {
    let at = line
        .find(&format!(" {label} "))
        .unwrap_or_else(|| panic!("no {label:?} in {line}"));
    let digits: String = line[at + label.len() + 2..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(|c| *c != ',')
        .collect();
    digits.parse().unwrap_or_else(|_| panic!("{label}: {line}"))
}

#[test]
fn resets_queued_while_the_server_was_stopped_are_not_timeouts() {
    for loop_ in ["", "epoll"] {
        let mut server = served_on(
            loop_,
            "http",
            &[
                "--threads",
                "1",
                "--idle-timeout",
                "2s",
                "--header-timeout",
                "1s",
            ],
        );
        let addr = server.addr();
        let peers: Vec<TcpStream> = (0..PEERS)
            .map(|_| {
                let mut s = TcpStream::connect(&addr).expect("connect to the server");
                s.write_all(HALF_POST).expect("half a request");
                s
            })
            .collect();
        // Not an assertion: most heads are read before the stop; any that is not is
        // read after it, and a missed reset then shows as a head timeout instead.
        std::thread::sleep(Duration::from_millis(500));
        let pid = server.proc.pid();
        signal(pid, libc::SIGSTOP);
        peers.into_iter().for_each(reset);
        // Stopped past both timeouts (each fires at most a tenth of itself late).
        std::thread::sleep(Duration::from_secs(3));
        signal(pid, libc::SIGCONT);
        std::thread::sleep(Duration::from_secs(3));
        let last = server.stop_final_line();
        assert_eq!(counter(&last, "accepts"), PEERS, "loop {loop_:?}: {last}");
        assert_eq!(counter(&last, "closes"), PEERS, "loop {loop_:?}: {last}");
        assert_eq!(
            counter(&last, "in"),
            PEERS * HALF_POST.len() as u64,
            "loop {loop_:?}: {last}"
        );
        assert!(
            !last.contains(" timeouts "),
            "loop {loop_:?}: a reset connection was timed out: {last}"
        );
    }
}
