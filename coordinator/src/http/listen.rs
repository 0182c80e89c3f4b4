//! The HTTP port's accept loop: HTTP/1.1 (hyper) over each admitted connection, with the
//! transport's bounds ([`crate::conn`]): at most so many connections open, a silent one
//! closed, a TLS handshake and each request's headers (also the wait for the next request of
//! a kept-alive connection) within their timeouts; over TLS (tokio-rustls) when an acceptor
//! is given. On `shutdown` it stops accepting, lets each connection finish the request in
//! flight, and waits for them a few seconds at most.

use std::pin::pin;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::conn::{Gate, Transport};

/// How long a stopping port waits for its connections' requests in flight.
const DRAIN: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `shutdown` is cancelled (see the module doc).
pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    tls: Option<tokio_rustls::TlsAcceptor>,
    bounds: &Transport,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let gate = Gate::new(bounds.max_http_connections, "HTTP");
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(bounds.http_header)
        .keep_alive(true);
    let mut connections = JoinSet::new();
    loop {
        let (tcp, _peer) = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // out of descriptors and the like: wait a moment rather than spin
                    tracing::debug!(error = %e, "HTTP accept");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        let _ = tcp.set_nodelay(true);
        let Some(io) = gate.guard(tcp, bounds.silent) else {
            continue;
        };
        let service = TowerToHyperService::new(router.clone());
        let (http, tls, stop, silent) =
            (http.clone(), tls.clone(), shutdown.clone(), bounds.silent);
        connections.spawn(async move {
            let served = match tls {
                None => {
                    let conn = http.serve_connection(TokioIo::new(io), service);
                    one(conn, stop).await
                }
                Some(tls) => match tokio::time::timeout(silent, tls.accept(io)).await {
                    Ok(Ok(io)) => {
                        let conn = http.serve_connection(TokioIo::new(io), service);
                        one(conn, stop).await
                    }
                    Ok(Err(e)) => Err(format!("TLS handshake: {e}")),
                    Err(_) => Err("TLS handshake timed out".to_string()),
                },
            };
            if let Err(e) = served {
                tracing::debug!(error = %e, "HTTP connection");
            }
        });
    }
    drop(listener);
    let drained = tokio::time::timeout(DRAIN, async {
        while connections.join_next().await.is_some() {}
    });
    let _ = drained.await;
    connections.abort_all();
    Ok(())
}

/// Serves one connection until it ends, or until `stop`: then ends it after the request in
/// flight.
async fn one<I, S>(
    conn: hyper::server::conn::http1::Connection<I, S>,
    stop: CancellationToken,
) -> Result<(), String>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + 'static,
    S: hyper::service::HttpService<hyper::body::Incoming>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::ResBody: hyper::body::Body + 'static,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut conn = pin!(conn);
    tokio::select! {
        r = conn.as_mut() => return r.map_err(|e| e.to_string()),
        _ = stop.cancelled() => {}
    }
    conn.as_mut().graceful_shutdown();
    conn.await.map_err(|e| e.to_string())
}
