//! A worker's own metrics, counted by [`Metered`], a [`Coordinator`] that wraps another and
//! watches what goes through it: jobs leased, results reported (with their search nodes and
//! time), jobs handed back. The runtime itself needs no change for it.
//!
//! `threads_busy` is derived: jobs held (leased, not yet reported or handed back) capped at the
//! number of search threads, since the pool runs one job per thread and queues the rest.
//!
//! The figures are encoded by `prometheus-client`: [`registry`] holds a collector that reads
//! them at each scrape.

use std::sync::atomic::{AtomicU64, Ordering};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::pool::{Finished, Job};
use crate::runtime::{Coordinator, HeartbeatReply};
use cubefleet_search::{Progress, Status};

/// Counters of one worker process, shared between [`Metered`] and whoever renders them.
#[derive(Debug)]
pub struct WorkerMetrics {
    /// Search threads.
    threads: u64,
    /// Time the tables took to load (map and check), microseconds.
    tables_load_micros: AtomicU64,
    /// Jobs leased since start.
    leased: AtomicU64,
    /// Results reported and acknowledged since start (cancelled searches not counted).
    completed: AtomicU64,
    /// Jobs handed back unfinished, or reported as given up, since start.
    released: AtomicU64,
    /// Jobs reported or handed back since start, whatever became of them.
    ended: AtomicU64,
    /// Search nodes of the reported results.
    nodes: AtomicU64,
    /// Search time of the reported results, microseconds.
    search_micros: AtomicU64,
    /// Searches that panicked (their jobs were handed back) since start.
    search_panics: AtomicU64,
    /// When the worker started.
    started: Instant,
}

impl WorkerMetrics {
    /// Metrics of a worker with `threads` search threads whose tables loaded in `tables_load`.
    pub fn new(threads: usize, tables_load: Duration) -> Arc<WorkerMetrics> {
        Arc::new(WorkerMetrics {
            threads: threads as u64,
            tables_load_micros: AtomicU64::new(tables_load.as_micros() as u64),
            leased: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            released: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            nodes: AtomicU64::new(0),
            search_micros: AtomicU64::new(0),
            search_panics: AtomicU64::new(0),
            started: Instant::now(),
        })
    }

    /// Jobs held now: leased and neither reported nor handed back.
    pub fn held(&self) -> u64 {
        let leased = self.leased.load(Ordering::Relaxed);
        leased.saturating_sub(self.ended.load(Ordering::Relaxed))
    }

    /// Results reported since start.
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::Relaxed)
    }
}

/// A registry whose one collector reads `metrics` at every scrape.
pub fn registry(metrics: &Arc<WorkerMetrics>) -> Registry {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(metrics.clone()));
    registry
}

impl Collector for WorkerMetrics {
    fn encode(&self, mut e: DescriptorEncoder<'_>) -> std::fmt::Result {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let nodes = load(&self.nodes);
        let search = load(&self.search_micros) as f64 / 1e6;
        let gauges: [(&str, &str, f64); 6] = [
            ("cubefleet_worker_search_threads", "Search threads of this worker.", self.threads as f64),
            (
                "cubefleet_worker_threads_busy",
                "Search threads running a job (jobs held, at most the threads).",
                self.held().min(self.threads) as f64,
            ),
            ("cubefleet_worker_jobs_held", "Jobs leased and not yet reported or handed back.", self.held() as f64),
            (
                "cubefleet_worker_nodes_per_second",
                "Search speed of one thread: nodes per second of search time, over the results since start.",
                if search > 0.0 { nodes as f64 / search } else { 0.0 },
            ),
            (
                "cubefleet_worker_tables_load_seconds",
                "Time the lookup tables took to load (map and check) at start.",
                load(&self.tables_load_micros) as f64 / 1e6,
            ),
            (
                "cubefleet_worker_uptime_seconds",
                "Seconds since the worker started.",
                self.started.elapsed().as_secs_f64(),
            ),
        ];
        for (name, help, v) in gauges {
            e.encode_descriptor(name, help, None, MetricType::Gauge)?
                .encode_gauge(&v)?;
        }
        // counters without their `_total`: OpenMetrics adds it to the sample
        let counters: [(&str, &str, f64); 6] = [
            (
                "cubefleet_worker_jobs_leased",
                "Jobs leased since start.",
                load(&self.leased) as f64,
            ),
            (
                "cubefleet_worker_jobs_completed",
                "Results reported to the coordinator and acknowledged since start.",
                load(&self.completed) as f64,
            ),
            (
                "cubefleet_worker_jobs_released",
                "Jobs handed back unfinished since start.",
                load(&self.released) as f64,
            ),
            (
                "cubefleet_worker_nodes",
                "Search nodes of the reported results; rate() is the worker's nodes per second.",
                nodes as f64,
            ),
            (
                "cubefleet_worker_search_seconds",
                "Search time of the reported results.",
                search,
            ),
            (
                "cubefleet_worker_search_panics",
                "Searches that panicked since start (each job was handed back to the queue).",
                load(&self.search_panics) as f64,
            ),
        ];
        for (name, help, v) in counters {
            e.encode_descriptor(name, help, None, MetricType::Counter)?
                .encode_counter::<NoLabelSet, f64, f64>(&v, None)?;
        }
        Ok(())
    }
}

/// A [`Coordinator`] that counts what passes through it into a [`WorkerMetrics`].
pub struct Metered<C> {
    inner: C,
    metrics: Arc<WorkerMetrics>,
}

impl<C> Metered<C> {
    /// Wraps `inner`, counting into `metrics`.
    pub fn new(inner: C, metrics: Arc<WorkerMetrics>) -> Metered<C> {
        Metered { inner, metrics }
    }

    /// The wrapped coordinator.
    pub fn inner(&self) -> &C {
        &self.inner
    }
}

impl<C: Coordinator> Coordinator for Metered<C> {
    type Error = C::Error;

    async fn lease(&self, max: u32, wait: Duration) -> Result<Vec<Job>, Self::Error> {
        let jobs = self.inner.lease(max, wait).await?;
        self.metrics
            .leased
            .fetch_add(jobs.len() as u64, Ordering::Relaxed);
        Ok(jobs)
    }

    async fn heartbeat(&self, held: Vec<(u64, Progress)>) -> Result<HeartbeatReply, Self::Error> {
        self.inner.heartbeat(held).await
    }

    async fn complete(&self, results: &[Finished]) -> Result<(), Self::Error> {
        let n = results.len() as u64;
        let solved: Vec<&Finished> = results
            .iter()
            .filter(|f| f.outcome.status != Status::Cancelled)
            .collect();
        let (count, nodes) = (
            solved.len() as u64,
            solved.iter().map(|f| f.outcome.nodes).sum(),
        );
        let micros: f64 = solved.iter().map(|f| f.millis.max(0.0) * 1000.0).sum();
        let m = &self.metrics;
        self.inner.complete(results).await?;
        m.completed.fetch_add(count, Ordering::Relaxed);
        m.released.fetch_add(n - count, Ordering::Relaxed);
        m.ended.fetch_add(n, Ordering::Relaxed);
        m.nodes.fetch_add(nodes, Ordering::Relaxed);
        let panics = results.iter().filter(|f| f.panicked).count() as u64;
        m.search_panics.fetch_add(panics, Ordering::Relaxed);
        m.search_micros.fetch_add(micros as u64, Ordering::Relaxed);
        Ok(())
    }

    async fn release(&self, jobs: Vec<(u64, Progress)>) -> Result<(), Self::Error> {
        let n = jobs.len() as u64;
        let r = self.inner.release(jobs).await;
        // handed back either way: on failure the leases expire
        self.metrics.released.fetch_add(n, Ordering::Relaxed);
        self.metrics.ended.fetch_add(n, Ordering::Relaxed);
        r
    }
}
