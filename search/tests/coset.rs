//! The coset solver against an independent count: every maneuver of up to [`DEPTH`] turns from
//! solved, with no tables, the least length of each position reached kept, restricted to one
//! coset; the solver's counts at each depth must equal it exactly.
//!
//! Each solve allocates two bitmaps of 2.4 GB, so the solves run one at a time.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use cubefleet_search::coset::{solve_coset, Coset, CosetOptions, CosetResult, COSET_SIZE};
use cubefleet_tables::{parse_position, CubieCube, InputFormat, Move, Tables};

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let dir = cubefleet_testkit::tables_dir();
    Tables::load_or_build(&dir, &|_, _, _| {}).expect("tables build and load")
});

/// One solve at a time (memory).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The depth checked against the independent count.
const DEPTH: u32 = 6;

/// Positions of `coset` within `depth` turns by their least number of turns: every sequence
/// of up to `depth` turns from solved (no face twice in a row, which loses no position), the
/// shortest length of each position kept.
fn count_by_enumeration(coset: Coset, depth: u32) -> Vec<u64> {
    fn walk(
        c: &CubieCube,
        last: Option<usize>,
        n: u32,
        depth: u32,
        coset: Coset,
        seen: &mut HashMap<CubieCube, u32>,
    ) {
        if Coset::of(c) == coset {
            let d = seen.entry(*c).or_insert(n);
            *d = (*d).min(n);
        }
        if n == depth {
            return;
        }
        for m in 0..18 {
            if last.is_some_and(|l| l / 3 == m / 3) {
                continue;
            }
            walk(
                &c.apply_move(Move::from_index(m)),
                Some(m),
                n + 1,
                depth,
                coset,
                seen,
            );
        }
    }
    let mut seen = HashMap::new();
    walk(&CubieCube::SOLVED, None, 0, depth, coset, &mut seen);
    let mut counts = vec![0u64; depth as usize + 1];
    for d in seen.values() {
        counts[*d as usize] += 1;
    }
    counts
}

fn solve(coset: Coset, max_depth: u32, exact_depth: u32) -> CosetResult {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let options = CosetOptions {
        max_depth,
        exact_depth,
        threads: 2,
        one_by_one: None,
        cancel: None,
        samples: Vec::new(),
    };
    solve_coset(&TABLES, coset, &options, &|_, _, _, _| {}).expect("solved")
}

fn coset_of(text: &str) -> Coset {
    Coset::of(&parse_position(text, InputFormat::Auto).expect("a position"))
}

/// The counts of a coset equal the enumeration's at every depth through [`DEPTH`].
fn check(coset: Coset) {
    let want = count_by_enumeration(coset, DEPTH);
    let got = solve(coset, DEPTH, DEPTH);
    assert_eq!(got.counts, want, "coset {}", coset.number());
    assert_eq!(got.exact_through, DEPTH);
    assert_eq!(got.size, COSET_SIZE);
    assert_eq!(got.unsolved, COSET_SIZE - want.iter().sum::<u64>());
    assert_eq!(got.unsolved_indices, None, "too many to list");
}

#[test]
fn h_itself_matches_the_enumeration() {
    let h = Coset::from_number(0).expect("H");
    check(h);
}

#[test]
fn the_coset_of_r_matches_the_enumeration() {
    check(coset_of("R"));
}

#[test]
fn the_coset_of_r_u_f_matches_the_enumeration() {
    check(coset_of("R U F"));
}

/// With the phase-1 search stopped early, the counts are exact through it and past it count
/// positions solved within each depth: never more, depth by depth, than truly are.
#[test]
fn past_the_exact_depth_counts_are_within() {
    let coset = coset_of("F R'");
    let want = count_by_enumeration(coset, DEPTH);
    let got = solve(coset, DEPTH, 3);
    assert_eq!(got.exact_through, 3);
    assert_eq!(got.counts[..=3], want[..=3]);
    let (mut have, mut truly) = (0, 0);
    for (g, w) in got.counts.iter().zip(&want) {
        have += g;
        truly += w;
        assert!(have <= truly, "{:?} against {:?}", got.counts, want);
    }
}

/// The cosets of a class under the 16 symmetries that fix H have equal counts at every depth
/// (conjugation keeps every position's depth), and the class's least is canonical.
#[test]
fn symmetric_cosets_have_equal_counts() {
    let coset = coset_of("R U F");
    let counts = solve(coset, 5, 5).counts;
    let others: std::collections::BTreeSet<Coset> = (1..16)
        .map(|s| coset.conjugate(s))
        .filter(|&c| c != coset)
        .collect();
    assert!(!others.is_empty());
    for &other in others.iter().take(2) {
        assert_eq!(solve(other, 5, 5).counts, counts, "{}", other.number());
    }
    let least = coset.canonical();
    assert!(least.is_canonical() && least <= coset);
}

/// Followed samples: a position the search reaches gets the depth the counts put it at, and
/// the solution found for it solves it in exactly that many turns (the counts are exact
/// there); a position it does not reach gets none.
#[test]
fn samples_are_followed_and_solved_within_their_depth() {
    use cubefleet_search::coset::sample_solution;
    let coset = coset_of("R U F");
    // H turns before `R U F` stay in its coset
    let near = [("R U F", 3), ("U2 R U F", 4), ("L2 U2 R U F", 5)];
    let mut samples: Vec<u64> = near
        .iter()
        .map(|(m, _)| {
            let q = parse_position(m, InputFormat::Auto).expect("a position");
            coset.local_index(&q).expect("in the coset")
        })
        .collect();
    // a random position of the coset is not within 5 turns
    samples.extend(cubefleet_tables::coset::samples(&[3u8; 32]));
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let options = CosetOptions {
        max_depth: 5,
        exact_depth: 5,
        threads: 2,
        one_by_one: None,
        cancel: None,
        samples: samples.clone(),
    };
    let got = solve_coset(&TABLES, coset, &options, &|_, _, _, _| {}).expect("solved");
    assert_eq!(got.samples.len(), samples.len());
    for (i, (&local, &depth)) in samples.iter().zip(&got.samples).enumerate() {
        let Some(&(_, want)) = near.get(i) else {
            assert_eq!(depth, None, "sample {i}");
            continue;
        };
        let depth = depth.expect("reached");
        assert!(depth <= want, "sample {i}");
        let solution = sample_solution(
            &TABLES,
            coset,
            local,
            depth,
            got.exact_through,
            std::time::Duration::from_secs(5),
            None,
        )
        .expect("a solution within the depth");
        assert_eq!(solution.len() as u32, depth);
        let q = coset.position(local).expect("in range");
        assert!(q.apply_moves(&solution.0).is_solved());
    }
}
