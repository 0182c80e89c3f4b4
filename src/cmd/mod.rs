//! One module per subcommand.

pub(crate) mod bench;
pub(crate) mod bench_coordinator;
pub(crate) mod bench_walk;
pub(crate) mod certs;
pub(crate) mod client;
pub(crate) mod connect;
pub(crate) mod coordinator;
pub(crate) mod embedded;
pub(crate) mod flags;
pub(crate) mod index;
pub(crate) mod process;
pub(crate) mod run;
pub(crate) mod scramble;
pub(crate) mod solve;
pub(crate) mod tables;
pub(crate) mod worker;

use cubefleet_search::optimal::Metric;
use cubefleet_search::Mode;

use std::path::PathBuf;

/// Where the tables live and whether missing ones may be built.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct TablesArgs {
    /// Tables directory (default: $CUBEFLEET_TABLES, else the user's cache directory).
    #[arg(long = "tables", value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
    /// Refuse to build missing tables (fail with a message instead).
    #[arg(long)]
    pub(crate) no_build: bool,
}

impl TablesArgs {
    pub(crate) fn dir(&self) -> PathBuf {
        self.dir
            .clone()
            .unwrap_or_else(cubefleet_tables::default_dir)
    }

    /// The tables, with the giant or huge table when one was built (for optimal searches).
    pub(crate) fn load(&self) -> anyhow::Result<cubefleet_tables::Tables> {
        crate::progress::load_tables(&self.dir(), !self.no_build, true)
    }

    /// The tables a search of `mode` reads: the giant or huge table only for optimal and
    /// depth-limited searches.
    pub(crate) fn load_for(
        &self,
        mode: &cubefleet_search::Mode,
    ) -> anyhow::Result<cubefleet_tables::Tables> {
        let optimal_bound = !matches!(mode, cubefleet_search::Mode::TwoPhase { .. });
        let tables = crate::progress::load_tables(&self.dir(), !self.no_build, optimal_bound)?;
        if optimal_bound && tables.optimal_bound.is_none() {
            eprintln!("{}", no_bound_table_note(&self.dir()));
        }
        Ok(tables)
    }
}

/// What an optimal or depth-limited search without a huge, giant or colossal table says at
/// its start: it will be slow, and which table makes it fast at what cost (BENCHMARKS.md's
/// figures: one thread, random states, 2 cores).
pub(crate) fn no_bound_table_note(dir: &std::path::Path) -> String {
    format!(
        "note: {} holds no huge, giant or colossal table, so this search bounds its depth with \
         the phase-1 table alone: a random position can take longer than any timeout. Build \
         one once: `cubefleet tables build --huge` (about 1 min, +0.9 GB; about 40 s a random \
         position), `--giant` (3.4 min, +2.5 GB; about 19 s) or `--colossal` (3-13 min, \
         +7.6 GB and 8.8 GB of memory to build; about 12 s). Two-phase (no --optimal) finds a \
         solution of at most 20 moves in milliseconds.",
        dir.display()
    )
}

/// How solution lengths are counted.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum MetricArg {
    /// Half-turn metric: every face turn counts 1.
    Htm,
    /// Quarter-turn metric: a half turn counts 2.
    Qtm,
}

impl From<MetricArg> for Metric {
    fn from(m: MetricArg) -> Self {
        match m {
            MetricArg::Htm => Metric::Htm,
            MetricArg::Qtm => Metric::Qtm,
        }
    }
}

/// What to search for: two-phase to a length (default), optimal, or depth-limited.
#[derive(clap::Args, Clone, Debug)]
#[command(group(clap::ArgGroup::new("exact_search").args(["optimal", "max_depth"]).multiple(true)))]
pub(crate) struct ModeArgs {
    /// Stop at the first solution with at most this many moves (two-phase, 1 or more). When
    /// the search ends without one, with time to spare, the shortest found is given with status
    /// `over_target`.
    #[arg(
        long,
        default_value_t = cubefleet_proto::DEFAULT_MAX_LENGTH,
        conflicts_with_all = ["optimal", "max_depth"],
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub(crate) max_length: u32,
    /// Find a proven shortest solution (optimal solver).
    #[arg(long, conflicts_with = "max_depth")]
    pub(crate) optimal: bool,
    /// Find the shortest solution within N moves (0 to 40), or answer `none_within`.
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(0..=i64::from(flags::MAX_DEPTH))
    )]
    pub(crate) max_depth: Option<u32>,
    /// Metric of `--optimal` and `--max-depth`: half turns (htm, the default) or quarter turns
    /// (qtm). Only with one of them: two-phase searches count half turns, and refuse the flag.
    #[arg(long, value_enum, value_name = "METRIC", requires = "exact_search")]
    pub(crate) metric: Option<MetricArg>,
}

impl ModeArgs {
    /// The search the flags ask for.
    pub(crate) fn mode(&self) -> Mode {
        let metric = self.metric().into();
        match (self.optimal, self.max_depth) {
            (true, _) => Mode::Optimal { metric },
            (false, Some(max_depth)) => Mode::DepthLimited { max_depth, metric },
            (false, None) => Mode::TwoPhase {
                max_length: self.max_length,
            },
        }
    }

    /// The metric asked for: half turns unless `--metric` says otherwise.
    fn metric(&self) -> MetricArg {
        self.metric.unwrap_or(MetricArg::Htm)
    }

    /// The search the flags ask for as the protocol says it, with a time budget per position:
    /// what the client commands send (they need nothing of the worker crate).
    pub(crate) fn proto(&self, timeout: Option<std::time::Duration>) -> cubefleet_proto::Mode {
        use cubefleet_proto::{Metric as PMetric, Mode as PMode};
        let metric = match self.metric() {
            MetricArg::Htm => PMetric::Htm,
            MetricArg::Qtm => PMetric::Qtm,
        };
        match (self.optimal, self.max_depth) {
            (true, _) => PMode::optimal(metric),
            (false, Some(max_depth)) => PMode::depth_limited(max_depth, metric),
            (false, None) => PMode::two_phase(self.max_length),
        }
        .with_timeout(timeout)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The client's protocol mode is the worker's conversion of the local search the same
    /// flags ask for.
    #[test]
    fn the_protocol_mode_of_the_flags_is_their_search_s() {
        let flags = |max_length, optimal, max_depth, metric| ModeArgs {
            max_length,
            optimal,
            max_depth,
            metric,
        };
        for args in [
            flags(20, false, None, None),
            flags(17, false, None, None),
            flags(20, true, None, None),
            flags(20, true, None, Some(MetricArg::Qtm)),
            flags(20, false, Some(12), None),
            flags(20, false, Some(0), Some(MetricArg::Qtm)),
        ] {
            for timeout in [None, Some(Duration::from_millis(2500))] {
                assert_eq!(
                    args.proto(timeout),
                    cubefleet_worker::remote::mode_to_proto(&args.mode(), timeout),
                    "{args:?}"
                );
            }
        }
    }
}
