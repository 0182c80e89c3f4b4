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
    /// The coordinator at the URL could not be reached, for a cause named.
    Unreachable(CallError),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Invalid(m) => f.write_str(m),
            ConnectError::Unreachable(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ConnectError {}

/// What went wrong between this program and a coordinator, as a user can act on it: each
/// names what to check or do. Made from a connection's or a call's error by [`Cause::of`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Nothing listens at the address (the connection was refused).
    NotListening,
    /// The host name does not resolve.
    NameNotResolved,
    /// No answer within [`CONNECT_TIMEOUT`] (a wrong address, or a firewall dropping packets).
    NoAnswer,
    /// `https://`: the coordinator's certificate is not signed by a trusted CA.
    CertificateUntrusted,
    /// `https://`: the certificate does not name the URL's host.
    CertificateWrongName,
    /// `https://`: the certificate has expired or is not valid yet.
    CertificateExpired,
    /// `https://` to a port that speaks plain text (a coordinator without `--tls-cert`).
    TlsToPlainPort,
    /// `http://` to a port that speaks TLS (a coordinator with `--tls-cert`).
    PlainTextToTlsPort,
    /// The coordinator refused the token, or wanted one (its reason).
    CredentialRefused(String),
    /// The credential may not make this call, or was revoked (the coordinator's reason).
    NotPermitted(String),
    /// The coordinator is older than this program: it does not know a call or a value.
    ProtocolTooOld(String),
    /// Something answers HTTP at the address, but not gRPC (the status page's `--http`
    /// port, another server).
    NotGrpc,
    /// The coordinator closed the connection at once (its innermost reason): what a TLS port
    /// does to plain text when it answers before the first request is read.
    Closed(String),
    /// The connection broke, or failed otherwise (its innermost reason).
    Connection(String),
    /// The coordinator answered and refused the call (its reason: a batch not found, a
    /// value out of range); nothing about the connection.
    Refused(String),
}

/// The longest a connection attempt waits for the coordinator's host to answer.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl Cause {
    /// The cause of a connection's or call's error `e`: a [`tonic::Status`] by its code (and,
    /// for a transport failure, its source), anything else by its chain of sources (the
    /// innermost I/O, name-resolution and TLS errors).
    pub fn of(e: &(dyn std::error::Error + 'static)) -> Cause {
        if let Some(s) = e.downcast_ref::<Status>() {
            return Cause::of_status(s);
        }
        Cause::of_chain(e)
    }

    /// The cause a call's `status` names.
    pub fn of_status(s: &Status) -> Cause {
        use tonic::Code;
        let message = || {
            if s.message().is_empty() {
                s.code().description().to_string()
            } else {
                s.message().to_string()
            }
        };
        if s.message().contains("grpc-status header missing") {
            return Cause::NotGrpc;
        }
        match s.code() {
            Code::Unauthenticated => Cause::CredentialRefused(message()),
            Code::PermissionDenied => Cause::NotPermitted(message()),
            Code::Unimplemented => Cause::ProtocolTooOld(message()),
            // a transport failure (tonic makes these from the connection's errors)
            Code::Unavailable | Code::Unknown | Code::Internal | Code::Cancelled => {
                match std::error::Error::source(s) {
                    Some(src) => Cause::of_chain(src),
                    None if s.message().contains("h2 protocol error")
                        || s.message().contains("transport error") =>
                    {
                        Cause::of_text(s.message()).unwrap_or(Cause::Connection(message()))
                    }
                    None if s.code() == Code::Unavailable => Cause::Connection(message()),
                    None => Cause::Refused(message()),
                }
            }
            _ => Cause::Refused(message()),
        }
    }

    /// The cause named by the innermost recognised error of `e`'s chain of sources.
    fn of_chain(e: &(dyn std::error::Error + 'static)) -> Cause {
        let mut chain = Vec::new();
        let mut next = Some(e);
        while let Some(err) = next {
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                match io.kind() {
                    std::io::ErrorKind::ConnectionRefused => return Cause::NotListening,
                    std::io::ErrorKind::TimedOut => return Cause::NoAnswer,
                    _ => {}
                }
            }
            chain.push(err.to_string());
            next = err.source();
        }
        let text = chain.join(": ");
        // the innermost reason says most (the outer ones are "transport error")
        let innermost = chain.last().cloned().unwrap_or_default();
        Cause::of_text(&text).unwrap_or_else(|| {
            let lower = text.to_lowercase();
            if [
                "broken pipe",
                "connection reset",
                "connection closed",
                "stream closed",
            ]
            .iter()
            .any(|c| lower.contains(c))
            {
                Cause::Closed(innermost)
            } else {
                Cause::Connection(innermost)
            }
        })
    }

    /// The cause the libraries' messages name (hyper's, h2's and rustls' texts, which are
    /// what their error types show): None when none is recognised.
    fn of_text(text: &str) -> Option<Cause> {
        let has = |needle: &str| text.contains(needle);
        Some(if has("dns error") || has("failed to lookup address") {
            Cause::NameNotResolved
        } else if has("Connection refused") {
            Cause::NotListening
        } else if has("timed out") || has("Timeout expired") || has("deadline has elapsed") {
            Cause::NoAnswer
        } else if has("UnknownIssuer") || has("BadSignature") || has("UnknownRevocationStatus") {
            Cause::CertificateUntrusted
        } else if has("not valid for name") || has("NotValidForName") {
            Cause::CertificateWrongName
        } else if has("certificate expired") || has("not valid yet") || has("Expired") {
            Cause::CertificateExpired
        } else if has("corrupt message") || has("InvalidContentType") || has("record overflow") {
            Cause::TlsToPlainPort
        } else if has("frame with invalid size")
            || has("invalid HTTP/2 preface")
            || has("FRAME_SIZE_ERROR")
        {
            Cause::PlainTextToTlsPort
        } else {
            return None;
        })
    }

    /// What the cause means and what to do, for the coordinator at `url`.
    fn explain(&self, url: &str) -> String {
        let host = url
            .split("://")
            .nth(1)
            .unwrap_or(url)
            .split(['/', ':'])
            .next()
            .unwrap_or(url);
        let https = url.replacen("http://", "https://", 1);
        let http = url.replacen("https://", "http://", 1);
        match self {
            Cause::NotListening => format!(
                "cannot reach the coordinator at {url}: nothing is listening there (connection \
                 refused); start `cubefleet coordinator --listen ADDR` or check the port"
            ),
            Cause::NameNotResolved => format!(
                "cannot reach the coordinator at {url}: the host name {host} does not resolve; \
                 check its spelling or use an IP address"
            ),
            Cause::NoAnswer => format!(
                "cannot reach the coordinator at {url}: no answer within {} s; check the \
                 address and that a firewall lets the port through",
                CONNECT_TIMEOUT.as_secs()
            ),
            Cause::CertificateUntrusted => format!(
                "cannot reach the coordinator at {url}: its TLS certificate is not trusted \
                 (not signed by a known CA); give the CA's certificate in CUBEFLEET_TLS_CA=ca.pem \
                 (`cubefleet certs` makes one)"
            ),
            Cause::CertificateWrongName => format!(
                "cannot reach the coordinator at {url}: its TLS certificate does not name \
                 {host}; use a name the certificate has, or make one for {host} \
                 (`cubefleet certs --name {host}`)"
            ),
            Cause::CertificateExpired => format!(
                "cannot reach the coordinator at {url}: its TLS certificate has expired or is \
                 not valid yet; renew it (and check the clocks)"
            ),
            Cause::TlsToPlainPort => format!(
                "cannot reach the coordinator at {url}: TLS was refused, the port speaks plain \
                 text (a coordinator without --tls-cert); use {http}"
            ),
            Cause::PlainTextToTlsPort => format!(
                "cannot reach the coordinator at {url}: the port speaks TLS (a coordinator with \
                 --tls-cert); use {https}"
            ),
            Cause::CredentialRefused(why) => format!(
                "the coordinator at {url} refused the credential: {why}; give the right \
                 --token (or CUBEFLEET_TOKEN)"
            ),
            Cause::NotPermitted(why) => format!("the coordinator at {url} refused the call: {why}"),
            Cause::ProtocolTooOld(why) => format!(
                "the coordinator at {url} is older than this cubefleet ({why}): upgrade the \
                 coordinator"
            ),
            Cause::NotGrpc => format!(
                "the server at {url} answers HTTP but is not a coordinator's gRPC port (the \
                 status page's --http port?); use the port of the coordinator's --listen (7700 \
                 by default)"
            ),
            Cause::Closed(why) if url.starts_with("http://") => format!(
                "the coordinator at {url} closed the connection ({why}); if it serves TLS (a \
                 coordinator with --tls-cert), use {https}"
            ),
            Cause::Closed(why) => format!("the coordinator at {url} closed the connection ({why})"),
            Cause::Connection(why) => {
                format!("cannot reach the coordinator at {url}: the connection failed: {why}")
            }
            Cause::Refused(why) => why.clone(),
        }
    }
}

/// A connection's or call's failure with the coordinator it was for: shown as the
/// [`Cause`]'s meaning for that URL (never a library's boilerplate).
#[derive(Clone, Debug)]
pub struct CallError {
    /// The coordinator's URL as given.
    pub url: String,
    /// What went wrong.
    pub cause: Cause,
    /// The gRPC code of a call's failure (`Unavailable` for a connection's).
    pub code: tonic::Code,
}

impl CallError {
    /// The failure of a call to the coordinator at `url`.
    pub fn from_status(url: &str, status: &Status) -> CallError {
        CallError {
            url: url.to_string(),
            cause: Cause::of_status(status),
            code: status.code(),
        }
    }

    /// The failure of a connection to the coordinator at `url`.
    pub fn from_connect(url: &str, e: &(dyn std::error::Error + 'static)) -> CallError {
        CallError {
            url: url.to_string(),
            cause: Cause::of(e),
            code: tonic::Code::Unavailable,
        }
    }

    /// True when the coordinator could not be reached at all (a retry may help once it is
    /// up), false when it answered and refused.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self.cause,
            Cause::NotListening
                | Cause::NameNotResolved
                | Cause::NoAnswer
                | Cause::Closed(_)
                | Cause::Connection(_)
        )
    }
}

impl CallError {
    /// True when no retry can help until a setting changes: the credential was refused or
    /// may not make the call, the coordinator is too old, the port is not a coordinator's
    /// gRPC port, or it refused a value for good
    /// (`InvalidArgument`, `FailedPrecondition`). A worker stops then, naming the cause,
    /// instead of retrying forever.
    pub fn needs_a_change(&self) -> bool {
        match &self.cause {
            Cause::CredentialRefused(_)
            | Cause::NotPermitted(_)
            | Cause::ProtocolTooOld(_)
            | Cause::NotGrpc => true,
            Cause::Refused(_) => matches!(
                self.code,
                tonic::Code::InvalidArgument | tonic::Code::FailedPrecondition
            ),
            _ => false,
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.cause.explain(&self.url))
    }
}

impl std::error::Error for CallError {}

/// Time between HTTP/2 pings on an idle connection: a connection a NAT or a load balancer
/// dropped silently is noticed within it, well before a worker's lease (30 s by default)
/// could expire unnoticed.
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(30);

/// Refuses a URL that is not `http://HOST[:PORT]` or `https://HOST[:PORT]`, saying what to
/// write instead (a URL without its scheme is the commonest slip).
fn check_url(url: &str) -> Result<(), ConnectError> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    match rest {
        Some(r) if !r.is_empty() && !r.starts_with('/') && !r.starts_with(':') => Ok(()),
        Some(_) => Err(ConnectError::Invalid(format!(
            "bad coordinator URL {url:?}: it names no host (write http://HOST:7700)"
        ))),
        None if url.contains("://") => Err(ConnectError::Invalid(format!(
            "bad coordinator URL {url:?}: only http:// and https:// are spoken"
        ))),
        None => Err(ConnectError::Invalid(format!(
            "bad coordinator URL {url:?}: it needs its scheme: http://{url} (or https://{url} \
             for a coordinator with --tls-cert)"
        ))),
    }
}

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
        check_url(url)?;
        let mut endpoint = Endpoint::from_shared(url.to_string())
            .map_err(|e| ConnectError::Invalid(format!("bad coordinator URL {url}: {e}")))?
            .tcp_nodelay(true)
            .connect_timeout(CONNECT_TIMEOUT)
            .http2_keep_alive_interval(KEEP_ALIVE);
        if url.starts_with("https://") {
            // the system's roots (a publicly issued certificate), plus the given CA if any
            let mut tls = ClientTlsConfig::new().with_native_roots();
            if let Some(pem) = ca_pem {
                tls = tls.ca_certificate(tonic::transport::Certificate::from_pem(pem));
            }
            endpoint = endpoint
                .tls_config(tls)
                .map_err(|e| ConnectError::Invalid(format!("the TLS settings for {url}: {e}")))?;
        }
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| ConnectError::Unreachable(CallError::from_connect(url, &e)))?;
        Client::over(channel, token)
    }

    /// After submitting batch `batch_id` asking `asked`: reads the question the coordinator
    /// stored. A coordinator older than a field of the mode (a move set: protocol revision
    /// [`crate::question::MOVES_PROTOCOL`]; a target: [`crate::question::TARGET_PROTOCOL`])
    /// drops it and would search another question; then
    /// the batch is cancelled before more of it is searched, and the error says what to do.
    /// The batches service has no version exchange, so this read is how a client knows.
    pub async fn check_question_kept(
        &self,
        batch_id: &str,
        asked: &crate::Mode,
    ) -> Result<(), Status> {
        use crate::question::Question;
        let batch = crate::BatchRef {
            batch_id: batch_id.to_string(),
        };
        let stored = self
            .batches
            .clone()
            .get_batch(batch.clone())
            .await?
            .into_inner()
            .mode
            .unwrap_or_default();
        let asked = Question::from_wire(asked);
        let same = match (&asked, Question::from_wire(&stored)) {
            (Ok(a), Ok(s)) => *a == s,
            _ => false,
        };
        if same {
            return Ok(());
        }
        let cancelled = self.batches.clone().cancel_batch(batch).await.is_ok();
        Err(Status::failed_precondition(format!(
            "the coordinator stored batch {batch_id} with another question than the one asked \
             (it is older than a field of the mode, such as --moves or --to: upgrade it to \
             protocol revision {} or later); the batch was {}",
            asked.map_or(crate::PROTOCOL, |q| q
                .needs_protocol()
                .max(crate::question::MOVES_PROTOCOL)),
            if cancelled {
                "cancelled"
            } else {
                "not cancelled: cancel it"
            }
        )))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_without_its_scheme_is_refused_with_the_one_to_write() {
        let e = check_url("localhost:7700").unwrap_err().to_string();
        assert!(e.contains("http://localhost:7700"), "{e}");
        for bad in ["ftp://h:1", "http://", "https://:7700"] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        for good in [
            "http://h:7700",
            "https://h.example:7700",
            "http://[::1]:7700",
        ] {
            check_url(good).unwrap();
        }
    }

    #[test]
    fn the_libraries_messages_name_their_causes() {
        for (text, cause) in [
            (
                "dns error: failed to lookup address information: Name or service not known",
                Cause::NameNotResolved,
            ),
            (
                "invalid peer certificate: UnknownIssuer",
                Cause::CertificateUntrusted,
            ),
            (
                "invalid peer certificate: certificate not valid for name \"127.0.0.2\"",
                Cause::CertificateWrongName,
            ),
            (
                "received corrupt message of type InvalidContentType",
                Cause::TlsToPlainPort,
            ),
            (
                "connection error detected: frame with invalid size",
                Cause::PlainTextToTlsPort,
            ),
        ] {
            assert_eq!(Cause::of_text(text), Some(cause), "{text}");
        }
        assert_eq!(Cause::of_text("something else"), None);
    }

    #[test]
    fn a_call_s_refusal_is_its_reason_and_a_credential_s_names_the_url() {
        let url = "http://h:7700";
        let e = CallError::from_status(url, &Status::not_found("no batch b1"));
        assert_eq!(e.to_string(), "no batch b1");
        let e = CallError::from_status(url, &Status::unauthenticated("wrong bearer token"));
        assert!(e.to_string().contains(url), "{e}");
        assert!(e.to_string().contains("wrong bearer token"), "{e}");
        let e = CallError::from_status(
            url,
            &Status::unimplemented("grpc-status header missing, mapped from HTTP status code 404"),
        );
        assert_eq!(e.cause, Cause::NotGrpc);
        let e = CallError::from_status(url, &Status::unimplemented(""));
        assert!(e.to_string().contains("upgrade the coordinator"), "{e}");
        assert!(!e.to_string().contains("code:"), "{e}");
    }
}
