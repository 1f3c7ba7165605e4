//! How the C allocator hands out large buffers.
//!
//! glibc serves an allocation of 128 KiB or more with its own mmap, and returns it to
//! the system when freed, but raises that threshold (up to 32 MiB) each time such a
//! buffer is freed. A run whose connections grow replies of several MiB and are
//! dropped for the memory budget then reuses freed heap for the next ones and keeps
//! it: 32 connections fed endless replies under `--memory-budget 128m` peaked at
//! 215-250 MB of RSS, 126-151 MB with the threshold fixed. Fixing it keeps the budget
//! true of the process: a buffer of 1 MiB or more is mapped on its own, grown in place
//! by mremap (never old and new side by side) and unmapped when freed. Smaller ones,
//! every per-connection buffer of an ordinary run, stay on the heap as before.

/// The size from which a buffer is mapped on its own.
const MMAP_THRESHOLD: i32 = 1 << 20;

/// Fixes glibc's mmap threshold; elsewhere nothing to do. Call before any thread starts.
pub fn map_large_buffers_alone() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets an allocator parameter; called before threads start.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}
