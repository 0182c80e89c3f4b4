//! The progress stream of a batch (`WatchBatch`, and `cubefleet run`'s progress bar): the
//! [`Core::status`] of the batch again whenever jobs finish, at least every [`WATCH_EVERY`],
//! never more often than every [`WATCH_GAP`] but for the last one.
//!
//! Invariants: the stream's first message is the status at the call; its last is the status
//! of the finished batch (sent at once, also during a gap), or an error, or nothing more once
//! shutdown is cancelled. The store is read on the blocking pool.

use std::sync::Arc;
use std::time::Duration;

use cubefleet_proto::BatchStatus;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::Status;

use super::{blocking, Core};

/// Time between two progress messages of [`Core::watch`] when nothing happens (for the rate).
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// Least time between two progress messages of [`Core::watch`]: one is sent this soon after jobs
/// finish (so `run` and `submit --wait` return promptly), several changes are sent as one.
const WATCH_GAP: Duration = Duration::from_millis(20);

impl Core {
    /// A batch's progress: its status now, then again after jobs finish (at most every
    /// [`WATCH_GAP`], at once when the batch is finished) or every [`WATCH_EVERY`]; the stream
    /// ends after the status of the finished batch, or when `shutdown` is cancelled.
    pub async fn watch(
        self: &Arc<Self>,
        batch_id: String,
        shutdown: CancellationToken,
    ) -> Result<ReceiverStream<Result<BatchStatus, Status>>, Status> {
        let core = self.clone();
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
}
