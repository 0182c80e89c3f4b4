//! Benchmarks of the optimal solver (ignored; one core). Run:
//! `cargo test --release -p cubefleet-bench --test optimal_bench -- --ignored --nocapture --test-threads 1`
//! Environment: `BENCH_RANDOM` (number of random states, default 10), `BENCH_HUGE=0|1` (use the
//! huge table when built, default 1), `BENCH_TIMEOUT` (seconds per solve, default 600),
//! `BENCH_SYMMETRY=0|1` (prune by the positions' symmetries, default 1).

use std::path::Path;
use std::time::Duration;

use cubefleet_bench::optimal::{bench_optimal, BenchStats};
use cubefleet_search::optimal::{Metric, OptimalOptions, OptimalTables};
use cubefleet_tables::file::TableKind;
use cubefleet_tables::{parse_position, CubieCube, InputFormat, Move, Tables};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use cubefleet_testkit::TABLES_DIR as DIR;
const RANDOM: &str = include_str!("../../tests/vectors/random-states-1000.txt");

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn report(label: &str, s: &BenchStats) {
    let solved = s.lengths.iter().filter(|l| l.is_some()).count();
    let d = s.seconds_distribution();
    eprintln!(
        "{label}: {} positions ({solved} solved), mean {:.3} s, median {:.3} s, max {:.3} s, {:.2} M nodes/s",
        s.len(),
        d.mean,
        d.median(),
        d.max,
        s.nodes_per_second() / 1e6
    );
}

fn run(label: &str, cubes: &[CubieCube], want: Option<&[usize]>) {
    let dir = Path::new(DIR);
    let tables = Tables::load_or_build(dir, &|_, _, _| {}).expect("tables");
    let huge = if env_num("BENCH_HUGE", 1) == 1 {
        tables
            .load_mod3(dir, TableKind::Huge)
            .expect("huge table file is valid")
    } else {
        None
    };
    let which = if huge.is_some() {
        "huge"
    } else {
        "phase-1 x 3 axes"
    };
    let t = OptimalTables::with_bound(&tables, huge.as_ref());
    let timeout = Duration::from_secs(env_num("BENCH_TIMEOUT", 600));
    let stats = bench_optimal(
        t,
        cubes,
        &OptimalOptions {
            metric: Metric::Htm,
            no_symmetry: env_num("BENCH_SYMMETRY", 1) == 0,
            ..Default::default()
        },
        1,
        Some(timeout),
        &mut |i, o, secs| {
            let len = o.solution.as_ref().map(|s| s.len());
            eprintln!(
                "  #{i}: {:?} length {len:?} (lower bound {}) in {secs:.3} s, {} nodes",
                o.status, o.lower_bound, o.nodes
            );
            if let (Some(w), Some(l)) = (want, len) {
                assert_eq!(l, w[i], "position {i}");
            }
        },
    );
    report(&format!("{label} [{which}]"), &stats);
}

#[test]
#[ignore]
fn bench_random_states() {
    let n = env_num("BENCH_RANDOM", 10) as usize;
    let cubes: Vec<CubieCube> = RANDOM
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .take(n)
        .map(|l| parse_position(l.trim(), InputFormat::Facelets).expect("valid"))
        .collect();
    run("random states", &cubes, None);
}

#[test]
#[ignore]
fn bench_known_16_17() {
    let known = cubefleet_testkit::known_optimal(16..=17);
    let cubes: Vec<CubieCube> = known.iter().map(|k| k.1).collect();
    let lens: Vec<usize> = known.iter().map(|k| k.2 as usize).collect();
    run("known-optimal 16-17", &cubes, Some(&lens));
}

#[test]
#[ignore]
fn bench_scrambles_13_15() {
    let mut rng = StdRng::seed_from_u64(1315);
    let cubes: Vec<CubieCube> = (0..50)
        .map(|_| {
            let len = rng.random_range(13..=15);
            let mut moves: Vec<Move> = Vec::new();
            while moves.len() < len {
                let m = Move::from_index(rng.random_range(0..18));
                if moves.last().is_some_and(|l: &Move| l.face() == m.face()) {
                    continue;
                }
                moves.push(m);
            }
            CubieCube::from_moves(&moves)
        })
        .collect();
    run("scrambles of 13-15 moves", &cubes, None);
}

#[test]
#[ignore]
fn bench_superflip() {
    let c = parse_position(
        "UBULURUFURURFRBRDRFUFLFRFDFDFDLDRDBDLULBLFLDLBUBRBLBDB",
        InputFormat::Facelets,
    )
    .expect("ok");
    run("superflip", &[c], Some(&[20]));
}
