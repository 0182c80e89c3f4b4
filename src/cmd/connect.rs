//! What every command that talks to a coordinator shares: where it is and the token.

use std::path::Path;

use cubefleet_proto::client::{CallError, Client};
use tokio_util::sync::CancellationToken;

/// Where the coordinator is.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct ConnectArgs {
    /// Coordinator URL.
    #[arg(
        long,
        env = "CUBEFLEET_COORDINATOR",
        default_value = "http://127.0.0.1:7700"
    )]
    pub(crate) coordinator: String,
    /// Bearer token (when the coordinator requires one).
    #[arg(long, env = "CUBEFLEET_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
}

impl ConnectArgs {
    /// Connects once.
    pub(crate) async fn connect(&self) -> anyhow::Result<Client> {
        Ok(Client::connect(&self.coordinator, self.token.as_deref()).await?)
    }

    /// `e` with a call's gRPC failure ([`tonic::Status`]) told as what it means for this
    /// coordinator ([`CallError`]: the URL and the cause, never gRPC's boilerplate), under the
    /// same context lines; any other error as it is.
    pub(crate) fn explain(&self, e: anyhow::Error) -> anyhow::Error {
        let Some(status) = e.downcast_ref::<tonic::Status>() else {
            return e;
        };
        let plain = anyhow::Error::new(CallError::from_status(&self.coordinator, status));
        let context: Vec<String> = e
            .chain()
            .take_while(|c| !c.is::<tonic::Status>())
            .map(ToString::to_string)
            .collect();
        context
            .into_iter()
            .rev()
            .fold(plain, |err, line| err.context(line))
    }
}

/// Writes the addresses a process listens on to `path`, one a line as `NAME ADDR` (e.g.
/// `grpc 127.0.0.1:41237`), for scripts and tests that listen on port 0 and need to know the
/// port. The file appears whole (written beside, then renamed), once every listener is bound.
pub(crate) fn write_addr_file(
    path: &Path,
    addrs: &[(&str, std::net::SocketAddr)],
) -> anyhow::Result<()> {
    let text: String = addrs
        .iter()
        .map(|(name, a)| format!("{name} {a}\n"))
        .collect();
    let mut part = path.as_os_str().to_owned();
    part.push(".part");
    std::fs::write(&part, text)
        .and_then(|()| std::fs::rename(&part, path))
        .map_err(|e| anyhow::anyhow!("--addr-file {}: {e}", path.display()))
}

/// Resolves on ctrl-c or SIGTERM.
pub(crate) async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A multi-threaded runtime for a command.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// A coordinator served by this process over the store in a directory, and a client of it
/// (`bench coordinator`): the same gRPC code path as a cluster, over a loopback port.
pub(crate) struct Embedded {
    /// A client of the embedded coordinator.
    pub(crate) client: Client,
    /// Cancelled when the coordinator stops serving.
    pub(crate) shutdown: CancellationToken,
    server: tokio::task::JoinHandle<Result<(), cubefleet_coordinator::Error>>,
}

impl Embedded {
    /// Opens the store in `data`, serves it on `127.0.0.1:0` and connects (the listener is
    /// bound and the store open before the server starts, so one attempt is enough).
    pub(crate) async fn start(data: &Path) -> anyhow::Result<Embedded> {
        let shutdown = CancellationToken::new();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let config = cubefleet_coordinator::Config::new(data);
        let core = cubefleet_coordinator::open(&config).await?;
        let server = tokio::spawn(cubefleet_coordinator::serve_core(
            core.clone(),
            config,
            listener,
            shutdown.clone(),
        ));
        let client = Client::connect(&url, None).await?;
        Ok(Embedded {
            client,
            shutdown,
            server,
        })
    }

    /// Stops serving, flushes the store and waits until it is closed.
    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        Ok(self.server.await??)
    }
}
