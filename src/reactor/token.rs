//! Epoll tokens: a slot's (slot, generation) in one u64, and the tokens above every
//! slot's that the reactor and its handlers keep for themselves. A leaf of its own,
//! so that the loop, the slab and the handlers read it without importing `mod.rs`.

/// Tokens at or above this are no slot's: the reactor's own (`STOP_TOKEN`) and the
/// handler's (a server's listeners). A slot's generation stays below 2^30 wherever it
/// registers a descriptor next to such tokens (`Slab`).
pub const OWN_TOKENS: u64 = 1 << 62;

/// The token of a stop eventfd (`Stop::Fd`).
pub const STOP_TOKEN: u64 = OWN_TOKENS;

/// The epoll token of generation `gen` of `slot`.
#[inline]
pub fn token(slot: u32, gen: u32) -> u64 {
    ((gen as u64) << 32) | slot as u64
}

/// (slot, generation) of a token.
#[inline]
pub fn split(token: u64) -> (u32, u32) {
    (token as u32, (token >> 32) as u32)
}
