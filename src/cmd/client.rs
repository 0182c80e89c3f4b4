//! The client commands: `submit`, `status`, `results`, `cancel`, `lookup`.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use cubefleet_coordinator::range::States;
use cubefleet_proto::client::Client;
use cubefleet_proto::{
    submit_request, BatchRef, BatchSpec, BatchStatus, JobResult, JobState, Keep, LineChunk,
    ListBatchesRequest, LookupRequest, ResultsRequest, SubmitEnd, SubmitRequest,
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

/// What a range or sample batch keeps of each result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KeepArg {
    /// Every result with its solution (as a file batch).
    All,
    /// The status and length only: each solution is verified, then dropped; `results
    /// --chunks` gives per-chunk counts and `status` the histogram.
    Histogram,
}

/// What a batch is made of: a file of positions, a range of state indices, or a uniform
/// sample of states (exactly one of them).
#[derive(clap::Args, Clone, Debug)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["file", "range", "sample"])))]
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
}

/// `--range START..END`, read (the range as a whole is checked with its step later).
fn range_flag(text: &str) -> Result<(u128, u128), String> {
    cubefleet_coordinator::range::parse_range(text).map_err(|e| e.to_string())
}

impl InputArgs {
    /// The states of a range or sample batch (None for a file), checked: a bad range is
    /// refused with the reason.
    pub(crate) fn states(&self) -> anyhow::Result<Option<States>> {
        let states = match (self.range, self.sample) {
            (Some((start, end)), _) => Some(States::range(start, end, self.step.unwrap_or(1))?),
            (None, Some(count)) => Some(States::sample(count, self.seed.unwrap_or(0))?),
            (None, None) => None,
        };
        if states.is_none() && self.keep == KeepArg::Histogram {
            anyhow::bail!("--keep histogram is for --range and --sample batches; a file keeps all");
        }
        Ok(states)
    }

    /// `spec` with the range or sample definition and `keep` of these flags.
    pub(crate) fn define(&self, mut spec: BatchSpec) -> anyhow::Result<BatchSpec> {
        match self.states()? {
            Some(States::Range { start, end, step }) => {
                spec.range_start = start.to_string();
                spec.range_end = end.to_string();
                spec.range_step = step;
            }
            Some(States::Sample { count, seed }) => {
                spec.sample_count = count;
                spec.sample_seed = seed;
            }
            None => {}
        }
        spec.keep = match self.keep {
            KeepArg::All => Keep::All,
            KeepArg::Histogram => Keep::Histogram,
        } as i32;
        Ok(spec)
    }

    /// A name for the batch: the file, or the definition.
    pub(crate) fn name(&self) -> anyhow::Result<String> {
        Ok(match (self.states()?, &self.file) {
            (Some(s), _) => describe(&s),
            (None, Some(f)) => f.display().to_string(),
            (None, None) => String::new(),
        })
    }
}

/// A range or sample as people write it: `range 0..1000 step 1`, `sample 1000 seed 7`.
pub(crate) fn describe(s: &States) -> String {
    match *s {
        States::Range { start, end, step } => format!("range {start}..{end} step {step}"),
        States::Sample { count, seed } => format!("sample {count} seed {seed}"),
    }
}

#[derive(clap::Args, Debug)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    input: InputArgs,
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
    /// How many workers of different credentials must agree before an `optimal` or
    /// `none_within` answer is final: 1 (one is enough) or 2 (for fleets whose workers are not
    /// all trusted; a disagreement is settled by a third credential's search).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=2))]
    confirm: u32,
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
    /// Apache Parquet: the fields as typed columns (`status` a dictionary), row groups of
    /// 65,536 rows; best with `--out FILE`.
    Parquet,
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
    /// Write the results to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
    /// Only results with this status (solved, timeout, over_target, none_within, invalid,
    /// cancelled, skipped, failed).
    #[arg(long)]
    status: Option<String>,
    /// Per-chunk counts instead of results: for each chunk of 1000 consecutive lines, its
    /// first and last state index, its lines, and how many were solved in each length, left
    /// unsolved and over the target (a range or sample batch with `--keep histogram`).
    #[arg(long, alias = "per-chunk", conflicts_with = "status")]
    chunks: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct BatchArgs {
    /// The batch.
    batch: String,
    #[command(flatten)]
    connect: ConnectArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct RevokeArgs {
    /// The worker, as results show it in `worker`: its credential's name (a named worker
    /// credential, which is refused too), or its `--name`.
    worker: String,
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

/// Streams `file` to the coordinator as a batch (constant memory); returns the batch id. From
/// stdin (`-`), whose hash cannot be known beforehand, the lines' hash ([`content_hash`]'s,
/// over the same lines) follows them once all were read (`SubmitEnd`), so the batch is named
/// by its contents as a file's is.
pub(crate) async fn submit_file(
    client: &Client,
    file: &Path,
    spec: BatchSpec,
) -> anyhow::Result<cubefleet_proto::SubmitResponse> {
    use sha2::Digest;
    let (mut chunks, reader) = read_chunks(file);
    let first = SubmitRequest {
        part: Some(submit_request::Part::Spec(spec)),
    };
    let hash_lines = file.as_os_str() == "-";
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    // the chunks as they are read; then, when every line was read, the end with their hash
    let forward = tokio::spawn(async move {
        let mut h = sha2::Sha256::new();
        while let Some(lines) = chunks.next().await {
            if hash_lines {
                for line in &lines {
                    h.update(line.as_bytes());
                    h.update(b"\n");
                }
            }
            let chunk = SubmitRequest {
                part: Some(submit_request::Part::Chunk(LineChunk { lines })),
            };
            if tx.send(chunk).await.is_err() {
                break;
            }
        }
        let read = reader.await?;
        if read.is_ok() && hash_lines {
            let end = SubmitRequest {
                part: Some(submit_request::Part::End(SubmitEnd {
                    content_hash: h.finalize().to_vec(),
                })),
            };
            let _ = tx.send(end).await;
        }
        read
    });
    let requests = tokio_stream::once(first).chain(ReceiverStream::new(rx));
    let response = client.batches.clone().submit(requests).await;
    let read = forward.await?;
    // a refusal ends the stream, and the reader then fails with "submission aborted": the
    // coordinator's reason is the one to show
    let response = response?;
    read?;
    Ok(response.into_inner())
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

/// Lines per chunk of `results --chunks`.
pub(crate) const CHUNK: u64 = 1000;

/// The counts of one chunk of [`CHUNK`] consecutive lines.
#[derive(Default, Debug)]
struct ChunkCounts {
    /// Its number (line index / [`CHUNK`]).
    chunk: u64,
    /// State index of its first and last line seen ("" in a file batch).
    first: String,
    /// See `first`.
    last: String,
    /// Lines seen.
    lines: u64,
    /// `lengths[n]`: solved in `n` moves.
    lengths: Vec<u64>,
    /// Lines with no solution within the target (`over_target`, `none_within`, `timeout`),
    /// not finished, or failed.
    unsolved: u64,
    /// Of `unsolved`, those `over_target`.
    over_target: u64,
}

impl ChunkCounts {
    /// Counts result `r` (of this chunk).
    fn add(&mut self, r: &JobResult) {
        if self.lines == 0 {
            self.first.clone_from(&r.state_index);
        }
        self.last.clone_from(&r.state_index);
        self.lines += 1;
        if r.status == "solved" {
            let n = r.length as usize;
            if self.lengths.len() <= n {
                self.lengths.resize(n + 1, 0);
            }
            self.lengths[n] += 1;
        } else {
            self.unsolved += 1;
            if r.status == "over_target" {
                self.over_target += 1;
            }
        }
    }

    /// Writes it as one line of `format`.
    fn write(&self, format: ResultsFormat, out: &mut dyn Write) -> anyhow::Result<()> {
        match format {
            ResultsFormat::Jsonl => writeln!(
                out,
                "{}",
                serde_json::json!({
                    "chunk": self.chunk,
                    "first_state_index": self.first,
                    "last_state_index": self.last,
                    "lines": self.lines,
                    "length_histogram": self.lengths,
                    "unsolved": self.unsolved,
                    "over_target": self.over_target,
                })
            )?,
            ResultsFormat::Csv => {
                writeln!(
                    out,
                    "{},{},{},{},{},{},{}",
                    self.chunk,
                    self.first,
                    self.last,
                    self.lines,
                    histogram_text(&self.lengths),
                    self.unsolved,
                    self.over_target
                )?;
            }
            ResultsFormat::Parquet => {
                anyhow::bail!("--chunks writes jsonl or csv; parquet is for the results")
            }
        }
        Ok(())
    }
}

/// Writes a batch's per-chunk counts (chunks of [`CHUNK`] lines, in line order): JSON lines,
/// or CSV with a header. Returns the chunks written.
pub(crate) async fn export_chunks(
    client: &Client,
    batch: &str,
    format: ResultsFormat,
    out: &mut dyn Write,
) -> anyhow::Result<u64> {
    let mut stream = results_stream(client, batch, None).await?;
    if let ResultsFormat::Csv = format {
        writeln!(
            out,
            "chunk,first_state_index,last_state_index,lines,lengths,unsolved,over_target"
        )?;
    }
    let (mut chunker, mut written) = (Chunker::default(), 0);
    while let Some(r) = stream.next().await {
        if let Some(c) = chunker.push(&r?) {
            c.write(format, out)?;
            written += 1;
        }
    }
    if let Some(c) = chunker.current {
        c.write(format, out)?;
        written += 1;
    }
    Ok(written)
}

/// Groups results given in line order into chunks of [`CHUNK`] lines.
#[derive(Default)]
struct Chunker {
    /// The chunk being counted (its results so far).
    current: Option<ChunkCounts>,
}

impl Chunker {
    /// Counts `r`; returns the chunk before it when `r` begins a new one (that one is complete).
    fn push(&mut self, r: &JobResult) -> Option<ChunkCounts> {
        let chunk = r.index / CHUNK;
        let done = self.current.take_if(|c| c.chunk != chunk);
        self.current
            .get_or_insert_with(|| ChunkCounts {
                chunk,
                ..ChunkCounts::default()
            })
            .add(r);
        done
    }
}

fn status_json(s: &BatchStatus) -> serde_json::Value {
    serde_json::json!({
        "kind": kind(s),
        "range_start": s.range_start,
        "range_end": s.range_end,
        "range_step": s.range_step,
        "sample_count": s.sample_count,
        "sample_seed": s.sample_seed,
        "made": s.made,
        "keep": if s.keep == Keep::Histogram as i32 { "histogram" } else { "all" },
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

/// The batch's kind: `file`, `range` or `sample` (`file` from a coordinator before ranges).
fn kind(s: &BatchStatus) -> &str {
    if s.kind.is_empty() {
        "file"
    } else {
        &s.kind
    }
}

/// What `status` adds for a range or sample batch: its definition and the jobs made.
fn definition_text(s: &BatchStatus) -> String {
    let states = match kind(s) {
        "range" => format!(
            "range {}..{} step {}",
            s.range_start, s.range_end, s.range_step
        ),
        "sample" => format!("sample {} seed {}", s.sample_count, s.sample_seed),
        _ => return String::new(),
    };
    let keep = if s.keep == Keep::Histogram as i32 {
        ", keep histogram"
    } else {
        ""
    };
    format!(
        "  {states}: made {} of {} jobs{keep}",
        s.made,
        s.total.min(1 << 40)
    )
}

/// A length histogram as text: `length:count` for each length with solutions, by length.
fn histogram_text(counts: &[u64]) -> String {
    let parts: Vec<String> = counts
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(l, n)| format!("{l}:{n}"))
        .collect();
    parts.join(" ")
}

fn status_text(s: &BatchStatus) -> String {
    format!(
        "{} {}: total {} queued {} leased {} done {} invalid {} cancelled {} failed {}  {:.1}/s  ETA {}  lengths {}{}",
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
        histogram_text(&s.length_histogram),
        definition_text(s)
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
        state_index: (!r.state_index.is_empty()).then_some(r.state_index),
        worker: (!r.worker.is_empty()).then_some(r.worker),
        claimed: r.claimed,
    }
}

/// A batch's results in line order (only those of `status` when it is given).
async fn results_stream(
    client: &Client,
    batch: &str,
    status: Option<String>,
) -> anyhow::Result<tonic::Streaming<cubefleet_proto::JobResult>> {
    let request = ResultsRequest {
        batch_id: batch.to_string(),
        status: status.unwrap_or_default(),
        ..ResultsRequest::default()
    };
    Ok(client
        .batches
        .clone()
        .stream_results(request)
        .await?
        .into_inner())
}

/// Writes every result of a batch, in line order.
pub(crate) async fn export(
    client: &Client,
    batch: &str,
    status: Option<String>,
    format: ResultsFormat,
    out: &mut dyn Write,
) -> anyhow::Result<u64> {
    let mut stream = results_stream(client, batch, status).await?;
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
    /// Parquet ([`crate::parquet`]): rows gathered into row groups, each written when full,
    /// the footer at [`ResultsWriter::finish`].
    Parquet(Box<cubefleet_columns::ParquetWriter<W>>),
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
            ResultsFormat::Parquet => {
                Sink::Parquet(Box::new(cubefleet_columns::ParquetWriter::new(out)?))
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
                line.state_index.as_deref().unwrap_or(""),
            ])?,
            Sink::Parquet(p) => p.write(&crate::parquet::row(&line))?,
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
            // nothing of a Parquet file is readable before its footer: row groups go out
            // when full, not in small pieces whenever an export waits
            Sink::Parquet(_) => {}
        }
        Ok(())
    }

    /// Flushes the output (a Parquet file: its last row group and footer); returns the number
    /// of results written.
    pub(crate) fn finish(mut self) -> anyhow::Result<u64> {
        if let Sink::Parquet(p) = self.sink {
            p.finish()?;
            return Ok(self.written);
        }
        self.flush()?;
        Ok(self.written)
    }
}

/// The columns of `results --format csv`, in order (`state_index`: of a range or sample
/// batch's job, else empty).
const CSV_HEADER: [&str; 8] = [
    "index",
    "input",
    "status",
    "solution",
    "length",
    "optimal",
    "error",
    "state_index",
];

pub(crate) fn submit(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async move {
        let client = args.connect.connect().await?;
        let timeout = args.timeout.map(Duration::from_secs_f64);
        let spec = args.input.define(BatchSpec {
            batch_id: args.batch_id.clone().unwrap_or_default(),
            name: match &args.name {
                Some(n) => n.clone(),
                None => args.input.name()?,
            },
            mode: Some(mode_to_proto(&args.mode.mode(), timeout)),
            priority: args.priority,
            confirm: args.confirm,
            ..BatchSpec::default()
        })?;
        let r = match &args.input.file {
            Some(file) => {
                // checked against the batch's when --batch-id names one that exists
                let spec = BatchSpec {
                    content_hash: content_hash(file)?.map_or_else(Vec::new, Vec::from),
                    ..spec
                };
                submit_file(&client, file, spec).await.map_err(|e| {
                    e.context(
                        "the submission was not acknowledged (part of it may be stored): \
                         submit the file again with the same --batch-id to continue the batch",
                    )
                })?
            }
            None => {
                let first = SubmitRequest {
                    part: Some(submit_request::Part::Spec(spec)),
                };
                client
                    .batches
                    .clone()
                    .submit(tokio_stream::once(first))
                    .await?
                    .into_inner()
            }
        };
        let mut out = crate::output::Stdout::new();
        writeln!(out, "{}", r.batch_id)?;
        out.flush()?;
        if args.input.file.is_some() {
            eprintln!(
                "stored {} lines ({} invalid, {} answered from the store)",
                r.total, r.invalid, r.from_store
            );
        } else {
            eprintln!(
                "stored the definition of {} states (jobs are made as workers lease them)",
                r.total
            );
            let most = cubefleet_coordinator::MAX_LINES;
            if r.total > most {
                eprintln!(
                    "note: a batch makes at most {most} jobs, so this one covers its first \
                     {most} states; submit the rest as another batch"
                );
            }
        }
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
        let mut out: std::io::BufWriter<Box<dyn Write>> =
            std::io::BufWriter::new(match &args.out {
                Some(p) => Box::new(std::fs::File::create(p)?),
                None => Box::new(crate::output::Stdout::new()),
            });
        if args.chunks {
            export_chunks(&client, &args.batch, args.format, &mut out).await?;
        } else {
            export(
                &client,
                &args.batch,
                args.status.clone(),
                args.format,
                &mut out,
            )
            .await?;
        }
        out.flush()?;
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

pub(crate) fn revoke(args: RevokeArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async move {
        let client = args.connect.connect().await?;
        let r = client
            .batches
            .clone()
            .revoke(cubefleet_proto::RevokeRequest {
                worker: args.worker.clone(),
            })
            .await?
            .into_inner();
        let what = if r.credential_revoked {
            "worker and its credential"
        } else {
            "worker"
        };
        println!(
            "{what} {} revoked; {} answers resting on its claims queued again",
            args.worker, r.requeued
        );
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

    /// Per-chunk counts: chunk `k` holds lines `1000k..1000k + 999`, with its first and last
    /// state index, solutions per length, unsolved and over-target lines.
    #[test]
    fn chunk_counts_group_lines_by_thousands() {
        let result = |index: u64| JobResult {
            index,
            state_index: (5000 + index).to_string(),
            status: if index % 10 == 0 {
                "over_target"
            } else {
                "solved"
            }
            .into(),
            length: (index % 3) as u32 + 18,
            ..JobResult::default()
        };
        let mut chunker = Chunker::default();
        let mut chunks: Vec<ChunkCounts> =
            (0..2500).filter_map(|i| chunker.push(&result(i))).collect();
        chunks.extend(chunker.current);
        assert_eq!(chunks.len(), 3);
        assert_eq!(
            (chunks[2].first.as_str(), chunks[2].last.as_str()),
            ("7000", "7499")
        );
        assert_eq!((chunks[0].lines, chunks[2].lines), (1000, 500));
        assert_eq!((chunks[0].unsolved, chunks[0].over_target), (100, 100));
        assert_eq!(chunks[0].lengths.iter().sum::<u64>(), 900);
        assert_eq!(chunks[0].lengths.len(), 21);
        let mut csv = Vec::new();
        chunks[1]
            .write(ResultsFormat::Csv, &mut csv)
            .expect("write");
        let text = String::from_utf8(csv).expect("utf-8");
        assert!(text.starts_with("1,6000,6999,1000,18:"), "{text}");
        assert!(text.trim_end().ends_with(",100,100"), "{text}");
        let mut json = Vec::new();
        chunks[1]
            .write(ResultsFormat::Jsonl, &mut json)
            .expect("write");
        let v: serde_json::Value = serde_json::from_slice(&json).expect("one JSON line");
        assert_eq!(v["first_state_index"], "6000");
        assert_eq!(v["unsolved"], 100);
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
