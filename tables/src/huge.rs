//! The huge pruning table of the optimal solver: for every position, the number of moves needed
//! to bring the four UD-slice edges home in order (UDSliceSorted = 0) and orient every corner
//! and edge (twist = flip = 0). Its goal is a subgroup of phase 1's goal, so its depths are
//! never smaller than phase 1's and on average about one move larger (seed 001, section 12).
//!
//! Layout: `index = (2048 * class + flip') * 2187 + twist'`, where `class` (0..788) is the
//! UDSliceSorted sym-class under the 16 symmetries of D4h, and `flip'`, `twist'` are the flip
//! and twist of the cube conjugated by the symmetry that takes its UDSliceSorted to the class
//! representative. 3,529,433,088 entries of 2 bits holding the depth mod 3 (882 MB); the
//! exact depth is recovered by descending to the goal ([`HugeTable::depth`]) and then tracked
//! move by move ([`next_depth`]).
//!
//! The flip of a conjugated cube depends on where the slice edges are, not only on the flip:
//! a quarter turn symmetry about the UD axis flips exactly the slice edges. [`FlipConj`] holds
//! it, split into a part linear in the flip and a part depending on the slice positions.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering::Relaxed};

use memmap2::Mmap;

use crate::coord::{N_FLIP, N_PERM_4, N_SLICE, N_TWIST};
use crate::cubie::CubieCube;
use crate::error::Error;
use crate::file::{Table, TableKind};
use crate::moves::N_MOVE;
use crate::movetable::CoordTables;
use crate::prune::ProgressFn;
use crate::symmetry::{N_SYM_D4H, SYMMETRIES};

/// UDSliceSorted classes under the 16 symmetries of D4h.
pub const N_SLICE_SORTED_CLASSES: usize = 788;
/// Entries of the huge table: 788 x 2048 x 2187 = 3,529,433,088.
pub const N_HUGE: usize = N_SLICE_SORTED_CLASSES * N_FLIP * N_TWIST;
/// Bytes of the huge table's payload (4 entries of 2 bits per byte).
pub const HUGE_BYTES: usize = N_HUGE.div_ceil(4);
/// The 2-bit value of an entry not reached yet during a build.
const EMPTY2: u8 = 3;

/// The flip of `S_s * c * S_s^-1` for the 16 symmetries of D4h, from `c`'s flip and the
/// positions of its slice edges (UDSlice, `0..495`).
///
/// Invariant: `conj(slice, flip, s) = lin[16 * flip + s] ^ mask[16 * slice + s]`, which holds
/// because edge orientation under conjugation is linear over GF(2) in the orientations and
/// adds a constant per position that depends only on whether a slice edge sits there (checked
/// against the cubie level in the tests).
pub struct FlipConj {
    lin: Vec<u16>,
    mask: Vec<u16>,
}

impl FlipConj {
    /// Computes both parts from the cubie level (a few milliseconds).
    pub fn compute() -> FlipConj {
        let conj = |slice: usize, flip: usize, s: usize| {
            let mut c = CubieCube::SOLVED;
            c.set_slice_sorted(N_PERM_4 * slice);
            c.set_flip(flip);
            SYMMETRIES.conjugate(&c, s).flip() as u16
        };
        let mut lin = vec![0u16; N_FLIP * N_SYM_D4H];
        let mut mask = vec![0u16; N_SLICE * N_SYM_D4H];
        for s in 0..N_SYM_D4H {
            for f in 0..N_FLIP {
                lin[N_SYM_D4H * f + s] = conj(0, f, s);
            }
            let base = conj(0, 0, s);
            for sl in 0..N_SLICE {
                mask[N_SYM_D4H * sl + s] = conj(sl, 0, s) ^ base;
            }
        }
        FlipConj { lin, mask }
    }

    /// The flip of `S_s * c * S_s^-1` where `c` has its slice edges at `slice` (`0..495`) and
    /// flip `flip` (`0..2048`), `s < 16`.
    #[inline]
    pub fn conj(&self, slice: usize, flip: usize, s: usize) -> usize {
        (self.lin[N_SYM_D4H * flip + s] ^ self.mask[N_SYM_D4H * slice + s]) as usize
    }
}

/// The huge table's index of a cube given its UDSliceSorted (`0..11880`), flip and twist.
#[inline]
pub fn huge_index(
    coords: &CoordTables,
    fc: &FlipConj,
    slice_sorted: usize,
    flip: usize,
    twist: usize,
) -> usize {
    let sc = coords.slice_sorted_sym.sym[slice_sorted];
    let s = sc.sym();
    let f = fc.conj(slice_sorted / N_PERM_4, flip, s);
    let t = coords.twist_conj[N_SYM_D4H * twist + s] as usize;
    (N_FLIP * sc.class() + f) * N_TWIST + t
}

/// The 2-bit entry `i` of a packed table.
#[inline]
fn get2(bytes: &[u8], i: usize) -> u8 {
    (bytes[i >> 2] >> ((i & 3) << 1)) & 3
}

/// The exact depth of a neighbour whose entry (depth mod 3) is `mod3`, given the exact depth
/// `parent` of a position one move away (depths of neighbours differ by at most one).
#[inline]
pub fn next_depth(parent: u32, mod3: u8) -> u32 {
    match (mod3 as u32 + 3 - parent % 3) % 3 {
        0 => parent,
        1 => parent + 1,
        _ => parent - 1,
    }
}

/// The huge table, memory-mapped, with the flip conjugation it needs for lookups.
pub struct HugeTable {
    table: Table<Mmap>,
    flip_conj: FlipConj,
}

impl HugeTable {
    /// Maps `dir/huge.cft` if it exists (checking header and checksum); `Ok(None)` when there is
    /// no such file.
    pub fn load(dir: &std::path::Path) -> Result<Option<HugeTable>, Error> {
        match Table::open(dir, TableKind::Huge) {
            Ok(table) => {
                if table.header().entries != N_HUGE as u64 || table.payload().len() < HUGE_BYTES {
                    return Err(Error::BadTable {
                        path: dir.join(TableKind::Huge.file_name()),
                        reason: format!(
                            "has {} entries, expected {N_HUGE}; rebuild with `cubefleet tables build --huge`",
                            table.header().entries
                        ),
                    });
                }
                Ok(Some(HugeTable {
                    table,
                    flip_conj: FlipConj::compute(),
                }))
            }
            Err(Error::MissingTable(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Moves the table into private huge-page memory (see [`Table::into_private_hugepages`]):
    /// lookups spread over 882 MB miss the TLB far less often.
    pub fn into_private_hugepages(self) -> Result<HugeTable, Error> {
        Ok(HugeTable {
            table: self.table.into_private_hugepages()?,
            flip_conj: self.flip_conj,
        })
    }

    /// The flip conjugation used by [`HugeTable::index`].
    pub fn flip_conj(&self) -> &FlipConj {
        &self.flip_conj
    }

    /// The packed entries: entry `index` is in byte `index / 4` (for prefetching).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        self.table.payload()
    }

    /// The depth mod 3 (`0..3`) of entry `index < N_HUGE`.
    #[inline]
    pub fn mod3(&self, index: usize) -> u8 {
        get2(self.table.payload(), index)
    }

    /// The depth mod 3 of the cube with these coordinates.
    #[inline]
    pub fn mod3_of(
        &self,
        coords: &CoordTables,
        slice_sorted: usize,
        flip: usize,
        twist: usize,
    ) -> u8 {
        self.mod3(huge_index(
            coords,
            &self.flip_conj,
            slice_sorted,
            flip,
            twist,
        ))
    }

    /// The exact depth (`0..=13`) of the cube with these coordinates, found by walking to the
    /// goal: from depth `d` some move always leads to an entry holding `(d - 1) mod 3`.
    pub fn depth(
        &self,
        coords: &CoordTables,
        slice_sorted: usize,
        flip: usize,
        twist: usize,
    ) -> u32 {
        let (mut ss, mut f, mut t) = (slice_sorted, flip, twist);
        let mut depth = 0;
        // the goal is alone in its entry (index 0): conjugating it by any symmetry gives itself
        while huge_index(coords, &self.flip_conj, ss, f, t) != 0 {
            let cur = self.mod3_of(coords, ss, f, t);
            let want = (cur + 2) % 3;
            let step = (0..N_MOVE).find_map(|m| {
                let n = (
                    coords.slice_sorted_move[N_MOVE * ss + m] as usize,
                    coords.flip_move[N_MOVE * f + m] as usize,
                    coords.twist_move[N_MOVE * t + m] as usize,
                );
                (self.mod3_of(coords, n.0, n.1, n.2) == want).then_some(n)
            });
            match step {
                Some(n) => (ss, f, t) = n,
                // unreachable for a table that passed its checksum; the depth so far is still a
                // valid lower bound
                None => break,
            }
            depth += 1;
        }
        depth
    }
}

/// The published number of entries at each depth `0..=13` (seed 001, appendix; shared/vectors).
/// A build is correct only if it reproduces these exactly.
pub const HUGE_DISTRIBUTION: [u64; 14] = [
    1, 2, 12, 119, 1393, 17313, 215282, 2630385, 30783139, 311832366, 1735112058, 1436784881,
    12056109, 28,
];

/// Views a byte buffer as atomics so build threads can share it.
fn as_atomic(bytes: &mut [u8]) -> &[AtomicU8] {
    // SAFETY: AtomicU8 has the same size, alignment and bit validity as u8, and the exclusive
    // borrow guarantees no other non-atomic access for the lifetime of the returned slice.
    unsafe { &*(bytes as *mut [u8] as *const [AtomicU8]) }
}

#[inline]
fn aget(t: &[AtomicU8], i: usize) -> u8 {
    (t[i >> 2].load(Relaxed) >> ((i & 3) << 1)) & 3
}

/// Writes `v` into an entry that holds [`EMPTY2`] (both bits set), from any thread: clearing
/// bits is idempotent, and all writers of one pass write the same value.
#[inline]
fn aset_shared(t: &[AtomicU8], i: usize, v: u8) {
    let shift = (i & 3) << 1;
    t[i >> 2].fetch_and(!((3 ^ v) << shift), Relaxed);
}

/// Runs `work(class)` for every class on every core.
fn parallel_classes(n: usize, work: impl Fn(usize) + Sync) {
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let c = next.fetch_add(1, Relaxed);
                if c >= n {
                    break;
                }
                work(c);
            });
        }
    });
}

/// Where the entries of one class go under each move: `flip[m][f]`, `twist[m][t]` and the
/// target class `class[m]` (the neighbour of entry `(c, f, t)` under `m` is
/// `(class[m], flip[m][f], twist[m][t])`).
struct ClassMoves {
    class: [usize; N_MOVE],
    flip: Vec<u16>,
    twist: Vec<u16>,
}

impl ClassMoves {
    fn new() -> Self {
        ClassMoves {
            class: [0; N_MOVE],
            flip: vec![0; N_MOVE * N_FLIP],
            twist: vec![0; N_MOVE * N_TWIST],
        }
    }

    fn fill(&mut self, coords: &CoordTables, fc: &FlipConj, c: usize) {
        let rep = coords.slice_sorted_sym.rep[c] as usize;
        for m in 0..N_MOVE {
            let ss1 = coords.slice_sorted_move[N_MOVE * rep + m] as usize;
            let sc = coords.slice_sorted_sym.sym[ss1];
            let (s, slice1) = (sc.sym(), ss1 / N_PERM_4);
            self.class[m] = sc.class();
            for f in 0..N_FLIP {
                let f1 = coords.flip_move[N_MOVE * f + m] as usize;
                self.flip[N_FLIP * m + f] = fc.conj(slice1, f1, s) as u16;
            }
            for t in 0..N_TWIST {
                let t1 = coords.twist_move[N_MOVE * t + m] as usize;
                self.twist[N_TWIST * m + t] = coords.twist_conj[N_SYM_D4H * t1 + s];
            }
        }
    }
}

/// Counts the entries holding each 2-bit value.
fn count_values(t: &[AtomicU8]) -> [u64; 4] {
    let mut per_byte = [[0u8; 4]; 256];
    for (b, counts) in per_byte.iter_mut().enumerate() {
        for k in 0..4 {
            counts[(b >> (2 * k)) & 3] += 1;
        }
    }
    let chunk = 1 << 22;
    let total: std::sync::Mutex<[u64; 4]> = std::sync::Mutex::new([0; 4]);
    parallel_classes(t.len().div_ceil(chunk), |i| {
        let mut local = [0u64; 4];
        for b in &t[i * chunk..((i + 1) * chunk).min(t.len())] {
            let pc = per_byte[b.load(Relaxed) as usize];
            for v in 0..4 {
                local[v] += pc[v] as u64;
            }
        }
        let mut g = total.lock().unwrap_or_else(|e| e.into_inner());
        for v in 0..4 {
            g[v] += local[v];
        }
    });
    total.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Builds the huge table breadth-first on all cores: forward from the positions at the current
/// depth while fewer than a third of the entries are filled, then backward (every empty entry
/// looks for a neighbour at the current depth). Returns the packed table (2 bits per entry,
/// depth mod 3) and the number of entries at each depth, which the caller compares with
/// [`HUGE_DISTRIBUTION`]. Memory: the table (882 MB) plus a few hundred KB per thread.
pub fn build(coords: &CoordTables, progress: ProgressFn<'_>) -> (Vec<u8>, Vec<u64>) {
    let fc = FlipConj::compute();
    let mut bytes = vec![0xFFu8; HUGE_BYTES];
    bytes[0] &= !3; // the goal: depth 0
    let table = as_atomic(&mut bytes);
    let classes = coords.slice_sorted_sym.classes();
    let mut dist = vec![1u64];
    let mut filled = 1u64;
    // entries holding each value before the pass (depth mod 3; 3 = empty)
    let mut counts = [1u64, 0, 0, N_HUGE as u64 - 1];
    let mut depth = 0u32;
    while filled < N_HUGE as u64 {
        let cur = (depth % 3) as u8;
        let nxt = ((depth + 1) % 3) as u8;
        let backward = filled * 3 > N_HUGE as u64;
        parallel_classes(classes, |c| {
            thread_local! {
                static MOVES: std::cell::RefCell<ClassMoves> = std::cell::RefCell::new(ClassMoves::new());
            }
            MOVES.with(|mv| {
                let mv = &mut *mv.borrow_mut();
                mv.fill(coords, &fc, c);
                let rep_self = |y: usize| coords.slice_sorted_sym.self_sym[y] & !1;
                let mut ts: Vec<u16> = Vec::with_capacity(N_TWIST);
                for f in 0..N_FLIP {
                    let base = (N_FLIP * c + f) * N_TWIST;
                    ts.clear();
                    let want = if backward { EMPTY2 } else { cur };
                    ts.extend(
                        (0..N_TWIST as u16).filter(|&t| aget(table, base + t as usize) == want),
                    );
                    if ts.is_empty() {
                        continue;
                    }
                    for m in 0..N_MOVE {
                        let y1 = mv.class[m];
                        let f1 = mv.flip[N_FLIP * m + f] as usize;
                        let base1 = (N_FLIP * y1 + f1) * N_TWIST;
                        let tw = &mv.twist[N_TWIST * m..N_TWIST * (m + 1)];
                        if backward {
                            ts.retain(|&t| {
                                let i1 = base1 + tw[t as usize] as usize;
                                if aget(table, i1) == cur {
                                    // only this thread writes this class's entries in a
                                    // backward pass
                                    aset_shared(table, base + t as usize, nxt);
                                    false
                                } else {
                                    true
                                }
                            });
                            if ts.is_empty() {
                                break;
                            }
                        } else {
                            let fixed = rep_self(y1);
                            let slice_y1 = coords.slice_sorted_sym.rep[y1] as usize / N_PERM_4;
                            for &t in &ts {
                                let t1 = tw[t as usize] as usize;
                                let i1 = base1 + t1;
                                if aget(table, i1) != EMPTY2 {
                                    continue;
                                }
                                aset_shared(table, i1, nxt);
                                // the same position seen through the symmetries that fix the
                                // class representative
                                let mut rest = fixed;
                                while rest != 0 {
                                    let s = rest.trailing_zeros() as usize;
                                    rest &= rest - 1;
                                    let f2 = fc.conj(slice_y1, f1, s);
                                    let t2 = coords.twist_conj[N_SYM_D4H * t1 + s] as usize;
                                    let i2 = (N_FLIP * y1 + f2) * N_TWIST + t2;
                                    if aget(table, i2) == EMPTY2 {
                                        aset_shared(table, i2, nxt);
                                    }
                                }
                            }
                        }
                    }
                }
            });
        });
        let now = count_values(table);
        let added = now[nxt as usize] - counts[nxt as usize];
        counts = now;
        if added == 0 {
            break;
        }
        filled += added;
        depth += 1;
        dist.push(added);
        progress("huge", filled, N_HUGE as u64);
    }
    (bytes, dist)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moves::{Move, MoveSeq};

    #[test]
    fn flip_conjugation_agrees_with_cubies() {
        let fc = FlipConj::compute();
        let mut rng_state = 12345u64;
        let mut next = || {
            rng_state = rng_state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng_state >> 33) as usize
        };
        for _ in 0..2000 {
            let moves: Vec<Move> = (0..25).map(|_| Move::from_index(next() % N_MOVE)).collect();
            let c = CubieCube::from_moves(&moves);
            for s in 0..N_SYM_D4H {
                assert_eq!(
                    fc.conj(c.slice(), c.flip(), s),
                    SYMMETRIES.conjugate(&c, s).flip(),
                    "{} sym {s}",
                    MoveSeq(moves.clone())
                );
            }
        }
    }

    #[test]
    fn published_distribution_adds_up() {
        assert_eq!(HUGE_DISTRIBUTION.iter().sum::<u64>(), N_HUGE as u64);
        assert_eq!(N_HUGE % 4, 0);
    }
}
