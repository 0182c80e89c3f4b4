//! `cubefleet run FILE` (or `--range START..END`, `--sample N --seed S`): the embedded
//! default. One process runs a coordinator on a sled store and local search threads. Both
//! sides call the coordinator's `Core` directly, through the same code as its gRPC service:
//! the file is submitted with `Core::submit` and watched with `Core::watch`, and the worker
//! runtime, the same as `cubefleet worker`'s, leases and reports through
//! [`LocalCoordinator`]. Results are written in line order as they finish, in bounded memory
//! ([`export`]), not all at the end. The batch id is derived from the file's contents (or the
//! range's or sample's definition) and the mode ([`id`]), so running the same input again
//! resumes from the store instead of starting over.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use cubefleet_proto::BatchSpec;
use cubefleet_worker::local::LocalCoordinator;
use cubefleet_worker::runtime::{self, RuntimeConfig};
use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;

use super::client::{content_hash, read_chunks, show_progress, thousands, InputArgs, KeepArg};
use super::process::{runtime, shutdown_signal};
use super::{ModeArgs, TablesArgs};

mod export;
mod id;
use export::{export_following, Limits};
use id::{batch_id, definition_hash};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// Directory of the sled store.
    #[arg(long, default_value = "cubefleet-data")]
    data: PathBuf,
    /// Search threads (default: all cores).
    #[arg(long, value_parser = super::flags::threads)]
    threads: Option<usize>,
    #[command(flatten)]
    mode: ModeArgs,
    /// Time budget per position, in seconds (more than 0; default: none).
    #[arg(long, value_parser = super::flags::timeout)]
    timeout: Option<f64>,
    /// Write the results (JSON lines) here instead of stdout; a file named `*.parquet` gets
    /// them as Parquet (with `--keep histogram`, the length histogram).
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    tables: TablesArgs,
}

/// Time between the embedded worker's heartbeats: its leases are the core's own (30 s), and
/// a heartbeat in the same process costs a lock, so several per lease are cheap.
const EMBEDDED_HEARTBEAT: Duration = Duration::from_secs(2);

/// Time the embedded worker's running jobs get to finish once `run` is stopped: a person
/// pressed Ctrl-C and waits; a job cut short is handed back and resumed by the next `run`.
const EMBEDDED_GRACE: Duration = Duration::from_secs(2);

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::keep_freed_memory();
    // the tables load (or build) while the store opens and the file is submitted
    let question = args.input.question(&args.mode, args.timeout)?;
    let loading = {
        let tables = args.tables.clone();
        std::thread::spawn(move || tables.load_for(&question))
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mode = question.to_wire();
    // the definition first: a refused one (a bad range, a file with --keep histogram) is
    // told before the file is read
    let mut spec = args.input.define(BatchSpec {
        name: args.input.name()?,
        mode: Some(mode),
        ..BatchSpec::default()
    })?;
    let states = args.input.states()?;
    // a file: its lines' hash; a range or sample: its definition's
    let content = match (args.input.lines(), states) {
        (Some(file), _) => content_hash(file)?.ok_or_else(|| {
            anyhow::anyhow!("run reads a file, not stdin: save the lines to a file")
        })?,
        (None, Some(s)) => definition_hash(&s, args.input.keep == KeepArg::Histogram),
        (None, None) => anyhow::bail!("give a FILE, --range or --sample"),
    };
    let id = batch_id(&content, &mode);
    let histogram_only = args.input.keep == KeepArg::Histogram;
    spec.batch_id = id.clone();
    if args.input.lines().is_some() {
        spec.content_hash = content.to_vec();
    }
    runtime()?.block_on(async move {
        let core =
            cubefleet_coordinator::open(&cubefleet_coordinator::Config::new(&args.data)).await?;
        // cancelled when the coordinator stops: its sweeper ends and a lease answers at once
        let stopping = CancellationToken::new();
        let sweeper = core.sweep_leases(stopping.clone());
        // the batch as an earlier run of the same input left it, if one did
        let earlier = {
            let (core, id) = (core.clone(), id.clone());
            tokio::task::spawn_blocking(move || core.status(&id).ok()).await?
        };
        let submission = {
            let (core, file) = (core.clone(), args.input.lines().cloned());
            tokio::spawn(async move {
                let Some(file) = file else {
                    // a range or sample: the definition alone, no lines
                    let none = tokio_stream::empty::<Result<Vec<String>, tonic::Status>>();
                    return anyhow::Ok(core.submit(spec, none).await?);
                };
                let (chunks, reader) = read_chunks(&file);
                let submitted = core.submit(spec, chunks.map(Ok)).await;
                reader.await??;
                anyhow::Ok(submitted?)
            })
        };
        let tables = Arc::new(
            tokio::task::spawn_blocking(move || loading.join())
                .await?
                .map_err(|_| anyhow::anyhow!("loading the tables panicked"))??,
        );
        tracing::debug!("tables ready");
        let stop_worker = CancellationToken::new();
        let worker = {
            let (worker_id, _) =
                core.register("embedded".into(), threads as u32, tables.fingerprint());
            let coordinator = LocalCoordinator::new(core.clone(), worker_id, stopping.clone());
            let config = RuntimeConfig {
                threads,
                heartbeat: EMBEDDED_HEARTBEAT,
                grace: EMBEDDED_GRACE,
                ..RuntimeConfig::default()
            };
            tokio::spawn(runtime::run(
                Arc::new(coordinator),
                tables.clone(),
                config,
                stop_worker.clone(),
            ))
        };
        let submitted = submission.await??;
        tracing::debug!("batch submitted");
        // the lines to write: a file's, or the jobs a range or sample makes
        let lines = states.map_or(submitted.total, |s| s.lines());
        if let Some(before) = earlier {
            // a run of this input was stopped before: only the rest is searched
            let answered = before.finished() - before.cancelled.min(before.finished());
            eprintln!(
                "batch {id}: resuming: {} of {} lines already answered",
                thousands(answered),
                thousands(lines)
            );
        } else {
            eprintln!(
                "batch {id}: {} lines ({} invalid, {} answered from the store)",
                thousands(lines),
                thousands(submitted.invalid),
                thousands(submitted.from_store)
            );
        }
        // the results go out as they finish, in line order
        let out: Box<dyn Write + Send> = match &args.out {
            Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
            None => Box::new(std::io::BufWriter::new(crate::output::Stdout::new())),
        };
        let all_finished = CancellationToken::new();
        let format = if args
            .out
            .as_deref()
            .is_some_and(crate::parquet::is_parquet_path)
        {
            super::client::ResultsFormat::Parquet
        } else {
            super::client::ResultsFormat::Jsonl
        };
        let exporter = tokio::spawn(export_following(
            core.clone(),
            id.clone(),
            // with --keep histogram, no result lines: the histogram at the end
            if histogram_only { 0 } else { lines },
            super::client::ResultsWriter::new(format, out)?.for_question(&question),
            all_finished.clone(),
            Limits::RUN,
        ));
        let progress = core.watch(id.clone(), stopping.clone()).await?;
        let interrupted = tokio::select! {
            s = show_progress(progress) => { s?; false }
            _ = shutdown_signal() => true,
        };
        tracing::debug!("batch finished");
        if !interrupted {
            all_finished.cancel();
        }
        stop_worker.cancel();
        let _ = worker.await;
        let stop = || async {
            stopping.cancel();
            let _ = sweeper.await;
            cubefleet_coordinator::stopped(core.clone()).await
        };
        if interrupted {
            exporter.abort();
            eprintln!("interrupted: everything finished so far is stored; run again to resume");
            stop().await?;
            return Ok(ExitCode::from(130));
        }
        exporter.await??;
        tracing::debug!("results written");
        let final_status = {
            let (core, id) = (core.clone(), id.clone());
            tokio::task::spawn_blocking(move || core.status(&id)).await??
        };
        if histogram_only
            && args
                .out
                .as_deref()
                .is_some_and(crate::parquet::is_parquet_path)
        {
            if let Some(p) = &args.out {
                cubefleet_columns::write_histogram(
                    std::fs::File::create(p)?,
                    &final_status.length_histogram,
                )?;
            }
        } else if histogram_only {
            let mut out: Box<dyn Write + Send> = match &args.out {
                Some(p) => Box::new(std::fs::File::create(p)?),
                None => Box::new(crate::output::Stdout::new()),
            };
            writeln!(
                out,
                "{}",
                serde_json::json!({
                    "batch": id,
                    "lines": lines,
                    "done": final_status.done,
                    "length_histogram": final_status.length_histogram,
                })
            )?;
            out.flush()?;
        }
        if question.is_coset() {
            eprintln!(
                "{} cosets solved, {} failed; positions by depth, summed:",
                final_status.done, final_status.failed
            );
            for (depth, n) in final_status.coset_counts.iter().enumerate() {
                eprintln!("  {depth:>2}: {n}");
            }
            eprintln!("  unsolved: {}", final_status.coset_unsolved);
        } else {
            let solved: u64 = final_status.length_histogram.iter().sum();
            let total_len: u64 = final_status
                .length_histogram
                .iter()
                .enumerate()
                .map(|(l, n)| l as u64 * n)
                .sum();
            eprintln!(
                "solved {solved}, invalid {}, mean length {:.2}",
                final_status.invalid,
                total_len as f64 / solved.max(1) as f64
            );
            for (l, n) in final_status.length_histogram.iter().enumerate() {
                if *n > 0 {
                    eprintln!("  {l:>2} moves: {n}");
                }
            }
        }
        stop().await?;
        Ok(if final_status.invalid > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}
