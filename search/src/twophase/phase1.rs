//! Phase 1 of the two-phase search: IDA* into G1, depth first down to [`BATCH_LEVELS`] moves
//! above G1, then a batch of nodes at a time breadth first, so that the table misses of a whole
//! level overlap. Its nodes carry the coordinates phase 2 starts from.

use cubefleet_tables::coord::{raw_flipslice, N_PERM_4};
use cubefleet_tables::moves::N_MOVE;
use cubefleet_tables::prune::Phase1Moves;
use cubefleet_tables::CoordTables;

use super::{TwoPhaseSearcher, MAX_PHASE1, PHASE2_MASK};
use crate::{moves_in, prefetch, AFTER, NO_MOVE};

/// Phase-1 nodes this many moves above G1 are searched in batches, breadth first
/// (`TwoPhaseSearcher::search_batch`). Measured over the 1000 random states at target 20
/// (docs/benchmarks-history.md): 9 levels and 8 nodes a batch beat 4-12 levels and 4-64 nodes.
pub(super) const BATCH_LEVELS: usize = 9;
/// Nodes gathered into one batch.
pub(super) const BATCH_ROOTS: usize = 8;
/// Room for the levels of a batch made with a searcher (224 KB): the largest batch over the
/// 1000 random states at targets 21, 20 and first solution holds 6,073 nodes, so those
/// searches allocate nothing.
pub(super) const FRONTIER_CAPACITY: usize = 8192;

impl TwoPhaseSearcher<'_> {
    /// Phase-1 depth of a position from its raw coordinates.
    #[inline]
    pub(super) fn prune1(&self, twist: usize, flip: usize, slice_sorted: usize) -> u8 {
        self.tables.phase1.payload()[phase1_index(&self.tables.coords, twist, flip, slice_sorted).0]
    }

    /// IDA* in phase 1: `togo` moves left to reach G1 from `node`, whose path so far has `n`
    /// moves. A node's entry in the move-delta table gives every child's depth, so only the
    /// children that survive pruning are looked up (and prefetched before any is expanded).
    /// The nodes [`BATCH_LEVELS`] moves above G1 are not searched here but gathered into a
    /// batch ([`Self::search_batch`]).
    pub(super) fn phase1(&mut self, d: usize, node: Node, n: usize, togo: usize) {
        if togo == BATCH_LEVELS {
            let mut path = [0u8; MAX_PHASE1];
            path[..n].copy_from_slice(&self.path1[..n]);
            self.batch.push(BatchRoot { node, path });
            if self.batch.len() == BATCH_ROOTS {
                self.search_batch(d, n);
            }
            return;
        }
        let last = if n > 0 {
            self.path1[n - 1] as usize
        } else {
            NO_MOVE
        };
        if togo == 0 {
            if let Some(n2) = self.enter_phase2(&node, n, last) {
                self.record(d, n, n2);
            }
            return;
        }
        let mut children = [Child::default(); N_MOVE];
        let mut count = 0;
        let limit = self.phase2_limit(n + 1);
        self.expand(&node, last, togo, n, |ch| {
            // the last move into G1: only leaves that pass the corner check count
            if togo > 1 || self.corner_check(&ch.node, limit) {
                children[count] = ch;
                count += 1;
            }
        });
        if togo > 1 {
            // the children will read their own entries: fetch them all first
            for ch in &mut children[..count] {
                self.locate(&mut ch.node, togo - 1);
            }
        }
        for ch in &children[..count] {
            self.path1[n] = ch.mv;
            self.tick();
            self.phase1(d, ch.node, n + 1, togo - 1);
            if self.stop {
                return;
            }
        }
    }

    /// Searches the gathered batch of nodes [`BATCH_LEVELS`] moves above G1 (each with a path
    /// of `n` moves) breadth first, all of them together: below the top levels the phase-1
    /// tree is nearly a bundle of chains (about 1.1 children per node), so depth first each
    /// node waits for its own entry (a cache and TLB miss) after its parent's; a level of the
    /// whole batch prefetches all its entries before reading any, and their misses overlap.
    /// The leaves are handed to phase 2 in the depth-first order, so the search finds what the
    /// depth-first one would; only the stop after a solution comes at the end of the batch.
    pub(super) fn search_batch(&mut self, d: usize, n: usize) {
        let roots = std::mem::take(&mut self.batch);
        // the depth-first search goes on from its own path afterwards
        let path1 = self.path1;
        let mut level = std::mem::take(&mut self.frontier);
        level.clear();
        level.extend(roots.iter().enumerate().map(|(i, r)| Child {
            node: r.node,
            mv: if n > 0 { r.path[n - 1] } else { NO_MOVE as u8 },
            parent: i as u32,
        }));
        let (mut begin, mut end) = (0, level.len());
        for left in (1..=BATCH_LEVELS).rev() {
            for i in begin..end {
                let parent = level[i];
                let before = level.len();
                self.expand(
                    &parent.node,
                    parent.mv as usize,
                    left,
                    n + BATCH_LEVELS - left,
                    |ch| {
                        level.push(Child {
                            parent: i as u32,
                            ..ch
                        })
                    },
                );
                if left > 1 {
                    for _ in before..level.len() {
                        self.tick();
                    }
                }
            }
            if left == 1 {
                // the leaves' corner check, now that their entries have been fetched together
                // (the phase-2 limit holds for the whole level: no solution is recorded here)
                let limit = self.phase2_limit(n + BATCH_LEVELS);
                let mut kept = end;
                for i in end..level.len() {
                    if self.corner_check(&level[i].node, limit) {
                        level[kept] = level[i];
                        kept += 1;
                        self.tick();
                    }
                }
                level.truncate(kept);
            }
            if self.stop {
                // budget spent or another thread done: no leaf of this batch is searched
                begin = level.len();
                end = begin;
                break;
            }
            (begin, end) = (end, level.len());
            if left > 1 {
                for ch in &mut level[begin..end] {
                    self.locate(&mut ch.node, left - 1);
                }
            }
        }
        // the leaves (all past the corner check) will read their phase-2 entry: fetch those
        // first
        self.prefetch_phase2(&level[begin..end]);
        for leaf in begin..end {
            if self.stop {
                break;
            }
            let n1 = n + BATCH_LEVELS;
            let Some(n2) = self.enter_phase2(&level[leaf].node, n1, level[leaf].mv as usize) else {
                continue;
            };
            // a solution: the leaf's path is its root's, then the moves down from the root
            let mut at = leaf;
            for k in (n..n1).rev() {
                self.path1[k] = level[at].mv;
                at = level[at].parent as usize;
            }
            self.path1[..n].copy_from_slice(&roots[level[at].parent as usize].path[..n]);
            self.record(d, n1, n2);
        }
        self.path1 = path1;
        self.frontier = level;
        self.batch = roots;
        self.batch.clear();
    }

    /// The children of `node` (`togo` moves left to reach G1, reached by move `last`) that can
    /// still reach G1 in time, in move order, each handed to `emit` (with `parent` 0). A child's
    /// `index` is its raw FlipUDSlice, whose symmetry entry is prefetched when the child has
    /// children of its own: [`Self::locate`] turns it into the table index.
    #[inline]
    pub(super) fn expand(
        &self,
        node: &Node,
        last: usize,
        togo: usize,
        n: usize,
        mut emit: impl FnMut(Child),
    ) {
        if togo == 1 {
            return self.expand_last(node, last, n, emit);
        }
        let c = &self.tables.coords;
        let deltas = Phase1Moves::entry(self.tables.phase1_moves.payload(), node.index as usize);
        let conj = &self.move_conj[node.sym as usize];
        let dist = node.dist as usize;
        let mut moves = AFTER[last];
        // in G1 already with few moves left: phase-2 moves are left to phase 2
        if dist == 0 && togo < 5 {
            moves &= !PHASE2_MASK;
        }
        for m in moves_in(moves) {
            // child depth = dist - 1 + delta, and it must be below togo - 1 + 1
            let delta = ((deltas >> (2 * conj[m])) & 3) as usize;
            if dist + delta > togo {
                continue;
            }
            let t1 = c.twist_move[N_MOVE * node.twist as usize + m];
            let f1 = c.flip_move[N_MOVE * node.flip as usize + m];
            let s1 = c.slice_sorted_move[N_MOVE * node.slice_sorted as usize + m];
            let raw = raw_flipslice(s1 as usize, f1 as usize);
            if togo > 2 {
                prefetch(&c.flipslice.sym, raw);
            }
            emit(Child {
                node: Node {
                    twist: t1,
                    flip: f1,
                    slice_sorted: s1,
                    corners: c.corners_move[N_MOVE * node.corners as usize + m],
                    u_edges: c.u_edges_move[N_MOVE * node.u_edges as usize + m],
                    d_edges: c.d_edges_move[N_MOVE * node.d_edges as usize + m],
                    dist: (dist + delta - 1) as u8,
                    index: raw as u32,
                    sym: 0,
                },
                mv: m as u8,
                parent: 0,
            });
        }
    }

    /// [`Self::expand`] one move above G1: the moves into G1 come from the small move tables
    /// instead of the node's move-delta entry (so the parent need not fetch it). Only a move
    /// outside G1's generators enters G1 from outside it, and a node already in G1 has nothing
    /// to do here (the phase-2 moves that keep it there are left to phase 2): the same children
    /// as the move-delta entry gives, in the same order. None when phase 2 has no room left.
    /// The leaves' corner check ([`Self::corner_check`]) is left to the caller: their entries
    /// of the corner x slice table and of the UD-edge table are prefetched here, so that a
    /// level of leaves waits for them all at once.
    #[inline]
    pub(super) fn expand_last(
        &self,
        node: &Node,
        last: usize,
        n: usize,
        mut emit: impl FnMut(Child),
    ) {
        if node.dist != 1 || self.phase2_limit(n + 1) == 0 {
            return;
        }
        let c = &self.tables.coords;
        for m in moves_in(AFTER[last] & !PHASE2_MASK) {
            if c.twist_move[N_MOVE * node.twist as usize + m] != 0
                || c.flip_move[N_MOVE * node.flip as usize + m] != 0
            {
                continue;
            }
            let slice_sorted = c.slice_sorted_move[N_MOVE * node.slice_sorted as usize + m];
            if slice_sorted as usize >= N_PERM_4 {
                continue;
            }
            let leaf = Node {
                twist: 0,
                flip: 0,
                slice_sorted,
                corners: c.corners_move[N_MOVE * node.corners as usize + m],
                u_edges: c.u_edges_move[N_MOVE * node.u_edges as usize + m],
                d_edges: c.d_edges_move[N_MOVE * node.d_edges as usize + m],
                dist: 0,
                index: 0,
                sym: 0,
            };
            self.prefetch_corner_check(&leaf);
            emit(Child {
                node: leaf,
                mv: m as u8,
                parent: 0,
            });
        }
    }

    /// Turns a child's raw FlipUDSlice (from [`Self::expand`]) into its phase-1 table index
    /// and symmetry, and prefetches its move-delta entry, which it reads when expanded.
    #[inline]
    pub(super) fn locate(&self, node: &mut Node, togo: usize) {
        let c = &self.tables.coords;
        prefetch(&c.twist_move, N_MOVE * node.twist as usize);
        prefetch(&c.flip_move, N_MOVE * node.flip as usize);
        prefetch(&c.slice_sorted_move, N_MOVE * node.slice_sorted as usize);
        prefetch(&c.corners_move, N_MOVE * node.corners as usize);
        prefetch(&c.u_edges_move, N_MOVE * node.u_edges as usize);
        prefetch(&c.d_edges_move, N_MOVE * node.d_edges as usize);
        if togo == 1 {
            return;
        }
        let (index, sym) = self
            .tables
            .coords
            .phase1_index(node.index as usize, node.twist as usize);
        node.index = index as u32;
        node.sym = sym as u8;
        prefetch(
            self.tables.phase1_moves.payload(),
            Phase1Moves::ENTRY_BYTES * index,
        );
    }
}

/// A phase-1 child: its node, the move that made it, and (in a batch's level list) the
/// position of its parent, or for a batch root its place in the batch.
#[derive(Clone, Copy, Default)]
pub(super) struct Child {
    pub(super) node: Node,
    pub(super) mv: u8,
    pub(super) parent: u32,
}

/// A node gathered for a batch ([`TwoPhaseSearcher::search_batch`]) and the moves that lead
/// to it (the first `n` of `path`, `n` the same for the whole batch).
#[derive(Clone, Copy)]
pub(super) struct BatchRoot {
    pub(super) node: Node,
    pub(super) path: [u8; MAX_PHASE1],
}

/// A phase-1 search node: raw coordinates, depth, and where it sits in the phase-1 tables.
#[derive(Clone, Copy, Default)]
pub(super) struct Node {
    pub(super) twist: u16,
    pub(super) flip: u16,
    pub(super) slice_sorted: u16,
    /// The corner permutation and the U-face and D-face edge coordinates, carried along for
    /// phase 2 (a lookup each per node instead of replaying the whole path at every phase-1
    /// solution).
    pub(super) corners: u16,
    pub(super) u_edges: u16,
    pub(super) d_edges: u16,
    /// Exact phase-1 depth.
    pub(super) dist: u8,
    /// Index in the phase-1 tables (`2187 * class + conjugated twist`).
    pub(super) index: u32,
    /// The symmetry that takes this position to its class representative (`< 16`).
    pub(super) sym: u8,
}

/// Index in the phase-1 tables of a position given by raw coordinates, and the symmetry that
/// takes it to its class representative ([`CoordTables::phase1_index`]).
#[inline]
pub(super) fn phase1_index(
    c: &CoordTables,
    twist: usize,
    flip: usize,
    slice_sorted: usize,
) -> (usize, usize) {
    c.phase1_index(raw_flipslice(slice_sorted, flip), twist)
}
