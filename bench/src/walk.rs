//! What the state index's walk saves (`cubefleet bench walk`): the states of one index range
//! made two ways, by decoding each index from scratch (`state_at`) and by the walk (each
//! state from the one before, the permutations decoded once per block), alone or each
//! followed by a two-phase solve (the work of a range batch's job), on one or more threads.

use std::time::Instant;

use cubefleet_search::twophase::{TwoPhaseOptions, TwoPhaseSearcher};
use cubefleet_search::Budget;
use cubefleet_tables::index::{state_at, Walk};
use cubefleet_tables::{CubieCube, Error, Tables};

/// How the states of a range are made.
#[derive(Clone, Copy, Debug)]
pub enum Make {
    /// Each index decoded from scratch.
    Decode,
    /// The walk: each state from the one before.
    Walk,
}

/// Makes the states `start..start + n` (and solves each, with `solve`: the tables and the
/// two-phase target length), on `threads` threads (`n / threads` states each); returns states
/// per second. A panic of a thread is the caller's.
pub fn rate(
    make: Make,
    start: u128,
    n: u64,
    threads: u64,
    solve: Option<(&Tables, usize)>,
) -> Result<f64, Error> {
    let begin = Instant::now();
    let per = n / threads;
    let checks = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let from = start + (t * per) as u128;
                s.spawn(move || -> Result<u64, Error> {
                    let mut searcher = solve.map(|(tables, _)| TwoPhaseSearcher::new(tables));
                    let opts = TwoPhaseOptions {
                        max_length: solve.map_or(0, |(_, m)| m),
                    };
                    let mut check = 0u64;
                    let mut visit = |c: CubieCube| {
                        check = check.wrapping_add(c.flip() as u64 ^ c.twist() as u64);
                        if let Some(s) = searcher.as_mut() {
                            let out = s.solve(&c, &opts, &Budget::unlimited());
                            check = check.wrapping_add(out.solution.map_or(0, |m| m.len() as u64));
                        }
                    };
                    match make {
                        Make::Decode => {
                            for i in from..from + per as u128 {
                                visit(state_at(i)?);
                            }
                        }
                        Make::Walk => {
                            for (_, c) in Walk::new(from, from + per as u128)? {
                                visit(c);
                            }
                        }
                    }
                    Ok(check)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Result<Vec<u64>, Error>>()
    })?;
    std::hint::black_box(checks);
    Ok((per * threads) as f64 / begin.elapsed().as_secs_f64())
}
