//! A coordinator served inside this process (`bench coordinator`).

use std::path::Path;

use cubefleet_proto::client::Client;
use tokio_util::sync::CancellationToken;

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
