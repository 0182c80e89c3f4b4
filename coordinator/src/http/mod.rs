//! The coordinator's HTTP port (separate from gRPC): Prometheus metrics and the status page.
//!
//! | path | what | token |
//! | --- | --- | --- |
//! | `GET /` | the status page: batches with progress, rate, ETA and length histogram; workers and their throughput. Server-rendered HTML; a few lines of JavaScript re-fetch `/fragment` every 2 s | yes |
//! | `GET /fragment` | the live part of the status page alone (what the page's script swaps in) | yes |
//! | `GET /api/status` | the same as JSON | yes |
//! | `GET /metrics` | OpenMetrics text (see [`crate::metrics`]): counts and states only, never a worker's or batch's name, a line or a secret | no |
//! | `GET /healthz` | `ok` | no |
//!
//! With a token (the coordinator's `--token`), the paths marked "yes" answer 401 unless the
//! request presents it (see `auth`). With [`HttpOptions::tls`] (the coordinator's
//! `--tls-cert`, the certificate and key gRPC serves) the port speaks HTTPS only, so the
//! secret a browser sends for the page never crosses the network in clear; without, plain
//! HTTP (the coordinator warns at start when the page then asks for a secret). The port is
//! HTTP/1.1, served by `listen` within the transport's bounds ([`crate::conn`]: connections
//! open, silence, header and idle timeouts).
//!
//! The module's parts: `auth` (the token), `rates` (worker throughput, sampled in the
//! background), `api` (the JSON), `page` (the HTML templates, with `page.css` and `page.js`),
//! `words` (numbers and durations in words). The page and the JSON show one
//! view of each batch ([`cubefleet_proto::view::BatchView`], as `cubefleet status` does), so
//! they agree on every count. Reading the coordinator blocks on the store, so handlers read it
//! on the blocking pool; a read changes nothing (rates are sampled by the background task and
//! the core, never by a reader).

mod api;
mod auth;
mod listen;
mod page;
mod rates;
mod words;

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::conn::Transport;
use crate::core::Core;
use crate::credentials::Credentials;
use crate::metrics::Metrics;
use crate::snapshot::Snapshot;

/// Content type of the metrics (OpenMetrics text).
pub const METRICS_CONTENT_TYPE: &str = crate::metrics::CONTENT_TYPE;

/// How often the background sampler reads the coordinator, so worker rates are known before
/// anyone looks at the page.
const SAMPLE_EVERY: Duration = Duration::from_secs(2);

/// What the handlers share.
struct Http {
    core: Arc<Core>,
    /// The registry `/metrics` encodes (its collector snapshots `core`).
    metrics: Metrics,
    /// Samples of each worker's accepted results.
    rates: rates::WorkerRates,
}

impl Http {
    /// The handlers' state over `core`.
    fn new(core: Arc<Core>) -> Arc<Http> {
        let source = core.clone();
        Arc::new(Http {
            core,
            metrics: Metrics::new(move || Snapshot::take(&source)),
            rates: rates::WorkerRates::default(),
        })
    }

    /// Reads the coordinator: the snapshot and the throughput (results per second) of each
    /// worker. Changes nothing.
    fn read(&self) -> Result<(Snapshot, HashMap<String, f64>), crate::Error> {
        let snap = Snapshot::take(&self.core)?;
        let rates = self.rates.read(&snap);
        Ok((snap, rates))
    }

    /// Reads the coordinator and records a sample of every worker's results (the sampler's
    /// tick).
    fn sample(&self) -> Result<(), crate::Error> {
        let snap = Snapshot::take(&self.core)?;
        self.rates.record(&snap);
        Ok(())
    }
}

/// The router of the HTTP port over `core`; with a `token` (empty counts as none), the status
/// page and `/api/*` need it (see the module doc). Without the sampler of [`serve_http`],
/// worker throughputs read 0.
pub fn router(core: Arc<Core>, token: Option<String>) -> Router {
    router_with(Http::new(core), auth::token_credentials(token))
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
            (credentials, http.core.clone()),
            auth::require_token,
        ))
    };
    Router::new()
        .merge(private)
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .with_state(http)
}

/// The certificate and key the HTTP port serves HTTPS with (loaded once, before serving).
#[derive(Clone)]
pub struct HttpTls(tokio_rustls::TlsAcceptor);

impl HttpTls {
    /// Reads the certificate chain `cert` and private key `key` (PEM: the files of
    /// `--tls-cert` and `--tls-key`); an unreadable or mismatched pair is refused naming the
    /// file.
    pub fn load(cert: &Path, key: &Path) -> Result<HttpTls, crate::Error> {
        crate::conn::tls_acceptor(cert, key).map(HttpTls)
    }
}

impl fmt::Debug for HttpTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HttpTls")
    }
}

/// How the HTTP port is served besides what it shows: TLS and the transport's bounds.
#[derive(Clone, Debug, Default)]
pub struct HttpOptions {
    /// HTTPS with this certificate and key; None: plain HTTP.
    pub tls: Option<HttpTls>,
    /// The bounds of its connections (the most open, silence, header and idle timeouts).
    pub transport: Transport,
}

/// Serves the HTTP port on `listener` until `shutdown` is cancelled; `token` as in [`router`].
pub async fn serve_http(
    core: Arc<Core>,
    listener: tokio::net::TcpListener,
    token: Option<String>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    serve_http_with(core, listener, auth::token_credentials(token), shutdown).await
}

/// [`serve_http`] for the coordinator's `credentials`: the status page and `/api/*` need a
/// client credential (or one of both roles); none: no authentication.
pub async fn serve_http_with(
    core: Arc<Core>,
    listener: tokio::net::TcpListener,
    credentials: Arc<Credentials>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    serve_http_options(
        core,
        listener,
        credentials,
        HttpOptions::default(),
        shutdown,
    )
    .await
}

/// [`serve_http_with`], over TLS when `options` has it, within `options`' bounds.
pub async fn serve_http_options(
    core: Arc<Core>,
    listener: tokio::net::TcpListener,
    credentials: Arc<Credentials>,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let http = Http::new(core);
    // sample in the background, so worker rates are known when the page is opened
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
                if let Ok(Err(e)) = tokio::task::spawn_blocking(move || h.sample()).await {
                    tracing::debug!(error = %e, "status sampler");
                }
            }
        })
    };
    let result = listen::serve(
        listener,
        router_with(http, credentials),
        options.tls.map(|t| t.0),
        &options.transport,
        shutdown,
    )
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
    listen::serve(listener, app, None, &Transport::default(), shutdown).await
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
        Ok((snap, rates)) => Html(page::page(&snap, &rates).into_string()).into_response(),
        Err(r) => r,
    }
}

async fn fragment(State(http): State<Arc<Http>>) -> Response {
    match read(http).await {
        Ok((snap, rates)) => (
            [(header::CACHE_CONTROL, "no-store")],
            Html(page::live(&snap, &rates).into_string()),
        )
            .into_response(),
        Err(r) => r,
    }
}

async fn api_status(State(http): State<Arc<Http>>) -> Response {
    match read(http).await {
        Ok((snap, rates)) => {
            axum::Json(api::StatusView::of(&snap, &rates).to_json()).into_response()
        }
        Err(r) => r,
    }
}
