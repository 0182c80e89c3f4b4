//! The JSON line written for every solved (or refused) input: the contract users' scripts read.

use serde::Serialize;

/// One result line. Field names are a contract; add fields, never rename.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub(crate) struct ResultLine {
    /// 0-based line (or argument) number of the input.
    pub(crate) index: usize,
    /// The input as given.
    pub(crate) input: String,
    /// `solved`, `timeout`, `none_within`, `cancelled`, `invalid` or `failed` (the job's
    /// results were rejected too many times; `error` says why).
    pub(crate) status: String,
    /// Space-separated standard notation; `""` for a solved cube or when there is none.
    pub(crate) solution: String,
    /// Moves in the solution (in the search's metric); absent when there is no solution.
    pub(crate) length: Option<u32>,
    /// True only when the solution is proven shortest.
    pub(crate) optimal: bool,
    /// Wall time spent on this input.
    pub(crate) millis: f64,
    /// Why the input was refused (invalid lines only; `null` otherwise, always present).
    pub(crate) error: Option<String>,
    /// Optimal / depth-limited searches: no solution shorter than this exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) lower_bound: Option<u32>,
    /// Search nodes visited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) nodes: Option<u64>,
}

impl ResultLine {
    /// The text form: `R U2 F' ... (19)`, or the status and reason.
    pub(crate) fn text(&self) -> String {
        match (&self.error, self.length) {
            (Some(e), _) => format!("invalid: {e}"),
            (None, Some(n)) if self.status == "solved" => format!("{} ({n})", self.solution),
            (None, Some(n)) => format!("{} ({n}) [{}]", self.solution, self.status),
            (None, None) => self.status.clone(),
        }
    }
}
