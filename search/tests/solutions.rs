//! Several solutions (`--all-optimal`, `--count-only`, `--solutions N`) against an oracle of
//! this file's own: a meet-in-the-middle enumeration of every canonical sequence of a given
//! cost that solves the position (canonical: no face twice in a row, of two opposite faces
//! only U before D, R before L, F before B), on a sticker model of the cube built here from
//! the geometry of the 54 stickers (nothing of the tables crate), which also checks every
//! solution the searches return. The lists must be equal, element for element, in the
//! canonical order (cost first, then turn numbers).

use std::collections::HashMap;
use std::sync::LazyLock;

use cubefleet_search::metric::Metric;
use cubefleet_search::{
    solve_parallel, Algorithm, Budget, Count, MoveSet, Outcome, Question, Solver, Status,
};
use cubefleet_tables::{CubieCube, Move, Tables};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    Tables::load_or_build(&cubefleet_testkit::tables_dir(), &|_, _, _| {}).expect("tables build")
});

/// The sticker model: 54 stickers, each a cubie position in {-1, 0, 1}^3 with an outward
/// normal; x points to R, y to U, z to F. A state is the colour (the normal it started at) on
/// each sticker.
struct Stickers {
    /// (position, normal) of each sticker.
    at: Vec<([i8; 3], [i8; 3])>,
    /// `turns[face]`: the sticker each sticker goes to under a clockwise quarter turn of the
    /// face (faces U R F D L B).
    turns: Vec<Vec<usize>>,
}

type State = Vec<u8>;

/// A quarter turn by +90 degrees about the positive `axis`.
fn rotate(v: [i8; 3], axis: usize) -> [i8; 3] {
    let [x, y, z] = v;
    match axis {
        0 => [x, -z, y],
        1 => [z, y, -x],
        _ => [-y, x, z],
    }
}

impl Stickers {
    fn new() -> Stickers {
        let mut at = Vec::new();
        for x in -1..=1i8 {
            for y in -1..=1i8 {
                for z in -1..=1i8 {
                    let p = [x, y, z];
                    for axis in 0..3 {
                        if p[axis] != 0 {
                            let mut n = [0i8; 3];
                            n[axis] = p[axis];
                            at.push((p, n));
                        }
                    }
                }
            }
        }
        assert_eq!(at.len(), 54);
        // U R F D L B as (axis, sign)
        let faces = [(1, 1), (0, 1), (2, 1), (1, -1), (0, -1), (2, -1)];
        let turns = faces
            .iter()
            .map(|&(axis, sign)| {
                at.iter()
                    .map(|&(p, n)| {
                        if p[axis] != sign {
                            return at.iter().position(|&s| s == (p, n)).expect("itself");
                        }
                        // clockwise seen from outside: -90 degrees about the outward normal,
                        // +90 three times about +axis for a positive face, once for a negative
                        let times = if sign > 0 { 3 } else { 1 };
                        let (mut q, mut m) = (p, n);
                        for _ in 0..times {
                            q = rotate(q, axis);
                            m = rotate(m, axis);
                        }
                        at.iter().position(|&s| s == (q, m)).expect("a sticker")
                    })
                    .collect()
            })
            .collect();
        Stickers { at, turns }
    }

    fn solved(&self) -> State {
        self.at
            .iter()
            .map(|&(_, n)| (n[0] + 3 * n[1] + 9 * n[2] + 13) as u8)
            .collect()
    }

    /// The state after turn number `t` (`3 * face + quarter turns - 1`).
    fn turn(&self, s: &State, t: usize) -> State {
        let mut s = s.clone();
        for _ in 0..t % 3 + 1 {
            let mut next = s.clone();
            for (from, &to) in self.turns[t / 3].iter().enumerate() {
                next[to] = s[from];
            }
            s = next;
        }
        s
    }

    fn apply(&self, s: &State, turns: &[usize]) -> State {
        turns.iter().fold(s.clone(), |s, &t| self.turn(&s, t))
    }
}

static MODEL: LazyLock<Stickers> = LazyLock::new(Stickers::new);

/// May turn `m` follow turn `last` in a canonical sequence (None: first)?
fn may_follow(last: Option<usize>, m: usize) -> bool {
    last.is_none_or(|l| {
        let (a, b) = (l / 3, m / 3);
        a != b && a != b + 3
    })
}

fn cost(metric: Metric, t: usize) -> u32 {
    metric.turn_cost((t % 3 + 1) as u8)
}

/// Every canonical sequence of turns of `set` costing exactly `c` or, when `half_over`, `c + 1`
/// with a last turn costing 2 (so the sequence first reaches `c` or more there), with the state
/// it makes from `start` by `step`.
fn sequences(
    set: &[usize],
    metric: Metric,
    c: u32,
    half_over: bool,
    start: &State,
    step: &dyn Fn(&State, usize) -> State,
) -> Vec<(Vec<usize>, State)> {
    #[allow(clippy::too_many_arguments)]
    fn go(
        set: &[usize],
        metric: Metric,
        c: u32,
        half_over: bool,
        seq: &mut Vec<usize>,
        spent: u32,
        s: &State,
        step: &dyn Fn(&State, usize) -> State,
        out: &mut Vec<(Vec<usize>, State)>,
    ) {
        if spent == c {
            out.push((seq.clone(), s.clone()));
            return;
        }
        if spent > c {
            if half_over && spent == c + 1 && seq.last().is_some_and(|&t| cost(metric, t) == 2) {
                out.push((seq.clone(), s.clone()));
            }
            return;
        }
        for &t in set {
            if may_follow(seq.last().copied(), t) {
                seq.push(t);
                let next = step(s, t);
                go(
                    set,
                    metric,
                    c,
                    half_over,
                    seq,
                    spent + cost(metric, t),
                    &next,
                    step,
                    out,
                );
                seq.pop();
            }
        }
    }
    let mut out = Vec::new();
    go(
        set,
        metric,
        c,
        half_over,
        &mut Vec::new(),
        0,
        start,
        step,
        &mut out,
    );
    out
}

/// The oracle: every canonical sequence of turns of `set` costing exactly `d` that solves
/// `start`, in the canonical order. Each is cut where its cost first reaches `a = d / 2`
/// (exactly `a`, or `a + 1` after a half turn in QTM): the front from the position, the back
/// from the solved cube (its inverse: the state the back must meet), joined where the turns
/// meet canonically.
fn oracle(start: &State, set: &[usize], metric: Metric, d: u32) -> Vec<Vec<usize>> {
    let model = &*MODEL;
    let a = d / 2;
    let forward = |s: &State, t: usize| model.turn(s, t);
    // a back sequence Y is met by the state Y^-1 makes from solved; built turn by turn from its
    // first turn, that state is the earlier one turned by t^-1 on the left, which the sticker
    // model does not do: make it from the whole sequence instead
    let mut backs: HashMap<(u32, State), Vec<Vec<usize>>> = HashMap::new();
    for b in [d - a, d.saturating_sub(a + 1)] {
        if b > d - a || (b != d - a && metric == Metric::Htm) {
            continue;
        }
        for (y, _) in sequences(set, metric, b, false, &model.solved(), &forward) {
            let inverse: Vec<usize> = y.iter().rev().map(|&t| 3 * (t / 3) + 2 - t % 3).collect();
            let meet = model.apply(&model.solved(), &inverse);
            backs.entry((b, meet)).or_default().push(y);
        }
    }
    let mut out = Vec::new();
    for (x, s) in sequences(set, metric, a, metric == Metric::Qtm, start, &forward) {
        let spent: u32 = x.iter().map(|&t| cost(metric, t)).sum();
        if spent > d {
            continue;
        }
        if let Some(ys) = backs.get(&(d - spent, s)) {
            for y in ys {
                if y.first().is_none_or(|&f| may_follow(x.last().copied(), f)) {
                    out.push(x.iter().chain(y).copied().collect());
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn turns_of(moves: &[Move]) -> Vec<usize> {
    moves.iter().map(|m| m.index()).collect()
}

/// Checks every solution of `out` on the sticker model (it solves `start`, uses turns of
/// `set`, is canonical) and that they are in the canonical order, distinct; returns them.
fn checked(out: &Outcome, start: &State, set: &[usize], metric: Metric) -> Vec<Vec<usize>> {
    let model = &*MODEL;
    let lists: Vec<Vec<usize>> = out.solutions.iter().map(|s| turns_of(&s.0)).collect();
    for s in &lists {
        assert_eq!(
            model.apply(start, s),
            model.solved(),
            "{s:?} does not solve"
        );
        assert!(s.iter().all(|t| set.contains(t)), "{s:?} outside the set");
        assert!(
            s.windows(2).all(|w| may_follow(Some(w[0]), w[1])),
            "{s:?} is not canonical"
        );
    }
    let key = |s: &Vec<usize>| (s.iter().map(|&t| cost(metric, t)).sum::<u32>(), s.clone());
    assert!(
        lists.windows(2).all(|w| key(&w[0]) < key(&w[1])),
        "not in the canonical order, or repeated"
    );
    assert_eq!(
        out.solution.as_ref().map(|s| turns_of(&s.0)),
        lists.first().cloned()
    );
    lists
}

fn question(metric: Metric, set: MoveSet, count: Count) -> Question {
    Question::new(Algorithm::Optimal, metric, set, None)
        .expect("question")
        .with_count(count)
        .expect("count")
}

/// Random scrambles of 3 to 7 turns (and a few with many optimal solutions), in both metrics
/// and two move sets: every optimal solution the search lists, on one thread and on two, is
/// the oracle's list, their count too, and nothing shorter exists.
#[test]
fn all_optimal_solutions_are_the_brute_force_ones() {
    let mut rng = StdRng::seed_from_u64(7_2026);
    let model = &*MODEL;
    let mut solver = Solver::new(&TABLES);
    let sets = [
        ("", Metric::Htm),
        ("", Metric::Qtm),
        ("U,R,F", Metric::Htm),
        ("U,D,R2,L2,F2,B2", Metric::Htm),
    ];
    let mut many = 0;
    for (k, &(set_text, metric)) in sets.iter().enumerate() {
        let set = if set_text.is_empty() {
            MoveSet::ALL
        } else {
            MoveSet::parse(set_text).expect("set")
        };
        let turns: Vec<usize> = (0..18).filter(|&t| set.contains(t)).collect();
        let mut scrambles: Vec<Vec<usize>> = (0..6)
            .map(|i| {
                (0..3 + (i + k) % 5)
                    .map(|_| turns[rng.random_range(0..turns.len())])
                    .collect()
            })
            .collect();
        // (R2 U2)^3, its own inverse: also solved by (U2 R2)^3 (in HTM: 12 quarter turns
        // are too many for the oracle to be quick)
        if metric == Metric::Htm {
            scrambles.push(vec![4, 1, 4, 1, 4, 1]);
        }
        if set.is_all() && metric == Metric::Htm {
            // R L U D: the pairs commute, one canonical order of each
            scrambles.push(vec![3, 12, 0, 9]);
            // R2 L2 U2 D2 F2 B2, fixed by many symmetries (which the search must not prune
            // here): its three axes in any order
            scrambles.push(vec![4, 13, 1, 10, 7, 16]);
        }
        for scramble in scrambles {
            let start = model.apply(&model.solved(), &scramble);
            let cube = CubieCube::from_moves(
                &scramble
                    .iter()
                    .map(|&t| Move::from_index(t))
                    .collect::<Vec<_>>(),
            );
            let all = question(metric, set, Count::AllOptimal);
            let out = solver.solve(&cube, &all, 0, &Budget::unlimited(), &mut |_| {});
            assert_eq!(out.status, Status::Solved, "{scramble:?}");
            assert!(out.optimal);
            let d = out.lower_bound;
            let got = checked(&out, &start, &turns, metric);
            let want = oracle(&start, &turns, metric, d);
            assert_eq!(got, want, "{set_text} {metric:?} {scramble:?} at {d}");
            let step = if metric == Metric::Qtm { 2 } else { 1 };
            if d >= step {
                assert!(oracle(&start, &turns, metric, d - step).is_empty());
            }
            let par = solve_parallel(&TABLES, &cube, &all, &Budget::unlimited(), 2);
            assert_eq!(par.solutions, out.solutions, "two threads, {scramble:?}");
            let only = question(metric, set, Count::CountOnly);
            let counted = solver.solve(&cube, &only, 0, &Budget::unlimited(), &mut |_| {});
            assert_eq!(counted.solutions.len(), want.len());
            many += usize::from(want.len() > 1);
        }
    }
    assert!(
        many >= 4,
        "only {many} positions had several optimal solutions"
    );
}

/// `--solutions N`: the first N of the canonical order over every length, shortest first:
/// all of the optimal length, then the oracle's of the next lengths, in order.
#[test]
fn n_solutions_come_shortest_first() {
    let model = &*MODEL;
    let mut solver = Solver::new(&TABLES);
    for (scramble, metric, n) in [
        (vec![3usize, 0, 5], Metric::Htm, 40),
        (vec![3, 12, 0], Metric::Htm, 25),
        (vec![0, 3, 6, 9], Metric::Htm, 7),
        (vec![0, 5], Metric::Qtm, 30),
    ] {
        let start = model.apply(&model.solved(), &scramble);
        let cube = CubieCube::from_moves(
            &scramble
                .iter()
                .map(|&t| Move::from_index(t))
                .collect::<Vec<_>>(),
        );
        let turns: Vec<usize> = (0..18).collect();
        let q = question(metric, MoveSet::ALL, Count::Shortest(n));
        let out = solver.solve(&cube, &q, 0, &Budget::unlimited(), &mut |_| {});
        assert_eq!(out.status, Status::Solved);
        let got = checked(&out, &start, &turns, metric);
        let mut want = Vec::new();
        let mut d = out.lower_bound;
        while want.len() < n as usize {
            want.extend(oracle(&start, &turns, metric, d));
            d += 1;
        }
        want.truncate(n as usize);
        assert_eq!(got, want, "{scramble:?} {metric:?}");
        let lengths: std::collections::BTreeSet<u32> = got
            .iter()
            .map(|s| s.iter().map(|&t| cost(metric, t)).sum())
            .collect();
        assert!(lengths.len() >= 2, "{scramble:?}: one length only");
        let par = solve_parallel(&TABLES, &cube, &q, &Budget::unlimited(), 2);
        assert_eq!(par.solutions, out.solutions);
    }
}

/// A depth limit bounds the lengths listed: fewer than N when fewer exist within it, and
/// `none_within` (no solutions) below the optimum; the solved cube has one solution, the
/// empty one.
#[test]
fn depth_limits_and_the_solved_cube() {
    let mut solver = Solver::new(&TABLES);
    let cube = CubieCube::from_moves(&[Move::from_index(3), Move::from_index(0)]);
    let limited = |max_depth, count| {
        Question::new(
            Algorithm::DepthLimited { max_depth },
            Metric::Htm,
            MoveSet::ALL,
            None,
        )
        .expect("q")
        .with_count(count)
        .expect("count")
    };
    let out = solver.solve(
        &cube,
        &limited(3, Count::Shortest(1000)),
        0,
        &Budget::unlimited(),
        &mut |_| {},
    );
    assert_eq!(out.status, Status::Solved);
    let lengths: Vec<usize> = out.solutions.iter().map(|s| s.len()).collect();
    assert_eq!(lengths.first(), Some(&2));
    assert!(lengths.iter().all(|&l| l <= 3) && lengths.len() < 1000);
    let out = solver.solve(
        &cube,
        &limited(1, Count::AllOptimal),
        0,
        &Budget::unlimited(),
        &mut |_| {},
    );
    assert_eq!(out.status, Status::NoneWithin);
    assert!(out.solutions.is_empty() && out.solution.is_none());
    let solved = solver.solve(
        &CubieCube::SOLVED,
        &question(Metric::Htm, MoveSet::ALL, Count::Shortest(5)),
        0,
        &Budget::unlimited(),
        &mut |_| {},
    );
    assert_eq!(solved.solutions.len(), 1);
    assert!(solved.solutions[0].is_empty());
}
