//! A result's status: [`ResultStatus`], the one type every crate matches on, and the one place
//! it meets its text.
//!
//! The protocol's first revisions carried the status as text only (`JobResult.status`,
//! `Completion.status`); revision 4 added the enum fields (`result_status`). Invariants:
//! - writers set both, through [`JobResult::set_outcome`] and [`Completion::set_outcome`], so
//!   peers and stores of any revision read the status;
//! - readers go through [`JobResult::outcome`] and [`Completion::reported`], which take the
//!   enum when it is set and read the text only when it is not (an older peer, or a record
//!   stored by an older coordinator);
//! - text is made only by [`ResultStatus::name`], where a status is rendered (JSON, CSV,
//!   Parquet, the page) or written for older readers, and read only by
//!   [`ResultStatus::from_name`].

use crate::{Completion, JobResult, ResultStatus};

impl ResultStatus {
    /// Every status a finished job can have, in the order of the protocol's values.
    pub const FINISHED: [ResultStatus; 9] = [
        ResultStatus::Solved,
        ResultStatus::Timeout,
        ResultStatus::OverTarget,
        ResultStatus::NoneWithin,
        ResultStatus::Cancelled,
        ResultStatus::Invalid,
        ResultStatus::Skipped,
        ResultStatus::Failed,
        ResultStatus::Unreachable,
    ];

    /// The statuses a worker may report for a job it searched.
    pub const REPORTED: [ResultStatus; 6] = [
        ResultStatus::Solved,
        ResultStatus::Timeout,
        ResultStatus::OverTarget,
        ResultStatus::NoneWithin,
        ResultStatus::Cancelled,
        ResultStatus::Unreachable,
    ];

    /// The status's name in the protocol's text fields and in every output (`solved`,
    /// `over_target`, ...); `""` for [`ResultStatus::Unspecified`] (not finished).
    pub fn name(self) -> &'static str {
        match self {
            ResultStatus::Unspecified => "",
            ResultStatus::Solved => "solved",
            ResultStatus::Timeout => "timeout",
            ResultStatus::OverTarget => "over_target",
            ResultStatus::NoneWithin => "none_within",
            ResultStatus::Cancelled => "cancelled",
            ResultStatus::Invalid => "invalid",
            ResultStatus::Skipped => "skipped",
            ResultStatus::Failed => "failed",
            ResultStatus::Unreachable => "unreachable",
        }
    }

    /// The status named `name` (as [`ResultStatus::name`] writes it; `""` is
    /// [`ResultStatus::Unspecified`]); None for any other text.
    pub fn from_name(name: &str) -> Option<ResultStatus> {
        std::iter::once(ResultStatus::Unspecified)
            .chain(ResultStatus::FINISHED)
            .find(|s| s.name() == name)
    }

    /// True for a status whose solution's length counts (see [`JobResult::has_length`]) when
    /// there is a solution: solved, timeout, over_target.
    pub fn may_have_length(self) -> bool {
        matches!(
            self,
            ResultStatus::Solved | ResultStatus::Timeout | ResultStatus::OverTarget
        )
    }
}

impl std::fmt::Display for ResultStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The status of a message with the enum field `value` and the text field `text`: the enum
/// when set, else the text read ([`ResultStatus::from_name`]); None when neither names one.
fn read(value: i32, text: &str) -> Option<ResultStatus> {
    match ResultStatus::try_from(value) {
        Ok(ResultStatus::Unspecified) => ResultStatus::from_name(text),
        Ok(s) => Some(s),
        Err(_) => None,
    }
}

impl JobResult {
    /// The status: [`ResultStatus::Unspecified`] while the job is not finished (and for text
    /// no version wrote).
    pub fn outcome(&self) -> ResultStatus {
        read(self.result_status, &self.status).unwrap_or_default()
    }

    /// Sets the status, in both fields ([`ResultStatus::Unspecified`]: not finished).
    pub fn set_outcome(&mut self, s: ResultStatus) {
        self.result_status = s as i32;
        self.status = s.name().to_string();
    }

    /// True when the result has a solution whose length counts: a solved job, or one whose
    /// time ran out (`timeout`) or whose two-phase search ended above the target
    /// (`over_target`) with a solution found. (A solved cube's empty solution counts, 0 moves.)
    pub fn has_length(&self) -> bool {
        if self.coset.is_some() {
            // a coset's result has counts, no solution
            return false;
        }
        let s = self.outcome();
        s == ResultStatus::Solved || (s.may_have_length() && !self.solution.is_empty())
    }
}

impl Completion {
    /// The status the worker reported; None when it named none (or no known one). Whether a
    /// worker may report it is the coordinator's to check ([`ResultStatus::REPORTED`]).
    pub fn reported(&self) -> Option<ResultStatus> {
        read(self.result_status, &self.status).filter(|s| *s != ResultStatus::Unspecified)
    }

    /// Sets the status, in both fields (the text for coordinators before revision 4).
    pub fn set_outcome(&mut self, s: ResultStatus) {
        self.result_status = s as i32;
        self.status = s.name().to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_round_trips_through_its_name() {
        for s in std::iter::once(ResultStatus::Unspecified).chain(ResultStatus::FINISHED) {
            assert_eq!(ResultStatus::from_name(s.name()), Some(s));
        }
        assert_eq!(ResultStatus::from_name("Solved"), None);
        assert_eq!(ResultStatus::from_name("queued"), None);
    }

    /// An older peer's text is read when the enum is unset; the enum wins when both are set.
    #[test]
    fn the_enum_is_read_first_and_the_text_of_older_peers_after() {
        let old = Completion {
            status: "none_within".into(),
            ..Completion::default()
        };
        assert_eq!(old.reported(), Some(ResultStatus::NoneWithin));
        let mut new = Completion::default();
        new.set_outcome(ResultStatus::OverTarget);
        assert_eq!(
            (new.status.as_str(), new.reported()),
            ("over_target", Some(ResultStatus::OverTarget))
        );
        assert_eq!(Completion::default().reported(), None);
        let unknown = Completion {
            status: "great".into(),
            ..Completion::default()
        };
        assert_eq!(unknown.reported(), None);
        let out_of_range = Completion {
            result_status: 99,
            status: "solved".into(),
            ..Completion::default()
        };
        assert_eq!(out_of_range.reported(), None);
        let stored_by_an_older_version = JobResult {
            status: "failed".into(),
            ..JobResult::default()
        };
        assert_eq!(stored_by_an_older_version.outcome(), ResultStatus::Failed);
        assert_eq!(JobResult::default().outcome(), ResultStatus::Unspecified);
    }
}
