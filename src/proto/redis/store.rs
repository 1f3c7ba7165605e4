//! `serve redis`'s keyspace: one store per server thread, 16 databases of string
//! keys and values, and the thread's scratch list of argument ranges.
//!
//! Per thread, not shared: a thread's connections are served one after another by its
//! event loop, so the store needs no lock and no atomic (as Redis's own single thread
//! needs none). The price: two connections the kernel spreads over two server threads
//! (SO_REUSEPORT) see two keyspaces, so a GET on one may miss a SET made on the other;
//! with `--threads 1` (and `--processes 1`) there is one keyspace, as in Redis. A
//! benchmark of the server's command path is unaffected; a test that reads back what
//! another connection wrote uses one thread.

use super::codec::Args;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Databases `SELECT` may choose, as Redis's default `databases 16`.
pub const DATABASES: usize = 16;

/// Most bytes one thread's store holds (keys and values, plus 64 bytes per entry for
/// the map's own): a SET that would go past it is refused with `-OOM`, as Redis refuses
/// writes past `maxmemory`.
pub const MAX_STORE_BYTES: usize = 512 << 20;

/// Per-entry overhead counted against the cap.
const ENTRY_OVERHEAD: usize = 64;

/// FxHash (rustc's): keys here are short and chosen by the benchmark, not by an
/// attacker who could aim collisions at a shared service.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    /// Folds the high bits down (murmur3's fmix64): a multiply carries a byte's
    /// change only upwards, and keys such as `key:000000001234` differ in their last
    /// bytes, which land in the high bits; the map indexes buckets by the low bits, so
    /// without this every such key would share a bucket chain.
    #[inline]
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }
}

pub type Map = HashMap<Vec<u8>, Vec<u8>, BuildHasherDefault<FxHasher>>;

/// One thread's keyspace and scratch.
pub struct Thread {
    /// `MAX_STORE_BYTES` (smaller in tests).
    pub cap: usize,
    pub dbs: [Map; DATABASES],
    /// Bytes counted against `MAX_STORE_BYTES`.
    pub bytes: usize,
    /// The argument ranges of the request being served (reused, never shrunk).
    pub args: Args,
    /// Connections that said HELLO (their `id` in its reply).
    pub hellos: u64,
}

impl Default for Thread {
    fn default() -> Self {
        Thread {
            cap: MAX_STORE_BYTES,
            dbs: Default::default(),
            bytes: 0,
            args: Args::new(),
            hellos: 0,
        }
    }
}

impl Thread {
    /// Sets `key` to `value` in `db`; false when the cap refuses it. Overwriting a key
    /// reuses its value's allocation when it is large enough.
    pub fn set(&mut self, db: usize, key: &[u8], value: &[u8]) -> bool {
        let map = &mut self.dbs[db];
        if let Some(v) = map.get_mut(key) {
            let grown = value.len().saturating_sub(v.len());
            if self.bytes + grown > self.cap {
                return false;
            }
            self.bytes = self.bytes + value.len() - v.len();
            v.clear();
            v.extend_from_slice(value);
            return true;
        }
        let add = key.len() + value.len() + ENTRY_OVERHEAD;
        if self.bytes + add > self.cap {
            return false;
        }
        self.bytes += add;
        map.insert(key.to_vec(), value.to_vec());
        true
    }

    /// Removes `key` from `db`; whether it was there.
    pub fn del(&mut self, db: usize, key: &[u8]) -> bool {
        match self.dbs[db].remove(key) {
            Some(v) => {
                self.bytes -= key.len() + v.len() + ENTRY_OVERHEAD;
                true
            }
            None => false,
        }
    }

    /// Empties `db`.
    pub fn flush(&mut self, db: usize) {
        let freed: usize = self.dbs[db]
            .iter()
            .map(|(k, v)| k.len() + v.len() + ENTRY_OVERHEAD)
            .sum();
        self.bytes -= freed;
        self.dbs[db] = Map::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_differ_in_their_last_digits_spread_over_buckets() {
        use std::hash::BuildHasher;
        let b = BuildHasherDefault::<FxHasher>::default();
        let low: std::collections::BTreeSet<u64> = (0..1000u64)
            .map(|k| b.hash_one(format!("key:{k:012}").as_bytes()) & 1023)
            .collect();
        // 1000 keys into 1024 buckets: about 630 distinct if uniform; all in one before.
        assert!(low.len() > 550, "{}", low.len());
    }

    #[test]
    fn sets_overwrite_delete_and_count_bytes() {
        let mut t = Thread::default();
        assert!(t.set(0, b"k", b"abc"));
        assert_eq!(t.bytes, 1 + 3 + ENTRY_OVERHEAD);
        assert!(t.set(0, b"k", b"a"));
        assert_eq!(t.bytes, 1 + 1 + ENTRY_OVERHEAD);
        assert!(t.set(1, b"k", b"zz"));
        assert_eq!(t.dbs[0].get(&b"k"[..]).map(Vec::as_slice), Some(&b"a"[..]));
        assert!(t.del(0, b"k"));
        assert!(!t.del(0, b"k"));
        t.flush(1);
        assert_eq!(t.bytes, 0);
        // Past the cap: refused, nothing counted.
        t.cap = 100;
        assert!(!t.set(0, b"big", &[0u8; 40]));
        assert!(t.set(0, b"ok", &[0u8; 30]));
        assert!(!t.set(0, b"ok", &[0u8; 40]));
        assert_eq!(t.bytes, 2 + 30 + ENTRY_OVERHEAD);
    }
}
