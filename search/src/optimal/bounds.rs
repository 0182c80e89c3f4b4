//! The lower bounds an optimal search reads: the phase-1 table, or a mod-3 table (huge, giant or
//! colossal), on three axes of the position and of its inverse.

use cubefleet_tables::colossal::{ColossalIndex, Rows};
use cubefleet_tables::coord::{raw_flipslice, N_PERM_4};
use cubefleet_tables::file::TableKind;
use cubefleet_tables::huge::Mod3Coords;
use cubefleet_tables::mod3::Mod3Table;
use cubefleet_tables::symmetry::{SYMMETRIES, SYM_URF3};
use cubefleet_tables::{CubieCube, Tables};

use crate::prefetch;

/// The three axes: identity, `S_URF3` (UD -> RL), `S_URF3^2` (UD -> FB).
pub(super) const AXIS_SYM: [usize; 3] = [0, SYM_URF3, 2 * SYM_URF3];

/// One axis's coordinates of a search node. Ranges: `slice_sorted < 11880`, `flip < 2048`,
/// `twist < 2187`, `ud_corners < 70`; `depth` is the exact depth of this axis in the table the
/// bound is read from (the mod-3 table, huge, giant or colossal, else phase 1).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Axis {
    pub(super) slice_sorted: u16,
    pub(super) flip: u16,
    pub(super) twist: u16,
    pub(super) ud_corners: u8,
    pub(super) depth: u8,
}

impl Axis {
    /// The raw FlipUDSlice (phase 1's coordinate before its symmetry reduction).
    #[inline]
    pub(super) fn flipslice(&self) -> usize {
        raw_flipslice(self.slice_sorted as usize, self.flip as usize)
    }

    /// The coordinates a mod-3 table is read by.
    #[inline]
    fn mod3_coords(&self) -> Mod3Coords {
        Mod3Coords {
            slice_sorted: self.slice_sorted as usize,
            flip: self.flip as usize,
            twist: self.twist as usize,
            ud_corners: self.ud_corners as usize,
        }
    }
}

/// A search node: the coordinates on the three axes.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Node {
    pub(super) axes: [Axis; 3],
}

/// The tables an optimal search reads, borrowed for the searcher's lifetime.
#[derive(Clone, Copy)]
pub struct OptimalTables<'a> {
    /// Move tables and the phase-1 pruning table.
    pub tables: &'a Tables,
    /// The mod-3 table, huge, giant or colossal, when one is built and loaded; used instead of phase 1
    /// for the bound.
    pub bound: Option<&'a Mod3Table>,
    /// True when `bound` is the giant or the colossal table, which read UDCorners: the
    /// coordinate is tracked only then (0 otherwise). Their indexes need a sym-coordinate
    /// from a table of its own first, so the search prefetches it a stage ahead.
    pub(super) reads_ud_corners: bool,
    /// True when `bound` is the giant table, which does not read the slice edges' order.
    pub(super) drops_slice_order: bool,
    /// The colossal table's index and rows (entries and floors) when `bound` is the colossal
    /// table.
    colossal: Option<(&'a ColossalIndex, Rows<'a>)>,
}

impl<'a> OptimalTables<'a> {
    /// The phase-1 tables only.
    pub fn new(tables: &'a Tables) -> Self {
        OptimalTables::with_bound(tables, None)
    }

    /// With the mod-3 table loaded in `tables` (colossal, else giant, else huge), if any.
    pub fn with_loaded_bound(tables: &'a Tables) -> Self {
        OptimalTables::with_bound(tables, tables.optimal_bound.as_ref())
    }

    /// With a mod-3 table, huge, giant or colossal (when `bound` is `Some`).
    pub fn with_bound(tables: &'a Tables, bound: Option<&'a Mod3Table>) -> Self {
        OptimalTables {
            tables,
            bound,
            reads_ud_corners: bound
                .is_some_and(|h| matches!(h.kind(), TableKind::Giant | TableKind::Colossal)),
            drops_slice_order: bound.is_some_and(|h| h.kind() == TableKind::Giant),
            colossal: bound.and_then(Mod3Table::colossal),
        }
    }

    /// The node of `cube`: its coordinates on the three axes (and their table depths).
    pub(super) fn root(&self, cube: &CubieCube) -> Node {
        let mut node = Node::default();
        for (a, &s) in AXIS_SYM.iter().enumerate() {
            let x = Mod3Coords::of(&SYMMETRIES.conjugate(cube, s));
            let axis = &mut node.axes[a];
            *axis = Axis {
                slice_sorted: x.slice_sorted as u16,
                flip: x.flip as u16,
                twist: x.twist as u16,
                ud_corners: x.ud_corners as u8,
                depth: 0,
            };
            axis.depth = match self.bound {
                Some(h) => h.depth(&self.tables.coords, &x),
                None => self.phase1(axis),
            } as u8;
        }
        node
    }

    /// Phase-1 depth (`0..=12`) of one axis.
    #[inline]
    pub(super) fn phase1(&self, a: &Axis) -> u32 {
        self.tables.phase1.payload()[self.phase1_entry(a)] as u32
    }

    /// The index of an axis's entry in the phase-1 table (one byte each).
    #[inline]
    fn phase1_entry(&self, a: &Axis) -> usize {
        self.tables
            .coords
            .phase1_index(a.flipslice(), a.twist as usize)
            .0
    }

    /// The index of the mod-3 table's entry of these coordinates, whose loading has been
    /// started.
    #[inline]
    fn mod3_entry_prefetched(&self, h: &Mod3Table, x: &Mod3Coords) -> usize {
        let e = h.index(&self.tables.coords, x);
        h.prefetch(e);
        e
    }

    /// Starts loading the sym-coordinate an axis's giant-table index needs (FlipUDSlice's, a
    /// 4 MB table) or its colossal-table index (the corners', 0.6 MB), so that
    /// [`OptimalTables::entry_prefetched`] does not wait for it.
    #[inline]
    pub(super) fn prefetch_sym(&self, a: &Axis) {
        match self.colossal {
            Some((index, _)) => prefetch(
                &index.corners.sym,
                ColossalIndex::corner_raw(&a.mod3_coords()),
            ),
            None => prefetch(&self.tables.coords.flipslice.sym, a.flipslice()),
        }
    }

    /// The index of an axis's entry in the table the bound is read from (the mod-3 table when
    /// present, else phase 1), and a hint to the CPU to start loading it.
    #[inline]
    pub(super) fn entry_prefetched(&self, a: &Axis) -> usize {
        match self.bound {
            None => self.phase1_entry_prefetched(a),
            Some(h) => self.mod3_entry_prefetched(h, &a.mod3_coords()),
        }
    }

    /// The lower bound of one axis of `child`, whose parent axis is `parent`, from its table
    /// entry `entry` (see [`OptimalTables::entry_prefetched`]); fills in the child's table depth.
    #[inline]
    pub(super) fn axis_bound(&self, entry: usize, parent: &Axis, child: &mut Axis) -> u32 {
        let d = match self.bound {
            None => self.tables.phase1.payload()[entry] as u32,
            Some(h) => next_bound(parent.depth as u32, h.mod3(entry)),
        };
        child.depth = d as u8;
        d
    }

    /// The first stage of reading a position `y` held at the cubie level (the cubie side of a
    /// node): its coordinates (UDCorners 0 unless the table reads it; the giant table leaves
    /// the slice edges' order out of UDSliceSorted: `24 * slice`), with the
    /// sym-coordinates the second stage reads prefetched, and its huge-table entry
    /// (prefetched; 0 without the huge table). The phase-1, giant and colossal entries need a
    /// sym-coordinate, so they are a second stage ([`OptimalTables::cubie_side_second`]), run
    /// once the loads of every child are under way.
    #[inline]
    pub(super) fn cubie_side_first(&self, y: &CubieCube) -> (Axis, usize) {
        let axis = Axis {
            slice_sorted: if self.drops_slice_order {
                // the giant table reads where the slice edges are, not their order
                (N_PERM_4 * y.slice()) as u16
            } else {
                y.slice_sorted() as u16
            },
            flip: y.flip() as u16,
            twist: y.twist() as u16,
            ud_corners: if self.reads_ud_corners {
                y.ud_corners() as u8
            } else {
                0
            },
            depth: 0,
        };
        self.prefetch_sym(&axis);
        let mod3 = match self.bound {
            Some(h) if !self.reads_ud_corners => self.mod3_entry_prefetched(h, &axis.mod3_coords()),
            _ => 0,
        };
        (axis, mod3)
    }

    /// The phase-1 entry of an axis, prefetched.
    #[inline]
    pub(super) fn phase1_entry_prefetched(&self, a: &Axis) -> usize {
        let e = self.phase1_entry(a);
        prefetch(self.tables.phase1.payload(), e);
        e
    }

    /// The second stage of reading the cubie side's axis `a`, whose first stage
    /// ([`OptimalTables::cubie_side_first`]) gave `mod3`: where its floor is read (the phase-1
    /// entry; with the colossal table its own entry, whose row holds its floor, [`Rows`]) and
    /// its mod-3 entry, all prefetched, for [`OptimalTables::loose_bound`].
    #[inline]
    pub(super) fn cubie_side_second(&self, a: &Axis, mod3: usize) -> (usize, usize) {
        match (self.colossal, self.bound) {
            (Some((index, rows)), _) => {
                let e = index.index(&a.mod3_coords());
                rows.prefetch(e);
                (e, e)
            }
            _ => {
                let p = self.phase1_entry_prefetched(a);
                let e = if self.reads_ud_corners {
                    self.entry_prefetched(a)
                } else {
                    mod3
                };
                (p, e)
            }
        }
    }

    /// A lower bound of the table depth (the phase-1 depth without a mod-3 table) that needs no
    /// neighbour's exact depth, from [`OptimalTables::cubie_side_second`]'s `floor` and mod-3
    /// entry: the table's depth is at least its floor `p` (the phase-1 depth, whose goal
    /// contains the huge and giant tables' goals, or the colossal table's floors in its [`Rows`]), and it
    /// is `mod3` modulo 3; the least such number.
    #[inline]
    pub(super) fn loose_bound(&self, floor: usize, mod3: usize) -> u32 {
        let p = match self.colossal {
            Some((_, rows)) => rows.floor(floor),
            None => self.tables.phase1.payload()[floor] as u32,
        };
        match self.bound {
            None => p,
            Some(h) => LEAST_AT_LEAST[4 * p as usize + h.mod3(mod3) as usize] as u32,
        }
    }
}

/// The bound of a neighbour whose mod-3 entry is `mod3`, from the bound `parent` of a position
/// one move away. When `parent` is at most that position's table depth and congruent to it
/// modulo 3, so is the result: depths of neighbours differ by at most one, so the result is the
/// neighbour's depth less the parent's shortfall (a multiple of 3; none when `parent` is exact,
/// as [`next_depth`](cubefleet_tables::huge::next_depth) assumes). Where that would fall below 0, the residue's next value, 2, is
/// taken: a depth congruent to 2 is at least 2.
///
/// Read from a table of every case (depths are below 64): the search does it for most of the
/// children it makes, and the table saves two divisions by 3.
#[inline]
pub(super) fn next_bound(parent: u32, mod3: u8) -> u32 {
    NEXT_BOUND[4 * parent as usize + mod3 as usize] as u32
}

/// `NEXT_BOUND[4 * parent + mod3]`: [`next_bound`] for `parent < 64` (entry 3 of each four,
/// a value no finished table holds, is `parent`).
const NEXT_BOUND: [u8; 256] = residue_table(true);

/// `LEAST_AT_LEAST[4 * p + r]`: the least number at least `p` that is `r` modulo 3 (for
/// [`OptimalTables::loose_bound`]; `p < 64`; entry 3 of each four is `p`).
const LEAST_AT_LEAST: [u8; 256] = residue_table(false);

/// [`NEXT_BOUND`] (`next`) or [`LEAST_AT_LEAST`]: at `4 * p + r` for `p < 64`, `r < 3`.
const fn residue_table(next: bool) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut p = 0;
    while p < 64 {
        let mut r = 0;
        while r < 3 {
            let up = (r + 3 - p % 3) % 3;
            // one below (`up == 2`) for the neighbour's bound; never below the residue's least
            t[4 * p + r] = if !next || up < 2 {
                p + up
            } else if p == 0 {
                2
            } else {
                p - 1
            } as u8;
            r += 1;
        }
        t[4 * p + 3] = p as u8;
        p += 1;
    }
    t
}

/// The inverse of `cube` seen on each axis (`S c^-1 S^-1` for the axis symmetry `S`).
pub(super) fn inverse_axes(cube: &CubieCube) -> [CubieCube; 3] {
    let inv = cube.inverse();
    AXIS_SYM.map(|s| SYMMETRIES.conjugate(&inv, s))
}

/// `max(bounds)`, raised to `min + 1` for a position known not to be solved.
#[inline]
pub(super) fn combine(bounds: [u32; 3], unsolved: bool) -> u32 {
    let max = bounds[0].max(bounds[1]).max(bounds[2]);
    if unsolved {
        max.max(bounds[0].min(bounds[1]).min(bounds[2]) + 1)
    } else {
        max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From any bound at most a position's depth and congruent to it modulo 3, the bound of a
    /// neighbour (depth within one) is again at most its depth and congruent to it; exact from
    /// an exact parent.
    #[test]
    fn next_bound_keeps_congruent_lower_bounds() {
        for depth in 0..30u32 {
            for shortfall in (0..=depth).step_by(3) {
                let parent = depth - shortfall;
                for next in depth.saturating_sub(1)..=depth + 1 {
                    let b = next_bound(parent, (next % 3) as u8);
                    assert!(b <= next, "{parent} (depth {depth}) -> {b} > {next}");
                    assert_eq!(b % 3, next % 3, "{parent} (depth {depth}) -> {b} vs {next}");
                    if shortfall == 0 {
                        assert_eq!(b, next);
                    }
                }
            }
        }
    }

    /// The table behind the loose bound: the least number at least `p` with residue `r`.
    #[test]
    fn least_at_least_is_the_least_of_its_residue() {
        for p in 0..64u32 {
            for r in 0..3u32 {
                let want = (p..).find(|v| v % 3 == r).expect("exists");
                assert_eq!(LEAST_AT_LEAST[(4 * p + r) as usize] as u32, want);
            }
        }
    }
}
