//! `status`: a batch's progress as a line of text or, with `--json`, one JSON object; both are
//! the [`BatchView`] that the coordinator's status page and `/api/status` show, so the three
//! agree on every count (the JSON's keys in alphabetical order, as every version wrote them).

use cubefleet_proto::view::BatchView;
use cubefleet_proto::BatchStatus;

/// The estimated time left, `-` while there is no rate to go by.
pub(super) fn eta_text(eta_seconds: f64) -> String {
    if eta_seconds > 0.0 {
        format!("{eta_seconds:.0}s")
    } else {
        "-".into()
    }
}

/// A length histogram as text: `length:count` for each length with solutions, by length.
pub(super) fn histogram_text(counts: &[u64]) -> String {
    let parts: Vec<String> = counts
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(l, n)| format!("{l}:{n}"))
        .collect();
    parts.join(" ")
}

/// What `status` adds for a range or sample batch: its definition and the jobs made; for a
/// coset batch the cosets made and their positions by depth, summed.
fn definition_text(v: &BatchView) -> String {
    let states = match v.kind.as_str() {
        "range" => format!(
            "range {}..{} step {}",
            v.range_start, v.range_end, v.range_step
        ),
        "sample" => format!("sample {} seed {}", v.sample_count, v.sample_seed),
        "cosets" => {
            return format!(
                "  made {} of {} cosets; positions by depth {}, unsolved {}",
                v.made,
                v.total,
                histogram_text(&v.coset_counts),
                v.coset_unsolved.unwrap_or(0)
            )
        }
        _ => return String::new(),
    };
    let keep = if v.keep == "histogram" {
        ", keep histogram"
    } else {
        ""
    };
    format!(
        "  {states}: made {} of {} jobs{keep}",
        v.made,
        v.total.min(1 << 40)
    )
}

/// A batch's status as one line of text.
pub(super) fn status_text(s: &BatchStatus) -> String {
    let v = BatchView::from(s);
    // a cancelled batch says so first: its cancelled jobs are finished, not done
    let state = match v.state {
        cubefleet_proto::view::BatchState::Cancelled => " [cancelled]",
        _ => "",
    };
    format!(
        "{} {}{state}: total {} queued {} leased {} done {} invalid {} cancelled {} failed {}  {:.1}/s  ETA {}  lengths {}{}",
        v.batch,
        v.name,
        v.total,
        v.queued,
        v.leased,
        v.done,
        v.invalid,
        v.cancelled,
        v.failed,
        v.rate,
        eta_text(v.eta_seconds),
        histogram_text(&v.length_histogram),
        definition_text(&v)
    )
}

/// A batch's status as one JSON object.
pub(super) fn status_json(s: &BatchStatus) -> serde_json::Value {
    BatchView::from(s).to_json()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields earlier versions wrote are all there, with the same values, and the view's
    /// additions beside them.
    #[test]
    fn the_json_keeps_every_field_and_counts_failed_jobs_finished() {
        let s = BatchStatus {
            batch_id: "b1".into(),
            name: "n".into(),
            total: 5,
            done: 2,
            invalid: 1,
            failed: 1,
            queued: 1,
            kind: "range".into(),
            range_start: "0".into(),
            range_end: "5".into(),
            range_step: 1,
            made: 5,
            length_histogram: vec![0, 2],
            ..BatchStatus::default()
        };
        let v = status_json(&s);
        for (key, want) in [
            ("batch", serde_json::json!("b1")),
            ("kind", serde_json::json!("range")),
            ("keep", serde_json::json!("all")),
            ("total", serde_json::json!(5)),
            ("failed", serde_json::json!(1)),
            ("finished", serde_json::json!(4)),
            ("length_histogram", serde_json::json!([0, 2])),
        ] {
            assert_eq!(v[key], want, "{key}: {v}");
        }
        let text = status_text(&s);
        assert!(
            text.starts_with("b1 n: total 5 queued 1 leased 0 done 2 invalid 1 cancelled 0 failed 1  0.0/s  ETA -  lengths 1:2  range 0..5 step 1: made 5 of 5 jobs"),
            "{text}"
        );
    }
}
