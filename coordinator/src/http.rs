//! The coordinator's HTTP port (separate from gRPC): Prometheus metrics and the status page.
//!
//! | path | what |
//! | --- | --- |
//! | `GET /` | the status page: batches with progress, rate, ETA and length histogram; workers and their throughput. Server-rendered HTML; a few lines of JavaScript re-fetch `/fragment` every 2 s |
//! | `GET /fragment` | the live part of the status page alone (what the page's script swaps in) |
//! | `GET /api/status` | the same as JSON |
//! | `GET /metrics` | Prometheus text format (see [`crate::metrics`]) |
//! | `GET /healthz` | `ok` |
//!
//! Every string that users chose (batch names and ids, worker names) is HTML-escaped.
//! Reading the coordinator blocks on the store, so handlers read it on the blocking pool.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use cubefleet_proto::{mode, BatchStatus, Metric};
use tokio_util::sync::CancellationToken;

use crate::core::Core;
use crate::metrics::{batch_state, Snapshot};

/// Content type of the Prometheus text format.
pub const METRICS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How often the background sampler reads the coordinator, so rates are known before anyone
/// looks at the page.
const SAMPLE_EVERY: Duration = Duration::from_secs(2);

/// The window worker throughput is measured over.
const RATE_WINDOW: Duration = Duration::from_secs(60);

/// What the handlers share.
struct Http {
    core: Arc<Core>,
    /// Per worker id: (time, results accepted) samples of the last [`RATE_WINDOW`].
    samples: Mutex<HashMap<String, VecDeque<(Instant, u64)>>>,
}

impl Http {
    /// Reads the coordinator and updates the worker rate samples; returns the snapshot and the
    /// throughput (results per second) of each worker.
    fn read(&self) -> Result<(Snapshot, HashMap<String, f64>), crate::Error> {
        let snap = Snapshot::take(&self.core)?;
        let now = Instant::now();
        let mut samples = self
            .samples
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        samples.retain(|id, _| snap.workers.iter().any(|(w, _)| w == id));
        let mut rates = HashMap::new();
        for (id, w) in &snap.workers {
            let s = samples.entry(id.clone()).or_default();
            s.push_back((now, w.completed));
            while s
                .front()
                .is_some_and(|(t, _)| now.duration_since(*t) > RATE_WINDOW)
            {
                s.pop_front();
            }
            let rate = match s.front() {
                Some(&(t, n)) if now.duration_since(t) >= Duration::from_millis(500) => {
                    w.completed.saturating_sub(n) as f64 / now.duration_since(t).as_secs_f64()
                }
                _ => 0.0,
            };
            rates.insert(id.clone(), rate);
        }
        Ok((snap, rates))
    }
}

/// The router of the HTTP port over `core`.
pub fn router(core: Arc<Core>) -> Router {
    router_with(Arc::new(Http {
        core,
        samples: Mutex::default(),
    }))
}

fn router_with(http: Arc<Http>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/fragment", get(fragment))
        .route("/api/status", get(api_status))
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .with_state(http)
}

/// Serves the HTTP port on `listener` until `shutdown` is cancelled.
pub async fn serve_http(
    core: Arc<Core>,
    listener: tokio::net::TcpListener,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let http = Arc::new(Http {
        core,
        samples: Mutex::default(),
    });
    // sample in the background, so batch and worker rates are known when the page is opened
    let sampler = {
        let (http, shutdown) = (http.clone(), shutdown.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(SAMPLE_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = shutdown.cancelled() => break,
                }
                let h = http.clone();
                if let Ok(Err(e)) = tokio::task::spawn_blocking(move || h.read().map(drop)).await {
                    tracing::debug!(error = %e, "status sampler");
                }
            }
        })
    };
    let result = axum::serve(listener, router_with(http))
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await;
    sampler.abort();
    result
}

/// Serves only `GET /metrics` (the text `render` returns) on `listener` until `shutdown` is
/// cancelled: the metrics port of processes other than the coordinator, such as workers.
pub async fn serve_metrics(
    listener: tokio::net::TcpListener,
    render: impl Fn() -> String + Clone + Send + Sync + 'static,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let app = Router::new()
        .route(
            "/metrics",
            get(move || {
                let render = render.clone();
                async move { ([(header::CONTENT_TYPE, METRICS_CONTENT_TYPE)], render()) }
            }),
        )
        .route("/healthz", get(|| async { "ok\n" }));
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
}

/// Runs [`Http::read`] on the blocking pool; an error becomes a 503.
async fn read(http: Arc<Http>) -> Result<(Snapshot, HashMap<String, f64>), Response> {
    match tokio::task::spawn_blocking(move || http.read()).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err((StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response()),
        Err(e) => Err((StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response()),
    }
}

async fn metrics(State(http): State<Arc<Http>>) -> Response {
    match read(http).await {
        Ok((snap, _)) => (
            [(header::CONTENT_TYPE, METRICS_CONTENT_TYPE)],
            snap.render(),
        )
            .into_response(),
        Err(r) => r,
    }
}

async fn index(State(http): State<Arc<Http>>) -> Response {
    match read(http).await {
        Ok((snap, rates)) => Html(page(&snap, &rates)).into_response(),
        Err(r) => r,
    }
}

async fn fragment(State(http): State<Arc<Http>>) -> Response {
    match read(http).await {
        Ok((snap, rates)) => (
            [(header::CACHE_CONTROL, "no-store")],
            Html(live(&snap, &rates)),
        )
            .into_response(),
        Err(r) => r,
    }
}

async fn api_status(State(http): State<Arc<Http>>) -> Response {
    match read(http).await {
        Ok((snap, rates)) => axum::Json(status_json(&snap, &rates)).into_response(),
        Err(r) => r,
    }
}

/// The status as JSON: totals, batches, workers.
fn status_json(snap: &Snapshot, rates: &HashMap<String, f64>) -> serde_json::Value {
    let jobs: serde_json::Map<String, serde_json::Value> = snap
        .jobs_by_state()
        .iter()
        .map(|&(s, n)| (s.to_string(), n.into()))
        .collect();
    let batches: Vec<serde_json::Value> = snap
        .batches
        .iter()
        .map(|b| {
            serde_json::json!({
                "batch_id": b.batch_id,
                "name": b.name,
                "mode": mode_text(b),
                "priority": b.priority,
                "state": state_name(b),
                "total": b.total,
                "queued": b.queued,
                "leased": b.leased,
                "done": b.done,
                "invalid": b.invalid,
                "cancelled": b.cancelled,
                "finished": finished(b),
                "rate": b.rate,
                "eta_seconds": b.eta_seconds,
                "length_histogram": b.length_histogram,
                "created_unix_ms": b.created_unix_ms,
            })
        })
        .collect();
    let workers: Vec<serde_json::Value> = snap
        .workers
        .iter()
        .map(|(id, w)| {
            serde_json::json!({
                "worker_id": id,
                "name": w.name,
                "threads": w.threads,
                "completed": w.completed,
                "rejected": w.rejected,
                "rate": rates.get(id).copied().unwrap_or(0.0),
                "last_seen_seconds": w.last_seen.elapsed().as_secs_f64(),
            })
        })
        .collect();
    serde_json::json!({
        "queue_depth": snap.queue_depth,
        "queued_work_seconds": snap.queued_work_seconds(),
        "solve_mean_seconds": snap.solve_times.estimate(),
        "jobs": jobs,
        "submitted": snap.counters.submitted,
        "verified": snap.counters.completed,
        "rejected": snap.counters.rejected,
        "lease_expiries": snap.counters.lease_expiries,
        "batches": batches,
        "workers": workers,
    })
}

/// `running`, `finished` or `cancelled`.
fn state_name(b: &BatchStatus) -> &'static str {
    ["running", "finished", "cancelled"][usize::from(batch_state(b))]
}

/// Jobs of a batch that need no more work.
fn finished(b: &BatchStatus) -> u64 {
    b.done + b.invalid + b.cancelled
}

/// `text` with `&`, `<`, `>`, `"` and `'` escaped, for HTML text and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c => s.push(c),
        }
    }
    s
}

/// A batch's mode in words.
fn mode_text(b: &BatchStatus) -> String {
    let metric = |m: i32| {
        if Metric::try_from(m) == Ok(Metric::Qtm) {
            "QTM"
        } else {
            "HTM"
        }
    };
    let mut s = match b.mode.as_ref().and_then(|m| m.kind.as_ref()) {
        Some(mode::Kind::Optimal(o)) => format!("optimal ({})", metric(o.metric)),
        Some(mode::Kind::DepthLimited(d)) => {
            format!("within {} moves ({})", d.max_depth, metric(d.metric))
        }
        Some(mode::Kind::TwoPhase(t)) if t.max_length > 0 => {
            format!("two-phase, at most {} moves", t.max_length)
        }
        _ => "two-phase, at most 20 moves".to_string(),
    };
    if let Some(t) = b.mode.as_ref().map(|m| m.timeout_seconds) {
        if t > 0.0 {
            let _ = write!(s, ", {} s each", number(t));
        }
    }
    s
}

/// A duration in words: `45 s`, `12 min`, `3.5 h`, `2.1 d`.
fn duration_text(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        "—".into()
    } else if seconds < 10.0 {
        format!("{} s", number(seconds))
    } else if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 90.0 * 60.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 48.0 * 3600.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} d", seconds / 86400.0)
    }
}

/// A count with thin separators: `1 234 567`.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut s = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            s.push('\u{202f}');
        }
        s.push(ch);
    }
    s
}

/// A rate or small number: up to 3 significant digits.
fn number(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

const STYLE: &str = r#"
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f5f6f8; }
header { background: #1d2330; color: #fff; padding: 12px 24px; display: flex; align-items: baseline; gap: 18px; }
header h1 { font-size: 20px; margin: 0; }
header .updated { margin-left: auto; font-size: 13px; opacity: .75; }
main { padding: 16px 24px; max-width: 1200px; }
h2 { font-size: 17px; margin: 22px 0 8px; }
.summary { display: flex; flex-wrap: wrap; gap: 12px; }
.stat { background: #fff; border-radius: 6px; padding: 8px 14px; box-shadow: 0 1px 2px #0002; min-width: 120px; }
.stat b { display: block; font-size: 20px; }
.stat span { font-size: 12px; color: #5a6275; }
.batch { background: #fff; border-radius: 6px; padding: 12px 16px; margin-bottom: 12px; box-shadow: 0 1px 2px #0002; display: grid; grid-template-columns: 1fr 280px; gap: 4px 24px; }
.batch h3 { margin: 0; font-size: 16px; grid-column: 1 / -1; }
.batch h3 small { color: #5a6275; font-weight: normal; margin-left: 8px; }
.badge { font-size: 12px; padding: 1px 8px; border-radius: 9px; margin-left: 8px; background: #dfe7fb; color: #2b4c9b; }
.badge.finished { background: #d9f2df; color: #1d6b33; }
.badge.cancelled { background: #f6dcdc; color: #8a2020; }
progress.batch-progress { width: 100%; height: 16px; accent-color: #3b6fe0; }
.numbers { font-size: 13px; color: #3a4254; margin: 2px 0; }
.histogram { display: flex; align-items: flex-end; gap: 2px; height: 72px; border-bottom: 1px solid #c9ced9; }
.histogram .col { flex: 1; display: flex; flex-direction: column; justify-content: flex-end; align-items: center; height: 100%; min-width: 9px; }
.histogram .bar { width: 100%; background: #3b6fe0; border-radius: 2px 2px 0 0; min-height: 1px; }
.histogram .len { font-size: 9px; color: #5a6275; }
.histogram-empty { font-size: 13px; color: #8a91a2; align-self: center; }
.hist-title { font-size: 12px; color: #5a6275; }
table.workers { border-collapse: collapse; background: #fff; box-shadow: 0 1px 2px #0002; border-radius: 6px; }
table.workers th, table.workers td { padding: 6px 12px; text-align: left; border-bottom: 1px solid #eceef2; font-size: 14px; }
table.workers td.num, table.workers th.num { text-align: right; }
.empty { color: #8a91a2; }
footer { padding: 8px 24px 24px; font-size: 12px; color: #8a91a2; }
"#;

/// A little script: swap in `/fragment` every 2 s; keep the page as it is when that fails.
const SCRIPT: &str = r#"
(function () {
  var live = document.getElementById('live');
  var stamp = document.getElementById('updated');
  function refresh() {
    fetch('fragment', { cache: 'no-store' })
      .then(function (r) { if (!r.ok) { throw new Error('HTTP ' + r.status); } return r.text(); })
      .then(function (html) {
        live.innerHTML = html;
        document.body.setAttribute('data-refreshed', String(Number(document.body.getAttribute('data-refreshed') || 0) + 1));
        stamp.textContent = 'updated ' + new Date().toLocaleTimeString();
      })
      .catch(function (e) { stamp.textContent = 'not updated: ' + e.message; });
  }
  refresh();
  setInterval(refresh, 2000);
})();
"#;

/// The whole status page.
fn page(snap: &Snapshot, rates: &HashMap<String, f64>) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>cubefleet status</title><style>{STYLE}</style></head>\
         <body data-refreshed=\"0\"><header><h1>cubefleet</h1><span>coordinator status</span>\
         <span class=\"updated\" id=\"updated\">server-rendered</span></header>\
         <main id=\"live\">{}</main>\
         <footer>Refreshes every 2 s · <a href=\"metrics\">/metrics</a> · \
         <a href=\"api/status\">/api/status</a></footer>\
         <script>{SCRIPT}</script></body></html>\n",
        live(snap, rates)
    )
}

/// The part of the page that refreshes: totals, batches, workers.
fn live(snap: &Snapshot, rates: &HashMap<String, f64>) -> String {
    let mut h = String::new();
    let jobs = snap.jobs_by_state();
    let active = snap.batches.iter().filter(|b| batch_state(b) == 0).count();
    let total_rate: f64 = rates.values().sum();
    h.push_str("<section class=\"summary\" id=\"summary\">");
    let stats = [
        ("queue-depth", count(snap.queue_depth as u64), "jobs queued"),
        (
            "queued-work",
            duration_text(snap.queued_work_seconds()),
            "work queued (thread time)",
        ),
        ("leased", count(jobs[1].1), "jobs running"),
        ("done", count(jobs[2].1), "jobs done"),
        ("active-batches", count(active as u64), "batches running"),
        ("workers", count(snap.workers.len() as u64), "workers"),
        ("throughput", format!("{}/s", number(total_rate)), "results"),
    ];
    for (id, value, label) in stats {
        let _ = write!(
            h,
            "<div class=\"stat\" id=\"stat-{id}\"><b>{}</b><span>{label}</span></div>",
            escape_html(&value)
        );
    }
    h.push_str("</section>");

    h.push_str("<h2>Batches</h2><section id=\"batches\">");
    if snap.batches.is_empty() {
        h.push_str("<p class=\"empty\">No batches yet: <code>cubefleet submit FILE</code>.</p>");
    }
    // newest first: the batch being watched is usually the last one submitted
    for b in snap.batches.iter().rev() {
        batch_html(&mut h, b);
    }
    h.push_str("</section>");

    h.push_str("<h2>Workers</h2><section id=\"workers\">");
    if snap.workers.is_empty() {
        h.push_str("<p class=\"empty\">No worker registered: <code>cubefleet worker --coordinator URL</code>.</p>");
    } else {
        h.push_str(
            "<table class=\"workers\"><thead><tr><th>worker</th><th>name</th>\
             <th class=\"num\">threads</th><th class=\"num\">results</th>\
             <th class=\"num\">rejected</th><th class=\"num\">throughput</th>\
             <th class=\"num\">last seen</th></tr></thead><tbody>",
        );
        for (id, w) in &snap.workers {
            let rate = rates.get(id).copied().unwrap_or(0.0);
            let _ = write!(
                h,
                "<tr class=\"worker\" data-worker=\"{id}\"><td>{id}</td><td>{name}</td>\
                 <td class=\"num\">{}</td><td class=\"num completed\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num rate\">{}/s</td>\
                 <td class=\"num\">{} ago</td></tr>",
                w.threads,
                count(w.completed),
                count(w.rejected),
                number(rate),
                duration_text(w.last_seen.elapsed().as_secs_f64()),
                id = escape_html(id),
                name = escape_html(&w.name),
            );
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section>");
    h
}

/// One batch: title, progress bar, counts, rate and ETA, length histogram.
fn batch_html(h: &mut String, b: &BatchStatus) {
    let state = state_name(b);
    let done = finished(b);
    let pct = if b.total > 0 {
        100.0 * done as f64 / b.total as f64
    } else {
        0.0
    };
    let id = escape_html(&b.batch_id);
    let name = if b.name.is_empty() {
        id.clone()
    } else {
        escape_html(&b.name)
    };
    let eta = if state != "running" {
        "—".to_string()
    } else if b.eta_seconds > 0.0 {
        duration_text(b.eta_seconds)
    } else {
        "unknown (no rate yet)".to_string()
    };
    let _ = write!(
        h,
        "<article class=\"batch {state}\" data-batch=\"{id}\">\
         <h3>{name}<small>{id}</small><span class=\"badge {state}\">{state}</span></h3>\
         <div class=\"left\">\
         <progress class=\"batch-progress\" max=\"{total}\" value=\"{done}\">{pct:.1}%</progress>\
         <p class=\"numbers\"><span class=\"pct\">{pct:.1}%</span> · \
         <span class=\"finished\">{}</span> of <span class=\"total\">{}</span> finished \
         ({} done, {} invalid, {} cancelled) · {} queued · {} running</p>\
         <p class=\"numbers\">{mode} · priority {prio} · \
         rate <span class=\"rate\">{}/s</span> · ETA <span class=\"eta\">{eta}</span></p>\
         </div>",
        count(done),
        count(b.total),
        count(b.done),
        count(b.invalid),
        count(b.cancelled),
        count(b.queued),
        count(b.leased),
        number(b.rate),
        total = b.total.max(1),
        mode = escape_html(&mode_text(b)),
        prio = b.priority,
    );
    histogram_html(h, &b.length_histogram);
    h.push_str("</article>");
}

/// A bar chart of solution lengths: one column per length from the shortest to the longest
/// seen, bar heights relative to the tallest.
fn histogram_html(h: &mut String, hist: &[u64]) {
    let n: u64 = hist.iter().sum();
    let _ = write!(
        h,
        "<div class=\"right\"><div class=\"hist-title\">solution lengths ({} solved)</div>\
         <div class=\"histogram\" role=\"img\" aria-label=\"solution length histogram\">",
        count(n)
    );
    let first = hist.iter().position(|&c| c > 0);
    let last = hist.iter().rposition(|&c| c > 0);
    match (first, last) {
        (Some(first), Some(last)) => {
            let max = hist.iter().copied().max().unwrap_or(1).max(1);
            for (len, &c) in hist.iter().enumerate().take(last + 1).skip(first) {
                let height = 100.0 * c as f64 / max as f64;
                let _ = write!(
                    h,
                    "<div class=\"col\" title=\"{len} moves: {c}\" data-length=\"{len}\" data-count=\"{c}\">\
                     <div class=\"bar\" style=\"height:{height:.1}%\"></div>\
                     <span class=\"len\">{len}</span></div>"
                );
            }
        }
        _ => h.push_str("<span class=\"histogram-empty\">no solutions yet</span>"),
    }
    h.push_str("</div></div>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_html() {
        assert_eq!(
            escape_html("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }

    #[test]
    fn batch_names_are_escaped_and_histogram_drawn() {
        let b = BatchStatus {
            batch_id: "b<1>".into(),
            name: "<img src=x onerror=alert(1)>".into(),
            total: 10,
            done: 4,
            queued: 6,
            length_histogram: vec![0, 0, 1, 3],
            ..BatchStatus::default()
        };
        let mut h = String::new();
        batch_html(&mut h, &b);
        assert!(!h.contains("<img"), "{h}");
        assert!(h.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(h.contains("data-batch=\"b&lt;1&gt;\""));
        assert!(h.contains("<progress class=\"batch-progress\" max=\"10\" value=\"4\">"));
        assert_eq!(h.matches("class=\"col\"").count(), 2);
        assert!(h.contains("height:100.0%"));
    }

    #[test]
    fn words_for_numbers() {
        assert_eq!(count(1234567), "1\u{202f}234\u{202f}567");
        assert_eq!(count(999), "999");
        assert_eq!(duration_text(30.0), "30 s");
        assert_eq!(duration_text(0.07), "0.07 s");
        assert_eq!(duration_text(600.0), "10 min");
        assert_eq!(duration_text(7200.0), "2.0 h");
    }
}
