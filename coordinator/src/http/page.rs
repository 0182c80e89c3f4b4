//! The status page's HTML: maud templates, which escape every value spliced in (batch names
//! and ids, worker names). The whole page ([`page`]) and its live part ([`live`], what the
//! page's script swaps in every 2 s). Each batch is drawn from its [`BatchView`]; its
//! `<article>` carries the view's counts as `data-` attributes, for scripts and tests.

use std::collections::HashMap;

use cubefleet_proto::view::{BatchState, BatchView};
use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::words::{count, duration_text, number};
use crate::snapshot::Snapshot;

/// The page's style.
const STYLE: &str = include_str!("page.css");

/// The page's script: swap in `/fragment` every 2 s; keep the page as it is when that fails.
const SCRIPT: &str = include_str!("page.js");

/// The whole status page.
pub(super) fn page(snap: &Snapshot, rates: &HashMap<String, f64>) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "cubefleet status" }
                style { (PreEscaped(STYLE)) }
            }
            body data-refreshed="0" {
                header {
                    h1 { "cubefleet" }
                    span { "coordinator status" }
                    span class="updated" id="updated" { "server-rendered" }
                }
                main id="live" { (live(snap, rates)) }
                footer {
                    "Refreshes every 2 s · " a href="metrics" { "/metrics" }
                    " · " a href="api/status" { "/api/status" }
                }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    }
}

/// The part of the page that refreshes: totals, batches, workers.
pub(super) fn live(snap: &Snapshot, rates: &HashMap<String, f64>) -> Markup {
    let jobs = snap.jobs_by_state();
    let active = snap.batches_by_state()[0].1;
    let total_rate: f64 = rates.values().sum();
    let stats = [
        ("queue-depth", count(snap.queue_depth()), "jobs waiting"),
        (
            "queued-work",
            duration_text(snap.queued_work_seconds()),
            "work queued (thread time)",
        ),
        ("searching", count(snap.work.searching), "jobs searched now"),
        ("done", count(jobs[2].1), "jobs done"),
        ("active-batches", count(active), "batches running"),
        ("workers", count(snap.workers.len() as u64), "workers"),
        ("throughput", format!("{}/s", number(total_rate)), "results"),
    ];
    html! {
        section class="summary" id="summary" {
            @for (id, value, label) in &stats {
                div class="stat" id={ "stat-" (id) } { b { (value) } span { (label) } }
            }
        }
        h2 { "Batches" }
        section id="batches" {
            @if snap.batches.is_empty() {
                p class="empty" { "No batches yet: " code { "cubefleet submit FILE" } "." }
            }
            // newest first: the batch being watched is usually the last one submitted
            @for b in snap.batches.iter().rev() { (batch_html(&BatchView::from(b))) }
        }
        h2 { "Workers" }
        section id="workers" {
            @if snap.workers.is_empty() {
                p class="empty" {
                    "No worker registered: " code { "cubefleet worker --coordinator URL" } "."
                }
            } @else {
                table class="workers" {
                    thead {
                        tr {
                            th { "worker" } th { "name" } th class="num" { "threads" }
                            th class="num" { "results" } th class="num" { "rejected" }
                            th class="num" { "throughput" } th class="num" { "last seen" }
                        }
                    }
                    tbody {
                        @for (id, w) in &snap.workers {
                            tr class="worker" data-worker=(id) {
                                td { (id) }
                                td { (w.name) }
                                td class="num" { (w.threads) }
                                td class="num completed" { (count(w.completed)) }
                                td class="num" { (count(w.rejected)) }
                                td class="num rate" {
                                    (number(rates.get(id).copied().unwrap_or(0.0))) "/s"
                                }
                                td class="num" {
                                    (duration_text(snap.ago(w.last_seen).as_secs_f64())) " ago"
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One batch: title, progress bar, counts, rate and ETA, length histogram.
fn batch_html(b: &BatchView) -> Markup {
    let state = b.state.name();
    // the bar shows the jobs answered (done, invalid, failed): a cancelled job is finished
    // but not answered, so a cancelled batch never draws a full bar
    let answered = b.finished.saturating_sub(b.cancelled);
    let pct = if b.total > 0 {
        100.0 * answered as f64 / b.total as f64
    } else {
        0.0
    };
    let name = if b.name.is_empty() {
        &b.batch_id
    } else {
        &b.name
    };
    let eta = if b.state != BatchState::Running {
        "—".to_string()
    } else if b.eta_seconds > 0.0 {
        duration_text(b.eta_seconds)
    } else {
        "unknown (no rate yet)".to_string()
    };
    let pct = format!("{pct:.1}%");
    html! {
        article class={ "batch " (state) } data-batch=(b.batch_id) data-total=(b.total)
            data-finished=(b.finished) data-done=(b.done) data-invalid=(b.invalid)
            data-cancelled=(b.cancelled) data-failed=(b.failed) data-queued=(b.queued)
            data-leased=(b.leased) {
            h3 {
                (name) small { (b.batch_id) }
                span class={ "badge " (state) } { (state) }
            }
            div class="left" {
                progress class="batch-progress" max=(b.total.max(1)) value=(answered) { (pct) }
                p class="numbers" {
                    span class="pct" { (pct) } " answered · "
                    span class="finished" { (count(b.finished)) } " of "
                    span class="total" { (count(b.total)) } " finished ("
                    (count(b.done)) " done, " (count(b.invalid)) " invalid, "
                    (count(b.failed)) " failed, "
                    span class="cancelled" { (count(b.cancelled)) " cancelled" } ") · "
                    (count(b.queued)) " queued · " (count(b.leased)) " leased"
                }
                @if b.kind == "range" || b.kind == "sample" {
                    p class="numbers definition" {
                        @if b.kind == "range" {
                            "range " (b.range_start) ".." (b.range_end) " step " (b.range_step)
                        } @else {
                            "sample of " (count(b.sample_count)) " states, seed " (b.sample_seed)
                        }
                        " · " (count(b.made)) " jobs made"
                    }
                }
                p class="numbers" {
                    (b.mode) " · priority " (b.priority) " · rate "
                    span class="rate" { (number(b.rate)) "/s" } " · ETA "
                    span class="eta" { (eta) }
                }
            }
            // a coset batch's chart: positions by depth, summed over its finished cosets
            (histogram_html(if b.coset_counts.is_empty() { &b.length_histogram } else { &b.coset_counts }))
        }
    }
}

/// A bar chart of solution lengths: one column per length from the shortest to the longest
/// seen, bar heights relative to the tallest.
fn histogram_html(hist: &[u64]) -> Markup {
    let n: u64 = hist.iter().sum();
    let first = hist.iter().position(|&c| c > 0);
    let last = hist.iter().rposition(|&c| c > 0);
    let max = hist.iter().copied().max().unwrap_or(1).max(1);
    html! {
        div class="right" {
            div class="hist-title" { "solution lengths (" (count(n)) " solved)" }
            div class="histogram" role="img" aria-label="solution length histogram" {
                @if let (Some(first), Some(last)) = (first, last) {
                    @for (len, &c) in hist.iter().enumerate().take(last + 1).skip(first) {
                        div class="col" title={ (len) " moves: " (c) } data-length=(len)
                            data-count=(c) {
                            div class="bar"
                                style={ "height:" (format!("{:.1}", 100.0 * c as f64 / max as f64)) "%" } {}
                            span class="len" { (len) }
                        }
                    }
                } @else {
                    span class="histogram-empty" { "no solutions yet" }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use cubefleet_proto::BatchStatus;

    use super::*;

    #[test]
    fn batch_names_are_escaped_and_histogram_drawn() {
        let b = BatchStatus {
            batch_id: "b<1>\"".into(),
            name: "<img src=x onerror=alert(1)> & 'q'".into(),
            total: 10,
            done: 4,
            queued: 6,
            length_histogram: vec![0, 0, 1, 3],
            ..BatchStatus::default()
        };
        let h = batch_html(&BatchView::from(&b)).into_string();
        assert!(!h.contains("<img"), "{h}");
        assert!(
            h.contains("&lt;img src=x onerror=alert(1)&gt; &amp; 'q'"),
            "{h}"
        );
        assert!(h.contains("data-batch=\"b&lt;1&gt;&quot;\""), "{h}");
        assert!(h.contains("<progress class=\"batch-progress\" max=\"10\" value=\"4\">"));
        assert_eq!(h.matches("class=\"col\"").count(), 2);
        assert!(h.contains("height:100.0%"));
    }

    /// A failed job counts as finished on the page, as everywhere: the batch reaches 100 %.
    #[test]
    fn a_batch_whose_last_job_failed_is_finished_at_100_percent() {
        let b = BatchStatus {
            batch_id: "b".into(),
            total: 3,
            done: 2,
            failed: 1,
            ..BatchStatus::default()
        };
        let h = batch_html(&BatchView::from(&b)).into_string();
        assert!(h.contains("max=\"3\" value=\"3\""), "{h}");
        assert!(h.contains("100.0%") && h.contains("badge finished"), "{h}");
        assert!(
            h.contains("1 failed") && h.contains("data-failed=\"1\""),
            "{h}"
        );
    }

    /// A cancelled batch is not drawn finished: its bar shows the jobs answered before the
    /// cancel, its cancelled jobs are counted apart, its badge says so.
    #[test]
    fn a_cancelled_batch_draws_only_its_answered_jobs() {
        let b = BatchStatus {
            batch_id: "c".into(),
            total: 4,
            done: 1,
            cancelled: 3,
            cancelled_batch: true,
            ..BatchStatus::default()
        };
        let h = batch_html(&BatchView::from(&b)).into_string();
        assert!(h.contains("max=\"4\" value=\"1\""), "{h}");
        assert!(
            h.contains("25.0%</span> answered") && !h.contains("100.0%"),
            "{h}"
        );
        assert!(
            h.contains("<span class=\"cancelled\">3 cancelled</span>")
                && h.contains("badge cancelled"),
            "{h}"
        );
    }

    #[test]
    fn worker_names_are_escaped_on_the_page() {
        let snap = Snapshot {
            batches: Vec::new(),
            counters: crate::core::Counters::default(),
            work: crate::core::Work::default(),
            workers: vec![(
                "w\"1".into(),
                crate::core::WorkerInfo {
                    name: "</td><script>x()</script>".into(),
                    threads: 2,
                    fingerprint: String::new(),
                    completed: 0,
                    rejected: 0,
                    last_seen: Instant::now(),
                    identity: "x".into(),
                    credential: "anonymous".into(),
                    held: 0,
                    asked: None,
                    capped: true,
                    protocol: cubefleet_proto::PROTOCOL,
                },
            )],
            solve_times: crate::solve_times::SolveTimes::default(),
            now: Instant::now(),
        };
        let h = page(&snap, &HashMap::new()).into_string();
        assert!(!h.contains("<script>x()"), "{h}");
        assert!(
            h.contains("&lt;/td&gt;&lt;script&gt;x()&lt;/script&gt;"),
            "{h}"
        );
        assert!(h.contains("data-worker=\"w&quot;1\""), "{h}");
        assert!(
            h.starts_with("<!DOCTYPE html>") && h.ends_with("</html>"),
            "{h}"
        );
    }
}
