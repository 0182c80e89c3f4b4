//! The transport's bounds and what others read, each played as one attack against a real
//! coordinator (gRPC and the HTTP port on `127.0.0.1:0`, a real sled store): a connection
//! that never speaks, a port filled with connections, one credential's streams never read,
//! an idle or slow HTTP connection, `/metrics` searched for a worker's name, the status page
//! over HTTPS, and a log line forged through a name. The figures are
//! `coordinator/src/limits.rs`'s, shortened through `Config::transport` where a test would
//! otherwise wait.

#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

use common::Server;
use cubefleet_coordinator::conn::Transport;
use cubefleet_coordinator::credentials::from_flags;
use cubefleet_coordinator::http::{HttpOptions, HttpTls};
use cubefleet_coordinator::Config;
use cubefleet_proto::client::Client;
use cubefleet_proto::{
    mode, submit_request, BatchRef, BatchSpec, LineChunk, ListBatchesRequest, Mode,
    RegisterRequest, ResultsRequest, SubmitRequest, TwoPhase,
};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use tonic::Code;

/// The secret of the client credential `alice`.
const ALICE: &str = "alice-secret";
/// The secret of the client credential `bob`.
const BOB: &str = "bob-secret";
/// The secret of the worker credential `volunteer`.
const VOLUNTEER: &str = "volunteer-secret";

/// A coordinator with client credentials `alice` and `bob` and a worker credential
/// `volunteer`, with the transport's bounds `transport`.
async fn start(transport: Transport) -> (TempDir, Server) {
    let dir = TempDir::new().unwrap();
    let mut config = Config::new(dir.path());
    config.credentials = from_flags(
        &[format!("alice:{ALICE}"), format!("bob:{BOB}")],
        &[format!("volunteer:{VOLUNTEER}")],
        None,
    )
    .unwrap();
    config.transport = transport;
    let server = Server::start(config).await;
    (dir, server)
}

/// A client presenting `secret`.
async fn as_(server: &Server, secret: &str) -> Client {
    Client::connect(&server.url, Some(secret)).await.unwrap()
}

/// The address `host:port` of a server's URL.
fn addr(server: &Server) -> String {
    server.url.trim_start_matches("http://").to_string()
}

/// Submits the batch `id` of `lines` (two-phase); its line count.
async fn submit(c: &mut Client, id: &str, lines: Vec<String>) -> u64 {
    let spec = BatchSpec {
        batch_id: id.into(),
        name: format!("boundary {id}"),
        mode: Some(Mode {
            kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
            timeout_seconds: 0.0,
            ..Default::default()
        }),
        ..BatchSpec::default()
    };
    let mut msgs = vec![SubmitRequest {
        part: Some(submit_request::Part::Spec(spec)),
    }];
    for chunk in lines.chunks(500) {
        msgs.push(SubmitRequest {
            part: Some(submit_request::Part::Chunk(LineChunk {
                lines: chunk.to_vec(),
            })),
        });
    }
    c.batches
        .submit(tokio_stream::iter(msgs))
        .await
        .unwrap()
        .into_inner()
        .total
}

/// Waits (up to 10 s) until the server serves `s`, a connection of its gRPC port: it answers
/// the HTTP/2 preface with a frame of its own, so the connection passed the gate.
async fn served(s: &mut TcpStream) {
    // the client preface, then an empty SETTINGS frame (length 0, type 4, no flags, stream 0)
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    hello.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    s.write_all(&hello).await.unwrap();
    let mut frame_header = [0u8; 9];
    tokio::time::timeout(Duration::from_secs(10), s.read_exact(&mut frame_header))
        .await
        .expect("served within 10 s")
        .expect("a frame from the server");
}

/// Reads from `s` until it is closed (EOF or an error) or `limit` passes; how long it took,
/// None when it stayed open.
async fn closed_within(s: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let t0 = Instant::now();
    let mut buf = [0u8; 4096];
    let reading = async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(limit, reading)
        .await
        .ok()
        .map(|_| t0.elapsed())
}

/// A raw TCP connection to the gRPC port that never speaks, or sends one byte and stops, is
/// closed once the silence timeout passes; a real client is served meanwhile and after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_speaks_is_closed() {
    let transport = Transport {
        silent: Duration::from_secs(1),
        ..Transport::default()
    };
    let (_dir, server) = start(transport).await;
    let mut silent = TcpStream::connect(addr(&server)).await.unwrap();
    let mut one_byte = TcpStream::connect(addr(&server)).await.unwrap();
    one_byte.write_all(b"P").await.unwrap();
    let mut client = as_(&server, ALICE).await;
    assert_eq!(submit(&mut client, "b", vec!["R U".into()]).await, 1);
    for (what, s) in [("silent", &mut silent), ("one byte", &mut one_byte)] {
        let took = closed_within(s, Duration::from_secs(10)).await;
        let took = took.unwrap_or_else(|| panic!("{what}: still open after 10 s"));
        assert!(
            took < Duration::from_secs(5),
            "{what}: closed after {took:?}"
        );
    }
    // the real client's connection spoke: it is still served
    client
        .batches
        .get_batch(BatchRef {
            batch_id: "b".into(),
        })
        .await
        .unwrap();
    server.stop().await;
}

/// Past the most connections open, a new one is closed at once (not after the silence
/// timeout); once they close, a client connects again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_grpc_port_closes_new_connections_at_once() {
    let transport = Transport {
        max_connections: 2,
        silent: Duration::from_secs(60),
        ..Transport::default()
    };
    let (_dir, server) = start(transport).await;
    let mut held = [
        TcpStream::connect(addr(&server)).await.unwrap(),
        TcpStream::connect(addr(&server)).await.unwrap(),
    ];
    // both hold their places once the server serves them
    for s in &mut held {
        served(s).await;
    }
    let mut third = TcpStream::connect(addr(&server)).await.unwrap();
    let took = closed_within(&mut third, Duration::from_secs(10)).await;
    assert!(
        took.is_some_and(|t| t < Duration::from_secs(5)),
        "a third connection was kept: {took:?}"
    );
    drop(held);
    // their places come back once the server saw them close
    let mut client = retry(|| async {
        let mut c = Client::connect(&server.url, Some(ALICE))
            .await
            .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
        c.batches.list_batches(ListBatchesRequest {}).await?;
        Ok(c)
    })
    .await
    .expect("a connection once the held ones closed");
    assert_eq!(submit(&mut client, "after", vec!["R U".into()]).await, 1);
    server.stop().await;
}

/// One credential's watches and results streams, opened and never read, are refused past
/// their limits with RESOURCE_EXHAUSTED naming the limit, while another credential still gets
/// its own; a stream closed gives its place back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_streams_of_one_credential_are_refused_another_still_gets_its_own() {
    let transport = Transport {
        max_watches: 3,
        max_result_streams: 1,
        stop_grace: Duration::from_secs(1),
        ..Transport::default()
    };
    let (_dir, server) = start(transport).await;
    let mut alice = as_(&server, ALICE).await;
    let mut bob = as_(&server, BOB).await;
    // a batch no worker takes: its watches stay open
    submit(&mut alice, "w", vec!["R U".into(), "F2".into()]).await;
    let watch = |c: &mut Client| {
        let mut b = c.batches.clone();
        async move {
            b.watch_batch(BatchRef {
                batch_id: "w".into(),
            })
            .await
        }
    };
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(watch(&mut alice).await.unwrap().into_inner());
    }
    let e = watch(&mut alice).await.expect_err("a fourth watch");
    assert_eq!(e.code(), Code::ResourceExhausted, "{e}");
    assert!(e.message().contains("MAX_WATCHES"), "{e}");
    // a second connection of the same credential is the same credential
    let mut alice2 = as_(&server, ALICE).await;
    let e = watch(&mut alice2)
        .await
        .expect_err("a watch on another connection");
    assert_eq!(e.code(), Code::ResourceExhausted, "{e}");
    let _bobs = watch(&mut bob).await.expect("another credential's watch");
    drop(open.pop());
    let reopened = retry(|| watch(&mut alice)).await;
    assert!(reopened.is_ok(), "a closed watch gives its place back");

    // a batch large enough that a results stream never read stays open (flow control holds
    // it): lines of 4000 bytes, refused as positions, kept as written
    let big: Vec<String> = (0..4000)
        .map(|i| format!("{i:04}{}", "x".repeat(3996)))
        .collect();
    submit(&mut alice, "big", big).await;
    let results = |c: &mut Client| {
        let mut b = c.batches.clone();
        async move {
            b.stream_results(ResultsRequest {
                batch_id: "big".into(),
                ..ResultsRequest::default()
            })
            .await
        }
    };
    // its place is taken before it answers, and it never ends unread (flow control holds it)
    let unread = results(&mut alice).await.unwrap().into_inner();
    let e = results(&mut alice)
        .await
        .expect_err("a second results stream");
    assert_eq!(e.code(), Code::ResourceExhausted, "{e}");
    assert!(e.message().contains("MAX_RESULT_STREAMS"), "{e}");
    let _bobs = results(&mut bob)
        .await
        .expect("another credential's stream");
    drop(unread);
    let reopened = retry(|| results(&mut alice)).await;
    assert!(
        reopened.is_ok(),
        "a closed results stream gives its place back"
    );
    // bob's stream is still open and unread: the stop closes it after the grace
    let t0 = Instant::now();
    server.stop().await;
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
}

/// Calls `f` until it succeeds or 5 s pass; its last answer.
async fn retry<T, F, Fut>(mut f: F) -> Result<T, tonic::Status>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, tonic::Status>>,
{
    let t0 = Instant::now();
    loop {
        match f().await {
            Err(e) if t0.elapsed() < Duration::from_secs(5) => {
                eprintln!("not yet: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            r => return r,
        }
    }
}

/// The HTTP port of `core` on a fresh loopback port with `options`; its address and the token
/// that stops it.
async fn http(
    core: Arc<cubefleet_coordinator::Core>,
    options: HttpOptions,
) -> (String, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let stop = CancellationToken::new();
    let credentials = Arc::new(
        Config {
            credentials: from_flags(
                &[format!("alice:{ALICE}")],
                &[format!("volunteer:{VOLUNTEER}")],
                None,
            )
            .unwrap(),
            ..Config::new("unused")
        }
        .credentials()
        .unwrap(),
    );
    tokio::spawn(cubefleet_coordinator::http::serve_http_options(
        core,
        listener,
        credentials,
        options,
        stop.clone(),
    ));
    (addr, stop)
}

/// A plain HTTP/1.1 GET of `path` with `Authorization: Bearer ALICE`, keeping the connection.
fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ALICE}\r\n\r\n")
}

/// Reads one response of `s` (up to the end of a body with Content-Length); its text.
async fn response(s: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")?
                        .parse()
                        .ok()
                })
                .unwrap_or(0usize);
            if body.len() >= length {
                return text;
            }
        }
        if n == 0 {
            return text;
        }
    }
}

/// The HTTP port closes a connection that never speaks, one whose headers stop half way, and
/// a kept-alive one that sends no next request, after the header timeout; past the most
/// connections, a new one is closed at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_http_connections_are_closed() {
    let (_dir, server) = start(Transport::default()).await;
    let options = HttpOptions {
        tls: None,
        transport: Transport {
            silent: Duration::from_secs(1),
            http_header: Duration::from_secs(1),
            max_http_connections: 3,
            ..Transport::default()
        },
    };
    let (addr, stop) = http(server.core.clone(), options).await;
    let mut silent = TcpStream::connect(&addr).await.unwrap();
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    let mut kept = TcpStream::connect(&addr).await.unwrap();
    kept.write_all(get("/healthz").as_bytes()).await.unwrap();
    let answer = response(&mut kept).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // three are open: a fourth is closed at once
    let mut fourth = TcpStream::connect(&addr).await.unwrap();
    let took = closed_within(&mut fourth, Duration::from_secs(10)).await;
    assert!(
        took.is_some_and(|t| t < Duration::from_millis(900)),
        "{took:?}"
    );
    for (what, s) in [
        ("silent", &mut silent),
        ("slow", &mut slow),
        ("kept", &mut kept),
    ] {
        let took = closed_within(s, Duration::from_secs(10)).await;
        let took = took.unwrap_or_else(|| panic!("{what}: still open after 10 s"));
        assert!(
            took < Duration::from_secs(5),
            "{what}: closed after {took:?}"
        );
    }
    // with the idle ones gone, the page is served again
    let mut again = TcpStream::connect(&addr).await.unwrap();
    again
        .write_all(get("/api/status").as_bytes())
        .await
        .unwrap();
    let answer = response(&mut again).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    stop.cancel();
    server.stop().await;
}

/// `/metrics` names no worker, credential or batch: a worker registered under a telling name
/// and credential, a batch with a telling name, and the scrape holds counts only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_name_no_worker() {
    let (_dir, server) = start(Transport::default()).await;
    let mut worker = as_(&server, VOLUNTEER).await;
    worker
        .workers
        .register(RegisterRequest {
            name: "telling-worker-name".into(),
            threads: 3,
            table_fingerprint: "test".into(),
            protocol: cubefleet_proto::PROTOCOL,
        })
        .await
        .unwrap();
    let mut alice = as_(&server, ALICE).await;
    submit(&mut alice, "telling-batch-id", vec!["R U".into()]).await;
    let (addr, stop) = http(server.core.clone(), HttpOptions::default()).await;
    let mut s = TcpStream::connect(&addr).await.unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let text = response(&mut s).await;
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("cubefleet_workers 1"), "{text}");
    assert!(text.contains("cubefleet_worker_threads 3"), "{text}");
    for secret in [
        "telling",
        "volunteer",
        "alice",
        ALICE,
        VOLUNTEER,
        "worker=",
        "name=",
    ] {
        assert!(!text.contains(secret), "/metrics shows {secret:?}:\n{text}");
    }
    stop.cancel();
    server.stop().await;
}

/// With `--tls-cert`, the status page is HTTPS with the same certificate and key: a client
/// trusting the certificate reads it with the client secret; plain HTTP gets no page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_is_https_with_the_grpc_certificate() {
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::ServerName;

    let (dir, server) = start(Transport::default()).await;
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let made = rcgen::generate_simple_self_signed(names).unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    // a wrong key file is refused naming the file
    let e = HttpTls::load(&cert, &cert).expect_err("a certificate is no key");
    assert!(e.to_string().contains("cert.pem"), "{e}");
    let options = HttpOptions {
        tls: Some(HttpTls::load(&cert, &key).unwrap()),
        transport: Transport::default(),
    };
    let (addr, stop) = http(server.core.clone(), options).await;

    let mut roots = rustls::RootCertStore::empty();
    roots.add(made.cert.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(&addr).await.unwrap();
    let domain = ServerName::try_from("localhost").unwrap();
    let mut tls = connector.connect(domain, tcp).await.unwrap();
    let request = format!(
        "GET /api/status HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {ALICE}\r\n\
         Connection: close\r\n\r\n"
    );
    tls.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), tls.read_to_end(&mut answer))
        .await
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("batches"), "{answer}");

    // plain HTTP to the HTTPS port: no page, no 401 asking for the secret in clear
    let mut plain = TcpStream::connect(&addr).await.unwrap();
    plain
        .write_all(get("/api/status").as_bytes())
        .await
        .unwrap();
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), plain.read_to_end(&mut got)).await;
    let got = String::from_utf8_lossy(&got);
    assert!(
        !got.contains("HTTP/1.1 200") && !got.contains("HTTP/1.1 401"),
        "{got}"
    );
    stop.cancel();
    server.stop().await;
}

/// What the log subscriber writes, shared with the test.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A batch id and a worker name with a newline (and a forged level, and an escape sequence)
/// reach the log as one line each: the text is quoted and escaped.
#[tokio::test]
async fn a_newline_in_a_name_stays_on_one_log_line() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let (_dir, server) = start(Transport::default()).await;
    let forged = "x\n2026-01-01T00:00:00Z ERROR FORGED: \u{1b}[2Jall workers revoked";
    let mut alice = as_(&server, ALICE).await;
    // a batch under the forged id (the id is a caller's text like any other), cancelled:
    // the cancellation is logged with its id
    submit(&mut alice, forged, vec!["R U".into()]).await;
    let _ = alice
        .batches
        .cancel_batch(BatchRef {
            batch_id: forged.into(),
        })
        .await;
    // an older worker's registration is logged with the name it gives
    let mut worker = as_(&server, VOLUNTEER).await;
    let _ = worker
        .workers
        .register(RegisterRequest {
            name: forged.into(),
            threads: 1,
            table_fingerprint: "test".into(),
            protocol: 1,
        })
        .await;
    server.stop().await;

    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("batch=") && l.contains("FORGED")),
        "the cancellation is logged with its id:\n{text}"
    );
    for l in &lines {
        assert!(
            !l.contains('\u{1b}'),
            "an escape sequence reached the log: {l:?}"
        );
        assert!(
            !l.starts_with("2026-01-01") && !l.trim_start().starts_with("ERROR FORGED"),
            "a forged line: {l:?}\n{text}"
        );
        if l.contains("FORGED") {
            assert!(l.contains("\\n2026-01-01"), "the newline is escaped: {l:?}");
        }
    }
    let _ = std::io::stderr().write_all(text.as_bytes());
}
