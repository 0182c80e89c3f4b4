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
use crate::lines::Lines;
use crate::output::ResultLine;

/// Most lines per submission message.
const CHUNK_LINES: usize = 2000;

/// A submission message is sent once its lines hold this many bytes (or [`CHUNK_LINES`]
/// lines): with lines cut past the line-length limit ([`Lines`]), no message comes near
/// gRPC's 4 MB limit, so a file of long lines is never refused whole.
const CHUNK_BYTES: usize = 1 << 20;

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
    /// Time budget per position, in seconds (more than 0; default: none).
    #[arg(long, value_parser = super::flags::timeout)]
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
    /// Only results with this status (solved, timeout, over_target, none_within, invalid,
    /// cancelled, skipped, failed).
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

/// Reads `file` (`-`: stdin) on a blocking thread, as chunks of trimmed lines (at most
/// [`CHUNK_LINES`] lines or about [`CHUNK_BYTES`] bytes each) on the returned stream (a few
/// chunks ahead at most, so memory stays constant). Lines are read by [`Lines`]: one over the
/// line-length limit is cut just past it, so the coordinator records it invalid with the
/// reason and the rest go on. Every line is sent, blank and comment lines too (the coordinator
/// answers them `skipped`), so a result's index is its line of the file. The task ends with
/// the outcome of the read; it fails when the stream is dropped before the end.
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
        let (mut lines, mut bytes) = (Vec::with_capacity(CHUNK_LINES), 0);
        for line in Lines::new(input) {
            let line = line?;
            bytes += line.len();
            lines.push(line);
            if lines.len() == CHUNK_LINES || bytes >= CHUNK_BYTES {
                send(std::mem::take(&mut lines))?;
                bytes = 0;
            }
        }
        if !lines.is_empty() {
            send(lines)?;
        }
        Ok(())
    });
    (ReceiverStream::new(rx), reader)
}

/// The content hash of `file` as a submission sends it: SHA-256 over its lines, each trimmed
/// (as [`read_chunks`] trims them) and followed by a newline; None for stdin (`-`), which
/// cannot be read twice. Same lines, same hash; a different line or count, another hash.
pub(crate) fn content_hash(file: &Path) -> anyhow::Result<Option<[u8; 32]>> {
    use sha2::Digest;
    if file.as_os_str() == "-" {
        return Ok(None);
    }
    let f = std::fs::File::open(file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let mut h = sha2::Sha256::new();
    // the lines as they are submitted (trimmed, cut at the limit, bad UTF-8 replaced), so no
    // line can make the hash fail where the submission would not
    for line in crate::lines::Lines::new(std::io::BufReader::new(f)) {
        h.update(line?.as_bytes());
        h.update(b"\n");
    }
    Ok(Some(h.finalize().into()))
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
    sink: Sink<W>,
    written: u64,
}

/// Where a [`ResultsWriter`]'s lines go, by format.
enum Sink<W: Write> {
    /// JSON lines; `line` holds one line as it is made, written to the output whole, so the
    /// many small writes of a serialiser stay in memory (the output is often a `dyn Write`).
    Jsonl { out: W, line: Vec<u8> },
    /// RFC 4180 CSV (a field with `,`, `"`, `\r` or `\n` is quoted, `"` doubled), `\n` after
    /// each record; the encoder buffers and writes whole chunks (boxed: it holds its buffer
    /// state inline, and a writer is made once per export).
    Csv(Box<csv::Writer<W>>),
}

impl<W: Write> ResultsWriter<W> {
    /// Starts the output (the CSV header).
    pub(crate) fn new(format: ResultsFormat, out: W) -> anyhow::Result<Self> {
        let sink = match format {
            ResultsFormat::Jsonl => Sink::Jsonl {
                out,
                line: Vec::with_capacity(256),
            },
            ResultsFormat::Csv => {
                let mut csv = csv::WriterBuilder::new()
                    .terminator(csv::Terminator::Any(b'\n'))
                    .from_writer(out);
                csv.write_record(CSV_HEADER)?;
                Sink::Csv(Box::new(csv))
            }
        };
        Ok(ResultsWriter { sink, written: 0 })
    }

    /// Writes one result.
    pub(crate) fn write(&mut self, r: JobResult) -> anyhow::Result<()> {
        let line = result_line(r);
        match &mut self.sink {
            Sink::Jsonl { out, line: buf } => {
                buf.clear();
                serde_json::to_writer(&mut *buf, &line)?;
                buf.push(b'\n');
                out.write_all(buf)?;
            }
            Sink::Csv(csv) => csv.write_record([
                line.index.to_string().as_str(),
                &line.input,
                &line.status,
                &line.solution,
                &line.length.map(|l| l.to_string()).unwrap_or_default(),
                if line.optimal { "true" } else { "false" },
                line.error.as_deref().unwrap_or(""),
            ])?,
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
        match &mut self.sink {
            Sink::Jsonl { out, .. } => out.flush()?,
            Sink::Csv(csv) => csv.flush()?,
        }
        Ok(())
    }

    /// Flushes the output; returns the number of results written.
    pub(crate) fn finish(mut self) -> anyhow::Result<u64> {
        self.flush()?;
        Ok(self.written)
    }
}

/// The columns of `results --format csv`, in order.
const CSV_HEADER: [&str; 7] = [
    "index", "input", "status", "solution", "length", "optimal", "error",
];

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
            // checked against the batch's when --batch-id names one that exists
            content_hash: content_hash(&args.file)?.map_or_else(Vec::new, Vec::from),
        };
        let r = submit_file(&client, &args.file, spec).await.map_err(|e| {
            e.context(
                "the submission was not acknowledged (part of it may be stored): \
                 submit the file again with the same --batch-id to continue the batch",
            )
        })?;
        let mut out = crate::output::Stdout::new();
        writeln!(out, "{}", r.batch_id)?;
        out.flush()?;
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
        let mut out = std::io::BufWriter::new(crate::output::Stdout::new());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A result whose input and error hold every character CSV must quote.
    fn awkward(index: u64) -> JobResult {
        JobResult {
            index,
            input: "R U,\"x\"\r\nF".into(),
            status: "invalid".into(),
            error: "bad token `\r`, then \"quotes\"\nand a, comma".into(),
            ..JobResult::default()
        }
    }

    #[test]
    fn csv_export_round_trips_carriage_returns_quotes_commas_and_newlines() {
        let mut out = Vec::new();
        let mut w = ResultsWriter::new(ResultsFormat::Csv, &mut out).expect("header");
        w.write(awkward(0)).expect("row");
        w.write(awkward(1)).expect("row");
        // a carriage return alone: the field needs quotes all the same
        w.write(JobResult {
            index: 2,
            input: "R U\rF".into(),
            status: "invalid".into(),
            error: "cr\r".into(),
            ..JobResult::default()
        })
        .expect("row");
        assert_eq!(w.finish().expect("flush"), 3);
        let mut reader = csv::ReaderBuilder::new().from_reader(out.as_slice());
        let header = reader.headers().expect("header").clone();
        assert_eq!(header.iter().collect::<Vec<_>>(), CSV_HEADER);
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
        assert_eq!(rows.len(), 3, "{}", String::from_utf8_lossy(&out));
        assert_eq!(&rows[2][1], "R U\rF");
        assert_eq!(&rows[2][6], "cr\r");
        for (i, row) in rows.iter().take(2).enumerate() {
            assert_eq!(&row[0], i.to_string());
            assert_eq!(&row[1], "R U,\"x\"\r\nF");
            assert_eq!(&row[2], "invalid");
            assert_eq!(&row[6], "bad token `\r`, then \"quotes\"\nand a, comma");
        }
        // no bare carriage return outside a quoted field: every line break of the file is a
        // record's end or inside quotes
        let text = String::from_utf8(out).expect("utf-8");
        assert!(text.contains("\"R U,\"\"x\"\"\r\nF\""), "{text}");
        assert!(text.contains("\n2,\"R U\rF\",invalid,"), "{text:?}");
    }
}
