//! The cubefleet coordinator: the gRPC services (`Batches` for clients, `Workers` for workers)
//! over a crash-safe sled job store, with every reported solution verified.
//!
//! Module map: [`core`] holds the logic (batches, queue, leases, completions, dedup,
//! progress; one file per part of a job's life) over the [`store`]; `verify` checks every
//! reported result and `mode` says what a batch's mode means (defaults, dedup key, metric);
//! `record` is what the store keeps; [`range`] maps the lines of range and sample batches to states; `service` adapts the core to gRPC; [`serve`] runs it all
//! on a listener until shut down; [`http`] serves the status page and [`metrics`] on a second
//! port, both from a [`snapshot`] of the core (they never read the core themselves);
//! [`solve_times`] keeps the search-time statistics; `rate` is the one computation of a
//! rate (batches' and workers'); [`clock`] is the one source of the time the core measures
//! (the system's, or a test's manual clock); `auth` compares bearer tokens (gRPC and
//! HTTP alike) against the [`credentials`] (roles: client, worker, both); [`session`] makes
//! and checks worker session tokens; [`limits`] is every limit a field of a message has,
//! and of the transport: [`conn`] bounds the connections of both ports, `streams` the
//! response streams each credential holds open; [`logsafe`] writes the texts callers chose
//! into log lines.

mod auth;
pub mod clock;
pub mod conn;
pub mod core;
mod coset;
pub mod credentials;
mod error;
pub mod http;
pub mod limits;
pub mod logsafe;
pub mod metrics;
mod mode;
pub mod range;
mod rate;
mod record;
mod service;
pub mod session;
pub mod snapshot;
pub mod solve_times;
mod store;
mod streams;
mod verify;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use crate::clock::{Clock, ManualClock};
pub use crate::core::{Core, MAX_REJECTIONS};
pub use error::Error;
pub use record::{line_index, MAX_LINES};
use tokio_util::sync::CancellationToken;

/// The name under which the health service reports the coordinator (SERVING once the store is
/// open).
pub const HEALTH_SERVICE: &str = "cubefleet.v1.Coordinator";

/// How the coordinator runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Directory of the sled store.
    pub data_dir: PathBuf,
    /// A bearer token of both roles (clients and workers), the HTTP port's status page and
    /// `/api/*` too (see [`http`]); with no credential at all: no authentication. An empty
    /// token is refused ([`Config::credentials`]).
    pub token: Option<String>,
    /// Credentials of their own roles and names (`--client-token`, `--worker-token`, a
    /// tokens file), besides `token`.
    pub credentials: Vec<credentials::Credential>,
    /// TLS certificate and key (PEM files); `None`: plain HTTP/2.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// How long a lease lasts without a heartbeat.
    pub lease: Duration,
    /// Largest gRPC message accepted, in bytes (default
    /// [`cubefleet_proto::MAX_REQUEST_BYTES`]). Answers are limited to
    /// [`cubefleet_proto::MAX_RESPONSE_BYTES`], what the clients accept.
    pub max_message_bytes: usize,
    /// The bounds of the transport (connections, silence, keepalive, open streams per
    /// credential); defaults: the figures of [`limits`].
    pub transport: conn::Transport,
    /// The time leases, workers and rates are measured in ([`clock`]): the system's; a
    /// test's [`ManualClock`] moves it by hand.
    pub clock: Clock,
}

/// How long a lease lasts without a heartbeat by default (`--lease`'s default): a worker
/// heartbeats four times per lease, so a few lost heartbeats cost no lease, and a worker that
/// died holds its jobs at most this long.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

impl Config {
    /// Defaults for a store in `data_dir`: no token, no TLS, [`DEFAULT_LEASE`] leases,
    /// messages of up to [`cubefleet_proto::MAX_REQUEST_BYTES`], the transport's bounds of
    /// [`limits`], the system's clock.
    pub fn new(data_dir: impl Into<PathBuf>) -> Config {
        Config {
            data_dir: data_dir.into(),
            token: None,
            credentials: Vec::new(),
            tls: None,
            lease: DEFAULT_LEASE,
            max_message_bytes: cubefleet_proto::MAX_REQUEST_BYTES,
            transport: conn::Transport::default(),
            clock: Clock::system(),
        }
    }
}

impl Config {
    /// Every credential the coordinator accepts: `token` (every role, named `token`) and
    /// `credentials`; none means no authentication. Refuses an empty token, and two
    /// credentials with one secret or one name.
    pub fn credentials(&self) -> Result<credentials::Credentials, Error> {
        let mut list = Vec::new();
        if let Some(t) = &self.token {
            list.push(credentials::Credential::new(
                "token",
                false,
                credentials::Role::All,
                t,
            )?);
        }
        list.extend(self.credentials.iter().cloned());
        credentials::Credentials::new(list)
    }
}

/// Opens the store and serves gRPC on `listener` until `shutdown` is cancelled; then stops
/// accepting, finishes the calls in flight, flushes the store and returns.
pub async fn serve(
    config: Config,
    listener: tokio::net::TcpListener,
    shutdown: CancellationToken,
) -> Result<(), Error> {
    let core = open(&config).await?;
    serve_core(core, config, listener, shutdown).await
}

/// Like [`serve`], over a coordinator already opened (so the caller can read it, e.g. for a
/// status page).
pub async fn serve_core(
    core: Arc<Core>,
    config: Config,
    listener: tokio::net::TcpListener,
    shutdown: CancellationToken,
) -> Result<(), Error> {
    // without TCP_NODELAY a small reply (an acknowledgement, a watch update) that follows
    // another one can sit in Nagle's buffer until the peer's delayed ACK, about 40 ms
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    service::run(core.clone(), config, incoming, shutdown).await?;
    stopped(core).await
}

/// Opens the store of `config` (off the async threads: sled reads its log).
pub async fn open(config: &Config) -> Result<Arc<Core>, Error> {
    let (dir, lease, clock) = (config.data_dir.clone(), config.lease, config.clock.clone());
    tokio::task::spawn_blocking(move || Core::open_with_clock(&dir, lease, clock)).await?
}

/// Closes the store of a coordinator that has stopped serving (or, in `cubefleet run`, whose
/// in-process callers have stopped): no change after this, the store flushed with a summary
/// that makes the next open quick ([`Core::close`]).
pub async fn stopped(core: Arc<Core>) -> Result<(), Error> {
    tokio::task::spawn_blocking(move || core.close()).await??;
    tracing::info!("coordinator stopped; store flushed");
    Ok(())
}
