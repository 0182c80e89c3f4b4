//! Optimal and depth-limited search: IDA* over the 18 face turns (seed 001, section 12; seed 002).
//!
//! The lower bound of a position is taken on three axes at once: the phase-1 table (distance to
//! `G1 = <U, D, R2, L2, F2, B2>`) is looked up for the cube itself and for its conjugates by
//! `S_URF3` and `S_URF3^2`, which measure the distance to the same subgroup turned to the RL and
//! FB axes. The bound is the largest of the three, raised to `min + 1` when the position is not
//! solved: the last move of any solution is a turn of one face, which lies in the goal of that
//! face's axis, so the position before it is in some axis goal and every axis goal is at least
//! `min` away (when all three are equal and non-zero this is the "+1" of Michiel de Bondt). When
//! a mod-3 table is present it replaces the phase-1 table: the giant table (goal: phase 1's with
//! the D-layer corners in the D layer) or else the huge table (slice edges home in order,
//! everything oriented). Both goals are inside phase 1's, contain every turn of their axis's U
//! and D faces, and are left alone by those turns multiplied on the left, so the arguments here
//! and below hold for either.
//!
//! The inverse of a position has the same optimal length, so the bound of the inverse (on its
//! three axes, combined the same way) bounds the position too. The node at path `p` from cube
//! `c` is `c p`; its inverse `p^-1 c^-1` changes by a move multiplied on the left, which
//! coordinate move tables cannot follow, so each node carries the inverse of each axis's
//! position at the cubie level (`m^-1 * y`, 20 lookups per axis) and the coordinates are read
//! from it. The mod-3 tables' 2-bit entries need a neighbour's exact depth, which the inverse
//! does not have; the phase-1 table gives the exact depth `p` of a larger goal, and the table's
//! depth is the least number `>= p` with the right residue mod 3 (a lower bound in every case).
//! The inverse is read only for children whose own bound is within one of what is left: it
//! halves the nodes of 16-move searches. It also bars moves: a U or D turn `g` (a move of the
//! axis's goal) multiplied on the left changes none of an axis's coordinates, so when the
//! inverse is `remaining` or more away on an axis, no move that the axis sees as a U or D turn
//! can start a solution (the child's inverse is `g^-1` times the node's, just as far); a third
//! fewer nodes again.
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

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use cubefleet_tables::coord::{raw_flipslice, N_FLIP};
use cubefleet_tables::file::TableKind;
use cubefleet_tables::huge::{giant_index, next_depth, Mod3Coords, Mod3Table};
use cubefleet_tables::moves::N_MOVE;
use cubefleet_tables::symmetry::{SYMMETRIES, SYM_URF3};
use cubefleet_tables::{CubieCube, Face, Move, MoveSeq, Tables};

use super::symmetric::{CyclicWindows, SymSet};
use super::{prefetch, skip_after, Budget, Outcome, Status, NO_MOVE};

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
/// The most nodes of one level expanded together (see [`OptimalSearcher::expand`]).
const LEVEL_CHUNK: usize = 16;
/// The budget is checked once every this many nodes (a power of two).
const CHECK_EVERY: u64 = 4096;

/// One axis's coordinates of a search node. Ranges: `slice_sorted < 11880`, `flip < 2048`,
/// `twist < 2187`, `ud_corners < 70`; `depth` is the exact depth of this axis in the table the
/// bound is read from (the mod-3 table, huge or giant, else phase 1).
#[derive(Clone, Copy, Debug, Default)]
struct Axis {
    slice_sorted: u16,
    flip: u16,
    twist: u16,
    ud_corners: u8,
    depth: u8,
}

impl Axis {
    /// The raw FlipUDSlice (phase 1's coordinate before its symmetry reduction).
    #[inline]
    fn flipslice(&self) -> usize {
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
struct Node {
    axes: [Axis; 3],
}

/// A node of the batched search (see [`OptimalSearcher::expand`]): its coordinates, the
/// inverse of each axis's position at the cubie level with the bounds read for it, the
/// symmetries that fix the position and every move of the path to it, and how it was reached.
#[derive(Clone, Copy, Debug)]
struct LevelNode {
    node: Node,
    /// `inv[a]`: the inverse of axis `a`'s position, at the cubie level.
    inv: [CubieCube; 3],
    /// `inv_bounds[a]`: a lower bound of the table depth of `inv[a]` (0 when it was not read).
    inv_bounds: [u32; 3],
    syms: SymSet,
    /// The parent's index in the level above (unused at the top level).
    parent: u32,
    /// The last move of the path, an index `< 18` ([`NO_MOVE`] when there is none); below the
    /// top level, the move from the parent.
    m: u8,
    /// What is left to spend, in the search's metric; the node's bound is at most this.
    left: u8,
}

impl LevelNode {
    /// The node a search starts from: `node`, whose axes' inverses are `inv`, fixed by `syms`,
    /// reached by a path whose last move is `last` ([`NO_MOVE`] for none), with `left` to spend.
    fn top(node: Node, inv: [CubieCube; 3], syms: SymSet, last: usize, left: u32) -> Self {
        LevelNode {
            node,
            inv,
            inv_bounds: [0; 3],
            syms,
            parent: 0,
            m: last as u8,
            left: left as u8,
        }
    }
}

/// A child made by [`OptimalSearcher::expand`]: its parent (an index into the level being
/// expanded), the move, what is left after it, the order its axes are read in, its coordinates,
/// the bounds of the axes read so far (with their table depths in `node`), and the table entry
/// of the axis being read (prefetched).
#[derive(Clone, Copy, Debug, Default)]
struct Kid {
    parent: u32,
    m: u8,
    left: u8,
    order: [u8; 3],
    node: Node,
    bounds: [u32; 3],
    entry: usize,
}

/// The inverse of a child that passed the bound of its own position (kept alongside the next
/// level), for the axis being read: whether it is read (`checked`), whether it was cut, and
/// (when checked) the inverse's raw FlipUDSlice (`slice * 2048 + flip < 1013760`), twist and
/// UDCorners and its phase-1 and mod-3 entries, which have been prefetched.
#[derive(Clone, Copy, Debug, Default)]
struct InvEntries {
    checked: bool,
    cut: bool,
    flipslice: u32,
    twist: u16,
    ud_corners: u8,
    phase1: usize,
    mod3: usize,
}

/// The tables an optimal search reads, borrowed for the searcher's lifetime.
#[derive(Clone, Copy)]
pub struct OptimalTables<'a> {
    /// Move tables and the phase-1 pruning table.
    pub tables: &'a Tables,
    /// The mod-3 table, huge or giant, when one is built and loaded; used instead of phase 1
    /// for the bound.
    pub bound: Option<&'a Mod3Table>,
    /// True when `bound` is the giant table, which reads UDCorners: the coordinate is tracked
    /// only then (0 otherwise).
    reads_ud_corners: bool,
}

impl<'a> OptimalTables<'a> {
    /// The phase-1 tables only.
    pub fn new(tables: &'a Tables) -> Self {
        OptimalTables::with_bound(tables, None)
    }

    /// With the mod-3 table loaded in `tables` (the giant table, else the huge one), if any.
    pub fn with_loaded_bound(tables: &'a Tables) -> Self {
        OptimalTables::with_bound(tables, tables.optimal_bound.as_ref())
    }

    /// With a mod-3 table, the huge or the giant one (when `bound` is `Some`).
    pub fn with_bound(tables: &'a Tables, bound: Option<&'a Mod3Table>) -> Self {
        OptimalTables {
            tables,
            bound,
            reads_ud_corners: bound.is_some_and(|h| h.kind() == TableKind::Giant),
        }
    }

    /// The node of `cube`: its coordinates on the three axes (and their table depths).
    fn root(&self, cube: &CubieCube) -> Node {
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
    fn phase1(&self, a: &Axis) -> u32 {
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
        prefetch(h.payload(), e / 4);
        e
    }

    /// Starts loading the FlipUDSlice sym-coordinate an axis's giant-table index needs (a 4 MB
    /// table), so that [`OptimalTables::entry_prefetched`] does not wait for it.
    #[inline]
    fn prefetch_sym(&self, a: &Axis) {
        prefetch(&self.tables.coords.flipslice.sym, a.flipslice());
    }

    /// The index of an axis's entry in the table the bound is read from (the mod-3 table when
    /// present, else phase 1), and a hint to the CPU to start loading it.
    #[inline]
    fn entry_prefetched(&self, a: &Axis) -> usize {
        match self.bound {
            None => {
                let e = self.phase1_entry(a);
                prefetch(self.tables.phase1.payload(), e);
                e
            }
            Some(h) => self.mod3_entry_prefetched(h, &a.mod3_coords()),
        }
    }

    /// The lower bound of one axis of `child`, whose parent axis is `parent`, from its table
    /// entry `entry` (see [`OptimalTables::entry_prefetched`]); fills in the child's table depth.
    #[inline]
    fn axis_bound(&self, entry: usize, parent: &Axis, child: &mut Axis) -> u32 {
        let d = match self.bound {
            None => self.tables.phase1.payload()[entry] as u32,
            Some(h) => next_depth(parent.depth as u32, h.mod3(entry)),
        };
        child.depth = d as u8;
        d
    }

    /// The first stage of reading the inverse `y` of an axis's position: its raw FlipUDSlice
    /// (whose sym-coordinate is prefetched), its twist, its UDCorners (0 unless the giant table
    /// reads it) and its huge-table entry (prefetched; 0 without the huge table or with the
    /// giant one). The phase-1 and giant entries need the sym-coordinate, so they are a second
    /// stage ([`OptimalTables::inverse_phase1`], [`OptimalTables::inverse_giant`]), run once
    /// the loads of every child are under way.
    #[inline]
    fn inverse_first(&self, y: &CubieCube) -> (u32, u16, u8, usize) {
        let x = Mod3Coords {
            slice_sorted: y.slice_sorted(),
            flip: y.flip(),
            twist: y.twist(),
            ud_corners: if self.reads_ud_corners {
                y.ud_corners()
            } else {
                0
            },
        };
        let coords = &self.tables.coords;
        let flipslice = raw_flipslice(x.slice_sorted, x.flip);
        prefetch(&coords.flipslice.sym, flipslice);
        let mod3 = match self.bound {
            Some(h) if !self.reads_ud_corners => self.mod3_entry_prefetched(h, &x),
            _ => 0,
        };
        (flipslice as u32, x.twist as u16, x.ud_corners as u8, mod3)
    }

    /// The giant-table entry of raw FlipUDSlice `flipslice`, twist and UDCorners, prefetched
    /// (0 unless the giant table is the bound).
    #[inline]
    fn inverse_giant(&self, flipslice: u32, twist: u16, ud_corners: u8) -> usize {
        match self.bound {
            Some(h) if self.reads_ud_corners => {
                let (fs, coords) = (flipslice as usize, &self.tables.coords);
                let e = giant_index(
                    coords,
                    fs / N_FLIP,
                    fs % N_FLIP,
                    twist.into(),
                    ud_corners.into(),
                );
                prefetch(h.payload(), e / 4);
                e
            }
            _ => 0,
        }
    }

    /// The phase-1 entry of raw FlipUDSlice `flipslice` and twist `twist`, prefetched.
    #[inline]
    fn inverse_phase1(&self, flipslice: u32, twist: u16) -> usize {
        let (p1, _) = self
            .tables
            .coords
            .phase1_index(flipslice as usize, twist as usize);
        prefetch(self.tables.phase1.payload(), p1);
        p1
    }

    /// A lower bound of the table depth (the phase-1 depth without a mod-3 table) from the
    /// entries of [`OptimalTables::inverse_phase1`] and [`OptimalTables::inverse_first`]: the
    /// table's goal lies inside phase 1's, so its depth is at least the phase-1 depth `p`, and
    /// it is `mod3` modulo 3; the least such number.
    #[inline]
    fn inverse_bound(&self, phase1: usize, mod3: usize) -> u32 {
        let p = self.tables.phase1.payload()[phase1] as u32;
        match self.bound {
            None => p,
            Some(h) => p + (h.mod3(mod3) as u32 + 3 - p % 3) % 3,
        }
    }
}

/// The inverse of `cube` seen on each axis (`S c^-1 S^-1` for the axis symmetry `S`).
fn inverse_axes(cube: &CubieCube) -> [CubieCube; 3] {
    let inv = cube.inverse();
    AXIS_SYM.map(|s| SYMMETRIES.conjugate(&inv, s))
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

/// A reusable single-threaded optimal searcher. Owns its levels of nodes, its scratch and its
/// move path, which keep their memory from one search to the next.
pub struct OptimalSearcher<'a> {
    t: OptimalTables<'a>,
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

    /// True when a mod-3 table (huge or giant) is used for the bound.
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
        loop {
            if let Some(outcome) = self.past_limit(d, opts) {
                return outcome;
            }
            self.ensure_depth(d as usize + 2);
            let top = LevelNode::top(root, inverse_axes(cube), self.group, NO_MOVE, d);
            let found = self.search_from(0, top, &stop);
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
        if self.levels.len() < n {
            self.levels.resize(n, Vec::new());
        }
        if self.path.len() < n {
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
    /// coordinates (not its table depth) into `child`.
    #[inline]
    fn step_axis(&self, node: &Node, child: &mut Node, a: usize, m: usize) {
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
    fn search_from(&mut self, base: usize, top: LevelNode, stop: &Stop<'_>) -> bool {
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
    fn expand(&mut self, k: usize, range: Range<usize>) -> bool {
        let mut levels = std::mem::take(&mut self.levels);
        let mut kids = std::mem::take(&mut self.kids);
        let mut inv_entries = std::mem::take(&mut self.inv_entries);
        let (upper, lower) = levels.split_at_mut(k + 1);
        let parents = &upper[k];
        let next = &mut lower[0];
        let t = self.t;
        let staged = t.reads_ud_corners;
        kids.clear();
        for i in range {
            let p = &parents[i];
            let remaining = p.left as u32;
            // a goal move `g` of an axis leaves the inverse's coordinates there as they are
            // (the child's inverse is `g^-1` times the node's), so when the inverse is already
            // at least `remaining` away on that axis, no such move can start a solution
            let mut barred = 0;
            for (a, &b) in p.inv_bounds.iter().enumerate() {
                if b >= remaining {
                    barred |= self.goal_moves[a];
                }
            }
            let pruned_by_symmetry = !p.syms.is_trivial() || self.cyclic.is_some();
            if self.cyclic.is_some() {
                trace(upper, k, i, &mut self.path[self.base..]);
            }
            let mut order = [0u8, 1, 2];
            order.sort_by_key(|&a| std::cmp::Reverse(p.node.axes[a as usize].depth));
            for m in 0..N_MOVE {
                let cost = self.metric.cost(Move::from_index(m));
                if skip_after(p.m as usize, m)
                    || cost > remaining
                    || barred & (1 << m) != 0
                    || (pruned_by_symmetry && !self.symmetric_allows(self.base + k, p.syms, m))
                {
                    continue;
                }
                let mut kid = Kid {
                    parent: i as u32,
                    m: m as u8,
                    left: (remaining - cost) as u8,
                    order,
                    ..Kid::default()
                };
                for a in 0..3 {
                    self.step_axis(&p.node, &mut kid.node, a, m);
                }
                kids.push(kid);
            }
        }
        self.nodes += kids.len() as u64;
        for r in 0..3 {
            if staged {
                for kid in &kids {
                    t.prefetch_sym(&kid.node.axes[kid.order[r] as usize]);
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
                trace(upper, k, kid.parent as usize, &mut self.path[self.base..]);
                self.path[self.base + k] = Move::from_index(m);
                if self.solves(&kid.node, self.base + k + 1) {
                    found = true;
                    break;
                }
                continue;
            }
            next.push(LevelNode {
                node: kid.node,
                inv: self.inverse_child(&p.inv, m),
                inv_bounds: [0; 3],
                syms: p.syms.fixing(m),
                parent: kid.parent,
                m: m as u8,
                left: left as u8,
            });
            // the inverse is read only where the bound is within one of what is left
            // (measured: from one below, 5 % fewer nodes than where it is tight, and a little
            // faster; further below, no fewer nodes)
            inv_entries.push(InvEntries {
                checked: bound + 1 >= left,
                ..InvEntries::default()
            });
        }
        for a in 0..3 {
            for (node, e) in next.iter().zip(inv_entries.iter_mut()) {
                if e.checked {
                    (e.flipslice, e.twist, e.ud_corners, e.mod3) = t.inverse_first(&node.inv[a]);
                }
            }
            // the phase-1 (and giant) entries, once every sym-coordinate they need is on its way
            for e in inv_entries.iter_mut().filter(|e| e.checked) {
                e.phase1 = t.inverse_phase1(e.flipslice, e.twist);
                if staged {
                    e.mod3 = t.inverse_giant(e.flipslice, e.twist, e.ud_corners);
                }
            }
            for (node, e) in next.iter_mut().zip(inv_entries.iter_mut()) {
                if e.checked {
                    node.inv_bounds[a] = t.inverse_bound(e.phase1, e.mod3);
                    if node.inv_bounds[a] > node.left as u32 {
                        e.checked = false;
                        e.cut = true;
                    }
                }
            }
        }
        let mut kept = 0;
        for i in 0..next.len() {
            let e = &inv_entries[i];
            let node = next[i];
            if e.cut || (e.checked && combine(node.inv_bounds, true) > node.left as u32) {
                continue;
            }
            next[kept] = node;
            kept += 1;
        }
        next.truncate(kept);
        self.levels = levels;
        self.kids = kids;
        self.inv_entries = inv_entries;
        found
    }

    /// The inverses (per axis) of the child by move `m` of a node whose axes' inverses are
    /// `parent`: the child's position on axis `a` is the node's times `axis_move[a][m]`, so its
    /// inverse is that move's inverse times the node's inverse.
    #[inline]
    fn inverse_child(&self, parent: &[CubieCube; 3], m: usize) -> [CubieCube; 3] {
        [0, 1, 2].map(|a| self.inv_move[a][m].multiply(&parent[a]))
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

    /// True when `node`, reached by `path[..ply]` with nothing left to spend, is the solved
    /// cube: its axes are all at their goal and the path solves the whole cube (corner and edge
    /// permutation too). Records the solution's length then.
    fn solves(&mut self, node: &Node, ply: usize) -> bool {
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

/// Writes the moves from the top level down to `levels[k][i]` into `path[..k]`, following the
/// nodes' parents.
fn trace(levels: &[Vec<LevelNode>], k: usize, mut i: usize, path: &mut [Move]) {
    for j in (1..=k).rev() {
        let node = &levels[j][i];
        path[j - 1] = Move::from_index(node.m as usize);
        i = node.parent as usize;
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
            if !skip_after(m1.index(), m2.index()) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The inverses the search carries agree with the cubie level (the naive oracle), and the
    /// inverse bound never exceeds the inverse's exact depth: the table depth found by walking
    /// to the goal when a mod-3 table is in the test tables, else the phase-1 depth.
    #[test]
    fn inverse_bound_is_a_lower_bound_of_the_inverse() {
        let dir = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/test-tables"
        ));
        let tables = Tables::load_or_build(dir, &|_, _, _| {}).expect("tables");
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
                let (flipslice, twist, ud_corners, mut h) = s.t.inverse_first(y);
                let p1 = s.t.inverse_phase1(flipslice, twist);
                if s.t.reads_ud_corners {
                    h = s.t.inverse_giant(flipslice, twist, ud_corners);
                }
                let bound = s.t.inverse_bound(p1, h);
                let depth = match s.t.bound {
                    Some(table) => table.depth(&tables.coords, &Mod3Coords::of(y)),
                    None => s.t.phase1(&Axis {
                        slice_sorted: y.slice_sorted() as u16,
                        flip: y.flip() as u16,
                        twist: y.twist() as u16,
                        ud_corners: 0,
                        depth: 0,
                    }),
                };
                assert!(bound <= depth, "bound {bound} > depth {depth}");
                checked += 1;
                exact += u32::from(bound == depth);
            }
        }
        // the table depth is rarely 3 or more above the phase-1 depth
        assert!(exact * 100 >= checked * 95, "{exact} of {checked} exact");
    }
}
