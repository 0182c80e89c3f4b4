//! The phase-1 search of the coset solver: every maneuver of one length `n` from the
//! representative into H whose last turn is outside H (for `n = 0`, the empty one when the
//! representative is in H) marks the element of H it reaches, depth first with the phase-1
//! table's exact depths as the bound (a node's entry of the move-delta table gives every
//! child's depth at once); turns in the searches' canonical order (no face twice in
//! a row, opposite faces in one order), which loses no element. The subtrees below the first
//! [`SPLIT`] turns are shared out among the pool's threads.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use cubefleet_tables::coord::{raw_flipslice, N_PERM_4};
use cubefleet_tables::moves::N_MOVE;
use cubefleet_tables::prune::Phase1Moves;
use cubefleet_tables::symmetry::SYMMETRIES;
use cubefleet_tables::{CubieCube, Tables};
use rayon::prelude::*;

use super::bitmap::Bitmap;
use super::{CosetProgress, Stage, EDGES_PER_CORNERS, SLICE_HALF};
use crate::{moves_in, prefetch, AFTER, NO_MOVE};

/// Turns of the subtrees' roots: the search below them runs on the pool.
const SPLIT: u32 = 3;

/// The turns of H as a mask of move numbers (H is the two-phase search's G1).
const H_MASK: u32 = crate::twophase::PHASE2_MASK;

/// A node: the phase-1 coordinates and what the bitmap's index needs.
#[derive(Clone, Copy, Default)]
struct Node {
    twist: u16,
    flip: u16,
    slice_sorted: u16,
    corners: u16,
    u_edges: u16,
    d_edges: u16,
    /// The exact number of turns into H.
    dist: u8,
    /// Index in the phase-1 tables (set by [`Search::locate`] for a node that will be
    /// expanded by its move-delta entry).
    index: u32,
    /// The symmetry that takes the node to its class in the phase-1 tables.
    sym: u8,
}

/// The search over one set of tables.
struct Search<'t> {
    tables: &'t Tables,
    /// `conj[s][m]`: the move `S_s m S_s^-1` for the 16 symmetries of the phase-1 table (the
    /// field of a move-delta entry that move `m` reads).
    conj: [[u8; N_MOVE]; 16],
}

impl Search<'_> {
    fn new(tables: &Tables) -> Search<'_> {
        Search {
            tables,
            conj: std::array::from_fn(|s| {
                std::array::from_fn(|m| SYMMETRIES.move_conj[s][m].index() as u8)
            }),
        }
    }

    fn node(&self, c: &CubieCube) -> Node {
        let mut n = Node {
            twist: c.twist() as u16,
            flip: c.flip() as u16,
            slice_sorted: c.slice_sorted() as u16,
            corners: c.corners() as u16,
            u_edges: c.u_edges() as u16,
            d_edges: c.d_edges() as u16,
            ..Node::default()
        };
        self.locate(&mut n);
        n.dist = self.tables.phase1.payload()[n.index as usize];
        n
    }

    #[inline]
    fn turn(&self, n: &Node, m: usize) -> Node {
        let c = &self.tables.coords;
        Node {
            twist: c.twist_move[N_MOVE * n.twist as usize + m],
            flip: c.flip_move[N_MOVE * n.flip as usize + m],
            slice_sorted: c.slice_sorted_move[N_MOVE * n.slice_sorted as usize + m],
            corners: c.corners_move[N_MOVE * n.corners as usize + m],
            u_edges: c.u_edges_move[N_MOVE * n.u_edges as usize + m],
            d_edges: c.d_edges_move[N_MOVE * n.d_edges as usize + m],
            ..Node::default()
        }
    }

    /// Sets the node's index in the phase-1 tables and its symmetry, and prefetches its
    /// move-delta entry (read when it is expanded, after its siblings are made).
    #[inline]
    fn locate(&self, n: &mut Node) {
        let raw = raw_flipslice(n.slice_sorted as usize, n.flip as usize);
        let (index, sym) = self.tables.coords.phase1_index(raw, n.twist as usize);
        (n.index, n.sym) = (index as u32, sym as u8);
        prefetch(
            self.tables.phase1_moves.payload(),
            Phase1Moves::ENTRY_BYTES * index,
        );
    }

    /// Marks `n`, a node in H, in `marks`.
    #[inline]
    fn mark(&self, n: &Node, marks: &mut Marks<'_>) {
        let c = &self.tables.coords;
        let ud = c.ud_edges_from_ud[24 * n.u_edges as usize + n.d_edges as usize % 24] as usize;
        let i =
            n.corners as usize * EDGES_PER_CORNERS + ud * SLICE_HALF + n.slice_sorted as usize / 2;
        marks.push(i as u64);
    }

    /// The children of `n` (reached by `last`) that can still reach H in the `togo - 1` turns
    /// left after them, with their turns; the last turn (`togo == 1`) only outside H.
    #[inline]
    fn children(
        &self,
        n: &Node,
        last: usize,
        togo: u32,
    ) -> impl Iterator<Item = (Node, usize)> + '_ {
        let mut mask = AFTER[last];
        if togo == 1 {
            mask &= !H_MASK;
        }
        let deltas = Phase1Moves::entry(self.tables.phase1_moves.payload(), n.index as usize);
        let conj = &self.conj[n.sym as usize];
        let n = *n;
        moves_in(mask).filter_map(move |m| {
            // the child's depth is `dist + delta - 1`, and must be below `togo`
            let delta = (deltas >> (2 * conj[m]) & 3) as u8;
            (u32::from(n.dist + delta) <= togo).then(|| {
                let mut child = self.turn(&n, m);
                child.dist = n.dist + delta - 1;
                if togo > 2 {
                    // it will be expanded by its own entry
                    self.locate(&mut child);
                }
                (child, m)
            })
        })
    }

    /// Marks every end of a canonical maneuver of `togo` turns from `n` (reached by `last`)
    /// into H ending outside H.
    fn walk(&self, n: &Node, last: usize, togo: u32, marks: &mut Marks<'_>) {
        match togo {
            0 => self.mark(n, marks),
            1 => self.last_turns(n, last, marks),
            _ => {
                // all the children first, so that their entries are fetched together
                let mut children = [(Node::default(), 0); N_MOVE];
                let mut k = 0;
                for child in self.children(n, last, togo) {
                    children[k] = child;
                    k += 1;
                }
                for (child, m) in &children[..k] {
                    self.walk(child, *m, togo - 1, marks);
                }
            }
        }
    }

    /// [`Self::walk`] one turn before H: the turns outside H that take `n` into H, found by the
    /// small move tables of twist, flip and slice (no read of the large phase-1 tables).
    #[inline]
    fn last_turns(&self, n: &Node, last: usize, marks: &mut Marks<'_>) {
        if n.dist != 1 {
            return;
        }
        let c = &self.tables.coords;
        let ends = moves_in(AFTER[last] & !H_MASK).filter(|&m| {
            c.twist_move[N_MOVE * n.twist as usize + m] == 0
                && c.flip_move[N_MOVE * n.flip as usize + m] == 0
                && (c.slice_sorted_move[N_MOVE * n.slice_sorted as usize + m] as usize) < N_PERM_4
        });
        for m in ends {
            self.mark(&self.turn(n, m), marks);
        }
    }

    /// The nodes `k` turns from `n` (reached by `last`) from which H is within `togo - k`
    /// turns, with their last turns.
    fn level(&self, n: Node, last: usize, togo: u32, k: u32, out: &mut Vec<(Node, usize)>) {
        if k == 0 {
            out.push((n, last));
            return;
        }
        for (child, m) in self.children(&n, last, togo).collect::<Vec<_>>() {
            self.level(child, m, togo - 1, k - 1, out);
        }
    }
}

/// Marks on their way to a bitmap. Nearly every mark falls in a word no cache holds: each
/// word is prefetched when its mark arrives and set [`MARKS_AHEAD`] marks later, so the
/// misses of a batch overlap instead of stalling the search one by one.
struct Marks<'m> {
    map: &'m Bitmap,
    /// Local indices prefetched and not set yet (at most [`MARKS_AHEAD`]).
    waiting: Vec<u64>,
    /// Bits that were clear when set.
    new: u64,
}

/// Marks whose words are fetched at once.
const MARKS_AHEAD: usize = 16;

impl<'m> Marks<'m> {
    fn new(map: &'m Bitmap) -> Marks<'m> {
        Marks {
            map,
            waiting: Vec::with_capacity(MARKS_AHEAD),
            new: 0,
        }
    }

    #[inline]
    fn push(&mut self, i: u64) {
        self.map.prefetch(i);
        self.waiting.push(i);
        if self.waiting.len() == MARKS_AHEAD {
            self.flush();
        }
    }

    fn flush(&mut self) {
        for &i in &self.waiting {
            self.new += u64::from(self.map.set(i));
        }
        self.waiting.clear();
    }

    /// Sets what is still waiting; the number of bits that were clear.
    fn finish(mut self) -> u64 {
        self.flush();
        self.new
    }
}

/// Marks in `map` the elements of H that the maneuvers of exactly `n` turns from `r` into H,
/// ending with a turn outside H, reach (the empty maneuver for `n = 0`); the number new there.
pub(super) fn mark(
    tables: &Tables,
    r: &CubieCube,
    n: u32,
    map: &Bitmap,
    progress: CosetProgress<'_>,
) -> u64 {
    let search = Search::new(tables);
    let root = search.node(r);
    if u32::from(root.dist) > n {
        return 0;
    }
    if n <= SPLIT {
        progress(Stage::Seeds, n, 0, 1);
        let mut marks = Marks::new(map);
        search.walk(&root, NO_MOVE, n, &mut marks);
        progress(Stage::Seeds, n, 1, 1);
        return marks.finish();
    }
    let mut roots = Vec::new();
    search.level(root, NO_MOVE, n, SPLIT, &mut roots);
    let all = roots.len() as u64;
    let done = AtomicU64::new(0);
    roots
        .par_iter()
        .map(|(node, last)| {
            let mut marks = Marks::new(map);
            search.walk(node, *last, n - SPLIT, &mut marks);
            let new = marks.finish();
            progress(Stage::Seeds, n, done.fetch_add(1, Relaxed) + 1, all);
            new
        })
        .sum()
}
