//! Solving to a target (`--to`): for random positions P and targets B, every mode's solution
//! applied to P gives exactly B; the optimal and depth-limited lengths are the distances a
//! breadth-first search done here gives (B = P · X for a short X, so the distance from P to B
//! is X's); the solved cube as a target is no target.

use std::sync::LazyLock;

use cubefleet_search::lines::{solve_line, target_facelets, Request};
use cubefleet_search::metric::Metric;
use cubefleet_search::{solve_parallel, Algorithm, Budget, MoveSet, Question, Solver, Status};
use cubefleet_tables::index::{index_of, state_at};
use cubefleet_tables::{CubieCube, FaceletCube, Move, MoveSeq, Tables};
use rand::{Rng, SeedableRng};

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    Tables::load_or_build(&cubefleet_testkit::tables_dir(), &|_, _, _| {}).expect("tables build")
});

/// The protocol's count of states (which the proto crate cannot take from the tables) is the
/// tables' own.
#[test]
fn the_protocols_count_of_states_is_the_tables() {
    assert_eq!(
        cubefleet_proto::question::N_STATES,
        cubefleet_tables::index::N_STATES
    );
}

fn all_turns() -> Vec<Move> {
    (0..18).map(Move::from_index).collect()
}

fn to(q: Question, target: &CubieCube) -> Question {
    q.with_target(index_of(target)).expect("a state")
}

/// Checks that `out` takes `p` to `b`, and returns its length in `metric`.
fn reaches(p: &CubieCube, b: &CubieCube, out: &cubefleet_search::Outcome, metric: Metric) -> u32 {
    let sol = out.solution.as_ref().expect("a solution");
    assert_eq!(p.apply_moves(&sol.0), *b, "{sol} does not reach the target");
    metric.length_of(sol.0.iter().map(|m| m.quarter_turns()))
}

#[test]
fn two_phase_reaches_random_targets_from_random_positions() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(20261129);
    let mut solver = Solver::new(&TABLES);
    for _ in 0..20 {
        let (p, b) = (CubieCube::random(&mut rng), CubieCube::random(&mut rng));
        let q = to(Question::two_phase(20), &b);
        let out = solver.solve(&p, &q, 0, &Budget::unlimited(), &mut |_| {});
        assert_eq!(out.status, Status::Solved);
        assert!(reaches(&p, &b, &out, Metric::Htm) <= 20);
        let out = solve_parallel(&TABLES, &p, &q, &Budget::unlimited(), 2);
        assert!(reaches(&p, &b, &out, Metric::Htm) <= 20);
    }
}

/// B = P · X for X within 4 turns: the optimal (HTM and QTM), depth-limited and restricted
/// searches find exactly X's distance, which the breadth-first search gives.
#[test]
fn exact_searches_reach_targets_at_their_distance() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let htm = cubefleet_testkit::distances(&all_turns(), 4);
    let near: Vec<(CubieCube, u32)> = htm.iter().map(|(c, &d)| (*c, d)).collect();
    let ru_turns: Vec<Move> = all_turns()
        .into_iter()
        .filter(|m| matches!(m.index() / 3, 0 | 1))
        .collect();
    let ru = cubefleet_testkit::distances(&ru_turns, 5);
    let ru_near: Vec<(CubieCube, u32)> = ru.iter().map(|(c, &d)| (*c, d)).collect();
    let mut solver = Solver::new(&TABLES);
    let optimal =
        Question::new(Algorithm::Optimal, Metric::Htm, MoveSet::ALL, None).expect("question");
    let set = MoveSet::parse("R,U").expect("set");
    let optimal_ru = Question::new(Algorithm::Optimal, Metric::Htm, set, None).expect("question");
    for round in 0..12 {
        let p = CubieCube::random(&mut rng);
        let (x, d) = near[rng.random_range(0..near.len())];
        let b = p.multiply(&x);
        let out = solver.solve(&p, &to(optimal, &b), 0, &Budget::unlimited(), &mut |_| {});
        assert_eq!(reaches(&p, &b, &out, Metric::Htm), d, "round {round}");
        assert!(out.optimal);
        // depth-limited: found at the distance, none within one less
        let within = |max_depth| {
            let q = Question::new(
                Algorithm::DepthLimited { max_depth },
                Metric::Htm,
                MoveSet::ALL,
                None,
            )
            .expect("question");
            to(q, &b)
        };
        let out = solver_solve(&mut solver, &p, &within(d));
        assert_eq!(reaches(&p, &b, &out, Metric::Htm), d);
        if d > 0 {
            let out = solver_solve(&mut solver, &p, &within(d - 1));
            assert_eq!(out.status, Status::NoneWithin);
        }
        // QTM: at least the HTM distance, at most twice it
        let qtm =
            Question::new(Algorithm::Optimal, Metric::Qtm, MoveSet::ALL, None).expect("question");
        let out = solver_solve(&mut solver, &p, &to(qtm, &b));
        let q_len = reaches(&p, &b, &out, Metric::Qtm);
        assert!((d..=2 * d).contains(&q_len), "{q_len} against {d}");
        // <R,U>: the set's distance, turns of the set only
        let (y, e) = ru_near[rng.random_range(0..ru_near.len())];
        let b = p.multiply(&y);
        let out = solver_solve(&mut solver, &p, &to(optimal_ru, &b));
        assert_eq!(reaches(&p, &b, &out, Metric::Htm), e, "round {round}");
        let sol = out.solution.expect("a solution");
        assert!(sol.0.iter().all(|m| m.index() / 3 <= 1), "{sol}");
    }
    // a target the set cannot reach from the position, by an invariant: unreachable
    let p = CubieCube::random(&mut rng);
    let b = p.apply_moves(&MoveSeq::parse("F").expect("parses").0);
    let out = solver_solve(&mut solver, &p, &to(optimal_ru, &b));
    assert_eq!(out.status, Status::Unreachable);
}

fn solver_solve(solver: &mut Solver<'_>, p: &CubieCube, q: &Question) -> cubefleet_search::Outcome {
    solver.solve(p, q, 0, &Budget::unlimited(), &mut |_| {})
}

/// The solved cube as a target is the question without one; a line's row names its target
/// and its solution reaches it.
#[test]
fn the_solved_cube_as_target_is_no_target_and_rows_name_theirs() {
    let mut solver = Solver::new(&TABLES);
    let q = Question::two_phase(20);
    let solved = q.with_target(0).expect("solved");
    assert_eq!(solved, q);
    let p = CubieCube::from_moves(&MoveSeq::parse("R U F' D2 L B'").expect("parses").0);
    let a = solver_solve(&mut solver, &p, &q);
    let b = solver_solve(&mut solver, &p, &solved);
    assert_eq!((a.solution, a.status), (b.solution, b.status));
    assert_eq!(target_facelets(&solved), None);

    let target = CubieCube::from_moves(&MoveSeq::parse("R U").expect("parses").0);
    let req = Request {
        mode: to(Question::two_phase(20), &target),
        ..Request::default()
    };
    let row = solve_line(&mut solver, &TABLES, &req, 1, 0, "R U R' U'");
    let sol = MoveSeq::parse(&row.solution).expect("parses");
    let from = CubieCube::from_moves(&MoveSeq::parse("R U R' U'").expect("parses").0);
    assert_eq!(from.apply_moves(&sol.0), target);
    let facelets = FaceletCube::from_cubie(&target).to_string();
    assert_eq!(row.to.as_deref(), Some(facelets.as_str()));
    let json = serde_json::to_string(&row).expect("serialises");
    assert!(json.contains(&format!(r#""to":"{facelets}""#)), "{json}");
    let plain = solve_line(&mut solver, &TABLES, &Request::default(), 1, 0, "R U R' U'");
    assert!(plain.to.is_none());
    assert!(!serde_json::to_string(&plain)
        .expect("json")
        .contains("\"to\""));
    // the target itself: no turn
    let row = solve_line(&mut solver, &TABLES, &req, 1, 0, "R U");
    assert_eq!((row.solution.as_str(), row.length), ("", Some(0)));
    assert!(state_at(index_of(&target)).is_ok_and(|c| c == target));
}
