//! What every long-running command shares as a process: its runtime, its stop signals and the
//! file that tells scripts where it listens.

use std::path::Path;

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
