//! `cubefleet bench`: the project's own benchmarks. Figures go to stdout as Markdown tables
//! (`bench optimal --json`: JSON lines), ready for BENCHMARKS.md (the reference; its history in
//! docs/benchmarks-history.md). Table loading and building are never timed. Distributions
//! (mean, nearest-rank percentiles, max) come from [`Distribution`], one definition for all.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use cubefleet_bench::distribution::{self, Distribution, PERCENTILES};
use cubefleet_search::metric::TurnCost;
use cubefleet_search::optimal;
use cubefleet_search::twophase::{self, TwoPhaseOptions, TwoPhaseSearcher};
use cubefleet_search::{Budget, Outcome, Status};
use cubefleet_tables::{parse_position, CubieCube, InputFormat, Tables};

use super::TablesArgs;

#[derive(clap::Subcommand, Debug)]
pub(crate) enum Command {
    /// Two-phase solver, single thread (or `--threads` per position), at max length 21, 20 and
    /// "first solution": ms per position (mean, nearest-rank p10/p50/p90/p99, max).
    ///
    /// One row per target: the run with the median mean of `--runs`, and every run's mean. A
    /// percentile is shown only when the positions resolve it (p90 from 10, p99 from 100).
    Twophase(TwophaseArgs),
    /// Optimal solver: seconds and nodes per position, their distribution (mean, nearest-rank
    /// p10/p50/p90/p99, max) and nodes per second.
    ///
    /// On stdout: a header, a summary table (positions, solved, mean length, nodes, nodes/s) and
    /// a distribution table (seconds and nodes per position). A percentile is shown only when
    /// the positions resolve it (nearest rank below the maximum's: p90 from 10 positions, p99
    /// from 100); `--per-position` adds a row per position, `--json` prints JSON lines instead.
    /// Each position is also reported on stderr as it ends.
    Optimal(OptimalArgs),
    /// The job system alone: submit, lease, complete (verified) and store, over loopback gRPC.
    Coordinator(super::bench_coordinator::CoordinatorArgs),
    /// The state index: a range's states decoded one by one against the walk, with and
    /// without a two-phase solve of each.
    Walk(super::bench_walk::WalkArgs),
}

/// The flags of `cubefleet bench optimal`.
#[derive(clap::Args, Debug)]
pub(crate) struct OptimalArgs {
    /// Positions, one facelet string or move sequence per line (text after it is ignored). The
    /// default holds 1000 random states; `--count 30` or more gives a distribution worth reading.
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
    /// Bound the search with the phase-1 table even when a colossal, giant or huge table is
    /// present.
    #[arg(long)]
    no_huge: bool,
    /// Do not prune the search by the positions' symmetries (same answers, more work).
    #[arg(long)]
    no_symmetry: bool,
    /// Also print a Markdown table with one row per position (#, length, seconds, nodes,
    /// nodes/s, status) before the summary.
    #[arg(long)]
    per_position: bool,
    /// Print JSON lines instead of Markdown: one per position as it ends (`index`, `status`,
    /// `length`, `seconds`, `nodes`, `nodes_per_second`), then one `{"summary": {...}}` with
    /// the run's settings and the distributions, for scripts comparing two binaries.
    #[arg(long, conflicts_with = "per_position")]
    json: bool,
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
    /// Repeat each measurement this many times and report the run with the median mean (its
    /// distribution of ms per position: mean, nearest-rank p10/p50/p90/p99, max; p99 needs at
    /// least 100 positions).
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

/// The header cells of a [`Distribution`] (`mean | p10 | ... | max`), in the order of
/// [`dist_cells`], each name followed by `unit`.
fn dist_head(unit: &str) -> String {
    let mut cells = vec![format!("mean{unit}")];
    cells.extend(PERCENTILES.iter().map(|p| format!("p{p}{unit}")));
    cells.push(format!("max{unit}"));
    cells.join(" | ")
}

/// The Markdown alignment cells matching [`dist_head`].
fn dist_align() -> String {
    vec!["---:"; PERCENTILES.len() + 2].join(" | ")
}

/// The cells of `d` in the order of [`dist_head`], each value written by `fmt`; a percentile
/// too few values resolve is `—`.
fn dist_cells(d: &Distribution, fmt: impl Fn(f64) -> String) -> String {
    let mut cells = vec![fmt(d.mean)];
    cells.extend(
        d.percentiles
            .iter()
            .map(|p| p.map_or("—".to_string(), &fmt)),
    );
    cells.push(fmt(d.max));
    cells.join(" | ")
}

/// The note under a distribution table of `n` values, when some percentile is left out.
fn dist_note(n: usize) -> Option<String> {
    let missing: Vec<String> = PERCENTILES
        .iter()
        .filter(|&&p| !distribution::resolves(n, p))
        .map(|p| {
            format!(
                "p{p} (needs {} positions)",
                100usize.div_ceil(100 - *p as usize)
            )
        })
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "— : {n} positions do not resolve {}; percentiles are nearest-rank",
            missing.join(", ")
        )
    })
}

/// `d` as a JSON object: `n`, `mean`, `p10`... (null when left out), `max`.
fn dist_json(d: &Distribution) -> serde_json::Value {
    let mut o = serde_json::Map::new();
    o.insert("n".into(), d.n.into());
    o.insert("mean".into(), d.mean.into());
    for (p, v) in PERCENTILES.iter().zip(d.percentiles) {
        o.insert(format!("p{p}"), v.into());
    }
    o.insert("max".into(), d.max.into());
    serde_json::Value::Object(o)
}

fn millions(x: f64) -> String {
    format!("{:.2} M", x / 1e6)
}

fn run_optimal(a: OptimalArgs) -> anyhow::Result<ExitCode> {
    let tables = a.tables.load()?;
    let cubes = read_positions(&a.file, Some(a.skip.saturating_add(a.count)))?;
    let cubes = &cubes[a.skip.min(cubes.len())..];
    let metric: optimal::Metric = a.metric.into();
    let bound = if a.no_huge {
        None
    } else {
        tables.optimal_bound.as_ref()
    };
    let bound_name = bound.map_or("phase-1", |h| h.kind().name());
    if !a.json {
        println!(
            "optimal ({}), {} thread(s), {} positions from {} (from #{})",
            metric.as_str(),
            a.threads,
            cubes.len(),
            a.file.display(),
            a.skip
        );
        println!(
            "bound: {bound_name} table on 3 axes; symmetry pruning {}",
            if a.no_symmetry { "off" } else { "on" }
        );
    }
    let length = |out: &Outcome| out.solution.as_ref().map(|s| metric.length(&s.0));
    let stats = cubefleet_bench::optimal::bench_optimal(
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
                length(out).unwrap_or(0),
                out.nodes
            );
            if a.json {
                println!(
                    "{}",
                    serde_json::json!({
                        "index": a.skip + i,
                        "status": out.status.as_str(),
                        "length": length(out),
                        "seconds": secs,
                        "nodes": out.nodes,
                        "nodes_per_second": cubefleet_bench::optimal::nodes_per_second(out.nodes, secs),
                    })
                );
            }
        },
    );
    let solved = stats.lengths.iter().flatten().count();
    let mean_len = stats.lengths.iter().flatten().sum::<u32>() as f64 / solved.max(1) as f64;
    let seconds = stats.seconds_distribution();
    let nodes = stats.nodes_distribution();
    if a.json {
        println!(
            "{}",
            serde_json::json!({ "summary": {
                "file": a.file.display().to_string(),
                "skip": a.skip,
                "metric": metric.as_str(),
                "threads": a.threads,
                "bound": bound_name,
                "symmetry": !a.no_symmetry,
                "positions": stats.len(),
                "solved": solved,
                "mean_length": mean_len,
                "nodes": stats.total_nodes(),
                "nodes_per_second": stats.nodes_per_second(),
                "seconds": dist_json(&seconds),
                "nodes_per_position": dist_json(&nodes),
            }})
        );
        return Ok(ExitCode::SUCCESS);
    }
    if a.per_position {
        println!();
        println!("| # | length | seconds | nodes | nodes/s | status |");
        println!("| ---: | ---: | ---: | ---: | ---: | --- |");
        for i in 0..stats.len() {
            println!(
                "| {} | {} | {:.3} | {} | {} | {} |",
                a.skip + i,
                stats.lengths[i].map_or("—".to_string(), |l| l.to_string()),
                stats.seconds[i],
                stats.nodes[i],
                millions(stats.position_nodes_per_second(i)),
                stats.statuses[i].as_str()
            );
        }
    }
    println!();
    println!("| positions | solved | mean length | nodes | nodes/s |");
    println!("| ---: | ---: | ---: | ---: | ---: |");
    println!(
        "| {} | {solved} | {mean_len:.2} | {} | {} |",
        stats.len(),
        stats.total_nodes(),
        millions(stats.nodes_per_second())
    );
    println!();
    println!("| per position | {} |", dist_head(""));
    println!("| --- | {} |", dist_align());
    println!(
        "| seconds | {} |",
        dist_cells(&seconds, |x| format!("{x:.3}"))
    );
    println!("| nodes | {} |", dist_cells(&nodes, |x| format!("{x:.0}")));
    if let Some(note) = dist_note(stats.len()) {
        println!();
        println!("{note}");
    }
    Ok(ExitCode::SUCCESS)
}

fn run_twophase_bench(a: TwophaseArgs) -> anyhow::Result<ExitCode> {
    let tables = a.tables.load_for(&cubefleet_search::Question::default())?;
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
    println!(
        "| target | {} | mean length | runs' means (ms) |",
        dist_head(" ms")
    );
    println!("| --- | {} | ---: | --- |", dist_align());
    for &target in &a.targets {
        let t = if target == 0 { 99 } else { target };
        let mut runs: Vec<(Distribution, f64)> = (0..a.runs.max(1))
            .map(|_| {
                let (ms, lens) = run_twophase(&mut searcher, &tables, a.threads, &cubes, t);
                let len = lens.iter().sum::<usize>() as f64 / lens.len().max(1) as f64;
                (Distribution::of(&ms), len)
            })
            .collect();
        let all: Vec<String> = runs.iter().map(|r| format!("{:.3}", r.0.mean)).collect();
        runs.sort_by(|x, y| x.0.mean.total_cmp(&y.0.mean));
        let (d, len) = &runs[runs.len() / 2];
        let label = if target == 0 {
            "first solution".to_string()
        } else {
            target.to_string()
        };
        println!(
            "| {label} | {} | {len:.2} | {} |",
            dist_cells(d, |x| format!("{x:.3}")),
            all.join(", ")
        );
    }
    if let Some(note) = dist_note(cubes.len()) {
        println!();
        println!("{note}");
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Coordinator(a) => super::bench_coordinator::run(a),
        Command::Walk(a) => super::bench_walk::run(a),
        Command::Optimal(a) => run_optimal(a),
        Command::Twophase(a) => run_twophase_bench(a),
    }
}
