//! The huge and giant tables: their builds (too slow for CI, `--ignored`), and the optimal
//! solver with each of them finding the proven lengths. Run:
//! `cargo test --release -p cubefleet-search --test optimal_huge -- --ignored --nocapture --test-threads 1`

use std::path::Path;
use std::time::Instant;

use cubefleet_search::optimal::{OptimalOptions, OptimalSearcher, OptimalTables};
use cubefleet_search::Budget;
use cubefleet_tables::file::TableKind;
use cubefleet_tables::huge::{Mod3Coords, HUGE_DISTRIBUTION, N_HUGE};
use cubefleet_tables::{CubieCube, Tables};

use cubefleet_testkit::TABLES_DIR as DIR;

fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// Builds the table of `kind` into the test tables (if missing), with progress and timing.
fn build(kind: TableKind) {
    let dir = Path::new(DIR);
    let start = Instant::now();
    let last = std::sync::Mutex::new(Instant::now());
    let built = Tables::build(dir, &[kind], false, &|name, filled, total| {
        let mut l = last.lock().unwrap_or_else(|e| e.into_inner());
        eprintln!(
            "{name}: {filled}/{total} ({:.1}%) after {:.1} s (+{:.1} s)",
            100.0 * filled as f64 / total as f64,
            start.elapsed().as_secs_f64(),
            l.elapsed().as_secs_f64()
        );
        *l = Instant::now();
    })
    .expect("build");
    eprintln!(
        "built {built:?} in {:.1} s, peak RSS {:?} MB",
        start.elapsed().as_secs_f64(),
        peak_rss_mb()
    );
}

/// Builds the huge table (if missing) and checks it against the published distribution (the
/// build itself refuses to write a table whose distribution differs).
#[test]
#[ignore]
fn build_huge_table() {
    build(TableKind::Huge);
    let tables = Tables::load_or_build(Path::new(DIR), &|_, _, _| {}).expect("tables");
    let huge = tables
        .load_mod3(Path::new(DIR), TableKind::Huge)
        .expect("loads")
        .expect("present");
    // the depth of every entry class: recount from the file
    let mut counts = [0u64; 3];
    for i in (0..N_HUGE).step_by(997) {
        counts[huge.mod3(i) as usize] += 1;
    }
    let mut want = [0u64; 3];
    for (d, n) in HUGE_DISTRIBUTION.iter().enumerate() {
        want[d % 3] += n;
    }
    // a sample of the file has the published share of each residue (to within 1%)
    let sampled: u64 = counts.iter().sum();
    for r in 0..3 {
        let share = counts[r] as f64 / sampled as f64;
        let expected = want[r] as f64 / N_HUGE as f64;
        assert!(
            (share - expected).abs() < 0.01,
            "residue {r}: {share} vs {expected}"
        );
    }
}

/// Builds the giant table (if missing). It has no published distribution; the tests below
/// check it against proven lengths and walks to its goal.
#[test]
#[ignore]
fn build_giant_table() {
    build(TableKind::Giant);
}

/// Builds the colossal table (if missing; 8 GB of memory, about 15 minutes on 2 cores).
#[test]
#[ignore]
fn build_colossal_table() {
    build(TableKind::Colossal);
}

/// With the huge table the solver finds the proven lengths of the known positions up to 17
/// moves.
#[test]
#[ignore]
fn huge_finds_the_known_lengths() {
    finds_the_known_lengths(TableKind::Huge, 17);
}

/// With the giant table the solver finds the proven lengths of the known positions up to 17
/// moves; the table's depth of each is at most its optimal length.
#[test]
#[ignore]
fn giant_finds_the_known_lengths() {
    finds_the_known_lengths(TableKind::Giant, 17);
}

/// With the colossal table the solver finds the proven lengths of the known positions up to 17
/// moves; the table's depth of each is at most its optimal length.
#[test]
#[ignore]
fn colossal_finds_the_known_lengths() {
    finds_the_known_lengths(TableKind::Colossal, 17);
}

fn finds_the_known_lengths(kind: TableKind, max: u32) {
    let dir = Path::new(DIR);
    let tables = Tables::load_or_build(dir, &|_, _, _| {}).expect("tables");
    let table = tables
        .load_mod3(dir, kind)
        .expect("loads")
        .expect("build it first");
    let mut with = OptimalSearcher::new(OptimalTables::with_bound(&tables, Some(&table)));
    let mut n = 0;
    for (facelets, c, len) in cubefleet_testkit::known_optimal(0..=max) {
        let depth = table.depth(&tables.coords, &Mod3Coords::of(&c));
        assert!(depth <= len, "{facelets}: table depth {depth} > {len}");
        let start = Instant::now();
        let got = with.solve(
            &c,
            &OptimalOptions::default(),
            &Budget::unlimited(),
            &mut |_| {},
        );
        let sol = got.solution.expect("solution");
        assert!(c.apply_moves(&sol.0).is_solved());
        assert_eq!(sol.len() as u32, len, "{facelets}");
        eprintln!(
            "{len} moves in {:.3} s, {} nodes",
            start.elapsed().as_secs_f64(),
            got.nodes
        );
        n += 1;
    }
    assert!(n > 50);
}

/// Mean depth, in each mod-3 table in the test tables, of 1000 uniformly random states, next to
/// phase 1's: how much stronger a bound each gives (a move more cuts an IDA* search about
/// 13-fold).
#[test]
#[ignore]
fn mean_depths_of_random_states() {
    let dir = Path::new(DIR);
    let tables = Tables::load_or_build(dir, &|_, _, _| {}).expect("tables");
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
    let states: Vec<CubieCube> = (0..1000).map(|_| CubieCube::random(&mut rng)).collect();
    let phase1: f64 = states
        .iter()
        .map(|c| {
            let (i, _) = tables
                .coords
                .phase1_index(c.slice() * 2048 + c.flip(), c.twist());
            tables.phase1.payload()[i] as f64
        })
        .sum::<f64>()
        / states.len() as f64;
    eprintln!("phase1: mean depth {phase1:.3}");
    for kind in [TableKind::Huge, TableKind::Giant, TableKind::Colossal] {
        let Some(table) = tables.load_mod3(dir, kind).expect("loads") else {
            eprintln!("{}: not built", kind.name());
            continue;
        };
        let mut hist = [0u32; 20];
        for c in &states {
            hist[table.depth(&tables.coords, &Mod3Coords::of(c)) as usize] += 1;
        }
        let mean = hist
            .iter()
            .enumerate()
            .map(|(d, n)| d as f64 * *n as f64)
            .sum::<f64>()
            / states.len() as f64;
        eprintln!("{}: mean depth {mean:.3}, per depth {hist:?}", kind.name());
        assert!(mean >= phase1);
    }
}
