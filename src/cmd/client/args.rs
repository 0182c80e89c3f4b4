//! The client commands' arguments: what a batch is made of (a file, a range, a sample,
//! cosets), and
//! the flags of `submit`, `status`, `results`, `cancel`, `revoke` and `lookup`.

use std::path::PathBuf;

use cubefleet_proto::question::{
    Algorithm, Metric, MoveSet, Question, DEFAULT_EXACT_DEPTH, MAX_COSET_DEPTH,
};
use cubefleet_proto::{batch, BatchSpec, Keep};
use cubefleet_tables::coset::N_COSETS;
use cubefleet_tables::states::{parse_range, States};

use super::super::connect::ConnectArgs;
use super::super::ModeArgs;

/// What a range or sample batch keeps of each result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KeepArg {
    /// Every result with its solution (as a file batch).
    All,
    /// The status and length only: each solution is verified, then dropped; `results
    /// --chunks` gives per-chunk counts and `status` the histogram.
    Histogram,
}

/// What a batch is made of: a file of positions, a range of state indices, a uniform sample
/// of states, a range of cosets or a file of coset numbers (exactly one of them).
#[derive(clap::Args, Clone, Debug)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["file", "range", "sample", "cosets", "cosets_file"])))]
pub(crate) struct InputArgs {
    /// File of positions, one per line (`-` for stdin with `submit`).
    pub(crate) file: Option<PathBuf>,
    /// The states with indices START..END (START inclusive, END exclusive, at most
    /// 43252003274489856000; see `cubefleet index`): their jobs are made as workers ask.
    #[arg(long, value_name = "START..END", value_parser = range_flag)]
    pub(crate) range: Option<(u128, u128)>,
    /// With --range: every K-th state (START, START + K, ...).
    #[arg(long, value_name = "K", requires = "range", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) step: Option<u64>,
    /// N states drawn uniformly (with repetition) from all states, reproducibly from --seed.
    #[arg(long, value_name = "N", requires = "seed", value_parser = clap::value_parser!(u64).range(1..=1 << 40))]
    pub(crate) sample: Option<u64>,
    /// The seed of --sample.
    #[arg(long, value_name = "S", requires = "sample")]
    pub(crate) seed: Option<u64>,
    /// What a range or sample batch keeps of each result: all (default), or histogram (the
    /// lengths only; every solution is still verified first).
    #[arg(long, value_enum, default_value = "all")]
    pub(crate) keep: KeepArg,
    /// A coset batch: every coset of H numbered START..END (END exclusive, at most
    /// 2217093120; see `cubefleet coset`), one job each, every position of a coset solved at
    /// once to --max-depth (default 20); or `canonical` for every canonical coset.
    #[arg(long, value_name = "START..END|canonical", value_parser = cosets_flag)]
    pub(crate) cosets: Option<(u64, u64, bool)>,
    /// With --cosets START..END: only the canonical cosets (the least of their class under
    /// the 16 symmetries that fix H).
    #[arg(long, requires = "cosets")]
    pub(crate) canonical: bool,
    /// A coset batch from a file of coset numbers, one per line.
    #[arg(long, value_name = "FILE")]
    pub(crate) cosets_file: Option<PathBuf>,
    /// Of a coset batch: its counts are exact through this depth (the phase-1 search's;
    /// default 13), beyond it they count positions solved within each depth.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_COSET_DEPTH)))]
    pub(crate) exact_depth: Option<u32>,
}

/// `--cosets START..END` or `--cosets canonical` (every coset, canonical only).
fn cosets_flag(text: &str) -> Result<(u64, u64, bool), String> {
    if text.trim() == "canonical" {
        return Ok((0, N_COSETS, true));
    }
    let (a, b) = text
        .trim()
        .split_once("..")
        .ok_or_else(|| format!("cosets `{text}`: give START..END or canonical"))?;
    let number = |t: &str, what: &str| {
        t.trim()
            .replace('_', "")
            .parse::<u64>()
            .map_err(|_| format!("cosets `{text}`: {what} is no number"))
    };
    Ok((number(a, "START")?, number(b, "END")?, false))
}

/// `--range START..END`, read (the range as a whole is checked with its step later).
fn range_flag(text: &str) -> Result<(u128, u128), String> {
    parse_range(text).map_err(|e| e.to_string())
}

impl InputArgs {
    /// The states of a range or sample batch (None for a file), checked: a bad range is
    /// refused with the reason.
    pub(crate) fn states(&self) -> anyhow::Result<Option<States>> {
        if let Some((start, end, canonical)) = self.cosets {
            return Ok(Some(States::cosets(
                start,
                end,
                canonical || self.canonical,
            )?));
        }
        Ok(match (self.range, self.sample) {
            (Some((start, end)), _) => Some(States::range(start, end, self.step.unwrap_or(1))?),
            (None, Some(count)) => Some(States::sample(count, self.seed.unwrap_or(0))?),
            (None, None) => None,
        })
    }

    /// The file of lines to submit: positions, or coset numbers (`--cosets-file`).
    pub(crate) fn lines(&self) -> Option<&PathBuf> {
        self.file.as_ref().or(self.cosets_file.as_ref())
    }

    /// Whether this is a coset batch (`--cosets`, `--cosets-file`).
    fn is_cosets(&self) -> bool {
        self.cosets.is_some() || self.cosets_file.is_some()
    }

    /// The question of the batch: a coset batch's (to `--max-depth`, default 20, exact through
    /// `--exact-depth`), which takes no other search flag; else the mode flags' with a time
    /// budget of `timeout` seconds ([`ModeArgs::question`]).
    pub(crate) fn question(
        &self,
        mode: &ModeArgs,
        timeout: Option<f64>,
    ) -> anyhow::Result<Question> {
        if !self.is_cosets() {
            if self.exact_depth.is_some() {
                anyhow::bail!("--exact-depth goes with --cosets or --cosets-file");
            }
            return mode.question(timeout);
        }
        if mode.optimal
            || mode.to.is_some()
            || mode.max_length != cubefleet_proto::DEFAULT_MAX_LENGTH
        {
            anyhow::bail!(
                "a coset batch takes --max-depth and --exact-depth only (no --optimal, \
                 --max-length or --to)"
            );
        }
        Question::new(
            Algorithm::Coset {
                max_depth: mode.max_depth.unwrap_or(MAX_COSET_DEPTH),
                exact_depth: self.exact_depth.unwrap_or(DEFAULT_EXACT_DEPTH),
            },
            mode.metric.map_or(Metric::Htm, Metric::from),
            mode.moves.unwrap_or(MoveSet::ALL),
            timeout,
        )
        .map_err(|e| anyhow::anyhow!(e.for_flags()))
    }

    /// `spec` with the range or sample definition and `keep` of these flags
    /// ([`batch::define`], as Python's `Client.submit` writes them).
    pub(crate) fn define(&self, mut spec: BatchSpec) -> anyhow::Result<BatchSpec> {
        let keep = match self.keep {
            KeepArg::All => Keep::All,
            KeepArg::Histogram => Keep::Histogram,
        };
        batch::define(&mut spec, self.states()?.as_ref(), keep)?;
        Ok(spec)
    }

    /// A name for the batch: the file, or the definition.
    pub(crate) fn name(&self) -> anyhow::Result<String> {
        Ok(match (self.states()?, self.lines()) {
            (Some(s), _) => batch::describe(&s),
            (None, Some(f)) => f.display().to_string(),
            (None, None) => String::new(),
        })
    }
}

#[derive(clap::Args, Debug)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    pub(super) input: InputArgs,
    #[command(flatten)]
    pub(super) connect: ConnectArgs,
    #[command(flatten)]
    pub(super) mode: ModeArgs,
    /// A name for the batch.
    #[arg(long)]
    pub(super) name: Option<String>,
    /// Batch id (resubmitting an id continues that batch; default: a new id).
    #[arg(long)]
    pub(super) batch_id: Option<String>,
    /// Higher runs first (negative values allowed: `--priority -1`).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub(super) priority: i32,
    /// How many workers of different credentials must agree before an `optimal` or
    /// `none_within` answer is final: 1 (one is enough) or 2 (for fleets whose workers are not
    /// all trusted; a disagreement is settled by a third credential's search).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=2))]
    pub(super) confirm: u32,
    /// Time budget per position, in seconds (more than 0; default: none).
    #[arg(long, value_parser = super::super::flags::timeout)]
    pub(super) timeout: Option<f64>,
    /// Show a progress bar until the batch is finished.
    #[arg(long)]
    pub(super) wait: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct StatusArgs {
    /// The batch (default: all batches).
    pub(super) batch: Option<String>,
    #[command(flatten)]
    pub(super) connect: ConnectArgs,
    /// Keep showing progress until the batch is finished.
    #[arg(long)]
    pub(super) watch: bool,
    /// One JSON object per batch.
    #[arg(long)]
    pub(super) json: bool,
}

/// Result export format.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum ResultsFormat {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header line.
    Csv,
    /// Apache Parquet: the fields as typed columns (`status` a dictionary), row groups of
    /// 65,536 rows; best with `--out FILE`.
    Parquet,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ResultsArgs {
    /// The batch.
    pub(super) batch: String,
    #[command(flatten)]
    pub(super) connect: ConnectArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub(super) format: ResultsFormat,
    /// Write the results to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub(super) out: Option<std::path::PathBuf>,
    /// Only results with this status (solved, timeout, over_target, none_within, invalid,
    /// cancelled, skipped, failed).
    #[arg(long)]
    pub(super) status: Option<String>,
    /// Per-chunk counts instead of results: for each chunk of 1000 consecutive lines, its
    /// first and last state index, its lines, and how many were solved in each length, left
    /// unsolved and over the target (a range or sample batch with `--keep histogram`).
    #[arg(long, alias = "per-chunk", conflicts_with = "status")]
    pub(super) chunks: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct BatchArgs {
    /// The batch.
    pub(super) batch: String,
    #[command(flatten)]
    pub(super) connect: ConnectArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct RevokeArgs {
    /// The worker, as results show it in `worker`: its credential's name (a named worker
    /// credential, which is refused too), or its `--name`.
    pub(super) worker: String,
    #[command(flatten)]
    pub(super) connect: ConnectArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct LookupArgs {
    /// A move sequence or facelet string.
    pub(super) position: String,
    #[command(flatten)]
    pub(super) connect: ConnectArgs,
}
