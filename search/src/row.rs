//! The one result row: what every front end writes for a line it answered (the CLI's JSON
//! lines, CSV and Parquet, `results` and `lookup`, the Python package's `SolveResult` and
//! tables). Its serde form is the JSON line users' scripts read: field names are a contract
//! (add fields, never rename).

use cubefleet_proto::{CosetCounts, JobResult, JobState, ResultStatus};
use serde::Serialize;

/// A result row's `status`: a finished job's status (the protocol's enum), or where an
/// unfinished one is, or `error` (a local search whose answer failed its check, which never
/// happens). Written as its name, by [`LineStatus::name`] alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineStatus {
    /// A finished job's (or a local search's) status.
    Result(ResultStatus),
    /// Of a batch: not finished, waiting for a worker.
    Queued,
    /// Of a batch: not finished, held by a worker.
    Leased,
    /// A local search's solution did not solve the position.
    Error,
}

impl LineStatus {
    /// The name written in every format (JSON, CSV, Parquet, text, Python).
    pub fn name(self) -> &'static str {
        match self {
            LineStatus::Result(s) => s.name(),
            LineStatus::Queued => "queued",
            LineStatus::Leased => "leased",
            LineStatus::Error => "error",
        }
    }
}

impl Serialize for LineStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// One result row. Field names are a contract; add fields, never rename.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ResultLine {
    /// 0-based line (or argument) number of the input.
    pub index: usize,
    /// The input as given.
    pub input: String,
    /// `solved`, `timeout`, `over_target` (two-phase: no solution within the target found, the
    /// best one given, no time ran out), `none_within`, `unreachable` (the move set cannot
    /// solve the position; `error` says why), `cancelled`, `invalid`, `skipped` (a
    /// blank or `#` comment line) or `failed` (the job's results were rejected too many times;
    /// `error` says why); of a batch's unfinished jobs, `queued` or `leased`.
    pub status: LineStatus,
    /// Space-separated standard notation; `""` for a solved cube or when there is none.
    pub solution: String,
    /// Moves in the solution (in the search's metric); absent when there is no solution.
    pub length: Option<u32>,
    /// True only when the solution is proven shortest.
    pub optimal: bool,
    /// Wall time spent on this input.
    pub millis: f64,
    /// Why the input was refused (invalid lines), or why the move set cannot solve it
    /// (`unreachable`); `null` otherwise, always present.
    pub error: Option<String>,
    /// Optimal / depth-limited searches: no solution shorter than this exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<u32>,
    /// Search nodes visited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    /// The position's state index (decimal) in a range or sample batch, whose `input` is
    /// empty; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_index: Option<String>,
    /// `results` and `lookup`: the worker whose search answered (its credential's name, or
    /// its `--name`: what `revoke` takes); absent when no worker searched the line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// `results` and `lookup`: true when the answer rests on a claim the coordinator cannot
    /// check (`optimal`, `none_within`, a lower bound); absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub claimed: bool,
    /// `results` and `lookup` of a `--confirm 2` batch: the workers whose equal claims made
    /// the answer final (one per credential); absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub confirmed_by: Vec<String>,
    /// The turns the search was limited to (`--moves`, written as `MoveSet` writes it:
    /// `U,R`); absent when every turn was allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moves: Option<String>,
    /// The position the solution reaches (`--to`), as a facelet string; absent when it is the
    /// solved cube.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The partial goal the solution reaches (`--goal`: its name or piece list, and ` on any
    /// face`); absent when it solves the whole cube.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// Where the solution reached the goal (`cross on U`, `xcross on D, slot FR`, `eo on
    /// R/L`), told by the answer check; absent without a goal or a solution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal_reached: Option<String>,
    /// Of a question for several solutions (`--solutions N`, `--all-optimal`): the solutions,
    /// distinct canonical sequences in the canonical order (shortest first, then by turn
    /// numbers), each verified; `solution` is the first. Absent for other questions and for a
    /// count alone (`--count-only`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub solutions: Option<Vec<String>>,
    /// Of a question for several solutions: how many (every optimal one's count for
    /// `--all-optimal` and `--count-only`, which may be more than `solutions` lists); absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Of a coset job finished: its counts (the fields of [`CosetRow`] in the JSON line);
    /// absent otherwise.
    #[serde(flatten)]
    pub coset: Option<CosetRow>,
}

/// What a result row of a coset job adds: the coset and its counts, as `cubefleet coset solve
/// --format json` names them.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct CosetRow {
    /// The coset's number.
    pub coset: u64,
    /// `counts[k]`: positions first reached at depth `k` (exact through `exact_through`,
    /// solved within `k` turns beyond).
    pub counts: Vec<u64>,
    /// The last depth whose count is exact.
    pub exact_through: u32,
    /// Positions not solved within the depth searched to.
    pub unsolved: u64,
    /// Their state indices (decimal) when there are at most 4096; `null` otherwise.
    pub unsolved_indices: Option<Vec<String>>,
}

impl CosetRow {
    /// The row of a coset's stored counts; the unsolved positions' state indices made from
    /// their local indices (listed when there are at most 4096).
    pub fn of(c: &CosetCounts) -> CosetRow {
        let coset = cubefleet_tables::coset::Coset::from_number(c.number).ok();
        let listed = c.unsolved <= cubefleet_tables::coset::MAX_LISTED;
        CosetRow {
            coset: c.number,
            counts: c.counts.clone(),
            exact_through: c.exact_through,
            unsolved: c.unsolved,
            unsolved_indices: listed.then(|| {
                c.unsolved_local
                    .iter()
                    .filter_map(|&i| coset?.position(i))
                    .map(|q| cubefleet_tables::index::index_of(&q).to_string())
                    .collect()
            }),
        }
    }
}

impl ResultLine {
    /// The row of line `index` before anything is known of it: status `invalid`, no solution,
    /// nothing claimed (what a local search fills in).
    pub fn new(index: usize, input: &str) -> ResultLine {
        ResultLine {
            index,
            input: input.to_string(),
            status: LineStatus::Result(ResultStatus::Invalid),
            solution: String::new(),
            length: None,
            optimal: false,
            millis: 0.0,
            error: None,
            lower_bound: None,
            nodes: None,
            state_index: None,
            worker: None,
            claimed: false,
            confirmed_by: Vec::new(),
            moves: None,
            to: None,
            goal: None,
            goal_reached: None,
            solutions: None,
            count: None,
            coset: None,
        }
    }

    /// The text form: `R U2 F' ... (19)` (`(4: cross on D)` naming where a goal was reached),
    /// or the status and reason.
    pub fn text(&self) -> String {
        match (&self.error, self.length) {
            (Some(e), _) if self.status == LineStatus::Result(ResultStatus::Unreachable) => {
                format!("unreachable: {e}")
            }
            (Some(e), _) => format!("invalid: {e}"),
            (None, Some(n)) if self.status == LineStatus::Result(ResultStatus::Solved) => {
                match (&self.solutions, self.count, &self.goal_reached) {
                    // several: each solution, then how many there are
                    (Some(list), Some(count), _) => {
                        format!("{} ({n}; {count} in all)", list.join(" | "))
                    }
                    (None, Some(count), _) => {
                        format!("{} ({n}; {count} optimal solutions)", self.solution)
                    }
                    (_, _, Some(g)) => format!("{} ({n}: {g})", self.solution),
                    _ => format!("{} ({n})", self.solution),
                }
            }
            (None, Some(n)) => format!("{} ({n}) [{}]", self.solution, self.status.name()),
            (None, None) => self.status.name().to_string(),
        }
    }

    /// The row as the shared Arrow columns have it (feature `columns`): every field, a field
    /// the JSON line leaves out as a null, `false` or an empty list.
    #[cfg(feature = "columns")]
    pub fn row(&self) -> cubefleet_columns::Row<'_> {
        cubefleet_columns::Row {
            index: self.index as u64,
            input: &self.input,
            status: self.status.name(),
            solution: &self.solution,
            length: self.length,
            optimal: self.optimal,
            lower_bound: self.lower_bound,
            millis: self.millis,
            nodes: self.nodes,
            state_index: self.state_index.as_deref(),
            error: self.error.as_deref(),
            worker: self.worker.as_deref(),
            claimed: self.claimed,
            confirmed_by: &self.confirmed_by,
            moves: self.moves.as_deref(),
            to: self.to.as_deref(),
            goal: self.goal.as_deref(),
            solutions: self.solutions.as_deref(),
            count: self.count,
        }
    }
}

/// The row of a stored result (`results`, `lookup`, the Python client): its strings move into
/// the row; a field the record leaves empty (or 0, for a bound, a node count or a count of
/// solutions) is absent, and an unfinished job is `queued` or `leased`.
impl From<JobResult> for ResultLine {
    fn from(r: JobResult) -> ResultLine {
        let has_length = r.has_length();
        let status = match r.outcome() {
            ResultStatus::Unspecified if r.state == JobState::Leased as i32 => LineStatus::Leased,
            ResultStatus::Unspecified => LineStatus::Queued,
            s => LineStatus::Result(s),
        };
        ResultLine {
            index: r.index as usize,
            input: r.input,
            status,
            solution: r.solution,
            length: has_length.then_some(r.length),
            optimal: r.optimal,
            millis: r.millis,
            error: (!r.error.is_empty()).then_some(r.error),
            lower_bound: (r.lower_bound > 0).then_some(r.lower_bound),
            nodes: (r.nodes > 0).then_some(r.nodes),
            state_index: (!r.state_index.is_empty()).then_some(r.state_index),
            worker: (!r.worker.is_empty()).then_some(r.worker),
            claimed: r.claimed,
            confirmed_by: r.confirmed_by,
            moves: None,
            to: None,
            goal: None,
            goal_reached: None,
            // a question for one solution stores neither; a count alone stores no list
            solutions: (!r.solutions.is_empty()).then_some(r.solutions),
            count: (r.count > 0).then_some(r.count),
            coset: r.coset.as_ref().map(CosetRow::of),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON line's field names and what is left out when empty (the users' contract).
    #[test]
    fn a_fresh_row_serialises_with_the_contract_fields() {
        let line = ResultLine::new(3, "R U");
        let json = serde_json::to_string(&line).expect("serialises");
        assert_eq!(
            json,
            r#"{"index":3,"input":"R U","status":"invalid","solution":"","length":null,"optimal":false,"millis":0.0,"error":null}"#
        );
        let mut line = line;
        line.status = LineStatus::Result(ResultStatus::Solved);
        line.solution = "U' R'".into();
        line.length = Some(2);
        line.claimed = true;
        line.confirmed_by = vec!["a".into()];
        let json = serde_json::to_string(&line).expect("serialises");
        assert!(json.contains(r#""status":"solved""#) && json.contains(r#""claimed":true"#));
        assert!(json.contains(r#""confirmed_by":["a"]"#));
        assert_eq!(line.text(), "U' R' (2)");
    }

    #[test]
    fn statuses_are_named_once() {
        assert_eq!(LineStatus::Queued.name(), "queued");
        assert_eq!(LineStatus::Leased.name(), "leased");
        assert_eq!(LineStatus::Error.name(), "error");
        assert_eq!(
            LineStatus::Result(ResultStatus::OverTarget).name(),
            "over_target"
        );
    }
}
