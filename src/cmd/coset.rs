//! `cubefleet coset solve`: every position of one coset of H = <U, D, R2, L2, F2, B2> solved
//! at once (`cubefleet_search::coset`), its count of positions at each depth printed.

use std::process::ExitCode;

use cubefleet_search::coset::{
    self, solve_coset, Coset, CosetOptions, CosetResult, Stage, MEMORY_NEEDED, N_COSETS,
};
use cubefleet_tables::coset::{canonical_in, Canonical};
use cubefleet_tables::{parse_position, InputFormat};

use super::TablesArgs;
use crate::progress::CosetBar;

#[derive(clap::Subcommand, Debug)]
pub(crate) enum Command {
    /// Solve all 19,508,428,800 positions of one coset: the count of positions at each depth.
    /// Needs 4.9 GB of memory. Measured on 2 shared cores: the whole coset of `R U F` in 4.3
    /// min; each depth's step of H's turns takes up to 30 s, the phase-1 search 4 s at depth 12,
    /// 22 s at 13 and about 7 times more a depth beyond.
    Solve(SolveArgs),
    /// The canonical cosets (the least of their class under the 16 symmetries that fix H,
    /// which have equal counts) with numbers in START..END (default every coset), one number
    /// per line, ready for `--cosets-file`; or, with --count, how many there are.
    Canonical(CanonicalArgs),
}

#[derive(clap::Args, Debug)]
pub(crate) struct CanonicalArgs {
    /// The coset numbers to look at, START..END (END exclusive; default 0..2217093120).
    range: Option<String>,
    /// Print how many there are instead of listing them.
    #[arg(long)]
    count: bool,
}

/// Output format.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum Format {
    /// A table of depths and counts.
    Text,
    /// One JSON object: `number`, `representative`, `size`, `max_depth`, `counts`,
    /// `exact_through`, `one_by_one`, `unsolved`, `unsolved_indices`, `unsolved_local`,
    /// `seconds`.
    Json,
}

#[derive(clap::Args, Debug)]
pub(crate) struct SolveArgs {
    /// The coset: a position in it (a move sequence or facelets, read as `solve` reads them)
    /// or its number, `(slice * 2048 + flip) * 2187 + twist`, 0 (H itself) to 2217093119.
    coset: String,
    /// Positions not solved within this many turns are counted unsolved (0 to 30).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(0..=30))]
    max_depth: u32,
    /// The phase-1 search lists every maneuver into H up to this many turns: the counts are
    /// exact through it; past it they count positions solved within that depth (0 to 30).
    #[arg(long, default_value_t = 13, value_parser = clap::value_parser!(u32).range(0..=30))]
    exact_depth: u32,
    /// When at most 4096 positions are left unsolved, each is searched alone (two-phase,
    /// within --max-depth) for at most this many seconds.
    #[arg(long, default_value_t = 10.0, value_parser = super::flags::timeout)]
    position_timeout: f64,
    /// Threads (default: every core).
    #[arg(long, value_parser = super::flags::threads)]
    threads: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    #[command(flatten)]
    tables: TablesArgs,
}

pub(crate) fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Solve(args) => solve(args),
        Command::Canonical(args) => canonical(args),
    }
}

fn canonical(args: CanonicalArgs) -> anyhow::Result<ExitCode> {
    let (start, end) = match &args.range {
        None => (0, N_COSETS),
        Some(text) => {
            let (a, b) = text
                .split_once("..")
                .ok_or_else(|| anyhow::anyhow!("`{text}`: give START..END"))?;
            let number = |t: &str| {
                t.trim()
                    .replace('_', "")
                    .parse::<u64>()
                    .map_err(|_| anyhow::anyhow!("`{text}`: `{t}` is no coset number"))
            };
            (number(a)?, number(b)?)
        }
    };
    if start >= end || end > N_COSETS {
        anyhow::bail!("cosets {start}..{end}: give START..END with START < END <= {N_COSETS}");
    }
    let counts = Canonical::get();
    if args.count {
        println!("{}", counts.rank(end) - counts.rank(start));
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::BufWriter::new(crate::output::Stdout::new());
    for coset in canonical_in(start, end) {
        use std::io::Write;
        writeln!(out, "{}", coset.number())?;
    }
    std::io::Write::flush(&mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// The coset `text` names: a number, else the coset of the position it reads as.
fn parse_coset(text: &str) -> anyhow::Result<Coset> {
    let text = text.trim();
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
        let n: u64 = text
            .parse()
            .map_err(|_| anyhow::anyhow!("coset number {text}: give 0 to {}", N_COSETS - 1))?;
        return Ok(Coset::from_number(n)?);
    }
    let position = parse_position(text, InputFormat::Auto)
        .map_err(|e| anyhow::anyhow!("`{text}` is neither a coset number nor a position: {e}"))?;
    Ok(Coset::of(&position))
}

fn solve(args: SolveArgs) -> anyhow::Result<ExitCode> {
    let coset = parse_coset(&args.coset)?;
    coset::check_memory()?;
    let tables = args
        .tables
        .load_for(&cubefleet_search::Question::default())?;
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    eprintln!(
        "coset {} on {threads} threads to depth {} (exact through {}), {:.2} GB of memory",
        coset.number(),
        args.max_depth,
        args.exact_depth.min(args.max_depth),
        MEMORY_NEEDED as f64 / 1e9
    );
    let options = CosetOptions {
        max_depth: args.max_depth,
        exact_depth: args.exact_depth,
        threads,
        one_by_one: Some(std::time::Duration::from_secs_f64(args.position_timeout)),
        cancel: None,
        samples: Vec::new(),
    };
    let bar = CosetBar::new();
    let result = solve_coset(&tables, coset, &options, &|stage, depth, done, all| {
        let name = match stage {
            Stage::Seeds => "phase 1",
            Stage::Expand => "H turns",
            Stage::OneByOne => "one by one",
        };
        bar.update(name, depth, done, all)
    })?;
    bar.finish();
    match args.format {
        Format::Json => println!("{}", serde_json::to_string(&result)?),
        Format::Text => print!("{}", text(&result)),
    }
    Ok(ExitCode::SUCCESS)
}

/// The result as a table.
fn text(r: &CosetResult) -> String {
    let mut out = format!(
        "coset {} (representative {}): {} positions, {:.1} s\n",
        r.number, r.representative, r.size, r.seconds
    );
    out.push_str("depth  positions\n");
    for (depth, count) in r.counts.iter().enumerate() {
        let within = if depth as u32 > r.exact_through {
            "  (solved within this depth)"
        } else {
            ""
        };
        out.push_str(&format!("{depth:>5}  {count:>11}{within}\n"));
    }
    if r.one_by_one > 0 {
        out.push_str(&format!(
            "solved one by one (two-phase, counted above)  {}\n",
            r.one_by_one
        ));
    }
    out.push_str(&format!("unsolved  {}\n", r.unsolved));
    if let Some(indices) = &r.unsolved_indices {
        for i in indices {
            out.push_str(&format!("  {i}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosets_by_number_and_by_position() {
        assert_eq!(parse_coset("0").expect("H").number(), 0);
        assert_eq!(parse_coset("R2 U D'").expect("a position in H").number(), 0);
        let r = parse_coset("R").expect("a position");
        assert_eq!(parse_coset(&r.number().to_string()).expect("its number"), r);
        assert!(parse_coset("2217093120").is_err());
        assert!(parse_coset("R4").is_err());
    }
}
