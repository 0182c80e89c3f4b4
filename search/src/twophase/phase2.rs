//! Phase 2 of the two-phase search: from a phase-1 solution in G1 to the solved cube by IDA*
//! over the 10 moves of G1, bounded by the corner-class x UD-edge table and the corner x slice
//! table.

use std::sync::atomic::Ordering;

use cubefleet_tables::coord::{N_PERM_4, N_UD_EDGES};
use cubefleet_tables::moves::N_MOVE;

use super::phase1::{Child, Node};
use super::{TwoPhaseSearcher, PHASE2_LIMIT, PHASE2_MASK};
use crate::{moves_in, prefetch, AFTER};

impl TwoPhaseSearcher<'_> {
    /// Phase 2 after a phase-1 solution of `n1` moves must take fewer moves than this.
    #[inline]
    pub(super) fn phase2_limit(&self, n1: usize) -> usize {
        self.bound()
            .saturating_sub(n1 + self.extra)
            .min(PHASE2_LIMIT)
    }

    /// Phase-2 lower bound from corners, UD edges and slice order.
    #[inline]
    pub(super) fn prune2(&self, corners: usize, ud_edges: usize, slice: usize) -> usize {
        let a = self.tables.phase2.payload()[self.phase2_index(corners, ud_edges)];
        let b = self.tables.phase2_slice.payload()[corner_slice_index(corners, slice)];
        a.max(b) as usize
    }

    /// The index in the phase-2 table of a G1 position's corner permutation and UD edges.
    #[inline]
    pub(super) fn phase2_index(&self, corners: usize, ud_edges: usize) -> usize {
        let c = &self.tables.coords;
        let sc = c.corners_sym.sym[corners];
        N_UD_EDGES * sc.class() + c.ud_edges_conj[16 * ud_edges + sc.sym()] as usize
    }

    /// The cheap corner check of a phase-1 solution ending in `node`: true when its corners
    /// and slice edges (the corner x slice table, 1 MB) can be solved in fewer than `limit`
    /// phase-2 moves.
    #[inline]
    pub(super) fn corner_check(&self, node: &Node, limit: usize) -> bool {
        let index = corner_slice_index(node.corners as usize, node.slice_sorted as usize);
        (self.tables.phase2_slice.payload()[index] as usize) < limit
    }

    /// The phase-2 UD-edge coordinate of `node` (in G1) from its U- and D-edge coordinates.
    #[inline]
    pub(super) fn ud_edges(&self, node: &Node) -> usize {
        self.tables.coords.ud_edges_from_ud[ud_edges_index(node)] as usize
    }

    /// Starts loading what [`Self::corner_check`] and [`Self::ud_edges`] read for `node`.
    #[inline]
    pub(super) fn prefetch_corner_check(&self, node: &Node) {
        let index = corner_slice_index(node.corners as usize, node.slice_sorted as usize);
        prefetch(self.tables.phase2_slice.payload(), index);
        prefetch(&self.tables.coords.ud_edges_from_ud, ud_edges_index(node));
    }

    /// Starts loading the phase-2 entries of `leaves` (past the corner check, their UD-edge
    /// coordinates' entries already on their way), in two rounds: the entry's index needs a
    /// conjugated UD-edge coordinate, from a 1.3 MB table, first.
    pub(super) fn prefetch_phase2(&self, leaves: &[Child]) {
        let c = &self.tables.coords;
        for leaf in leaves {
            let sym = c.corners_sym.sym[leaf.node.corners as usize].sym();
            prefetch(&c.ud_edges_conj, 16 * self.ud_edges(&leaf.node) + sym);
        }
        for leaf in leaves {
            let node = &leaf.node;
            let index = self.phase2_index(node.corners as usize, self.ud_edges(node));
            prefetch(self.tables.phase2.payload(), index);
        }
    }

    /// At the end of a phase-1 solution of length `n1` whose last move is `last`, reaching
    /// `node` (in G1): sets up phase 2 and searches it. Returns the phase-2 length when a
    /// solution was found (its moves in `path2`); the caller writes the phase-1 moves into
    /// `path1` and [`Self::record`]s it (a batch's leaves build their paths only then).
    pub(super) fn enter_phase2(&mut self, node: &Node, n1: usize, last: usize) -> Option<usize> {
        let limit = self.phase2_limit(n1);
        // cheap corner check before the edges are combined (never passed when `limit` is 0)
        if !self.corner_check(node, limit) {
            return None;
        }
        let (corners, slice_sorted) = (node.corners as usize, node.slice_sorted as usize);
        let ud = self.ud_edges(node);
        let dist2 = self.prune2(corners, ud, slice_sorted);
        for togo2 in dist2..limit {
            if self.phase2(corners, ud, slice_sorted, last, 0, togo2) {
                return Some(togo2);
            }
            if self.stop {
                return None;
            }
        }
        None
    }

    /// Records the solution of direction `d` made of `path1[..n1]` (phase 1), `path2[..n2]`
    /// (phase 2) and the pre-move, if any, as the best so far (it is shorter than the best
    /// before: phase 2's limit saw to that); stops the search when it is within the target.
    pub(super) fn record(&mut self, d: usize, n1: usize, n2: usize) {
        let total = n1 + n2 + self.extra;
        self.best[..n1].copy_from_slice(&self.path1[..n1]);
        self.best[n1..n1 + n2].copy_from_slice(&self.path2[..n2]);
        if self.extra == 1 {
            self.best[total - 1] = self.pre;
        }
        self.best_len = total;
        self.best_dir = d;
        if let Some(b) = &self.shared_best {
            b.fetch_min(total, Ordering::Relaxed);
        }
        if total <= self.target {
            self.stop = true;
        }
    }

    /// IDA* in phase 2; true when a solution of exactly `togo` more moves was found (in `path2`).
    /// In a premoved direction the solution must also end in a move (`last`) on another face
    /// than the pre-move's: else the whole is longer than it needs be (`R2 R` is `R'`). (Two
    /// turns of opposite faces in the non-canonical order are let through: filtering them too
    /// cost 9 % more nodes over the 1000 random states at target 20.)
    pub(super) fn phase2(
        &mut self,
        corners: usize,
        ud: usize,
        slice: usize,
        last: usize,
        n: usize,
        togo: usize,
    ) -> bool {
        if togo == 0 {
            return corners == 0
                && ud == 0
                && slice == 0
                && (self.extra == 0 || last / 3 != self.pre as usize / 3);
        }
        let c = &self.tables.coords;
        let (phase2, phase2_slice) = (
            self.tables.phase2.payload(),
            self.tables.phase2_slice.payload(),
        );
        // (move, corners, ud_edges, slice, phase-2 table index) of the children that pass the
        // cheap corner x slice bound; their big-table entries are prefetched together
        let mut children = [(0u8, 0u16, 0u16, 0u8, 0u32); 10];
        let mut count = 0;
        for m in moves_in(AFTER[last] & PHASE2_MASK) {
            let c1 = c.corners_move[N_MOVE * corners + m] as usize;
            let s1 = c.slice_sorted_move[N_MOVE * slice + m] as usize;
            if phase2_slice[N_PERM_4 * c1 + s1] as usize >= togo {
                continue;
            }
            let e1 = c.ud_edges_move[N_MOVE * ud + m] as usize;
            let sc = c.corners_sym.sym[c1];
            let index = N_UD_EDGES * sc.class() + c.ud_edges_conj[16 * e1 + sc.sym()] as usize;
            prefetch(phase2, index);
            children[count] = (m as u8, c1 as u16, e1 as u16, s1 as u8, index as u32);
            count += 1;
        }
        for &(m, c1, e1, s1, index) in &children[..count] {
            if phase2[index as usize] as usize >= togo {
                continue;
            }
            self.path2[n] = m;
            self.tick();
            if self.phase2(
                c1 as usize,
                e1 as usize,
                s1 as usize,
                m as usize,
                n + 1,
                togo - 1,
            ) {
                return true;
            }
        }
        false
    }
}

/// The index in the corner x slice table of a corner permutation and a slice order.
#[inline]
fn corner_slice_index(corners: usize, slice: usize) -> usize {
    N_PERM_4 * corners + slice
}

/// The index in the UD-edge table (`ud_edges_from_ud`) of `node`'s U- and D-edge coordinates.
#[inline]
fn ud_edges_index(node: &Node) -> usize {
    N_PERM_4 * node.u_edges as usize + node.d_edges as usize % N_PERM_4
}
