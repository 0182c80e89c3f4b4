//! The client commands: `submit`, `status`, `results`, `cancel`, `lookup`.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use cubefleet_proto::client::Client;
use cubefleet_proto::{
    submit_request, BatchRef, BatchSpec, BatchStatus, JobResult, JobState, LineChunk,
    ListBatchesRequest, LookupRequest, ResultsRequest, SubmitRequest,
};
use cubefleet_worker::remote::mode_to_proto;
use indicatif::{ProgressBar, ProgressStyle};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};

use super::connect::{runtime, ConnectArgs};
use super::ModeArgs;
use crate::output::ResultLine;

/// Lines per submission message.
const CHUNK_LINES: usize = 2000;

#[derive(clap::Args, Debug)]
pub(crate) struct SubmitArgs {
    /// File of positions, one per line (`-` for stdin).
    file: PathBuf,
    #[command(flatten)]
    connect: ConnectArgs,
    #[command(flatten)]
    mode: ModeArgs,
    /// A name for the batch.
    #[arg(long)]
    name: Option<String>,
    /// Batch id (resubmitting an id continues that batch; default: a new id).
    #[arg(long)]
    batch_id: Option<String>,
    /// Higher runs first (negative values allowed: `--priority -1`).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    priority: i32,
    /// Time budget per position, in seconds.
    #[arg(long)]
    timeout: Option<f64>,
    /// Show a progress bar until the batch is finished.
    #[arg(long)]
    wait: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct StatusArgs {
    /// The batch (default: all batches).
    batch: Option<String>,
    #[command(flatten)]
    connect: ConnectArgs,
    /// Keep showing progress until the batch is finished.
    #[arg(long)]
    watch: bool,
    /// One JSON object per batch.
    #[arg(long)]
    json: bool,
}

/// Result export format.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum ResultsFormat {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header line.
    Csv,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ResultsArgs {
    /// The batch.
    batch: String,
    #[command(flatten)]
    connect: ConnectArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    format: ResultsFormat,
    /// Only results with this status (solved, timeout, none_within, invalid, cancelled,
    /// failed).
    #[arg(long)]
    status: Option<String>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct BatchArgs {
    /// The batch.
    batch: String,
    #[command(flatten)]
    connect: ConnectArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct LookupArgs {
    /// A move sequence or facelet string.
    position: String,
    #[command(flatten)]
    connect: ConnectArgs,
}

/// Reads `file` (`-`: stdin) on a blocking thread, as chunks of [`CHUNK_LINES`] trimmed lines
/// on the returned stream (a few chunks ahead at most, so memory stays constant). The task
/// ends with the outcome of the read; it fails when the stream is dropped before the end.
pub(crate) fn read_chunks(
    file: &Path,
) -> (
    ReceiverStream<Vec<String>>,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<String>>(4);
    let path = file.to_path_buf();
    let reader = tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
        let input: Box<dyn BufRead> = if path.as_os_str() == "-" {
            Box::new(std::io::BufReader::new(std::io::stdin()))
        } else {
            Box::new(std::io::BufReader::new(
                std::fs::File::open(&path)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
            ))
        };
        let send = |lines| {
            tx.blocking_send(lines)
                .map_err(|_| anyhow::anyhow!("submission aborted"))
        };
        let mut lines = Vec::with_capacity(CHUNK_LINES);
        for line in input.lines() {
            let line = line?;
            let trimmed = line.trim();
            // most lines have nothing to trim: kept as read
            lines.push(if trimmed.len() == line.len() {
                line
            } else {
                trimmed.to_string()
            });
            if lines.len() == CHUNK_LINES {
                send(std::mem::take(&mut lines))?;
            }
        }
        if !lines.is_empty() {
            send(lines)?;
        }
        Ok(())
    });
    (ReceiverStream::new(rx), reader)
}

/// Streams `file` to the coordinator as a batch (constant memory); returns the batch id.
pub(crate) async fn submit_file(
    client: &Client,
    file: &Path,
    spec: BatchSpec,
) -> anyhow::Result<cubefleet_proto::SubmitResponse> {
    let (chunks, reader) = read_chunks(file);
    let first = SubmitRequest {
        part: Some(submit_request::Part::Spec(spec)),
    };
    let requests = tokio_stream::once(first).chain(chunks.map(|lines| SubmitRequest {
        part: Some(submit_request::Part::Chunk(LineChunk { lines })),
    }));
    let response = client.batches.clone().submit(requests).await;
    reader.await??;
    Ok(response?.into_inner())
}

/// Shows a progress bar for a batch until it is finished; returns the final status.
pub(crate) async fn watch(client: &Client, batch: &str) -> anyhow::Result<BatchStatus> {
    let stream = client
        .batches
        .clone()
        .watch_batch(BatchRef {
            batch_id: batch.to_string(),
        })
        .await?
        .into_inner();
    show_progress(stream).await
}

/// Shows a progress bar over a batch's statuses (from a coordinator's watch) until the stream
/// ends; returns the last status.
pub(crate) async fn show_progress<E>(
    mut statuses: impl Stream<Item = Result<BatchStatus, E>> + Unpin,
) -> anyhow::Result<BatchStatus>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:40}] {pos}/{len} {msg} [{elapsed_precise}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let mut last = None;
    while let Some(s) = statuses.next().await {
        let s = s?;
        bar.set_length(s.total);
        bar.set_position(s.done + s.invalid + s.cancelled + s.failed);
        bar.set_message(format!("{:.1}/s, ETA {}", s.rate, eta_text(&s)));
        last = Some(s);
    }
    bar.finish();
    last.ok_or_else(|| anyhow::anyhow!("no progress received"))
}

fn status_json(s: &BatchStatus) -> serde_json::Value {
    serde_json::json!({
        "batch": s.batch_id,
        "name": s.name,
        "total": s.total,
        "queued": s.queued,
        "leased": s.leased,
        "done": s.done,
        "invalid": s.invalid,
        "cancelled": s.cancelled,
        "failed": s.failed,
        "rate": s.rate,
        "eta_seconds": s.eta_seconds,
        "length_histogram": s.length_histogram,
    })
}

/// The estimated time left, `-` while there is no rate to go by.
fn eta_text(s: &BatchStatus) -> String {
    if s.eta_seconds > 0.0 {
        format!("{:.0}s", s.eta_seconds)
    } else {
        "-".into()
    }
}

fn status_text(s: &BatchStatus) -> String {
    let hist: Vec<String> = s
        .length_histogram
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(l, n)| format!("{l}:{n}"))
        .collect();
    format!(
        "{} {}: total {} queued {} leased {} done {} invalid {} cancelled {} failed {}  {:.1}/s  ETA {}  lengths {}",
        s.batch_id,
        s.name,
        s.total,
        s.queued,
        s.leased,
        s.done,
        s.invalid,
        s.cancelled,
        s.failed,
        s.rate,
        eta_text(s),
        hist.join(" ")
    )
}

/// The user-facing line of a stored result (its strings move into the line).
pub(crate) fn result_line(r: JobResult) -> ResultLine {
    let has_length = r.has_length();
    let status = if r.status.is_empty() {
        match JobState::try_from(r.state) {
            Ok(JobState::Leased) => "leased",
            _ => "queued",
        }
        .to_string()
    } else {
        r.status
    };
    ResultLine {
        index: r.index as usize,
        input: r.input,
        status,
        solution: r.solution,
        length: has_length.then_some(r.length),
        optimal: r.optimal,
        millis: r.millis,
        error: (!r.error.is_empty()).then_some(r.error),
        lower_bound: (r.lower_bound > 0).then_some(r.lower_bound),
        nodes: (r.nodes > 0).then_some(r.nodes),
    }
}

/// Writes every result of a batch, in line order.
pub(crate) async fn export(
    client: &Client,
    batch: &str,
    status: Option<String>,
    format: ResultsFormat,
    out: &mut dyn Write,
) -> anyhow::Result<u64> {
    let mut stream = client
        .batches
        .clone()
        .stream_results(ResultsRequest {
            batch_id: batch.to_string(),
            status: status.unwrap_or_default(),
            from_index: 0,
            limit: 0,
        })
        .await?
        .into_inner();
    let mut w = ResultsWriter::new(format, out)?;
    while let Some(r) = stream.next().await {
        w.write(r?)?;
    }
    w.finish()
}

/// Writes results as lines of one format, the CSV header first.
pub(crate) struct ResultsWriter<W: Write> {
    format: ResultsFormat,
    out: W,
    written: u64,
    /// One line as it is made: written to `out` whole, so the many small writes of a
    /// serialiser stay in memory (`out` is often a `dyn Write`).
    line: Vec<u8>,
}

impl<W: Write> ResultsWriter<W> {
    /// Starts the output (the CSV header).
    pub(crate) fn new(format: ResultsFormat, mut out: W) -> anyhow::Result<Self> {
        if matches!(format, ResultsFormat::Csv) {
            writeln!(out, "index,input,status,solution,length,optimal,error")?;
        }
        Ok(ResultsWriter {
            format,
            out,
            written: 0,
            line: Vec::with_capacity(256),
        })
    }

    /// Writes one result.
    pub(crate) fn write(&mut self, r: JobResult) -> anyhow::Result<()> {
        let line = result_line(r);
        match self.format {
            ResultsFormat::Jsonl => {
                self.line.clear();
                serde_json::to_writer(&mut self.line, &line)?;
                self.line.push(b'\n');
                self.out.write_all(&self.line)?;
            }
            ResultsFormat::Csv => writeln!(
                self.out,
                "{},{},{},{},{},{},{}",
                line.index,
                csv(&line.input),
                line.status,
                line.solution,
                line.length.map(|l| l.to_string()).unwrap_or_default(),
                line.optimal,
                csv(line.error.as_deref().unwrap_or(""))
            )?,
        }
        self.written += 1;
        Ok(())
    }

    /// The number of results written so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Passes what is buffered on (so that a reader sees the lines written so far).
    pub(crate) fn flush(&mut self) -> anyhow::Result<()> {
        Ok(self.out.flush()?)
    }

    /// Flushes the output; returns the number of results written.
    pub(crate) fn finish(mut self) -> anyhow::Result<u64> {
        self.out.flush()?;
        Ok(self.written)
    }
}

/// Quotes a CSV field when it needs it.
fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub(crate) fn submit(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async move {
        let client = args.connect.connect().await?;
        let timeout = args.timeout.map(Duration::from_secs_f64);
        let spec = BatchSpec {
            batch_id: args.batch_id.clone().unwrap_or_default(),
            name: args
                .name
                .clone()
                .unwrap_or_else(|| args.file.display().to_string()),
            mode: Some(mode_to_proto(&args.mode.mode(), timeout)),
            priority: args.priority,
        };
        let r = submit_file(&client, &args.file, spec).await?;
        println!("{}", r.batch_id);
        std::io::stdout().flush()?;
        eprintln!(
            "stored {} lines ({} invalid, {} answered from the store)",
            r.total, r.invalid, r.from_store
        );
        if args.wait {
            let s = watch(&client, &r.batch_id).await?;
            eprintln!("{}", status_text(&s));
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub(crate) fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async move {
        let client = args.connect.connect().await?;
        let statuses = match &args.batch {
            Some(b) if args.watch => vec![watch(&client, b).await?],
            Some(b) => vec![client
                .batches
                .clone()
                .get_batch(BatchRef {
                    batch_id: b.clone(),
                })
                .await?
                .into_inner()],
            None => {
                client
                    .batches
                    .clone()
                    .list_batches(ListBatchesRequest {})
                    .await?
                    .into_inner()
                    .batches
            }
        };
        for s in &statuses {
            if args.json {
                println!("{}", status_json(s));
            } else {
                println!("{}", status_text(s));
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub(crate) fn results(args: ResultsArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async move {
        let client = args.connect.connect().await?;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        export(
            &client,
            &args.batch,
            args.status.clone(),
            args.format,
            &mut out,
        )
        .await?;
        Ok(ExitCode::SUCCESS)
    })
}

pub(crate) fn cancel(args: BatchArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async move {
        let client = args.connect.connect().await?;
        let s = client
            .batches
            .clone()
            .cancel_batch(BatchRef {
                batch_id: args.batch.clone(),
            })
            .await?
            .into_inner();
        println!("{}", status_text(&s));
        Ok(ExitCode::SUCCESS)
    })
}

pub(crate) fn lookup(args: LookupArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async move {
        let client = args.connect.connect().await?;
        let r = client
            .batches
            .clone()
            .lookup(LookupRequest {
                position: args.position.clone(),
            })
            .await?
            .into_inner();
        match r.result {
            Some(res) if r.found => {
                let mut line = result_line(res);
                line.input = args.position.clone();
                println!("{}", serde_json::to_string(&line)?);
                Ok(ExitCode::SUCCESS)
            }
            _ => {
                eprintln!("no stored result for this position");
                Ok(ExitCode::from(1))
            }
        }
    })
}
