//! Move tables and symmetry tables at the coordinate level: everything small that the searches
//! and the pruning-table builds look up, computed in memory from the cubie level.
//!
//! Layout: `X_move[N_MOVE * x + m]` is coordinate `x` after move `m`; `X_conj[N_SYM_D4H * x + s]` is
//! coordinate `x` of `S_s * c * S_s^-1`. Sym-coordinates are packed `class << 4 | sym` (see
//! [`SymCoord`]) where `S_sym * raw * S_sym^-1 = representative(class)`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::coord::*;
use crate::cubie::CubieCube;
use crate::error::Error;
use crate::file::{Table, TableKind};
use crate::lookup::{self, Lookup, Relocate};
use crate::moves::{Move, N_MOVE};
use crate::symmetry::{Symmetries, N_SYM_D4H, SYMMETRIES};

/// The 10 moves of phase 2 (which keep the cube in the subgroup G1 = <U, D, R2, F2, L2, B2>).
pub const PHASE2_MOVES: [usize; 10] = [0, 1, 2, 4, 7, 9, 10, 11, 13, 16];

/// True for moves that are allowed in phase 2.
pub const fn is_phase2_move(m: usize) -> bool {
    matches!(m, 0 | 1 | 2 | 4 | 7 | 9 | 10 | 11 | 13 | 16)
}

/// A packed sym-coordinate: `class << 4 | sym`, `sym < 16`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct SymCoord(pub u32);

impl SymCoord {
    /// The equivalence class.
    #[inline]
    pub fn class(self) -> usize {
        (self.0 >> 4) as usize
    }
    /// The symmetry that takes the raw coordinate to the class representative.
    #[inline]
    pub fn sym(self) -> usize {
        (self.0 & 15) as usize
    }
}

/// A coordinate reduced by the 16 symmetries of D4h: for each raw value its class and symmetry,
/// for each class its representative and the symmetries that fix it.
#[derive(Default)]
pub struct SymReduction {
    /// Indexed by raw coordinate.
    pub sym: Lookup<SymCoord>,
    /// `rep[class]` is the smallest raw coordinate of the class.
    pub rep: Lookup<u32>,
    /// `self_sym[class]` has bit `s` set when `S_s * rep * S_s^-1 = rep` (bit 0 always set).
    pub self_sym: Lookup<u16>,
}

impl SymReduction {
    /// Reduces `n` raw values; `conj(raw)[s]` is the raw coordinate of `S_s * raw * S_s^-1`.
    pub(crate) fn compute(n: usize, conj: impl Fn(usize) -> [usize; N_SYM_D4H]) -> SymReduction {
        const UNSET: u32 = u32::MAX;
        let mut sym = vec![SymCoord(UNSET); n];
        let mut rep = Vec::new();
        let mut self_sym = Vec::new();
        for raw in 0..n {
            if sym[raw].0 != UNSET {
                continue;
            }
            let class = rep.len() as u32;
            rep.push(raw as u32);
            let mut fixed = 0u16;
            let conjugates = conj(raw);
            for s in 0..N_SYM_D4H {
                // S_s^-1 * rep * S_s = other  <=>  S_s * other * S_s^-1 = rep
                let other = conjugates[SYMMETRIES.inverse[s] as usize];
                if other == raw {
                    fixed |= 1 << s;
                }
                if sym[other].0 == UNSET {
                    sym[other] = SymCoord(class << 4 | s as u32);
                }
            }
            self_sym.push(fixed);
        }
        SymReduction {
            sym: sym.into(),
            rep: rep.into(),
            self_sym: self_sym.into(),
        }
    }

    /// Number of classes.
    pub fn classes(&self) -> usize {
        self.rep.len()
    }
}

/// Bytes of the coordinate file's count and lengths of `n` lookups, rounded up to
/// [`lookup::ALIGN`] (where the first lookup starts).
fn lengths_len(n: usize) -> usize {
    (8 + 8 * n).div_ceil(lookup::ALIGN) * lookup::ALIGN
}

/// Every lookup of a [`CoordTables`] `$t`, in the coordinate file's order, as an array of
/// `$borrow dyn Relocate` (`&` or `&mut`).
macro_rules! lookups {
    ($t:expr, $($borrow:tt)+) => {
        [
            $($borrow)+ $t.twist_move as $($borrow)+ dyn Relocate,
            $($borrow)+ $t.flip_move,
            $($borrow)+ $t.slice_sorted_move,
            $($borrow)+ $t.u_edges_move,
            $($borrow)+ $t.d_edges_move,
            $($borrow)+ $t.corners_move,
            $($borrow)+ $t.ud_edges_move,
            $($borrow)+ $t.twist_conj,
            $($borrow)+ $t.ud_edges_conj,
            $($borrow)+ $t.ud_corners_move,
            $($borrow)+ $t.ud_corners_conj,
            $($borrow)+ $t.flipslice.sym,
            $($borrow)+ $t.flipslice.rep,
            $($borrow)+ $t.flipslice.self_sym,
            $($borrow)+ $t.flipslice_class_move,
            $($borrow)+ $t.corners_sym.sym,
            $($borrow)+ $t.corners_sym.rep,
            $($borrow)+ $t.corners_sym.self_sym,
            $($borrow)+ $t.corners_class_move,
            $($borrow)+ $t.slice_sorted_sym.sym,
            $($borrow)+ $t.slice_sorted_sym.rep,
            $($borrow)+ $t.slice_sorted_sym.self_sym,
            $($borrow)+ $t.ud_edges_from_ud,
        ]
    };
}

/// All move, conjugation and sym-reduction tables (about 15 MB, built in well under a second).
#[derive(Default)]
pub struct CoordTables {
    /// `twist_move[18 * twist + m]`.
    pub twist_move: Lookup<u16>,
    /// `flip_move[18 * flip + m]`.
    pub flip_move: Lookup<u16>,
    /// `slice_sorted_move[18 * slice_sorted + m]`.
    pub slice_sorted_move: Lookup<u16>,
    /// `u_edges_move[18 * u_edges + m]`.
    pub u_edges_move: Lookup<u16>,
    /// `d_edges_move[18 * d_edges + m]`.
    pub d_edges_move: Lookup<u16>,
    /// `corners_move[18 * corners + m]`.
    pub corners_move: Lookup<u16>,
    /// `ud_edges_move[18 * ud_edges + m]`, for phase-2 moves only (0 for the others).
    pub ud_edges_move: Lookup<u16>,
    /// `twist_conj[16 * twist + s]`.
    pub twist_conj: Lookup<u16>,
    /// `ud_edges_conj[16 * ud_edges + s]`.
    pub ud_edges_conj: Lookup<u16>,
    /// `ud_corners_move[18 * ud_corners + m]`.
    pub ud_corners_move: Lookup<u16>,
    /// `ud_corners_conj[16 * ud_corners + s]`.
    pub ud_corners_conj: Lookup<u16>,
    /// FlipUDSlice (raw `slice * 2048 + flip`) reduced to 64430 classes.
    pub flipslice: SymReduction,
    /// `flipslice_class_move[18 * class + m]`: the sym-coordinate of the representative after `m`.
    pub flipslice_class_move: Lookup<SymCoord>,
    /// Corner permutation reduced to 2768 classes.
    pub corners_sym: SymReduction,
    /// `corners_class_move[18 * class + m]`.
    pub corners_class_move: Lookup<SymCoord>,
    /// UDSliceSorted reduced to 788 classes.
    pub slice_sorted_sym: SymReduction,
    /// `ud_edges_from_ud[24 * u_edges + d_edges % 24]`: the phase-2 `ud_edges` of a cube whose
    /// U and D edges are all in the U and D layers, from its `u_edges` and `d_edges`.
    pub ud_edges_from_ud: Lookup<u16>,
}

/// Builds a move table: `set` places a coordinate value in a cube, `get` reads it back.
fn move_table(
    n: usize,
    moves: impl Fn(usize) -> bool,
    set: impl Fn(&mut CubieCube, usize),
    get: impl Fn(&CubieCube) -> usize,
) -> Vec<u16> {
    let mut table = vec![0u16; n * N_MOVE];
    let mut c = CubieCube::SOLVED;
    for x in 0..n {
        set(&mut c, x);
        for m in Move::ALL {
            if moves(m.index()) {
                table[N_MOVE * x + m.index()] = get(&c.apply_move(m)) as u16;
            }
        }
    }
    table
}

/// Builds a conjugation table over the 16 symmetries of D4h ([`conj_of`]).
fn conj_table(
    n: usize,
    set: impl Fn(&mut CubieCube, usize),
    get: impl Fn(&CubieCube) -> usize,
    conjugate: Conjugate,
) -> Vec<u16> {
    let conj = conj_of(set, get, conjugate);
    (0..n).flat_map(|x| conj(x).map(|c| c as u16)).collect()
}

/// How a coordinate's cube is conjugated: [`Symmetries::conjugate`], or
/// [`Symmetries::conjugate_edges`] for a coordinate of the edges alone.
type Conjugate = fn(&Symmetries, &CubieCube, usize) -> CubieCube;

fn set_flipslice(c: &mut CubieCube, raw: usize) {
    c.set_slice_sorted(N_PERM_4 * (raw / N_FLIP));
    c.set_flip(raw % N_FLIP);
}

fn get_flipslice(c: &CubieCube) -> usize {
    c.slice() * N_FLIP + c.flip()
}

/// The conjugates of a raw coordinate under the 16 symmetries of D4h: element `s` is the raw
/// coordinate of `S_s * raw * S_s^-1`. The cube is set up from `raw` once for all 16.
fn conj_of(
    set: impl Fn(&mut CubieCube, usize),
    get: impl Fn(&CubieCube) -> usize,
    conjugate: Conjugate,
) -> impl Fn(usize) -> [usize; N_SYM_D4H] {
    move |raw| {
        let mut c = CubieCube::SOLVED;
        set(&mut c, raw);
        std::array::from_fn(|s| get(&conjugate(&SYMMETRIES, &c, s)))
    }
}

impl CoordTables {
    /// Computes every table (deterministic; about half a second on one core).
    pub fn compute() -> CoordTables {
        let all = |_| true;
        let ud_edges = |c: &CubieCube| c.ud_edges().expect("phase-2 moves keep the slice");
        // the independent tables are computed on all cores
        let (
            (
                twist_move,
                flip_move,
                slice_sorted_move,
                twist_conj,
                ud_corners_move,
                ud_corners_conj,
            ),
            (u_edges_move, d_edges_move),
            (corners_move, ud_edges_move),
            ud_edges_conj,
            flipslice_raw,
            (corners_sym, slice_sorted_sym),
        ) = std::thread::scope(|s| {
            let small = s.spawn(|| {
                (
                    move_table(N_TWIST, all, CubieCube::set_twist, CubieCube::twist),
                    move_table(N_FLIP, all, CubieCube::set_flip, CubieCube::flip),
                    move_table(
                        N_SLICE_SORTED,
                        all,
                        CubieCube::set_slice_sorted,
                        CubieCube::slice_sorted,
                    ),
                    conj_table(
                        N_TWIST,
                        CubieCube::set_twist,
                        CubieCube::twist,
                        Symmetries::conjugate,
                    ),
                    move_table(
                        N_UD_CORNERS,
                        all,
                        CubieCube::set_ud_corners,
                        CubieCube::ud_corners,
                    ),
                    conj_table(
                        N_UD_CORNERS,
                        CubieCube::set_ud_corners,
                        CubieCube::ud_corners,
                        Symmetries::conjugate,
                    ),
                )
            });
            let ud = s.spawn(|| {
                (
                    move_table(N_U_EDGES, all, CubieCube::set_u_edges, CubieCube::u_edges),
                    move_table(N_U_EDGES, all, CubieCube::set_d_edges, CubieCube::d_edges),
                )
            });
            let perms = s.spawn(|| {
                (
                    move_table(N_CORNERS, all, CubieCube::set_corners, CubieCube::corners),
                    move_table(
                        N_UD_EDGES,
                        is_phase2_move,
                        CubieCube::set_ud_edges,
                        ud_edges,
                    ),
                )
            });
            let ud_conj = s.spawn(|| {
                conj_table(
                    N_UD_EDGES,
                    CubieCube::set_ud_edges,
                    ud_edges,
                    Symmetries::conjugate_edges,
                )
            });
            let flipslice = s.spawn(|| {
                SymReduction::compute(
                    N_FLIPSLICE,
                    conj_of(set_flipslice, get_flipslice, Symmetries::conjugate_edges),
                )
            });
            let syms = s.spawn(|| {
                (
                    SymReduction::compute(
                        N_CORNERS,
                        conj_of(
                            CubieCube::set_corners,
                            CubieCube::corners,
                            Symmetries::conjugate,
                        ),
                    ),
                    SymReduction::compute(
                        N_SLICE_SORTED,
                        conj_of(
                            CubieCube::set_slice_sorted,
                            CubieCube::slice_sorted,
                            Symmetries::conjugate_edges,
                        ),
                    ),
                )
            });
            let join = "table computation does not panic";
            (
                small.join().expect(join),
                ud.join().expect(join),
                perms.join().expect(join),
                ud_conj.join().expect(join),
                flipslice.join().expect(join),
                syms.join().expect(join),
            )
        });

        let flipslice = flipslice_raw;
        let mut flipslice_class_move = Vec::with_capacity(flipslice.classes() * N_MOVE);
        for &rep in flipslice.rep.iter() {
            let (slice, flip) = (rep as usize / N_FLIP, rep as usize % N_FLIP);
            for m in 0..N_MOVE {
                let slice1 = slice_sorted_move[N_MOVE * slice * N_PERM_4 + m] as usize / N_PERM_4;
                let flip1 = flip_move[N_MOVE * flip + m] as usize;
                flipslice_class_move.push(flipslice.sym[slice1 * N_FLIP + flip1]);
            }
        }

        let mut corners_class_move = Vec::with_capacity(corners_sym.classes() * N_MOVE);
        for &rep in corners_sym.rep.iter() {
            for m in 0..N_MOVE {
                let c1 = corners_move[N_MOVE * rep as usize + m] as usize;
                corners_class_move.push(corners_sym.sym[c1]);
            }
        }

        let mut ud_edges_from_ud = vec![u16::MAX; N_U_EDGES * N_PERM_4];
        let mut c = CubieCube::SOLVED;
        for e in 0..N_UD_EDGES {
            c.set_ud_edges(e);
            ud_edges_from_ud[N_PERM_4 * c.u_edges() + c.d_edges() % N_PERM_4] = e as u16;
        }

        CoordTables {
            twist_move: twist_move.into(),
            flip_move: flip_move.into(),
            slice_sorted_move: slice_sorted_move.into(),
            u_edges_move: u_edges_move.into(),
            d_edges_move: d_edges_move.into(),
            corners_move: corners_move.into(),
            ud_edges_move: ud_edges_move.into(),
            twist_conj: twist_conj.into(),
            ud_edges_conj: ud_edges_conj.into(),
            ud_corners_move: ud_corners_move.into(),
            ud_corners_conj: ud_corners_conj.into(),
            flipslice,
            flipslice_class_move: flipslice_class_move.into(),
            corners_sym,
            corners_class_move: corners_class_move.into(),
            slice_sorted_sym,
            ud_edges_from_ud: ud_edges_from_ud.into(),
        }
    }

    /// Moves every table into one mapping backed by transparent huge pages
    /// ([`lookup::relocate`]): searches look them up at random, and on 4 KB pages most of those
    /// lookups would miss the TLB. The contents do not change.
    pub fn move_to_huge_pages(&mut self) -> std::io::Result<()> {
        lookup::relocate(&mut lookups!(self, &mut))
    }

    /// The payload of the coordinate table file ([`TableKind::Coords`]): the number of lookups
    /// `n` (u64, little-endian), their lengths in bytes (`n` u64s), then each lookup's bytes,
    /// every part starting at a multiple of [`lookup::ALIGN`] from the payload's start.
    pub fn file_payload(&self) -> Vec<u8> {
        let all = lookups!(self, &);
        let (offsets, end) =
            lookup::layout(lengths_len(all.len()), all.iter().map(|l| l.byte_len()));
        let mut out = vec![0u8; end];
        out[..8].copy_from_slice(&(all.len() as u64).to_le_bytes());
        for (i, (l, &at)) in all.iter().zip(&offsets).enumerate() {
            out[8 + 8 * i..16 + 8 * i].copy_from_slice(&(l.byte_len() as u64).to_le_bytes());
            out[at..at + l.byte_len()].copy_from_slice(l.bytes());
        }
        out
    }

    /// The coordinate tables read from their file (see [`CoordTables::file_payload`]),
    /// checked as [`Table::open`] checks every table; the lookups point into the mapping.
    pub fn from_table(table: Table) -> Result<CoordTables, Error> {
        let bad = |reason: &str| Error::BadTable {
            path: PathBuf::from(TableKind::Coords.file_name()),
            reason: reason.into(),
        };
        let payload = table.payload();
        let word = |i: usize| -> Option<usize> {
            let b = payload.get(8 * i..8 * i + 8)?;
            usize::try_from(u64::from_le_bytes(b.try_into().ok()?)).ok()
        };
        let mut coords = CoordTables::default();
        let n = lookups!(coords, &mut).len();
        if word(0) != Some(n) {
            return Err(bad("holds another set of coordinate tables"));
        }
        let lens: Vec<usize> = (1..=n)
            .map(word)
            .collect::<Option<_>>()
            .ok_or_else(|| bad("lengths cut short"))?;
        let (map, base) = table.into_parts();
        let (offsets, end) = lookup::layout(base + lengths_len(n), lens.iter().copied());
        if end > map.len() {
            return Err(bad("lookups past the end of the file"));
        }
        let map = Arc::new(map);
        for ((l, &at), &len) in lookups!(coords, &mut).into_iter().zip(&offsets).zip(&lens) {
            // SAFETY: table files are never written in place (see `Table::open`).
            if !unsafe { l.point_at(map.clone(), at, len) } {
                return Err(bad("a lookup outside the file or of a broken length"));
            }
        }
        Ok(coords)
    }

    /// The phase-1 sym-coordinate of a cube given its raw slice (0..495) and flip.
    #[inline]
    pub fn flipslice_sym(&self, slice: usize, flip: usize) -> SymCoord {
        self.flipslice.sym[slice * N_FLIP + flip]
    }

    /// The index in the phase-1 tables of a position with raw FlipUDSlice `flipslice`
    /// (`slice * 2048 + flip`, the slice without its order) and twist `twist`:
    /// `2187 * class + twist conjugated by the class's symmetry`; and that symmetry (`< 16`).
    #[inline]
    pub fn phase1_index(&self, flipslice: usize, twist: usize) -> (usize, usize) {
        let sc = self.flipslice.sym[flipslice];
        let t = self.twist_conj[16 * twist + sc.sym()] as usize;
        (N_TWIST * sc.class() + t, sc.sym())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::LazyLock;

    static T: LazyLock<CoordTables> = LazyLock::new(CoordTables::compute);

    /// The coordinate file's tables read back exactly as computed; a file of another shape
    /// is refused.
    #[test]
    fn the_coordinate_file_reads_back_as_computed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let payload = T.file_payload();
        let entries = payload.len() as u64;
        Table::in_memory(TableKind::Coords, entries, 0, payload)
            .write_to(dir.path())
            .expect("write");
        let read =
            CoordTables::from_table(Table::open(dir.path(), TableKind::Coords).expect("open"))
                .expect("reads");
        let (want, got) = (lookups!(T, &), lookups!(read, &));
        for (i, (w, g)) in want.iter().zip(&got).enumerate() {
            assert_eq!(w.bytes(), g.bytes(), "lookup {i}");
        }
        assert_eq!(read.flipslice.classes(), 64430);
        // a count that is not this build's
        let mut other = T.file_payload();
        other[0] = 7;
        let entries = other.len() as u64;
        Table::in_memory(TableKind::Coords, entries, 0, other)
            .write_to(dir.path())
            .expect("write");
        let table = Table::open(dir.path(), TableKind::Coords).expect("open");
        assert!(CoordTables::from_table(table).is_err());
    }

    #[test]
    fn class_counts_are_the_published_ones() {
        assert_eq!(T.flipslice.classes(), 64430);
        assert_eq!(T.corners_sym.classes(), 2768);
        assert_eq!(T.slice_sorted_sym.classes(), 788);
    }

    /// Every move table agrees with cubie multiplication (the naive oracle), for every value.
    #[test]
    fn move_tables_equal_cubie_multiplication() {
        type Coord = (
            &'static str,
            usize,
            fn(&mut CubieCube, usize),
            fn(&CubieCube) -> usize,
        );
        let coords: [Coord; 7] = [
            ("twist", N_TWIST, CubieCube::set_twist, CubieCube::twist),
            ("flip", N_FLIP, CubieCube::set_flip, CubieCube::flip),
            (
                "slice_sorted",
                N_SLICE_SORTED,
                CubieCube::set_slice_sorted,
                CubieCube::slice_sorted,
            ),
            (
                "u_edges",
                N_U_EDGES,
                CubieCube::set_u_edges,
                CubieCube::u_edges,
            ),
            (
                "d_edges",
                N_U_EDGES,
                CubieCube::set_d_edges,
                CubieCube::d_edges,
            ),
            (
                "corners",
                N_CORNERS,
                CubieCube::set_corners,
                CubieCube::corners,
            ),
            (
                "ud_corners",
                N_UD_CORNERS,
                CubieCube::set_ud_corners,
                CubieCube::ud_corners,
            ),
        ];
        let tables = [
            &T.twist_move,
            &T.flip_move,
            &T.slice_sorted_move,
            &T.u_edges_move,
            &T.d_edges_move,
            &T.corners_move,
            &T.ud_corners_move,
        ];
        // a random cube as the base, so other pieces are not in their solved places
        let base = CubieCube::from_moves(
            &crate::moves::MoveSeq::parse("R U2 F' L D B2 R' U F D2")
                .expect("ok")
                .0,
        );
        for ((name, n, set, get), table) in coords.iter().zip(tables) {
            for x in 0..*n {
                let mut c = base;
                set(&mut c, x);
                for m in Move::ALL {
                    assert_eq!(
                        table[N_MOVE * x + m.index()] as usize,
                        get(&c.apply_move(m)),
                        "{name} {x} {m}"
                    );
                }
            }
        }
        for x in 0..N_UD_EDGES {
            let mut c = CubieCube::SOLVED;
            c.set_ud_edges(x);
            for &m in &PHASE2_MOVES {
                let after = c.apply_move(Move::from_index(m)).ud_edges();
                assert_eq!(Some(T.ud_edges_move[N_MOVE * x + m] as usize), after);
            }
        }
    }

    /// Sym-coordinates: moving the representative and conjugating agrees with raw moves.
    #[test]
    fn sym_coordinate_moves_agree_with_raw_moves() {
        for class in (0..T.flipslice.classes()).step_by(97) {
            let rep = T.flipslice.rep[class] as usize;
            for m in 0..N_MOVE {
                let mut c = CubieCube::SOLVED;
                set_flipslice(&mut c, rep);
                let raw1 = get_flipslice(&c.apply_move(Move::from_index(m)));
                let sc = T.flipslice_class_move[N_MOVE * class + m];
                assert_eq!(T.flipslice.sym[raw1], sc);
                // S * raw1 * S^-1 is the representative of the class
                let mut r = CubieCube::SOLVED;
                set_flipslice(&mut r, raw1);
                let conj = SYMMETRIES.conjugate(&r, sc.sym());
                assert_eq!(get_flipslice(&conj), T.flipslice.rep[sc.class()] as usize);
            }
        }
        for class in 0..T.corners_sym.classes() {
            let sc = T.corners_class_move[N_MOVE * class + 3];
            let mut c = CubieCube::SOLVED;
            c.set_corners(T.corners_sym.rep[class] as usize);
            let mut r = CubieCube::SOLVED;
            r.set_corners(c.apply_move(Move::from_index(3)).corners());
            assert_eq!(
                SYMMETRIES.conjugate(&r, sc.sym()).corners(),
                T.corners_sym.rep[sc.class()] as usize
            );
        }
    }

    #[test]
    fn conjugation_tables_agree_with_cubies() {
        let base = CubieCube::from_moves(&crate::moves::MoveSeq::parse("R U F").expect("ok").0);
        for t in (0..N_TWIST).step_by(7) {
            let mut c = base;
            c.set_twist(t);
            for s in 0..N_SYM_D4H {
                assert_eq!(
                    T.twist_conj[16 * t + s] as usize,
                    SYMMETRIES.conjugate(&c, s).twist()
                );
            }
        }
        // UDCorners of a conjugate depends on the D corners' positions alone
        for p in (0..N_CORNERS).step_by(13) {
            let mut c = base;
            c.set_corners(p);
            for s in 0..N_SYM_D4H {
                assert_eq!(
                    T.ud_corners_conj[16 * c.ud_corners() + s] as usize,
                    SYMMETRIES.conjugate(&c, s).ud_corners()
                );
            }
        }
    }
}
