//! `cubefleet`: solve Rubik's Cube positions in bulk. Each subcommand is thin glue over the
//! library crates (`cubefleet-tables`, `cubefleet-worker`, `cubefleet-coordinator`).

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::prelude::*;

/// The store (sled) and the gRPC stack allocate and free small blocks at a high rate; mimalloc
/// serves them markedly faster than the system allocator (see docs/benchmarks-history.md, job system). It is
/// built without transparent huge pages (`no_thp`): with them, every heap region first touched
/// or purged and touched again cost the kernel a 2 MiB page clear, a third of `run`'s overhead.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's option `purge_delay` by its number (the crate names no constant for it in
/// mimalloc 3; the option list keeps retired options in place, so numbers do not move).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps memory the program frees with the allocator until the process ends, for a command
/// that ends when its work does (`run`). By default mimalloc hands emptied pages back to the
/// kernel after a delay, and at exit the whole heap; each hand-back (`madvise`) makes every
/// core running the process flush its TLB, which on a virtual machine cost `run` a few percent
/// of its job system's time. Peak memory is unchanged; only its return is put off.
pub(crate) fn keep_freed_memory() {
    // SAFETY: setting an option stores a number; -1 ("never purge") is a documented value of
    // this option, and the allocator reads it at its next purge.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

mod cmd;
mod output;
mod parquet;
mod progress;

/// Solve Rubik's Cube positions in bulk: near-optimal (two-phase) or proven optimal.
#[derive(Parser)]
#[command(name = "cubefleet", version, about, propagate_version = true)]
struct Cli {
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Log more: `-v` the internal steps of every command (`info`), `-vv` debugging detail.
    /// `RUST_LOG` (e.g. `RUST_LOG=cubefleet_coordinator=debug`) overrides it.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Solve positions here and now (arguments, or one per line on stdin).
    Solve(cmd::solve::Args),
    /// Build, inspect or verify the lookup tables.
    #[command(subcommand)]
    Tables(cmd::tables::Command),
    /// Print random-state scrambles.
    Scramble(cmd::scramble::Args),
    /// The project's own benchmarks.
    #[command(subcommand)]
    Bench(cmd::bench::Command),
    /// Solve a file on this machine: coordinator and workers in one process, results stored.
    Run(cmd::run::Args),
    /// Serve the job system over gRPC.
    Coordinator(cmd::coordinator::Args),
    /// Join a coordinator and solve what it hands out.
    Worker(cmd::worker::Args),
    /// Send a batch to a coordinator; prints the batch id.
    Submit(cmd::client::SubmitArgs),
    /// Progress of one batch or all.
    Status(cmd::client::StatusArgs),
    /// Export a batch's results.
    Results(cmd::client::ResultsArgs),
    /// Cancel a batch.
    Cancel(cmd::client::BatchArgs),
    /// Look a position up in the store (any batch, any symmetric copy).
    Lookup(cmd::client::LookupArgs),
    /// Refuse a worker from now on and search again every answer resting on its claims.
    Revoke(cmd::client::RevokeArgs),
    /// Print the state index of positions (a number below 43,252,003,274,489,856,000).
    Index(cmd::index::IndexArgs),
    /// Print the position (facelet string) with each state index.
    Position(cmd::index::PositionArgs),
    /// Make a private CA and a coordinator's TLS certificate for the names given.
    Certs(cmd::certs::Args),
    /// Every position of a coset of H = <U, D, R2, L2, F2, B2> at once.
    #[command(subcommand)]
    Coset(cmd::coset::Command),
}

impl Command {
    /// True for the commands that serve until stopped (coordinator, worker) and the
    /// benchmarks: their log is their output, `info` by default. The others print what they
    /// do themselves and log only warnings unless asked (`-v`).
    fn logs_by_default(&self) -> bool {
        matches!(
            self,
            Command::Coordinator(_) | Command::Worker(_) | Command::Bench(_)
        )
    }
}

/// The log level when `RUST_LOG` is not set: `info` for the servers, `warn` for the other
/// commands, one step more for each `-v`.
fn log_level(serves: bool, verbose: u8) -> &'static str {
    match (serves, verbose) {
        (false, 0) => "warn",
        (true, 0) | (false, 1) => "info",
        (_, 2) | (true, 1) => "debug",
        _ => "trace",
    }
}

/// Colour codes in the log only on a terminal, and never with `NO_COLOR` set to anything
/// (<https://no-color.org>): a log in a file or a pipe stays plain text.
fn log_in_colour(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// What is logged: `RUST_LOG` when set (a level, `target=level` pairs, or both, comma
/// separated: `info`, `cubefleet_coordinator=debug,warn`), else every target at `level`. A
/// `RUST_LOG` that does not read is said once on stderr, and `level` is used.
fn log_filter(rust_log: Option<String>, level: &str) -> Targets {
    let default = || Targets::new().with_default(level.parse().unwrap_or(LevelFilter::WARN));
    match rust_log {
        Some(text) if !text.trim().is_empty() => text.parse().unwrap_or_else(|e| {
            eprintln!("RUST_LOG={text:?} is not a filter ({e}): logging at {level}");
            default()
        }),
        _ => default(),
    }
}

fn main() -> ExitCode {
    use std::io::IsTerminal;
    let cli = Cli::parse();
    let level = log_level(cli.command.logs_by_default(), cli.verbose);
    let filter = log_filter(std::env::var("RUST_LOG").ok(), level);
    let colour = log_in_colour(
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR"),
    );
    let layer = tracing_subscriber::fmt::layer()
        .with_ansi(colour)
        .with_writer(std::io::stderr);
    let logs = tracing_subscriber::registry().with(filter);
    match cli.log_format {
        LogFormat::Text => logs.with(layer).init(),
        LogFormat::Json => logs.with(layer.json()).init(),
    }
    let result = match cli.command {
        Command::Solve(a) => cmd::solve::run(a),
        Command::Tables(c) => cmd::tables::run(c),
        Command::Scramble(a) => cmd::scramble::run(a),
        Command::Bench(c) => cmd::bench::run(c),
        Command::Run(a) => cmd::run::run(a),
        Command::Coordinator(a) => cmd::coordinator::run(a),
        Command::Worker(a) => cmd::worker::run(a),
        Command::Submit(a) => cmd::client::submit(a),
        Command::Status(a) => cmd::client::status(a),
        Command::Results(a) => cmd::client::results(a),
        Command::Cancel(a) => cmd::client::cancel(a),
        Command::Lookup(a) => cmd::client::lookup(a),
        Command::Revoke(a) => cmd::client::revoke(a),
        Command::Index(a) => cmd::index::index(a),
        Command::Position(a) => cmd::index::position(a),
        Command::Certs(a) => cmd::certs::run(a),
        Command::Coset(c) => cmd::coset::run(c),
    };
    match result {
        Ok(code) => code,
        // the reader of the output went away (`cubefleet solve ... | head`): nothing is wrong,
        // and everything a command stores was stored before it was printed. (Only a write to
        // standard output says so: a broken pipe to a coordinator is a failure.)
        Err(_) if output::stdout_closed() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn servers_log_info_and_the_other_commands_warnings_unless_asked() {
        assert_eq!(super::log_level(true, 0), "info");
        assert_eq!(super::log_level(false, 0), "warn");
        assert_eq!(super::log_level(false, 1), "info");
        assert_eq!(super::log_level(true, 1), "debug");
        assert_eq!(super::log_level(false, 9), "trace");
    }

    #[test]
    fn rust_log_is_read_as_targets_and_levels() {
        use tracing::Level;
        let f = super::log_filter(None, "warn");
        assert!(f.would_enable("cubefleet", &Level::WARN));
        assert!(!f.would_enable("cubefleet", &Level::INFO));
        let f = super::log_filter(Some("cubefleet_coordinator=debug,error".into()), "warn");
        assert!(f.would_enable("cubefleet_coordinator::core", &Level::DEBUG));
        assert!(!f.would_enable("cubefleet_worker", &Level::WARN));
        assert!(f.would_enable("cubefleet_worker", &Level::ERROR));
        // one that does not read: the command's level
        let f = super::log_filter(Some("cubefleet=loud".into()), "info");
        assert!(f.would_enable("cubefleet", &Level::INFO));
        assert!(!f.would_enable("cubefleet", &Level::DEBUG));
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(super::log_in_colour(true, None));
        assert!(super::log_in_colour(true, Some("".into())));
        assert!(!super::log_in_colour(true, Some("1".into())));
        assert!(!super::log_in_colour(false, None));
    }

    #[test]
    fn the_purge_delay_option_has_the_number_used() {
        // SAFETY: reading an option returns a number.
        let delay = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        // purge_delay's default in mimalloc 3 (options.c), 1000 ms; the options next to it
        // default otherwise
        assert_eq!(delay, 1000);
        // SAFETY: as above.
        let next = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY + 1) };
        assert_ne!(next, 1000);
    }
}
