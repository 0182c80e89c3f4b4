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
//! floors instead: the least depth of each row and of each group of 8 entries, recorded by the
//! build and kept in the row's cache line beside its entries ([`Rows`]).

use rayon::prelude::*;

use crate::coord::{N_PERM_4, N_SLICE, N_SLICE_SORTED, N_TWIST, N_UD_CORNERS};
use crate::cubie::{CubieCube, N_EDGES};
use crate::huge::{
    entries_equal, ClassMoves, FlipConj, GroupExcess, Mod3Coords, Packed, Space, GROUP,
};
use crate::moves::{Move, N_MOVE};
use crate::movetable::{CoordTables, SymCoord, SymReduction};
use crate::prune::{build_sym, SymSpace, ALL_MOVES};
use crate::row256::RowMap;
use crate::symmetry::{N_SYM_D4H, SYMMETRIES};

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

/// Rows of the colossal table: corner class x UDSliceSorted, 256 entries (all `eo8`) each.
pub const N_ROWS: usize = N_CORNER_CLASSES * N_SLICE_SORTED;
/// Bytes of a row: its 256 entries and their floors in one 64-byte cache line, so that an
/// entry and its floor are one memory read ([`Rows`] has the layout).
pub const ROW_BYTES: usize = 64;
/// Bytes of the colossal table's payload: 117,968,400 rows of 64 bytes (7,549,977,600).
pub const COLOSSAL_BYTES: usize = N_ROWS * ROW_BYTES;
/// The colossal table's entry encoding (the header's `bits` field): rows of [`ROW_BYTES`] as
/// [`Rows`] describes. The first colossal files (encoding 2: four 2-bit entries a byte, the
/// floors in a file of their own, `colossal_floor.cft`) are refused with "rebuild".
pub const COLOSSAL_ENCODING: u32 = 3;
/// The first colossal tables' floor file, which the build of this layout removes.
pub const RETIRED_FLOOR_FILE: &str = "colossal_floor.cft";
/// Base-3 digits a byte holds (`3^5 = 243 <= 256`).
const DIGITS_PER_BYTE: usize = 5;
/// `PLACE[k]`: the value of a byte's `k`-th base-3 digit, `3^k`.
const PLACE: [u8; DIGITS_PER_BYTE] = [1, 3, 9, 27, 81];
/// Where a row's least depth is (one byte), after its 52 bytes of entries.
const ROW_DEPTH_AT: usize = N_EO8.div_ceil(DIGITS_PER_BYTE);
/// Floor groups of a row: [`GROUP`] consecutive `eo8` values each.
const GROUPS_PER_ROW: usize = N_EO8 / GROUP;
/// Where a row's groups' excesses start, after its least depth.
const EXCESS_AT: usize = ROW_DEPTH_AT + 1;
const _: () = assert!(EXCESS_AT + GROUPS_PER_ROW.div_ceil(DIGITS_PER_BYTE) <= ROW_BYTES);

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

/// `BASE3[x]`: five 2-bit entries (`x`, entry `k` at bits `2 k`, each below 3) as a byte of
/// base-3 digits (entry `k` the `k`-th digit, least significant first).
static BASE3: [u8; 1 << (2 * DIGITS_PER_BYTE)] = {
    let mut t = [0u8; 1 << (2 * DIGITS_PER_BYTE)];
    let mut x = 0;
    while x < t.len() {
        let mut v = 0;
        let mut k = 0;
        while k < DIGITS_PER_BYTE {
            v += ((x >> (2 * k)) & 3) * PLACE[k] as usize;
            k += 1;
        }
        // entries of 3 (never reached) overflow a byte; rows holding them are refused first
        t[x] = v as u8;
        x += 1;
    }
    t
};

/// The colossal table's payload, read by entry: its depths mod 3 and the lower bounds of its
/// depths for the readings that have no neighbour's exact depth to step from (the inverse
/// side's). Row `r` (entries `256 r..256 r + 256`) is bytes `64 r..64 r + 64`:
/// - bytes 0 to 51: entry `256 r + k`'s depth mod 3 as the `k % 5`-th base-3 digit (least
///   significant first) of byte `k / 5`;
/// - byte 52: the row's least depth (its corner-slice depth, [`corner_slice_depths`]);
/// - bytes 53 to 59: per group of [`GROUP`] entries (`k / 8`), the excess of the group's least
///   depth over the row's, 2 meaning 2 or more, as base-3 digits five to a byte;
/// - bytes 60 to 63: 0.
///
/// The floor of an entry, row depth plus group excess, with its residue gives the exact depth
/// of about 96 % of random states. nxopt keeps its coarse bounds in the cache line of its
/// entries in the same way: the inverse side's reading is one miss, not three.
#[derive(Clone, Copy)]
pub struct Rows<'a> {
    /// The payload, [`COLOSSAL_BYTES`] long (checked by the loader).
    p: &'a [u8],
}

impl<'a> Rows<'a> {
    /// The rows of a payload of [`COLOSSAL_BYTES`] (checked by the caller: a shorter one
    /// panics at the first reading past its end).
    pub fn new(p: &'a [u8]) -> Rows<'a> {
        Rows { p }
    }

    /// The row holding entry `e`.
    #[inline]
    fn row(&self, e: usize) -> &'a [u8; ROW_BYTES] {
        let at = ROW_BYTES * (e / N_EO8);
        self.p[at..at + ROW_BYTES]
            .try_into()
            .expect("a row is ROW_BYTES long")
    }

    /// Starts loading the row of entry `e`: all that [`Rows::mod3`] and [`Rows::floor`] read.
    #[inline]
    pub fn prefetch(&self, e: usize) {
        crate::prefetch(self.p, ROW_BYTES * (e / N_EO8));
    }

    /// The depth mod 3 (`0..3`) of entry `e`.
    #[inline]
    pub fn mod3(&self, e: usize) -> u8 {
        let k = e % N_EO8;
        DIGIT[self.row(e)[k / DIGITS_PER_BYTE] as usize][k % DIGITS_PER_BYTE]
    }

    /// The lower bound of the depth of entry `e`: its row's least depth plus its group's
    /// excess.
    #[inline]
    pub fn floor(&self, e: usize) -> u32 {
        let row = self.row(e);
        let g = e % N_EO8 / GROUP;
        let excess = DIGIT[row[EXCESS_AT + g / DIGITS_PER_BYTE] as usize][g % DIGITS_PER_BYTE];
        row[ROW_DEPTH_AT] as u32 + excess as u32
    }
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
/// on the way as its excess over its row's corner-slice depth ([`GroupExcess`]), and lays its
/// rows out with their floors ([`interleave_rows`]): the entries at each depth, and the
/// payload of [`Rows`] (an error, a bug, when the build's least depths disagree with the rows'
/// corner-slice depths). Memory: the table (7.5 GB), the groups' excesses (0.94 GB) and the
/// rows' depths (118 MB).
pub fn build(
    coords: &CoordTables,
    progress: crate::prune::ProgressFn<'_>,
) -> (Vec<u64>, Result<Packed, String>) {
    let space = ColossalSpace::new(coords);
    let rows = corner_slice_depths(coords, &space.index);
    let mut floors = GroupExcess::new(N_COLOSSAL / GROUP, &rows);
    let (mut packed, dist) = crate::huge::build(&space, "colossal", progress, Some(&mut floors));
    let laid_out = match floors.below() {
        0 => interleave_rows(packed.as_mut(), floors.codes(), &rows),
        n => Err(format!(
            "{n} groups reached below their row's corner-slice depth"
        )),
    };
    (dist, laid_out.map(|()| packed))
}

/// Turns a mod-3 build's packed entries (`table`: 2 bits each, four to a byte; one row of 256
/// is 64 bytes there too) into [`Rows`], in place, row by row, with each row's least depth
/// (`rows`, its corner-slice depth) and its groups' excesses over it (`codes`, as
/// [`GroupExcess::codes`]). Some group of a row must have excess 0 (the row's least depth is
/// its corner-slice depth), and every entry must be filled; an error says where not (a bug).
pub fn interleave_rows(table: &mut [u8], codes: &[u8], rows: &[u8]) -> Result<(), String> {
    assert_eq!(table.len(), rows.len() * ROW_BYTES);
    assert_eq!(4 * codes.len(), rows.len() * GROUPS_PER_ROW);
    table
        .par_chunks_exact_mut(ROW_BYTES)
        .zip(codes.par_chunks_exact(GROUPS_PER_ROW / 4))
        .zip(rows.par_iter())
        .enumerate()
        .try_for_each(|(r, ((row, codes), &least))| {
            interleave_row(row, codes, least).map_err(|e| format!("row {r}: {e}"))
        })
}

/// One row of [`interleave_rows`]: `row` holds 256 2-bit entries, `codes` its groups'
/// excesses (2 bits each), `least` its corner-slice depth.
fn interleave_row(row: &mut [u8], codes: &[u8], least: u8) -> Result<(), String> {
    let excess: [u8; GROUPS_PER_ROW] = std::array::from_fn(|g| (codes[g / 4] >> (2 * (g % 4))) & 3);
    if let Some(g) = excess.iter().position(|&e| e == GroupExcess::UNREACHED) {
        return Err(format!("group {g} was never reached"));
    }
    if !excess.contains(&0) {
        return Err(format!("no group at its corner-slice depth {least}"));
    }
    let words: [u64; ROW_BYTES / 8] = std::array::from_fn(|k| {
        u64::from_le_bytes(row[8 * k..8 * k + 8].try_into().expect("8 bytes"))
    });
    for (k, &w) in words.iter().enumerate() {
        let empty = entries_equal(w, 3);
        if empty != 0 {
            let j = empty.trailing_zeros() as usize / 2;
            return Err(format!("entry {} was never reached", 32 * k + j));
        }
    }
    for (b, byte) in row[..ROW_DEPTH_AT].iter_mut().enumerate() {
        // entries 5 b..5 b + 5: the 10 bits from bit 10 b of the row (0 past its end)
        let at = 2 * DIGITS_PER_BYTE * b;
        let (k, shift) = (at / 64, at % 64);
        let mut bits = words[k] >> shift;
        if shift > 64 - 2 * DIGITS_PER_BYTE && k + 1 < words.len() {
            bits |= words[k + 1] << (64 - shift);
        }
        *byte = BASE3[(bits & 0x3FF) as usize];
    }
    row[ROW_DEPTH_AT..].fill(0);
    row[ROW_DEPTH_AT] = least;
    for (g, &digit) in excess.iter().enumerate() {
        row[EXCESS_AT + g / DIGITS_PER_BYTE] += digit * PLACE[g % DIGITS_PER_BYTE];
    }
    Ok(())
}

/// The corners' classes x UDSliceSorted, the space of [`corner_slice_depths`].
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
    /// `maps[(16 * m + s) * 495 + slice]`: `inner`'s rows as the backward passes read them
    /// (73 MB).
    maps: Vec<RowMap>,
    /// `rows[(16 * m + s) * 11880 + slice_sorted]`: UDSliceSorted after move `m`, then
    /// conjugated by `s` (6.8 MB: copied into a class's moves, not computed, at every pass).
    rows: Vec<u16>,
}

impl<'a> ColossalSpace<'a> {
    /// The space and the tables its build follows (a few seconds).
    pub(crate) fn new(coords: &'a CoordTables) -> Self {
        let index = ColossalIndex::compute(coords);
        let conj: Vec<u16> = (0..N_SYM_D4H * N_SLICE)
            .into_par_iter()
            .flat_map_iter(|at| {
                let (s, slice) = (at / N_SLICE, at % N_SLICE);
                (0..N_EO8).map(move |e| {
                    let c = SYMMETRIES.conjugate_edges(&with_edges(N_PERM_4 * slice, e), s);
                    eo8(&c) as u16
                })
            })
            .collect();
        // `moved[(495 * m + slice) * 256 + eo8]`: the slice position and eo8 after move `m`
        let moved: Vec<(usize, usize)> = (0..N_MOVE * N_SLICE)
            .into_par_iter()
            .flat_map_iter(|at| {
                let (m, slice) = (at / N_SLICE, at % N_SLICE);
                (0..N_EO8).map(move |e| {
                    let c = with_edges(N_PERM_4 * slice, e).apply_move(Move::from_index(m));
                    (c.slice(), eo8(&c))
                })
            })
            .collect();
        let inner: Vec<u16> = (0..N_MOVE * N_SYM_D4H * N_SLICE * N_EO8)
            .map(|i| {
                let (m, s) = (
                    i / (N_SYM_D4H * N_SLICE * N_EO8),
                    i / (N_SLICE * N_EO8) % N_SYM_D4H,
                );
                let (slice1, e1) = moved[m * N_SLICE * N_EO8 + i % (N_SLICE * N_EO8)];
                conj[(N_SLICE * s + slice1) * N_EO8 + e1]
            })
            .collect();
        let mut rows = Vec::with_capacity(N_MOVE * N_SYM_D4H * N_SLICE_SORTED);
        for m in 0..N_MOVE {
            for s in 0..N_SYM_D4H {
                rows.extend((0..N_SLICE_SORTED).map(|ss| {
                    let ss1 = coords.slice_sorted_move[N_MOVE * ss + m] as usize;
                    index.slice_sorted_conj[N_SYM_D4H * ss1 + s]
                }));
            }
        }
        let maps = inner.par_chunks_exact(N_EO8).map(RowMap::new).collect();
        ColossalSpace {
            coords,
            index,
            inner,
            conj,
            maps,
            rows,
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
            let at = (N_SYM_D4H * m + s) * N_SLICE_SORTED;
            mv.row[N_SLICE_SORTED * m..N_SLICE_SORTED * (m + 1)]
                .copy_from_slice(&self.rows[at..at + N_SLICE_SORTED]);
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

    fn row_map(&self, m: usize, s: usize, r: usize) -> Option<&RowMap> {
        Some(&self.maps[(N_SYM_D4H * m + s) * N_SLICE + r / N_PERM_4])
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

    /// Rows laid out from a mod-3 build's packed entries read back every entry's residue, and
    /// as floors their row's least depth plus the group's excess, capped at 2; a row whose
    /// least depth is not its corner-slice depth, or with an entry never reached, is refused.
    #[test]
    fn rows_hold_the_entries_and_their_floors() {
        let n_rows = 3;
        let residue = |e: usize| ((e * 7 + e / 5) % 3) as u8;
        let mut table = vec![0u8; n_rows * ROW_BYTES];
        for e in 0..n_rows * N_EO8 {
            table[e / 4] |= residue(e) << (2 * (e % 4));
        }
        let mut mins = vec![9u8; n_rows * GROUPS_PER_ROW];
        mins[3] = 8;
        mins[5] = 10;
        mins[GROUPS_PER_ROW + 1] = 14;
        mins[2 * GROUPS_PER_ROW..].fill(200);
        mins[3 * GROUPS_PER_ROW - 1] = 203;
        let least = [8, 9, 200];
        // the build's codes: each group's excess over its row's least depth, capped at 2
        let codes_of = |mins: &[u8], least: &[u8]| {
            let mut codes = vec![0u8; mins.len() / 4];
            for (g, &m) in mins.iter().enumerate() {
                let code = m.saturating_sub(least[g / GROUPS_PER_ROW]).min(2);
                codes[g / 4] |= code << (2 * (g % 4));
            }
            codes
        };
        let codes = codes_of(&mins, &least);
        // a row count that does not divide among the threads evenly
        let mut laid_out = table.clone();
        interleave_rows(&mut laid_out, &codes, &least).expect("consistent");
        let rows = Rows::new(&laid_out);
        for e in 0..n_rows * N_EO8 {
            assert_eq!(rows.mod3(e), residue(e), "entry {e}");
        }
        let floor = |g: usize| rows.floor(g * GROUP);
        assert_eq!((floor(0), floor(3), floor(5)), (9, 8, 10));
        assert_eq!((floor(GROUPS_PER_ROW), floor(GROUPS_PER_ROW + 1)), (9, 11));
        let last = 3 * GROUPS_PER_ROW - 1;
        assert_eq!((floor(2 * GROUPS_PER_ROW), floor(last)), (200, 202));
        // every entry of a group reads the group's floor
        assert_eq!(rows.floor(5 * GROUP + GROUP - 1), 10);
        assert!(laid_out
            .chunks(ROW_BYTES)
            .all(|r| r[EXCESS_AT + 7..] == [0; 4]));

        // row 1's least depth is 9, above its corner-slice depth 8: no group has excess 0
        let wrong = codes_of(&mins, &[8, 8, 200]);
        let err = interleave_rows(&mut table.clone(), &wrong, &[8, 8, 200]).expect_err("row 1");
        assert_eq!(err, "row 1: no group at its corner-slice depth 8");
        let mut unreached = codes.clone();
        unreached[GROUPS_PER_ROW / 4] |= 3 << 2;
        let err = interleave_rows(&mut table.clone(), &unreached, &least).expect_err("row 1");
        assert_eq!(err, "row 1: group 1 was never reached");
        table[ROW_BYTES + 10] |= 3 << 4;
        let err = interleave_rows(&mut table, &codes, &least).expect_err("an empty entry");
        assert_eq!(err, "row 1: entry 42 was never reached");
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
