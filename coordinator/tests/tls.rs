//! TLS end to end: a real coordinator on `127.0.0.1:0` with a self-signed certificate for
//! `localhost` and `127.0.0.1` made at test time, and the real gRPC client over `https://`.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use cubefleet_coordinator::Config;
use cubefleet_proto::client::Client;
use cubefleet_proto::{
    mode, submit_request, BatchRef, BatchSpec, LineChunk, Mode, SubmitRequest, TwoPhase,
};
use tempfile::TempDir;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The bearer token of the test server.
const TOKEN: &str = "s3cret";

/// A certificate (PEM) for `localhost` and `127.0.0.1`, self-signed, and its key (PEM).
fn self_signed() -> (String, String) {
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let key = rcgen::generate_simple_self_signed(names).unwrap();
    (key.cert.pem(), key.signing_key.serialize_pem())
}

/// A coordinator with TLS and [`TOKEN`] running in this process.
struct Server {
    /// Its port on the loopback interface.
    port: u16,
    /// The certificate it presents (PEM), which is its own CA.
    ca: String,
    shutdown: CancellationToken,
    handle: JoinHandle<Result<(), cubefleet_coordinator::Error>>,
    /// Store, certificate and key; kept until the server has stopped.
    _dir: TempDir,
}

impl Server {
    /// Starts a coordinator on a fresh loopback port, with a fresh certificate and store.
    async fn start() -> Server {
        let dir = TempDir::new().unwrap();
        let (cert, key) = self_signed();
        let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert_path, &cert).unwrap();
        std::fs::write(&key_path, &key).unwrap();
        let mut config = Config::new(dir.path().join("store"));
        config.token = Some(TOKEN.into());
        config.tls = Some((cert_path, key_path));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let shutdown = CancellationToken::new();
        let handle = tokio::spawn(cubefleet_coordinator::serve(
            config,
            listener,
            shutdown.clone(),
        ));
        Server {
            port,
            ca: cert,
            shutdown,
            handle,
            _dir: dir,
        }
    }

    /// Stops the server and waits until it has flushed the store.
    async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(20), self.handle)
            .await
            .expect("the server stops")
            .unwrap()
            .expect("the server stops cleanly");
    }
}

/// Connects to `url` trusting `ca`, with [`TOKEN`]; gives up after 10 s.
async fn connect(url: &str, ca: Option<&str>) -> Result<Client, String> {
    let connecting = Client::connect_with_ca(url, Some(TOKEN), ca.map(str::as_bytes));
    match tokio::time::timeout(Duration::from_secs(10), connecting).await {
        Ok(r) => r.map_err(|e| format!("{e}: {e:?}")),
        Err(_) => Err("connecting timed out".into()),
    }
}

/// Submits a two-line batch `id` and reads it back; any failure as text. Gives up after 10 s.
async fn submit_and_get(client: &mut Client, id: &str) -> Result<(u64, u64), String> {
    let spec = BatchSpec {
        batch_id: id.into(),
        name: format!("tls batch {id}"),
        mode: Some(Mode {
            kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 22 })),
            timeout_seconds: 0.0,
            ..Default::default()
        }),
        priority: 0,
        ..BatchSpec::default()
    };
    let msgs = vec![
        SubmitRequest {
            part: Some(submit_request::Part::Spec(spec)),
        },
        SubmitRequest {
            part: Some(submit_request::Part::Chunk(LineChunk {
                lines: vec!["R U".into(), "F2 D'".into()],
            })),
        },
    ];
    let work = async {
        let submitted = client
            .batches
            .submit(tokio_stream::iter(msgs))
            .await
            .map_err(|s| s.to_string())?
            .into_inner();
        let status = client
            .batches
            .get_batch(BatchRef {
                batch_id: id.into(),
            })
            .await
            .map_err(|s| s.to_string())?
            .into_inner();
        Ok((submitted.total, status.total))
    };
    tokio::time::timeout(Duration::from_secs(10), work)
        .await
        .unwrap_or_else(|_| Err("the calls timed out".into()))
}

#[tokio::test]
async fn a_client_trusting_the_ca_talks_over_tls() {
    let server = Server::start().await;
    for host in ["localhost", "127.0.0.1"] {
        let url = format!("https://{host}:{}", server.port);
        let mut client = connect(&url, Some(&server.ca)).await.unwrap();
        let id = format!("tls-{host}");
        assert_eq!(submit_and_get(&mut client, &id).await.unwrap(), (2, 2));
        let status = client
            .batches
            .get_batch(BatchRef { batch_id: id })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(status.name, format!("tls batch tls-{host}"));
        assert_eq!(status.invalid, 0);
    }
    server.stop().await;
}

#[tokio::test]
async fn the_token_is_still_required_over_tls() {
    let server = Server::start().await;
    let url = format!("https://localhost:{}", server.port);
    let mut client = Client::connect_with_ca(&url, None, Some(server.ca.as_bytes()))
        .await
        .unwrap();
    let err = client
        .batches
        .get_batch(BatchRef {
            batch_id: "x".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated, "{err}");
    server.stop().await;
}

#[tokio::test]
async fn plain_http_to_the_tls_port_fails() {
    let server = Server::start().await;
    let url = format!("http://127.0.0.1:{}", server.port);
    // the connection may come up (HTTP/2 needs no answer to start); the calls must not
    let result = match connect(&url, None).await {
        Err(e) => Err(e),
        Ok(mut client) => submit_and_get(&mut client, "plain").await,
    };
    assert!(result.is_err(), "plain HTTP/2 reached a TLS server");
    server.stop().await;
}

#[tokio::test]
async fn a_client_not_trusting_the_ca_fails() {
    let server = Server::start().await;
    let url = format!("https://localhost:{}", server.port);
    // no CA given: the self-signed certificate is in no root store
    let err = connect(&url, None).await.err();
    assert!(err.is_some(), "connected without a trusted CA");
    // trusting another certificate for the same names
    let (other, _) = self_signed();
    let err = connect(&url, Some(&other)).await.err();
    assert!(err.is_some(), "connected trusting the wrong CA");
    eprintln!("untrusted: {}", err.unwrap_or_default());
    // the server still serves a client that trusts it afterwards
    let mut client = connect(&url, Some(&server.ca)).await.unwrap();
    assert_eq!(submit_and_get(&mut client, "after").await.unwrap(), (2, 2));
    server.stop().await;
}
