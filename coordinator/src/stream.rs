//! The streaming calls over the [`Core`], shared by the gRPC service and by callers in the
//! coordinator's own process (`cubefleet run`): a submission from a stream of line chunks,
//! a batch's progress as a stream of statuses, and the sweeper that returns expired leases to
//! the queue. Store work runs on the blocking pool.

use std::sync::Arc;
use std::time::Duration;

use cubefleet_proto::{BatchSpec, BatchStatus, SubmitResponse};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;
use tonic::Status;

use crate::core::Core;
use crate::error::Error;
use crate::record::{BatchRecord, JobRecord};

/// Runs blocking coordinator work off the async runtime.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Status> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(Status::from),
        Err(e) => Err(Status::internal(e.to_string())),
    }
}

/// Time between two progress messages of [`watch`] when nothing happens (for the rate).
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// Least time between two progress messages of [`watch`]: one is sent this soon after jobs
/// finish (so `run` and `submit --wait` return promptly), several changes are sent as one.
const WATCH_GAP: Duration = Duration::from_millis(20);

/// Lines are stored in groups of at most this many (one flush each).
const STORE_CHUNK: usize = 5000;

/// The first group of a submission is this small, and each next one twice the lines stored so
/// far (up to [`STORE_CHUNK`]), so workers start on a new batch at once.
const FIRST_CHUNK: usize = 250;

/// Submits a batch: `spec`, then its lines as they arrive in `chunks` (any chunking; memory
/// stays bounded by [`STORE_CHUNK`] lines plus one chunk). Lines are acknowledged only once
/// stored: the answer comes after the last flush. A submission of a batch id that exists
/// continues it past the lines it already stored.
pub async fn submit<S>(
    core: Arc<Core>,
    spec: BatchSpec,
    chunks: S,
) -> Result<SubmitResponse, Status>
where
    S: Stream<Item = Result<Vec<String>, Status>> + Unpin,
{
    submit_with_end(core, spec, chunks, Arc::default()).await
}

/// The content hash a submission sends after its lines (`SubmitEnd`), once its stream has
/// ended: None when it sent none.
pub type EndHash = Arc<std::sync::Mutex<Option<Vec<u8>>>>;

/// [`submit`], and once every line is stored the hash the stream left in `end` (if any) names
/// the batch's contents ([`Core::name_contents`]), before the batch is free for another
/// submitter and before the answer.
pub async fn submit_with_end<S>(
    core: Arc<Core>,
    spec: BatchSpec,
    mut chunks: S,
    end: EndHash,
) -> Result<SubmitResponse, Status>
where
    S: Stream<Item = Result<Vec<String>, Status>> + Unpin,
{
    let mut batch = {
        let core = core.clone();
        blocking(move || core.begin_submit(spec)).await?
    };
    let id = batch.batch_id.clone();
    // whatever happens below, the batch is free for the next submitter afterwards
    struct Release(Arc<Core>, String);
    impl Drop for Release {
        fn drop(&mut self) {
            self.0.end_submit(&self.1);
        }
    }
    let _release = Release(core.clone(), id.clone());
    // a pipeline: chunk k is stored (and flushed) while chunk k + 1 is received and prepared
    let mut storing: Option<tokio::task::JoinHandle<Result<BatchRecord, Status>>> = None;
    let received = receive_chunks(&core, &mut chunks, &mut batch, &mut storing).await;
    // never leave a store running after the batch is released to another submitter
    if let Some(h) = storing.take() {
        batch = h.await.map_err(|e| Status::internal(e.to_string()))??;
    }
    let next_index = received?;
    let hash = end.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(hash) = hash.filter(|h| !h.is_empty()) {
        let (core, id) = (core.clone(), id.clone());
        blocking(move || core.name_contents(&id, hash)).await?;
    }
    // the counts describe the whole batch, also when an earlier submission stored part of it
    let (invalid, from_store) = core.submitted_counts(batch.seq);
    tracing::info!(batch = %id, lines = next_index, invalid, from_store, "batch submitted");
    Ok(SubmitResponse {
        batch_id: id,
        total: batch.total,
        invalid,
        from_store,
    })
}

/// The chunks of a submission: each group of lines is prepared, then stored once the previous
/// one is stored (`storing`, the store in flight, updates `batch`). Returns the lines received.
async fn receive_chunks<S>(
    core: &Arc<Core>,
    chunks: &mut S,
    batch: &mut BatchRecord,
    storing: &mut Option<tokio::task::JoinHandle<Result<BatchRecord, Status>>>,
) -> Result<u64, Status>
where
    S: Stream<Item = Result<Vec<String>, Status>> + Unpin,
{
    let mut next_index = 0u64;
    let mut pending: Vec<String> = Vec::new();
    loop {
        let chunk = chunks.next().await.transpose()?;
        let done = chunk.is_none();
        pending.extend(chunk.into_iter().flatten());
        loop {
            let size = STORE_CHUNK.min(FIRST_CHUNK.max(next_index as usize));
            if pending.is_empty() || (pending.len() < size && !done) {
                break;
            }
            let take = pending.len().min(size);
            let lines: Vec<String> = pending.drain(..take).collect();
            let jobs = prepare(core, batch, next_index, lines).await?;
            if let Some(h) = storing.take() {
                *batch = h.await.map_err(|e| Status::internal(e.to_string()))??;
            }
            let (c, mut b) = (core.clone(), batch.clone());
            *storing = Some(tokio::spawn(blocking(move || {
                c.store_chunk(&mut b, jobs)?;
                Ok(b)
            })));
            next_index += take as u64;
        }
        if done {
            return Ok(next_index);
        }
    }
}

/// Least lines of a part that [`prepare`] hands to a thread of its own.
const PREPARE_PART: usize = 256;

/// [`Core::prepare_chunk`] of lines `first..` of `batch`, in contiguous parts (one per core,
/// of at least [`PREPARE_PART`] lines) prepared at once on the blocking pool, whose threads
/// stay from chunk to chunk. Returns the jobs in line order.
async fn prepare(
    core: &Arc<Core>,
    batch: &BatchRecord,
    first: u64,
    lines: Vec<String>,
) -> Result<Vec<(u64, JobRecord)>, Status> {
    let total = lines.len();
    let parts = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(total.div_ceil(PREPARE_PART))
        .max(1);
    let per = total.div_ceil(parts).max(1);
    let mut lines = lines.into_iter();
    let mut tasks = Vec::with_capacity(parts);
    let mut at = first;
    loop {
        let part: Vec<String> = lines.by_ref().take(per).collect();
        if part.is_empty() {
            break;
        }
        let (c, b, from) = (core.clone(), batch.clone(), at);
        at += part.len() as u64;
        tasks.push(tokio::spawn(blocking(move || {
            c.prepare_chunk(&b, from, part)
        })));
    }
    let mut jobs = Vec::with_capacity(total);
    for t in tasks {
        jobs.extend(t.await.map_err(|e| Status::internal(e.to_string()))??);
    }
    Ok(jobs)
}

/// A batch's progress: its status now, then again after jobs finish (at most every
/// [`WATCH_GAP`], at once when the batch is finished) or every [`WATCH_EVERY`]; the stream
/// ends after the status of the finished batch, or when `shutdown` is cancelled.
pub async fn watch(
    core: Arc<Core>,
    batch_id: String,
    shutdown: CancellationToken,
) -> Result<ReceiverStream<Result<BatchStatus, Status>>, Status> {
    let first = {
        let (core, id) = (core.clone(), batch_id.clone());
        blocking(move || core.status(&id)).await?
    };
    let (tx, rx) = mpsc::channel(4);
    let mut changes = core.watch_finished();
    let fetch = move || {
        let (core, id) = (core.clone(), batch_id.clone());
        blocking(move || core.status(&id))
    };
    let done = |s: &BatchStatus| s.queued + s.leased == 0;
    tokio::spawn(async move {
        let mut status = first;
        loop {
            let finished = done(&status);
            changes.borrow_and_update();
            if tx.send(Ok(status)).await.is_err() || finished {
                break;
            }
            let sent = tokio::time::Instant::now();
            let changed = tokio::select! {
                _ = tokio::time::sleep(WATCH_EVERY) => false,
                _ = changes.changed() => true,
                _ = shutdown.cancelled() => break,
            };
            // after a change, updates keep WATCH_GAP apart, except the last one: a batch
            // that finishes, also during the gap, is reported at once
            let mut next = fetch().await;
            while changed && next.as_ref().is_ok_and(|s| !done(s)) {
                tokio::select! {
                    _ = tokio::time::sleep_until(sent + WATCH_GAP) => {
                        next = fetch().await;
                        break;
                    }
                    _ = changes.changed() => next = fetch().await,
                    _ = shutdown.cancelled() => break,
                }
            }
            match next {
                Ok(s) => status = s,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    break;
                }
            }
        }
    });
    Ok(ReceiverStream::new(rx))
}

/// Returns expired leases' jobs to the queue, and forgets worker sessions long silent
/// ([`Core::prune_workers`]), every half second until `shutdown` is cancelled.
pub fn sweep_leases(core: Arc<Core>, shutdown: CancellationToken) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                _ = shutdown.cancelled() => return,
            }
            core.prune_workers();
            let core = core.clone();
            if let Ok(Ok(n)) = tokio::task::spawn_blocking(move || core.expire_leases()).await {
                if n > 0 {
                    tracing::info!(expired = n, "leases expired; jobs back in the queue");
                }
            }
        }
    })
}
