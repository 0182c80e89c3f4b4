//! Prometheus metrics of the coordinator, rendered in the text exposition format (version
//! 0.0.4) from snapshots of [`Core`]: no global registry, so a scrape always shows exactly what
//! the coordinator knows at that moment.
//!
//! | metric | type | meaning |
//! | --- | --- | --- |
//! | `cubefleet_jobs{state}` | gauge | jobs per state (`queued`, `leased`, `done`, `invalid`, `cancelled`), all batches |
//! | `cubefleet_batches{state}` | gauge | batches `running`, `finished` or `cancelled` |
//! | `cubefleet_jobs_submitted_total` | counter | lines submitted since start |
//! | `cubefleet_jobs_completed_total` | counter | jobs that became `done` since start (verified results + answers from the store) |
//! | `cubefleet_jobs_from_store_total` | counter | lines answered from stored results at submission |
//! | `cubefleet_results_verified_total` | counter | worker results that passed verification |
//! | `cubefleet_results_rejected_total` | counter | worker results refused by verification |
//! | `cubefleet_lease_expiries_total` | counter | leases that expired (the job went back to the queue) |
//! | `cubefleet_queue_depth` | gauge | jobs queued (not leased) |
//! | `cubefleet_solve_mean_seconds` | gauge | mean search time of the last results (a default before any) |
//! | `cubefleet_queued_work_seconds` | gauge | queue depth x mean search time: thread-seconds of work queued, the autoscaling signal |
//! | `cubefleet_workers` | gauge | workers registered |
//! | `cubefleet_worker_threads{worker,name}` | gauge | search threads of a worker |
//! | `cubefleet_worker_completed_total{worker,name}` | counter | results of a worker accepted (its throughput: `rate()`) |
//! | `cubefleet_worker_rejected_total{worker,name}` | counter | results of a worker refused |
//! | `cubefleet_worker_last_seen_seconds{worker,name}` | gauge | seconds since the worker last called |
//! | `cubefleet_solve_seconds` | histogram | search time of accepted results |
//! | `cubefleet_solution_length` | histogram | length of the solutions in the store, all batches |

use std::collections::VecDeque;
use std::fmt::Write as _;

use cubefleet_proto::BatchStatus;

use crate::core::Core;
use crate::error::Error;

/// Upper bounds (seconds) of the solve-time histogram buckets; `+Inf` follows.
pub const SOLVE_BUCKETS: [f64; 16] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0,
    7200.0,
];

/// Largest solution length with its own histogram bucket (`le="0"` .. `le="30"`, then `+Inf`).
pub const MAX_LENGTH_BUCKET: usize = 30;

/// Search time assumed per job before any result came in (seconds): the queued-work estimate
/// must not be zero while jobs wait, or an autoscaler at zero workers would never start one.
pub const DEFAULT_SOLVE_SECONDS: f64 = 1.0;

/// How many recent results the mean search time is taken over.
const RECENT: usize = 256;

/// Search times of accepted results: a histogram since start and the most recent ones.
#[derive(Clone, Debug, Default)]
pub struct SolveTimes {
    /// Per bucket of [`SOLVE_BUCKETS`] plus one for `+Inf`; not cumulative. Empty until the
    /// first observation.
    buckets: Vec<u64>,
    /// Sum of all observations, seconds.
    sum: f64,
    /// Number of observations.
    count: u64,
    /// The last [`RECENT`] observations, seconds.
    recent: VecDeque<f64>,
}

impl SolveTimes {
    /// Records one search time, in milliseconds (negative or NaN count as 0).
    pub fn observe(&mut self, millis: f64) {
        let s = if millis.is_finite() && millis > 0.0 {
            millis / 1000.0
        } else {
            0.0
        };
        if self.buckets.is_empty() {
            self.buckets = vec![0; SOLVE_BUCKETS.len() + 1];
        }
        let i = SOLVE_BUCKETS
            .iter()
            .position(|&b| s <= b)
            .unwrap_or(SOLVE_BUCKETS.len());
        self.buckets[i] += 1;
        self.sum += s;
        self.count += 1;
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(s);
    }

    /// Number of observations since start.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean of the recent observations, seconds; `None` before the first.
    pub fn recent_mean(&self) -> Option<f64> {
        if self.recent.is_empty() {
            None
        } else {
            Some(self.recent.iter().sum::<f64>() / self.recent.len() as f64)
        }
    }

    /// The mean search time the queued-work estimate uses: the recent mean, or
    /// [`DEFAULT_SOLVE_SECONDS`] before any result.
    pub fn estimate(&self) -> f64 {
        self.recent_mean().unwrap_or(DEFAULT_SOLVE_SECONDS)
    }

    /// Cumulative counts per bucket bound (`+Inf` last, as `f64::INFINITY`).
    fn cumulative(&self) -> Vec<(f64, u64)> {
        let mut acc = 0;
        SOLVE_BUCKETS
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .enumerate()
            .map(|(i, le)| {
                acc += self.buckets.get(i).copied().unwrap_or(0);
                (le, acc)
            })
            .collect()
    }
}

/// What one scrape shows, gathered from [`Core`] (blocks on the store: call it off the async
/// runtime).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Every batch's progress, oldest first.
    pub batches: Vec<BatchStatus>,
    /// Counters since start.
    pub counters: crate::core::Counters,
    /// Jobs queued.
    pub queue_depth: usize,
    /// Registered workers, by id.
    pub workers: Vec<(String, crate::core::WorkerInfo)>,
    /// Search times.
    pub solve_times: SolveTimes,
}

impl Snapshot {
    /// Reads the coordinator's state.
    pub fn take(core: &Core) -> Result<Snapshot, Error> {
        let batches = core.list()?;
        let (counters, queue_depth) = core.counters();
        Ok(Snapshot {
            batches,
            counters,
            queue_depth,
            workers: core.workers(),
            solve_times: core.solve_times(),
        })
    }

    /// Estimated thread-seconds of work queued: queue depth x mean search time.
    pub fn queued_work_seconds(&self) -> f64 {
        self.queue_depth as f64 * self.solve_times.estimate()
    }

    /// Jobs per state over all batches: queued, leased, done, invalid, cancelled.
    pub fn jobs_by_state(&self) -> [(&'static str, u64); 5] {
        let mut n = [0u64; 5];
        for b in &self.batches {
            for (i, v) in [b.queued, b.leased, b.done, b.invalid, b.cancelled]
                .into_iter()
                .enumerate()
            {
                n[i] += v;
            }
        }
        [
            ("queued", n[0]),
            ("leased", n[1]),
            ("done", n[2]),
            ("invalid", n[3]),
            ("cancelled", n[4]),
        ]
    }

    /// Solution lengths over all batches: count per length (index = length).
    pub fn length_histogram(&self) -> Vec<u64> {
        let mut h: Vec<u64> = Vec::new();
        for b in &self.batches {
            if h.len() < b.length_histogram.len() {
                h.resize(b.length_histogram.len(), 0);
            }
            for (i, &c) in b.length_histogram.iter().enumerate() {
                h[i] += c;
            }
        }
        h
    }

    /// The Prometheus text exposition of this snapshot.
    pub fn render(&self) -> String {
        let mut t = Text::default();
        let c = &self.counters;

        t.family("cubefleet_jobs", "gauge", "Jobs per state, all batches.");
        for (state, n) in self.jobs_by_state() {
            t.sample("cubefleet_jobs", &[("state", state)], n as f64);
        }
        t.family(
            "cubefleet_batches",
            "gauge",
            "Batches running, finished or cancelled.",
        );
        let mut per = [0u64; 3];
        for b in &self.batches {
            per[batch_state(b) as usize] += 1;
        }
        for (i, s) in ["running", "finished", "cancelled"].iter().enumerate() {
            t.sample("cubefleet_batches", &[("state", s)], per[i] as f64);
        }

        let counters: [(&str, &str, u64); 6] = [
            (
                "cubefleet_jobs_submitted_total",
                "Lines submitted since start.",
                c.submitted,
            ),
            (
                "cubefleet_jobs_completed_total",
                "Jobs that became done since start (verified results and answers from the store).",
                c.completed + c.from_store,
            ),
            (
                "cubefleet_jobs_from_store_total",
                "Lines answered from stored results at submission since start.",
                c.from_store,
            ),
            (
                "cubefleet_results_verified_total",
                "Worker results that passed verification since start.",
                c.completed,
            ),
            (
                "cubefleet_results_rejected_total",
                "Worker results refused by verification since start.",
                c.rejected,
            ),
            (
                "cubefleet_lease_expiries_total",
                "Leases that expired since start (the job went back to the queue).",
                c.lease_expiries,
            ),
        ];
        for (name, help, v) in counters {
            t.family(name, "counter", help);
            t.sample(name, &[], v as f64);
        }

        t.family(
            "cubefleet_queue_depth",
            "gauge",
            "Jobs queued (not leased).",
        );
        t.sample("cubefleet_queue_depth", &[], self.queue_depth as f64);
        t.family(
            "cubefleet_solve_mean_seconds",
            "gauge",
            "Mean search time of the recent results (a default of 1 s before any).",
        );
        t.sample(
            "cubefleet_solve_mean_seconds",
            &[],
            self.solve_times.estimate(),
        );
        t.family(
            "cubefleet_queued_work_seconds",
            "gauge",
            "Estimated thread-seconds of work queued: queue depth x mean search time.",
        );
        t.sample(
            "cubefleet_queued_work_seconds",
            &[],
            self.queued_work_seconds(),
        );

        t.family("cubefleet_workers", "gauge", "Workers registered.");
        t.sample("cubefleet_workers", &[], self.workers.len() as f64);
        // one family per worker figure, one sample per registered worker
        type PerWorker = fn(&crate::core::WorkerInfo) -> f64;
        let per_worker: [(&str, &str, &str, PerWorker); 4] = [
            (
                "cubefleet_worker_threads",
                "gauge",
                "Search threads of a registered worker.",
                |w| f64::from(w.threads),
            ),
            (
                "cubefleet_worker_completed_total",
                "counter",
                "Results of a worker accepted; rate() is its throughput.",
                |w| w.completed as f64,
            ),
            (
                "cubefleet_worker_rejected_total",
                "counter",
                "Results of a worker refused by verification.",
                |w| w.rejected as f64,
            ),
            (
                "cubefleet_worker_last_seen_seconds",
                "gauge",
                "Seconds since a worker last called the coordinator.",
                |w| w.last_seen.elapsed().as_secs_f64(),
            ),
        ];
        for (name, kind, help, value) in per_worker {
            t.family(name, kind, help);
            for (id, w) in &self.workers {
                let l = [("worker", id.as_str()), ("name", w.name.as_str())];
                t.sample(name, &l, value(w));
            }
        }

        let st = &self.solve_times;
        t.histogram(
            "cubefleet_solve_seconds",
            "Search time of the results accepted since start.",
            &st.cumulative(),
            st.sum,
            st.count,
        );
        let lengths = self.length_histogram();
        let mut acc = 0;
        let mut buckets: Vec<(f64, u64)> = (0..=MAX_LENGTH_BUCKET)
            .map(|len| {
                acc += lengths.get(len).copied().unwrap_or(0);
                (len as f64, acc)
            })
            .collect();
        let count: u64 = lengths.iter().sum();
        buckets.push((f64::INFINITY, count));
        let sum: u64 = lengths
            .iter()
            .enumerate()
            .map(|(len, &n)| len as u64 * n)
            .sum();
        t.histogram(
            "cubefleet_solution_length",
            "Length of the stored solutions (moves in the batch's metric), all batches.",
            &buckets,
            sum as f64,
            count,
        );
        t.0
    }
}

/// Where a batch is: running (0), finished (1) or cancelled (2).
pub fn batch_state(b: &BatchStatus) -> u8 {
    if b.cancelled_batch {
        2
    } else if b.queued + b.leased == 0 {
        1
    } else {
        0
    }
}

/// A text exposition being written.
#[derive(Default)]
struct Text(String);

impl Text {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}");
        let _ = writeln!(self.0, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{k}=\"{}\"", escape_label(v));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {}", number(value));
    }

    fn histogram(&mut self, name: &str, help: &str, cumulative: &[(f64, u64)], sum: f64, n: u64) {
        self.family(name, "histogram", help);
        let bucket = format!("{name}_bucket");
        for &(le, count) in cumulative {
            let le = number(le);
            self.sample(&bucket, &[("le", &le)], count as f64);
        }
        self.sample(&format!("{name}_sum"), &[], sum);
        self.sample(&format!("{name}_count"), &[], n as f64);
    }
}

/// A label value with `\`, `"` and newlines escaped.
pub fn escape_label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for ch in v.chars() {
        match ch {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// A sample value: integers without a fraction, `+Inf`/`-Inf`/`NaN` spelled as Prometheus does.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Renders a set of plain gauges and counters (for processes without a [`Core`], such as a
/// worker): `(name, type, help, value)`.
pub fn render_simple(metrics: &[(&str, &str, &str, f64)]) -> String {
    let mut t = Text::default();
    for &(name, kind, help, v) in metrics {
        t.family(name, kind, help);
        t.sample(name, &[], v);
    }
    t.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solve_times_buckets_and_mean() {
        let mut s = SolveTimes::default();
        assert_eq!(s.estimate(), DEFAULT_SOLVE_SECONDS);
        s.observe(3.0); // 0.003 s -> first bucket
        s.observe(2000.0); // 2 s -> le 2.5
        s.observe(f64::NAN);
        let c = s.cumulative();
        assert_eq!(c[0], (0.005, 2));
        assert_eq!(c.last().copied(), Some((f64::INFINITY, 3)));
        assert_eq!(s.count(), 3);
        let mean = s.recent_mean().unwrap_or_default();
        assert!((mean - 2.003 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn recent_mean_forgets_old_results() {
        let mut s = SolveTimes::default();
        for _ in 0..RECENT {
            s.observe(10_000.0);
        }
        for _ in 0..RECENT {
            s.observe(1000.0);
        }
        assert!((s.estimate() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn labels_and_numbers_are_escaped() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(f64::INFINITY), "+Inf");
    }
}
