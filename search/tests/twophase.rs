//! Two-phase solver against the real tables (built once into `target/test-tables`).

use std::path::PathBuf;
use std::sync::LazyLock;

use cubefleet_search::twophase::{TwoPhaseOptions, TwoPhaseSearcher};
use cubefleet_search::{Budget, Status};
use cubefleet_tables::{parse_position, CubieCube, InputFormat, MoveSeq, Tables};

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let dir = cubefleet_testkit::tables_dir();
    Tables::load_or_build(&dir, &|_, _, _| {}).expect("tables build and load")
});

fn vectors(name: &str) -> String {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors")).join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const SUPERFLIP: &str = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2";

#[test]
fn superflip_in_exactly_20() {
    let cube = parse_position(SUPERFLIP, InputFormat::Auto).expect("valid");
    let mut s = TwoPhaseSearcher::new(&TABLES);
    let out = s.solve(
        &cube,
        &TwoPhaseOptions { max_length: 20 },
        &Budget::unlimited(),
    );
    assert_eq!(out.status, Status::Solved);
    let sol = out.solution.expect("solution");
    assert_eq!(sol.len(), 20);
    assert!(cube.apply_moves(&sol.0).is_solved());
}

#[test]
fn solved_cube_gives_empty_solution() {
    let mut s = TwoPhaseSearcher::new(&TABLES);
    let out = s.solve(
        &CubieCube::SOLVED,
        &TwoPhaseOptions::default(),
        &Budget::unlimited(),
    );
    assert_eq!(out.solution, Some(MoveSeq::default()));
    assert_eq!(out.status, Status::Solved);
}

#[test]
fn short_scrambles_reach_a_short_target() {
    let mut s = TwoPhaseSearcher::new(&TABLES);
    for scramble in [
        "R",
        "U2",
        "R U R' U'",
        "F2 B2 L2 R2 U2 D2",
        "R U F D L B",
        "R' F2 U L D' B R2 F'",
        // beyond the optimal pre-search of short positions: two-phase alone
        "R' F2 U L D' B R2 F' U2 L",
        "D2 F' L U' R B2 D' F R2 U' B",
    ] {
        let cube = parse_position(scramble, InputFormat::Moves).expect("valid");
        let n = MoveSeq::parse(scramble).expect("ok").len();
        // the target is the scramble's length: phase-1 solutions must grow until the total fits
        let out = s.solve(
            &cube,
            &TwoPhaseOptions { max_length: n },
            &Budget::unlimited(),
        );
        assert_eq!(out.status, Status::Solved, "{scramble}");
        let sol = out.solution.expect("solved");
        assert!(sol.len() <= n, "{scramble}: {sol}");
        assert!(cube.apply_moves(&sol.0).is_solved());
    }
}

/// At the default target, a position a few moves from solved gets a solution no longer than
/// the moves that made it (a two-phase search alone took 8 moves for `R U`), with one thread
/// and with several.
#[test]
fn short_positions_get_short_solutions_at_the_default_target() {
    use cubefleet_search::twophase::{solve_parallel, SHORT};
    let mut s = TwoPhaseSearcher::new(&TABLES);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let faces = ["U", "R", "F", "D", "L", "B"];
    let turns = ["", "2", "'"];
    for k in 1..=SHORT as usize {
        for _ in 0..6 {
            let scramble: Vec<String> = (0..k)
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    format!(
                        "{}{}",
                        faces[rng as usize % 6],
                        turns[(rng >> 8) as usize % 3]
                    )
                })
                .collect();
            let scramble = scramble.join(" ");
            let cube = parse_position(&scramble, InputFormat::Moves).expect("valid");
            let n = MoveSeq::parse(&scramble).expect("ok").len();
            for out in [
                s.solve(&cube, &TwoPhaseOptions::default(), &Budget::unlimited()),
                solve_parallel(
                    &TABLES,
                    &cube,
                    &TwoPhaseOptions::default(),
                    &Budget::unlimited(),
                    2,
                ),
            ] {
                assert_eq!(out.status, Status::Solved, "{scramble}");
                let sol = out.solution.expect("solved");
                assert!(sol.len() <= n, "{scramble}: {sol}");
                assert!(cube.apply_moves(&sol.0).is_solved(), "{scramble}: {sol}");
            }
        }
    }
}

#[test]
fn timeout_returns_best_so_far() {
    let cube = parse_position(SUPERFLIP, InputFormat::Auto).expect("valid");
    let mut s = TwoPhaseSearcher::new(&TABLES);
    // 19 moves are impossible for the superflip: the search runs until the deadline
    let budget = Budget {
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_millis(300)),
        cancel: None,
    };
    let out = s.solve(&cube, &TwoPhaseOptions { max_length: 19 }, &budget);
    assert_eq!(out.status, Status::Timeout);
    let sol = out.solution.expect("a best-so-far solution");
    assert!(sol.len() >= 20);
    assert!(cube.apply_moves(&sol.0).is_solved());
}

#[test]
fn parallel_directions_reach_the_same_targets() {
    use cubefleet_search::twophase::solve_parallel;
    let superflip = parse_position(SUPERFLIP, InputFormat::Auto).expect("valid");
    for threads in [2, 3, 6, 9] {
        let out = solve_parallel(
            &TABLES,
            &superflip,
            &TwoPhaseOptions { max_length: 20 },
            &Budget::unlimited(),
            threads,
        );
        assert_eq!(out.status, Status::Solved, "{threads} threads");
        let sol = out.solution.expect("solution");
        assert_eq!(sol.len(), 20);
        assert!(superflip.apply_moves(&sol.0).is_solved());
    }
    let solved = solve_parallel(
        &TABLES,
        &CubieCube::SOLVED,
        &TwoPhaseOptions::default(),
        &Budget::unlimited(),
        2,
    );
    assert_eq!(solved.solution, Some(MoveSeq::default()));
    // short scrambles at their own length: the threads must keep deepening until one fits
    for scramble in ["R U R' U'", "R U F D L B", "R' F2 U L D' B R2 F'"] {
        let cube = parse_position(scramble, InputFormat::Moves).expect("valid");
        let n = MoveSeq::parse(scramble).expect("ok").len();
        let out = solve_parallel(
            &TABLES,
            &cube,
            &TwoPhaseOptions { max_length: n },
            &Budget::unlimited(),
            2,
        );
        let sol = out.solution.expect("solved");
        assert!(sol.len() <= n, "{scramble}: {sol}");
        assert!(cube.apply_moves(&sol.0).is_solved());
    }
    for line in vectors("random-states-1000.txt").lines().take(20) {
        let cube = parse_position(line, InputFormat::Auto).expect("valid vector");
        let out = solve_parallel(
            &TABLES,
            &cube,
            &TwoPhaseOptions { max_length: 20 },
            &Budget::unlimited(),
            2,
        );
        let sol = out.solution.expect("solved");
        assert!(sol.len() <= 20, "{line}: {} moves", sol.len());
        assert!(cube.apply_moves(&sol.0).is_solved(), "{line}");
    }
    // 19 is impossible for the superflip: every thread runs to the deadline, the best is kept
    let budget = Budget {
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_millis(300)),
        cancel: None,
    };
    let out = solve_parallel(
        &TABLES,
        &superflip,
        &TwoPhaseOptions { max_length: 19 },
        &budget,
        2,
    );
    assert_eq!(out.status, Status::Timeout);
    assert!(out.solution.expect("best so far").len() >= 20);
}

#[test]
fn a_target_out_of_reach_with_time_to_spare_is_over_target_not_timeout() {
    use cubefleet_search::twophase::solve_parallel;
    // ten moves from solved (more than the short search's 8), asked for at most 5
    let scramble = "R U F D L B R' U' F' D'";
    let cube = parse_position(scramble, InputFormat::Moves).expect("valid");
    let budget = Budget {
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(120)),
        cancel: None,
    };
    let opts = TwoPhaseOptions { max_length: 5 };
    let one = TwoPhaseSearcher::new(&TABLES).solve(&cube, &opts, &budget);
    let two = solve_parallel(&TABLES, &cube, &opts, &budget, 2);
    for out in [one, two] {
        assert_eq!(out.status, Status::OverTarget, "{out:?}");
        assert_eq!(out.status.as_str(), "over_target");
        let sol = out.solution.expect("the best solution found");
        assert!(sol.len() > 5 && sol.len() <= 10, "{sol}");
        assert!(cube.apply_moves(&sol.0).is_solved());
    }
    // a short position whose optimum is above the target: over target too
    let short = parse_position("R U F D L B", InputFormat::Moves).expect("valid");
    let out =
        TwoPhaseSearcher::new(&TABLES).solve(&short, &TwoPhaseOptions { max_length: 3 }, &budget);
    assert_eq!(out.status, Status::OverTarget);
    assert!(std::time::Instant::now() < budget.deadline.expect("set"));
}
