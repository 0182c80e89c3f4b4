//! The gRPC face of the coordinator: `Batches` for clients, `Workers` for workers, plus health
//! (open, for probes) and reflection (any credential). Every call presents a credential of the
//! role its service needs ([`Auth`]); a worker's calls also name a session that credential
//! registered ([`Core::session`]). Every field is checked here or in the core by the rules of
//! [`crate::limits`] before anything is done. Every handler runs the blocking store work of
//! [`Core`] on the blocking pool.

use std::sync::Arc;
use std::time::Duration;

use cubefleet_proto::batches_server::{Batches, BatchesServer};
use cubefleet_proto::workers_server::{Workers, WorkersServer};
use cubefleet_proto::{
    submit_request, BatchRef, BatchStatus, CompleteRequest, CompleteResponse, HeartbeatRequest,
    HeartbeatResponse, JobRef, JobResult, LeaseRequest, LeaseResponse, LeasedJob,
    ListBatchesRequest, ListBatchesResponse, LookupRequest, LookupResponse, RegisterRequest,
    RegisterResponse, Rejection, ReleaseRequest, ReleaseResponse, ResultsPage, ResultsRequest,
    RevokeRequest, RevokeResponse, SubmitRequest, SubmitResponse,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;
use tonic::service::interceptor::InterceptedService;
use tonic::{Request, Response, Status, Streaming};

use crate::core::Core;
use crate::core::{blocking, Canceller, EndHash, Revoker};
use crate::credentials::{Credential, Credentials, Role};
use crate::error::Error;
use crate::limits;
use crate::logsafe;
use crate::session::Session;
use crate::streams::{self, Counted, OpenStreams};
use crate::Config;

/// Both services share the coordinator.
#[derive(Clone)]
struct Svc {
    core: Arc<Core>,
    shutdown: CancellationToken,
    /// The credentials (to tell whether a revoked name is a credential's).
    credentials: Arc<Credentials>,
    /// The response streams each credential holds open ([`crate::streams`]).
    streams: OpenStreams,
}

/// The name a batch records as its owner for the credential `c`: its name, or "" for the
/// caller of a coordinator without credentials (whose batches anyone may cancel).
fn owner_of(c: &Credential) -> String {
    if c.names_workers() {
        c.name.to_string()
    } else {
        String::new()
    }
}

/// The credential [`Auth`] found for a request.
fn credential<T>(request: &Request<T>) -> Result<Arc<Credential>, Status> {
    request
        .extensions()
        .get::<Arc<Credential>>()
        .cloned()
        .ok_or_else(|| Status::internal("a call reached a service without its credential"))
}

impl Svc {
    /// The session a worker's call names (`worker_id`), for the call's credential.
    fn session<T>(&self, request: &Request<T>, token: &str) -> Result<Session, Status> {
        let credential = credential(request)?;
        Ok(self.core.session(&credential, token)?)
    }

    /// Most jobs one call of `session` may name: what it may hold (a session of this
    /// process is not held to a number, but no call names more than a lease can hand out).
    fn most_jobs(&self, session: &Session) -> usize {
        self.core
            .max_held(session.threads)
            .max(u64::from(crate::core::MAX_LEASE_JOBS)) as usize
    }
}

#[tonic::async_trait]
impl Batches for Svc {
    async fn submit(
        &self,
        request: Request<Streaming<SubmitRequest>>,
    ) -> Result<Response<SubmitResponse>, Status> {
        let owner = owner_of(&*credential(&request)?);
        let mut requests = request.into_inner();
        let spec = match requests.message().await? {
            Some(SubmitRequest {
                part: Some(submit_request::Part::Spec(spec)),
            }) => spec,
            _ => {
                return Err(Status::invalid_argument(
                    "the first message must be the batch spec",
                ))
            }
        };
        // the rest of the stream: its chunks' lines, then perhaps its end (with the hash of
        // lines the client did not know beforehand); nothing may follow the end
        let end: EndHash = Arc::default();
        let seen_end = end.clone();
        let chunks = requests.filter_map(move |m| {
            let ended = seen_end.lock().unwrap_or_else(|e| e.into_inner()).is_some();
            match m {
                Ok(SubmitRequest { part: Some(_) }) if ended => Some(Err(
                    Status::invalid_argument("nothing may follow the end of a submission"),
                )),
                Ok(SubmitRequest {
                    part: Some(submit_request::Part::Chunk(chunk)),
                }) => Some(Ok(chunk.lines)),
                Ok(SubmitRequest {
                    part: Some(submit_request::Part::End(e)),
                }) => {
                    if let Err(e) = limits::check_len(
                        "end.content_hash",
                        &e.content_hash,
                        limits::MAX_CONTENT_HASH,
                    ) {
                        return Some(Err(e.into()));
                    }
                    *seen_end.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.content_hash);
                    None
                }
                Ok(_) => Some(Err(Status::invalid_argument(
                    "a second batch spec, or a message with no part",
                ))),
                Err(e) => Some(Err(e)),
            }
        });
        Ok(Response::new(
            self.core.submit_with_end(spec, chunks, end, owner).await?,
        ))
    }

    async fn get_batch(&self, request: Request<BatchRef>) -> Result<Response<BatchStatus>, Status> {
        let core = self.core.clone();
        let id = request.into_inner().batch_id;
        Ok(Response::new(blocking(move || core.status(&id)).await?))
    }

    async fn list_batches(
        &self,
        _request: Request<ListBatchesRequest>,
    ) -> Result<Response<ListBatchesResponse>, Status> {
        let core = self.core.clone();
        let batches = blocking(move || core.list()).await?;
        Ok(Response::new(ListBatchesResponse { batches }))
    }

    async fn cancel_batch(
        &self,
        request: Request<BatchRef>,
    ) -> Result<Response<BatchStatus>, Status> {
        let who = credential(&request)?;
        let by = Canceller {
            name: owner_of(&who),
            admin: who.role.allows(Role::Admin),
        };
        let core = self.core.clone();
        let id = request.into_inner().batch_id;
        tracing::info!(batch = %logsafe::text(&id), by = %logsafe::text(&who.name), "cancelling a batch");
        Ok(Response::new(
            blocking(move || core.cancel(&id, &by)).await?,
        ))
    }

    type WatchBatchStream = Counted<ReceiverStream<Result<BatchStatus, Status>>>;

    /// Counted against the credential's watches ([`limits::MAX_WATCHES`]) while it is open.
    async fn watch_batch(
        &self,
        request: Request<BatchRef>,
    ) -> Result<Response<Self::WatchBatchStream>, Status> {
        let who = credential(&request)?;
        let place = self.streams.open(&who.name, streams::Kind::Watch)?;
        let id = request.into_inner().batch_id;
        let watch = self.core.watch(id, self.shutdown.clone()).await?;
        Ok(Response::new(Counted::new(watch, place)))
    }

    type StreamResultsStream = Counted<ReceiverStream<Result<JobResult, Status>>>;

    /// Counted against the credential's results streams ([`limits::MAX_RESULT_STREAMS`])
    /// while it is open; one never read holds at most two pages and its channel.
    async fn stream_results(
        &self,
        request: Request<ResultsRequest>,
    ) -> Result<Response<Self::StreamResultsStream>, Status> {
        let who = credential(&request)?;
        let place = self.streams.open(&who.name, streams::Kind::Results)?;
        let req = request.into_inner();
        let filter = limits::StatusFilter::parse(&req.status)?;
        // fail early on an unknown batch
        {
            let (core, id) = (self.core.clone(), req.batch_id.clone());
            blocking(move || core.status(&id)).await?;
        }
        let core = self.core.clone();
        let (tx, rx) = mpsc::channel(streams::RESULTS_CHANNEL);
        // pages of up to RESULTS_PAGE results; the next page is read while this one is sent
        let fetch = move |from: u64, left: u64| {
            let (core, id) = (core.clone(), req.batch_id.clone());
            let page = left.min(streams::RESULTS_PAGE) as usize;
            tokio::spawn(blocking(move || {
                core.results_of(&id, from, page, filter, true)
            }))
        };
        tokio::spawn(async move {
            let mut from = req.from_index;
            let mut left = if req.limit == 0 { u64::MAX } else { req.limit };
            let mut reading = Some(fetch(from, left));
            while let Some(page) = reading.take() {
                let read = page.await.map_err(|e| Status::internal(e.to_string()));
                let (results, next) = match read.and_then(|r| r) {
                    Ok(x) => x,
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                };
                left -= results.len() as u64;
                if next != from && left > 0 {
                    reading = Some(fetch(next, left));
                }
                for r in results {
                    if tx.send(Ok(r)).await.is_err() {
                        return;
                    }
                }
                from = next;
            }
        });
        Ok(Response::new(Counted::new(ReceiverStream::new(rx), place)))
    }

    async fn list_results(
        &self,
        request: Request<ResultsRequest>,
    ) -> Result<Response<ResultsPage>, Status> {
        let req = request.into_inner();
        let filter = limits::StatusFilter::parse(&req.status)?;
        let core = self.core.clone();
        let limit = if req.limit == 0 {
            1000
        } else {
            req.limit.min(10_000)
        } as usize;
        let (results, next_index) =
            blocking(move || core.results_of(&req.batch_id, req.from_index, limit, filter, true))
                .await?;
        Ok(Response::new(ResultsPage {
            results,
            next_index,
        }))
    }

    async fn get_job(&self, request: Request<JobRef>) -> Result<Response<JobResult>, Status> {
        let core = self.core.clone();
        let id = request.into_inner().job_id;
        Ok(Response::new(blocking(move || core.job(id)).await?))
    }

    async fn lookup(
        &self,
        request: Request<LookupRequest>,
    ) -> Result<Response<LookupResponse>, Status> {
        let core = self.core.clone();
        let pos = request.into_inner().position;
        limits::check_len("position", pos.as_bytes(), crate::core::MAX_LINE_LEN)?;
        let found = blocking(move || core.lookup(&pos)).await?;
        Ok(Response::new(match found {
            Some((result, mode)) => LookupResponse {
                found: true,
                result: Some(result),
                mode: Some(mode),
            },
            None => LookupResponse::default(),
        }))
    }

    async fn revoke(
        &self,
        request: Request<RevokeRequest>,
    ) -> Result<Response<RevokeResponse>, Status> {
        let who = credential(&request)?;
        let by = if who.role.allows(Role::Admin) {
            Revoker::Admin
        } else {
            Revoker::Other
        };
        let name = request.into_inner().worker;
        let core = self.core.clone();
        let credential_revoked = self.credentials.has_name(&name);
        tracing::warn!(
            worker = %logsafe::text(&name),
            by = %logsafe::text(&who.name),
            "revoking a worker"
        );
        let requeued = blocking(move || core.revoke(&name, by)).await?;
        Ok(Response::new(RevokeResponse {
            requeued,
            credential_revoked,
        }))
    }
}

#[tonic::async_trait]
impl Workers for Svc {
    async fn register(
        &self,
        request: Request<RegisterRequest>,
    ) -> Result<Response<RegisterResponse>, Status> {
        let credential = credential(&request)?;
        let r = request.into_inner();
        if r.protocol < cubefleet_proto::PROTOCOL {
            // an older worker's results are still understood (revisions only add); it is
            // named in the log so a mixed deployment is visible
            tracing::warn!(
                worker = %logsafe::text(&r.name),
                protocol = r.protocol,
                ours = cubefleet_proto::PROTOCOL,
                "a worker of an older protocol registered; upgrade it"
            );
        }
        let (session, token, lease) = self.core.register_session(
            &credential,
            &r.name,
            r.threads,
            r.table_fingerprint,
            r.protocol,
        )?;
        Ok(Response::new(RegisterResponse {
            worker_id: token,
            lease_seconds: lease.as_secs_f64(),
            protocol: cubefleet_proto::PROTOCOL,
            session: session.id.to_string(),
        }))
    }

    async fn lease(
        &self,
        request: Request<LeaseRequest>,
    ) -> Result<Response<LeaseResponse>, Status> {
        let session = self.session(&request, &request.get_ref().worker_id)?;
        let r = request.into_inner();
        limits::check_seconds("max_seconds", r.max_seconds)?;
        let jobs = self
            .core
            .lease_wait(
                &session.id,
                r.max_jobs,
                r.max_seconds,
                Duration::from_millis(r.wait_millis.into()),
                &self.shutdown,
            )
            .await?;
        Ok(Response::new(LeaseResponse {
            jobs: jobs.into_iter().map(LeasedJob::from).collect(),
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<HeartbeatRequest>,
    ) -> Result<Response<HeartbeatResponse>, Status> {
        let session = self.session(&request, &request.get_ref().worker_id)?;
        let r = request.into_inner();
        limits::check_progress("jobs", &r.jobs, self.most_jobs(&session))?;
        let core = self.core.clone();
        let cancel = blocking(move || core.heartbeat(&session.id, &r.jobs)).await?;
        Ok(Response::new(HeartbeatResponse { cancel }))
    }

    async fn complete(
        &self,
        request: Request<CompleteRequest>,
    ) -> Result<Response<CompleteResponse>, Status> {
        let session = self.session(&request, &request.get_ref().worker_id)?;
        let r = request.into_inner();
        limits::check_count("results", r.results.len(), self.most_jobs(&session))?;
        for c in &r.results {
            limits::check_completion(c)?;
        }
        let core = self.core.clone();
        let (accepted, rejected) = blocking(move || core.complete(&session.id, &r.results)).await?;
        Ok(Response::new(CompleteResponse {
            accepted,
            rejected: rejected
                .into_iter()
                .map(|(job_id, reason)| Rejection { job_id, reason })
                .collect(),
        }))
    }

    async fn release(
        &self,
        request: Request<ReleaseRequest>,
    ) -> Result<Response<ReleaseResponse>, Status> {
        let session = self.session(&request, &request.get_ref().worker_id)?;
        let r = request.into_inner();
        limits::check_progress("jobs", &r.jobs, self.most_jobs(&session))?;
        let core = self.core.clone();
        let released = blocking(move || core.release(&session.id, &r.jobs)).await?;
        Ok(Response::new(ReleaseResponse { released }))
    }
}

/// Checks the credential of every call: present (unless the coordinator has none: then every
/// caller is [`Credential::anonymous`]), known, not revoked, and of the role the service
/// needs (`needs`; None: any role, for reflection). The credential goes into the request's
/// extensions for the handler.
#[derive(Clone)]
struct Auth {
    credentials: Arc<Credentials>,
    anonymous: Arc<Credential>,
    core: Arc<Core>,
    needs: Option<Role>,
}

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        let credential = if self.credentials.is_open() {
            self.anonymous.clone()
        } else {
            let given = req
                .metadata()
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            match given {
                Some(t) => self
                    .credentials
                    .find(t.as_bytes())
                    .ok_or_else(|| Status::unauthenticated("wrong bearer token"))?,
                None => {
                    return Err(Status::unauthenticated(
                        "this coordinator needs a bearer token (--token or CUBEFLEET_TOKEN)",
                    ))
                }
            }
        };
        if credential.names_workers() && self.core.is_revoked(&credential.name) {
            return Err(Status::permission_denied(format!(
                "credential {} is revoked",
                credential.name
            )));
        }
        if let Some(needed) = self.needs {
            if !credential.role.allows(needed) {
                let what = match needed {
                    Role::Worker => "a worker credential (Workers/* is for workers)",
                    _ => "a client credential (Batches/* is for clients)",
                };
                return Err(Status::permission_denied(format!(
                    "credential {} cannot make this call: it needs {what}",
                    credential.name
                )));
            }
        }
        req.extensions_mut().insert(credential);
        Ok(req)
    }
}

/// Serves until `shutdown`; expires leases in the background. Every connection of `incoming`
/// passes the transport's bounds of `config.transport` first ([`crate::conn`]): at most so
/// many open, silent ones closed, keepalive pings, a TLS handshake timeout, a most age and a
/// most of calls in flight per connection.
pub(crate) async fn run<I, IO, IE>(
    core: Arc<Core>,
    config: Config,
    incoming: I,
    shutdown: CancellationToken,
) -> Result<(), Error>
where
    I: tokio_stream::Stream<Item = Result<IO, IE>>,
    IO: tokio::io::AsyncRead
        + tokio::io::AsyncWrite
        + tonic::transport::server::Connected
        + Unpin
        + Send
        + 'static,
    IE: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let credentials = Arc::new(config.credentials()?);
    if credentials.is_open() {
        tracing::warn!(
            "no credential given: every caller may do everything (see the README's threat model)"
        );
    }
    let bounds = config.transport.clone();
    let svc = Svc {
        core: core.clone(),
        shutdown: shutdown.clone(),
        credentials: credentials.clone(),
        streams: OpenStreams::new(bounds.max_watches, bounds.max_result_streams),
    };
    let auth = |needs| Auth {
        credentials: credentials.clone(),
        anonymous: Arc::new(Credential::anonymous()),
        core: core.clone(),
        needs,
    };
    let (request, answer) = (
        config.max_message_bytes,
        cubefleet_proto::MAX_RESPONSE_BYTES,
    );
    // limits go on the generated servers before the interceptor wraps them
    let batches = InterceptedService::new(
        BatchesServer::new(svc.clone())
            .max_decoding_message_size(request)
            .max_encoding_message_size(answer),
        auth(Some(Role::Client)),
    );
    let workers = InterceptedService::new(
        WorkersServer::new(svc)
            .max_decoding_message_size(request)
            .max_encoding_message_size(answer),
        auth(Some(Role::Worker)),
    );
    let (health, health_svc) = tonic_health::server::health_reporter();
    health
        .set_service_status(crate::HEALTH_SERVICE, tonic_health::ServingStatus::Serving)
        .await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(cubefleet_proto::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| Error::Internal(e.to_string()))?;
    let reflection = InterceptedService::new(reflection, auth(None));

    let sweeper = core.sweep_leases(shutdown.clone());

    let mut builder = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(bounds.keepalive_interval))
        .http2_keepalive_timeout(Some(bounds.keepalive_timeout))
        .max_connection_age(bounds.max_connection_age)
        .max_concurrent_streams(bounds.max_streams_per_connection);
    if let Some((cert, key)) = &config.tls {
        let identity =
            tonic::transport::Identity::from_pem(std::fs::read(cert)?, std::fs::read(key)?);
        builder = builder.tls_config(
            tonic::transport::ServerTlsConfig::new()
                .identity(identity)
                .timeout(bounds.silent),
        )?;
    }
    // a connection past the most open is closed at once; a silent one after `silent`; every
    // one `stop_grace` after the stop began (a stream never read would hold the stop forever)
    let close = CancellationToken::new();
    let closer = {
        let (stop, close, grace) = (shutdown.clone(), close.clone(), bounds.stop_grace);
        tokio::spawn(async move {
            stop.cancelled().await;
            tokio::time::sleep(grace).await;
            close.cancel();
        })
    };
    let gate = crate::conn::Gate::new(bounds.max_connections, "gRPC").closing_on(close);
    let incoming = incoming.filter_map(move |accepted| match accepted {
        Ok(io) => gate.guard(io, bounds.silent).map(Ok),
        Err(e) => Some(Err(e)),
    });
    let down = shutdown.clone();
    let result = builder
        .add_service(health_svc)
        .add_service(reflection)
        .add_service(batches)
        .add_service(workers)
        .serve_with_incoming_shutdown(incoming, async move { down.cancelled().await })
        .await;
    health
        .set_service_status(
            crate::HEALTH_SERVICE,
            tonic_health::ServingStatus::NotServing,
        )
        .await;
    shutdown.cancel();
    closer.abort();
    let _ = sweeper.await;
    result?;
    Ok(())
}
