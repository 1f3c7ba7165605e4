//! CPU time from getrusage(2): of the calling thread, of this process, and of the
//! children it has waited for.

use std::time::Duration;

/// User+system CPU time of the calling thread.
pub fn thread_cpu_time() -> Duration {
    cpu_time(libc::RUSAGE_THREAD)
}

/// User+system CPU time of this whole process (every thread) so far.
pub fn process_cpu_time() -> Duration {
    cpu_time(libc::RUSAGE_SELF)
}

/// User+system CPU time of every child this process has waited for (the suite's
/// generators: it takes the difference around each point).
pub fn children_cpu_time() -> Duration {
    cpu_time(libc::RUSAGE_CHILDREN)
}

/// User+system CPU time from getrusage(who); zero if the call fails.
fn cpu_time(who: libc::c_int) -> Duration {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: ru is valid writable memory for one rusage.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    if rc != 0 {
        return Duration::ZERO;
    }
    // SAFETY: getrusage succeeded and filled the struct.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_time_only_grows() {
        let a = process_cpu_time();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(x != 1);
        assert!(process_cpu_time() >= a);
        assert!(thread_cpu_time() <= process_cpu_time());
    }
}
