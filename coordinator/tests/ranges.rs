//! Range and sample batches through a real coordinator (gRPC over loopback, sled store): jobs
//! are made only as leases ask for them, `made` survives a restart with no line made twice
//! and none skipped, a huge range is cancelled at once, and bad definitions are refused.

mod common;

use std::collections::BTreeSet;

use common::{lease, register, two_phase, Server};
use cubefleet_coordinator::Config;
use cubefleet_proto::client::Client;
use cubefleet_proto::{
    submit_request, BatchRef, BatchSpec, BatchStatus, JobProgress, JobRef, LineChunk,
    ReleaseRequest, ResultsRequest, SubmitRequest, SubmitResponse,
};
use cubefleet_tables::index::state_at;
use cubefleet_tables::FaceletCube;

/// 10^18: a range of that many states.
const HUGE: u128 = 1_000_000_000_000_000_000;

/// Submits `spec` with the given chunks of lines after it.
async fn submit(
    client: &mut Client,
    spec: BatchSpec,
    chunks: Vec<Vec<String>>,
) -> Result<SubmitResponse, tonic::Status> {
    let mut requests = vec![SubmitRequest {
        part: Some(submit_request::Part::Spec(spec)),
    }];
    requests.extend(chunks.into_iter().map(|lines| SubmitRequest {
        part: Some(submit_request::Part::Chunk(LineChunk { lines })),
    }));
    client
        .batches
        .submit(tokio_stream::iter(requests))
        .await
        .map(|r| r.into_inner())
}

/// The spec of range batch `id`: `start..end` (two-phase to 20 moves).
fn range(id: &str, start: u128, end: u128, step: u64) -> BatchSpec {
    BatchSpec {
        batch_id: id.into(),
        mode: Some(two_phase(20)),
        range_start: start.to_string(),
        range_end: end.to_string(),
        range_step: step,
        ..BatchSpec::default()
    }
}

/// Batch `id`'s status.
async fn status(client: &mut Client, id: &str) -> BatchStatus {
    client
        .batches
        .get_batch(BatchRef {
            batch_id: id.into(),
        })
        .await
        .expect("status")
        .into_inner()
}

/// The number of stored results of batch `id` (jobs made).
async fn stored(client: &mut Client, id: &str) -> usize {
    client
        .batches
        .list_results(ResultsRequest {
            batch_id: id.into(),
            limit: 10_000,
            ..ResultsRequest::default()
        })
        .await
        .expect("results")
        .into_inner()
        .results
        .len()
}

/// Leases `n` jobs and checks each is the state its line names: `start + line * step`, with
/// that state index on its record. Returns the line indices.
async fn lease_checked(
    client: &mut Client,
    worker: &str,
    n: u32,
    start: u128,
    step: u128,
) -> Vec<u64> {
    let jobs = lease(client, worker, n).await;
    let mut lines = Vec::new();
    for j in jobs {
        let line = j.job_id & ((1 << 40) - 1);
        let index = start + u128::from(line) * step;
        let cube = state_at(index).expect("a state");
        assert_eq!(j.facelets, FaceletCube::from_cubie(&cube).to_string());
        let r = client
            .batches
            .get_job(JobRef { job_id: j.job_id })
            .await
            .expect("job")
            .into_inner();
        assert_eq!((r.state_index, r.input.as_str()), (index.to_string(), ""));
        lines.push(line);
    }
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_range_makes_jobs_only_when_leased_resumes_after_restart_and_cancels() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(Config::new(dir.path())).await;
    let mut client = server.client().await;
    let start = 5_000_000_000_000u128;
    let r = submit(&mut client, range("huge", start, start + HUGE, 1), vec![])
        .await
        .expect("submitted");
    assert_eq!(r.total, HUGE as u64);
    let s = status(&mut client, "huge").await;
    assert_eq!((s.kind.as_str(), s.made, s.leased), ("range", 0, 0));
    assert_eq!(s.queued, 1 << 40, "at most 2^40 jobs wait to be made");
    assert_eq!(
        stored(&mut client, "huge").await,
        0,
        "no job made at submission"
    );

    let w = register(&mut client, "w").await;
    let first = lease_checked(&mut client, &w, 7, start, 1).await;
    assert_eq!(first, (0..7).collect::<Vec<_>>());
    assert_eq!(status(&mut client, "huge").await.made, 7);
    assert_eq!(
        stored(&mut client, "huge").await,
        7,
        "exactly what was leased"
    );
    let second = lease_checked(&mut client, &w, 5, start, 1).await;
    assert_eq!(second, (7..12).collect::<Vec<_>>());

    // a restart: the leases are gone (the 12 jobs are queued again), `made` stays
    server.stop().await;
    let server = Server::start(Config::new(dir.path())).await;
    let mut client = server.client().await;
    let s = status(&mut client, "huge").await;
    assert_eq!(s.made, 12);
    let w = register(&mut client, "w2").await;
    let after = lease_checked(&mut client, &w, 20, start, 1).await;
    let lines: BTreeSet<u64> = after.iter().copied().collect();
    assert_eq!(after.len(), 20, "no line twice");
    assert_eq!(lines, (0..20).collect(), "no hole, none made twice");
    assert_eq!(status(&mut client, "huge").await.made, 20);
    assert_eq!(stored(&mut client, "huge").await, 20);

    // cancelled: nothing more is made, the leased jobs end when handed back
    let s = client
        .batches
        .cancel_batch(BatchRef {
            batch_id: "huge".into(),
        })
        .await
        .expect("cancel")
        .into_inner();
    assert_eq!(s.queued, 0);
    let held: Vec<JobProgress> = after
        .iter()
        .map(|&line| JobProgress {
            job_id: (1u64 << 40) + line,
            lower_bound: 0,
            nodes: 0,
            reason: String::new(),
        })
        .collect();
    client
        .workers
        .release(ReleaseRequest {
            worker_id: w.clone(),
            jobs: held,
        })
        .await
        .expect("release");
    assert!(lease(&mut client, &w, 10).await.is_empty());
    let s = status(&mut client, "huge").await;
    assert_eq!((s.queued, s.leased, s.made), (0, 0, 20));
    assert_eq!(
        s.cancelled,
        1 << 40,
        "every line it would make ends cancelled"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stepped_ranges_and_samples_make_their_states_and_bad_definitions_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(Config::new(dir.path())).await;
    let mut client = server.client().await;
    submit(&mut client, range("stepped", 1000, 1100, 7), vec![])
        .await
        .expect("submitted");
    assert_eq!(status(&mut client, "stepped").await.total, 15); // 1000, 1007, ..., 1098
    let w = register(&mut client, "w").await;
    let lines = lease_checked(&mut client, &w, 100, 1000, 7).await;
    assert_eq!(lines, (0..15).collect::<Vec<_>>(), "all 15, no more");
    assert_eq!(status(&mut client, "stepped").await.made, 15);

    let sample = BatchSpec {
        batch_id: "sample".into(),
        mode: Some(two_phase(20)),
        sample_count: 30,
        sample_seed: 7,
        ..BatchSpec::default()
    };
    submit(&mut client, sample.clone(), vec![])
        .await
        .expect("submitted");
    let jobs = lease(&mut client, &w, 100).await;
    assert_eq!(jobs.len(), 30);
    for j in &jobs {
        let r = client
            .batches
            .get_job(JobRef { job_id: j.job_id })
            .await
            .expect("job")
            .into_inner();
        let index = cubefleet_coordinator::range::sample_index(7, r.index);
        assert_eq!(r.state_index, index.to_string());
        let cube = state_at(index).expect("a state");
        assert_eq!(j.facelets, FaceletCube::from_cubie(&cube).to_string());
    }

    // resubmitting the same definition is idempotent; another one under the id is refused
    submit(&mut client, sample.clone(), vec![])
        .await
        .expect("the same sample");
    let other = BatchSpec {
        sample_seed: 8,
        ..sample.clone()
    };
    let e = submit(&mut client, other, vec![])
        .await
        .expect_err("another seed");
    assert!(e.message().contains("another definition"), "{e}");
    let file = BatchSpec {
        sample_count: 0,
        sample_seed: 0,
        ..sample
    };
    let e = submit(&mut client, file, vec![vec!["R U".into()]])
        .await
        .expect_err("a file under a sample's id");
    assert!(e.message().contains("another definition"), "{e}");
    // a range takes no lines
    let e = submit(
        &mut client,
        range("lines", 0, 10, 1),
        vec![vec!["R U".into()]],
    )
    .await
    .expect_err("lines for a range");
    assert!(e.message().contains("takes no lines"), "{e}");
    for (start, end, why) in [
        (10, 10, "START must be below END"),
        (0, 43_252_003_274_489_856_001, "past the last state"),
        (
            0,
            43_252_003_274_489_856_000,
            "use --step or split the range",
        ),
    ] {
        let e = submit(&mut client, range("bad", start, end, 1), vec![])
            .await
            .expect_err("a bad range");
        assert!(e.message().contains(why), "{e}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_histogram_verifies_every_solution_then_keeps_the_length_only() {
    use cubefleet_proto::{CompleteRequest, Completion};
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(Config::new(dir.path())).await;
    let mut client = server.client().await;
    // a range of one state whose solution the test knows: the one "R U" makes
    let cube = cubefleet_tables::parse_position("R U", cubefleet_tables::InputFormat::Auto)
        .expect("a position");
    let index = cubefleet_tables::index::index_of(&cube);
    let spec = BatchSpec {
        keep: cubefleet_proto::Keep::Histogram as i32,
        ..range("kept", index, index + 1, 1)
    };
    submit(&mut client, spec, vec![]).await.expect("submitted");
    let w = register(&mut client, "w").await;
    let id = lease(&mut client, &w, 1).await[0].job_id;
    let report = |solution: &str| Completion {
        job_id: id,
        status: "solved".into(),
        solution: solution.into(),
        has_solution: true,
        ..Completion::default()
    };
    let reporter = client.clone();
    let complete = |c: Completion| {
        let (mut client, w) = (reporter.clone(), w.clone());
        async move {
            client
                .workers
                .complete(CompleteRequest {
                    worker_id: w,
                    results: vec![c],
                })
                .await
                .expect("complete")
                .into_inner()
        }
    };
    let wrong = complete(report("R")).await;
    assert_eq!(
        (wrong.accepted, wrong.rejected.len()),
        (0, 1),
        "verified first"
    );
    lease(&mut client, &w, 1).await;
    let right = complete(report("U' R'")).await;
    assert_eq!(right.accepted, 1);
    let r = client
        .batches
        .get_job(JobRef { job_id: id })
        .await
        .expect("job")
        .into_inner();
    assert_eq!((r.status.as_str(), r.length), ("solved", 2));
    assert_eq!(r.solution, "", "the solution text is not kept");
    assert_eq!(r.state_index, index.to_string());
    let s = status(&mut client, "kept").await;
    assert_eq!((s.length_histogram.clone(), s.done), (vec![0, 0, 1], 1));
    server.stop().await;
}
