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

    /// The flip conjugation used by [`HugeTable::index`].
    pub fn flip_conj(&self) -> &FlipConj {
        &self.flip_conj
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
