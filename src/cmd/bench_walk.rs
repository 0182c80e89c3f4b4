//! `cubefleet bench walk`: what the state index's walk saves. The states of one index range
//! are made two ways, by decoding each index from scratch (`state_at`) and by the walk (each
//! state from the one before, the permutations decoded once per block), alone and each
//! followed by a two-phase solve (the work of a range batch's job), on 1 and 2 threads (the
//! range split in halves). Figures: states per second and the walk's ratio to decoding.

use std::process::ExitCode;

use cubefleet_bench::walk::{rate, Make};

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
