//! Values inserted and removed by slot (a server's connections), with a generation
//! per slot so an event or timer meant for a closed connection never reaches the one
//! that reuses its slot. A token (`reactor::token`) packs both into the u64 epoll
//! hands back. (A load worker's slots are fixed, one per connection it keeps open,
//! and each keeps its own generation: a `Vec`, indexed by the same tokens.)

use super::token::{split, token};

pub struct Slab<T> {
    slots: Vec<(u32, Option<T>)>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Slab<T> {
    pub fn new() -> Slab<T> {
        Slab::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Stores `v`; returns its token.
    pub fn insert(&mut self, v: T) -> u64 {
        self.len += 1;
        match self.free.pop() {
            Some(i) => {
                let s = &mut self.slots[i as usize];
                // Generations stay below 2^30 so tokens stay below OWN_TOKENS.
                s.0 = (s.0 + 1) & 0x3FFF_FFFF;
                s.1 = Some(v);
                token(i, s.0)
            }
            None => {
                let i = self.slots.len() as u32;
                self.slots.push((0, Some(v)));
                token(i, 0)
            }
        }
    }

    #[inline]
    pub fn get_mut(&mut self, tok: u64) -> Option<&mut T> {
        let (slot, gen) = split(tok);
        match self.slots.get_mut(slot as usize) {
            Some((g, Some(v))) if *g == gen => Some(v),
            _ => None,
        }
    }

    pub fn remove(&mut self, tok: u64) -> Option<T> {
        let (slot, gen) = split(tok);
        match self.slots.get_mut(slot as usize) {
            Some((g, v @ Some(_))) if *g == gen => {
                self.free.push(slot);
                self.len -= 1;
                v.take()
            }
            _ => None,
        }
    }

    /// Every stored value with its token.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &T)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, (g, v))| v.as_ref().map(|v| (token(i as u32, *g), v)))
    }

    /// The tokens of every stored value.
    pub fn tokens(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, (_, v))| v.is_some())
            .map(|(i, (g, _))| token(i as u32, *g))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reactor::token::OWN_TOKENS;

    #[test]
    fn a_reused_slot_refuses_the_old_token() {
        let mut s = Slab::new();
        let a = s.insert(1);
        let b = s.insert(2);
        assert_eq!(s.remove(a), Some(1));
        let c = s.insert(3);
        assert_eq!(c as u32, a as u32, "slot reused");
        assert_eq!(s.get_mut(a), None);
        assert_eq!(s.get_mut(c), Some(&mut 3));
        assert_eq!(s.remove(a), None);
        assert_eq!(s.len(), 2);
        assert_eq!(s.tokens().collect::<Vec<_>>(), vec![c, b]);
        assert!(c < OWN_TOKENS);
    }
}
