//! `run`'s export: every result of the batch written as JSON lines in line order while the
//! batch runs, as the results finish, in memory bounded by [`Limits`] whatever the batch's
//! size (a slow first line and a million fast ones after it hold no more than a few
//! thousand results).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use cubefleet_coordinator::Core;
use cubefleet_proto::JobResult;
use tokio_util::sync::CancellationToken;

use crate::cmd::client::ResultsWriter;

/// How much the export holds in memory at most: about `queued + waiting` results (a few
/// hundred bytes each) plus one store page.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// Results the core may queue for the export ([`Core::follow`]'s capacity, at least 1):
    /// when the export falls this far behind, the core stops sending and the export reads
    /// the store instead.
    pub(super) queued: usize,
    /// Results kept while they wait for lines before them ([`Waiting`], at least 1): only
    /// those of the next `waiting` lines to write; later ones are read back from the store
    /// when their turn comes.
    pub(super) waiting: u64,
    /// Results per store read (at least 1).
    pub(super) page: usize,
}

impl Limits {
    /// `run`'s limits: about 10 MB, and large enough that in a normal run (results finishing
    /// roughly in line order, the export keeping up) nothing is read back from the store.
    pub(super) const RUN: Limits = Limits {
        queued: 16_384,
        waiting: 16_384,
        page: 4096,
    };
}

/// The most results taken from the follower's channel at once (between two flushes).
const RECEIVED: usize = 1024;

/// Results that finished before some line ahead of them, by line index, waiting for their
/// turn. Only results of lines `next..next + window` are kept (`next` the next line to
/// write), so at most `window` results wait, however far ahead the others finish.
struct Waiting {
    /// The results kept, by line index; every key is in `next..next + window`.
    results: BTreeMap<u64, Box<JobResult>>,
    /// How many lines from the next one to write have their results kept (at least 1).
    window: u64,
}

impl Waiting {
    /// An empty buffer keeping the results of the next `window` lines (at least 1).
    fn new(window: u64) -> Self {
        Waiting {
            results: BTreeMap::new(),
            window: window.max(1),
        }
    }

    /// Keeps `r` when its line is among the next `window` from `next`; returns whether it
    /// was kept. A result not kept is read from the store when its line comes.
    fn offer(&mut self, next: u64, r: Box<JobResult>) -> bool {
        let ahead = r.index.wrapping_sub(next);
        if ahead >= self.window {
            return false;
        }
        self.results.insert(r.index, r);
        true
    }

    /// The result of line `next`, if kept.
    fn take(&mut self, next: u64) -> Option<Box<JobResult>> {
        self.results.remove(&next)
    }

    /// Forgets the results of lines before `next` (written meanwhile from the store).
    fn forget_before(&mut self, next: u64) {
        self.results = self.results.split_off(&next);
    }

    /// How many results are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.results.len()
    }
}

/// Writes every result of the batch through `w` (its format; its rows name the batch's move
/// set) in line order while the batch runs, as they finish (without the facelets, which the lines do not show). Returns the number written once
/// all `total` are.
///
/// The results come from the core as they finish ([`Core::follow`], which moves them out of
/// the completions, so they are not read back from the store), and wait in a bounded reorder
/// buffer ([`Waiting`]) until every line before them is written. A line the buffer does not
/// hold (finished before the export began: at submission, in an earlier run, or by a
/// cancellation; or too far ahead when it finished) is read from the store, once per line the
/// export stops at: it started to follow before that read, so a line the read finds unfinished
/// comes from the follower when it finishes. When the core stops sending (the export fell
/// `limits.queued` results behind), the export goes on from the store alone, reading again
/// whenever jobs finish ([`Core::watch_finished`]). Once `all_finished` is cancelled (every
/// job of the batch finished), the rest is read from the store at once. Store reads run off
/// the async threads; what was written is flushed whenever the export waits.
pub(super) async fn export_following(
    core: Arc<Core>,
    batch: String,
    total: u64,
    mut w: ResultsWriter<Box<dyn Write + Send>>,
    all_finished: CancellationToken,
    limits: Limits,
) -> anyhow::Result<u64> {
    let page_size = limits.page.max(1);
    // the finished results from line `from` on, up to the first unfinished one (a page at most)
    let read = |from: u64| {
        let (core, batch) = (core.clone(), batch.clone());
        async move {
            tokio::task::spawn_blocking(move || core.finished_prefix(&batch, from, page_size))
                .await?
        }
    };
    // subscribed before following: a job finishing after a store read wakes the export
    let mut finished = core.watch_finished();
    let mut feed = core.follow(&batch, limits.queued)?;
    // true until the core stops sending
    let mut fed = true;
    // the results taken from the feed at once (those already there, up to a page's worth)
    let mut received = Vec::with_capacity(page_size.min(RECEIVED));
    // lines go out in order, so the next to write is line `w.written()`
    let mut waiting = Waiting::new(limits.waiting);
    // the line the last store read stopped at (then unfinished)
    let mut read_at = None;
    while w.written() < total {
        let next = w.written();
        if let Some(r) = waiting.take(next) {
            w.write(*r)?;
            continue;
        }
        // the line is not among the results kept: read the store from it, once per line the
        // export stops at (a page short of a full one ends at a line then unfinished, which
        // the follower sends when it finishes)
        if read_at != Some(next) {
            finished.borrow_and_update();
            let page = read(next).await?;
            let full = page.len() == page_size;
            for r in page {
                w.write(r)?;
            }
            waiting.forget_before(w.written());
            if !full {
                read_at = Some(w.written());
            }
            continue;
        }
        w.flush()?;
        tokio::select! {
            n = feed.recv_many(&mut received, page_size.min(RECEIVED)), if fed => {
                // none: the core stopped sending (the export fell behind); from now on the
                // store, now and whenever jobs finish
                if n == 0 {
                    fed = false;
                    read_at = None;
                }
                for r in received.drain(..) {
                    waiting.offer(next, r);
                }
            }
            changed = finished.changed(), if !fed => match changed {
                Ok(()) => read_at = None,
                // the core is gone: what is stored is read below
                Err(_) => break,
            },
            _ = all_finished.cancelled() => break,
        }
    }
    // every job finished: the rest is in the store
    while w.written() < total {
        let page = read(w.written()).await?;
        if page.is_empty() {
            let next = w.written();
            anyhow::bail!("line {next} of the batch has no result after all jobs finished");
        }
        for r in page {
            w.write(r)?;
        }
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::task::Poll;

    /// A result of line `index`.
    fn result(index: u64) -> Box<JobResult> {
        Box::new(JobResult {
            index,
            ..JobResult::default()
        })
    }

    /// The buffer keeps only the results of the next `window` lines, so it never holds more
    /// than `window`, however many results finish ahead of the next line.
    #[test]
    fn the_reorder_buffer_keeps_only_the_next_lines() {
        let mut waiting = Waiting::new(4);
        // line 0 is slow: a thousand lines after it finish first
        let kept: Vec<u64> = (1..1000).filter(|&i| waiting.offer(0, result(i))).collect();
        assert_eq!(kept, [1, 2, 3]);
        assert_eq!(waiting.len(), 3);
        assert!(waiting.offer(0, result(0)));
        assert_eq!(waiting.len(), 4);
        for next in 0..4 {
            assert_eq!(waiting.take(next).map(|r| r.index), Some(next));
        }
        assert!(waiting.take(4).is_none());
        // lines already written are not kept; a store read forgets those it wrote
        assert!(!waiting.offer(5, result(4)));
        assert!(waiting.offer(5, result(6)));
        waiting.forget_before(7);
        assert_eq!(waiting.len(), 0);
    }

    /// An output the test reads after the export wrote it.
    #[derive(Clone, Default)]
    struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Exports a batch whose first line is slow, with the core queueing at most `queued`
    /// results for the export and the export keeping those of the next 5 lines (store pages
    /// of 7): the export begins while only line 0 is stored (unfinished), then 300 lines
    /// finish at once (invalid lines, finished as they are stored), then line 0. Checks that
    /// every line is written once, in order, and that the export ends by itself.
    async fn check_export_after_a_slow_first_line(queued: usize) {
        use cubefleet_proto::{mode, BatchSpec, Completion, Mode, TwoPhase};
        let limits = Limits {
            queued,
            waiting: 5,
            page: 7,
        };
        let fast = 300;
        let dir = tempfile::tempdir().expect("temp dir");
        let core = Core::open(dir.path(), std::time::Duration::from_secs(30)).expect("open");
        let spec = BatchSpec {
            batch_id: "slow".into(),
            name: "slow".into(),
            mode: Some(Mode {
                kind: Some(mode::Kind::TwoPhase(TwoPhase {
                    max_length: cubefleet_proto::DEFAULT_MAX_LENGTH,
                })),
                ..Mode::default()
            }),
            ..BatchSpec::default()
        };
        let lines: Vec<String> = std::iter::once("R".to_string())
            .chain((1..=fast).map(|i| format!("not a cube {i}")))
            .collect();
        let submit = |lines: &[String]| {
            let chunks = tokio_stream::iter([Ok(lines.to_vec())]);
            core.submit(spec.clone(), chunks)
        };
        submit(&lines[..1]).await.expect("submit line 0");
        let out = Shared::default();
        let mut export = Box::pin(export_following(
            core.clone(),
            "slow".into(),
            lines.len() as u64,
            ResultsWriter::new(
                crate::cmd::client::ResultsFormat::Jsonl,
                Box::new(out.clone()) as Box<dyn Write + Send>,
            )
            .expect("a writer"),
            // never cancelled: the export finishes by itself
            CancellationToken::new(),
            limits,
        ));
        // polled once, the export follows the batch before the other lines are submitted
        // (its first store read may be under way), and cannot end: line 0 is unfinished
        let first = std::future::poll_fn(|cx| Poll::Ready(export.as_mut().poll(cx))).await;
        assert!(first.is_pending());
        let export = tokio::spawn(export);
        // the fast lines finish, then the slow one
        let submitted = submit(&lines).await.expect("submit the rest");
        assert_eq!(submitted.invalid, fast);
        let worker = core.register("w".into(), 1, String::new()).0;
        let slow = core.lease(&worker, 1).expect("lease");
        let done = Completion {
            job_id: slow[0].job_id,
            status: "solved".into(),
            solution: "R'".into(),
            has_solution: true,
            ..Completion::default()
        };
        assert_eq!(core.complete(&worker, &[done]).expect("complete").0, 1);
        let written = tokio::time::timeout(std::time::Duration::from_secs(20), export)
            .await
            .expect("the export ends once every line is written")
            .expect("join")
            .expect("export");
        assert_eq!(written, lines.len() as u64);
        let text = String::from_utf8(out.0.lock().expect("output").clone()).expect("UTF-8");
        let indexes: Vec<u64> = text
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("JSON");
                v["index"].as_u64().expect("index")
            })
            .collect();
        assert_eq!(indexes, (0..=fast).collect::<Vec<u64>>());
    }

    /// Results too far ahead of the next line are not kept but read back from the store:
    /// every line is still written once, in order.
    #[tokio::test]
    async fn results_too_far_ahead_are_read_back_from_the_store() {
        check_export_after_a_slow_first_line(100_000).await;
    }

    /// When the core stops sending (the export's channel full), the export goes on from the
    /// store, woken as jobs finish: every line is still written once, in order.
    #[tokio::test]
    async fn an_export_the_core_stopped_sending_to_goes_on_from_the_store() {
        check_export_after_a_slow_first_line(3).await;
    }
}
