//! The big pruning tables of the optimal solver, each holding for every position the depth mod
//! 3 (2 bits) of a goal inside phase 1's, so that their depths are never smaller than phase 1's:
//!
//! - the **huge** table (of Kociemba's "huge optimal solver" in Cube Explorer): the four
//!   UD-slice edges home in order (UDSliceSorted = 0) and every corner and edge oriented
//!   (twist = flip = 0), on average about one move deeper than phase 1. Layout:
//!   `index = (2048 * class + flip') * 2187 + twist'`, where `class` (0..788) is the
//!   UDSliceSorted sym-class under the 16 symmetries of D4h, and `flip'`, `twist'` are the flip
//!   and twist of the cube conjugated by the symmetry that takes its UDSliceSorted to the class
//!   representative. 3,529,433,088 entries (882 MB).
//! - the **giant** table (this project's): phase 1's goal with the four D-layer corners in the
//!   D layer as well (UDCorners = 0). Layout: `index = (70 * class + ud_corners') * 2187 +
//!   twist'`, where `class` (0..64430) is phase 1's FlipUDSlice sym-class and `ud_corners'`,
//!   `twist'` belong to the cube conjugated to the class representative. 9,863,588,700 entries
//!   (2.47 GB): the corners' positions, which neither phase 1 nor the huge table sees, in 2.8
//!   times the huge table's entries.
//!
//! - the **colossal** table ([`crate::colossal`]): nxopt's kind, three times the giant table.
//!
//! All are built by the same breadth-first search ([`build`] over a [`Space`]); the exact depth
//! is recovered by descending to the goal ([`crate::mod3::Mod3Table::depth`]) and then tracked
//! move by move ([`next_depth`]).
//!
//! The flip of a conjugated cube depends on where the slice edges are, not only on the flip:
//! a quarter turn symmetry about the UD axis flips exactly the slice edges. [`FlipConj`] holds
//! it, split into a part linear in the flip and a part depending on the slice positions.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

use rayon::prelude::*;

use crate::coord::{N_FLIP, N_PERM_4, N_SLICE, N_TWIST, N_UD_CORNERS};
use crate::cubie::CubieCube;
use crate::moves::N_MOVE;
use crate::movetable::{CoordTables, SymReduction};
use crate::prune::{ProgressFn, N_FLIPSLICE_CLASSES};
use crate::row256::{self, RowMap};
use crate::symmetry::{N_SYM_D4H, SYMMETRIES};

/// UDSliceSorted classes under the 16 symmetries of D4h.
pub const N_SLICE_SORTED_CLASSES: usize = 788;
/// Entries of the huge table: 788 x 2048 x 2187 = 3,529,433,088.
pub const N_HUGE: usize = N_SLICE_SORTED_CLASSES * N_FLIP * N_TWIST;
/// Entries of the giant table: 64430 x 70 x 2187 = 9,863,588,700.
pub const N_GIANT: usize = N_FLIPSLICE_CLASSES * N_UD_CORNERS * N_TWIST;
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

/// The giant table's index of a cube given its UDSlice (`0..495`), flip, twist and UDCorners.
#[inline]
pub fn giant_index(
    coords: &CoordTables,
    slice: usize,
    flip: usize,
    twist: usize,
    ud_corners: usize,
) -> usize {
    let sc = coords.flipslice_sym(slice, flip);
    let s = sc.sym();
    let u = coords.ud_corners_conj[N_SYM_D4H * ud_corners + s] as usize;
    let t = coords.twist_conj[N_SYM_D4H * twist + s] as usize;
    (N_UD_CORNERS * sc.class() + u) * N_TWIST + t
}

/// The 2-bit entry `i` of a packed table.
#[inline]
pub(crate) fn get2(bytes: &[u8], i: usize) -> u8 {
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

/// The coordinates a [`crate::mod3::Mod3Table`] is looked up by: UDSliceSorted (`< 11880`),
/// flip (`< 2048`), twist (`< 2187`) and UDCorners (`< 70`). The huge table reads the first
/// three, the giant table all but the order of the slice edges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mod3Coords {
    /// UDSliceSorted.
    pub slice_sorted: usize,
    /// Flip.
    pub flip: usize,
    /// Twist.
    pub twist: usize,
    /// UDCorners.
    pub ud_corners: usize,
}

impl Mod3Coords {
    /// The coordinates of `c`.
    pub fn of(c: &CubieCube) -> Mod3Coords {
        Mod3Coords {
            slice_sorted: c.slice_sorted(),
            flip: c.flip(),
            twist: c.twist(),
            ud_corners: c.ud_corners(),
        }
    }

    /// The coordinates after move `m`.
    #[inline]
    pub fn apply(self, coords: &CoordTables, m: usize) -> Mod3Coords {
        Mod3Coords {
            slice_sorted: coords.slice_sorted_move[N_MOVE * self.slice_sorted + m] as usize,
            flip: coords.flip_move[N_MOVE * self.flip + m] as usize,
            twist: coords.twist_move[N_MOVE * self.twist + m] as usize,
            ud_corners: coords.ud_corners_move[N_MOVE * self.ud_corners + m] as usize,
        }
    }
}

/// The number of entries at each depth `0..=13`, as Kociemba published them with his
/// description of Cube Explorer (in the repository's test vectors:
/// `tests/vectors/pruning-distributions.md`). A build is correct only if it reproduces these
/// exactly.
pub const HUGE_DISTRIBUTION: [u64; 14] = [
    1, 2, 12, 119, 1393, 17313, 215282, 2630385, 30783139, 311832366, 1735112058, 1436784881,
    12056109, 28,
];

/// A mod-3 table's entries as a build holds them: 2 bits each, entry `i` at bits `2 (i % 4)`
/// of byte `i / 4` (the file's packing), in 64-bit words so that the build reads 32 entries at
/// a time. `len` bytes; the last word's bytes past them are unused.
pub struct Packed {
    words: Vec<u64>,
    len: usize,
}

impl Packed {
    /// `len` bytes of empty entries ([`EMPTY2`]), in memory the kernel is asked to back with
    /// 2 MB pages (the build reads it at random: with 4 KB pages nearly every reading misses
    /// the TLB), first touched by all threads.
    fn empty(len: usize) -> Packed {
        let n = len.div_ceil(8);
        let mut words: Vec<u64> = Vec::with_capacity(n);
        advise_huge_pages(words.spare_capacity_mut());
        words.par_extend((0..n).into_par_iter().map(|_| u64::MAX));
        Packed { words, len }
    }
}

impl AsRef<[u8]> for Packed {
    fn as_ref(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }
}

impl AsMut<[u8]> for Packed {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.words)[..self.len]
    }
}

/// Asks the kernel to back `buf` (not touched yet) with transparent huge pages: only a hint.
fn advise_huge_pages<T>(buf: &mut [std::mem::MaybeUninit<T>]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        let start = buf.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(buf);
        let (from, to) = (
            start.next_multiple_of(HUGE_PAGE),
            end / HUGE_PAGE * HUGE_PAGE,
        );
        if from < to {
            // SAFETY: the range lies inside `buf`, and MADV_HUGEPAGE changes no contents.
            unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

const _: () = assert!(std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>());

/// Views a packed table's words as atomics so build threads can share it.
fn as_atomic(words: &mut [u64]) -> &[AtomicU64] {
    // SAFETY: AtomicU64 has the same size and bit validity as u64 and here the same alignment
    // (asserted above), and the exclusive borrow guarantees no other non-atomic access for the
    // lifetime of the returned slice.
    unsafe { &*(words as *mut [u64] as *const [AtomicU64]) }
}

/// Views a byte buffer as atomics so build threads can share it.
fn as_atomic_bytes(bytes: &mut [u8]) -> &[AtomicU8] {
    // SAFETY: AtomicU8 has the same size, alignment and bit validity as u8, and the exclusive
    // borrow guarantees no other non-atomic access for the lifetime of the returned slice.
    unsafe { &*(bytes as *mut [u8] as *const [AtomicU8]) }
}

/// The low bit of each of a word's 32 entries.
const LOW_BITS: u64 = 0x5555_5555_5555_5555;

/// Word `k` of a packed table: entries `32 k..32 k + 32`, entry `32 k + j` at bits `2 j`.
#[inline]
fn word(t: &[AtomicU64], k: usize) -> u64 {
    u64::from_le(t[k].load(Relaxed))
}

/// Bit `2 j` set where entry `j` of word `w` holds `v`; no other bit.
#[inline]
pub(crate) fn entries_equal(w: u64, v: u8) -> u64 {
    let x = w ^ (LOW_BITS * v as u64);
    !(x | (x >> 1)) & LOW_BITS
}

#[inline]
fn aget(t: &[AtomicU64], i: usize) -> u8 {
    ((word(t, i >> 5) >> ((i & 31) << 1)) & 3) as u8
}

/// Writes `v` into the entries of word `k` whose low bits `chosen` has ([`entries_equal`]'s
/// form), which hold `v` or [`EMPTY2`], from any thread: clearing bits is idempotent, and all
/// writers of one pass write the same value. Returns how many of them were empty before, so
/// that each entry a pass fills is counted by exactly one writer.
#[inline]
fn set_entries(t: &[AtomicU64], k: usize, chosen: u64, v: u8) -> u64 {
    let before = u64::from_le(t[k].fetch_and(u64::to_le(!(chosen * (3 ^ v) as u64)), Relaxed));
    (entries_equal(before, EMPTY2) & chosen).count_ones() as u64
}

/// Where the entries of one class go under each move: the target class `class[m]`, the
/// symmetry `sym[m]` that takes the moved representative to it, and `row[rows * m + r]`. The
/// neighbour of entry `(c, r, t)` under `m` is `(class[m], row[rows * m + r], t')` where `t'`
/// is the twist `t` moved by `m` and conjugated by `sym[m]` ([`TwistMoves`]).
pub(crate) struct ClassMoves {
    pub(crate) class: [usize; N_MOVE],
    pub(crate) sym: [usize; N_MOVE],
    pub(crate) row: Vec<u16>,
}

impl ClassMoves {
    fn new(rows: usize) -> Self {
        ClassMoves {
            class: [0; N_MOVE],
            sym: [0; N_MOVE],
            row: vec![0; N_MOVE * rows],
        }
    }
}

/// Every twist moved by `m` and conjugated by `s`: `get(m, s)[t]` (2.5 MB, computed once per
/// build instead of once per class).
struct TwistMoves(Vec<u16>);

impl TwistMoves {
    fn new(coords: &CoordTables) -> Self {
        let mut v = Vec::with_capacity(N_MOVE * N_SYM_D4H * N_TWIST);
        for m in 0..N_MOVE {
            for s in 0..N_SYM_D4H {
                v.extend((0..N_TWIST).map(|t| {
                    let t1 = coords.twist_move[N_MOVE * t + m] as usize;
                    coords.twist_conj[N_SYM_D4H * t1 + s]
                }));
            }
        }
        TwistMoves(v)
    }

    #[inline]
    fn get(&self, m: usize, s: usize) -> &[u16] {
        let at = (N_SYM_D4H * m + s) * N_TWIST;
        &self.0[at..at + N_TWIST]
    }
}

/// The entries of a mod-3 table: `classes` sym-classes of one coordinate, times `rows` values
/// of a second (raw) coordinate, times `inner` values of a third;
/// `index = (rows * class + row) * inner + inner_value`, the goal at index 0. Row and inner value are those of the cube
/// conjugated to its class representative.
pub(crate) trait Space: Sync {
    /// The first coordinate's reduction by the 16 symmetries of D4h.
    fn reduction(&self) -> &SymReduction;
    /// Sym-classes of the first coordinate.
    fn classes(&self) -> usize {
        self.reduction().classes()
    }
    /// Values of the row coordinate.
    const ROWS: usize;
    /// Values of the inner coordinate (a multiple of 4 or the product with the rows is).
    const INNER: usize;
    /// Fills `mv` with the moves of class `c`'s representative.
    fn fill(&self, c: usize, mv: &mut ClassMoves);
    /// The symmetries other than the identity that fix class `y`'s representative (bit `s`).
    fn stabilizer(&self, y: usize) -> u16 {
        self.reduction().self_sym[y] & !1
    }
    /// The row of `S_s * x * S_s^-1` for a cube `x` at class `y`'s representative with row `r`
    /// (`s` in `y`'s stabilizer).
    fn row_conj(&self, y: usize, r: usize, s: usize) -> usize;
    /// `inner_moves(m, s, r)[t]`: the inner value of an entry of row `r` with inner value `t`
    /// after move `m` and conjugation by `s`.
    fn inner_moves(&self, m: usize, s: usize, r: usize) -> &[u16];
    /// The inner value of `S_s * x * S_s^-1` for a cube `x` with row `r` and inner value `t`.
    fn inner_conj(&self, r: usize, t: usize, s: usize) -> usize;
    /// [`Space::inner_moves`] as a [`RowMap`], for spaces of 256 inner values whose backward
    /// passes read whole rows ([`Pass::pull_row`]); `None` for the others.
    fn row_map(&self, _m: usize, _s: usize, _r: usize) -> Option<&RowMap> {
        None
    }
}

/// The huge table's entries: UDSliceSorted class x flip x twist.
pub(crate) struct HugeSpace<'a> {
    coords: &'a CoordTables,
    flip_conj: FlipConj,
    twists: TwistMoves,
}

impl<'a> HugeSpace<'a> {
    pub(crate) fn new(coords: &'a CoordTables) -> Self {
        HugeSpace {
            coords,
            flip_conj: FlipConj::compute(),
            twists: TwistMoves::new(coords),
        }
    }
}

impl Space for HugeSpace<'_> {
    const ROWS: usize = N_FLIP;
    const INNER: usize = N_TWIST;

    fn reduction(&self) -> &SymReduction {
        &self.coords.slice_sorted_sym
    }

    fn fill(&self, c: usize, mv: &mut ClassMoves) {
        let coords = self.coords;
        let rep = coords.slice_sorted_sym.rep[c] as usize;
        for m in 0..N_MOVE {
            let ss1 = coords.slice_sorted_move[N_MOVE * rep + m] as usize;
            let sc = coords.slice_sorted_sym.sym[ss1];
            let (s, slice1) = (sc.sym(), ss1 / N_PERM_4);
            (mv.class[m], mv.sym[m]) = (sc.class(), s);
            for f in 0..N_FLIP {
                let f1 = coords.flip_move[N_MOVE * f + m] as usize;
                mv.row[N_FLIP * m + f] = self.flip_conj.conj(slice1, f1, s) as u16;
            }
        }
    }

    fn row_conj(&self, y: usize, r: usize, s: usize) -> usize {
        let slice = self.coords.slice_sorted_sym.rep[y] as usize / N_PERM_4;
        self.flip_conj.conj(slice, r, s)
    }

    fn inner_moves(&self, m: usize, s: usize, _: usize) -> &[u16] {
        self.twists.get(m, s)
    }

    fn inner_conj(&self, _: usize, t: usize, s: usize) -> usize {
        self.coords.twist_conj[N_SYM_D4H * t + s] as usize
    }
}

/// The giant table's entries: FlipUDSlice class x UDCorners x twist.
pub(crate) struct GiantSpace<'a> {
    coords: &'a CoordTables,
    twists: TwistMoves,
}

impl<'a> GiantSpace<'a> {
    pub(crate) fn new(coords: &'a CoordTables) -> Self {
        GiantSpace {
            coords,
            twists: TwistMoves::new(coords),
        }
    }
}

impl Space for GiantSpace<'_> {
    const ROWS: usize = N_UD_CORNERS;
    const INNER: usize = N_TWIST;

    fn reduction(&self) -> &SymReduction {
        &self.coords.flipslice
    }

    fn fill(&self, c: usize, mv: &mut ClassMoves) {
        let coords = self.coords;
        for m in 0..N_MOVE {
            let sc = coords.flipslice_class_move[N_MOVE * c + m];
            let s = sc.sym();
            (mv.class[m], mv.sym[m]) = (sc.class(), s);
            for u in 0..N_UD_CORNERS {
                let u1 = coords.ud_corners_move[N_MOVE * u + m] as usize;
                mv.row[N_UD_CORNERS * m + u] = coords.ud_corners_conj[N_SYM_D4H * u1 + s];
            }
        }
    }

    fn row_conj(&self, _: usize, r: usize, s: usize) -> usize {
        self.coords.ud_corners_conj[N_SYM_D4H * r + s] as usize
    }

    fn inner_moves(&self, m: usize, s: usize, _: usize) -> &[u16] {
        self.twists.get(m, s)
    }

    fn inner_conj(&self, _: usize, t: usize, s: usize) -> usize {
        self.coords.twist_conj[N_SYM_D4H * t + s] as usize
    }
}

/// Builds a mod-3 table over `space` breadth-first on all cores: forward from the positions at
/// the current depth while fewer than a third of the entries are filled, then backward (every
/// empty entry looks for a neighbour at the current depth); in a space that maps its rows
/// ([`Space::row_map`]), on a CPU that reads them fast ([`row256::fast`]), backward too from a
/// depth with more than [`WHOLE_ROW_READINGS`] entries per row, whole rows at a time. Rows are
/// scanned 32 entries to a word, and the rows a row's expansion reads are prefetched while the
/// row before it is expanded. Returns the packed table (2 bits per entry, depth mod 3) and the
/// number of entries at each depth. Memory: the table (and the space's own tables) plus a few
/// hundred KB per thread.
///
/// With `floors`, each group of [`GROUP`] entries gets its least depth's excess over the
/// group's base ([`GroupExcess`]), which the table's residues alone do not tell: each pass's
/// scan marks the groups holding an entry at its starting depth, and a last scan those of the
/// deepest.
pub(crate) fn build<S: Space>(
    space: &S,
    name: &str,
    progress: ProgressFn<'_>,
    mut floors: Option<&mut GroupExcess<'_>>,
) -> (Packed, Vec<u64>) {
    let (classes, rows, inner) = (space.classes(), S::ROWS, S::INNER);
    let n = classes * rows * inner;
    assert_eq!(n % 4, 0, "whole bytes of entries");
    let mut packed = Packed::empty(n / 4);
    packed.as_mut()[0] &= !3; // the goal: depth 0
    let table = as_atomic(&mut packed.words);
    if let Some(floors) = floors.as_deref_mut() {
        assert_eq!(floors.groups() * GROUP, n, "2 bits per group");
        assert_eq!(
            rows * inner % 32,
            0,
            "a class's groups fill whole bytes of codes"
        );
        floors.reach_goal();
    }
    let marks = floors.as_deref_mut().map(GroupExcess::marks);
    let row_maps =
        inner == row256::ROW_ENTRIES && row256::fast() && space.row_map(0, 0, 0).is_some();
    let mut dist = vec![1u64];
    let mut filled = 1u64;
    let mut below = 0;
    let mut depth = 0u32;
    while filled < n as u64 {
        let at_depth = dist[depth as usize];
        // reading whole rows, a backward pass costs a row's reading per entry row and move, a
        // forward one an entry's per entry at `depth` and move
        let backward = filled * 3 > n as u64
            || (row_maps && at_depth > (classes * rows) as u64 * WHOLE_ROW_READINGS);
        let pass = Pass {
            space,
            table,
            depth,
            cur: (depth % 3) as u8,
            nxt: ((depth + 1) % 3) as u8,
            backward,
            whole_rows: backward && row_maps,
            marks: marks.as_ref(),
        };
        // one rayon task per class: a thread that finishes its share takes half of another's rest
        let (added, below_start) = (0..classes)
            .into_par_iter()
            .map(|c| pass.class(c))
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        below += below_start;
        if added == 0 {
            break;
        }
        filled += added;
        depth += 1;
        dist.push(added);
        progress(name, filled, n as u64);
    }
    if let Some(floors) = floors {
        floors.below += below;
        floors.mark(table, (depth % 3) as u8, depth as u8);
    }
    (packed, dist)
}

/// Entries at the current depth per row above which a pass of a space that maps its rows
/// ([`Space::row_map`]) goes backward: a forward pass reads a neighbour per entry at that
/// depth, a backward one a neighbouring row per row, costlier by about this much.
const WHOLE_ROW_READINGS: u64 = 2;

/// One breadth-first pass of [`build`]: from the entries at depth `depth` (residue `cur`) to
/// those at `depth + 1` (residue `nxt`), forward (each entry at `depth` fills its empty
/// neighbours) or backward (each empty entry with a neighbour at `depth` is filled). Either way
/// the entries holding `cur` stay as they are during the pass, which the scans' marks rely on.
struct Pass<'a, S> {
    space: &'a S,
    table: &'a [AtomicU64],
    depth: u32,
    cur: u8,
    nxt: u8,
    backward: bool,
    /// Backward, with whole rows read at once ([`Space::row_map`]): the scans list only the
    /// first entry of a row to expand (the sign that it has one, and where to prefetch).
    whole_rows: bool,
    /// The groups' least depths: each group holding an entry at `depth` is marked as the
    /// pass's scan reads it.
    marks: Option<&'a Marks<'a>>,
}

/// A thread's scratch for [`Pass::class`], kept from class to class.
struct Scratch {
    mv: ClassMoves,
    /// The inner values of the row being expanded (`[0]`) and of the row scanned after it.
    ts: [Vec<u16>; 2],
    /// The inner values a backward row filled.
    found: Vec<u16>,
    /// Per word of a backward row, the low bits of the entries it filled.
    clear: Vec<u64>,
}

impl Scratch {
    fn new(rows: usize, inner: usize) -> Self {
        Scratch {
            mv: ClassMoves::new(rows),
            ts: [Vec::with_capacity(inner), Vec::with_capacity(inner)],
            found: Vec::with_capacity(inner),
            // the words a row of `inner` entries can overlap
            clear: vec![0; inner.div_ceil(32) + 1],
        }
    }
}

impl<S: Space> Pass<'_, S> {
    /// The pass over class `c`'s entries: how many it filled, and how many groups it marked
    /// below their base.
    fn class(&self, c: usize) -> (u64, u64) {
        thread_local! {
            static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
        }
        SCRATCH.with(|cell| {
            let mut cell = cell.borrow_mut();
            let s = match &mut *cell {
                Some(s) if s.mv.row.len() == N_MOVE * S::ROWS && s.clear.len() > S::INNER / 32 => s,
                other => other.insert(Scratch::new(S::ROWS, S::INNER)),
            };
            self.space.fill(c, &mut s.mv);
            let (mut added, mut below) = (0, 0);
            // each row is scanned, and its neighbours prefetched, one row before it is expanded
            for r in 0..=S::ROWS {
                if r < S::ROWS {
                    below += self.scan(c, r, &mut s.ts[1]);
                    self.prefetch(&s.mv, r, &s.ts[1]);
                }
                if r > 0 && !s.ts[0].is_empty() {
                    added += if self.whole_rows {
                        self.pull_row(c, r - 1, &s.mv)
                    } else if self.backward {
                        self.pull(c, r - 1, s)
                    } else {
                        self.push(r - 1, s)
                    };
                }
                s.ts.swap(0, 1);
            }
            (added, below)
        })
    }

    /// Lists in `out` the inner values of row `r` of class `c` to expand (empty entries
    /// backward, entries at `depth` forward), and marks the groups of the words it reads.
    /// Returns how many groups it marked below their base.
    fn scan(&self, c: usize, r: usize, out: &mut Vec<u16>) -> u64 {
        out.clear();
        let base = (S::ROWS * c + r) * S::INNER;
        let end = base + S::INNER;
        let want = if self.backward { EMPTY2 } else { self.cur };
        let mut below = 0;
        for k in base >> 5..=(end - 1) >> 5 {
            let w = word(self.table, k);
            if let Some(marks) = self.marks {
                below += marks.mark(k, entries_equal(w, self.cur), self.depth);
            }
            let first = 32 * k;
            let mut hits = entries_equal(w, want);
            if first < base {
                hits &= u64::MAX << (2 * (base - first));
            }
            if first + 32 > end {
                hits &= u64::MAX >> (2 * (first + 32 - end));
            }
            while hits != 0 {
                let j = hits.trailing_zeros() as usize / 2;
                out.push((first + j - base) as u16);
                hits &= hits - 1;
                if self.whole_rows {
                    hits = 0;
                }
            }
        }
        below
    }

    /// The entry of the neighbour under move `m` of inner value `t` of row `r` (of the class
    /// whose moves `mv` holds).
    #[inline]
    fn neighbour(&self, mv: &ClassMoves, r: usize, m: usize) -> (usize, &[u16]) {
        let r1 = mv.row[S::ROWS * m + r] as usize;
        let base1 = (S::ROWS * mv.class[m] + r1) * S::INNER;
        (base1, self.space.inner_moves(m, mv.sym[m], r))
    }

    /// Starts loading, under every move, the neighbour of the first of inner values `ts` of
    /// row `r`: for a row of 256 entries (64 bytes), all that its expansion reads from the
    /// table, and reading whole rows, their maps.
    fn prefetch(&self, mv: &ClassMoves, r: usize, ts: &[u16]) {
        let Some(&t) = ts.first() else { return };
        for m in 0..N_MOVE {
            let (base1, tw) = self.neighbour(mv, r, m);
            // a row of 256 entries is one cache line: no need to read where `t` goes
            let i1 = match S::INNER {
                row256::ROW_ENTRIES => base1,
                _ => base1 + tw[t as usize] as usize,
            };
            crate::prefetch(self.table, i1 >> 5);
            if self.whole_rows {
                if let Some(map) = self.space.row_map(m, mv.sym[m], r) {
                    map.prefetch();
                }
            }
        }
    }

    /// Fills entry `i` with `nxt`; 1 if this thread filled it, 0 if another did meanwhile.
    #[inline]
    fn set(&self, i: usize) -> u64 {
        set_entries(self.table, i >> 5, 1 << ((i & 31) << 1), self.nxt)
    }

    /// Forward: fills the empty neighbours of the entries of row `r` listed in `s.ts[0]`.
    fn push(&self, r: usize, s: &Scratch) -> u64 {
        let (mv, ts) = (&s.mv, &s.ts[0]);
        let mut added = 0;
        for m in 0..N_MOVE {
            let (y1, r1) = (mv.class[m], mv.row[S::ROWS * m + r] as usize);
            let (base1, tw) = self.neighbour(mv, r, m);
            let fixed = self.space.stabilizer(y1);
            for &t in ts {
                let t1 = tw[t as usize] as usize;
                let i1 = base1 + t1;
                if aget(self.table, i1) != EMPTY2 {
                    continue;
                }
                added += self.set(i1);
                // the same position seen through the symmetries that fix the class
                // representative
                let mut rest = fixed;
                while rest != 0 {
                    let s = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    let r2 = self.space.row_conj(y1, r1, s);
                    let t2 = self.space.inner_conj(r1, t1, s);
                    let i2 = (S::ROWS * y1 + r2) * S::INNER + t2;
                    if aget(self.table, i2) == EMPTY2 {
                        added += self.set(i2);
                    }
                }
            }
        }
        added
    }

    /// Backward, whole rows at once: fills the empty entries of row `r` of class `c` that have
    /// a neighbour at `depth`, reading each neighbouring row once for all of them
    /// ([`row256::matches`]), one write per word.
    fn pull_row(&self, c: usize, r: usize, mv: &ClassMoves) -> u64 {
        let row = |base: usize| -> [u64; 8] {
            std::array::from_fn(|k| word(self.table, (base >> 5) + k))
        };
        let base = (S::ROWS * c + r) * S::INNER;
        let mut empty = row256::matches(&row(base), &RowMap::IDENTITY, EMPTY2);
        let mut found = [0u64; 4];
        for m in 0..N_MOVE {
            let (base1, _) = self.neighbour(mv, r, m);
            let map = (self.space.row_map(m, mv.sym[m], r))
                .expect("whole rows are read only in spaces that map them");
            let hits = row256::matches(&row(base1), map, self.cur);
            let mut left = 0;
            for q in 0..4 {
                found[q] |= empty[q] & hits[q];
                empty[q] &= !hits[q];
                left |= empty[q];
            }
            if left == 0 {
                break;
            }
        }
        let mut added = 0;
        for k in 0..8 {
            let chosen = row256::spread_even((found[k / 2] >> (32 * (k % 2))) as u32);
            if chosen != 0 {
                added += set_entries(self.table, (base >> 5) + k, chosen, self.nxt);
            }
        }
        added
    }

    /// Backward: fills the empty entries of row `r` of class `c` listed in `s.ts[0]` that have
    /// a neighbour at `depth`, one write per word.
    fn pull(&self, c: usize, r: usize, s: &mut Scratch) -> u64 {
        let Scratch {
            mv,
            ts,
            found,
            clear,
        } = s;
        let ts = &mut ts[0];
        found.clear();
        for m in 0..N_MOVE {
            let (base1, tw) = self.neighbour(mv, r, m);
            ts.retain(|&t| {
                let hit = aget(self.table, base1 + tw[t as usize] as usize) == self.cur;
                if hit {
                    found.push(t);
                }
                !hit
            });
            if ts.is_empty() {
                break;
            }
        }
        if found.is_empty() {
            return 0;
        }
        let base = (S::ROWS * c + r) * S::INNER;
        let k0 = base >> 5;
        for &t in found.iter() {
            let i = base + t as usize;
            clear[(i >> 5) - k0] |= 1 << ((i & 31) << 1);
        }
        let mut added = 0;
        for (k, chosen) in clear.iter_mut().enumerate() {
            if *chosen != 0 {
                // other threads write here only where a neighbouring class shares the word
                added += set_entries(self.table, k0 + k, *chosen, self.nxt);
                *chosen = 0;
            }
        }
        added
    }
}

/// Entries per group of a mod-3 build's least depths ([`GroupExcess`]): the 8 entries of one
/// 16-bit word of the packed table.
pub const GROUP: usize = 8;

/// The least depth of every group of [`GROUP`] entries of a mod-3 build, kept as its excess
/// over a lower bound known before the build (the group's *base*, one per run of groups), in
/// 2 bits: 0, 1, 2 (2 or more), or [`GroupExcess::UNREACHED`]. A quarter of a byte per group
/// instead of a byte: for the colossal table 0.94 GB instead of 3.8 GB beside the 7.5 GB table
/// during its build.
///
/// Invariant: a group's code is [`GroupExcess::UNREACHED`] until the pass that first reaches
/// one of its entries, and then `min(depth - base, 2)`; a group first reached below its base
/// is counted in [`GroupExcess::below`] (its base was no lower bound: a bug), its code left 0.
pub struct GroupExcess<'a> {
    /// 2 bits per group, four groups to a byte, group `g` at bits `2 (g % 4)` of byte `g / 4`.
    codes: Vec<u8>,
    /// `base[g / per_base]`: the lower bound of the depths of group `g`'s entries.
    base: &'a [u8],
    /// Groups per base.
    per_base: usize,
    /// Groups first reached below their base.
    below: u64,
}

impl<'a> GroupExcess<'a> {
    /// The code of a group no pass has reached yet.
    pub const UNREACHED: u8 = 3;
    /// The largest excess a code holds: 2 means 2 or more.
    pub const MAX_EXCESS: u8 = 2;

    /// `groups` groups (a multiple of 4), all unreached, with one base per `groups /
    /// base.len()` consecutive groups (a multiple of 4: one base per byte of codes).
    pub fn new(groups: usize, base: &'a [u8]) -> Self {
        assert!(groups.is_multiple_of(4), "whole bytes of codes");
        assert!(
            !base.is_empty() && groups.is_multiple_of(4 * base.len()),
            "whole bytes of codes per base"
        );
        GroupExcess {
            codes: vec![0xFF; groups / 4],
            base,
            per_base: groups / base.len(),
            below: 0,
        }
    }

    /// How many groups there are.
    pub fn groups(&self) -> usize {
        4 * self.codes.len()
    }

    /// The codes, 2 bits per group, four to a byte (group `g` at bits `2 (g % 4)` of byte
    /// `g / 4`).
    pub fn codes(&self) -> &[u8] {
        &self.codes
    }

    /// How many groups were first reached below their base (0 unless the bases are wrong).
    pub fn below(&self) -> u64 {
        self.below
    }

    /// Group 0 holds the goal, depth 0.
    fn reach_goal(&mut self) {
        assert_eq!(self.base[0], 0, "the goal's base is 0");
        self.codes[0] &= !3;
    }

    /// The codes as the passes of a build mark them from all threads.
    fn marks(&mut self) -> Marks<'_> {
        Marks {
            codes: as_atomic_bytes(&mut self.codes),
            base: self.base,
            per_base: self.per_base,
        }
    }

    /// After the pass that reached `depth` (whose residue is `value`): every unreached group
    /// holding an entry of residue `value` gets its code. Such a group had no entry at any
    /// smaller depth, so its entries of that residue were reached in this pass.
    fn mark(&mut self, table: &[AtomicU64], value: u8, depth: u8) {
        let marks = self.marks();
        let below: u64 = (0..marks.codes.len())
            .into_par_iter()
            .with_min_len(1 << 16)
            .map(|k| marks.mark(k, entries_equal(word(table, k), value), depth as u32))
            .sum();
        self.below += below;
    }
}

/// [`GroupExcess`]'s codes as a build's threads mark them: byte `k` holds the codes of the
/// groups of the table's word `k` (entries `32 k..32 k + 32`), and the threads mark the groups
/// of disjoint words.
struct Marks<'a> {
    codes: &'a [AtomicU8],
    base: &'a [u8],
    per_base: usize,
}

impl Marks<'_> {
    /// Gives its code to each unreached group of word `k` that holds an entry at `depth`:
    /// `found` has bit `2 j` set where entry `32 k + j` is at `depth` (as [`entries_equal`]
    /// gives). Returns how many of them were reached below their base.
    #[inline]
    fn mark(&self, k: usize, found: u64, depth: u32) -> u64 {
        let byte = self.codes[k].load(Relaxed);
        // a group is unreached when both bits of its code are set
        if found == 0 || byte & (byte >> 1) & 0x55 == 0 {
            return 0;
        }
        let mut marked = byte;
        let mut below = 0;
        // the word's four groups share a base
        let floor = self.base[4 * k / self.per_base] as u32;
        for j in 0..4 {
            if (byte >> (2 * j)) & 3 != GroupExcess::UNREACHED || (found >> (16 * j)) & 0xFFFF == 0
            {
                continue;
            }
            let code = if depth < floor {
                below += 1;
                0
            } else {
                (depth - floor).min(GroupExcess::MAX_EXCESS as u32) as u8
            };
            marked &= !((GroupExcess::UNREACHED ^ code) << (2 * j));
        }
        self.codes[k].store(marked, Relaxed);
        below
    }
}

#[cfg(test)]
pub(crate) mod tests {
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

    /// A group's code is its least depth's excess over its base, from the pass that first
    /// reaches one of its entries (capped at 2); later entries of the same residue leave it
    /// alone, and a group reached below its base is counted.
    #[test]
    fn group_excess_marks_the_pass_that_first_reaches_a_group() {
        let mut bytes = vec![u64::MAX; 8 * GROUP / 32];
        let set = |words: &mut [u64], i: usize, v: u8| {
            let w = u64::from_le(words[i / 32]) & !(3 << (2 * (i % 32)));
            words[i / 32] = u64::to_le(w | (v as u64) << (2 * (i % 32)));
        };
        let code = |f: &GroupExcess<'_>, g: usize| (f.codes()[g / 4] >> (2 * (g % 4))) & 3;
        let codes = |f: &GroupExcess<'_>| (0..8).map(|g| code(f, g)).collect::<Vec<_>>();
        // groups 0-3 have base 0, groups 4-7 base 2
        let base = [0, 2];
        let mut floors = GroupExcess::new(8, &base);
        floors.reach_goal();
        set(&mut bytes, 0, 0);
        set(&mut bytes, GROUP + 1, 1);
        floors.mark(as_atomic(&mut bytes), 1, 1);
        assert_eq!(codes(&floors), [0, 1, 3, 3, 3, 3, 3, 3]);
        set(&mut bytes, GROUP + 2, 2);
        set(&mut bytes, 3 * GROUP - 1, 2);
        set(&mut bytes, 4 * GROUP, 2);
        floors.mark(as_atomic(&mut bytes), 2, 2);
        assert_eq!(codes(&floors), [0, 1, 2, 3, 0, 3, 3, 3]);
        set(&mut bytes, 2 * GROUP, 1);
        set(&mut bytes, 5 * GROUP + 3, 1);
        set(&mut bytes, 7 * GROUP + 7, 1);
        floors.mark(as_atomic(&mut bytes), 1, 4);
        assert_eq!(codes(&floors), [0, 1, 2, 3, 0, 2, 3, 2]);
        assert_eq!(floors.below(), 0);
        // a group reached below its base is counted
        let base = [0, 5];
        let mut floors = GroupExcess::new(8, &base);
        floors.mark(as_atomic(&mut bytes), 1, 4);
        assert_eq!(floors.below(), 2);
    }

    #[test]
    fn published_distribution_adds_up() {
        assert_eq!(HUGE_DISTRIBUTION.iter().sum::<u64>(), N_HUGE as u64);
        assert_eq!(N_HUGE % 4, 0);
        assert_eq!(N_GIANT % 4, 0);
    }

    /// A space's class moves (what the build follows) agree with the table's index of the
    /// moved cube (what the search reads), and so do the stabilizers' conjugates; the goal is
    /// entry 0. `at_rep(class, row, inner)` is a cube at the class representative.
    pub(crate) fn space_agrees_with_index<S: Space>(
        space: &S,
        index: impl Fn(&CubieCube) -> usize,
        at_rep: impl Fn(usize, usize, usize) -> CubieCube,
    ) {
        assert_eq!(index(&CubieCube::SOLVED), 0);
        let (classes, rows, inner) = (space.classes(), S::ROWS, S::INNER);
        let entry = |c: usize, r: usize, t: usize| (rows * c + r) * inner + t;
        let mut mv = ClassMoves::new(rows);
        let mut next = 99991u64;
        let mut rand = |n: usize| {
            next = next
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (next >> 33) as usize % n
        };
        for _ in 0..2000 {
            let (c, r, t) = (rand(classes), rand(rows), rand(inner));
            let x = at_rep(c, r, t);
            assert_eq!(index(&x), entry(c, r, t));
            space.fill(c, &mut mv);
            for m in 0..N_MOVE {
                let (y1, r1) = (mv.class[m], mv.row[rows * m + r] as usize);
                let t1 = space.inner_moves(m, mv.sym[m], r)[t] as usize;
                assert_eq!(index(&x.apply_move(Move::from_index(m))), entry(y1, r1, t1));
                let z = at_rep(y1, r1, t1);
                let mut fixed = space.stabilizer(y1);
                while fixed != 0 {
                    let s = fixed.trailing_zeros() as usize;
                    fixed &= fixed - 1;
                    let t2 = space.inner_conj(r1, t1, s);
                    assert_eq!(
                        index(&SYMMETRIES.conjugate(&z, s)),
                        entry(y1, space.row_conj(y1, r1, s), t2)
                    );
                }
            }
        }
    }

    #[test]
    fn huge_space_agrees_with_huge_index() {
        let coords = CoordTables::compute();
        let space = HugeSpace::new(&coords);
        space_agrees_with_index(
            &space,
            |c| {
                huge_index(
                    &coords,
                    &space.flip_conj,
                    c.slice_sorted(),
                    c.flip(),
                    c.twist(),
                )
            },
            |class, flip, twist| {
                let mut c = CubieCube::SOLVED;
                c.set_slice_sorted(coords.slice_sorted_sym.rep[class] as usize);
                c.set_flip(flip);
                c.set_twist(twist);
                c
            },
        );
    }

    #[test]
    fn giant_space_agrees_with_giant_index() {
        let coords = CoordTables::compute();
        space_agrees_with_index(
            &GiantSpace::new(&coords),
            |c| giant_index(&coords, c.slice(), c.flip(), c.twist(), c.ud_corners()),
            |class, ud_corners, twist| {
                let rep = coords.flipslice.rep[class] as usize;
                let mut c = CubieCube::SOLVED;
                c.set_slice_sorted(N_PERM_4 * (rep / N_FLIP));
                c.set_flip(rep % N_FLIP);
                c.set_ud_corners(ud_corners);
                c.set_twist(twist);
                c
            },
        );
    }
}
