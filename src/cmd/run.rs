//! `cubefleet run FILE`: the embedded default. One process runs a coordinator on a sled store
//! and local search threads, talking gRPC over in-memory pipes with the same code as a cluster; the
//! batch id is derived from the file's contents and the mode, so running the same file again
//! resumes from the store instead of starting over.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use cubefleet_proto::BatchSpec;
use cubefleet_worker::remote::{mode_to_proto, GrpcCoordinator};
use cubefleet_worker::runtime::{self, RuntimeConfig};
use tokio_util::sync::CancellationToken;

use super::client::{export, submit_file, watch, ResultsFormat};
use super::connect::{runtime, shutdown_signal, Embedded};
use super::{ModeArgs, TablesArgs};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// File of positions, one per line.
    file: PathBuf,
    /// Directory of the sled store.
    #[arg(long, default_value = "cubefleet-data")]
    data: PathBuf,
    /// Search threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    mode: ModeArgs,
    /// Time budget per position, in seconds.
    #[arg(long)]
    timeout: Option<f64>,
    /// Write the results (JSON lines) here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    tables: TablesArgs,
}

/// A batch id naming this file's contents and mode: the same file and mode give the same id.
fn batch_id(args: &Args, mode: &cubefleet_proto::Mode) -> anyhow::Result<String> {
    let f = std::fs::File::open(&args.file)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    let mut h = crc32fast::Hasher::new();
    let mut lines = 0u64;
    for line in std::io::BufReader::new(f).lines() {
        h.update(line?.trim().as_bytes());
        h.update(b"\n");
        lines += 1;
    }
    h.update(&prost_mode_bytes(mode));
    Ok(format!("run-{:08x}-{lines}", h.finalize()))
}

fn prost_mode_bytes(mode: &cubefleet_proto::Mode) -> Vec<u8> {
    use prost::Message;
    mode.encode_to_vec()
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    // the tables load (or build) while the store opens and the file is submitted
    let loading = {
        let (tables, mode) = (args.tables.clone(), args.mode.mode());
        std::thread::spawn(move || tables.load_for(&mode))
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mode = mode_to_proto(&args.mode.mode(), args.timeout.map(Duration::from_secs_f64));
    let id = batch_id(&args, &mode)?;
    runtime()?.block_on(async move {
        let embedded = Embedded::in_process(&args.data).await?;
        let client = embedded.client.clone();
        let spec = BatchSpec {
            batch_id: id.clone(),
            name: args.file.display().to_string(),
            mode: Some(mode),
            priority: 0,
        };
        let submission = {
            let (client, file) = (client.clone(), args.file.clone());
            tokio::spawn(async move { submit_file(&client, &file, spec).await })
        };
        let tables = Arc::new(
            tokio::task::spawn_blocking(move || loading.join())
                .await?
                .map_err(|_| anyhow::anyhow!("loading the tables panicked"))??,
        );
        let stop_worker = CancellationToken::new();
        let worker = {
            let coordinator = GrpcCoordinator::register(
                client.clone(),
                "embedded".into(),
                threads as u32,
                tables.fingerprint(),
            )
            .await?;
            let config = RuntimeConfig {
                threads,
                heartbeat: Duration::from_secs(2),
                grace: Duration::from_secs(2),
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
        eprintln!(
            "batch {id}: {} lines ({} invalid, {} answered from the store)",
            submitted.total, submitted.invalid, submitted.from_store
        );
        let interrupted = tokio::select! {
            s = watch(&client, &id) => { s?; false }
            _ = shutdown_signal() => true,
        };
        stop_worker.cancel();
        let _ = worker.await;
        if interrupted {
            eprintln!("interrupted: everything finished so far is stored; run again to resume");
            embedded.stop().await?;
            return Ok(ExitCode::from(130));
        }
        let final_status = client
            .batches
            .clone()
            .get_batch(cubefleet_proto::BatchRef {
                batch_id: id.clone(),
            })
            .await?
            .into_inner();
        let mut out: Box<dyn Write> = match &args.out {
            Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
            None => Box::new(std::io::BufWriter::new(std::io::stdout())),
        };
        export(&client, &id, None, ResultsFormat::Jsonl, &mut out).await?;
        drop(out);
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
        embedded.stop().await?;
        Ok(if final_status.invalid > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}
