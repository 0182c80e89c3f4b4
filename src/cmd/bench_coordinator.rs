//! `cubefleet bench coordinator`: the job system's own throughput, without any search
//! (`cubefleet_bench::coordinator`, beside the other benchmarks, says what it measures).

use std::path::PathBuf;
use std::process::ExitCode;

use cubefleet_bench::coordinator::Setup;

#[derive(clap::Args, Debug)]
pub(crate) struct CoordinatorArgs {
    /// Jobs in the batch (1 to 100,000,000).
    #[arg(long, default_value_t = 200_000, value_parser = jobs)]
    jobs: usize,
    /// Concurrent worker tasks leasing and completing.
    #[arg(long, default_value_t = 4, value_parser = super::flags::threads)]
    workers: usize,
    /// Jobs per lease and per completion call (default: the group a busy worker reports, half
    /// of the most jobs it holds).
    #[arg(
        long,
        default_value_t = (cubefleet_worker::runtime::MAX_HELD / 2) as u32,
        value_parser = clap::value_parser!(u32).range(1..=i64::from(cubefleet_worker::runtime::MAX_HELD as u32))
    )]
    group: u32,
    /// Store directory (default: a fresh directory under the system's temp dir, removed after).
    #[arg(long)]
    data: Option<PathBuf>,
}

/// The most jobs a benchmark batch holds (their lines are made in memory first).
const MAX_JOBS: usize = 100_000_000;

/// The value parser of `--jobs`: 1 to [`MAX_JOBS`].
fn jobs(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_JOBS).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{text}` jobs: give a whole number from 1 to {MAX_JOBS}"
        )),
    }
}

pub(crate) fn run(args: CoordinatorArgs) -> anyhow::Result<ExitCode> {
    print!(
        "{}",
        cubefleet_bench::coordinator::run(&Setup {
            jobs: args.jobs,
            workers: args.workers,
            group: args.group,
            data: args.data,
        })?
    );
    Ok(ExitCode::SUCCESS)
}
