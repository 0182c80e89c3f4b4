//! A typed client for both services, with the bearer token on every call.

use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

use crate::batches_client::BatchesClient;
use crate::workers_client::WorkersClient;

/// Adds `authorization: Bearer <token>` to every request when a token is set.
#[derive(Clone, Debug)]
pub struct Token(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for Token {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

/// The channel type of the clients.
pub type AuthChannel = InterceptedService<Channel, Token>;

/// Clients of both services over one connection.
#[derive(Clone, Debug)]
pub struct Client {
    /// The client-facing service.
    pub batches: BatchesClient<AuthChannel>,
    /// The worker-facing service.
    pub workers: WorkersClient<AuthChannel>,
}

/// Why a connection could not be made.
#[derive(Debug)]
pub enum ConnectError {
    /// The URL or token is malformed.
    Invalid(String),
    /// The connection failed.
    Transport(tonic::transport::Error),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Invalid(m) => f.write_str(m),
            ConnectError::Transport(e) => write!(f, "cannot reach the coordinator: {e}"),
        }
    }
}

impl std::error::Error for ConnectError {}

/// Time between HTTP/2 pings on an idle connection: a connection a NAT or a load balancer
/// dropped silently is noticed within it, well before a worker's lease (30 s by default)
/// could expire unnoticed.
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(30);

impl Client {
    /// Connects to `url` (`http://host:port`, or `https://` trusting the system's roots and
    /// the CA certificate in the PEM file named by `$CUBEFLEET_TLS_CA`, if set) with an
    /// optional bearer token.
    pub async fn connect(url: &str, token: Option<&str>) -> Result<Client, ConnectError> {
        let ca = match std::env::var_os("CUBEFLEET_TLS_CA") {
            Some(path) if url.starts_with("https://") => Some(
                std::fs::read(&path)
                    .map_err(|e| ConnectError::Invalid(format!("CUBEFLEET_TLS_CA: {e}")))?,
            ),
            _ => None,
        };
        Client::connect_with_ca(url, token, ca.as_deref()).await
    }

    /// Like [`Client::connect`], trusting the CA certificate `ca_pem` (PEM) for `https://`
    /// instead of reading `$CUBEFLEET_TLS_CA`. The system's root certificates are trusted
    /// too, so a coordinator with a publicly issued certificate needs no CA file.
    pub async fn connect_with_ca(
        url: &str,
        token: Option<&str>,
        ca_pem: Option<&[u8]>,
    ) -> Result<Client, ConnectError> {
        let mut endpoint = Endpoint::from_shared(url.to_string())
            .map_err(|e| ConnectError::Invalid(format!("bad coordinator URL {url}: {e}")))?
            .tcp_nodelay(true)
            .http2_keep_alive_interval(KEEP_ALIVE);
        if url.starts_with("https://") {
            // the system's roots (a publicly issued certificate), plus the given CA if any
            let mut tls = ClientTlsConfig::new().with_native_roots();
            if let Some(pem) = ca_pem {
                tls = tls.ca_certificate(tonic::transport::Certificate::from_pem(pem));
            }
            endpoint = endpoint.tls_config(tls).map_err(ConnectError::Transport)?;
        }
        let channel = endpoint.connect().await.map_err(ConnectError::Transport)?;
        Client::over(channel, token)
    }

    /// Clients of both services over `channel`, with the bearer `token` if any.
    fn over(channel: Channel, token: Option<&str>) -> Result<Client, ConnectError> {
        let token = match token.filter(|t| !t.is_empty()) {
            Some(t) => Some(format!("Bearer {t}").parse().map_err(|_| {
                ConnectError::Invalid("the token has characters a header cannot carry".into())
            })?),
            None => None,
        };
        let auth = Token(token);
        Ok(Client {
            batches: BatchesClient::with_interceptor(channel.clone(), auth.clone())
                .max_decoding_message_size(crate::MAX_RESPONSE_BYTES),
            workers: WorkersClient::with_interceptor(channel, auth)
                .max_decoding_message_size(crate::MAX_RESPONSE_BYTES),
        })
    }
}
