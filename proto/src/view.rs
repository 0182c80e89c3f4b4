//! A batch's progress as people see it: [`BatchView`], the one view of a [`BatchStatus`] that
//! `cubefleet status` (text and `--json`), the coordinator's `/api/status` and its status page
//! all show, so they agree on every count.
//!
//! Invariants: [`BatchStatus::finished`] is the one meaning of "finished" (done, invalid,
//! cancelled and failed jobs: those that need no more work), and `total = queued + leased +
//! finished` for every batch the coordinator reports; a batch is [`BatchState::Finished`]
//! exactly when nothing is queued or leased (and it was not cancelled).

use serde::Serialize;

use crate::question::{Algorithm, Count, Question};
use crate::{BatchStatus, Keep};

impl BatchStatus {
    /// Jobs that need no more work: done, invalid, cancelled and failed.
    pub fn finished(&self) -> u64 {
        self.done + self.invalid + self.cancelled + self.failed
    }

    /// `file`, `range` or `sample` (`file` from a coordinator before ranges).
    pub fn kind_name(&self) -> &str {
        if self.kind.is_empty() {
            "file"
        } else {
            &self.kind
        }
    }
}

/// Where a batch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BatchState {
    /// Some of its jobs are queued or leased.
    Running,
    /// Every job is finished ([`BatchStatus::finished`]), and the batch was not cancelled.
    Finished,
    /// The batch was cancelled.
    Cancelled,
}

impl BatchState {
    /// Every state, in the order the metrics list them.
    pub const ALL: [BatchState; 3] = [
        BatchState::Running,
        BatchState::Finished,
        BatchState::Cancelled,
    ];

    /// Where `b` is.
    pub fn of(b: &BatchStatus) -> BatchState {
        if b.cancelled_batch {
            BatchState::Cancelled
        } else if b.queued + b.leased == 0 {
            BatchState::Finished
        } else {
            BatchState::Running
        }
    }

    /// `running`, `finished` or `cancelled` (the metrics' label, the page's word, the JSON's).
    pub fn name(self) -> &'static str {
        match self {
            BatchState::Running => "running",
            BatchState::Finished => "finished",
            BatchState::Cancelled => "cancelled",
        }
    }
}

/// One batch's progress, as every view of the coordinator shows it (the JSON field names are a
/// contract: add fields, never rename; `batch` and `batch_id` are the same id, under the names
/// the CLI and the HTTP API gave it first).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BatchView {
    /// The batch id (the CLI's name for it).
    pub batch: String,
    /// The batch id (the HTTP API's name for it).
    pub batch_id: String,
    /// Its name.
    pub name: String,
    /// Its search in words ([`mode_text`]).
    pub mode: String,
    /// Its priority.
    pub priority: i32,
    /// Where it is.
    pub state: BatchState,
    /// `file`, `range` or `sample`.
    pub kind: String,
    /// A range batch's first state index (decimal; "" otherwise).
    pub range_start: String,
    /// A range batch's end (exclusive).
    pub range_end: String,
    /// A range batch's step (0 otherwise).
    pub range_step: u64,
    /// A sample batch's size (0 otherwise).
    pub sample_count: u64,
    /// A sample batch's seed.
    pub sample_seed: u64,
    /// Jobs made so far (a file batch: its lines).
    pub made: u64,
    /// What it keeps of each result: `all` or `histogram`.
    pub keep: &'static str,
    /// Lines (or states) of the batch.
    pub total: u64,
    /// Jobs waiting for a worker.
    pub queued: u64,
    /// Jobs held by a worker.
    pub leased: u64,
    /// Jobs done.
    pub done: u64,
    /// Invalid lines.
    pub invalid: u64,
    /// Cancelled jobs.
    pub cancelled: u64,
    /// Failed jobs (results rejected too many times).
    pub failed: u64,
    /// [`BatchStatus::finished`].
    pub finished: u64,
    /// Jobs finished per second over the last minute.
    pub rate: f64,
    /// Estimated seconds until finished (0: finished or unknown).
    pub eta_seconds: f64,
    /// `length_histogram[n]` solutions have n moves.
    pub length_histogram: Vec<u64>,
    /// Unix milliseconds of its first submission.
    pub created_unix_ms: u64,
    /// Of a coset batch: its finished cosets' positions by depth, summed (the distance
    /// distribution over everything solved so far); absent for other batches and before the
    /// first coset is solved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coset_counts: Vec<u64>,
    /// Of a coset batch with a finished coset: their unsolved positions, summed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coset_unsolved: Option<u64>,
}

impl From<&BatchStatus> for BatchView {
    fn from(b: &BatchStatus) -> BatchView {
        BatchView {
            batch: b.batch_id.clone(),
            batch_id: b.batch_id.clone(),
            name: b.name.clone(),
            mode: mode_text(b.mode.as_ref()),
            priority: b.priority,
            state: BatchState::of(b),
            kind: b.kind_name().to_string(),
            range_start: b.range_start.clone(),
            range_end: b.range_end.clone(),
            range_step: b.range_step,
            sample_count: b.sample_count,
            sample_seed: b.sample_seed,
            made: b.made,
            keep: if b.keep == Keep::Histogram as i32 {
                "histogram"
            } else {
                "all"
            },
            total: b.total,
            queued: b.queued,
            leased: b.leased,
            done: b.done,
            invalid: b.invalid,
            cancelled: b.cancelled,
            failed: b.failed,
            finished: b.finished(),
            rate: b.rate,
            eta_seconds: b.eta_seconds,
            length_histogram: b.length_histogram.clone(),
            created_unix_ms: b.created_unix_ms,
            coset_counts: b.coset_counts.clone(),
            coset_unsolved: (!b.coset_counts.is_empty()).then_some(b.coset_unsolved),
        }
    }
}

impl BatchView {
    /// The view as one JSON object with its keys in alphabetical order, as every version
    /// printed it.
    pub fn to_json(&self) -> serde_json::Value {
        // a struct serialises in field order; through a `Value` (a sorted map) the keys sort
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// A search in words: `two-phase, at most 20 moves`, `optimal (QTM)`, `within 12 moves (HTM)`,
/// with `, turns U,R` for a move set, `, to state 12` for a target other than solved (its state
/// index, which `cubefleet position` shows), `, goal cross on any face` for a partial goal,
/// `, 5 solutions`, `, all optimal solutions` or `, count of optimal solutions` for a question
/// for several, and `, 5.00 s each` for a time budget; read through the
/// one mode type (a mode out of range, which no coordinator stores, reads as the default).
pub fn mode_text(m: Option<&crate::Mode>) -> String {
    let q = m
        .and_then(|m| Question::from_wire(m).ok())
        .unwrap_or_default();
    let metric = q.metric().as_str().to_ascii_uppercase();
    let mut s = match q.algorithm() {
        Algorithm::Optimal => format!("optimal ({metric})"),
        Algorithm::DepthLimited { max_depth } => format!("within {max_depth} moves ({metric})"),
        Algorithm::TwoPhase { max_length } => format!("two-phase, at most {max_length} moves"),
        Algorithm::Coset {
            max_depth,
            exact_depth,
        } => format!("cosets to depth {max_depth} (exact through {exact_depth})"),
    };
    if !q.moves().is_all() {
        s.push_str(&format!(", turns {}", q.moves()));
    }
    if q.has_target() {
        s.push_str(&format!(", to state {}", q.target()));
    }
    if let Some(g) = q.goal() {
        s.push_str(&format!(", goal {g}"));
    }
    match q.count() {
        Count::One => {}
        Count::Shortest(n) => s.push_str(&format!(", {n} solutions")),
        Count::AllOptimal => s.push_str(", all optimal solutions"),
        Count::CountOnly => s.push_str(", count of optimal solutions"),
    }
    if let Some(t) = q.timeout() {
        s.push_str(&format!(", {} s each", number(t.as_secs_f64())));
    }
    s
}

/// A rate or small number: up to 3 significant digits (`123`, `12.3`, `1.23`).
pub fn number(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch's question in words names its move set and its target.
    #[test]
    fn a_question_is_told_whole() {
        let q = Question::new(
            Algorithm::Optimal,
            crate::question::Metric::Htm,
            crate::question::MoveSet::parse("R,U").expect("set"),
            None,
        )
        .and_then(|q| q.with_target(12))
        .expect("question");
        assert_eq!(
            mode_text(Some(&q.to_wire())),
            "optimal (HTM), turns U,R, to state 12"
        );
        for (count, told) in [
            (Count::Shortest(5), ", 5 solutions"),
            (Count::AllOptimal, ", all optimal solutions"),
            (Count::CountOnly, ", count of optimal solutions"),
        ] {
            let many = q.with_count(count).expect("optimal");
            assert_eq!(
                mode_text(Some(&many.to_wire())),
                format!("optimal (HTM), turns U,R, to state 12{told}")
            );
        }
        assert_eq!(mode_text(None), "two-phase, at most 20 moves");
        let goal = crate::goal::Goal::parse("xcross")
            .expect("goal")
            .on_any_face(true);
        let q = Question::new(
            Algorithm::DepthLimited { max_depth: 9 },
            crate::question::Metric::Qtm,
            crate::question::MoveSet::ALL,
            None,
        )
        .and_then(|q| q.with_goal(Some(goal)))
        .expect("question");
        assert_eq!(
            mode_text(Some(&q.to_wire())),
            "within 9 moves (QTM), goal xcross on any face"
        );
    }

    /// A failed job is finished: a batch whose last job failed is finished, at 100 %.
    #[test]
    fn failed_jobs_are_finished() {
        let b = BatchStatus {
            total: 4,
            done: 1,
            invalid: 1,
            cancelled: 1,
            failed: 1,
            ..BatchStatus::default()
        };
        let v = BatchView::from(&b);
        assert_eq!((v.finished, v.state), (4, BatchState::Finished));
        let json = v.to_json().to_string();
        assert!(json.contains("\"batch\":\"\",\"batch_id\":\"\""), "{json}");
        assert!(json.contains("\"failed\":1,\"finished\":4"), "{json}");
        assert!(json.contains("\"state\":\"finished\""), "{json}");
    }
}
