//! Submitting a file: its lines read in chunks on a blocking thread (constant memory), their
//! content hash (SHA-256 over the trimmed lines, the batch's identity), and the stream of
//! `Submit` messages. Every line is sent, blank and comment lines too, so a result's index is
//! its line of the file; the hash a file is submitted with and the hash a stdin submission
//! ends with are over the same lines, so both name a batch by its contents.

use std::io::BufRead;
use std::path::Path;

use cubefleet_proto::batch::CHUNK_LINES;
use cubefleet_proto::client::Client;
use cubefleet_proto::{submit_request, BatchSpec, LineChunk, SubmitEnd, SubmitRequest};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;

use cubefleet_tables::input::{ContentHash, Lines};

/// A submission message is sent once its lines hold this many bytes (or [`CHUNK_LINES`]
/// lines): with lines cut past the line-length limit ([`Lines`]), no message comes near
/// the coordinator's message limit ([`cubefleet_proto::MAX_REQUEST_BYTES`]), so a file of long
/// lines is never refused whole.
const CHUNK_BYTES: usize = 1 << 20;

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

/// The content hash of `file` as a submission sends it ([`ContentHash`], over the lines
/// [`read_chunks`] reads and sends); None for stdin (`-`), which cannot be read twice.
pub(crate) fn content_hash(file: &Path) -> anyhow::Result<Option<[u8; 32]>> {
    if file.as_os_str() == "-" {
        return Ok(None);
    }
    let hash =
        ContentHash::of_file(file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    Ok(Some(hash))
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
    let (mut chunks, reader) = read_chunks(file);
    let first = SubmitRequest {
        part: Some(submit_request::Part::Spec(spec)),
    };
    let hash_lines = file.as_os_str() == "-";
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    // the chunks as they are read; then, when every line was read, the end with their hash
    let forward = tokio::spawn(async move {
        let mut h = ContentHash::default();
        while let Some(lines) = chunks.next().await {
            if hash_lines {
                lines.iter().for_each(|l| h.line(l));
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
                    content_hash: h.finish().to_vec(),
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
