//! `cubefleet bench walk`: what the state index's walk saves. The states of one index range
//! are made two ways, by decoding each index from scratch (`state_at`) and by the walk (each
//! state from the one before, the permutations decoded once per block), alone and each
//! followed by a two-phase solve (the work of a range batch's job), on 1 and 2 threads (the
//! range split in halves). Figures: states per second and the walk's ratio to decoding.

use std::process::ExitCode;
use std::time::Instant;

use cubefleet_search::twophase::{TwoPhaseOptions, TwoPhaseSearcher};
use cubefleet_search::Budget;
use cubefleet_tables::index::{state_at, Walk};
use cubefleet_tables::{CubieCube, Tables};

use super::TablesArgs;

#[derive(clap::Args, Debug)]
pub(crate) struct WalkArgs {
    /// The first state index of the range.
    #[arg(long, default_value_t = 12_345_678_901_234_567_890)]
    start: u128,
    /// States made without solving.
    #[arg(long, default_value_t = 4_000_000)]
    count: u64,
    /// States made and solved (two-phase, at most `--max-length` moves).
    #[arg(long, default_value_t = 20_000)]
    solve: u64,
    /// The two-phase target length of the solves.
    #[arg(long, default_value_t = 21)]
    max_length: usize,
    #[command(flatten)]
    tables: TablesArgs,
}

/// How the states of a range are made.
#[derive(Clone, Copy)]
enum Make {
    Decode,
    Walk,
}

/// Makes the states `start..start + n` (and solves each, with `solve`), on `threads` threads;
/// returns states per second.
fn rate(
    make: Make,
    start: u128,
    n: u64,
    threads: u64,
    solve: Option<(&Tables, usize)>,
) -> anyhow::Result<f64> {
    let begin = Instant::now();
    let per = n / threads;
    let checks = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let from = start + (t * per) as u128;
                s.spawn(move || -> anyhow::Result<u64> {
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
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow::anyhow!("a bench thread panicked"))?
            })
            .collect::<anyhow::Result<Vec<u64>>>()
    })?;
    std::hint::black_box(checks);
    Ok((per * threads) as f64 / begin.elapsed().as_secs_f64())
}

pub(crate) fn run(args: WalkArgs) -> anyhow::Result<ExitCode> {
    let tables = args
        .tables
        .load_for(&cubefleet_search::Question::default())?;
    println!("| states | threads | decode each, states/s | walk, states/s | walk / decode |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for threads in [1, 2] {
        for (what, n, solve) in [
            ("made", args.count, None),
            (
                "made and solved",
                args.solve,
                Some((&tables, args.max_length)),
            ),
        ] {
            // the first touches of the tables are not timed
            rate(Make::Walk, args.start, n.min(2_000), threads, solve)?;
            let decode = rate(Make::Decode, args.start, n, threads, solve)?;
            let walk = rate(Make::Walk, args.start, n, threads, solve)?;
            println!(
                "| {what} ({n}) | {threads} | {decode:.0} | {walk:.0} | {:.2} |",
                walk / decode
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
