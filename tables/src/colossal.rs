//! The **colossal** table of the optimal solver (nxopt's kind of table, built here in this
//! project's mod-3 format): its goal is every corner oriented and the four D-layer corners in
//! the D layer (twist = 0, UDCorners = 0), the four UD-slice edges home in order
//! (UDSliceSorted = 0), and the eight U- and D-layer edges oriented. The orientation of the
//! slice edges is left out, so unlike the huge and giant tables' goals this one is *not* inside
//! phase 1's; every U and D turn keeps it, as the side choice of the search needs.
//!
//! Layout: `index = (11880 * class + slice_sorted') * 256 + eo8'`, where `class` (`0..9930`)
//! is the sym-class of the corners' coordinate `2187 * ud_corners + twist` under the 16
//! symmetries of D4h, and `slice_sorted'`, `eo8'` belong to the cube conjugated by the symmetry
//! that takes its corners to the class representative. `eo8` ([`eo8`]) packs the orientations
//! of the edges outside the slice edges' positions, in position order. 30,199,910,400 entries
//! (7.55 GB): three times the giant table's.
//!
//! The phase-1 depth is no lower bound of this table's depth, so the bounds that need one read
//! [`Floors`] instead: the least depth of each group of 16 entries, recorded by the build and
//! stored in a file of its own beside the table.

use crate::coord::{N_PERM_4, N_SLICE, N_SLICE_SORTED, N_TWIST, N_UD_CORNERS};
use crate::cubie::{CubieCube, N_EDGES};
use crate::file::Table;
use crate::huge::{ClassMoves, FlipConj, Mod3Coords, Space, GROUP};
use crate::moves::{Move, N_MOVE};
use crate::movetable::{CoordTables, SymCoord, SymReduction};
use crate::prune::{build_sym, SymSpace, ALL_MOVES};
use crate::symmetry::{N_SYM_D4H, SYMMETRIES};
use memmap2::Mmap;

/// Values of the corners' coordinate: `2187 * ud_corners + twist`.
pub const N_CORNER_COORD: usize = N_UD_CORNERS * N_TWIST;
/// Sym-classes of the corners' coordinate under the 16 symmetries of D4h.
pub const N_CORNER_CLASSES: usize = 9930;
/// Values of [`eo8`].
pub const N_EO8: usize = 256;
/// Entries of the colossal table: 9930 x 11880 x 256 = 30,199,910,400.
pub const N_COLOSSAL: usize = N_CORNER_CLASSES * N_SLICE_SORTED * N_EO8;

/// The orientations of the edges that are not slice edges (cubies below 8), in the order of
/// their positions: bit `k` is the orientation at the `k`-th position not holding a slice edge.
pub fn eo8(c: &CubieCube) -> usize {
    let mut e = 0;
    let mut k = 0;
    for j in 0..N_EDGES {
        if c.ep[j] < 8 {
            e |= (c.eo[j] as usize) << k;
            k += 1;
        }
    }
    e
}

/// A cube with its slice edges at `slice_sorted`, the others' orientations `eo8` and the slice
/// edges' chosen so that the flip is a real cube's (even); corners solved.
pub fn with_edges(slice_sorted: usize, eo8: usize) -> CubieCube {
    let mut c = CubieCube::SOLVED;
    c.set_slice_sorted(slice_sorted);
    let mut k = 0;
    let mut first_slice = None;
    for j in 0..N_EDGES {
        if c.ep[j] < 8 {
            c.eo[j] = ((eo8 >> k) & 1) as u8;
            k += 1;
        } else {
            first_slice.get_or_insert(j);
        }
    }
    if eo8.count_ones() % 2 == 1 {
        c.eo[first_slice.expect("four slice edges")] = 1;
    }
    c
}

/// What a colossal-table lookup needs beside the coordinate tables (computed at load, ~1 MB):
/// the corners' sym-reduction, the conjugates of UDSliceSorted and of the flip, and the
/// packing of a flip into [`eo8`] for given slice positions.
pub struct ColossalIndex {
    /// Sym-reduction of `2187 * ud_corners + twist`.
    pub corners: SymReduction,
    /// `slice_sorted_conj[16 * slice_sorted + s]`.
    slice_sorted_conj: Vec<u16>,
    flip_conj: FlipConj,
    /// Per flip, the orientation at each of the 12 positions (bit `j` for position `j`).
    orientations: Vec<u16>,
    /// `eo8 = pack_low[64 * slice + (o & 63)] | pack_high[64 * slice + (o >> 6)]` for the
    /// 12-bit orientations `o` of a cube whose slice edges are at `slice`.
    pack_low: Vec<u8>,
    pack_high: Vec<u8>,
}

impl ColossalIndex {
    /// Computes the tables from the cubie level (a few tens of milliseconds).
    pub fn compute(coords: &CoordTables) -> ColossalIndex {
        let corners = SymReduction::compute(N_CORNER_COORD, |raw| {
            let (u, t) = (raw / N_TWIST, raw % N_TWIST);
            std::array::from_fn(|s| {
                N_TWIST * coords.ud_corners_conj[N_SYM_D4H * u + s] as usize
                    + coords.twist_conj[N_SYM_D4H * t + s] as usize
            })
        });
        assert_eq!(corners.classes(), N_CORNER_CLASSES);
        let mut slice_sorted_conj = vec![0u16; N_SLICE_SORTED * N_SYM_D4H];
        for ss in 0..N_SLICE_SORTED {
            let mut c = CubieCube::SOLVED;
            c.set_slice_sorted(ss);
            for s in 0..N_SYM_D4H {
                slice_sorted_conj[N_SYM_D4H * ss + s] =
                    SYMMETRIES.conjugate_edges(&c, s).slice_sorted() as u16;
            }
        }
        let orientations = (0..crate::coord::N_FLIP)
            .map(|f| {
                let mut c = CubieCube::SOLVED;
                c.set_flip(f);
                (0..N_EDGES).map(|j| (c.eo[j] as u16) << j).sum()
            })
            .collect();
        let mut pack_low = vec![0u8; N_SLICE * 64];
        let mut pack_high = vec![0u8; N_SLICE * 64];
        for slice in 0..N_SLICE {
            let mut c = CubieCube::SOLVED;
            c.set_slice_sorted(N_PERM_4 * slice);
            for bits in 0..64usize {
                for (half, table) in [(0, &mut pack_low), (6, &mut pack_high)] {
                    let mut x = c;
                    for j in 0..6 {
                        x.eo[half + j] = ((bits >> j) & 1) as u8;
                    }
                    table[64 * slice + bits] = eo8(&x) as u8;
                }
            }
        }
        ColossalIndex {
            corners,
            slice_sorted_conj,
            flip_conj: FlipConj::compute(),
            orientations,
            pack_low,
            pack_high,
        }
    }

    /// The corners' class and symmetry of coordinates `x` (the start of [`ColossalIndex::index`]).
    #[inline]
    pub fn corner_sym(&self, x: &Mod3Coords) -> SymCoord {
        self.corners.sym[Self::corner_raw(x)]
    }

    /// The corners' sym-coordinate of class `c`'s representative after move `m`.
    pub fn class_move(&self, coords: &CoordTables, c: usize, m: usize) -> SymCoord {
        let rep = self.corners.rep[c] as usize;
        let (u, t) = (rep / N_TWIST, rep % N_TWIST);
        self.corners.sym[N_TWIST * coords.ud_corners_move[N_MOVE * u + m] as usize
            + coords.twist_move[N_MOVE * t + m] as usize]
    }

    /// The corners' raw coordinate of `x`, `2187 * ud_corners + twist`, which their
    /// sym-coordinate is read at (the search prefetches it).
    #[inline]
    pub fn corner_raw(x: &Mod3Coords) -> usize {
        N_TWIST * x.ud_corners + x.twist
    }

    /// The colossal table's index of coordinates `x`.
    #[inline]
    pub fn index(&self, x: &Mod3Coords) -> usize {
        let sc = self.corner_sym(x);
        let s = sc.sym();
        let ss = self.slice_sorted_conj[N_SYM_D4H * x.slice_sorted + s] as usize;
        let f = self.flip_conj.conj(x.slice_sorted / N_PERM_4, x.flip, s);
        let o = self.orientations[f] as usize;
        let slice = ss / N_PERM_4;
        let e =
            (self.pack_low[64 * slice + (o & 63)] | self.pack_high[64 * slice + (o >> 6)]) as usize;
        (N_SLICE_SORTED * sc.class() + ss) * N_EO8 + e
    }
}

/// Groups of [`GROUP`] entries (16 `eo8` values of one row) in the colossal table: the floor
/// file holds one base-3 digit per group.
pub const N_FLOOR_GROUPS: usize = N_COLOSSAL / GROUP;
/// Rows of the colossal table (corner class x UDSliceSorted, 256 entries each): the floor file
/// holds one 4-bit depth per row.
const N_FLOOR_ROWS: usize = N_CORNER_CLASSES * N_SLICE_SORTED;
/// Bytes of the floor file's rows: two 4-bit depths a byte (row `r` in the low half of byte
/// `r / 2` when `r` is even).
const FLOOR_ROW_BYTES: usize = N_FLOOR_ROWS.div_ceil(2);
/// Base-3 digits a byte holds (`3^5 = 243 <= 256`).
const DIGITS_PER_BYTE: usize = 5;
/// Bytes of the floor file's payload: the rows' depths, then the groups' digits, five to a
/// byte (58,984,200 + 377,498,880 = 436,483,080).
pub const FLOOR_BYTES: usize = FLOOR_ROW_BYTES + N_FLOOR_GROUPS.div_ceil(DIGITS_PER_BYTE);
/// The floor file's entry encoding (the header's `bits` field): 4-bit row depths, then base-3
/// digits five to a byte. The first floor files (encoding 2: 2-bit excesses, rows computed at
/// load) are refused with "rebuild".
pub const FLOOR_ENCODING: u32 = 3;
/// Largest excess a group's digit holds: 2 means 2 or more.
const MAX_EXCESS: u8 = 2;

/// `DIGIT[byte][k]`: the `k`-th base-3 digit (least significant first) of `byte`.
static DIGIT: [[u8; DIGITS_PER_BYTE]; 256] = {
    let mut t = [[0u8; DIGITS_PER_BYTE]; 256];
    let mut b = 0;
    while b < 256 {
        let mut v = b;
        let mut k = 0;
        while k < DIGITS_PER_BYTE {
            t[b][k] = (v % 3) as u8;
            v /= 3;
            k += 1;
        }
        b += 1;
    }
    t
};

/// Lower bounds of the colossal depth for the readings that have no neighbour's exact depth to
/// step from (the inverse side's): per group of 16 entries, its least depth, as the least depth
/// of its row (the corner-slice depth, [`corner_slice_depths`]) plus the excess of the group's
/// least depth over the row's, 2 meaning 2 or more. Both come from the floor file,
/// `colossal_floor.cft` (436 MB, written with the colossal table, so that the two together
/// stay under 8 GB). With the mod-3 entry it gives the exact depth of about 96 % of random
/// states (the row's least depth alone: 74 %).
pub struct Floors {
    /// The floor file, of [`FLOOR_BYTES`] of payload (checked by the loader).
    file: Table<Mmap>,
}

impl Floors {
    /// The floors of a floor file whose payload is [`FLOOR_BYTES`] long (checked by the
    /// caller; a shorter one panics at the first reading past its end).
    pub fn new(file: Table<Mmap>) -> Floors {
        Floors { file }
    }

    /// Starts loading what [`Floors::floor`] reads for entry `e`.
    #[inline]
    pub fn prefetch(&self, e: usize) {
        let p = self.file.payload();
        crate::prefetch(p, e / N_EO8 / 2);
        crate::prefetch(p, FLOOR_ROW_BYTES + e / GROUP / DIGITS_PER_BYTE);
    }

    /// The lower bound of the colossal depth of entry `e`.
    #[inline]
    pub fn floor(&self, e: usize) -> u32 {
        floor_at(self.file.payload(), FLOOR_ROW_BYTES, e)
    }
}

/// The floor of entry `e` in a payload `p` of [`pack_group_floors`] whose rows take
/// `row_bytes` (the floor file's: [`FLOOR_ROW_BYTES`]).
#[inline]
fn floor_at(p: &[u8], row_bytes: usize, e: usize) -> u32 {
    let row = e / N_EO8;
    let depth = (p[row / 2] >> (4 * (row % 2))) & 15;
    let g = e / GROUP;
    let excess = DIGIT[p[row_bytes + g / DIGITS_PER_BYTE] as usize][g % DIGITS_PER_BYTE];
    depth as u32 + excess as u32
}

/// The depths of a goal containing the colossal table's: the corners' (twist and UDCorners 0)
/// and the slice edges' (UDSliceSorted 0), per corner class and conjugated UDSliceSorted (the
/// goal is kept by the symmetries of D4h, so the conjugated cube's depth is the cube's),
/// `[11880 * class + slice_sorted']`. It is exactly the least colossal depth over one row of
/// the table (all 256 `eo8`): a path to this goal from any entry of the row ends, for one of
/// them, with `eo8` 0 too. 117,968,400 bytes, built breadth first in about 3 s on 2 cores.
pub fn corner_slice_depths(coords: &CoordTables, index: &ColossalIndex) -> Vec<u8> {
    let class_move = (0..N_CORNER_CLASSES * N_MOVE)
        .map(|i| index.class_move(coords, i / N_MOVE, i % N_MOVE))
        .collect();
    let space = CornerSliceSpace {
        coords,
        index,
        class_move,
    };
    build_sym(&space, "corner_slice", &|_, _, _| {})
}

/// Builds the colossal table with [`crate::huge::build`], recording each group's least depth
/// on the way, and packs its floors ([`pack_group_floors`]): the packed table, its entries at
/// each depth, and the floor file's payload (an error, a bug, when the build's least depths
/// disagree with the rows' corner-slice depths).
pub fn build(
    coords: &CoordTables,
    progress: crate::prune::ProgressFn<'_>,
) -> (Vec<u8>, Vec<u64>, Result<Vec<u8>, String>) {
    let space = ColossalSpace::new(coords);
    let mut mins = vec![u8::MAX; N_FLOOR_GROUPS];
    let (bytes, dist) = crate::huge::build(&space, "colossal", progress, Some(&mut mins));
    let rows = corner_slice_depths(coords, &space.index);
    let floors = pack_group_floors(&mins, &rows);
    (bytes, dist, floors)
}

/// The floor file's payload from the build's least depth of every group (`group_mins`) and
/// the rows' corner-slice depths (`rows`): the rows' depths, 4 bits each, then each group's
/// excess over its row's depth (at most [`MAX_EXCESS`]) as a base-3 digit, five to a byte. The
/// rows' least depths must be their corner-slice depths, and those must fit 4 bits; an error
/// says where not (a bug: nothing is written then).
pub fn pack_group_floors(group_mins: &[u8], rows: &[u8]) -> Result<Vec<u8>, String> {
    let per_row = N_EO8 / GROUP;
    assert_eq!(group_mins.len(), rows.len() * per_row);
    let row_bytes = rows.len().div_ceil(2);
    let mut packed = vec![0u8; row_bytes + group_mins.len().div_ceil(DIGITS_PER_BYTE)];
    let mut place = [1u8; DIGITS_PER_BYTE];
    for k in 1..DIGITS_PER_BYTE {
        place[k] = 3 * place[k - 1];
    }
    for (row, (mins, &least)) in group_mins.chunks(per_row).zip(rows).enumerate() {
        let row_min = mins.iter().copied().min().unwrap_or(u8::MAX);
        if row_min != least || least > 15 {
            return Err(format!(
                "row {row}: least depth {row_min}, corner-slice depth {least} (at most 15 fit)"
            ));
        }
        packed[row / 2] |= least << (4 * (row % 2));
        for (k, &m) in mins.iter().enumerate() {
            let g = row * per_row + k;
            let digit = (m - least).min(MAX_EXCESS);
            packed[row_bytes + g / DIGITS_PER_BYTE] += digit * place[g % DIGITS_PER_BYTE];
        }
    }
    Ok(packed)
}

/// The corners' classes x UDSliceSorted, the space of [`Floors`].
struct CornerSliceSpace<'a> {
    coords: &'a CoordTables,
    index: &'a ColossalIndex,
    /// `class_move[18 * class + m]`: the sym-coordinate of the class representative after `m`.
    class_move: Vec<SymCoord>,
}

impl SymSpace for CornerSliceSpace<'_> {
    fn classes(&self) -> usize {
        N_CORNER_CLASSES
    }
    fn row_len(&self) -> usize {
        N_SLICE_SORTED
    }
    fn moves(&self) -> &[usize] {
        &ALL_MOVES
    }
    fn class_move(&self, c: usize, m: usize) -> SymCoord {
        self.class_move[N_MOVE * c + m]
    }
    fn row_move(&self, x: usize, m: usize, sym: usize) -> usize {
        self.row_conj(self.coords.slice_sorted_move[N_MOVE * x + m] as usize, sym)
    }
    fn self_sym(&self, c: usize) -> u16 {
        self.index.corners.self_sym[c]
    }
    fn row_conj(&self, x: usize, s: usize) -> usize {
        self.index.slice_sorted_conj[N_SYM_D4H * x + s] as usize
    }
}

/// The colossal table's entries: corner class x UDSliceSorted x eo8.
pub(crate) struct ColossalSpace<'a> {
    coords: &'a CoordTables,
    index: ColossalIndex,
    /// `inner[((16 * m + s) * 495 + slice) * 256 + eo8]`: eo8 after move `m` from slice
    /// position `slice`, then conjugated by `s` (73 MB, for the build only).
    inner: Vec<u16>,
    /// `conj[(495 * s + slice) * 256 + eo8]`: eo8 of the cube conjugated by `s`.
    conj: Vec<u16>,
}

impl<'a> ColossalSpace<'a> {
    /// The space and the tables its build follows (a few seconds).
    pub(crate) fn new(coords: &'a CoordTables) -> Self {
        let index = ColossalIndex::compute(coords);
        let mut conj = vec![0u16; N_SYM_D4H * N_SLICE * N_EO8];
        for s in 0..N_SYM_D4H {
            for slice in 0..N_SLICE {
                for e in 0..N_EO8 {
                    let c = SYMMETRIES.conjugate_edges(&with_edges(N_PERM_4 * slice, e), s);
                    conj[(N_SLICE * s + slice) * N_EO8 + e] = eo8(&c) as u16;
                }
            }
        }
        let mut inner = Vec::with_capacity(N_MOVE * N_SYM_D4H * N_SLICE * N_EO8);
        for m in 0..N_MOVE {
            for s in 0..N_SYM_D4H {
                for slice in 0..N_SLICE {
                    inner.extend((0..N_EO8).map(|e| {
                        let c = with_edges(N_PERM_4 * slice, e).apply_move(Move::from_index(m));
                        conj[(N_SLICE * s + c.slice()) * N_EO8 + eo8(&c)]
                    }));
                }
            }
        }
        ColossalSpace {
            coords,
            index,
            inner,
            conj,
        }
    }
}

impl Space for ColossalSpace<'_> {
    const ROWS: usize = N_SLICE_SORTED;
    const INNER: usize = N_EO8;

    fn reduction(&self) -> &SymReduction {
        &self.index.corners
    }

    fn fill(&self, c: usize, mv: &mut ClassMoves) {
        let coords = self.coords;
        for m in 0..N_MOVE {
            let sc = self.index.class_move(coords, c, m);
            let s = sc.sym();
            (mv.class[m], mv.sym[m]) = (sc.class(), s);
            for ss in 0..N_SLICE_SORTED {
                let ss1 = coords.slice_sorted_move[N_MOVE * ss + m] as usize;
                mv.row[N_SLICE_SORTED * m + ss] = self.index.slice_sorted_conj[N_SYM_D4H * ss1 + s];
            }
        }
    }

    fn row_conj(&self, _: usize, r: usize, s: usize) -> usize {
        self.index.slice_sorted_conj[N_SYM_D4H * r + s] as usize
    }

    fn inner_moves(&self, m: usize, s: usize, r: usize) -> &[u16] {
        let at = ((N_SYM_D4H * m + s) * N_SLICE + r / N_PERM_4) * N_EO8;
        &self.inner[at..at + N_EO8]
    }

    fn inner_conj(&self, r: usize, t: usize, s: usize) -> usize {
        self.conj[(N_SLICE * s + r / N_PERM_4) * N_EO8 + t] as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::huge::tests::space_agrees_with_index;

    #[test]
    fn colossal_space_agrees_with_its_index() {
        let coords = CoordTables::compute();
        let space = ColossalSpace::new(&coords);
        space_agrees_with_index(
            &space,
            |c| space.index.index(&Mod3Coords::of(c)),
            |class, ss, e| {
                let rep = space.index.corners.rep[class] as usize;
                let mut c = with_edges(ss, e);
                c.set_ud_corners(rep / N_TWIST);
                c.set_twist(rep % N_TWIST);
                c
            },
        );
    }

    /// The index packs the conjugated cube's orientations as [`eo8`] does, on real cubes; the
    /// corner-slice depth is the exact distance to its goal: 0 there only, never more than one apart over a
    /// move, and some move lowers it where it is above 0 (together these make it the depth).
    #[test]
    fn index_packs_eo8_and_floors_are_depths() {
        let coords = CoordTables::compute();
        let index = ColossalIndex::compute(&coords);
        let depths = corner_slice_depths(&coords, &index);
        let floor = |c: &CubieCube| depths[index.index(&Mod3Coords::of(c)) / N_EO8] as u32;
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for k in 0..3000 {
            let mut c = CubieCube::random(&mut rng);
            if k % 2 == 1 {
                // near the goal too: a few moves from a cube of the goal
                c = with_edges(0, 0);
                for _ in 0..k % 9 {
                    c = c.apply_move(Move::from_index(rng.random_range(0..N_MOVE)));
                }
            }
            let x = Mod3Coords::of(&c);
            let conj = SYMMETRIES.conjugate(&c, index.corner_sym(&x).sym());
            let class = index.corner_sym(&x).class();
            assert_eq!(
                index.index(&x),
                (N_SLICE_SORTED * class + conj.slice_sorted()) * N_EO8 + eo8(&conj)
            );
            let f = floor(&c);
            let at_goal = x.twist == 0 && x.ud_corners == 0 && x.slice_sorted == 0;
            assert_eq!(f == 0, at_goal);
            let next: Vec<u32> = Move::ALL.iter().map(|&m| floor(&c.apply_move(m))).collect();
            assert!(next.iter().all(|&g| g + 1 >= f && g <= f + 1));
            assert!(at_goal || next.iter().any(|&g| g + 1 == f));
        }
    }

    /// Group floors are packed as their row's least depth plus the group's excess over it,
    /// capped at 2, and read back as such; a row whose least depth is not its corner-slice
    /// depth, or does not fit 4 bits, is refused.
    #[test]
    fn group_floors_pack_the_excess_over_the_row() {
        let per_row = N_EO8 / GROUP;
        let mut mins = vec![9u8; 3 * per_row];
        mins[3] = 8;
        mins[5] = 10;
        mins[per_row + 1] = 14;
        for m in &mut mins[2 * per_row..] {
            *m = 15;
        }
        mins[2 * per_row + 15] = 16;
        // a row count whose digits and halves of bytes end partly filled
        let rows = [8, 9, 15];
        let packed = pack_group_floors(&mins, &rows).expect("consistent");
        let row_bytes = rows.len().div_ceil(2);
        assert_eq!(packed.len(), row_bytes + (3 * per_row).div_ceil(5));
        let floor = |g: usize| floor_at(&packed, row_bytes, g * GROUP);
        assert_eq!((floor(0), floor(3), floor(5)), (9, 8, 10));
        assert_eq!((floor(per_row), floor(per_row + 1)), (9, 11));
        assert_eq!((floor(2 * per_row), floor(3 * per_row - 1)), (15, 16));
        // every entry of a group reads the group's floor
        assert_eq!(floor_at(&packed, row_bytes, 5 * GROUP + 15), 10);
        let err = pack_group_floors(&mins, &[8, 8, 15]).expect_err("row 1's least is 9");
        assert!(err.starts_with("row 1:"), "{err}");
        let deep = vec![16u8; per_row];
        let err = pack_group_floors(&deep, &[16]).expect_err("16 does not fit");
        assert!(err.starts_with("row 0:"), "{err}");
    }

    /// Every byte's digits are its base-3 expansion.
    #[test]
    fn digits_expand_bytes_in_base_3() {
        for (b, digits) in DIGIT.iter().enumerate().take(243) {
            let v = digits.iter().rev().fold(0, |acc, &d| 3 * acc + d as usize);
            assert_eq!(v, b);
        }
    }

    use rand::{Rng, SeedableRng};
}
