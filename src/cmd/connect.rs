//! What every command that talks to a coordinator shares: where it is and the token.

use cubefleet_proto::client::Client;

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
