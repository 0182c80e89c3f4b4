//! `cubefleet bench`: the project's own benchmarks. Figures go to stdout as a Markdown table,
//! ready for BENCHMARKS.md (the reference; its history in docs/benchmarks-history.md). Table loading and building are never timed.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use cubefleet_tables::{parse_position, CubieCube, InputFormat, Tables};
use cubefleet_worker::search::optimal;
use cubefleet_worker::search::twophase::{self, TwoPhaseOptions, TwoPhaseSearcher};
use cubefleet_worker::search::{Budget, Status};

use super::TablesArgs;

#[derive(clap::Subcommand, Debug)]
pub(crate) enum Command {
    /// Two-phase solver, single thread (or `--threads` per position), at max length 21, 20 and
    /// "first solution".
    Twophase(TwophaseArgs),
    /// Optimal solver: seconds per position and nodes per second.
    Optimal(OptimalArgs),
    /// The job system alone: submit, lease, complete (verified) and store, over loopback gRPC.
    Coordinator(super::bench_coordinator::CoordinatorArgs),
    /// The state index: a range's states decoded one by one against the walk, with and
    /// without a two-phase solve of each.
    Walk(super::bench_walk::WalkArgs),
}

#[derive(clap::Args, Debug)]
pub(crate) struct OptimalArgs {
    /// Positions, one facelet string or move sequence per line (text after it is ignored).
    #[arg(long, default_value = "tests/vectors/random-states-1000.txt")]
    file: PathBuf,
    /// Use only the first N positions.
    #[arg(long, default_value_t = 10)]
    count: usize,
    /// Skip the first N positions.
    #[arg(long, default_value_t = 0)]
    skip: usize,
    /// Search threads per position.
    #[arg(long, default_value_t = 1, value_parser = super::flags::threads)]
    threads: usize,
    /// Give up on a position after this many seconds.
    #[arg(long, value_parser = super::flags::timeout)]
    timeout: Option<f64>,
    /// Half-turn (htm) or quarter-turn (qtm) metric.
    #[arg(long, value_enum, default_value = "htm")]
    metric: super::MetricArg,
    /// Bound the search with the phase-1 table even when the giant or huge table is present.
    #[arg(long)]
    no_huge: bool,
    /// Do not prune the search by the positions' symmetries (same answers, more work).
    #[arg(long)]
    no_symmetry: bool,
    #[command(flatten)]
    tables: TablesArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct TwophaseArgs {
    /// Positions, one facelet string or move sequence per line.
    #[arg(long, default_value = "tests/vectors/random-states-1000.txt")]
    file: PathBuf,
    /// Use only the first N positions.
    #[arg(long)]
    count: Option<usize>,
    /// Repeat each measurement this many times and report the run with the median mean.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Target lengths to measure; 0 means "first solution".
    #[arg(long, value_delimiter = ',', default_value = "21,20,0")]
    targets: Vec<usize>,
    /// Search threads per position (the six directions shared out among them).
    #[arg(long, default_value_t = 1, value_parser = super::flags::threads)]
    threads: usize,
    #[command(flatten)]
    tables: TablesArgs,
}

/// Reads positions from a file, one per line (blank lines and `#` comments skipped).
pub(crate) fn read_positions(
    file: &PathBuf,
    count: Option<usize>,
) -> anyhow::Result<Vec<CubieCube>> {
    let text =
        std::fs::read_to_string(file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let mut cubes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.split('#').next().unwrap_or("").trim();
        if t.is_empty() {
            continue;
        }
        let first = t.split_whitespace().next().unwrap_or(t);
        let text = if first.len() == 54 { first } else { t };
        let c = parse_position(text, InputFormat::Auto)
            .map_err(|e| anyhow::anyhow!("{}:{}: {e}", file.display(), i + 1))?;
        cubes.push(c);
        if count.is_some_and(|n| cubes.len() >= n) {
            break;
        }
    }
    Ok(cubes)
}

/// One run over all positions: per-cube milliseconds and lengths. With more than one thread
/// each position is searched by all of them ([`twophase::solve_parallel`]).
fn run_twophase(
    searcher: &mut TwoPhaseSearcher<'_>,
    tables: &Tables,
    threads: usize,
    cubes: &[CubieCube],
    target: usize,
) -> (Vec<f64>, Vec<usize>) {
    let opts = TwoPhaseOptions { max_length: target };
    let mut ms = Vec::with_capacity(cubes.len());
    let mut lens = Vec::with_capacity(cubes.len());
    for c in cubes {
        let t = Instant::now();
        let out = if threads > 1 {
            twophase::solve_parallel(tables, c, &opts, &Budget::unlimited(), threads)
        } else {
            searcher.solve(c, &opts, &Budget::unlimited())
        };
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(
            out.status,
            Status::Solved,
            "every benchmark position is solved"
        );
        lens.push(out.solution.map_or(0, |s| s.len()));
    }
    (ms, lens)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

pub(crate) fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Coordinator(a) => super::bench_coordinator::run(a),
        Command::Walk(a) => super::bench_walk::run(a),
        Command::Optimal(a) => {
            let tables = a.tables.load()?;
            let cubes = read_positions(&a.file, Some(a.skip.saturating_add(a.count)))?;
            let cubes = &cubes[a.skip.min(cubes.len())..];
            let metric: optimal::Metric = a.metric.into();
            println!(
                "optimal ({}), {} thread(s), {} positions from {} (from #{})",
                metric.as_str(),
                a.threads,
                cubes.len(),
                a.file.display(),
                a.skip
            );
            let bound = if a.no_huge {
                None
            } else {
                tables.optimal_bound.as_ref()
            };
            println!(
                "bound: {} table on 3 axes; symmetry pruning {}",
                bound.map_or("phase-1", |h| h.kind().name()),
                if a.no_symmetry { "off" } else { "on" }
            );
            let stats = optimal::bench_optimal(
                optimal::OptimalTables::with_bound(&tables, bound),
                cubes,
                &optimal::OptimalOptions {
                    metric,
                    no_symmetry: a.no_symmetry,
                    ..Default::default()
                },
                a.threads,
                a.timeout.map(Duration::from_secs_f64),
                &mut |i, out, secs| {
                    eprintln!(
                        "  #{}: {} {} moves in {secs:.3} s ({} nodes)",
                        a.skip + i,
                        out.status.as_str(),
                        out.solution.as_ref().map_or(0, |s| metric.length(&s.0)),
                        out.nodes
                    )
                },
            );
            let solved = stats.lengths.iter().flatten().count();
            let mean_len =
                stats.lengths.iter().flatten().sum::<u32>() as f64 / solved.max(1) as f64;
            println!();
            println!("| positions | solved | mean s | median s | max s | mean length | nodes/s |");
            println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
            println!(
                "| {} | {solved} | {:.3} | {:.3} | {:.3} | {mean_len:.2} | {:.3e} |",
                cubes.len(),
                stats.mean(),
                stats.median(),
                stats.max(),
                stats.nodes_per_second()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Twophase(a) => {
            let tables = a
                .tables
                .load_for(&cubefleet_worker::search::Mode::default())?;
            let cubes = read_positions(&a.file, a.count)?;
            let mut searcher = TwoPhaseSearcher::new(&tables);
            println!(
                "two-phase, {} thread(s) per position, {} positions from {}, median of {} runs",
                a.threads.max(1),
                cubes.len(),
                a.file.display(),
                a.runs
            );
            println!();
            println!("| target | mean ms/cube | median ms/cube | max ms | mean length | runs' means (ms) |");
            println!("| --- | ---: | ---: | ---: | ---: | --- |");
            for &target in &a.targets {
                let t = if target == 0 { 99 } else { target };
                let mut runs: Vec<(f64, f64, f64, f64)> = (0..a.runs.max(1))
                    .map(|_| {
                        let (mut ms, lens) =
                            run_twophase(&mut searcher, &tables, a.threads, &cubes, t);
                        let m = mean(&ms);
                        let max = ms.iter().cloned().fold(0.0, f64::max);
                        let med = median(&mut ms);
                        let len = lens.iter().sum::<usize>() as f64 / lens.len().max(1) as f64;
                        (m, med, max, len)
                    })
                    .collect();
                let all: Vec<String> = runs.iter().map(|r| format!("{:.3}", r.0)).collect();
                runs.sort_by(|x, y| x.0.total_cmp(&y.0));
                let (m, med, max, len) = runs[runs.len() / 2];
                let label = if target == 0 {
                    "first solution".to_string()
                } else {
                    target.to_string()
                };
                println!(
                    "| {label} | {m:.3} | {med:.3} | {max:.1} | {len:.2} | {} |",
                    all.join(", ")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
