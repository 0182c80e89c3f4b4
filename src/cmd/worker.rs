//! `cubefleet worker`: join a coordinator and solve what it hands out until stopped.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use cubefleet_proto::client::{CallError, ConnectError};
use cubefleet_worker::metrics::{Metered, WorkerMetrics};
use cubefleet_worker::remote::GrpcCoordinator;
use cubefleet_worker::runtime::{self, Backoff, RuntimeConfig};
use tokio_util::sync::CancellationToken;

use super::connect::ConnectArgs;
use super::process::{runtime, shutdown_signal, write_addr_file};
use super::TablesArgs;

/// Heartbeats per lease of the coordinator joined: one or two may be lost before a lease
/// expires.
const HEARTBEATS_PER_LEASE: u32 = 4;

/// The shortest time between heartbeats, whatever the lease (a coordinator with a lease of a
/// second is not beaten every 250 ms).
const MIN_HEARTBEAT: Duration = Duration::from_millis(200);

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    connect: ConnectArgs,
    #[command(flatten)]
    tables: TablesArgs,
    /// Search threads (default: all cores).
    #[arg(long, value_parser = super::flags::threads)]
    threads: Option<usize>,
    /// Seconds running jobs get to finish after SIGTERM before they are handed back.
    #[arg(long, default_value_t = runtime::DEFAULT_GRACE.as_secs_f64(), value_parser = super::flags::grace)]
    grace: f64,
    /// A name for the coordinator's logs and status page.
    #[arg(long)]
    name: Option<String>,
    /// HTTP address of this worker's Prometheus metrics (`/metrics`), e.g. 0.0.0.0:7781; none
    /// when absent.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http, once listening, write the address bound to this file as `http ADDR`; for
    /// scripts that listen on port 0.
    #[arg(long, value_name = "FILE", requires = "http")]
    addr_file: Option<PathBuf>,
}

/// True when `e` (a connection's or registration's failure) needs a setting changed before
/// any retry can succeed ([`CallError::needs_a_change`]).
fn needs_a_change(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<CallError>()
            .or_else(|| match c.downcast_ref::<ConnectError>() {
                Some(ConnectError::Unreachable(u)) => Some(u),
                _ => None,
            })
            .is_some_and(CallError::needs_a_change)
            || matches!(
                c.downcast_ref::<ConnectError>(),
                Some(ConnectError::Invalid(_))
            )
    })
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let start = std::time::Instant::now();
    let tables = Arc::new(args.tables.load()?);
    let load_time = start.elapsed();
    tracing::info!(seconds = load_time.as_secs_f64(), "tables mapped");
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let metrics = WorkerMetrics::new(threads, load_time);
    runtime()?.block_on(async move {
        let shutdown = CancellationToken::new();
        if let Some(addr) = &args.http {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| anyhow::anyhow!("--http {addr}: {e}"))?;
            tracing::info!(http = %l.local_addr()?, "/metrics listening");
            if let Some(path) = &args.addr_file {
                write_addr_file(path, &[("http", l.local_addr()?)])?;
            }
            // up until the process ends, so the drain after SIGTERM shows too
            let (m, stop) = (metrics.clone(), CancellationToken::new());
            let registry = std::sync::Arc::new(cubefleet_worker::metrics::registry(&m));
            let render = move || {
                cubefleet_coordinator::metrics::render(&registry)
                    .unwrap_or_else(|e| format!("# {e}\n"))
            };
            tokio::spawn(async move {
                if let Err(e) = cubefleet_coordinator::http::serve_metrics(l, render, stop).await {
                    tracing::error!(error = %e, "HTTP port failed");
                }
            });
        }
        let signal = shutdown.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            tracing::info!("shutting down: no new leases, finishing held jobs");
            signal.cancel();
        });
        let name = args.name.clone().unwrap_or_else(|| {
            format!(
                "{}-{}",
                std::env::var("HOSTNAME").unwrap_or_else(|_| "worker".into()),
                std::process::id()
            )
        });
        // reach the coordinator, retrying with backoff (it may start after us)
        let mut backoff = Backoff::default();
        let coordinator = loop {
            let attempt = async {
                let client = args.connect.connect().await?;
                let c = GrpcCoordinator::register(
                    client,
                    &args.connect.coordinator,
                    name.clone(),
                    threads as u32,
                    tables.fingerprint(),
                )
                .await?;
                anyhow::Ok(c)
            };
            match attempt.await.map_err(|e| args.connect.explain(e)) {
                Ok(c) => break c,
                // refused for good (a wrong token, revoked, a wrong role, a coordinator too
                // old, a value out of range): no retry helps
                Err(e) if needs_a_change(&e) => {
                    return Err(e.context(format!(
                        "the coordinator at {} refused this worker",
                        args.connect.coordinator
                    )));
                }
                Err(e) => {
                    let wait = backoff.step();
                    tracing::warn!("{e:#}; retrying in {:.1} s", wait.as_secs_f64());
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = shutdown.cancelled() => return Ok(ExitCode::SUCCESS),
                    }
                }
            }
        };
        tracing::info!(session = coordinator.session(), threads, "registered");
        let config = RuntimeConfig {
            threads,
            heartbeat: (coordinator.lease_duration() / HEARTBEATS_PER_LEASE).max(MIN_HEARTBEAT),
            grace: Duration::from_secs_f64(args.grace.max(0.0)),
            ..RuntimeConfig::default()
        };
        let coordinator = Metered::new(coordinator, metrics);
        let stats = runtime::run(Arc::new(coordinator), tables, config, shutdown).await;
        tracing::info!(
            leased = stats.leased,
            completed = stats.completed,
            released = stats.released,
            search_panics = stats.search_panics,
            "worker stopped"
        );
        Ok(ExitCode::SUCCESS)
    })
}
