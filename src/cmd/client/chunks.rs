//! `results --chunks`: per-chunk counts of a batch instead of its results. Chunk `k` holds
//! lines `1000k..1000k + 999` (in line order, the last one possibly shorter); each gives its
//! first and last state index, its lines, how many were solved in each length, left unsolved,
//! and over the target. JSON lines, or CSV (RFC 4180, through the `csv` crate) with a header.
//! A coset batch gives a row per coset instead ([`export_cosets`]): its counts by depth.

use std::io::Write;

use cubefleet_proto::client::Client;
use cubefleet_proto::{JobResult, ResultStatus};
use serde::Serialize;
use tokio_stream::StreamExt;

use super::args::ResultsFormat;
use super::export::results_stream;
use super::status::histogram_text;

/// Lines per chunk of `results --chunks`.
pub(crate) const CHUNK: u64 = 1000;

/// The columns of `results --chunks --format csv`, in order.
const CSV_HEADER: [&str; 7] = [
    "chunk",
    "first_state_index",
    "last_state_index",
    "lines",
    "lengths",
    "unsolved",
    "over_target",
];

/// The counts of one chunk of [`CHUNK`] consecutive lines; its JSON line (fields in
/// alphabetical order, as every version wrote them).
#[derive(Default, Debug, Serialize)]
struct ChunkCounts {
    /// Its number (line index / [`CHUNK`]).
    chunk: u64,
    /// State index of its first and last line seen ("" in a file batch).
    #[serde(rename = "first_state_index")]
    first: String,
    /// See `first`.
    #[serde(rename = "last_state_index")]
    last: String,
    /// `lengths[n]`: solved in `n` moves.
    #[serde(rename = "length_histogram")]
    lengths: Vec<u64>,
    /// Lines seen.
    lines: u64,
    /// Of `unsolved`, those `over_target`.
    over_target: u64,
    /// Lines with no solution within the target (`over_target`, `none_within`, `timeout`),
    /// not finished, or failed.
    unsolved: u64,
}

impl ChunkCounts {
    /// Counts result `r` (of this chunk).
    fn add(&mut self, r: &JobResult) {
        if self.lines == 0 {
            self.first.clone_from(&r.state_index);
        }
        self.last.clone_from(&r.state_index);
        self.lines += 1;
        match r.outcome() {
            ResultStatus::Solved => {
                let n = r.length as usize;
                if self.lengths.len() <= n {
                    self.lengths.resize(n + 1, 0);
                }
                self.lengths[n] += 1;
            }
            status => {
                self.unsolved += 1;
                if status == ResultStatus::OverTarget {
                    self.over_target += 1;
                }
            }
        }
    }
}

/// Where chunk lines go, by format.
enum ChunkSink<'a> {
    /// One JSON object per line.
    Jsonl(&'a mut dyn Write),
    /// CSV records, `\n` after each (boxed: the encoder holds its buffer state inline).
    Csv(Box<csv::Writer<&'a mut dyn Write>>),
}

impl<'a> ChunkSink<'a> {
    /// Starts the output (the CSV header); Parquet is refused (it is for the results).
    fn new(format: ResultsFormat, out: &'a mut dyn Write) -> anyhow::Result<ChunkSink<'a>> {
        Ok(match format {
            ResultsFormat::Jsonl => ChunkSink::Jsonl(out),
            ResultsFormat::Csv => {
                let mut csv = csv::WriterBuilder::new()
                    .terminator(csv::Terminator::Any(b'\n'))
                    .from_writer(out);
                csv.write_record(CSV_HEADER)?;
                ChunkSink::Csv(Box::new(csv))
            }
            ResultsFormat::Parquet => {
                anyhow::bail!("--chunks writes jsonl or csv; parquet is for the results")
            }
        })
    }

    /// Writes one chunk's line.
    fn write(&mut self, c: &ChunkCounts) -> anyhow::Result<()> {
        match self {
            ChunkSink::Jsonl(out) => {
                serde_json::to_writer(&mut **out, c)?;
                out.write_all(b"\n")?;
            }
            ChunkSink::Csv(csv) => csv.write_record([
                c.chunk.to_string(),
                c.first.clone(),
                c.last.clone(),
                c.lines.to_string(),
                histogram_text(&c.lengths),
                c.unsolved.to_string(),
                c.over_target.to_string(),
            ])?,
        }
        Ok(())
    }

    /// Passes what is buffered on.
    fn finish(self) -> anyhow::Result<()> {
        match self {
            ChunkSink::Jsonl(out) => out.flush()?,
            ChunkSink::Csv(mut csv) => csv.flush()?,
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
    let status = client
        .batches
        .clone()
        .get_batch(cubefleet_proto::BatchRef {
            batch_id: batch.to_string(),
        })
        .await?
        .into_inner();
    let coset = status
        .mode
        .as_ref()
        .and_then(|m| cubefleet_proto::question::Question::from_wire(m).ok())
        .is_some_and(|q| q.is_coset());
    if coset {
        return export_cosets(client, batch, format, out).await;
    }
    let mut stream = results_stream(client, batch, None).await?;
    let mut sink = ChunkSink::new(format, out)?;
    let (mut chunker, mut written) = (Chunker::default(), 0);
    while let Some(r) = stream.next().await {
        if let Some(c) = chunker.push(&r?) {
            sink.write(&c)?;
            written += 1;
        }
    }
    if let Some(c) = chunker.current {
        sink.write(&c)?;
        written += 1;
    }
    sink.finish()?;
    Ok(written)
}

/// The columns of `results --chunks --format csv` of a coset batch, in order (`counts` as
/// `depth:count` pairs, as the lengths of chunks).
const COSET_CSV_HEADER: [&str; 6] = [
    "coset",
    "status",
    "counts",
    "exact_through",
    "unsolved",
    "worker",
];

/// Writes a coset batch's row per coset, in line order: its JSON result line (`coset`,
/// `counts`, `exact_through`, `unsolved`, `unsolved_indices`, `worker`, ...), or CSV with a
/// header. Returns the rows written.
async fn export_cosets(
    client: &Client,
    batch: &str,
    format: ResultsFormat,
    out: &mut dyn Write,
) -> anyhow::Result<u64> {
    let csv = match format {
        ResultsFormat::Jsonl => false,
        ResultsFormat::Csv => true,
        ResultsFormat::Parquet => {
            anyhow::bail!("--chunks writes jsonl or csv; parquet is for the results")
        }
    };
    let mut stream = results_stream(client, batch, None).await?;
    if csv {
        out.write_all(&csv_record(&COSET_CSV_HEADER.map(String::from))?)?;
    }
    let mut written = 0;
    while let Some(r) = stream.next().await {
        let line = cubefleet_search::ResultLine::from(r?);
        if csv {
            let coset = line.coset.as_ref();
            out.write_all(&csv_record(&[
                line.input.clone(),
                line.status.name().to_string(),
                coset.map_or_else(String::new, |c| histogram_text(&c.counts)),
                coset.map_or_else(String::new, |c| c.exact_through.to_string()),
                coset.map_or_else(String::new, |c| c.unsolved.to_string()),
                line.worker.clone().unwrap_or_default(),
            ])?)?;
        } else {
            serde_json::to_writer(&mut *out, &line)?;
            out.write_all(b"\n")?;
        }
        written += 1;
    }
    out.flush()?;
    Ok(written)
}

/// One CSV record (RFC 4180 quoting) ending in `\n`.
fn csv_record(fields: &[String]) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(fields)?;
    w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-chunk counts: chunk `k` holds lines `1000k..1000k + 999`, with its first and last
    /// state index, solutions per length, unsolved and over-target lines.
    #[test]
    fn chunk_counts_group_lines_by_thousands() {
        let result = |index: u64| {
            let mut r = JobResult {
                index,
                state_index: (5000 + index).to_string(),
                length: (index % 3) as u32 + 18,
                ..JobResult::default()
            };
            r.set_outcome(if index % 10 == 0 {
                ResultStatus::OverTarget
            } else {
                ResultStatus::Solved
            });
            r
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
        let mut sink = ChunkSink::new(ResultsFormat::Csv, &mut csv).expect("header");
        sink.write(&chunks[1]).expect("write");
        sink.finish().expect("flush");
        let text = String::from_utf8(csv).expect("utf-8");
        let (header, row) = text.split_once('\n').expect("a header line");
        assert_eq!(header, CSV_HEADER.join(","));
        assert!(row.starts_with("1,6000,6999,1000,18:"), "{text}");
        assert!(row.ends_with(",100,100\n"), "{text}");
        let mut json = Vec::new();
        let mut sink = ChunkSink::new(ResultsFormat::Jsonl, &mut json).expect("jsonl");
        sink.write(&chunks[1]).expect("write");
        sink.finish().expect("flush");
        let v: serde_json::Value = serde_json::from_slice(&json).expect("one JSON line");
        assert_eq!(v["first_state_index"], "6000");
        assert_eq!(v["unsolved"], 100);
        // the keys in alphabetical order, as every version wrote them
        let line = String::from_utf8(json).expect("utf-8");
        assert!(line.starts_with("{\"chunk\":1,\"first_state_index\":\"6000\",\"last_state_index\":\"6999\",\"length_histogram\":["), "{line}");
        assert!(
            line.ends_with(",\"lines\":1000,\"over_target\":100,\"unsolved\":100}\n"),
            "{line}"
        );
    }
}
