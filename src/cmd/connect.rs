//! What every command that talks to a coordinator shares: where it is and the token.

use cubefleet_proto::client::{CallError, Client};

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
