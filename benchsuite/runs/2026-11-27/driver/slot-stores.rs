// Lookup cost of the two slot stores: the server's reactor::Slab (a generation per
// slot beside an Option<T>, checked by get_mut) against the load engine's Vec of fixed
// slots (each slot keeps its own generation; the handler indexes and compares).
use std::hint::black_box;
use std::time::Instant;

fn token(slot: u32, gen: u32) -> u64 { (gen as u64) << 32 | slot as u64 }
fn split(t: u64) -> (u32, u32) { (t as u32, (t >> 32) as u32) }

struct Slab<T> { slots: Vec<(u32, Option<T>)> }
impl<T> Slab<T> {
    #[inline(never)]
    fn get_mut(&mut self, tok: u64) -> Option<&mut T> {
        let (slot, gen) = split(tok);
        match self.slots.get_mut(slot as usize) {
            Some((g, Some(v))) if *g == gen => Some(v),
            _ => None,
        }
    }
}

#[derive(Clone)]
struct Engine<const N: usize> { gen: u32, state: u8, rest: [u64; N] }
#[derive(Clone)]
struct Plain<const N: usize> { state: u8, rest: [u64; N] }

#[inline(never)]
fn vec_get<const N: usize>(v: &mut Vec<Engine<N>>, tok: u64) -> Option<&mut Engine<N>> {
    let (slot, gen) = split(tok);
    v.get_mut(slot as usize).filter(|c| c.gen == gen)
}

fn rng(mut x: u64) -> impl FnMut() -> u64 { move || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x } }

fn bench<const N: usize>(n: usize, rounds: usize) {
    let mut slab = Slab { slots: (0..n).map(|_| (3u32, Some(Plain::<N> { state: 1, rest: [0; N] }))).collect() };
    let mut vec: Vec<Engine<N>> = (0..n).map(|_| Engine::<N> { gen: 3, state: 1, rest: [0; N] }).collect();
    let mut r = rng(0x9E3779B97F4A7C15);
    let toks: Vec<u64> = (0..1 << 16).map(|_| token((r() % n as u64) as u32, 3)).collect();
    let mut best = (f64::MAX, f64::MAX);
    for _ in 0..rounds {
        let t = Instant::now();
        for &k in &toks { if let Some(c) = slab.get_mut(black_box(k)) { c.state = c.state.wrapping_add(1); } }
        let a = t.elapsed().as_nanos() as f64 / toks.len() as f64;
        let t = Instant::now();
        for &k in &toks { if let Some(c) = vec_get(&mut vec, black_box(k)) { c.state = c.state.wrapping_add(1); } }
        let b = t.elapsed().as_nanos() as f64 / toks.len() as f64;
        best = (best.0.min(a), best.1.min(b));
    }
    println!("entry {:>3} B in slab ({:>3} B in vec), {:>9} slots: slab {:.2} ns, vec {:.2} ns per lookup (best of {rounds})",
        std::mem::size_of::<(u32, Option<Plain<N>>)>(), std::mem::size_of::<Engine<N>>(), n, best.0, best.1);
}

fn main() {
    for n in [100, 10_000, 1_000_000] {
        bench::<3>(n, 50);    // ~32-byte entries: a server connection
        bench::<19>(n, 50);   // ~160-byte entries: a load slot
    }
}
