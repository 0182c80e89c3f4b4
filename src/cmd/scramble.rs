//! `cubefleet scramble`: random-state scrambles, as the WCA makes them: a uniformly random
//! position is solved and the solution inverted, so every scramble reaches a truly random state
//! (`cubefleet_search::Scrambler`, which the Python package's `scramble` draws from too).

use std::process::ExitCode;

use cubefleet_search::Scrambler;

use super::TablesArgs;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// How many scrambles.
    #[arg(long, default_value_t = 1)]
    count: usize,
    /// Seed for reproducible scrambles (default: random).
    #[arg(long)]
    seed: Option<u64>,
    /// Longest scramble accepted (two-phase target length, 1 or more; a longer one is given
    /// when the search finds none within it).
    #[arg(long, default_value_t = 21, value_parser = clap::value_parser!(u32).range(1..))]
    max_length: u32,
    #[command(flatten)]
    tables: TablesArgs,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let tables = args
        .tables
        .load_for(&cubefleet_search::Question::default())?;
    let mut scrambler = Scrambler::new(&tables, args.seed, args.max_length);
    for _ in 0..args.count {
        println!("{}", scrambler.next_scramble()?);
    }
    Ok(ExitCode::SUCCESS)
}
