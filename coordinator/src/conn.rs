//! The transport's bounds, below gRPC and HTTP: how many connections each port holds open at
//! once, and how long an accepted connection may stay silent. Every figure is in
//! [`crate::limits`] (its table says what a caller gets); [`Transport`] carries them, so that
//! tests can shorten them.
//!
//! A connection is admitted by a [`Gate`] (a count of the open ones; past the most, a new
//! connection is closed at once) and wrapped in a [`Guarded`] stream that holds its place in
//! the gate until it closes and fails its reads once the connection has sent fewer than
//! [`FIRST_BYTES`] bytes within the silence timeout (a raw TCP connection that never speaks,
//! or one that sends a byte and stops). Beyond the first bytes, gRPC's HTTP/2 keepalive, the
//! TLS handshake's timeout and HTTP/1's header timeout take over (see `service::run` and
//! `http`). A gate may also close its connections when told to ([`Gate::closing_on`]): a
//! stopping coordinator does so once the calls in flight had [`Transport::stop_grace`] to end,
//! so a caller that never reads its stream cannot hold the stop (and the store's flush) up.

use std::future::Future;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::error::Error;
use crate::limits;

/// Bytes a new connection must send within the silence timeout: the length of HTTP/2's client
/// preface (`PRI * HTTP/2.0...`); a TLS ClientHello and an HTTP/1 request line are longer.
pub const FIRST_BYTES: usize = 24;

/// The transport's bounds of one coordinator (defaults: the figures of [`crate::limits`]).
#[derive(Clone, Debug)]
pub struct Transport {
    /// Most gRPC connections open at once ([`limits::MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// Most HTTP connections (status page, `/metrics`) open at once
    /// ([`limits::MAX_HTTP_CONNECTIONS`]).
    pub max_http_connections: usize,
    /// How long a new connection may take to send its first [`FIRST_BYTES`] bytes, and a TLS
    /// handshake to end ([`limits::SILENT_CONNECTION`]).
    pub silent: Duration,
    /// How long the HTTP port waits for a request's headers, also for the next request of a
    /// kept-alive connection ([`limits::HTTP_HEADER_TIMEOUT`]).
    pub http_header: Duration,
    /// How often gRPC pings a connection ([`limits::KEEPALIVE_INTERVAL`]).
    pub keepalive_interval: Duration,
    /// How long gRPC waits for a ping's answer before it closes the connection
    /// ([`limits::KEEPALIVE_TIMEOUT`]).
    pub keepalive_timeout: Duration,
    /// After how long gRPC asks a connection to go away (GOAWAY: the calls in flight end,
    /// the client opens a new one for the next), so an idle connection is held at most this
    /// long ([`limits::MAX_CONNECTION_AGE`]).
    pub max_connection_age: Duration,
    /// Most calls in flight on one gRPC connection ([`limits::MAX_STREAMS_PER_CONNECTION`]).
    pub max_streams_per_connection: u32,
    /// Most `WatchBatch` streams one credential holds open ([`limits::MAX_WATCHES`]).
    pub max_watches: usize,
    /// Most `StreamResults` streams one credential holds open
    /// ([`limits::MAX_RESULT_STREAMS`]).
    pub max_result_streams: usize,
    /// How long a stopping coordinator lets the gRPC calls in flight end before it closes
    /// their connections ([`limits::STOP_GRACE`]).
    pub stop_grace: Duration,
}

impl Default for Transport {
    fn default() -> Transport {
        Transport {
            max_connections: limits::MAX_CONNECTIONS,
            max_http_connections: limits::MAX_HTTP_CONNECTIONS,
            silent: limits::SILENT_CONNECTION,
            http_header: limits::HTTP_HEADER_TIMEOUT,
            keepalive_interval: limits::KEEPALIVE_INTERVAL,
            keepalive_timeout: limits::KEEPALIVE_TIMEOUT,
            max_connection_age: limits::MAX_CONNECTION_AGE,
            max_streams_per_connection: limits::MAX_STREAMS_PER_CONNECTION,
            max_watches: limits::MAX_WATCHES,
            max_result_streams: limits::MAX_RESULT_STREAMS,
            stop_grace: limits::STOP_GRACE,
        }
    }
}

/// The open connections of one port, at most a set number: a connection is admitted with a
/// place ([`Gate::admit`]) that it gives back when it closes.
#[derive(Clone, Debug)]
pub(crate) struct Gate {
    /// One permit per connection that may still open.
    places: Arc<Semaphore>,
    /// The most, for the log.
    most: usize,
    /// The port's name, for the log (`gRPC`, `HTTP`).
    port: &'static str,
    /// When a refusal was last logged (milliseconds since `start`), so a flood logs once
    /// every few seconds.
    logged: Arc<AtomicU64>,
    /// The origin of `logged`.
    start: Instant,
    /// Cancelled to close every connection of the gate.
    close: Option<CancellationToken>,
}

/// How often at most a gate logs that it refused connections.
const LOG_REFUSALS_EVERY: Duration = Duration::from_secs(10);

impl Gate {
    /// A gate of `most` connections for the port named `port`.
    pub(crate) fn new(most: usize, port: &'static str) -> Gate {
        Gate {
            places: Arc::new(Semaphore::new(most)),
            most,
            port,
            logged: Arc::new(AtomicU64::new(0)),
            start: Instant::now(),
            close: None,
        }
    }

    /// The gate, whose connections fail their reads (so their server closes them) once
    /// `close` is cancelled.
    pub(crate) fn closing_on(self, close: CancellationToken) -> Gate {
        Gate {
            close: Some(close),
            ..self
        }
    }

    /// A place for a new connection, or None when `most` are open (the caller closes it; the
    /// refusal is logged at most every [`LOG_REFUSALS_EVERY`]).
    pub(crate) fn admit(&self) -> Option<OwnedSemaphorePermit> {
        let place = self.places.clone().try_acquire_owned().ok();
        if place.is_none() {
            let now = self.start.elapsed().as_millis() as u64;
            let last = self.logged.load(Ordering::Relaxed);
            let due =
                last == 0 || now.saturating_sub(last) >= LOG_REFUSALS_EVERY.as_millis() as u64;
            if due
                && self
                    .logged
                    .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                tracing::warn!(
                    port = self.port,
                    most = self.most,
                    "a connection was closed at once: the port holds the most connections it \
                     keeps open (limits in coordinator/src/limits.rs)"
                );
            }
        }
        place
    }

    /// Admits `io` (None: the gate is full; `io` is dropped, which closes it) and guards it
    /// with the silence timeout `silent`.
    pub(crate) fn guard<IO>(&self, io: IO, silent: Duration) -> Option<Guarded<IO>> {
        let place = self.admit()?;
        Some(Guarded {
            inner: io,
            _place: place,
            deadline: Some(Box::pin(tokio::time::sleep(silent))),
            heard: 0,
            close: self.close.clone().map(|c| Box::pin(c.cancelled_owned())),
        })
    }
}

/// A connection admitted by a [`Gate`]: holds its place until dropped, and fails its reads
/// with `TimedOut` once the deadline passes before [`FIRST_BYTES`] bytes came in.
#[derive(Debug)]
pub(crate) struct Guarded<IO> {
    /// The connection.
    inner: IO,
    /// Its place in the gate, given back when the connection is dropped.
    _place: OwnedSemaphorePermit,
    /// When the first bytes must have come; None once they have.
    deadline: Option<Pin<Box<Sleep>>>,
    /// Bytes read while the deadline runs.
    heard: usize,
    /// Ready once the gate closes its connections.
    close: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
}

impl<IO: AsyncRead + Unpin> AsyncRead for Guarded<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if this.deadline.is_some() {
                    this.heard += buf.filled().len() - before;
                    if this.heard >= FIRST_BYTES {
                        this.deadline = None;
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                if let Some(close) = this.close.as_mut() {
                    if close.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::ConnectionAborted,
                            "the server is stopping",
                        )));
                    }
                }
                if let Some(deadline) = this.deadline.as_mut() {
                    if deadline.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the connection sent too little within the silence timeout",
                        )));
                    }
                }
                Poll::Pending
            }
            failed => failed,
        }
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Guarded<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl<IO: tonic::transport::server::Connected> tonic::transport::server::Connected for Guarded<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

/// A TLS acceptor for the HTTP port from the certificate chain and key of `--tls-cert` and
/// `--tls-key` (PEM; the files gRPC serves), offering HTTP/1.1.
pub(crate) fn tls_acceptor(cert: &Path, key: &Path) -> Result<tokio_rustls::TlsAcceptor, Error> {
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let bad = |file: &Path, what: &str| {
        Error::Io(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {what}", file.display()),
        ))
    };
    let certs = CertificateDer::pem_file_iter(cert)
        .map_err(|e| bad(cert, &format!("no PEM certificate read: {e}")))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(cert, &format!("a certificate does not read: {e}")))?;
    if certs.is_empty() {
        return Err(bad(cert, "no certificate in it"));
    }
    let key_der = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| bad(key, &format!("no PEM private key read: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Internal(format!("TLS: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key_der)
        .map_err(|e| {
            bad(
                cert,
                &format!("the certificate and key do not go together: {e}"),
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A silent connection's read fails after the deadline; one that sent its first bytes
    /// is read as usual afterwards; a full gate refuses until a place is given back. In
    /// paused time: the deadlines are exact and take no time.
    #[tokio::test(start_paused = true)]
    async fn the_gate_counts_places_and_the_guard_times_silence() {
        let gate = Gate::new(2, "test");
        let (quiet, _quiet_peer) = tokio::io::duplex(64);
        let (talker, mut talker_peer) = tokio::io::duplex(64);
        let mut quiet = gate
            .guard(quiet, Duration::from_millis(50))
            .expect("a place");
        let mut talker = gate
            .guard(talker, Duration::from_millis(50))
            .expect("a place");
        let (third, _p) = tokio::io::duplex(64);
        assert!(gate.guard(third, Duration::from_secs(1)).is_none(), "full");
        let mut buf = [0u8; 64];
        let e = quiet.read(&mut buf).await.expect_err("silent");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        talker_peer
            .write_all(&[7u8; FIRST_BYTES])
            .await
            .expect("write");
        assert_eq!(talker.read(&mut buf).await.expect("read"), FIRST_BYTES);
        // past the silence deadline: the talker spoke in time, and is kept
        tokio::time::advance(Duration::from_millis(80)).await;
        talker_peer.write_all(b"later").await.expect("write");
        assert_eq!(talker.read(&mut buf).await.expect("read"), 5);
        drop(quiet);
        let (fourth, _p) = tokio::io::duplex(64);
        assert!(
            gate.guard(fourth, Duration::from_secs(1)).is_some(),
            "a place again"
        );
    }
}
