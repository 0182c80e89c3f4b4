//! One module per subcommand.

pub(crate) mod bench;
pub(crate) mod bench_coordinator;
pub(crate) mod bench_walk;
pub(crate) mod certs;
pub(crate) mod client;
pub(crate) mod connect;
pub(crate) mod coordinator;
pub(crate) mod coset;
pub(crate) mod flags;
pub(crate) mod index;
pub(crate) mod process;
pub(crate) mod run;
pub(crate) mod scramble;
pub(crate) mod solve;
pub(crate) mod tables;
pub(crate) mod worker;

use cubefleet_proto::goal::Goal;
use cubefleet_proto::question::{Algorithm, Count, Metric, MoveSet, Question};

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
    /// depth-limited searches of the whole cube (`cubefleet_search::reads_bound_table`).
    pub(crate) fn load_for(&self, mode: &Question) -> anyhow::Result<cubefleet_tables::Tables> {
        let optimal_bound = cubefleet_search::reads_bound_table(mode);
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

/// What to search for: two-phase to a length (default), optimal, or depth-limited; with
/// `--moves`, over a set of turns; with `--to`, to another position than solved; with
/// `--goal`, to a partial goal. The flags make one [`Question`], the mode type every side
/// shares ([`ModeArgs::question`]).
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
        value_parser = clap::value_parser!(u32).range(0..=i64::from(cubefleet_proto::question::MAX_DEPTH))
    )]
    pub(crate) max_depth: Option<u32>,
    /// Metric of `--optimal` and `--max-depth`: half turns (htm, the default) or quarter turns
    /// (qtm). Only with one of them: two-phase searches count half turns, and refuse the flag.
    #[arg(long, value_enum, value_name = "METRIC", requires = "exact_search")]
    pub(crate) metric: Option<MetricArg>,
    /// Solve with these turns only (with `--optimal` or `--max-depth`): faces separated by
    /// commas, each all its turns (`R`) or its half turn only (`R2`), e.g. `R,U`,
    /// `U,D,R2,L2,F2,B2`; or `-B` for every face but B. A position the set cannot solve is
    /// answered `unreachable` when an invariant shows it.
    #[arg(
        long,
        value_name = "SET",
        value_parser = MoveSet::parse,
        requires = "exact_search",
        allow_hyphen_values = true
    )]
    pub(crate) moves: Option<MoveSet>,
    /// Solve to this position instead of the solved cube (in every mode): a move sequence or a
    /// facelet string, read as positions are, e.g. `--to "R U"`. A solution applied to the
    /// position gives this one.
    #[arg(long, value_name = "POSITION", value_parser = target_index)]
    pub(crate) to: Option<u128>,
    /// The N shortest distinct solutions (with `--optimal` or `--max-depth`; 1 to 1000):
    /// every one of the optimal length, then longer ones, until N; canonical sequences (no
    /// face twice in a row, of two opposite faces U before D, R before L, F before B), in
    /// order (shortest first, then by turns), in `solutions` with their `count`.
    #[arg(
        long,
        value_name = "N",
        requires = "exact_search",
        conflicts_with = "all_optimal",
        value_parser = clap::value_parser!(u32)
            .range(1..=i64::from(cubefleet_proto::question::MAX_SOLUTIONS))
    )]
    pub(crate) solutions: Option<u32>,
    /// Every optimal solution (with `--optimal` or `--max-depth`), canonical, in order, in
    /// `solutions` (the first 1000 when there are more) with their `count`.
    #[arg(long, requires = "exact_search")]
    pub(crate) all_optimal: bool,
    /// With `--all-optimal`: the count of optimal solutions alone, without the list.
    #[arg(long, requires = "all_optimal")]
    pub(crate) count_only: bool,
    /// Reach a partial goal instead of the solved cube (with `--optimal` or `--max-depth`):
    /// `cross` (the four D edges, the bottom cross), `xcross` (the cross and any one F2L pair),
    /// `f2l` (the D layer and the E-slice edges), `eo` (every edge oriented, F/B axis), `dr`
    /// (corners and edges oriented, E-slice edges in the slice: <U,D,R2,L2,F2,B2>), `corners`,
    /// `edges`; or pieces, `place:DF,DR,DFR;orient:UF,UB` (placed: home and untwisted;
    /// oriented: whichever piece is there, oriented); or a facelet string whose ignored
    /// stickers are `.`. Results name the goal and where it was reached.
    #[arg(
        long,
        value_name = "GOAL",
        value_parser = cubefleet_search::goal::parse,
        requires = "exact_search",
        conflicts_with = "to"
    )]
    pub(crate) goal: Option<Goal>,
    /// With `--goal`: `any-face` for the shortest over the whole-cube rotations that move the
    /// goal to each face (the six faces for cross, xcross and f2l; the three axes for eo and
    /// dr; the 24 rotations for pieces): the colour-neutral goal.
    #[arg(long, value_enum, value_name = "WHERE", requires = "goal")]
    pub(crate) on: Option<OnArg>,
}

/// Where a goal may be reached (`--on`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnArg {
    /// On any face (the shortest over the rotations of the whole cube).
    AnyFace,
}

/// The state index of the position `text` writes (`--to`): a move sequence or a facelet
/// string, read as every command reads a position; refused with the reason.
fn target_index(text: &str) -> Result<u128, String> {
    cubefleet_tables::parse_position(text, cubefleet_tables::InputFormat::Auto)
        .map(|cube| cubefleet_tables::index::index_of(&cube))
        .map_err(|e| format!("{text:?} is not a position: {e}"))
}

impl ModeArgs {
    /// The question the flags ask, with a time budget per position of `timeout` seconds:
    /// what `solve` searches and what `run` and `submit` send (`Question::to_wire`). The flags'
    /// own parsers keep every value in range; the question checks their combination again.
    pub(crate) fn question(&self, timeout: Option<f64>) -> anyhow::Result<Question> {
        let algorithm = match (self.optimal, self.max_depth) {
            (true, _) => Algorithm::Optimal,
            (false, Some(max_depth)) => Algorithm::DepthLimited { max_depth },
            (false, None) => Algorithm::TwoPhase {
                max_length: self.max_length,
            },
        };
        let metric = self.metric.map_or(Metric::Htm, Metric::from);
        Question::new(
            algorithm,
            metric,
            self.moves.unwrap_or(MoveSet::ALL),
            timeout,
        )
        .and_then(|q| q.with_target(self.to.unwrap_or(0)))
        .and_then(|q| {
            let any_face = self.on == Some(OnArg::AnyFace);
            q.with_goal(self.goal.map(|g| g.on_any_face(any_face)))?
                .with_count(Count::from_options(
                    self.solutions,
                    self.all_optimal,
                    self.count_only,
                )?)
        })
        .map_err(|e| anyhow::anyhow!(e.for_flags()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flags make the question they name, and it goes through the wire unchanged.
    #[test]
    fn the_flags_make_their_question() {
        let flags = |max_length, optimal, max_depth, metric, moves: Option<&str>| ModeArgs {
            max_length,
            optimal,
            max_depth,
            metric,
            moves: moves.map(|m| MoveSet::parse(m).expect("set")),
            to: None,
            goal: None,
            on: None,
            solutions: None,
            all_optimal: false,
            count_only: false,
        };
        for args in [
            flags(20, false, None, None, None),
            flags(17, false, None, None, None),
            flags(20, true, None, None, None),
            flags(20, true, None, Some(MetricArg::Qtm), Some("R,U")),
            flags(20, false, Some(12), None, Some("-B")),
            flags(20, false, Some(0), Some(MetricArg::Qtm), None),
        ] {
            for timeout in [None, Some(2.5)] {
                let q = args.question(timeout).expect("in range");
                assert_eq!(Question::from_wire(&q.to_wire()), Ok(q), "{args:?}");
                assert_eq!(q.moves().is_all(), args.moves.is_none());
                assert_eq!(q.is_two_phase(), !args.optimal && args.max_depth.is_none());
            }
        }
        let e = flags(20, false, None, None, Some("R,U")).question(None);
        assert!(e.is_err_and(|e| e.to_string().starts_with("--moves")));
        // --to: the position's state index, the solved cube none
        let r_u = target_index("R U").expect("a position");
        let to = ModeArgs {
            to: Some(r_u),
            ..flags(20, true, None, None, Some("R,U"))
        };
        let q = to.question(None).expect("in range");
        assert_eq!(q.target(), r_u);
        assert_eq!(Question::from_wire(&q.to_wire()), Ok(q));
        assert_eq!(target_index("R R'"), Ok(0));
        assert_eq!(
            target_index("UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"),
            Ok(0)
        );
        assert!(target_index("R4").is_err_and(|e| e.contains("R4")));
        // how many solutions: N, all optimal ones, their count; two-phase refuses them
        for (solutions, all_optimal, count_only, want) in [
            (Some(1), false, false, Count::One),
            (Some(7), false, false, Count::Shortest(7)),
            (None, true, false, Count::AllOptimal),
            (None, true, true, Count::CountOnly),
        ] {
            let many = ModeArgs {
                solutions,
                all_optimal,
                count_only,
                ..flags(20, false, Some(9), None, None)
            };
            let q = many.question(None).expect("in range");
            assert_eq!(q.count(), want);
            assert_eq!(Question::from_wire(&q.to_wire()), Ok(q));
            let two_phase = ModeArgs {
                optimal: false,
                max_depth: None,
                ..many
            };
            let e = two_phase.question(None);
            assert_eq!(e.is_err(), want.is_many(), "{want:?}");
        }
    }
}
