//! The big pruning tables of the optimal solver, each holding for every position the depth mod
//! 3 (2 bits) of a goal inside phase 1's, so that their depths are never smaller than phase 1's:
//!
//! - the **huge** table (seed 001, section 12): the four UD-slice edges home in order
//!   (UDSliceSorted = 0) and every corner and edge oriented (twist = flip = 0), on average about
//!   one move deeper than phase 1. Layout: `index = (2048 * class + flip') * 2187 + twist'`,
//!   where `class` (0..788) is the UDSliceSorted sym-class under the 16 symmetries of D4h, and
//!   `flip'`, `twist'` are the flip and twist of the cube conjugated by the symmetry that takes
//!   its UDSliceSorted to the class representative. 3,529,433,088 entries (882 MB).
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

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use rayon::prelude::*;

use crate::coord::{N_FLIP, N_PERM_4, N_SLICE, N_TWIST, N_UD_CORNERS};
use crate::cubie::CubieCube;
use crate::moves::N_MOVE;
use crate::movetable::{CoordTables, SymReduction};
use crate::prune::{ProgressFn, N_FLIPSLICE_CLASSES};
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

/// Counts the entries holding each 2-bit value.
fn count_values(t: &[AtomicU8]) -> [u64; 4] {
    let mut per_byte = [[0u8; 4]; 256];
    for (b, counts) in per_byte.iter_mut().enumerate() {
        for k in 0..4 {
            counts[(b >> (2 * k)) & 3] += 1;
        }
    }
    t.par_chunks(1 << 22)
        .map(|part| {
            let mut local = [0u64; 4];
            for b in part {
                let pc = per_byte[b.load(Relaxed) as usize];
                for v in 0..4 {
                    local[v] += pc[v] as u64;
                }
            }
            local
        })
        .reduce(|| [0; 4], |a, b| std::array::from_fn(|v| a[v] + b[v]))
}

/// Builds a mod-3 table over `space` breadth-first on all cores: forward from the positions at
/// the current depth while fewer than a third of the entries are filled, then backward (every
/// empty entry looks for a neighbour at the current depth). Returns the packed table (2 bits
/// per entry, depth mod 3) and the number of entries at each depth. Memory: the table plus a
/// few hundred KB per thread.
///
/// With `floors`, each group of [`GROUP`] entries gets its least depth's excess over the
/// group's base ([`GroupExcess`]), which the table's residues alone do not tell.
pub(crate) fn build<S: Space>(
    space: &S,
    name: &str,
    progress: ProgressFn<'_>,
    mut floors: Option<&mut GroupExcess<'_>>,
) -> (Vec<u8>, Vec<u64>) {
    let (classes, rows, inner) = (space.classes(), S::ROWS, S::INNER);
    let n = classes * rows * inner;
    assert_eq!(n % 4, 0, "whole bytes of entries");
    let mut bytes = vec![0xFFu8; n / 4];
    bytes[0] &= !3; // the goal: depth 0
    let table = as_atomic(&mut bytes);
    if let Some(floors) = floors.as_deref_mut() {
        assert_eq!(floors.groups() * GROUP, n, "2 bits per group");
        floors.reach_goal();
    }
    let mut dist = vec![1u64];
    let mut filled = 1u64;
    // entries holding each value before the pass (depth mod 3; 3 = empty)
    let mut counts = [1u64, 0, 0, n as u64 - 1];
    let mut depth = 0u32;
    while filled < n as u64 {
        let cur = (depth % 3) as u8;
        let nxt = ((depth + 1) % 3) as u8;
        let backward = filled * 3 > n as u64;
        // one rayon task per class: a thread that finishes its share takes half of another's rest
        (0..classes).into_par_iter().for_each(|c| {
            thread_local! {
                static MOVES: std::cell::RefCell<Option<ClassMoves>> = const { std::cell::RefCell::new(None) };
            }
            MOVES.with(|mv| {
                let mut mv = mv.borrow_mut();
                let mv = match &mut *mv {
                    Some(mv) if mv.row.len() == N_MOVE * rows => mv,
                    other => other.insert(ClassMoves::new(rows)),
                };
                space.fill(c, mv);
                let mut ts: Vec<u16> = Vec::with_capacity(inner);
                for r in 0..rows {
                    let base = (rows * c + r) * inner;
                    ts.clear();
                    let want = if backward { EMPTY2 } else { cur };
                    ts.extend(
                        (0..inner as u16).filter(|&t| aget(table, base + t as usize) == want),
                    );
                    if ts.is_empty() {
                        continue;
                    }
                    for m in 0..N_MOVE {
                        let y1 = mv.class[m];
                        let r1 = mv.row[rows * m + r] as usize;
                        let base1 = (rows * y1 + r1) * inner;
                        let tw = space.inner_moves(m, mv.sym[m], r);
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
                            let fixed = space.stabilizer(y1);
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
                                    let r2 = space.row_conj(y1, r1, s);
                                    let t2 = space.inner_conj(r1, t1, s);
                                    let i2 = (rows * y1 + r2) * inner + t2;
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
        if let Some(floors) = floors.as_deref_mut() {
            floors.mark(table, nxt, depth as u8);
        }
        progress(name, filled, n as u64);
    }
    (bytes, dist)
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
    /// base.len()` consecutive groups.
    pub fn new(groups: usize, base: &'a [u8]) -> Self {
        assert!(groups.is_multiple_of(4), "whole bytes of codes");
        assert!(
            !base.is_empty() && groups.is_multiple_of(base.len()),
            "whole runs of groups per base"
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

    /// After the pass that reached `depth` (whose residue is `value`): every unreached group
    /// holding an entry of residue `value` gets its code. Such a group had no entry at any
    /// smaller depth, so its entries of that residue were reached in this pass.
    fn mark(&mut self, table: &[AtomicU8], value: u8, depth: u8) {
        const CHUNK: usize = 1 << 18;
        let pattern = 0x5555u16 * value as u16;
        let (base, per_base) = (self.base, self.per_base);
        self.below += self
            .codes
            .par_chunks_mut(CHUNK)
            .enumerate()
            .map(|(i, part)| {
                let mut below = 0;
                for (j, byte) in part.iter_mut().enumerate() {
                    for k in 0..4 {
                        if (*byte >> (2 * k)) & 3 != Self::UNREACHED {
                            continue;
                        }
                        let g = 4 * (i * CHUNK + j) + k;
                        let word = u16::from_le_bytes([
                            table[2 * g].load(Relaxed),
                            table[2 * g + 1].load(Relaxed),
                        ]);
                        // a field equal to `value` becomes 00: no bit set in either of its bits
                        let x = word ^ pattern;
                        if (x | (x >> 1)) & 0x5555 == 0x5555 {
                            continue;
                        }
                        let floor = base[g / per_base];
                        let code = if depth < floor {
                            below += 1;
                            0
                        } else {
                            (depth - floor).min(Self::MAX_EXCESS)
                        };
                        *byte &= !((Self::UNREACHED ^ code) << (2 * k));
                    }
                }
                below
            })
            .sum::<u64>();
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
        let mut bytes = vec![0xFFu8; 8 * GROUP / 4];
        let set = |bytes: &mut [u8], i: usize, v: u8| {
            bytes[i / 4] &= !(3 << (2 * (i % 4)));
            bytes[i / 4] |= v << (2 * (i % 4));
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
