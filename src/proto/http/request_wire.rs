//! A request set as the load sends it: every request encoded once into one buffer, the
//! weight table each connection walks, and per request what judges its response
//! (HEAD or not, the statuses it accepts, the substring its body must hold). Shared by
//! every connection of a run (`Arc`): choosing and sending a request allocates nothing.
//!
//! The weight table interleaves the requests in proportion to their weights (each
//! request's k-th place at (2k+1)/(2w) of the table), so any run of consecutive
//! places holds each request within one or two of its share. A connection starts at a
//! place of its own, from its id: a connection's worker and shard bits are mixed into
//! a seed, and its number within the worker added, so connections that send one
//! request each (`--no-keepalive`) walk the table in order and keep the weights
//! exactly, and shards (whose ids differ in their top bits) start apart.

use super::request_set::{reduced_weights, RequestSet};
use super::status::StatusSet;

/// A substring to find in a body that arrives in pieces: Knuth-Morris-Pratt, one
/// state per response (the length matched so far), nothing kept of the body.
#[derive(Debug)]
pub struct Needle {
    pattern: Box<[u8]>,
    /// `fail[i]`: the length of the longest proper border of `pattern[..=i]`.
    fail: Box<[u32]>,
}

impl Needle {
    pub fn new(pattern: &[u8]) -> Needle {
        let mut fail = vec![0u32; pattern.len()];
        let mut k = 0usize;
        for i in 1..pattern.len() {
            while k > 0 && pattern[i] != pattern[k] {
                k = fail[k - 1] as usize;
            }
            if pattern[i] == pattern[k] {
                k += 1;
            }
            fail[i] = k as u32;
        }
        Needle {
            pattern: pattern.into(),
            fail: fail.into(),
        }
    }

    /// Feeds `piece` from match state `state`; the new state, `len()` once found (it
    /// stays there).
    #[inline]
    pub fn feed(&self, mut state: u32, piece: &[u8]) -> u32 {
        let full = self.pattern.len() as u32;
        for &b in piece {
            if state == full {
                return full;
            }
            let mut k = state as usize;
            while k > 0 && self.pattern[k] != b {
                k = self.fail[k - 1] as usize;
            }
            if self.pattern[k] == b {
                k += 1;
            }
            state = k as u32;
        }
        state
    }

    pub fn pattern(&self) -> &[u8] {
        &self.pattern
    }

    pub fn pattern_len(&self) -> u32 {
        self.pattern.len() as u32
    }
}

/// A request set, encoded, with its weight table.
#[derive(Debug)]
pub struct WiredSet {
    bytes: Box<[u8]>,
    spans: Box<[(usize, usize)]>,
    heads: Box<[bool]>,
    accept: Box<[StatusSet]>,
    needles: Box<[Option<Needle>]>,
    table: Box<[u32]>,
}

impl WiredSet {
    /// `set` for the run: `-H` headers added to each request, `close` with
    /// `--no-keepalive`, `accept` the statuses a request without its own accepts.
    pub fn new(
        set: &RequestSet,
        extra: &[(String, String)],
        close: bool,
        accept: StatusSet,
    ) -> WiredSet {
        let mut bytes = Vec::new();
        let mut spans = Vec::with_capacity(set.entries.len());
        for r in set.encode(extra, close) {
            spans.push((bytes.len(), bytes.len() + r.len()));
            bytes.extend_from_slice(&r);
        }
        let e = &set.entries;
        WiredSet {
            bytes: bytes.into(),
            spans: spans.into(),
            heads: e.iter().map(|e| e.method == "HEAD").collect(),
            accept: e
                .iter()
                .map(|e| e.accept.as_ref().map_or(accept, |a| a.0))
                .collect(),
            needles: e
                .iter()
                .map(|e| e.body_contains.as_deref().map(Needle::new))
                .collect(),
            table: table(&reduced_weights(e)).into(),
        }
    }

    /// The encoded bytes of request `i`.
    #[inline]
    pub fn request(&self, i: u32) -> &[u8] {
        let (a, b) = self.spans[i as usize];
        &self.bytes[a..b]
    }

    #[inline]
    pub fn head(&self, i: u32) -> bool {
        self.heads[i as usize]
    }

    #[inline]
    pub fn accept(&self, i: u32) -> StatusSet {
        self.accept[i as usize]
    }

    #[inline]
    pub fn needle(&self, i: u32) -> Option<&Needle> {
        self.needles[i as usize].as_ref()
    }

    /// Request at place `at` of the weight table.
    #[inline]
    pub fn at(&self, at: u32) -> u32 {
        self.table[at as usize]
    }

    pub fn places(&self) -> u32 {
        self.table.len() as u32
    }

    /// Where connection `conn_id` starts in the table.
    pub fn start_of(&self, conn_id: u64) -> u32 {
        let seed = splitmix64(conn_id >> 40);
        let number = conn_id & ((1 << 40) - 1);
        (seed.wrapping_add(number) % self.table.len() as u64) as u32
    }
}

/// SplitMix64's finaliser: a seed per worker and shard.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The weight table: request i holds `weights[i]` places, its k-th at (2k+1)/(2w) of
/// the way (ties: the lower index first), compared exactly as fractions.
pub fn table(weights: &[u32]) -> Vec<u32> {
    let mut places: Vec<(u64, u64, u32)> = Vec::new();
    for (i, &w) in weights.iter().enumerate() {
        for k in 0..w as u64 {
            places.push((2 * k + 1, 2 * w as u64, i as u32));
        }
    }
    places.sort_by(|a, b| {
        (a.0 as u128 * b.1 as u128)
            .cmp(&(b.0 as u128 * a.1 as u128))
            .then(a.2.cmp(&b.2))
    });
    places.into_iter().map(|p| p.2).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_interleaves_by_weight() {
        let t = table(&[1, 2, 7]);
        assert_eq!(t.len(), 10);
        let count = |i| t.iter().filter(|&&x| x == i).count();
        assert_eq!((count(0), count(1), count(2)), (1, 2, 7));
        // Any 10 consecutive places (wrapping) hold the weights exactly; any 5 hold
        // each request within one of half its weight.
        for start in 0..10 {
            let window: Vec<u32> = (0..5).map(|k| t[(start + k) % 10]).collect();
            let n2 = window.iter().filter(|&&x| x == 2).count();
            assert!((3..=4).contains(&n2), "{t:?} from {start}");
        }
        assert_eq!(table(&[0, 3]), [1, 1, 1]);
    }

    #[test]
    fn a_needle_is_found_across_pieces() {
        let n = Needle::new(b"abab");
        let body = b"xxabaabababyy";
        for cut in 0..body.len() {
            let s = n.feed(0, &body[..cut]);
            assert_eq!(n.feed(s, &body[cut..]), 4, "cut {cut}");
        }
        assert!(n.feed(0, b"abaab") < 4);
    }
}
