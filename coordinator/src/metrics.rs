//! Prometheus metrics of the coordinator, encoded by `prometheus-client` (OpenMetrics text)
//! from a registry this module owns. Its one collector takes a [`Snapshot`] at scrape time, so
//! a scrape always shows exactly what the coordinator knows at that moment; nothing here reads
//! the core.
//!
//! | metric | type | meaning |
//! | --- | --- | --- |
//! | `cubefleet_jobs{state}` | gauge | jobs per state (`queued`, `leased`, `done`, `invalid`, `cancelled`, `failed`), all batches |
//! | `cubefleet_batches{state}` | gauge | batches `running`, `finished` or `cancelled` |
//! | `cubefleet_jobs_submitted_total` | counter | lines submitted since start |
//! | `cubefleet_jobs_completed_total` | counter | jobs that became `done` since start (verified results + answers from the store) |
//! | `cubefleet_jobs_from_store_total` | counter | lines answered from stored results at submission |
//! | `cubefleet_results_verified_total` | counter | worker results that passed verification |
//! | `cubefleet_results_rejected_total` | counter | worker results refused by verification |
//! | `cubefleet_lease_expiries_total` | counter | leases that expired (the job went back to the queue) |
//! | `cubefleet_confirm_disagreements_total` | counter | claims of batches with `confirm` 2 that two workers disagreed on |
//! | `cubefleet_queue_depth` | gauge | jobs no thread searches yet: queued, lines of range and sample batches not made into jobs, and leased jobs beyond the threads of the session holding them |
//! | `cubefleet_jobs_searching` | gauge | leased jobs searched now (at most one per thread of the session holding them) |
//! | `cubefleet_solve_mean_seconds` | gauge | mean search time of the last results (a default before any) |
//! | `cubefleet_queued_work_seconds` | gauge | thread-seconds of the work no thread searches yet, each batch's jobs at that batch's mean search time (before its first result: the mean of all recent results, or how long its oldest lease has run if longer): the autoscaling signal |
//! | `cubefleet_workers` | gauge | workers registered |
//! | `cubefleet_worker_threads` | gauge | search threads of all registered workers |
//! | `cubefleet_worker_last_seen_max_seconds` | gauge | seconds since the longest-silent registered worker last called (0 with none) |
//! | `cubefleet_solve_seconds` | histogram | search time of accepted results |
//! | `cubefleet_solution_length` | histogram | length of the solutions in the store, all batches |
//!
//! The only labels are job and batch states and histogram bounds: counts, never a name (of
//! a worker, a credential or a batch), a line, a solution or a secret, so `/metrics` can stay
//! open where the status page needs the token (the README's promise). What each worker did
//! is on the status page (which needs a client credential) and on the worker's own
//! `/metrics`.
//!
//! Counters are registered without their `_total`: OpenMetrics adds it to the sample.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeGaugeValue, EncodeLabelSet, MetricEncoder, NoLabelSet,
};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::error::Error;
use crate::snapshot::Snapshot;
use crate::solve_times::SolveTimes;

pub use crate::solve_times::{DEFAULT_SOLVE_SECONDS, SOLVE_BUCKETS};

/// Content type of what [`Metrics::render`] and [`render`] return (OpenMetrics 1.0 text).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Largest solution length with its own histogram bucket (`le="0.0"` .. `le="30.0"`, then
/// `+Inf`).
pub const MAX_LENGTH_BUCKET: usize = 30;

/// Where the collector gets its snapshot from at each scrape (blocks: scrape off the async
/// runtime).
type Source = dyn Fn() -> Result<Snapshot, Error> + Send + Sync;

/// The coordinator's registry: one collector over a snapshot source.
#[derive(Debug)]
pub struct Metrics {
    /// Holds the collector (and nothing else).
    registry: Registry,
    /// The same collector, to read why a scrape failed.
    collector: Arc<SnapshotCollector>,
}

impl Metrics {
    /// Metrics that take a snapshot with `source` at every scrape.
    pub fn new(source: impl Fn() -> Result<Snapshot, Error> + Send + Sync + 'static) -> Metrics {
        let collector = Arc::new(SnapshotCollector {
            source: Box::new(source),
            failure: Mutex::new(None),
        });
        let mut registry = Registry::default();
        registry.register_collector(Box::new(collector.clone()));
        Metrics {
            registry,
            collector,
        }
    }

    /// One scrape: the OpenMetrics text of a fresh snapshot (blocks on the store).
    pub fn render(&self) -> Result<String, Error> {
        render(&self.registry).map_err(|e| {
            let mut failure = self
                .collector
                .failure
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            failure.take().unwrap_or(e)
        })
    }
}

/// The OpenMetrics text of `registry` (for processes with collectors of their own, such as a
/// worker).
pub fn render(registry: &Registry) -> Result<String, Error> {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry)
        .map_err(|_| Error::Internal("a metrics collector failed".into()))?;
    Ok(text)
}

/// Encodes a snapshot taken at scrape time.
struct SnapshotCollector {
    /// Gives the snapshot.
    source: Box<Source>,
    /// Why the last scrape failed (taken by [`Metrics::render`]).
    failure: Mutex<Option<Error>>,
}

impl fmt::Debug for SnapshotCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SnapshotCollector").finish_non_exhaustive()
    }
}

impl Collector for SnapshotCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> fmt::Result {
        match (self.source)() {
            Ok(snap) => encode_snapshot(&snap, &mut encoder),
            Err(e) => {
                *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
                Err(fmt::Error)
            }
        }
    }
}

/// A gauge without labels.
fn gauge(
    e: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    v: impl EncodeGaugeValue,
) -> fmt::Result {
    e.encode_descriptor(name, help, None, MetricType::Gauge)?
        .encode_gauge(&v)
}

/// A counter without labels; `name` without `_total`.
fn counter(e: &mut DescriptorEncoder<'_>, name: &str, help: &str, v: u64) -> fmt::Result {
    e.encode_descriptor(name, help, None, MetricType::Counter)?
        .encode_counter::<NoLabelSet, u64, u64>(&v, None)
}

/// One sample of a labelled gauge family: a count.
fn sample(family: &mut MetricEncoder<'_>, labels: &impl EncodeLabelSet, n: u64) -> fmt::Result {
    family.encode_family(labels)?.encode_gauge(&n)
}

/// A histogram from counts per bound (not cumulative; `+Inf` as the last bound).
fn histogram(
    e: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    per_bucket: &[(f64, u64)],
    sum: f64,
) -> fmt::Result {
    // prometheus-client spells the last bound `+Inf` when it is f64::MAX
    let buckets: Vec<(f64, u64)> = per_bucket
        .iter()
        .map(|&(le, n)| (if le.is_infinite() { f64::MAX } else { le }, n))
        .collect();
    let count = buckets.iter().map(|&(_, n)| n).sum();
    e.encode_descriptor(name, help, None, MetricType::Histogram)?
        .encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
}

/// Every metric of the table above, from `snap`.
fn encode_snapshot(snap: &Snapshot, e: &mut DescriptorEncoder<'_>) -> fmt::Result {
    let c = &snap.counters;
    let mut jobs = e.encode_descriptor(
        "cubefleet_jobs",
        "Jobs per state, all batches.",
        None,
        MetricType::Gauge,
    )?;
    for (state, n) in snap.jobs_by_state() {
        sample(&mut jobs, &[("state", state)], n)?;
    }
    let mut batches = e.encode_descriptor(
        "cubefleet_batches",
        "Batches running, finished or cancelled.",
        None,
        MetricType::Gauge,
    )?;
    for (state, n) in snap.batches_by_state() {
        let labels = [("state", state.name())];
        sample(&mut batches, &labels, n)?;
    }

    let counters: [(&str, &str, u64); 7] = [
        (
            "cubefleet_jobs_submitted",
            "Lines submitted since start.",
            c.submitted,
        ),
        (
            "cubefleet_jobs_completed",
            "Jobs that became done since start (verified results and answers from the store).",
            c.completed + c.from_store,
        ),
        (
            "cubefleet_jobs_from_store",
            "Lines answered from stored results at submission since start.",
            c.from_store,
        ),
        (
            "cubefleet_results_verified",
            "Worker results that passed verification since start.",
            c.completed,
        ),
        (
            "cubefleet_results_rejected",
            "Worker results refused by verification since start.",
            c.rejected,
        ),
        (
            "cubefleet_lease_expiries",
            "Leases that expired since start (the job went back to the queue).",
            c.lease_expiries,
        ),
        (
            "cubefleet_confirm_disagreements",
            "Claims of batches with confirm 2 that two workers disagreed on since start.",
            c.disagreements,
        ),
    ];
    for (name, help, v) in counters {
        counter(e, name, help, v)?;
    }

    gauge(
        e,
        "cubefleet_queue_depth",
        "Jobs no thread searches yet: queued, not made yet, or waiting in a worker's lease.",
        snap.queue_depth(),
    )?;
    gauge(
        e,
        "cubefleet_jobs_searching",
        "Leased jobs searched now (at most one per thread of the session holding them).",
        snap.work.searching,
    )?;
    gauge(
        e,
        "cubefleet_solve_mean_seconds",
        "Mean search time of the recent results (a default of 1 s before any).",
        snap.solve_times.estimate(),
    )?;
    gauge(
        e,
        "cubefleet_queued_work_seconds",
        "Estimated thread-seconds of the work no thread searches yet, at each batch's mean search time.",
        snap.queued_work_seconds(),
    )?;
    gauge(
        e,
        "cubefleet_workers",
        "Workers registered.",
        snap.workers.len() as u64,
    )?;

    // all workers together: no sample names a worker
    gauge(
        e,
        "cubefleet_worker_threads",
        "Search threads of all registered workers.",
        snap.workers
            .iter()
            .map(|(_, w)| u64::from(w.threads))
            .sum::<u64>(),
    )?;
    gauge(
        e,
        "cubefleet_worker_last_seen_max_seconds",
        "Seconds since the longest-silent registered worker last called (0 with none).",
        snap.workers
            .iter()
            .map(|(_, w)| snap.ago(w.last_seen).as_secs_f64())
            .fold(0.0, f64::max),
    )?;

    let st: &SolveTimes = &snap.solve_times;
    histogram(
        e,
        "cubefleet_solve_seconds",
        "Search time of the results accepted since start.",
        &st.per_bucket(),
        st.sum(),
    )?;
    let lengths = snap.length_histogram();
    let mut buckets: Vec<(f64, u64)> = (0..=MAX_LENGTH_BUCKET)
        .map(|len| (len as f64, lengths.get(len).copied().unwrap_or(0)))
        .collect();
    let longer = lengths.iter().skip(MAX_LENGTH_BUCKET + 1).sum();
    buckets.push((f64::INFINITY, longer));
    let sum: u64 = lengths
        .iter()
        .enumerate()
        .map(|(len, &n)| len as u64 * n)
        .sum();
    histogram(
        e,
        "cubefleet_solution_length",
        "Length of the stored solutions (moves in the batch's metric), all batches.",
        &buckets,
        sum as f64,
    )
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use cubefleet_proto::BatchStatus;

    use super::*;
    use crate::core::{Counters, WorkerInfo};

    /// A snapshot with one running batch and one worker, whose id and name must not show.
    fn snapshot() -> Snapshot {
        let now = Instant::now();
        let mut solve_times = SolveTimes::default();
        solve_times.observe(3.0);
        solve_times.observe(2000.0);
        Snapshot {
            batches: vec![BatchStatus {
                batch_id: "secret-batch".into(),
                name: "a batch name nobody else may read".into(),
                total: 10,
                queued: 6,
                done: 4,
                length_histogram: vec![0, 0, 1, 3],
                ..BatchStatus::default()
            }],
            counters: Counters {
                submitted: 10,
                completed: 3,
                from_store: 1,
                ..Counters::default()
            },
            work: crate::core::Work {
                queued: 6,
                waiting: 0,
                searching: 0,
                seconds: 6.0,
            },
            workers: vec![(
                "session-id-secret".into(),
                WorkerInfo {
                    name: "worker-name-secret \"a\"\\b".into(),
                    threads: 4,
                    fingerprint: String::new(),
                    completed: 3,
                    rejected: 1,
                    last_seen: now,
                    identity: "a".into(),
                    credential: "anonymous".into(),
                    held: 0,
                    asked: None,
                    capped: true,
                    protocol: cubefleet_proto::PROTOCOL,
                },
            )],
            solve_times,
            now,
        }
    }

    /// The value of the sample `series` in `text`.
    fn value(text: &str, series: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no sample {series} in:\n{text}"))
    }

    #[test]
    fn a_scrape_encodes_the_snapshot_under_the_documented_names() {
        let text = Metrics::new(|| Ok(snapshot())).render().expect("render");
        let expected: [(String, f64); 16] = [
            ("cubefleet_jobs{state=\"queued\"}".into(), 6.0),
            ("cubefleet_jobs{state=\"done\"}".into(), 4.0),
            ("cubefleet_batches{state=\"running\"}".into(), 1.0),
            ("cubefleet_jobs_submitted_total".into(), 10.0),
            ("cubefleet_jobs_completed_total".into(), 4.0),
            ("cubefleet_results_verified_total".into(), 3.0),
            ("cubefleet_queue_depth".into(), 6.0),
            ("cubefleet_workers".into(), 1.0),
            ("cubefleet_worker_threads".into(), 4.0),
            ("cubefleet_solve_seconds_count".into(), 2.0),
            ("cubefleet_solve_seconds_bucket{le=\"0.005\"}".into(), 1.0),
            ("cubefleet_solve_seconds_bucket{le=\"+Inf\"}".into(), 2.0),
            ("cubefleet_solution_length_bucket{le=\"2.0\"}".into(), 1.0),
            ("cubefleet_solution_length_bucket{le=\"+Inf\"}".into(), 4.0),
            ("cubefleet_solution_length_sum".into(), 11.0),
            ("cubefleet_solution_length_count".into(), 4.0),
        ];
        for (series, want) in &expected {
            assert_eq!(value(&text, series), *want, "{series}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert!(value(&text, "cubefleet_worker_last_seen_max_seconds") < 60.0);
        // nothing of a batch's contents leaks, nor a worker's id or name, nor a credential's
        assert!(!text.contains("secret-batch") && !text.contains("nobody else"));
        assert!(
            !text.contains("secret") && !text.contains("anonymous"),
            "{text}"
        );
    }

    #[test]
    fn a_failed_snapshot_fails_the_scrape_with_its_reason() {
        let m = Metrics::new(|| Err(Error::Internal("store closed".into())));
        let e = m.render().expect_err("no snapshot");
        assert!(e.to_string().contains("store closed"), "{e}");
    }
}
