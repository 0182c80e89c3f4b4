//! The gRPC face of the coordinator: `Batches` for clients, `Workers` for workers, plus health
//! and reflection (unauthenticated). Every handler runs the blocking store work of [`Core`] on
//! the blocking pool.

use std::sync::Arc;
use std::time::Duration;

use cubefleet_proto::batches_server::{Batches, BatchesServer};
use cubefleet_proto::workers_server::{Workers, WorkersServer};
use cubefleet_proto::{
    submit_request, BatchRef, BatchStatus, CompleteRequest, CompleteResponse, HeartbeatRequest,
    HeartbeatResponse, JobRef, JobResult, LeaseRequest, LeaseResponse, LeasedJob,
    ListBatchesRequest, ListBatchesResponse, LookupRequest, LookupResponse, RegisterRequest,
    RegisterResponse, Rejection, ReleaseRequest, ReleaseResponse, ResultsPage, ResultsRequest,
    SubmitRequest, SubmitResponse,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;
use tonic::service::interceptor::InterceptedService;
use tonic::{Request, Response, Status, Streaming};

use crate::core::Core;
use crate::error::Error;
use crate::stream::{self, blocking};
use crate::Config;

/// Both services share the coordinator.
#[derive(Clone)]
struct Svc {
    core: Arc<Core>,
    shutdown: CancellationToken,
}

#[tonic::async_trait]
impl Batches for Svc {
    async fn submit(
        &self,
        request: Request<Streaming<SubmitRequest>>,
    ) -> Result<Response<SubmitResponse>, Status> {
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
        // the rest of the stream: its chunks' lines (other parts carry nothing more)
        let chunks = requests.filter_map(|m| match m {
            Ok(SubmitRequest {
                part: Some(submit_request::Part::Chunk(chunk)),
            }) => Some(Ok(chunk.lines)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        });
        Ok(Response::new(
            stream::submit(self.core.clone(), spec, chunks).await?,
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
        let core = self.core.clone();
        let id = request.into_inner().batch_id;
        tracing::info!(batch = %id, "batch cancelled");
        Ok(Response::new(blocking(move || core.cancel(&id)).await?))
    }

    type WatchBatchStream = ReceiverStream<Result<BatchStatus, Status>>;

    async fn watch_batch(
        &self,
        request: Request<BatchRef>,
    ) -> Result<Response<Self::WatchBatchStream>, Status> {
        let id = request.into_inner().batch_id;
        Ok(Response::new(
            stream::watch(self.core.clone(), id, self.shutdown.clone()).await?,
        ))
    }

    type StreamResultsStream = ReceiverStream<Result<JobResult, Status>>;

    async fn stream_results(
        &self,
        request: Request<ResultsRequest>,
    ) -> Result<Response<Self::StreamResultsStream>, Status> {
        let req = request.into_inner();
        // fail early on an unknown batch
        {
            let (core, id) = (self.core.clone(), req.batch_id.clone());
            blocking(move || core.status(&id)).await?;
        }
        let core = self.core.clone();
        let (tx, rx) = mpsc::channel(1024);
        // pages of up to 2000 results; the next page is read while this one is sent
        let fetch = move |from: u64, left: u64| {
            let (core, id, status) = (core.clone(), req.batch_id.clone(), req.status.clone());
            let page = left.min(2000) as usize;
            tokio::spawn(blocking(move || {
                core.results(&id, from, page, &status, true)
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
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn list_results(
        &self,
        request: Request<ResultsRequest>,
    ) -> Result<Response<ResultsPage>, Status> {
        let req = request.into_inner();
        let core = self.core.clone();
        let limit = if req.limit == 0 {
            1000
        } else {
            req.limit.min(10_000)
        } as usize;
        let (results, next_index) =
            blocking(move || core.results(&req.batch_id, req.from_index, limit, &req.status, true))
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
}

#[tonic::async_trait]
impl Workers for Svc {
    async fn register(
        &self,
        request: Request<RegisterRequest>,
    ) -> Result<Response<RegisterResponse>, Status> {
        let r = request.into_inner();
        if r.protocol < cubefleet_proto::PROTOCOL {
            // an older worker's results are still understood (revisions only add); it is
            // named in the log so a mixed deployment is visible
            tracing::warn!(
                worker = %r.name,
                protocol = r.protocol,
                ours = cubefleet_proto::PROTOCOL,
                "a worker of an older protocol registered; upgrade it"
            );
        }
        let (worker_id, lease) = self.core.register(r.name, r.threads, r.table_fingerprint);
        Ok(Response::new(RegisterResponse {
            worker_id,
            lease_seconds: lease.as_secs_f64(),
            protocol: cubefleet_proto::PROTOCOL,
        }))
    }

    async fn lease(
        &self,
        request: Request<LeaseRequest>,
    ) -> Result<Response<LeaseResponse>, Status> {
        let r = request.into_inner();
        let jobs = self
            .core
            .lease_wait(
                &r.worker_id,
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
        let r = request.into_inner();
        let core = self.core.clone();
        let cancel = blocking(move || core.heartbeat(&r.worker_id, &r.jobs)).await?;
        Ok(Response::new(HeartbeatResponse { cancel }))
    }

    async fn complete(
        &self,
        request: Request<CompleteRequest>,
    ) -> Result<Response<CompleteResponse>, Status> {
        let r = request.into_inner();
        let core = self.core.clone();
        let (accepted, rejected) =
            blocking(move || core.complete(&r.worker_id, &r.results)).await?;
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
        let r = request.into_inner();
        let core = self.core.clone();
        let released = blocking(move || core.release(&r.worker_id, &r.jobs)).await?;
        Ok(Response::new(ReleaseResponse { released }))
    }
}

/// Checks the bearer token of every call (when one is configured).
#[derive(Clone)]
struct Auth {
    expected: Option<String>,
}

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let Some(expected) = &self.expected else {
            return Ok(req);
        };
        let given = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match given {
            Some(t) if crate::auth::token_matches(t.as_bytes(), expected.as_bytes()) => Ok(req),
            Some(_) => Err(Status::unauthenticated("wrong bearer token")),
            None => Err(Status::unauthenticated(
                "this coordinator needs a bearer token (--token or CUBEFLEET_TOKEN)",
            )),
        }
    }
}

/// Serves until `shutdown`; expires leases in the background.
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
    let svc = Svc {
        core: core.clone(),
        shutdown: shutdown.clone(),
    };
    let auth = Auth {
        expected: config.token.clone().filter(|t| !t.is_empty()),
    };
    let limit = config.max_message_bytes;
    // limits go on the generated servers before the interceptor wraps them
    let batches = InterceptedService::new(
        BatchesServer::new(svc.clone())
            .max_decoding_message_size(limit)
            .max_encoding_message_size(limit),
        auth.clone(),
    );
    let workers = InterceptedService::new(
        WorkersServer::new(svc)
            .max_decoding_message_size(limit)
            .max_encoding_message_size(limit),
        auth,
    );
    let (health, health_svc) = tonic_health::server::health_reporter();
    health
        .set_service_status(crate::HEALTH_SERVICE, tonic_health::ServingStatus::Serving)
        .await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(cubefleet_proto::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| Error::Internal(e.to_string()))?;

    let sweeper = stream::sweep_leases(core.clone(), shutdown.clone());

    let mut builder = tonic::transport::Server::builder();
    if let Some((cert, key)) = &config.tls {
        let identity =
            tonic::transport::Identity::from_pem(std::fs::read(cert)?, std::fs::read(key)?);
        builder =
            builder.tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))?;
    }
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
    let _ = sweeper.await;
    result?;
    Ok(())
}
