//! `cubefleet scramble`: random-state scrambles, as the WCA makes them: a uniformly random
//! position is solved and the solution inverted, so every scramble reaches a truly random state.

use std::process::ExitCode;

use cubefleet_tables::CubieCube;
use cubefleet_worker::search::twophase::{TwoPhaseOptions, TwoPhaseSearcher};
use cubefleet_worker::search::Budget;
use rand::SeedableRng;

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
        .load_for(&cubefleet_worker::search::Mode::default())?;
    let mut rng = match args.seed {
        Some(s) => rand::rngs::StdRng::seed_from_u64(s),
        None => rand::rngs::StdRng::from_os_rng(),
    };
    let mut searcher = TwoPhaseSearcher::new(&tables);
    let opts = TwoPhaseOptions {
        max_length: args.max_length as usize,
    };
    for _ in 0..args.count {
        let cube = CubieCube::random(&mut rng);
        let out = searcher.solve(&cube, &opts, &Budget::unlimited());
        let solution = out
            .solution
            .ok_or_else(|| anyhow::anyhow!("no solution found for a random state"))?;
        let scramble = solution.inverse();
        anyhow::ensure!(
            CubieCube::from_moves(&scramble.0) == cube,
            "scramble does not reach its state"
        );
        println!("{scramble}");
    }
    Ok(ExitCode::SUCCESS)
}
