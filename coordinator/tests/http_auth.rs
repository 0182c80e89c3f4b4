//! The HTTP port's token, over a real socket: a coordinator with a token serves its status
//! page, fragment and `/api/status` only to requests that present it (Bearer or HTTP Basic),
//! while `/metrics` and `/healthz` stay open and `/metrics` shows nothing of a batch's
//! contents.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use cubefleet_coordinator::Config;
use cubefleet_proto::{mode, BatchSpec, Mode, TwoPhase};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "http-port-token";

/// `GET path` over HTTP/1.0 with the extra header lines `headers`: (status, head, body).
fn get(port: u16, path: &str, headers: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n{headers}\r\n").unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_string(), body.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_page_and_api_need_the_token_metrics_stay_open() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::new(dir.path());
    let core = cubefleet_coordinator::open(&config).await.unwrap();
    // a batch whose name and lines must not leak through the open /metrics
    let spec = BatchSpec {
        name: "confidential-batch-name".into(),
        mode: Some(Mode {
            kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
            ..Mode::default()
        }),
        ..BatchSpec::default()
    };
    let lines = vec!["R U R' U'".to_string(), "F2 B2".to_string()];
    let chunks = tokio_stream::iter([Ok(lines)]);
    core.submit(spec, chunks).await.unwrap();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let shutdown = CancellationToken::new();
    let server = tokio::spawn(cubefleet_coordinator::http::serve_http(
        core.clone(),
        listener,
        Some(TOKEN.into()),
        shutdown.clone(),
    ));

    tokio::task::spawn_blocking(move || {
        let bearer = format!("Authorization: Bearer {TOKEN}\r\n");
        // "anyone:http-port-token", what a browser sends after its login prompt
        let basic = "Authorization: Basic YW55b25lOmh0dHAtcG9ydC10b2tlbg==\r\n";
        for path in ["/", "/fragment", "/api/status"] {
            let (status, head, body) = get(port, path, "");
            assert_eq!(status, 401, "{path} without the token: {head}\n{body}");
            assert!(
                head.to_ascii_lowercase()
                    .contains("www-authenticate: basic"),
                "{path}: a browser is asked to log in: {head}"
            );
            assert!(body.contains("--token"), "{path}: says what to do: {body}");
            assert!(!body.contains("confidential"), "{path}: {body}");
            let (status, _, body) = get(port, path, "Authorization: Bearer wrong-token\r\n");
            assert_eq!(status, 401, "{path} with a wrong token: {body}");
            let (status, _, body) = get(port, path, &bearer);
            assert_eq!(status, 200, "{path} with the bearer token: {body}");
            let (status, _, body) = get(port, path, basic);
            assert_eq!(status, 200, "{path} with Basic credentials: {body}");
        }
        let (_, _, api) = get(port, "/api/status", &bearer);
        assert!(api.contains("confidential-batch-name"), "{api}");

        let (status, head, metrics) = get(port, "/metrics", "");
        assert_eq!(status, 200, "/metrics stays open: {metrics}");
        assert!(head.contains("application/openmetrics-text"), "{head}");
        assert!(
            metrics.contains("cubefleet_jobs_submitted_total 2"),
            "{metrics}"
        );
        assert!(!metrics.contains("confidential"), "{metrics}");
        assert!(!metrics.contains("R U"), "{metrics}");
        assert_eq!(get(port, "/healthz", "").0, 200);
    })
    .await
    .unwrap();

    shutdown.cancel();
    server.await.unwrap().unwrap();
}
