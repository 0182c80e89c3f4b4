//! Optimal and depth-limited searches over a restricted move set (`--moves`) against an
//! independent oracle: a breadth-first search, done here, over the set's turns alone. Every
//! position within a few turns of solved under `<R,U>`, `<R,U,F>` and `<U,D,R2,L2,F2,B2>` gets
//! a solution of exactly its distance, with turns of the set only, checked by applying it.

use std::collections::HashMap;
use std::sync::LazyLock;

use cubefleet_search::metric::{Metric, TurnCost};
use cubefleet_search::{solve_parallel, Algorithm, Budget, MoveSet, Question, Solver, Status};
use cubefleet_tables::{CubieCube, Move, MoveSeq, Tables};

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    Tables::load_or_build(&cubefleet_testkit::tables_dir(), &|_, _, _| {}).expect("tables build")
});

/// The turns of `set`, read from its text by this test (not by `MoveSet`): a face letter is
/// its three turns, `X2` its half turn.
fn turns_of(text: &str) -> Vec<Move> {
    let mut turns = Vec::new();
    for token in text.split(',') {
        let letter = token.chars().next().expect("a face letter");
        let face = cubefleet_tables::Face::from_letter(letter).expect("a face");
        if token.ends_with('2') {
            turns.push(Move::new(face, 2));
        } else {
            turns.extend((1..=3).map(|q| Move::new(face, q)));
        }
    }
    turns
}

/// Every position within `depth` of solved using `turns` only, with its distance in `metric`
/// (a set closed under inverse: the distance from solved is the distance to it). Quarter-turn
/// costs are 1 or 2, so the search goes by cost (a bucket per distance).
fn bfs(turns: &[Move], metric: Metric, depth: u32) -> HashMap<CubieCube, u32> {
    let mut dist = HashMap::from([(CubieCube::SOLVED, 0)]);
    let mut buckets: Vec<Vec<CubieCube>> = vec![vec![CubieCube::SOLVED]];
    for d in 0..depth {
        let here = buckets.get(d as usize).cloned().unwrap_or_default();
        for c in here {
            if dist[&c] != d {
                continue;
            }
            for &m in turns {
                let n = c.apply_move(m);
                let nd = d + metric.cost(m);
                if nd > depth {
                    continue;
                }
                let better = dist.get(&n).is_none_or(|&old| nd < old);
                if better {
                    dist.insert(n, nd);
                    while buckets.len() <= nd as usize {
                        buckets.push(Vec::new());
                    }
                    buckets[nd as usize].push(n);
                }
            }
        }
    }
    dist
}

fn question(algorithm: Algorithm, metric: Metric, set: &str) -> Question {
    Question::new(algorithm, metric, MoveSet::parse(set).expect("set"), None).expect("question")
}

/// Checks that `out` solves `c` in exactly `want` moves of `metric` with turns of `set` only.
fn check_solution(c: &CubieCube, out: &cubefleet_search::Outcome, want: u32, q: &Question) {
    let allowed = turns_of(&q.moves().to_string());
    let sol = out.solution.as_ref().expect("a solution");
    assert_eq!(out.status, Status::Solved, "{sol}");
    assert!(c.apply_moves(&sol.0).is_solved(), "{sol} does not solve");
    assert!(
        sol.0.iter().all(|m| allowed.contains(m)),
        "{sol} uses a turn outside {}",
        q.moves()
    );
    assert_eq!(q.metric().length(&sol.0), want, "{sol}");
}

/// Every position of the set within `depth`, solved optimally with the set: its distance.
/// Returns how many positions there are at each distance.
fn optimal_equals_bfs(set: &str, metric: Metric, depth: u32) -> Vec<usize> {
    let turns = turns_of(set);
    let dist = bfs(&turns, metric, depth);
    let q = question(Algorithm::Optimal, metric, set);
    let mut solver = Solver::new(&TABLES);
    let mut by_length = vec![0usize; depth as usize + 1];
    for (c, &want) in &dist {
        let out = solver.solve(c, &q, 0, &Budget::unlimited(), &mut |_| {});
        check_solution(c, &out, want, &q);
        assert!(out.optimal);
        by_length[want as usize] += 1;
    }
    assert!(by_length.iter().all(|&n| n > 0), "{set}: {by_length:?}");
    by_length
}

#[test]
fn r_u_optimal_lengths_equal_breadth_first_search() {
    // the published <R,U> distance counts (HTM) to 6
    let counts = optimal_equals_bfs("R,U", Metric::Htm, 6);
    assert_eq!(counts, [1, 6, 18, 54, 162, 486, 1457]);
    optimal_equals_bfs("R,U", Metric::Qtm, 6);
}

#[test]
fn r_u_f_optimal_lengths_equal_breadth_first_search() {
    optimal_equals_bfs("R,U,F", Metric::Htm, 4);
}

#[test]
fn g1_optimal_lengths_equal_breadth_first_search() {
    optimal_equals_bfs("U,D,R2,L2,F2,B2", Metric::Htm, 4);
}

/// Depth-limited under `<R,U>`: a position at distance 5 has none within 4 and a solution of 5
/// within 5; the parallel search gives the same lengths.
#[test]
fn depth_limited_and_parallel_searches_keep_to_the_set() {
    let dist = bfs(&turns_of("R,U"), Metric::Htm, 5);
    let mut solver = Solver::new(&TABLES);
    let fives: Vec<&CubieCube> = dist
        .iter()
        .filter(|(_, &d)| d == 5)
        .map(|(c, _)| c)
        .take(40)
        .collect();
    assert!(!fives.is_empty());
    let within = |d| question(Algorithm::DepthLimited { max_depth: d }, Metric::Htm, "R,U");
    for c in fives {
        let out = solver.solve(c, &within(4), 0, &Budget::unlimited(), &mut |_| {});
        assert_eq!(out.status, Status::NoneWithin);
        assert!(out.solution.is_none());
        let out = solver.solve(c, &within(5), 0, &Budget::unlimited(), &mut |_| {});
        check_solution(c, &out, 5, &within(5));
        let q = question(Algorithm::Optimal, Metric::Htm, "R,U");
        let out = solve_parallel(&TABLES, c, &q, &Budget::unlimited(), 2);
        check_solution(c, &out, 5, &q);
    }
}

/// A longer `<R,U>` position (the sexy move twice and a sune: 10 turns) is solved within the
/// set in no more turns than it was made with, where every turn would be shorter.
#[test]
fn a_longer_r_u_position_is_solved_with_r_and_u_only() {
    let seq = MoveSeq::parse("R U R' U' R U R' U' R U R' U R U2 R'").expect("moves");
    let c = CubieCube::from_moves(&seq.0);
    let q = question(Algorithm::Optimal, Metric::Htm, "R,U");
    let out = Solver::new(&TABLES).solve(&c, &q, 0, &Budget::unlimited(), &mut |_| {});
    let sol = out.solution.expect("solution");
    assert!(c.apply_moves(&sol.0).is_solved());
    assert!(sol.0.iter().all(|m| turns_of("R,U").contains(m)), "{sol}");
    assert!(sol.0.len() <= seq.0.len(), "{sol}");
}

/// Positions an invariant puts out of reach are answered `unreachable` at once, by every
/// search; a position of the set is not.
#[test]
fn positions_out_of_reach_are_unreachable() {
    let mut solver = Solver::new(&TABLES);
    for (moves, set) in [("F", "R,U"), ("R", "U,D,R2,L2,F2,B2"), ("U", "U2,R2")] {
        let c = CubieCube::from_moves(&MoveSeq::parse(moves).expect("moves").0);
        for algorithm in [Algorithm::Optimal, Algorithm::DepthLimited { max_depth: 3 }] {
            let q = question(algorithm, Metric::Htm, set);
            let out = solver.solve(&c, &q, 0, &Budget::unlimited(), &mut |_| {});
            assert_eq!(out.status, Status::Unreachable, "{moves} with {set}");
            assert!(out.solution.is_none());
        }
    }
    // the five faces of `-B` reach every position: nothing is out of reach of them
    let c = CubieCube::from_moves(&MoveSeq::parse("R U").expect("moves").0);
    let q = question(Algorithm::Optimal, Metric::Htm, "-B");
    let out = solver.solve(&c, &q, 0, &Budget::unlimited(), &mut |_| {});
    check_solution(&c, &out, 2, &q);
    // a position no invariant of `R,U` catches but a search of 3 cannot solve: none_within
    let c = CubieCube::from_moves(&MoveSeq::parse("R U R' U'").expect("moves").0);
    let q = question(Algorithm::DepthLimited { max_depth: 3 }, Metric::Htm, "R,U");
    let out = solver.solve(&c, &q, 0, &Budget::unlimited(), &mut |_| {});
    assert_eq!(out.status, Status::NoneWithin);
}
