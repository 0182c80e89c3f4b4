//! The coordinator's HTTP port (separate from gRPC): Prometheus metrics and the status page.
//!
//! | path | what | token |
//! | --- | --- | --- |
//! | `GET /` | the status page: batches with progress, rate, ETA and length histogram; workers and their throughput. Server-rendered HTML; a few lines of JavaScript re-fetch `/fragment` every 2 s | yes |
//! | `GET /fragment` | the live part of the status page alone (what the page's script swaps in) | yes |
//! | `GET /api/status` | the same as JSON | yes |
//! | `GET /metrics` | OpenMetrics text (see [`crate::metrics`]): counts, states and worker names only, nothing of a batch's contents | no |
//! | `GET /healthz` | `ok` | no |
//!
//! With a token (the coordinator's `--token`), the paths marked "yes" answer 401 unless the
//! request presents it: `Authorization: Bearer TOKEN`, or HTTP Basic credentials whose
//! password is the token (any user name; a browser asks for them, since a 401 carries
//! `WWW-Authenticate: Basic`).
//!
//! The HTML is built with maud templates, which escape every value spliced in (batch names
//! and ids, worker names). Reading the coordinator blocks on the store, so handlers read it on
//! the blocking pool.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use cubefleet_proto::{mode, BatchStatus, Metric};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use tokio_util::sync::CancellationToken;

use crate::core::Core;
use crate::credentials::{Credential, Credentials, Role};
use crate::metrics::Metrics;
use crate::snapshot::{BatchState, Snapshot};

/// Content type of the metrics (OpenMetrics text).
pub const METRICS_CONTENT_TYPE: &str = crate::metrics::CONTENT_TYPE;

/// How often the background sampler reads the coordinator, so rates are known before anyone
/// looks at the page.
const SAMPLE_EVERY: Duration = Duration::from_secs(2);

/// The window worker throughput is measured over.
const RATE_WINDOW: Duration = Duration::from_secs(60);

/// What the handlers share.
struct Http {
    core: Arc<Core>,
    /// The registry `/metrics` encodes (its collector snapshots `core`).
    metrics: Metrics,
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

impl Http {
    /// The handlers' state over `core`.
    fn new(core: Arc<Core>) -> Arc<Http> {
        let source = core.clone();
        Arc::new(Http {
            core,
            metrics: Metrics::new(move || Snapshot::take(&source)),
            samples: Mutex::default(),
        })
    }
}

/// The credentials of a `token` (of both roles; none, or empty: no authentication).
fn token_credentials(token: Option<String>) -> Arc<Credentials> {
    let list = token
        .filter(|t| !t.is_empty())
        .and_then(|t| Credential::new("token", false, Role::Both, &t).ok());
    Arc::new(Credentials::new(list.into_iter().collect()).unwrap_or_default())
}

/// The router of the HTTP port over `core`; with a `token` (empty counts as none), the status
/// page and `/api/*` need it (see the module doc).
pub fn router(core: Arc<Core>, token: Option<String>) -> Router {
    router_with(Http::new(core), token_credentials(token))
}

fn router_with(http: Arc<Http>, credentials: Arc<Credentials>) -> Router {
    let private = Router::new()
        .route("/", get(index))
        .route("/fragment", get(fragment))
        .route("/api/status", get(api_status));
    let private = if credentials.is_open() {
        private
    } else {
        private.layer(axum::middleware::from_fn_with_state(
            credentials,
            require_token,
        ))
    };
    Router::new()
        .merge(private)
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .with_state(http)
}

/// Lets a request through when it presents a client credential (or one of both roles); 401
/// (with a Basic challenge, so a browser asks) when not.
async fn require_token(
    State(credentials): State<Arc<Credentials>>,
    req: Request,
    next: Next,
) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(crate::auth::http_token);
    let client = given
        .as_deref()
        .and_then(|g| credentials.find(g))
        .is_some_and(|c| c.role.allows(Role::Client));
    match given {
        Some(_) if client => next.run(req).await,
        given => {
            let why = if given.is_some() {
                "wrong token\n"
            } else {
                "this coordinator needs its token (--token or CUBEFLEET_TOKEN): send \
                 `Authorization: Bearer TOKEN`, or log in with any user name and the token as \
                 password\n"
            };
            (
                StatusCode::UNAUTHORIZED,
                [(
                    header::WWW_AUTHENTICATE,
                    "Basic realm=\"cubefleet\", charset=\"UTF-8\"",
                )],
                why,
            )
                .into_response()
        }
    }
}

/// Serves the HTTP port on `listener` until `shutdown` is cancelled; `token` as in [`router`].
pub async fn serve_http(
    core: Arc<Core>,
    listener: tokio::net::TcpListener,
    token: Option<String>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    serve_http_with(core, listener, token_credentials(token), shutdown).await
}

/// [`serve_http`] for the coordinator's `credentials`: the status page and `/api/*` need a
/// client credential (or one of both roles); none: no authentication.
pub async fn serve_http_with(
    core: Arc<Core>,
    listener: tokio::net::TcpListener,
    credentials: Arc<Credentials>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let http = Http::new(core);
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
    let result = axum::serve(listener, router_with(http, credentials))
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
    match tokio::task::spawn_blocking(move || http.metrics.render()).await {
        Ok(Ok(text)) => ([(header::CONTENT_TYPE, METRICS_CONTENT_TYPE)], text).into_response(),
        Ok(Err(e)) => (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}

async fn index(State(http): State<Arc<Http>>) -> Response {
    match read(http).await {
        Ok((snap, rates)) => Html(page(&snap, &rates).into_string()).into_response(),
        Err(r) => r,
    }
}

async fn fragment(State(http): State<Arc<Http>>) -> Response {
    match read(http).await {
        Ok((snap, rates)) => (
            [(header::CACHE_CONTROL, "no-store")],
            Html(live(&snap, &rates).into_string()),
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
                "kind": if b.kind.is_empty() { "file" } else { b.kind.as_str() },
                "made": b.made,
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
    BatchState::of(b).name()
}

/// Jobs of a batch that need no more work.
fn finished(b: &BatchStatus) -> u64 {
    b.done + b.invalid + b.cancelled
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
            s.push_str(&format!(", {} s each", number(t)));
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
  // the page's address without the user name and password a login may have put in it (a
  // fetch of an address with credentials fails); the browser sends the login it keeps
  var url = new URL('fragment', document.baseURI);
  url.username = '';
  url.password = '';
  function refresh() {
    fetch(url.href, { cache: 'no-store', credentials: 'same-origin' })
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
fn page(snap: &Snapshot, rates: &HashMap<String, f64>) -> Markup {
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
fn live(snap: &Snapshot, rates: &HashMap<String, f64>) -> Markup {
    let jobs = snap.jobs_by_state();
    let active = snap.batches_by_state()[0].1;
    let total_rate: f64 = rates.values().sum();
    let stats = [
        ("queue-depth", count(snap.queue_depth as u64), "jobs queued"),
        (
            "queued-work",
            duration_text(snap.queued_work_seconds()),
            "work queued (thread time)",
        ),
        ("leased", count(jobs[1].1), "jobs running"),
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
            @for b in snap.batches.iter().rev() { (batch_html(b)) }
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
                                    (duration_text(w.last_seen.elapsed().as_secs_f64())) " ago"
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
fn batch_html(b: &BatchStatus) -> Markup {
    let state = state_name(b);
    let done = finished(b);
    let pct = if b.total > 0 {
        100.0 * done as f64 / b.total as f64
    } else {
        0.0
    };
    let name = if b.name.is_empty() {
        &b.batch_id
    } else {
        &b.name
    };
    let eta = if state != "running" {
        "—".to_string()
    } else if b.eta_seconds > 0.0 {
        duration_text(b.eta_seconds)
    } else {
        "unknown (no rate yet)".to_string()
    };
    let pct = format!("{pct:.1}%");
    html! {
        article class={ "batch " (state) } data-batch=(b.batch_id) {
            h3 {
                (name) small { (b.batch_id) }
                span class={ "badge " (state) } { (state) }
            }
            div class="left" {
                progress class="batch-progress" max=(b.total.max(1)) value=(done) { (pct) }
                p class="numbers" {
                    span class="pct" { (pct) } " · "
                    span class="finished" { (count(done)) } " of "
                    span class="total" { (count(b.total)) } " finished ("
                    (count(b.done)) " done, " (count(b.invalid)) " invalid, "
                    (count(b.cancelled)) " cancelled) · " (count(b.queued)) " queued · "
                    (count(b.leased)) " running"
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
                    (mode_text(b)) " · priority " (b.priority) " · rate "
                    span class="rate" { (number(b.rate)) "/s" } " · ETA "
                    span class="eta" { (eta) }
                }
            }
            (histogram_html(&b.length_histogram))
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
        let h = batch_html(&b).into_string();
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

    #[test]
    fn worker_names_are_escaped_on_the_page() {
        let snap = Snapshot {
            batches: Vec::new(),
            counters: crate::core::Counters::default(),
            queue_depth: 0,
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
                    capped: true,
                },
            )],
            solve_times: crate::solve_times::SolveTimes::default(),
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
