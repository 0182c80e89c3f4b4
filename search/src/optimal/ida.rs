//! The single-threaded IDA* searcher: the tree expanded level by level, a chunk of nodes at a
//! time, every child's table entries prefetched before any is read.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use cubefleet_tables::moves::N_MOVE;
use cubefleet_tables::symmetry::SYMMETRIES;
use cubefleet_tables::{CubieCube, Face, Move, MoveSeq};

use super::bounds::{combine, inverse_axes, Axis, Node, OptimalTables, AXIS_SYM};
use super::prefixes::{Prefixes, REFINE_AFTER};
use super::{Metric, OptimalOptions, Progress};
use crate::metric::TurnCost;
use crate::symmetric::{CyclicWindows, SymSet};
use crate::{moves_in, Budget, Outcome, Status, AFTER, NO_MOVE};
use cubefleet_proto::question::MoveSet;

/// The most nodes of one level expanded together (see [`OptimalSearcher::expand`]).
const LEVEL_CHUNK: usize = 16;
/// The budget is checked once every this many nodes (a power of two).
pub(super) const CHECK_EVERY: u64 = 4096;
/// The default of [`OptimalSearcher::prefixes_after`]: 10,000 nodes, a few milliseconds.
const PREFIXES_AFTER: u64 = 10_000;

/// A node of the batched search. The search may step either from the position reached so far
/// or from its inverse (see [`OptimalSearcher::expand`]): the node's *table side* is the one
/// whose coordinates the move tables follow (`node`, with table depths), the *cubie side* the
/// other one, held at the cubie level per axis (`inv`) and read from there.
///
/// Invariants:
/// - `inv[a]` is the inverse of the table side's position on axis `a`;
/// - when `inv_read`, `inv_axes[a]` holds the cubie side's coordinates on axis `a` (the slice
///   edges' order left out with the giant table) with a lower bound of its table depth;
/// - each of `node`'s depths is at most the table's depth and congruent to it modulo 3 (exact
///   below the top node until the search first changes sides; see `bounds::next_bound`);
/// - the moves from the top node to this one, split by the side they were made on (`m_back`),
///   make the solution's prefix and suffix ([`OptimalSearcher::solution_through`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct LevelNode {
    pub(super) node: Node,
    pub(super) inv: [CubieCube; 3],
    /// The cubie side's coordinates and bounds (meaningful only when `inv_read`).
    inv_axes: [Axis; 3],
    inv_read: bool,
    /// True when the table side is the inverse of the position the path from the cube leads
    /// to, false when it is that position itself.
    flipped: bool,
    pub(super) syms: SymSet,
    /// The parent's index in the level above (unused at the top level).
    pub(super) parent: u32,
    /// The move from the parent, an index `< 18` (unused at the top level).
    pub(super) m: u8,
    /// True when `m` was made on the inverse: it ends the solution (inverted) instead of
    /// continuing it.
    m_back: bool,
    /// The last move made on each side, the position (0) and its inverse (1), for the move
    /// pruning ([`NO_MOVE`] when there is none).
    last: [u8; 2],
    /// What is left to spend, in the search's metric; the node's bound is at most this.
    pub(super) left: u8,
}

impl LevelNode {
    /// The node a search starts from: `node` (exact depths), whose axes' inverses are `inv`,
    /// fixed by `syms`, reached by a path whose last move is `last` ([`NO_MOVE`] for none), with
    /// `left` to spend.
    pub(super) fn top(
        node: Node,
        inv: [CubieCube; 3],
        syms: SymSet,
        last: usize,
        left: u32,
    ) -> Self {
        LevelNode {
            node,
            inv,
            inv_axes: [Axis::default(); 3],
            inv_read: false,
            flipped: false,
            syms,
            parent: 0,
            m: last as u8,
            m_back: false,
            last: [last as u8, NO_MOVE as u8],
            left: left as u8,
        }
    }

    /// Makes the cubie side the table side: the search steps from the other side of this node
    /// on. Its bounds, read from the phase-1 depth and the residue, are congruent to the table
    /// depths modulo 3 and at most them, as the invariant asks. The move tables step the slice
    /// edges' order, which the cubie side's reading leaves out with the giant table
    /// ([`OptimalTables::cubie_side_first`]): `read_order` reads it from the cubies first.
    fn flip_sides(&mut self, read_order: bool) {
        if read_order {
            for (axis, cube) in self.inv_axes.iter_mut().zip(&self.inv) {
                axis.slice_sorted = cube.slice_sorted() as u16;
            }
        }
        std::mem::swap(&mut self.node.axes, &mut self.inv_axes);
        self.inv = self.inv.map(|c| c.inverse());
        self.flipped = !self.flipped;
    }
}

/// A child made by [`OptimalSearcher::expand`]: its parent (an index into the level being
/// expanded), the move, what is left after it, the order its axes are read in, its coordinates,
/// the bounds of the axes read so far (with their table depths in `node`), and the table entry
/// of the axis being read (prefetched).
#[derive(Clone, Copy, Debug, Default)]
struct Kid {
    pub(super) parent: u32,
    pub(super) m: u8,
    pub(super) left: u8,
    pub(super) order: [u8; 3],
    pub(super) node: Node,
    pub(super) bounds: [u32; 3],
    pub(super) entry: usize,
}

/// The cubie side of a child that passed the bound of its table side (kept alongside the next
/// level), for the axis being read: whether it is read (`checked`), whether it was cut, and
/// (when checked) its coordinates, its floor (see [`OptimalTables::cubie_side_second`]) and
/// mod-3 entry, which have been prefetched, or the parent's coordinates and bound where they are the child's (`inherited`).
#[derive(Clone, Copy, Debug, Default)]
struct InvEntries {
    checked: bool,
    cut: bool,
    inherited: bool,
    axis: Axis,
    floor: usize,
    mod3: usize,
}

/// A reusable single-threaded optimal searcher. Owns its levels of nodes, its scratch and its
/// move path, which keep their memory from one search to the next.
pub struct OptimalSearcher<'a> {
    pub(super) t: OptimalTables<'a>,
    /// `axis_move[a][m]`: move `m` as seen on axis `a` (`S m S^-1`).
    axis_move: [[u8; N_MOVE]; 3],
    /// `levels[j]`: nodes `j` moves below the top node of the search (the node after
    /// `path[..base]`), each with the index of its parent in `levels[j - 1]`; `levels[0]` holds
    /// the top node alone. Only the levels down to the one being expanded are meaningful.
    levels: Vec<Vec<LevelNode>>,
    /// Scratch of [`OptimalSearcher::expand`]: the children of the nodes being expanded.
    kids: Vec<Kid>,
    /// Scratch of [`OptimalSearcher::expand`]: the inverse entries of the next level's nodes.
    inv_entries: Vec<InvEntries>,
    /// The length of the path above the top node (a prefix given to one thread).
    base: usize,
    /// `inv_move[a][m]`: the inverse of `axis_move[a][m]` at the cubie level.
    inv_move: [[CubieCube; N_MOVE]; 3],
    /// `goal_moves[a]`: bit `m` set when `axis_move[a][m]` turns U or D, a move of the goal of
    /// the tables: multiplying a position by it on the left changes none of its coordinates.
    goal_moves: [u32; 3],
    /// Bit `m` set when move `m` costs 1 in the search's metric (all but half turns in QTM).
    cost_one: u32,
    pub(super) path: Vec<Move>,
    /// The position being solved.
    pub(super) cube: CubieCube,
    /// Its symmetry group ([`SymSet::IDENTITY`] when symmetry pruning is off).
    pub(super) group: SymSet,
    /// Rotation and inversion pruning, for the superflip in the half-turn metric only.
    cyclic: Option<CyclicWindows>,
    pub(super) metric: Metric,
    /// The turns a solution may use: every move loop is masked by them.
    pub(super) moves: MoveSet,
    pub(super) nodes: u64,
    /// Nodes expanded from the other side than their parent's (since the last `prepare`).
    side_changes: u64,
    pub(super) next_check: u64,
    /// The nodes an iteration must take for the next ones to be searched a prefix's subtree
    /// at a time, densest first ([`Prefixes`]); below it, walking the 3,240 prefixes (a few
    /// milliseconds an iteration) would cost more than their order saves.
    prefixes_after: u64,
    /// The nodes an iteration must take for the next ones to use finer prefixes
    /// ([`REFINE_AFTER`]; see [`Prefixes`]).
    refine_after: u64,
    pub(super) stopped: bool,
    pub(super) found_len: usize,
    /// When true, a solution found does not end the search: its canonical form
    /// ([`canonical_form`]), when it has one, joins `collected` and the search goes on, so an
    /// iteration walks its whole tree ([`super::many`]).
    pub(super) collect_all: bool,
    /// The canonical forms of the solutions found while `collect_all` (repeats possible: a
    /// pair of opposite turns where the two sides meet may be found in both orders).
    pub(super) collected: Vec<Vec<Move>>,
}

/// Where a search stops besides its budget: a flag raised by a sibling thread that found a
/// solution.
pub(super) struct Stop<'b> {
    pub(super) budget: &'b Budget,
    pub(super) found: Option<&'b AtomicBool>,
}

impl Stop<'_> {
    pub(super) fn now(&self) -> bool {
        self.budget.exhausted() || self.found.is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

impl<'a> OptimalSearcher<'a> {
    /// A searcher over `t`. Cheap; reuse it across positions.
    pub fn new(t: OptimalTables<'a>) -> Self {
        let mut axis_move = [[0u8; N_MOVE]; 3];
        let mut inv_move = [[CubieCube::SOLVED; N_MOVE]; 3];
        let mut goal_moves = [0u32; 3];
        for (a, &s) in AXIS_SYM.iter().enumerate() {
            for (m, am) in axis_move[a].iter_mut().enumerate() {
                let mv = SYMMETRIES.move_conj[s][m];
                *am = mv.index() as u8;
                inv_move[a][m] = *mv.inverse().cubie();
                if matches!(mv.face(), Face::U | Face::D) {
                    goal_moves[a] |= 1 << m;
                }
            }
        }
        OptimalSearcher {
            t,
            axis_move,
            levels: vec![Vec::new(); 32],
            kids: Vec::new(),
            inv_entries: Vec::new(),
            base: 0,
            inv_move,
            goal_moves,
            cost_one: 0,
            path: vec![Move::from_index(0); 32],
            cube: CubieCube::SOLVED,
            group: SymSet::IDENTITY,
            cyclic: None,
            metric: Metric::Htm,
            moves: MoveSet::ALL,
            nodes: 0,
            side_changes: 0,
            next_check: CHECK_EVERY,
            prefixes_after: PREFIXES_AFTER,
            refine_after: REFINE_AFTER,
            stopped: false,
            found_len: 0,
            collect_all: false,
            collected: Vec::new(),
        }
    }

    /// True when a mod-3 table (huge, giant or colossal) is used for the bound.
    pub fn uses_mod3_table(&self) -> bool {
        self.t.bound.is_some()
    }

    /// The lower bound the tables give for `cube` before any search (in half turns).
    pub fn table_bound(&self, cube: &CubieCube) -> u32 {
        let node = self.t.root(cube);
        combine(node.axes.map(|a| a.depth as u32), !cube.is_solved())
    }

    /// Finds a shortest solution of `cube` (within `opts.max_depth` when set), reporting after
    /// each completed depth. The returned solution has been checked to solve `cube`.
    ///
    /// `Outcome.optimal` is true only for [`Status::Solved`]: every shorter length was searched
    /// (or skipped by `opts.start_lower_bound`, which the caller vouches for).
    /// `Outcome.lower_bound`: no solution shorter than it exists.
    pub fn solve(
        &mut self,
        cube: &CubieCube,
        opts: &OptimalOptions,
        budget: &Budget,
        progress: &mut dyn FnMut(Progress),
    ) -> Outcome {
        let stop = Stop {
            budget,
            found: None,
        };
        let mut d = match self.prepare(cube, opts) {
            Ok(d) => d,
            Err(outcome) => return outcome,
        };
        let root = self.t.root(cube);
        let mut prefixes: Option<Prefixes> = None;
        loop {
            if let Some(outcome) = self.past_limit(d, opts) {
                return outcome;
            }
            self.ensure_depth(d as usize + 2);
            let before = self.nodes;
            let found = match &mut prefixes {
                Some(p) => self.search_prefixes(root, d, p, &stop),
                None => {
                    let top = LevelNode::top(root, inverse_axes(cube), self.group, NO_MOVE, d);
                    self.search_from(0, top, &stop)
                }
            };
            if found {
                return self.solved(d);
            }
            if self.stopped {
                return self.stopped_outcome(d, budget);
            }
            if prefixes.is_none() && self.nodes - before >= self.prefixes_after {
                prefixes = Some(Prefixes::new(
                    self.metric,
                    self.moves,
                    self.prefix_refinement(),
                ));
            }
            d += self.step();
            progress(Progress {
                lower_bound: d,
                nodes: self.nodes,
            });
        }
    }

    /// Resets per-solve state; returns the first depth to search, or the outcome when the cube
    /// is solved.
    pub(super) fn prepare(
        &mut self,
        cube: &CubieCube,
        opts: &OptimalOptions,
    ) -> Result<u32, Outcome> {
        self.cube = *cube;
        let no_symmetry = opts.no_symmetry || !opts.moves.is_all();
        self.moves = opts.moves;
        self.group = if no_symmetry {
            SymSet::IDENTITY
        } else {
            SymSet::of_position(cube)
        };
        self.metric = opts.metric;
        self.cost_one = (0..N_MOVE)
            .filter(|&m| self.metric.cost(Move::from_index(m)) == 1)
            .fold(0, |bits, m| bits | 1 << m);
        self.cyclic = match self.metric {
            Metric::Htm if !no_symmetry => CyclicWindows::of_position(cube, self.group),
            _ => None,
        };
        self.nodes = 0;
        self.side_changes = 0;
        self.next_check = CHECK_EVERY;
        self.stopped = false;
        if cube.is_solved() {
            return Err(Outcome {
                status: Status::Solved,
                solution: Some(MoveSeq(Vec::new())),
                solutions: Vec::new(),
                optimal: true,
                lower_bound: 0,
                nodes: 0,
            });
        }
        let mut d = self.table_bound(cube).max(opts.start_lower_bound).max(1);
        if self.metric == Metric::Qtm && d % 2 != cube.corner_parity() as u32 {
            d += 1;
        }
        Ok(d)
    }

    /// The nodes an iteration must take for the next ones to use finer prefixes: never while
    /// the position's symmetries prune moves (the superflip took 1.42x the nodes with fine
    /// prefixes, measured: its pruned tree's coarse order stays).
    pub(super) fn prefix_refinement(&self) -> u64 {
        if self.group.is_trivial() && self.cyclic.is_none() {
            self.refine_after
        } else {
            u64::MAX
        }
    }

    /// Depth increment between iterations: 2 in QTM (lengths of one parity only).
    pub(super) fn step(&self) -> u32 {
        match self.metric {
            Metric::Htm => 1,
            Metric::Qtm => 2,
        }
    }

    pub(super) fn past_limit(&self, d: u32, opts: &OptimalOptions) -> Option<Outcome> {
        match opts.max_depth {
            Some(max) if d > max => Some(Outcome {
                status: Status::NoneWithin,
                solution: None,
                solutions: Vec::new(),
                optimal: false,
                lower_bound: d,
                nodes: self.nodes,
            }),
            _ => None,
        }
    }

    pub(super) fn ensure_depth(&mut self, n: usize) {
        if self.levels.len() < n {
            self.levels.resize(n, Vec::new());
        }
        if self.path.len() < n {
            self.path.resize(n, Move::from_index(0));
        }
    }

    pub(super) fn solved(&self, d: u32) -> Outcome {
        let moves = self.path[..self.found_len].to_vec();
        debug_assert!(self.cube.apply_moves(&moves).is_solved());
        Outcome {
            status: Status::Solved,
            solution: Some(MoveSeq(moves)),
            solutions: Vec::new(),
            optimal: true,
            lower_bound: d,
            nodes: self.nodes,
        }
    }

    pub(super) fn stopped_outcome(&self, d: u32, budget: &Budget) -> Outcome {
        Outcome {
            status: if budget.cancelled() {
                Status::Cancelled
            } else {
                Status::Timeout
            },
            solution: None,
            solutions: Vec::new(),
            optimal: false,
            lower_bound: d,
            nodes: self.nodes,
        }
    }

    /// Checks the budget every [`CHECK_EVERY`] nodes; true when the search must stop.
    #[inline]
    fn must_stop(&mut self, stop: &Stop<'_>) -> bool {
        if self.nodes >= self.next_check {
            self.next_check = self.nodes + CHECK_EVERY;
            if stop.now() {
                self.stopped = true;
            }
        }
        self.stopped
    }

    /// Applies move `m` (an index `< 18`) to axis `a` of `node`, writing the axis's
    /// coordinates (not its table depth) into `child`.
    #[inline]
    pub(super) fn step_axis(&self, node: &Node, child: &mut Node, a: usize, m: usize) {
        let coords = &self.t.tables.coords;
        let p = &node.axes[a];
        let am = self.axis_move[a][m] as usize;
        let c = &mut child.axes[a];
        c.slice_sorted = coords.slice_sorted_move[N_MOVE * p.slice_sorted as usize + am];
        c.flip = coords.flip_move[N_MOVE * p.flip as usize + am];
        c.twist = coords.twist_move[N_MOVE * p.twist as usize + am];
        if self.t.reads_ud_corners {
            c.ud_corners = coords.ud_corners_move[N_MOVE * p.ud_corners as usize + am] as u8;
        }
    }

    /// Searches below `top`, the node after `path[..base]`, for a solution costing exactly
    /// `top.left` more (the node's bound is known to be at most that). On success
    /// `path[..found_len]` solves the cube (verified by applying it).
    pub(super) fn search_from(&mut self, base: usize, top: LevelNode, stop: &Stop<'_>) -> bool {
        self.base = base;
        if top.left == 0 {
            return self.solves(&top.node, base);
        }
        self.levels[0].clear();
        self.levels[0].push(top);
        self.search_level(0, 0..1, stop)
    }

    /// Searches below the nodes `levels[k][range]`: expands them together into `levels[k + 1]`
    /// (see [`OptimalSearcher::expand`]), then searches below that level a chunk of
    /// [`LEVEL_CHUNK`] nodes at a time, depth first. True when a solution was found.
    fn search_level(&mut self, k: usize, range: Range<usize>, stop: &Stop<'_>) -> bool {
        if self.must_stop(stop) {
            return false;
        }
        if self.expand(k, range) {
            return true;
        }
        let n = self.levels[k + 1].len();
        for start in (0..n).step_by(LEVEL_CHUNK) {
            if self.search_level(k + 1, start..n.min(start + LEVEL_CHUNK), stop) {
                return true;
            }
            if self.stopped {
                return false;
            }
        }
        false
    }

    /// Makes the children of `levels[k][range]` that may start a solution into `levels[k + 1]`
    /// (in the order of their parents, then of their moves); true when one of them, with
    /// nothing left to spend, is the solved cube (`path[..found_len]`).
    ///
    /// The nodes of a chunk are expanded together, in passes over all of their children, so
    /// that the loads of the tables (far larger than the caches) overlap instead of waiting one
    /// after another: the search is limited by the misses in flight, and one node's dozen
    /// children leave most of the core's capacity unused. Since the loads overlap, an extra
    /// pass costs little, and each axis gets a round of its own: a round starts loading the
    /// axis's entry for every child still in the running, then reads them and drops the
    /// children cut. The axes are read in the order of their depths at the parent, tightest
    /// first (the likeliest to cut). The children that pass their own three axes get their
    /// inverses made and, where the bound is within one of what is left, the inverse is read
    /// the same way, an axis a round. With the giant table each entry needs a sym-coordinate
    /// from a 4 MB table first, which gets a pass of its own before the entries' (for the small
    /// UDSliceSorted sym-coordinate of the huge table the extra pass costs more than it saves).
    pub(super) fn expand(&mut self, k: usize, range: Range<usize>) -> bool {
        let mut levels = std::mem::take(&mut self.levels);
        let mut kids = std::mem::take(&mut self.kids);
        let mut inv_entries = std::mem::take(&mut self.inv_entries);
        let (upper, lower) = levels.split_at_mut(k + 1);
        let next = &mut lower[0];
        let t = self.t;
        let staged = t.reads_ud_corners;
        kids.clear();
        for i in range {
            if self.cyclic.is_some() {
                trace(upper, k, i, &mut self.path[self.base..]);
            }
            let p = &mut upper[k][i];
            let remaining = p.left as u32;
            let mut allowed = self.allowed(p, p.flipped, &p.inv_axes, p.inv_read);
            // stepping from the other side bars the moves that the table side's tight axes
            // rule out as the solution's last; worth it when fewer moves are left
            if p.inv_read && p.syms.is_trivial() && self.cyclic.is_none() {
                let there = self.allowed(p, !p.flipped, &p.node.axes, true);
                if there.count_ones() < allowed.count_ones() {
                    p.flip_sides(t.drops_slice_order);
                    self.side_changes += 1;
                    allowed = there;
                }
            }
            let p = &upper[k][i];
            let pruned_by_symmetry = !p.syms.is_trivial() || self.cyclic.is_some();
            let mut order = [0u8, 1, 2];
            order.sort_by_key(|&a| std::cmp::Reverse(p.node.axes[a as usize].depth));
            for m in moves_in(allowed) {
                if pruned_by_symmetry && !self.symmetric_allows(self.base + k, p.syms, m) {
                    continue;
                }
                let kid = Kid {
                    parent: i as u32,
                    m: m as u8,
                    left: (remaining - self.metric.cost(Move::from_index(m))) as u8,
                    order,
                    ..Kid::default()
                };
                kids.push(kid);
            }
        }
        let parents = &upper[k];
        self.nodes += kids.len() as u64;
        for r in 0..3 {
            // each axis is stepped in its own round: a child cut on one never steps the others
            for kid in &mut kids {
                let a = kid.order[r] as usize;
                let (parent, m) = (&parents[kid.parent as usize].node, kid.m as usize);
                self.step_axis(parent, &mut kid.node, a, m);
                if staged {
                    t.prefetch_sym(&kid.node.axes[a]);
                }
            }
            for kid in &mut kids {
                kid.entry = t.entry_prefetched(&kid.node.axes[kid.order[r] as usize]);
            }
            kids.retain_mut(|kid| {
                let a = kid.order[r] as usize;
                let parent = &parents[kid.parent as usize].node.axes[a];
                kid.bounds[a] = t.axis_bound(kid.entry, parent, &mut kid.node.axes[a]);
                kid.bounds[a] <= kid.left as u32
            });
        }
        next.clear();
        inv_entries.clear();
        let mut found = false;
        for kid in &kids {
            let p = &parents[kid.parent as usize];
            let (m, left) = (kid.m as usize, kid.left as u32);
            // with moves left the child must be unsolved to matter (a solved child would mean
            // a shorter solution, ruled out by the earlier iterations)
            let bound = combine(kid.bounds, left > 0);
            if bound > left {
                continue;
            }
            if left == 0 {
                if at_goal(&kid.node) && self.solution_through(upper, k, kid.parent as usize, m) {
                    found = true;
                    break;
                }
                continue;
            }
            let mut last = p.last;
            last[p.flipped as usize] = m as u8;
            next.push(LevelNode {
                node: kid.node,
                inv: self.inverse_child(&p.inv, m),
                inv_axes: [Axis::default(); 3],
                inv_read: false,
                flipped: p.flipped,
                syms: p.syms.fixing(m),
                parent: kid.parent,
                m: m as u8,
                m_back: p.flipped,
                last,
                left: left as u8,
            });
            // the cubie side is read only where the bound is within one of what is left
            // (measured: from one below, 5 % fewer nodes than where it is tight, and a little
            // faster; further below, no fewer nodes)
            inv_entries.push(InvEntries {
                checked: bound + 1 >= left,
                ..InvEntries::default()
            });
        }
        for a in 0..3 {
            for (node, e) in next.iter().zip(inv_entries.iter_mut()) {
                if !e.checked {
                    continue;
                }
                // a goal move of the axis, multiplied on the left, leaves the cubie side's
                // coordinates there as they were at the parent
                let p = &parents[node.parent as usize];
                e.inherited = p.inv_read && self.goal_moves[a] & (1 << node.m) != 0;
                if e.inherited {
                    e.axis = p.inv_axes[a];
                } else {
                    (e.axis, e.mod3) = t.cubie_side_first(&node.inv[a]);
                }
            }
            // the floors' and the giant or colossal entries, once every sym-coordinate they
            // need is on its way
            for e in inv_entries.iter_mut().filter(|e| e.checked && !e.inherited) {
                (e.floor, e.mod3) = t.cubie_side_second(&e.axis, e.mod3);
            }
            for (node, e) in next.iter_mut().zip(inv_entries.iter_mut()) {
                if e.checked {
                    let b = if e.inherited {
                        e.axis.depth as u32
                    } else {
                        t.loose_bound(e.floor, e.mod3)
                    };
                    node.inv_axes[a] = Axis {
                        depth: b as u8,
                        ..e.axis
                    };
                    if b > node.left as u32 {
                        e.checked = false;
                        e.cut = true;
                    }
                }
            }
        }
        let mut kept = 0;
        for (i, e) in inv_entries.iter().enumerate() {
            if e.cut {
                continue;
            }
            if e.checked {
                let node = &mut next[i];
                let bounds = node.inv_axes.map(|a| a.depth as u32);
                if combine(bounds, true) > node.left as u32 {
                    continue;
                }
                node.inv_read = true;
            }
            if kept != i {
                next[kept] = next[i];
            }
            kept += 1;
        }
        next.truncate(kept);
        self.levels = levels;
        self.kids = kids;
        self.inv_entries = inv_entries;
        found
    }

    /// The moves that may be made from the side `flipped` of node `p` (a bit per move): in the
    /// move set, not pruned after that side's last move, affordable, and not barred by the other side's
    /// bounds `other` (when `read`). A goal move `g` of an axis, multiplied on the left, leaves
    /// that axis's coordinates as they are, so when the other side is `remaining` or more away
    /// on an axis (its bound can only be exactly that, or the node would be cut), a solution of
    /// `remaining` moves from this side cannot start with a move the axis sees as a U or D
    /// turn: the other side, stepped by it, would be as far, with one move fewer left.
    fn allowed(&self, p: &LevelNode, flipped: bool, other: &[Axis; 3], read: bool) -> u32 {
        let remaining = p.left as u32;
        let last = p.last[flipped as usize] as usize;
        let mut barred = 0;
        if read {
            for (a, axis) in other.iter().enumerate() {
                if axis.depth as u32 >= remaining {
                    barred |= self.goal_moves[a];
                }
            }
        }
        let affordable = if remaining >= 2 { !0 } else { self.cost_one };
        AFTER[last] & affordable & !barred & self.moves.mask()
    }

    /// The inverses (per axis) of the child by move `m` of a node whose axes' inverses are
    /// `parent`: the child's position on axis `a` is the node's times `axis_move[a][m]`, so its
    /// inverse is that move's inverse times the node's inverse.
    #[inline]
    pub(super) fn inverse_child(&self, parent: &[CubieCube; 3], m: usize) -> [CubieCube; 3] {
        [0, 1, 2].map(|a| self.inv_move[a][m].multiply_rotations(&parent[a]))
    }

    /// True when move `m` may follow `path[..ply]`, whose moves are all fixed by `syms`: it is
    /// the least of its orbit under `syms`, and [`CyclicWindows`] allows it when in use.
    pub(super) fn symmetric_allows(&self, ply: usize, syms: SymSet, m: usize) -> bool {
        syms.is_least_in_orbit(m)
            && self
                .cyclic
                .as_ref()
                .is_none_or(|c| c.allows(&self.path[..ply], m))
    }

    /// True when the path through `levels[k][i]` and then move `m` solves the cube; the
    /// solution is then `path[..found_len]`: the moves above the top node (`path[..base]`),
    /// those made on the position in their order, then the inverses of those made on the
    /// inverse, last first (the position after the first group is `B^-1` where `B` is the
    /// second group inverted and reversed, so their product solves it).
    pub(super) fn solution_through(
        &mut self,
        levels: &[Vec<LevelNode>],
        k: usize,
        i: usize,
        m: usize,
    ) -> bool {
        let mut steps = Vec::with_capacity(k + 1);
        steps.push((m as u8, levels[k][i].flipped));
        let mut i = i;
        for j in (1..=k).rev() {
            let node = &levels[j][i];
            steps.push((node.m, node.m_back));
            i = node.parent as usize;
        }
        steps.reverse();
        let mut ply = self.base;
        for &(m, back) in &steps {
            if !back {
                self.path[ply] = Move::from_index(m as usize);
                ply += 1;
            }
        }
        for &(m, back) in steps.iter().rev() {
            if back {
                self.path[ply] = Move::from_index(m as usize).inverse();
                ply += 1;
            }
        }
        self.path_solves(ply)
    }

    /// True when `node`, reached by `path[..ply]` with nothing left to spend, is the solved
    /// cube (see [`at_goal`]); records the solution's length then.
    pub(super) fn solves(&mut self, node: &Node, ply: usize) -> bool {
        at_goal(node) && self.path_solves(ply)
    }

    /// True when `path[..ply]` solves the cube (applied to it); records the length then.
    /// While collecting every solution (`collect_all`), records its canonical form instead and
    /// says false, so the search goes on.
    fn path_solves(&mut self, ply: usize) -> bool {
        let solved = self.cube.apply_moves(&self.path[..ply]).is_solved();
        if solved && self.collect_all {
            self.collected.extend(canonical_form(&self.path[..ply]));
            return false;
        }
        if solved {
            self.found_len = ply;
        }
        solved
    }
}

/// The canonical sequence of the turns `moves` (no face twice in a row; of two opposite faces
/// only U before D, R before L, F before B), when it has one: each run of turns on one axis
/// put in that order, which changes nothing (opposite faces commute); None when a run turns a
/// face twice (no canonical sequence of that length makes the same position this way).
///
/// The search steps from either side of a node, and the move pruning of the inverse side
/// keeps the opposite order there (its turns end the solution, inverted and last first), so
/// a solution may be found in a commuted order; every canonical solution is found in some
/// order that this maps back to it.
pub(super) fn canonical_form(moves: &[Move]) -> Option<Vec<Move>> {
    let mut out: Vec<Move> = moves.to_vec();
    let mut start = 0;
    while start < out.len() {
        let axis = out[start].index() / 3 % 3;
        let mut end = start + 1;
        while end < out.len() && out[end].index() / 3 % 3 == axis {
            end += 1;
        }
        let run = &mut out[start..end];
        run.sort_by_key(|m| m.index());
        if run.windows(2).any(|w| w[0].index() / 3 == w[1].index() / 3) {
            return None;
        }
        start = end;
    }
    Some(out)
}

/// True when every axis of `node` is at the goal of the tables: a necessary condition for the
/// solved cube (the whole cube, corner and edge permutation too, is checked by applying the
/// path).
fn at_goal(node: &Node) -> bool {
    node.axes
        .iter()
        .all(|a| a.slice_sorted == 0 && a.flip == 0 && a.twist == 0)
}

/// Writes the moves from the top level down to `levels[k][i]` into `path[..k]`, following the
/// nodes' parents.
fn trace(levels: &[Vec<LevelNode>], k: usize, mut i: usize, path: &mut [Move]) {
    for j in (1..=k).rev() {
        let node = &levels[j][i];
        path[j - 1] = Move::from_index(node.m as usize);
        i = node.parent as usize;
    }
}

impl OptimalSearcher<'_> {
    /// Searches depth `d` below `root` one prefix's subtree at a time, in the order of
    /// `prefixes`, recording each one's nodes, then reorders them for the next depth. True when
    /// a solution was found (in `path[..found_len]`).
    pub(super) fn search_prefixes(
        &mut self,
        root: Node,
        d: u32,
        prefixes: &mut Prefixes,
        stop: &Stop<'_>,
    ) -> bool {
        for i in prefixes.at_depth(d) {
            let pre = prefixes.get(i);
            let before = self.nodes;
            if self.run_prefix(root, &pre.moves, d - pre.cost, stop) {
                return true;
            }
            prefixes.record(i, self.nodes - before);
            if self.stopped {
                return false;
            }
        }
        prefixes.reorder();
        false
    }

    /// Applies `prefix` to `root` (pruning it like the search would, by the bound and by
    /// symmetry) and searches below it with `remaining` left. True when a solution was found
    /// (in `path[..found_len]`).
    pub(super) fn run_prefix(
        &mut self,
        root: Node,
        prefix: &[Move],
        remaining: u32,
        stop: &Stop<'_>,
    ) -> bool {
        let mut left_total = remaining + self.metric.length(prefix);
        let mut top = LevelNode::top(
            root,
            inverse_axes(&self.cube),
            self.group,
            NO_MOVE,
            left_total,
        );
        for (ply, &mv) in prefix.iter().enumerate() {
            let m = mv.index();
            if !self.symmetric_allows(ply, top.syms, m) {
                return false;
            }
            let mut child = Node::default();
            let mut bounds = [0u32; 3];
            for (a, bound) in bounds.iter_mut().enumerate() {
                self.step_axis(&top.node, &mut child, a, m);
                let entry = self.t.entry_prefetched(&child.axes[a]);
                *bound = self
                    .t
                    .axis_bound(entry, &top.node.axes[a], &mut child.axes[a]);
            }
            self.nodes += 1;
            left_total -= self.metric.cost(mv);
            if combine(bounds, left_total > 0) > left_total {
                return false;
            }
            let inv = self.inverse_child(&top.inv, m);
            top = LevelNode::top(child, inv, top.syms.fixing(m), m, left_total);
            self.path[ply] = mv;
        }
        self.search_from(prefix.len(), top, stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubefleet_tables::huge::Mod3Coords;
    use rand::{Rng, SeedableRng};

    /// The inverses the search carries agree with the cubie level (the naive oracle), and the
    /// inverse bound never exceeds the inverse's exact depth: the table depth found by walking
    /// to the goal when a mod-3 table is in the test tables, else the phase-1 depth.
    #[test]
    fn inverse_bound_is_a_lower_bound_of_the_inverse() {
        let tables = crate::test_tables();
        let s = OptimalSearcher::new(OptimalTables::with_loaded_bound(&tables));
        let mut rng = rand::rngs::StdRng::seed_from_u64(4);
        let (mut checked, mut exact) = (0, 0);
        for _ in 0..200 {
            let mut c = CubieCube::random(&mut rng);
            let mut inv = inverse_axes(&c);
            for _ in 0..6 {
                let m = rng.random_range(0..N_MOVE);
                c = c.apply_move(Move::from_index(m));
                inv = s.inverse_child(&inv, m);
                assert_eq!(inv, inverse_axes(&c));
            }
            // goal moves on the left leave an axis's coordinates as they are
            for (a, y) in inv.iter().enumerate() {
                for m in (0..N_MOVE).filter(|m| s.goal_moves[a] & (1 << m) != 0) {
                    let z = s.inv_move[a][m].multiply(y);
                    assert_eq!(Mod3Coords::of(&z), Mod3Coords::of(y));
                }
            }
            for y in &inv {
                let (axis, h) = s.t.cubie_side_first(y);
                let (floor, h) = s.t.cubie_side_second(&axis, h);
                let bound = s.t.loose_bound(floor, h);
                let depth = match s.t.bound {
                    Some(table) => table.depth(&tables.coords, &Mod3Coords::of(y)),
                    None => s.t.phase1(&axis),
                };
                assert!(bound <= depth, "bound {bound} > depth {depth}");
                checked += 1;
                exact += u32::from(bound == depth);
            }
        }
        // the table depth is rarely 3 or more above its floor: the phase-1 depth, or the
        // colossal table's floors (95.7 % exact measured)
        assert!(exact * 100 >= checked * 93, "{exact} of {checked} exact");
    }

    /// Random positions of 9 to 11 moves: the search changes sides, and every solution found
    /// (whose moves made on the inverse end it, inverted) solves its position, in the length
    /// the parallel search and the search by prefixes find from other starting nodes (the
    /// three-move prefixes, made on the position's side). Optimality itself is held by `tests/optimal.rs` (brute force up to 8
    /// moves, the known lengths up to 15).
    #[test]
    fn solutions_through_the_inverse_side_are_right() {
        let tables = crate::test_tables();
        let t = OptimalTables::with_loaded_bound(&tables);
        let mut s = OptimalSearcher::new(t);
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let mut changes = 0;
        for i in 0..12 {
            let moves: Vec<Move> = (0..9 + i % 3)
                .map(|_| Move::from_index(rng.random_range(0..N_MOVE)))
                .collect();
            let c = CubieCube::SOLVED.apply_moves(&moves);
            let opts = OptimalOptions::default();
            let got = s.solve(&c, &opts, &Budget::unlimited(), &mut |_| {});
            changes += s.side_changes;
            let sol = got.solution.expect("solved");
            assert!(c.apply_moves(&sol.0).is_solved());
            let par =
                super::super::solve_parallel(t, &c, &opts, &Budget::unlimited(), 2, &mut |_| {});
            assert_eq!(par.solution.expect("solved").len(), sol.len());
            // one thread, every iteration a prefix's subtree at a time (densest first), with
            // the coarse prefixes and with the fine ones from the second iteration on
            for refine_after in [REFINE_AFTER, 0] {
                let mut by_prefix = OptimalSearcher::new(t);
                by_prefix.prefixes_after = 0;
                by_prefix.refine_after = refine_after;
                let got = by_prefix.solve(&c, &opts, &Budget::unlimited(), &mut |_| {});
                let moves = got.solution.expect("solved").0;
                assert!(c.apply_moves(&moves).is_solved());
                assert_eq!(moves.len(), sol.len());
            }
        }
        assert!(changes > 0, "the search never changed sides");
    }

    /// Changing sides swaps the two sides' coordinates and inverts the cubies; with the giant
    /// table (`read_order`) the slice edges' order, left out of the cubie side's reading, is
    /// read from the cubies first, so the move tables step the right UDSliceSorted.
    #[test]
    fn flip_sides_swaps_the_sides_and_reads_the_slice_order() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(21);
        for read_order in [false, true] {
            let (c, y) = (CubieCube::random(&mut rng), CubieCube::random(&mut rng));
            let axes = |x: &CubieCube| Axis {
                slice_sorted: x.slice_sorted() as u16,
                flip: x.flip() as u16,
                twist: x.twist() as u16,
                ud_corners: x.ud_corners() as u8,
                depth: 7,
            };
            let mut node = LevelNode::top(
                Node {
                    axes: [axes(&c); 3],
                },
                [y; 3],
                SymSet::IDENTITY,
                NO_MOVE,
                9,
            );
            // the cubie side as the giant table's reading leaves it: positions only
            node.inv_axes = [Axis {
                slice_sorted: (24 * y.slice()) as u16,
                ..axes(&y)
            }; 3];
            node.flip_sides(read_order);
            assert!(node.flipped);
            let stepped = node.node.axes[0];
            let want = if read_order {
                y.slice_sorted()
            } else {
                24 * y.slice()
            };
            assert_eq!(stepped.slice_sorted as usize, want);
            assert_eq!(
                (stepped.flip, stepped.twist),
                (y.flip() as u16, y.twist() as u16)
            );
            assert_eq!(node.inv, [y.inverse(); 3]);
            assert_eq!(node.inv_axes[0].slice_sorted as usize, c.slice_sorted());
        }
    }
}
