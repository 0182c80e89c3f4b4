//! `cubefleet coordinator`: serve the job system over gRPC on a sled store, and (with `--http`)
//! the status page and Prometheus metrics on a second port.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::process::{runtime, shutdown_signal, write_addr_file};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// gRPC address to listen on.
    #[arg(long, default_value = "127.0.0.1:7700")]
    listen: String,
    /// Directory of the sled store.
    #[arg(long, default_value = "cubefleet-data")]
    data: PathBuf,
    /// Bearer token of both roles, for clients and workers alike; with --http, the status page
    /// and /api/* need it (or a client token) too (Bearer, or HTTP Basic with the token as
    /// password); /metrics does not. Empty is refused: leave every token flag out to run
    /// without authentication.
    #[arg(long, env = "CUBEFLEET_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A client credential (submit, status, results, cancel its own batches, lookup, the
    /// status page; never Workers/*, never revoke), as SECRET or NAME:SECRET; may be given
    /// several times.
    #[arg(long, value_name = "[NAME:]SECRET", hide_env_values = true)]
    client_token: Vec<String>,
    /// A worker credential (register, lease, heartbeat, complete, release; never Batches/*), as
    /// SECRET or NAME:SECRET; its name is what results show as `worker` and what `revoke`
    /// takes (a bare secret's name is derived from it and logged at start); may be given
    /// several times.
    #[arg(long, value_name = "[NAME:]SECRET", hide_env_values = true)]
    worker_token: Vec<String>,
    /// An admin credential (what a client may, cancel any batch, and revoke), as SECRET or
    /// NAME:SECRET; may be given several times.
    #[arg(long, value_name = "[NAME:]SECRET", hide_env_values = true)]
    admin_token: Vec<String>,
    /// A file of credentials, one per line: `NAME ROLE SECRET` (ROLE client, worker, both or
    /// admin; `#` comments).
    #[arg(long, value_name = "FILE")]
    tokens_file: Option<PathBuf>,
    /// TLS certificate (PEM); needs --tls-key.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM); needs --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Seconds a lease lasts without a heartbeat (at least 1).
    #[arg(long, default_value_t = cubefleet_coordinator::DEFAULT_LEASE.as_secs_f64(), value_parser = super::flags::lease)]
    lease: f64,
    /// HTTP address of the status page (`/`) and Prometheus metrics (`/metrics`), e.g.
    /// 0.0.0.0:7780 (port 0: any free port, logged); none when absent. With --tls-cert it
    /// serves HTTPS with the same certificate and key.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Once listening, write the addresses bound to this file, one a line: `grpc ADDR` and
    /// (with --http) `http ADDR`; for scripts that listen on port 0.
    #[arg(long, value_name = "FILE")]
    addr_file: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async move {
        let mut config = cubefleet_coordinator::Config::new(&args.data);
        config.token = args.token.clone();
        let file = match &args.tokens_file {
            Some(path) => Some(std::fs::read_to_string(path).map_err(|e| {
                anyhow::anyhow!("--tokens-file {}: {e}", path.display())
            })?),
            None => None,
        };
        config.credentials = cubefleet_coordinator::credentials::with_admins(
            &args.client_token,
            &args.worker_token,
            &args.admin_token,
            file.as_deref(),
        )?;
        // refused before anything starts: an empty secret, a name or secret given twice
        let credentials = std::sync::Arc::new(config.credentials()?);
        for c in credentials.unnamed() {
            tracing::info!(credential = %c.name, role = ?c.role,
                "a credential given without a name goes by this one (results, logs, revoke)");
        }
        config.tls = args.tls_cert.clone().zip(args.tls_key.clone());
        config.lease = Duration::from_secs_f64(args.lease);
        let listener = tokio::net::TcpListener::bind(&args.listen).await?;
        let http = match &args.http {
            Some(addr) => Some(
                tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| anyhow::anyhow!("--http {addr}: {e}"))?,
            ),
            None => None,
        };
        tracing::info!(listen = %listener.local_addr()?, data = %args.data.display(), "coordinator starting");
        let shutdown = CancellationToken::new();
        let signal = shutdown.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            tracing::info!("shutting down: no new work, flushing");
            signal.cancel();
        });
        // open the store once; gRPC and the HTTP port share it
        let dir = config.data_dir.clone();
        let lease = config.lease;
        let core = tokio::task::spawn_blocking(move || {
            cubefleet_coordinator::Core::open(&dir, lease)
        })
        .await??;
        if let Some(path) = &args.addr_file {
            let mut addrs = vec![("grpc", listener.local_addr()?)];
            if let Some(l) = &http {
                addrs.push(("http", l.local_addr()?));
            }
            write_addr_file(path, &addrs)?;
        }
        let http_task = match http {
            Some(l) => {
                // with --tls-cert the page is HTTPS with gRPC's certificate and key, so the
                // secret a browser sends for it never crosses the network in clear
                let tls = match &config.tls {
                    Some((cert, key)) => Some(cubefleet_coordinator::http::HttpTls::load(cert, key)?),
                    None => None,
                };
                let scheme = if tls.is_some() { "https" } else { "http" };
                tracing::info!(http = %l.local_addr()?, scheme, "status page and /metrics listening");
                if tls.is_none() && !credentials.is_open() {
                    tracing::warn!(
                        "the status page on --http asks for a client secret over plain HTTP, which \
                         anyone on the network path can read: give --tls-cert and --tls-key to \
                         serve it over HTTPS, or keep --http on a private address"
                    );
                }
                let options = cubefleet_coordinator::http::HttpOptions {
                    tls,
                    transport: config.transport.clone(),
                };
                let (core, stop) = (core.clone(), shutdown.clone());
                let credentials = credentials.clone();
                Some(tokio::spawn(async move {
                    let served = cubefleet_coordinator::http::serve_http_options(
                        core, l, credentials, options, stop,
                    );
                    if let Err(e) = served.await {
                        tracing::error!(error = %e, "HTTP port failed");
                    }
                }))
            }
            None => None,
        };
        let served = cubefleet_coordinator::serve_core(core, config, listener, shutdown.clone()).await;
        shutdown.cancel();
        if let Some(t) = http_task {
            let _ = t.await;
        }
        served?;
        Ok(ExitCode::SUCCESS)
    })
}
