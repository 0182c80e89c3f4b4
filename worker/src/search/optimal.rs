//! Optimal and depth-limited search: IDA* over the 18 face turns (seed 001, section 12; seed 002).
//!
//! The lower bound of a position is taken on three axes at once: the phase-1 table (distance to
//! `G1 = <U, D, R2, L2, F2, B2>`) is looked up for the cube itself and for its conjugates by
//! `S_URF3` and `S_URF3^2`, which measure the distance to the same subgroup turned to the RL and
//! FB axes. The bound is the largest of the three, raised to `min + 1` when the position is not
//! solved: the last move of any solution is a turn of one face, which lies in the goal of that
//! face's axis, so the position before it is in some axis goal and every axis goal is at least
//! `min` away (when all three are equal and non-zero this is the "+1" of Michiel de Bondt). When
//! the huge table is present it replaces the phase-1 table: its goal (slice edges home in order,
//! everything oriented) is inside phase 1's and the same argument holds for it.
//!
//! The quarter-turn metric uses the same tree: half turns cost 2. A quarter-turn solution never
//! turns one face twice in a row (two quarter turns make a half turn of the same cost), so the
//! move pruning of the half-turn metric loses nothing; and since every quarter turn is an odd
//! corner permutation, only lengths of the corner parity are searched. Half-turn bounds are
//! lower bounds of quarter-turn lengths.
//!
//! Move pruning: never the same face twice in a row, and of two opposite faces (which commute)
//! only the order U before D, R before L, F before B.
//!
//! Symmetry pruning (see [`super::symmetric`]): when symmetries of the 48 fix the position, a
//! move is expanded only when it is the least of its orbit under the symmetries that fix the
//! position and the moves before it. Each node carries that group; once it is the identity
//! alone (at once for a position without symmetry) nothing more is pruned and the search is
//! the plain one. The superflip, fixed by all 48, has 2 first moves to expand instead of 18.
//! The superflip also commutes with every move and is its own inverse, so in the half-turn
//! metric its solutions are closed under rotation and inversion too: [`CyclicWindows`] prunes
//! prefixes with a run of adjacent moves smaller than the run of the same length at the start.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use cubefleet_tables::coord::{N_PERM_4, N_TWIST};
use cubefleet_tables::huge::{huge_index, next_depth, HugeTable};
use cubefleet_tables::moves::N_MOVE;
use cubefleet_tables::symmetry::{SYMMETRIES, SYM_URF3};
use cubefleet_tables::{CubieCube, Move, MoveSeq, Tables};

use super::symmetric::{CyclicWindows, SymSet};
use super::{prefetch, Budget, Outcome, Status};

/// How the length of a solution is counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Half-turn metric: each of the 18 face turns counts 1.
    #[default]
    Htm,
    /// Quarter-turn metric: quarter turns count 1, half turns 2.
    Qtm,
}

impl Metric {
    /// The cost of `m` in this metric (1 or 2).
    #[inline]
    pub fn cost(self, m: Move) -> u32 {
        match self {
            Metric::Htm => 1,
            Metric::Qtm => m.qtm_length(),
        }
    }

    /// The length of a sequence in this metric.
    pub fn length(self, moves: &[Move]) -> u32 {
        moves.iter().map(|&m| self.cost(m)).sum()
    }

    /// The name used on the command line and in JSON (`htm`, `qtm`).
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Htm => "htm",
            Metric::Qtm => "qtm",
        }
    }
}

/// What to search for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OptimalOptions {
    /// The metric lengths are counted in.
    pub metric: Metric,
    /// Depth-limited search: give up with [`Status::NoneWithin`] when no solution of at most
    /// this length exists. `None`: search until the optimum is found (or the budget runs out).
    pub max_depth: Option<u32>,
    /// Resume: every solution shorter than this is already known not to exist (a lower bound
    /// reported by an earlier run of the same position); those lengths are not searched again.
    pub start_lower_bound: u32,
    /// Do not prune by the position's symmetries, nor by the rotations and inversion of the
    /// superflip's solutions (for comparisons: the lengths found and the lower bounds proven
    /// are the same either way, only the work differs).
    pub no_symmetry: bool,
}

/// Reported after each completed depth: no solution shorter than `lower_bound` exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Every solution shorter than this has been ruled out (in the search's metric).
    pub lower_bound: u32,
    /// Search nodes visited so far (all threads).
    pub nodes: u64,
}

/// The three axes: identity, `S_URF3` (UD -> RL), `S_URF3^2` (UD -> FB).
const AXIS_SYM: [usize; 3] = [0, SYM_URF3, 2 * SYM_URF3];
/// "No previous face" for the move pruning at the root.
const NO_FACE: usize = 100;
/// The budget is checked once every this many nodes (a power of two).
const CHECK_EVERY: u64 = 4096;

/// One axis's coordinates of a search node. Ranges: `slice_sorted < 11880`, `flip < 2048`,
/// `twist < 2187`; `huge` is the exact huge-table depth of this axis (0 when no huge table).
#[derive(Clone, Copy, Debug, Default)]
struct Axis {
    slice_sorted: u16,
    flip: u16,
    twist: u16,
    huge: u8,
}

/// A search node: the coordinates on the three axes.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    axes: [Axis; 3],
}

/// A child generated by [`OptimalSearcher::dfs`] before its bound is read: the move, the
/// child's coordinates (huge depths not filled in yet) and each axis's table entry, which has
/// been prefetched.
#[derive(Clone, Copy, Debug, Default)]
struct Kid {
    m: u8,
    node: Node,
    entry: [usize; 3],
}

/// The tables an optimal search reads, borrowed for the searcher's lifetime.
#[derive(Clone, Copy)]
pub struct OptimalTables<'a> {
    /// Move tables and the phase-1 pruning table.
    pub tables: &'a Tables,
    /// The huge table, when it is built and loaded; used instead of phase 1 for the bound.
    pub huge: Option<&'a HugeTable>,
}

impl<'a> OptimalTables<'a> {
    /// The phase-1 tables only.
    pub fn new(tables: &'a Tables) -> Self {
        OptimalTables { tables, huge: None }
    }

    /// With the huge table (when `huge` is `Some`).
    pub fn with_huge(tables: &'a Tables, huge: Option<&'a HugeTable>) -> Self {
        OptimalTables { tables, huge }
    }

    /// The node of `cube`: its coordinates on the three axes (and their huge depths).
    fn root(&self, cube: &CubieCube) -> Node {
        let mut node = Node::default();
        for (a, &s) in AXIS_SYM.iter().enumerate() {
            let c = SYMMETRIES.conjugate(cube, s);
            let (ss, flip, twist) = (c.slice_sorted(), c.flip(), c.twist());
            node.axes[a] = Axis {
                slice_sorted: ss as u16,
                flip: flip as u16,
                twist: twist as u16,
                huge: self
                    .huge
                    .map_or(0, |h| h.depth(&self.tables.coords, ss, flip, twist) as u8),
            };
        }
        node
    }

    /// Phase-1 depth (`0..=12`) of one axis.
    #[inline]
    fn phase1(&self, a: &Axis) -> u32 {
        self.tables.phase1.payload()[self.phase1_entry(a)] as u32
    }

    /// The index of an axis's entry in the phase-1 table (one byte each).
    #[inline]
    fn phase1_entry(&self, a: &Axis) -> usize {
        let coords = &self.tables.coords;
        let sc = coords.flipslice_sym(a.slice_sorted as usize / N_PERM_4, a.flip as usize);
        let twist = coords.twist_conj[16 * a.twist as usize + sc.sym()] as usize;
        N_TWIST * sc.class() + twist
    }

    /// The index of an axis's entry in the table the bound is read from (the huge table when
    /// present, else phase 1), and a hint to the CPU to start loading it.
    #[inline]
    fn entry_prefetched(&self, a: &Axis) -> usize {
        match self.huge {
            None => {
                let e = self.phase1_entry(a);
                prefetch(self.tables.phase1.payload(), e);
                e
            }
            Some(h) => {
                let e = huge_index(
                    &self.tables.coords,
                    h.flip_conj(),
                    a.slice_sorted as usize,
                    a.flip as usize,
                    a.twist as usize,
                );
                prefetch(h.payload(), e / 4);
                e
            }
        }
    }

    /// The lower bound of one axis of `child`, whose parent axis is `parent`, from its table
    /// entry `entry` (see [`OptimalTables::entry_prefetched`]); fills in the child's huge depth.
    #[inline]
    fn axis_bound(&self, entry: usize, parent: &Axis, child: &mut Axis) -> u32 {
        match self.huge {
            None => self.tables.phase1.payload()[entry] as u32,
            Some(h) => {
                let d = next_depth(parent.huge as u32, h.mod3(entry));
                child.huge = d as u8;
                d
            }
        }
    }

    /// The bound of a root node (each axis's own depth, no parent).
    fn root_bounds(&self, node: &Node) -> [u32; 3] {
        let mut b = [0; 3];
        for (a, axis) in node.axes.iter().enumerate() {
            b[a] = match self.huge {
                None => self.phase1(axis),
                Some(_) => axis.huge as u32,
            };
        }
        b
    }
}

/// `max(bounds)`, raised to `min + 1` for a position known not to be solved.
#[inline]
fn combine(bounds: [u32; 3], unsolved: bool) -> u32 {
    let max = bounds[0].max(bounds[1]).max(bounds[2]);
    if unsolved {
        max.max(bounds[0].min(bounds[1]).min(bounds[2]) + 1)
    } else {
        max
    }
}

/// A reusable single-threaded optimal searcher. Owns its per-depth node stack and move path,
/// which grow only between iterations (never inside the search).
pub struct OptimalSearcher<'a> {
    t: OptimalTables<'a>,
    /// `axis_move[a][m]`: move `m` as seen on axis `a` (`S m S^-1`).
    axis_move: [[u8; N_MOVE]; 3],
    /// `stack[ply]` is the node after `path[..ply]`.
    stack: Vec<Node>,
    /// `kids[ply]`: the children of `stack[ply]` being searched (`dfs` scratch); as long as
    /// `stack`.
    kids: Vec<[Kid; N_MOVE]>,
    /// `syms[ply]`: the symmetries that fix the position and each move of `path[..ply]`; as
    /// long as `stack`.
    syms: Vec<SymSet>,
    path: Vec<Move>,
    /// The position being solved.
    cube: CubieCube,
    /// Its symmetry group ([`SymSet::IDENTITY`] when symmetry pruning is off).
    group: SymSet,
    /// Rotation and inversion pruning, for the superflip in the half-turn metric only.
    cyclic: Option<CyclicWindows>,
    metric: Metric,
    nodes: u64,
    next_check: u64,
    stopped: bool,
    found_len: usize,
}

/// Where a search stops besides its budget: a flag raised by a sibling thread that found a
/// solution.
struct Stop<'b> {
    budget: &'b Budget,
    found: Option<&'b AtomicBool>,
}

impl Stop<'_> {
    fn now(&self) -> bool {
        self.budget.exhausted() || self.found.is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

impl<'a> OptimalSearcher<'a> {
    /// A searcher over `t`. Cheap; reuse it across positions.
    pub fn new(t: OptimalTables<'a>) -> Self {
        let mut axis_move = [[0u8; N_MOVE]; 3];
        for (a, &s) in AXIS_SYM.iter().enumerate() {
            for (m, am) in axis_move[a].iter_mut().enumerate() {
                *am = SYMMETRIES.move_conj[s][m].index() as u8;
            }
        }
        OptimalSearcher {
            t,
            axis_move,
            stack: vec![Node::default(); 32],
            kids: vec![[Kid::default(); N_MOVE]; 32],
            syms: vec![SymSet::IDENTITY; 32],
            path: vec![Move::from_index(0); 32],
            cube: CubieCube::SOLVED,
            group: SymSet::IDENTITY,
            cyclic: None,
            metric: Metric::Htm,
            nodes: 0,
            next_check: CHECK_EVERY,
            stopped: false,
            found_len: 0,
        }
    }

    /// True when the huge table is used for the bound.
    pub fn uses_huge(&self) -> bool {
        self.t.huge.is_some()
    }

    /// The lower bound the tables give for `cube` before any search (in half turns).
    pub fn table_bound(&self, cube: &CubieCube) -> u32 {
        let node = self.t.root(cube);
        combine(self.t.root_bounds(&node), !cube.is_solved())
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
        loop {
            if let Some(outcome) = self.past_limit(d, opts) {
                return outcome;
            }
            self.ensure_depth(d as usize + 2);
            self.stack[0] = root;
            self.syms[0] = self.group;
            let found = self.dfs(0, d, NO_FACE, &stop);
            if found {
                return self.solved(d);
            }
            if self.stopped {
                return self.stopped_outcome(d, budget);
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
    fn prepare(&mut self, cube: &CubieCube, opts: &OptimalOptions) -> Result<u32, Outcome> {
        self.cube = *cube;
        self.group = if opts.no_symmetry {
            SymSet::IDENTITY
        } else {
            SymSet::of_position(cube)
        };
        self.metric = opts.metric;
        self.cyclic = match self.metric {
            Metric::Htm if !opts.no_symmetry => CyclicWindows::of_position(cube, self.group),
            _ => None,
        };
        self.nodes = 0;
        self.next_check = CHECK_EVERY;
        self.stopped = false;
        if cube.is_solved() {
            return Err(Outcome {
                status: Status::Solved,
                solution: Some(MoveSeq(Vec::new())),
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

    /// Depth increment between iterations: 2 in QTM (lengths of one parity only).
    fn step(&self) -> u32 {
        match self.metric {
            Metric::Htm => 1,
            Metric::Qtm => 2,
        }
    }

    fn past_limit(&self, d: u32, opts: &OptimalOptions) -> Option<Outcome> {
        match opts.max_depth {
            Some(max) if d > max => Some(Outcome {
                status: Status::NoneWithin,
                solution: None,
                optimal: false,
                lower_bound: d,
                nodes: self.nodes,
            }),
            _ => None,
        }
    }

    fn ensure_depth(&mut self, n: usize) {
        if self.stack.len() < n {
            self.stack.resize(n, Node::default());
            self.kids.resize(n, [Kid::default(); N_MOVE]);
            self.syms.resize(n, SymSet::IDENTITY);
            self.path.resize(n, Move::from_index(0));
        }
    }

    fn solved(&self, d: u32) -> Outcome {
        let moves = self.path[..self.found_len].to_vec();
        debug_assert!(self.cube.apply_moves(&moves).is_solved());
        Outcome {
            status: Status::Solved,
            solution: Some(MoveSeq(moves)),
            optimal: true,
            lower_bound: d,
            nodes: self.nodes,
        }
    }

    fn stopped_outcome(&self, d: u32, budget: &Budget) -> Outcome {
        Outcome {
            status: if budget.cancelled() {
                Status::Cancelled
            } else {
                Status::Timeout
            },
            solution: None,
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
    /// coordinates (not its huge depth) into `child`.
    #[inline]
    fn step_axis(&self, node: &Node, child: &mut Node, a: usize, m: usize) {
        let coords = &self.t.tables.coords;
        let p = &node.axes[a];
        let am = self.axis_move[a][m] as usize;
        let c = &mut child.axes[a];
        c.slice_sorted = coords.slice_sorted_move[N_MOVE * p.slice_sorted as usize + am];
        c.flip = coords.flip_move[N_MOVE * p.flip as usize + am];
        c.twist = coords.twist_move[N_MOVE * p.twist as usize + am];
    }

    /// Searches below `stack[ply]` for a solution costing exactly `remaining` more (in the
    /// metric); the node's bound is known to be `<= remaining`. On success `path[..found_len]`
    /// solves the cube (verified by applying it).
    ///
    /// Two passes over the children: the first makes each allowed child's coordinates and
    /// prefetches its three table entries (the tables are far larger than the caches, so the
    /// loads overlap instead of waiting one after another), the second reads the bounds and
    /// descends.
    fn dfs(&mut self, ply: usize, remaining: u32, last_face: usize, stop: &Stop<'_>) -> bool {
        if remaining == 0 {
            return self.leaf(ply);
        }
        if self.must_stop(stop) {
            return false;
        }
        let node = self.stack[ply];
        let syms = self.syms[ply];
        let pruned_by_symmetry = !syms.is_trivial() || self.cyclic.is_some();
        let mut n = 0;
        for face in 0..6 {
            if face == last_face || face + 3 == last_face {
                continue;
            }
            for q in 0..3 {
                let m = 3 * face + q;
                if self.metric.cost(Move::from_index(m)) > remaining
                    || (pruned_by_symmetry && !self.symmetric_allows(ply, syms, m))
                {
                    continue;
                }
                let mut kid = Kid {
                    m: m as u8,
                    ..Kid::default()
                };
                for a in 0..3 {
                    self.step_axis(&node, &mut kid.node, a, m);
                    kid.entry[a] = self.t.entry_prefetched(&kid.node.axes[a]);
                }
                self.kids[ply][n] = kid;
                n += 1;
            }
        }
        for i in 0..n {
            let Kid {
                m,
                node: mut child,
                entry,
            } = self.kids[ply][i];
            let m = m as usize;
            let mv = Move::from_index(m);
            let left = remaining - self.metric.cost(mv);
            self.nodes += 1;
            let mut bounds = [0u32; 3];
            let mut pruned = false;
            for (a, bound) in bounds.iter_mut().enumerate() {
                *bound = self
                    .t
                    .axis_bound(entry[a], &node.axes[a], &mut child.axes[a]);
                if *bound > left {
                    pruned = true;
                    break;
                }
            }
            if pruned {
                continue;
            }
            // with moves left the child must be unsolved to matter (a solved child would
            // mean a shorter solution, ruled out by the earlier iterations)
            if left > 0 && combine(bounds, true) > left {
                continue;
            }
            self.path[ply] = mv;
            self.stack[ply + 1] = child;
            self.syms[ply + 1] = syms.fixing(m);
            if self.dfs(ply + 1, left, m / 3, stop) {
                return true;
            }
            if self.stopped {
                return false;
            }
        }
        false
    }

    /// True when move `m` may follow `path[..ply]`, whose moves are all fixed by `syms`: it is
    /// the least of its orbit under `syms`, and [`CyclicWindows`] allows it when in use.
    fn symmetric_allows(&self, ply: usize, syms: SymSet, m: usize) -> bool {
        syms.is_least_in_orbit(m)
            && self
                .cyclic
                .as_ref()
                .is_none_or(|c| c.allows(&self.path[..ply], m))
    }

    /// A node with nothing left to spend: a solution if its axes are all at their goal and the
    /// whole cube (corner and edge permutation too) is solved by the path.
    fn leaf(&mut self, ply: usize) -> bool {
        let node = &self.stack[ply];
        let at_goal = node
            .axes
            .iter()
            .all(|a| a.slice_sorted == 0 && a.flip == 0 && a.twist == 0);
        if at_goal && self.cube.apply_moves(&self.path[..ply]).is_solved() {
            self.found_len = ply;
            return true;
        }
        false
    }
}

/// Solves one position with `threads` threads: for each depth, the nodes two moves below the
/// root are shared out among the threads (an atomic counter hands them out), and the first
/// thread to find a solution stops the others. Prefixes that are not least in their orbit under
/// the position's symmetries are skipped. Same results and guarantees as
/// [`OptimalSearcher::solve`]; `threads <= 1` runs that directly.
pub fn solve_parallel(
    t: OptimalTables<'_>,
    cube: &CubieCube,
    opts: &OptimalOptions,
    budget: &Budget,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> Outcome {
    let mut main = OptimalSearcher::new(t);
    if threads <= 1 {
        return main.solve(cube, opts, budget, progress);
    }
    let mut d = match main.prepare(cube, opts) {
        Ok(d) => d,
        Err(outcome) => return outcome,
    };
    let root = t.root(cube);
    let mut searchers: Vec<OptimalSearcher<'_>> = (0..threads)
        .map(|_| {
            let mut s = OptimalSearcher::new(t);
            // prepare cannot return early: the cube is not solved
            let _ = s.prepare(cube, opts);
            s
        })
        .collect();
    // the prefixes: every pair of moves allowed by the move pruning (single moves too, for
    // depths below 2)
    let mut prefixes: Vec<Vec<Move>> = Vec::new();
    for m1 in Move::ALL {
        prefixes.push(vec![m1]);
        for m2 in Move::ALL {
            let (f1, f2) = (m1.face() as usize, m2.face() as usize);
            if f1 != f2 && f2 + 3 != f1 {
                prefixes.push(vec![m1, m2]);
            }
        }
    }
    let mut total_nodes = 0u64;
    loop {
        if let Some(mut outcome) = main.past_limit(d, opts) {
            outcome.nodes = total_nodes;
            return outcome;
        }
        let found = AtomicBool::new(false);
        let next = AtomicUsize::new(0);
        let stop = Stop {
            budget,
            found: Some(&found),
        };
        let metric = opts.metric;
        // single-move prefixes only when the depth is 1 (else they are the parents of pairs)
        let wanted_len = if d >= 2 { 2 } else { 1 };
        let results: Vec<Option<Vec<Move>>> = std::thread::scope(|s| {
            let handles: Vec<_> = searchers
                .iter_mut()
                .map(|srch| {
                    let (found, next, stop, prefixes) = (&found, &next, &stop, &prefixes);
                    s.spawn(move || {
                        srch.ensure_depth(d as usize + 2);
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= prefixes.len() || srch.stopped {
                                return None;
                            }
                            let pre = &prefixes[i];
                            if pre.len() != wanted_len {
                                continue;
                            }
                            let cost = metric.length(pre);
                            if cost > d {
                                continue;
                            }
                            if srch.run_prefix(root, pre, d - cost, stop) {
                                found.store(true, Ordering::Relaxed);
                                return Some(srch.path[..srch.found_len].to_vec());
                            }
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(None))
                .collect()
        });
        total_nodes += searchers.iter().map(|s| s.nodes).sum::<u64>();
        for s in &mut searchers {
            s.nodes = 0;
            s.next_check = CHECK_EVERY;
        }
        if let Some(moves) = results.into_iter().flatten().next() {
            debug_assert!(cube.apply_moves(&moves).is_solved());
            return Outcome {
                status: Status::Solved,
                solution: Some(MoveSeq(moves)),
                optimal: true,
                lower_bound: d,
                nodes: total_nodes,
            };
        }
        if searchers.iter().any(|s| s.stopped) || budget.exhausted() {
            let mut outcome = main.stopped_outcome(d, budget);
            outcome.nodes = total_nodes;
            return outcome;
        }
        d += main.step();
        progress(Progress {
            lower_bound: d,
            nodes: total_nodes,
        });
    }
}

impl OptimalSearcher<'_> {
    /// Applies `prefix` to `root` (pruning it like the search would, by the bound and by
    /// symmetry) and searches below it with `remaining` left. True when a solution was found
    /// (in `path[..found_len]`).
    fn run_prefix(&mut self, root: Node, prefix: &[Move], remaining: u32, stop: &Stop<'_>) -> bool {
        self.stack[0] = root;
        self.syms[0] = self.group;
        let mut left_total = remaining + self.metric.length(prefix);
        for (ply, &mv) in prefix.iter().enumerate() {
            let m = mv.index();
            let syms = self.syms[ply];
            if !self.symmetric_allows(ply, syms, m) {
                return false;
            }
            self.syms[ply + 1] = syms.fixing(m);
            let node = self.stack[ply];
            let mut child = Node::default();
            let mut bounds = [0u32; 3];
            for (a, bound) in bounds.iter_mut().enumerate() {
                self.step_axis(&node, &mut child, a, m);
                let entry = self.t.entry_prefetched(&child.axes[a]);
                *bound = self.t.axis_bound(entry, &node.axes[a], &mut child.axes[a]);
            }
            self.nodes += 1;
            left_total -= self.metric.cost(mv);
            if combine(bounds, left_total > 0) > left_total {
                return false;
            }
            self.path[ply] = mv;
            self.stack[ply + 1] = child;
        }
        let last_face = prefix.last().map_or(NO_FACE, |m| m.face() as usize);
        self.dfs(prefix.len(), remaining, last_face, stop)
    }
}

/// Figures for `cubefleet bench optimal`: one solve per position.
#[derive(Clone, Debug, Default)]
pub struct BenchStats {
    /// Seconds per solve, in input order.
    pub seconds: Vec<f64>,
    /// Solution lengths (in the metric), `None` when the budget ran out.
    pub lengths: Vec<Option<u32>>,
    /// Nodes over all solves.
    pub nodes: u64,
}

impl BenchStats {
    /// Mean seconds per solve (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.seconds.is_empty() {
            0.0
        } else {
            self.seconds.iter().sum::<f64>() / self.seconds.len() as f64
        }
    }

    /// Median seconds per solve (0 when empty).
    pub fn median(&self) -> f64 {
        let mut s = self.seconds.clone();
        s.sort_by(f64::total_cmp);
        match s.len() {
            0 => 0.0,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }

    /// Longest solve in seconds.
    pub fn max(&self) -> f64 {
        self.seconds.iter().copied().fold(0.0, f64::max)
    }

    /// Nodes per second over all solves.
    pub fn nodes_per_second(&self) -> f64 {
        let total: f64 = self.seconds.iter().sum();
        if total > 0.0 {
            self.nodes as f64 / total
        } else {
            0.0
        }
    }
}

/// Solves each of `cubes` optimally with `opts`, one after the other on `threads` threads (1:
/// the single-threaded searcher), each within `budget_per_solve` when given; `each` is called
/// after every solve with its index and outcome (for printing as it goes).
pub fn bench_optimal(
    t: OptimalTables<'_>,
    cubes: &[CubieCube],
    opts: &OptimalOptions,
    threads: usize,
    budget_per_solve: Option<std::time::Duration>,
    each: &mut dyn FnMut(usize, &Outcome, f64),
) -> BenchStats {
    let mut stats = BenchStats::default();
    let mut searcher = OptimalSearcher::new(t);
    let metric = opts.metric;
    for (i, cube) in cubes.iter().enumerate() {
        let budget = Budget {
            deadline: budget_per_solve.map(|d| Instant::now() + d),
            cancel: None,
        };
        let start = Instant::now();
        let outcome = if threads <= 1 {
            searcher.solve(cube, opts, &budget, &mut |_| {})
        } else {
            solve_parallel(t, cube, opts, &budget, threads, &mut |_| {})
        };
        let secs = start.elapsed().as_secs_f64();
        stats.seconds.push(secs);
        stats.nodes += outcome.nodes;
        stats
            .lengths
            .push(outcome.solution.as_ref().map(|s| metric.length(&s.0)));
        each(i, &outcome, secs);
    }
    stats
}
