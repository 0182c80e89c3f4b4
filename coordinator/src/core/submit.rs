//! The submission pipeline: a batch's lines taken from a stream of chunks of any size, cut
//! into groups that grow from [`FIRST_CHUNK`] lines to [`STORE_CHUNK`] (so workers start on a
//! new batch at once, and a large file is stored in few flushes), each group prepared in
//! parallel ([`intake`](super::intake)'s `prepare_chunk`) while the one before is stored.
//! Shared by the gRPC service and by callers in the coordinator's own process
//! (`cubefleet run`).
//!
//! Invariants: memory stays bounded by [`STORE_CHUNK`] lines plus one chunk; a group is
//! stored only after the one before it is, so a batch's lines are stored in order; no store
//! of a group is left running after the batch is released to the next submitter; lines are
//! acknowledged only once stored (the answer comes after the last flush).

use std::sync::Arc;

use cubefleet_proto::{BatchSpec, SubmitResponse};
use tokio_stream::{Stream, StreamExt};
use tonic::Status;

use super::{blocking, Core};
use crate::record::{BatchRecord, JobRecord};

/// Lines are stored in groups of at most this many (one flush each).
const STORE_CHUNK: usize = 5000;

/// The first group of a submission is this small, and each next one twice the lines stored so
/// far (up to [`STORE_CHUNK`]), so workers start on a new batch at once.
const FIRST_CHUNK: usize = 250;

/// Least lines of a part that [`prepare`] hands to a thread of its own.
const PREPARE_PART: usize = 256;

/// The content hash a submission sends after its lines (`SubmitEnd`), once its stream has
/// ended: None when it sent none.
pub type EndHash = Arc<std::sync::Mutex<Option<Vec<u8>>>>;

/// A store of one group in flight: the batch record as it is after the group.
type Storing = Option<tokio::task::JoinHandle<Result<BatchRecord, Status>>>;

impl Core {
    /// Submits a batch: `spec`, then its lines as they arrive in `chunks` (any chunking;
    /// memory stays bounded by [`STORE_CHUNK`] lines plus one chunk). Lines are acknowledged
    /// only once stored: the answer comes after the last flush. A submission of a batch id
    /// that exists continues it past the lines it already stored.
    pub async fn submit<S>(
        self: &Arc<Self>,
        spec: BatchSpec,
        chunks: S,
    ) -> Result<SubmitResponse, Status>
    where
        S: Stream<Item = Result<Vec<String>, Status>> + Unpin,
    {
        self.submit_with_end(spec, chunks, Arc::default(), String::new())
            .await
    }

    /// [`Core::submit`] for the client credential `owner` ("" for none: `run`, a coordinator
    /// without credentials), which a new batch records; once every line is stored the hash
    /// the stream left in `end` (if any) names the batch's contents
    /// ([`Core::name_contents`]), before the batch is free for another submitter and before
    /// the answer.
    pub async fn submit_with_end<S>(
        self: &Arc<Self>,
        spec: BatchSpec,
        mut chunks: S,
        end: EndHash,
        owner: String,
    ) -> Result<SubmitResponse, Status>
    where
        S: Stream<Item = Result<Vec<String>, Status>> + Unpin,
    {
        let mut batch = {
            let core = self.clone();
            blocking(move || core.begin_submit(spec, &owner)).await?
        };
        let id = batch.batch_id.clone();
        // whatever happens below, the batch is free for the next submitter afterwards
        struct Release(Arc<Core>, String);
        impl Drop for Release {
            fn drop(&mut self) {
                self.0.end_submit(&self.1);
            }
        }
        let _release = Release(self.clone(), id.clone());
        // a pipeline: chunk k is stored (and flushed) while chunk k + 1 is received and prepared
        let mut storing: Storing = None;
        let received = self
            .receive_chunks(&mut chunks, &mut batch, &mut storing)
            .await;
        // never leave a store running after the batch is released to another submitter
        if let Some(h) = storing.take() {
            batch = h.await.map_err(|e| Status::internal(e.to_string()))??;
        }
        let next_index = received?;
        let hash = end.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(hash) = hash.filter(|h| !h.is_empty()) {
            let (core, id) = (self.clone(), id.clone());
            blocking(move || core.name_contents(&id, hash)).await?;
        }
        // the counts describe the whole batch, also when an earlier submission stored part of it
        let (invalid, from_store) = self.submitted_counts(batch.seq);
        tracing::info!(batch = %crate::logsafe::text(&id), lines = next_index, invalid, from_store, "batch submitted");
        Ok(SubmitResponse {
            batch_id: id,
            total: batch.total,
            invalid,
            from_store,
        })
    }

    /// The chunks of a submission: each group of lines is prepared, then stored once the
    /// previous one is stored (`storing`, the store in flight, updates `batch`). Returns the
    /// lines received.
    async fn receive_chunks<S>(
        self: &Arc<Self>,
        chunks: &mut S,
        batch: &mut BatchRecord,
        storing: &mut Storing,
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
                let size = group_size(next_index);
                if pending.is_empty() || (pending.len() < size && !done) {
                    break;
                }
                let take = pending.len().min(size);
                let lines: Vec<String> = pending.drain(..take).collect();
                let jobs = self.prepare(batch, next_index, lines).await?;
                if let Some(h) = storing.take() {
                    *batch = h.await.map_err(|e| Status::internal(e.to_string()))??;
                }
                let (c, mut b) = (self.clone(), batch.clone());
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

    /// [`Core::prepare_chunk`] of lines `first..` of `batch`, in contiguous parts (one per
    /// core, of at least [`PREPARE_PART`] lines) prepared at once on the blocking pool, whose
    /// threads stay from chunk to chunk. Returns the jobs in line order.
    async fn prepare(
        self: &Arc<Self>,
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
            let (c, b, from) = (self.clone(), batch.clone(), at);
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
}

/// Lines of the next group once `stored` lines are stored: [`FIRST_CHUNK`] at first, then as
/// many as are stored (the groups double), at most [`STORE_CHUNK`].
fn group_size(stored: u64) -> usize {
    STORE_CHUNK.min(FIRST_CHUNK.max(usize::try_from(stored).unwrap_or(usize::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_start_small_double_and_stop_at_the_store_chunk() {
        let mut stored = 0u64;
        let mut sizes = Vec::new();
        while stored < 20_000 {
            let n = group_size(stored);
            sizes.push(n);
            stored += n as u64;
        }
        assert_eq!(sizes[..6], [250, 250, 500, 1000, 2000, 4000]);
        assert!(sizes[6..].iter().all(|&n| n == STORE_CHUNK), "{sizes:?}");
    }
}
