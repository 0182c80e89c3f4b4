//! Optimal and depth-limited search: IDA* (Korf 1985) over the 18 face turns, with the lower
//! bounds of Kociemba's optimal solvers for Cube Explorer (after Michael Reid, the phase-1 table
//! on three axes; his huge optimal solver's larger table). A depth-limited search answers "no
//! solution within N" when it proves there is none.
//!
//! The lower bound of a position is taken on three axes at once: the phase-1 table (distance to
//! `G1 = <U, D, R2, L2, F2, B2>`) is looked up for the cube itself and for its conjugates by
//! `S_URF3` and `S_URF3^2`, which measure the distance to the same subgroup turned to the RL and
//! FB axes. The bound is the largest of the three, raised to `min + 1` when the position is not
//! solved: the last move of any solution is a turn of one face, which lies in the goal of that
//! face's axis, so the position before it is in some axis goal and every axis goal is at least
//! `min` away (when all three are equal and non-zero this is the "+1" of Michiel de Bondt). When
//! a mod-3 table is present it replaces the phase-1 table, the first built of: the colossal
//! table (goal: every corner oriented with the D-layer corners in the D layer, the slice edges
//! home in order, the other eight edges oriented), the giant table (goal: phase 1's with the
//! D-layer corners in the D layer) and the huge table (slice edges home in order, everything
//! oriented). Each goal contains every turn of its axis's U and D faces and is left alone by
//! those turns multiplied on the left, so the arguments here and below hold for each. The giant
//! and huge goals are inside phase 1's, so the phase-1 depth is a floor of theirs; the colossal
//! goal is not (it leaves the slice edges' orientation out), and its table carries floors of its
//! own instead (the least depth of each row and of each group of 8 entries,
//! [`Rows`](cubefleet_tables::colossal::Rows)), read wherever a floor is needed below.
//!
//! The inverse of a position has the same optimal length, so the bound of the inverse (on its
//! three axes, combined the same way) bounds the position too. The node at path `p` from cube
//! `c` is `c p`; its inverse `p^-1 c^-1` changes by a move multiplied on the left, which
//! coordinate move tables cannot follow, so each node carries the inverse of each axis's
//! position at the cubie level (`m^-1 * y`, 20 lookups per axis) and the coordinates are read
//! from it. The mod-3 tables' 2-bit entries need a neighbour's exact depth, which the inverse
//! does not have; the floor gives a depth `p` the table's is at least (the phase-1 table's exact
//! depth of a larger goal, or the colossal table's floor), and the least number `>= p` with the
//! right residue mod 3 is a lower bound of the table's depth.
//! The inverse is read only for children whose own bound is within one of what is left: it
//! halves the nodes of 16-move searches. It also bars moves: a U or D turn `g` (a move of the
//! axis's goal) multiplied on the left changes none of an axis's coordinates, so when the
//! inverse is `remaining` or more away on an axis, no move that the axis sees as a U or D turn
//! can start a solution (the child's inverse is `g^-1` times the node's, just as far); a third
//! fewer nodes again.
//!
//! The same argument read the other way (nxopt's): when the position itself is `remaining` away
//! on an axis, no solution of that length *ends* with such a move. So each node is expanded from
//! whichever side, the position or its inverse, leaves fewer moves to try: stepping from the
//! inverse `q` by `m` makes `q m`, whose inverse is `m^-1` times the position, so the move joins
//! the end of the solution (inverted) instead of its continuation. The two sides swap roles
//! (the one stepped by the move tables, and the one held at the cubie level); after a swap the
//! stepped side's depths start from the floor-and-residue bound, which is at most the table
//! depth and congruent to it modulo 3, and the mod-3 steps keep both properties (the depths
//! stay lower bounds, short by a multiple of 3 where the start was). About 9 % fewer nodes on
//! 16-18-move positions. A goal move of an axis leaves the inverse's coordinates on that axis as
//! they were, so a child reached by one inherits its parent's bound there instead of reading it.
//! Neither is used while the position's symmetries prune moves (the path must stay one
//! sequence for that).
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
//! A move set ([`OptimalOptions::moves`]) restricts every move loop to its turns: the bit mask
//! of the moves tried at a node, and the prefixes of the subtrees. The bounds stay lower bounds
//! (fewer turns can only make solutions longer), and so does everything derived from them: the
//! "+1" of the bound and the moves barred by either side hold for any solution, whatever turns
//! it uses, and stepping from the inverse side by a turn puts its inverse in the solution, which
//! a set holds too (each face gives all its turns, its half turn, or none). The QTM parity holds
//! for any turns. Symmetry pruning is off under a restricted set: the symmetries of a position
//! need not map the set to itself.
//!
//! Symmetry pruning (see [`super::symmetric`]): when symmetries of the 48 fix the position, a
//! move is expanded only when it is the least of its orbit under the symmetries that fix the
//! position and the moves before it. Each node carries that group; once it is the identity
//! alone (at once for a position without symmetry) nothing more is pruned and the search is
//! the plain one. The superflip, fixed by all 48, has 2 first moves to expand instead of 18.
//! The superflip also commutes with every move and is its own inverse, so in the half-turn
//! metric its solutions are closed under rotation and inversion too: [`CyclicWindows`](super::symmetric::CyclicWindows) prunes
//! prefixes with a run of adjacent moves smaller than the run of the same length at the start.
//!
//! Once an iteration takes 10,000 nodes, the next ones are searched one subtree at a time,
//! below each prefix of three moves (of four once an iteration takes 100,000 nodes,
//! unless the position's symmetries prune moves), the
//! subtrees densest at the depth before first (vcube's ordering): the last iteration stops at
//! its first solution, and the densest subtrees are where solutions are likeliest.
//!
//! Files: `bounds` (the tables' lower bounds on three axes and on the inverse), `ida` (the
//! single-threaded IDA* searcher), `prefixes` (the subtrees and their order), `parallel` (one
//! position on several threads), `many` (every optimal solution, their count, or the first N,
//! on one thread or several). The figures of `cubefleet bench optimal` are the `cubefleet-bench`
//! crate's.

mod bounds;
mod ida;
mod many;
mod parallel;
mod prefixes;

pub use super::metric::Metric;
pub use bounds::OptimalTables;
use cubefleet_proto::question::MoveSet;
pub use ida::OptimalSearcher;
pub use many::solve_many;
pub use parallel::solve_parallel;

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
    /// The turns a solution may use (every turn by default). A restricted set also turns the
    /// symmetry pruning off, as if `no_symmetry` were set: a symmetry maps a turn of the set to
    /// one that may not be in it.
    pub moves: MoveSet,
}

/// Reported after each completed depth: no solution shorter than `lower_bound` exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Every solution shorter than this has been ruled out (in the search's metric).
    pub lower_bound: u32,
    /// Search nodes visited so far (all threads).
    pub nodes: u64,
}
