//! Optimal and depth-limited search against independent oracles: a brute-force meet-in-the-middle
//! search (exact distances up to 8 half turns / 10 quarter turns), the proven lengths of
//! `known-optimal.txt`, and the ZOJ 2477 sample nets.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use cubefleet_search::metric::TurnCost;
use cubefleet_search::optimal::{
    solve_parallel, Metric, OptimalOptions, OptimalSearcher, OptimalTables, Progress,
};
use cubefleet_search::symmetric::SymSet;
use cubefleet_search::{Budget, Status};
use cubefleet_tables::{parse_position, CubieCube, InputFormat, Move, MoveSeq, Tables};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    Tables::load_or_build(&cubefleet_testkit::tables_dir(), &|_, _, _| {}).expect("tables build")
});

fn moves_of(metric: Metric) -> Vec<Move> {
    match metric {
        Metric::Htm => Move::ALL.to_vec(),
        Metric::Qtm => Move::ALL
            .into_iter()
            .filter(|m| m.quarter_turns() != 2)
            .collect(),
    }
}

/// Every position within `depth` of solved in `metric`, with its distance.
fn bfs(metric: Metric, depth: u32) -> HashMap<CubieCube, u32> {
    cubefleet_testkit::distances(&moves_of(metric), depth)
}

/// The exact distance of `c` when it is at most twice the table's depth: the minimum over all
/// move sequences `s` of at most `half` moves of `|s| + dist(c * s)`.
fn brute_distance(
    c: &CubieCube,
    table: &HashMap<CubieCube, u32>,
    metric: Metric,
    half: u32,
) -> Option<u32> {
    fn go(
        c: &CubieCube,
        used: u32,
        half: u32,
        moves: &[Move],
        table: &HashMap<CubieCube, u32>,
        best: &mut Option<u32>,
    ) {
        if let Some(&d) = table.get(c) {
            let total = used + d;
            if best.is_none_or(|b| total < b) {
                *best = Some(total);
            }
        }
        if used == half {
            return;
        }
        for &m in moves {
            go(&c.apply_move(m), used + 1, half, moves, table, best);
        }
    }
    let mut best = None;
    go(c, 0, half, &moves_of(metric), table, &mut best);
    best
}

fn solve(c: &CubieCube, opts: OptimalOptions) -> cubefleet_search::Outcome {
    let mut s = OptimalSearcher::new(OptimalTables::new(&TABLES));
    s.solve(c, &opts, &Budget::unlimited(), &mut |_| {})
}

fn random_scramble(rng: &mut StdRng, metric: Metric, len: usize) -> Vec<Move> {
    let moves = moves_of(metric);
    (0..len)
        .map(|_| moves[rng.random_range(0..moves.len())])
        .collect()
}

fn check_against_brute_force(
    metric: Metric,
    table_depth: u32,
    half: u32,
    max_len: usize,
    count: usize,
) {
    let table = bfs(metric, table_depth);
    let mut rng = StdRng::seed_from_u64(2477 + metric as u64);
    let mut lengths_seen = std::collections::BTreeSet::new();
    for i in 0..count {
        let scramble = random_scramble(&mut rng, metric, 1 + i % max_len);
        let c = CubieCube::from_moves(&scramble);
        let want = brute_distance(&c, &table, metric, half).expect("within reach of the oracle");
        let got = solve(
            &c,
            OptimalOptions {
                metric,
                ..Default::default()
            },
        );
        assert_eq!(got.status, Status::Solved);
        assert!(got.optimal);
        let sol = got.solution.expect("solution");
        assert!(
            c.apply_moves(&sol.0).is_solved(),
            "{sol} does not solve {}",
            MoveSeq(scramble.clone())
        );
        assert_eq!(
            metric.length(&sol.0),
            want,
            "scramble {}",
            MoveSeq(scramble.clone())
        );
        assert_eq!(got.lower_bound, want);
        lengths_seen.insert(want);
    }
    // the scrambles reached a spread of lengths (not all cancelling out)
    assert!(lengths_seen.len() >= 5, "{lengths_seen:?}");
}

#[test]
fn htm_lengths_equal_brute_force_up_to_8() {
    check_against_brute_force(Metric::Htm, 4, 4, 8, 40);
}

#[test]
fn qtm_lengths_equal_brute_force_up_to_10() {
    check_against_brute_force(Metric::Qtm, 5, 5, 10, 40);
}

#[test]
fn known_optimal_up_to_15() {
    let mut n = 0;
    for (facelets, c, len) in cubefleet_testkit::known_optimal(0..=15) {
        let got = solve(&c, OptimalOptions::default());
        assert_eq!(got.status, Status::Solved, "{facelets}");
        let sol = got.solution.expect("solution");
        assert!(c.apply_moves(&sol.0).is_solved());
        assert_eq!(sol.len() as u32, len, "{facelets}: {sol}");
        n += 1;
    }
    assert!(n >= 10, "only {n} positions up to 15 moves");
}

#[test]
fn resume_from_a_lower_bound_finds_the_same_length() {
    // 12 moves optimal (known-optimal.txt)
    let c = parse_position("L B' D2 R2 L2 B' U2 D2 R L' U F2", InputFormat::Moves).expect("ok");
    let mut reports: Vec<Progress> = Vec::new();
    let mut s = OptimalSearcher::new(OptimalTables::new(&TABLES));
    let fresh = s.solve(
        &c,
        &OptimalOptions::default(),
        &Budget::unlimited(),
        &mut |p| reports.push(p),
    );
    assert_eq!(fresh.lower_bound, 12);
    // progress reports rise one by one up to the answer, nodes growing
    assert!(!reports.is_empty());
    for w in reports.windows(2) {
        assert_eq!(w[1].lower_bound, w[0].lower_bound + 1);
        assert!(w[1].nodes >= w[0].nodes);
    }
    assert_eq!(reports.last().map(|p| p.lower_bound), Some(12));
    let resumed = s.solve(
        &c,
        &OptimalOptions {
            start_lower_bound: 12,
            ..Default::default()
        },
        &Budget::unlimited(),
        &mut |_| {},
    );
    assert_eq!(resumed.status, Status::Solved);
    assert!(resumed.optimal);
    let sol = resumed.solution.expect("solution");
    assert_eq!(sol.len(), 12);
    assert!(c.apply_moves(&sol.0).is_solved());
    assert!(resumed.nodes < fresh.nodes, "resume skipped nothing");
}

#[test]
fn none_within_when_deeper() {
    // 10 moves optimal (known-optimal.txt)
    let c = parse_position("R U2 R' U' R U2 L' U R' U' L", InputFormat::Moves).expect("ok");
    for metric in [Metric::Htm, Metric::Qtm] {
        let got = solve(
            &c,
            OptimalOptions {
                metric,
                max_depth: Some(9),
                ..Default::default()
            },
        );
        assert_eq!(got.status, Status::NoneWithin, "{metric:?}");
        assert!(got.solution.is_none());
        assert!(got.lower_bound >= 10);
    }
    let got = solve(
        &c,
        OptimalOptions {
            max_depth: Some(10),
            ..Default::default()
        },
    );
    assert_eq!(got.status, Status::Solved);
    assert_eq!(got.solution.map(|s| s.len()), Some(10));
}

const ZOJ_SAMPLES: [&str; 2] = [
    "w w w\nw w w\nw w w\nr r r g g g b b b o o o\nr r r g g g b b b o o o\nr r r g g g b b b o o o\ny y y\ny y y\ny y y\n",
    "w w w\nw w w\nb b b\nr r w g g g y b b o o o\nr r w g g g y b b o o o\nr r w g g g y b b o o o\nr r r\ny y y\ny y y\n",
];

#[test]
fn zoj_2477_samples() {
    let opts = OptimalOptions {
        metric: Metric::Qtm,
        max_depth: Some(5),
        ..Default::default()
    };
    let want = [0usize, 1];
    for (net, want) in ZOJ_SAMPLES.iter().zip(want) {
        let c = parse_position(net, InputFormat::Net).expect("valid net");
        let got = solve(&c, opts);
        assert_eq!(got.status, Status::Solved);
        let sol = got.solution.expect("solution");
        assert_eq!(sol.len(), want);
        assert_eq!(Metric::Qtm.length(&sol.0) as usize, want);
        assert!(c.apply_moves(&sol.0).is_solved());
    }
    // a position 6 quarter turns away: "-1" in the problem's terms
    let c = CubieCube::from_moves(&MoveSeq::parse("R U F D L B").expect("ok").0);
    let got = solve(&c, opts);
    assert_eq!(got.status, Status::NoneWithin);
    assert!(got.lower_bound > 5);
}

#[test]
fn parallel_finds_the_same_lengths() {
    let mut rng = StdRng::seed_from_u64(7);
    for (metric, len) in [
        (Metric::Htm, 11),
        (Metric::Qtm, 9),
        (Metric::Htm, 1),
        (Metric::Htm, 2),
    ] {
        let c = CubieCube::from_moves(&random_scramble(&mut rng, metric, len));
        let opts = OptimalOptions {
            metric,
            ..Default::default()
        };
        let serial = solve(&c, opts);
        let mut reports = 0;
        let par = solve_parallel(
            OptimalTables::new(&TABLES),
            &c,
            &opts,
            &Budget::unlimited(),
            3,
            &mut |_| reports += 1,
        );
        assert_eq!(par.status, Status::Solved);
        assert!(par.optimal);
        let sol = par.solution.expect("solution");
        assert!(c.apply_moves(&sol.0).is_solved());
        assert_eq!(metric.length(&sol.0), serial.lower_bound);
        assert_eq!(par.lower_bound, serial.lower_bound);
    }
}

#[test]
fn cancellation_and_deadline_stop_a_long_search() {
    let superflip = parse_position(
        "UBULURUFURURFRBRDRFUFLFRFDFDFDLDRDBDLULBLFLDLBUBRBLBDB",
        InputFormat::Facelets,
    )
    .expect("ok");
    let flag = Arc::new(AtomicBool::new(false));
    let budget = Budget {
        deadline: None,
        cancel: Some(flag.clone()),
    };
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let start = Instant::now();
    let mut s = OptimalSearcher::new(OptimalTables::new(&TABLES));
    let got = s.solve(&superflip, &OptimalOptions::default(), &budget, &mut |_| {});
    setter.join().expect("setter");
    assert_eq!(got.status, Status::Cancelled);
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(got.solution.is_none() && !got.optimal);
    assert!(got.lower_bound >= 10, "lower bound {}", got.lower_bound);

    let budget = Budget {
        deadline: Some(Instant::now() + Duration::from_millis(300)),
        cancel: None,
    };
    let got = solve_parallel(
        OptimalTables::new(&TABLES),
        &superflip,
        &OptimalOptions::default(),
        &budget,
        2,
        &mut |_| {},
    );
    assert_eq!(got.status, Status::Timeout);
    assert!(got.lower_bound >= 10);
}

/// The superflip is 20 moves; too slow for CI with the phase-1 table alone.
#[test]
#[ignore]
fn superflip_is_20() {
    let c = parse_position(
        "UBULURUFURURFRBRDRFUFLFRFDFDFDLDRDBDLULBLFLDLBUBRBLBDB",
        InputFormat::Facelets,
    )
    .expect("ok");
    let got = solve_parallel(
        OptimalTables::new(&TABLES),
        &c,
        &OptimalOptions::default(),
        &Budget::unlimited(),
        2,
        &mut |p| {
            eprintln!(
                "no solution shorter than {} ({} nodes)",
                p.lower_bound, p.nodes
            )
        },
    );
    assert_eq!(got.solution.map(|s| s.len()), Some(20));
}

/// Pattern positions with non-trivial symmetry groups, given by a scramble: the symmetric
/// search must find the same optimal lengths as the plain one, with fewer nodes.
#[test]
fn symmetry_pruning_keeps_optimal_lengths() {
    let patterns = [
        "U2 D2 F2 B2 L2 R2",   // checkerboard, 48 symmetries, 6 HTM / 12 QTM
        "U D' R L' F B' U D'", // six spots
        "R2 L2 U2 D2",
        "U2 R2 U2 R2 U2 R2",
        "U D'",
        "R L' U2 R' L U2",
        "U D F2 B2 U' D'",
        "F2 B2 U D' R2 L2 U D'",
    ];
    let superflip = CubieCube::from_moves(
        &MoveSeq::parse("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2")
            .expect("ok")
            .0,
    );
    assert_eq!(SymSet::of_position(&superflip).len(), 48);
    let checkerboard = CubieCube::from_moves(&MoveSeq::parse(patterns[0]).expect("ok").0);
    assert_eq!(SymSet::of_position(&checkerboard).len(), 48);
    for metric in [Metric::Htm, Metric::Qtm] {
        for text in patterns {
            let c = CubieCube::from_moves(&MoveSeq::parse(text).expect("ok").0);
            let group = SymSet::of_position(&c);
            assert!(group.len() > 1, "{text}: no symmetry");
            let opts = OptimalOptions {
                metric,
                ..Default::default()
            };
            let plain = solve(
                &c,
                OptimalOptions {
                    no_symmetry: true,
                    ..opts
                },
            );
            let sym = solve(&c, opts);
            let par = solve_parallel(
                OptimalTables::new(&TABLES),
                &c,
                &opts,
                &Budget::unlimited(),
                2,
                &mut |_| {},
            );
            for got in [&plain, &sym, &par] {
                assert_eq!(got.status, Status::Solved, "{text} {metric:?}");
                assert!(got.optimal);
                let sol = got.solution.as_ref().expect("solution");
                assert!(c.apply_moves(&sol.0).is_solved(), "{text} {metric:?}");
                assert_eq!(
                    metric.length(&sol.0),
                    plain.lower_bound,
                    "{text} {metric:?}"
                );
                assert_eq!(got.lower_bound, plain.lower_bound);
            }
            assert!(
                sym.nodes <= plain.nodes,
                "{text} {metric:?}: {} > {} nodes",
                sym.nodes,
                plain.nodes
            );
        }
    }
    let c = checkerboard;
    let sol = solve(&c, OptimalOptions::default())
        .solution
        .expect("solution");
    assert_eq!(sol.len(), 6);
}

#[test]
fn positions_without_symmetry_search_as_before() {
    let mut rng = StdRng::seed_from_u64(48);
    for len in [5, 8, 10] {
        let c = CubieCube::from_moves(&random_scramble(&mut rng, Metric::Htm, len));
        assert!(SymSet::of_position(&c).is_trivial());
        let plain = solve(
            &c,
            OptimalOptions {
                no_symmetry: true,
                ..Default::default()
            },
        );
        let sym = solve(&c, OptimalOptions::default());
        assert_eq!(sym, plain);
    }
}
