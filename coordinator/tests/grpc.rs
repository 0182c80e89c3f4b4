//! Integration tests of the coordinator over real sockets: a real server on `127.0.0.1:0`, a
//! real sled store in a temporary directory, and the real gRPC client.
//!
//! Positions are made from short scrambles, so a correct solution is the inverse scramble and
//! no lookup tables are needed.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::time::Duration;

mod common;

use common::{job, lease, optimal, register, two_phase, undo, Server};
use cubefleet_coordinator::{Clock, Config, Core, ManualClock, HEALTH_SERVICE};
use cubefleet_proto::client::Client;
use cubefleet_proto::{
    submit_request, BatchRef, BatchSpec, BatchStatus, CompleteRequest, Completion,
    HeartbeatRequest, JobProgress, JobResult, JobState, LeaseRequest, LeasedJob, LineChunk,
    ListBatchesRequest, LookupRequest, LookupResponse, Mode, RegisterRequest, ReleaseRequest,
    ResultsRequest, SubmitRequest, SubmitResponse,
};
use cubefleet_tables::symmetry::SYMMETRIES;
use cubefleet_tables::{parse_position, FaceletCube, InputFormat, MoveSeq};
use tempfile::TempDir;
use tokio_stream::StreamExt;

/// The solved cube as a facelet string.
const SOLVED: &str = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";

/// A config for a store in `dir` with short leases.
fn config(dir: &TempDir, lease: Duration) -> Config {
    let mut c = Config::new(dir.path());
    c.lease = lease;
    c
}

/// A coordinator with leases of `lease_secs` on a store in a fresh temporary directory, and a
/// client of it. Keep the directory until the server has stopped.
async fn start(lease_secs: u64) -> (TempDir, Server, Client) {
    start_on(lease_secs, Clock::system()).await
}

/// [`start`] with the coordinator's time read from `clock` (a manual clock the test moves).
async fn start_on(lease_secs: u64, clock: Clock) -> (TempDir, Server, Client) {
    let dir = TempDir::new().unwrap();
    let mut config = config(&dir, Duration::from_secs(lease_secs));
    config.clock = clock;
    let server = Server::start(config).await;
    let client = server.client().await;
    (dir, server, client)
}

/// The facelet string of a position given as moves or facelets.
fn facelets(position: &str) -> String {
    FaceletCube::from_cubie(&parse_position(position, InputFormat::Auto).unwrap()).to_string()
}

/// True when `solution` solves `position`.
fn solves(position: &str, solution: &str) -> bool {
    let cube = parse_position(position, InputFormat::Auto).unwrap();
    let moves = MoveSeq::parse(solution).unwrap();
    cube.apply_moves(&moves.0).is_solved()
}

/// The messages of a submission: `spec` first (when given), then `lines` in chunks of `chunk`
/// lines.
fn submission(spec: Option<BatchSpec>, lines: &[&str], chunk: usize) -> Vec<SubmitRequest> {
    let spec = spec.map(|spec| SubmitRequest {
        part: Some(submit_request::Part::Spec(spec)),
    });
    let chunks = lines.chunks(chunk.max(1)).map(|c| SubmitRequest {
        part: Some(submit_request::Part::Chunk(LineChunk {
            lines: c.iter().map(|s| s.to_string()).collect(),
        })),
    });
    spec.into_iter().chain(chunks).collect()
}

/// Sends `msgs` as one submission stream.
async fn submit_stream(
    client: &mut Client,
    msgs: Vec<SubmitRequest>,
) -> Result<SubmitResponse, tonic::Status> {
    client
        .batches
        .submit(tokio_stream::iter(msgs))
        .await
        .map(|r| r.into_inner())
}

/// Submits `lines` as batch `id` (named `test batch {id}`, priority 0) in chunks of `chunk`
/// lines.
async fn submit(
    client: &mut Client,
    id: &str,
    mode: Mode,
    lines: &[&str],
    chunk: usize,
) -> Result<SubmitResponse, tonic::Status> {
    let spec = BatchSpec {
        batch_id: id.to_string(),
        name: format!("test batch {id}"),
        mode: Some(mode),
        priority: 0,
        ..BatchSpec::default()
    };
    submit_stream(client, submission(Some(spec), lines, chunk)).await
}

/// Like [`submit`], for a submission that must be accepted.
async fn submit_ok(
    client: &mut Client,
    id: &str,
    mode: Mode,
    lines: &[&str],
    chunk: usize,
) -> SubmitResponse {
    submit(client, id, mode, lines, chunk).await.unwrap()
}

/// Names batch `id`.
fn batch_ref(id: &str) -> BatchRef {
    BatchRef {
        batch_id: id.to_string(),
    }
}

/// The status of batch `id`, or the error of asking for it.
async fn try_status(client: &mut Client, id: &str) -> Result<BatchStatus, tonic::Status> {
    client
        .batches
        .get_batch(batch_ref(id))
        .await
        .map(|r| r.into_inner())
}

/// The status of batch `id`, which must exist.
async fn status(client: &mut Client, id: &str) -> BatchStatus {
    try_status(client, id).await.unwrap()
}

/// Cancels batch `id`; returns its status after the cancellation.
async fn cancel_batch(client: &mut Client, id: &str) -> BatchStatus {
    let r = client.batches.cancel_batch(batch_ref(id)).await;
    r.unwrap().into_inner()
}

/// Every batch, oldest first, or the error of asking for them.
async fn try_list_batches(client: &mut Client) -> Result<Vec<BatchStatus>, tonic::Status> {
    client
        .batches
        .list_batches(ListBatchesRequest {})
        .await
        .map(|r| r.into_inner().batches)
}

/// Every batch, oldest first.
async fn list_batches(client: &mut Client) -> Vec<BatchStatus> {
    try_list_batches(client).await.unwrap()
}

/// One page of batch `id`'s results with `status` ("" for any), from line `from_index`, at most
/// `limit` (0: no limit); returns the line indices on the page and the index to ask for next.
async fn result_page(
    client: &mut Client,
    id: &str,
    status: &str,
    from_index: u64,
    limit: u64,
) -> (Vec<u64>, u64) {
    let page = client
        .batches
        .list_results(ResultsRequest {
            batch_id: id.to_string(),
            status: status.to_string(),
            from_index,
            limit,
        })
        .await
        .unwrap()
        .into_inner();
    (
        page.results.iter().map(|r| r.index).collect(),
        page.next_index,
    )
}

/// Looks `position` up in the store, or returns the error of asking.
async fn try_lookup(client: &mut Client, position: &str) -> Result<LookupResponse, tonic::Status> {
    let request = LookupRequest {
        position: position.to_string(),
    };
    client.batches.lookup(request).await.map(|r| r.into_inner())
}

/// Looks `position` (a valid one) up in the store.
async fn lookup(client: &mut Client, position: &str) -> LookupResponse {
    try_lookup(client, position).await.unwrap()
}

/// Every result of a batch, via the server stream.
async fn all_results(client: &mut Client, id: &str) -> Vec<JobResult> {
    let mut stream = client
        .batches
        .stream_results(ResultsRequest {
            batch_id: id.to_string(),
            ..ResultsRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while let Some(r) = stream.next().await {
        out.push(r.unwrap());
    }
    out
}

/// Leases up to `max_jobs` jobs for `worker` and checks that exactly `expected` came.
async fn lease_exactly(
    client: &mut Client,
    worker: &str,
    max_jobs: u32,
    expected: usize,
) -> Vec<LeasedJob> {
    let jobs = lease(client, worker, max_jobs).await;
    assert_eq!(jobs.len(), expected, "jobs leased by {worker}: {jobs:?}");
    jobs
}

/// The progress of `jobs` (job id, lower bound), each with `nodes` searched.
fn progress(jobs: &[(u64, u32)], nodes: u64) -> Vec<JobProgress> {
    jobs.iter()
        .map(|&(job_id, lower_bound)| JobProgress {
            job_id,
            lower_bound,
            nodes,
            reason: String::new(),
        })
        .collect()
}

/// Sends a heartbeat for `jobs` (job id, lower bound); returns the jobs to cancel.
async fn heartbeat(client: &mut Client, worker: &str, jobs: &[(u64, u32)]) -> Vec<u64> {
    client
        .workers
        .heartbeat(HeartbeatRequest {
            worker_id: worker.to_string(),
            jobs: progress(jobs, 1000),
        })
        .await
        .unwrap()
        .into_inner()
        .cancel
}

/// Hands `jobs` (job id, lower bound) back unfinished, each with `nodes` searched; returns how
/// many went back to the queue.
async fn release(client: &mut Client, worker: &str, jobs: &[(u64, u32)], nodes: u64) -> u32 {
    client
        .workers
        .release(ReleaseRequest {
            worker_id: worker.to_string(),
            jobs: progress(jobs, nodes),
        })
        .await
        .unwrap()
        .into_inner()
        .released
}

/// A "solved" completion of `job_id` with `solution`.
fn solved(job_id: u64, solution: &str) -> Completion {
    Completion {
        job_id,
        status: "solved".into(),
        solution: solution.to_string(),
        optimal: false,
        lower_bound: 0,
        nodes: 10,
        millis: 1.0,
        has_solution: true,
        moves: Vec::new(),
        // as a worker before the status enum (protocol revision 3) sends it: the text only
        result_status: 0,
        coset: None,
        coset_samples: Vec::new(),
    }
}

/// A "cancelled" completion of `job_id`: the worker gives the job up.
fn give_up(job_id: u64) -> Completion {
    Completion {
        job_id,
        status: "cancelled".into(),
        ..Completion::default()
    }
}

/// Correct completions of every job in `jobs` (each leased from one of `scrambles`): the
/// scramble undone.
fn undo_all(jobs: &[LeasedJob], scrambles: &[&'static str]) -> Vec<Completion> {
    let by_job = scrambles_of(jobs, scrambles);
    jobs.iter()
        .map(|j| solved(j.job_id, &undo(by_job[&j.job_id])))
        .collect()
}

#[track_caller]
/// Checks that the first rejection gives a reason containing `reason`.
fn assert_refused_for(rejected: &[(u64, String)], reason: &str) {
    assert!(rejected[0].1.contains(reason), "{}", rejected[0].1);
}

/// Reports `results`; returns (accepted, rejections).
async fn complete(
    client: &mut Client,
    worker: &str,
    results: Vec<Completion>,
) -> (u32, Vec<(u64, String)>) {
    let r = client
        .workers
        .complete(CompleteRequest {
            worker_id: worker.to_string(),
            results,
        })
        .await
        .unwrap()
        .into_inner();
    (
        r.accepted,
        r.rejected
            .into_iter()
            .map(|x| (x.job_id, x.reason))
            .collect(),
    )
}

/// The scramble behind each leased job, found through its facelets.
fn scrambles_of(jobs: &[LeasedJob], scrambles: &[&'static str]) -> HashMap<u64, &'static str> {
    let by_facelets: HashMap<String, &'static str> =
        scrambles.iter().map(|s| (facelets(s), *s)).collect();
    jobs.iter()
        .map(|j| {
            let s = by_facelets
                .get(&j.facelets)
                .unwrap_or_else(|| panic!("leased an unknown position {}", j.facelets));
            (j.job_id, *s)
        })
        .collect()
}

/// A facelet string with one corner (URF) twisted clockwise in place.
fn twisted_corner() -> String {
    let mut s: Vec<char> = SOLVED.chars().collect();
    // U9, R1, F3 are the stickers of the URF corner
    s[8] = 'R';
    s[9] = 'F';
    s[20] = 'U';
    s.into_iter().collect()
}

/// A facelet string with one U sticker painted R: eight U, ten R.
fn wrong_counts() -> String {
    let mut s: Vec<char> = SOLVED.chars().collect();
    s[0] = 'R';
    s.into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submission_with_bad_lines_reports_them_and_queues_the_rest() {
    let (_dir, server, mut c) = start(30).await;
    let twisted = twisted_corner();
    let counts = wrong_counts();
    let lines = [
        "R U",
        "R Q U",
        counts.as_str(),
        "F R'",
        twisted.as_str(),
        "U2 B",
        "D L2",
    ];
    // chunks of 2 lines: line numbers must run on across chunks
    let r = submit_ok(&mut c, "mixed", two_phase(20), &lines, 2).await;
    assert_eq!(r.batch_id, "mixed");
    assert_eq!(r.total, 7);
    assert_eq!(r.invalid, 3);
    assert_eq!(r.from_store, 0);

    let s = status(&mut c, "mixed").await;
    assert_eq!(s.total, 7);
    assert_eq!(s.queued, 4);
    assert_eq!(s.invalid, 3);
    assert_eq!(s.leased + s.done + s.cancelled, 0);
    assert!(!s.cancelled_batch);
    assert_eq!(s.name, "test batch mixed");

    let results = all_results(&mut c, "mixed").await;
    assert_eq!(results.len(), 7);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.index, i as u64, "results in line order");
        assert_eq!(r.input, lines[i]);
        assert_eq!(r.batch_id, "mixed");
    }
    let invalid = |i: usize| {
        let r = &results[i];
        assert_eq!(r.state, JobState::Invalid as i32, "line {i}: {r:?}");
        assert_eq!(r.status, "invalid");
        assert!(r.facelets.is_empty());
        r.error.clone()
    };
    assert!(invalid(1).contains("unknown move `Q`"), "{}", invalid(1));
    assert!(invalid(2).contains("appears"), "{}", invalid(2));
    assert!(invalid(4).contains("twisted"), "{}", invalid(4));
    for i in [0, 3, 5, 6] {
        let r = &results[i];
        assert_eq!(r.state, JobState::Queued as i32, "line {i}: {r:?}");
        assert!(r.error.is_empty());
        assert_eq!(r.facelets, facelets(lines[i]));
    }

    // a page, and a status filter
    let (idx, next_index) = result_page(&mut c, "mixed", "", 2, 3).await;
    assert_eq!(idx, vec![2, 3, 4]);
    assert_eq!(next_index, 5);
    let (idx, next_index) = result_page(&mut c, "mixed", "invalid", 0, 0).await;
    assert_eq!(idx, vec![1, 2, 4]);
    assert_eq!(next_index, 7);

    // the batch is listed; an unknown one is not found
    let list = list_batches(&mut c).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].batch_id, "mixed");
    let err = try_status(&mut c, "nope").await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::NotFound);

    // a stream that does not start with the spec is refused
    let err = submit_stream(&mut c, submission(None, &["R"], 1))
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_complete_verify_and_reject() {
    let (_dir, server, mut c) = start(30).await;
    let scrambles = ["R U F'", "D2 L B", "U R2 F"];
    submit_ok(&mut c, "work", two_phase(20), &scrambles, 10).await;
    let w = register(&mut c, "worker-1").await;
    assert!(!w.is_empty());

    let jobs = lease(&mut c, &w, 2).await;
    assert_eq!(jobs.len(), 2, "at most max_jobs jobs");
    let s = status(&mut c, "work").await;
    assert_eq!((s.queued, s.leased), (1, 2));
    for j in &jobs {
        assert_eq!(j.mode, Some(two_phase(20)));
        assert_eq!(job(&mut c, j.job_id).await.state, JobState::Leased as i32);
    }

    // correct solutions: done
    let good = undo_all(&jobs, &scrambles);
    let (accepted, rejected) = complete(&mut c, &w, good.clone()).await;
    assert_eq!((accepted, rejected.len()), (2, 0), "{rejected:?}");
    let s = status(&mut c, "work").await;
    assert_eq!((s.queued, s.leased, s.done), (1, 0, 2));
    assert_eq!(s.length_histogram.get(3), Some(&2), "{s:?}");
    for j in &jobs {
        let r = job(&mut c, j.job_id).await;
        assert_eq!(r.state, JobState::Done as i32);
        assert_eq!(r.status, "solved");
        assert_eq!(r.length, 3);
        assert!(solves(&r.facelets, &r.solution));
        assert!(!r.from_store);
    }

    // the same results again: harmless, nothing counted twice
    let (accepted, rejected) = complete(&mut c, &w, good).await;
    assert_eq!((accepted, rejected.len()), (2, 0));
    let s2 = status(&mut c, "work").await;
    assert_eq!((s2.queued, s2.leased, s2.done), (1, 0, 2));
    assert_eq!(s2.length_histogram, s.length_histogram);
    assert_eq!(server.core.counters().0.completed, 2);

    // a wrong solution: refused with the reason, counted, the job back in the queue
    let third = lease_exactly(&mut c, &w, 10, 1).await;
    let id = third[0].job_id;
    let scramble = scrambles_of(&third, &scrambles)[&id];
    let (accepted, rejected) = complete(&mut c, &w, vec![solved(id, "R U")]).await;
    assert_eq!(accepted, 0);
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].0, id);
    assert_refused_for(&rejected, "does not solve");
    assert_eq!(server.core.counters().0.rejected, 1);
    let worker = server
        .core
        .workers()
        .into_iter()
        .find(|(_, info)| info.name == "worker-1")
        .unwrap()
        .1;
    assert_eq!((worker.completed, worker.rejected), (2, 1));
    let r = job(&mut c, id).await;
    assert_eq!(r.state, JobState::Queued as i32);
    assert!(r.solution.is_empty());
    let s = status(&mut c, "work").await;
    assert_eq!((s.queued, s.leased, s.done), (1, 0, 2));

    // it can be leased again (by another worker); a solution that does not parse is refused too
    let w2 = register(&mut c, "worker-2").await;
    assert_ne!(w, w2);
    let again = lease_exactly(&mut c, &w2, 10, 1).await;
    assert_eq!(again[0].job_id, id);
    let (_, rejected) = complete(&mut c, &w2, vec![solved(id, "R X")]).await;
    assert_eq!(rejected.len(), 1);
    assert_refused_for(&rejected, "does not parse");
    lease_exactly(&mut c, &w2, 10, 1).await;
    // the answer as turn numbers: the coordinator writes out its text
    let undone = undo(scramble);
    let as_moves = Completion {
        moves: MoveSeq::parse(&undone).unwrap().indices(),
        ..solved(id, "")
    };
    let (accepted, rejected) = complete(&mut c, &w2, vec![as_moves]).await;
    assert_eq!((accepted, rejected.len()), (1, 0));
    assert_eq!(job(&mut c, id).await.solution, undone);
    let s = status(&mut c, "work").await;
    assert_eq!((s.queued, s.leased, s.done), (0, 0, 3));
    assert!(lease(&mut c, &w2, 10).await.is_empty());

    // a solution longer than the batch's target is refused
    submit_ok(&mut c, "short", two_phase(4), &["R U F"], 10).await;
    let jobs = lease_exactly(&mut c, &w, 10, 1).await;
    let long = "U D U' D' F' U' R'"; // 7 moves, solves R U F
    assert!(solves("R U F", long));
    let (accepted, rejected) = complete(&mut c, &w, vec![solved(jobs[0].job_id, long)]).await;
    assert_eq!(accepted, 0);
    assert_eq!(rejected.len(), 1);
    assert_refused_for(&rejected, "above the target 4");
    assert_eq!(server.core.counters().0.rejected, 3);
    let r = job(&mut c, jobs[0].job_id).await;
    assert_eq!(r.state, JobState::Queued as i32);
    let jobs = lease(&mut c, &w, 10).await;
    let (accepted, _) = complete(&mut c, &w, vec![solved(jobs[0].job_id, "F' U' R'")]).await;
    assert_eq!(accepted, 1);
    assert_eq!(status(&mut c, "short").await.done, 1);

    // watching a finished batch: one status, then the stream ends
    let mut watch = c
        .batches
        .watch_batch(batch_ref("work"))
        .await
        .unwrap()
        .into_inner();
    let first = watch.next().await.unwrap().unwrap();
    assert_eq!((first.done, first.total), (3, 3));
    assert!(watch.next().await.is_none());

    // a completion of a job that does not exist is refused
    let (_, rejected) = complete(&mut c, &w, vec![solved(12345, "R")]).await;
    assert_eq!(rejected.len(), 1);
    server.stop().await;
}

/// A lease by seconds of work: the count follows the mean search time of the results
/// accepted (1 s a job before any; each never longer than the lease the coordinator saw),
/// and is never below one job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_by_seconds_follows_the_mean_search_time() {
    let clock = ManualClock::new();
    let (_dir, _server, mut c) = start_on(30, clock.clock()).await;
    let scrambles = [
        "R U F'", "D2 L B", "U R2 F", "L2 D B'", "F R' U2", "B D2 L'", "R2 F' D",
    ];
    submit_ok(&mut c, "timed", two_phase(20), &scrambles, 10).await;
    let w = register(&mut c, "timed").await;
    let by_seconds = |mut c: Client, w: String, max_seconds: f64| async move {
        c.workers
            .lease(LeaseRequest {
                worker_id: w,
                max_jobs: 100,
                wait_millis: 0,
                max_seconds,
            })
            .await
            .unwrap()
            .into_inner()
            .jobs
    };
    let first = by_seconds(c.clone(), w.clone(), 2.5).await;
    assert_eq!(first.len(), 2, "1 s a job before any result");
    let mut done = undo_all(&first, &scrambles);
    for r in &mut done {
        r.millis = 500.0;
    }
    // a search time counts for no longer than the coordinator saw its lease held: the
    // 500 ms reported must have passed on its clock
    clock.advance(Duration::from_millis(600));
    let (accepted, rejected) = complete(&mut c, &w, done).await;
    assert_eq!((accepted, rejected.len()), (2, 0));
    assert_eq!(by_seconds(c.clone(), w.clone(), 2.0).await.len(), 4);
    assert_eq!(by_seconds(c.clone(), w.clone(), 0.1).await.len(), 1);
}

/// A lease with `wait_millis` on an empty queue waits for a submission and answers as soon
/// as jobs are queued; without jobs it answers empty at its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_lease_long_polls_until_jobs_are_queued() {
    let (_dir, server, mut c) = start(30).await;
    let w = register(&mut c, "poller").await;
    let long_poll = |mut c: Client, w: String, wait_millis: u32| async move {
        let t = std::time::Instant::now();
        let jobs = c
            .workers
            .lease(LeaseRequest {
                worker_id: w,
                max_jobs: 10,
                wait_millis,
                max_seconds: 0.0,
            })
            .await
            .unwrap()
            .into_inner()
            .jobs;
        (jobs, t.elapsed())
    };
    // nothing queued: empty after about the wait
    let (jobs, took) = long_poll(c.clone(), w.clone(), 300).await;
    assert!(jobs.is_empty());
    assert!(
        took >= Duration::from_millis(250),
        "answered after {took:?}"
    );
    // a submission during the wait is leased at once: the poll waits once the core saw the
    // session ask again (it watches the queue from before it asks)
    // (the poller is the one session listed)
    let asked = |core: &Core| core.workers().pop().and_then(|(_, i)| i.asked);
    let before = asked(&server.core);
    assert!(before.is_some(), "the first poll asked");
    let waiting = tokio::spawn(long_poll(c.clone(), w.clone(), 10_000));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while asked(&server.core) == before {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the poll never asked"
        );
        tokio::time::sleep(Duration::from_millis(5)).await; // polls the condition
    }
    submit_ok(&mut c, "polled", two_phase(20), &["R U F'", "D2 L B"], 10).await;
    let (jobs, took) = waiting.await.unwrap();
    assert_eq!(jobs.len(), 2);
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
    assert_eq!(status(&mut c, "polled").await.leased, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_lease_returns_the_job_with_its_lower_bound() {
    let clock = ManualClock::new();
    let (_dir, server, mut c) = start_on(2, clock.clock()).await;
    submit_ok(&mut c, "opt", optimal(), &["R U F'"], 10).await;
    let w = register(&mut c, "slow").await;
    let jobs = lease_exactly(&mut c, &w, 10, 1).await;
    let id = jobs[0].job_id;
    assert_eq!(jobs[0].lower_bound, 0);
    assert_eq!(jobs[0].mode, Some(optimal()));

    // progress before the deadline, then silence
    assert!(heartbeat(&mut c, &w, &[(id, 2)]).await.is_empty());
    assert_eq!(job(&mut c, id).await.lower_bound, 2);
    clock.advance(Duration::from_secs(2) - Duration::from_nanos(1));
    server.sweep().await;
    assert_eq!(status(&mut c, "opt").await.leased, 1, "a nanosecond early");
    clock.advance(Duration::from_nanos(1));
    server.sweep().await;
    let s = status(&mut c, "opt").await;
    assert_eq!((s.queued, s.leased, s.done), (1, 0, 0));
    let r = job(&mut c, id).await;
    assert_eq!(r.state, JobState::Queued as i32);
    assert_eq!(r.lower_bound, 2, "the progress survives the expiry");
    assert_eq!(server.core.counters().0.lease_expiries, 1);

    // the late worker hears that the job is no longer its own
    assert_eq!(heartbeat(&mut c, &w, &[(id, 3)]).await, vec![id]);
    assert_eq!(job(&mut c, id).await.lower_bound, 2);

    // the next lease, by another session, starts from nothing: a bound is its session's own
    // claim, never the start of another's proof; the record keeps it as progress
    let w2 = register(&mut c, "fresh").await;
    let jobs = lease_exactly(&mut c, &w2, 10, 1).await;
    assert_eq!(jobs[0].job_id, id);
    assert_eq!(jobs[0].lower_bound, 0);

    // the late worker's wrong answer or give-up does not take the job from its new holder
    let (accepted, rejected) = complete(&mut c, &w, vec![solved(id, "R")]).await;
    assert_eq!((accepted, rejected.len()), (0, 1));
    complete(&mut c, &w, vec![give_up(id)]).await;
    let r = job(&mut c, id).await;
    assert_eq!(r.state, JobState::Leased as i32);
    assert!(heartbeat(&mut c, &w2, &[(id, 2)]).await.is_empty());
    let s = status(&mut c, "opt").await;
    assert_eq!((s.queued, s.leased), (0, 1));

    // an optimal batch takes only proven answers: they are reused for every symmetric copy
    let (accepted, rejected) = complete(&mut c, &w2, vec![solved(id, &undo("R U F'"))]).await;
    assert_eq!(accepted, 0);
    assert_refused_for(&rejected, "proven");
    let jobs = lease(&mut c, &w2, 10).await;
    assert_eq!(
        (jobs.len(), jobs[0].job_id),
        (1, id),
        "a refused job is leased again"
    );

    // a solution shorter than a proven bound is a lie
    assert!(heartbeat(&mut c, &w2, &[(id, 4)]).await.is_empty());
    let mut lie = solved(id, &undo("R U F'"));
    lie.optimal = true;
    let (accepted, rejected) = complete(&mut c, &w2, vec![lie]).await;
    assert_eq!(accepted, 0);
    assert_refused_for(&rejected, "lower bound");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_keep_leases_and_cancellation_reaches_workers() {
    let clock = ManualClock::new();
    let lease_time = Duration::from_secs(2);
    let (_dir, server, mut c) = start_on(2, clock.clock()).await;
    submit_ok(
        &mut c,
        "long",
        optimal(),
        &["R U", "F D", "L B", "U2 R"],
        10,
    )
    .await;
    let w = register(&mut c, "busy").await;
    let jobs = lease_exactly(&mut c, &w, 1, 1).await;
    let id = jobs[0].job_id;

    // heartbeats for ten lease lengths, each a nanosecond before the lease would end: still
    // leased
    for bound in 1..=10 {
        assert!(heartbeat(&mut c, &w, &[(id, bound / 3)]).await.is_empty());
        clock.advance(lease_time - Duration::from_nanos(1));
        server.sweep().await;
    }
    let s = status(&mut c, "long").await;
    assert_eq!((s.queued, s.leased), (3, 1));
    assert_eq!(job(&mut c, id).await.state, JobState::Leased as i32);

    // cancel: queued jobs are cancelled at once, the worker hears of its job
    let s = cancel_batch(&mut c, "long").await;
    assert!(s.cancelled_batch);
    assert_eq!((s.queued, s.leased, s.cancelled), (0, 1, 3));
    assert!(lease(&mut c, &w, 10).await.is_empty());
    assert_eq!(heartbeat(&mut c, &w, &[(id, 2)]).await, vec![id]);
    // the worker gives it up: cancelled, not queued
    complete(&mut c, &w, vec![give_up(id)]).await;
    let s = status(&mut c, "long").await;
    assert_eq!((s.queued, s.leased, s.cancelled), (0, 0, 4));
    let r = job(&mut c, id).await;
    assert_eq!(r.state, JobState::Cancelled as i32);
    assert_eq!(r.status, "cancelled");
    for r in all_results(&mut c, "long").await {
        assert_eq!(r.state, JobState::Cancelled as i32);
    }

    // a cancelled batch's leased job that nobody reports on ends cancelled when its lease expires
    submit_ok(&mut c, "gone", optimal(), &["R U", "F D"], 10).await;
    lease_exactly(&mut c, &w, 1, 1).await;
    cancel_batch(&mut c, "gone").await;
    clock.advance(lease_time);
    server.sweep().await;
    let s = status(&mut c, "gone").await;
    assert_eq!(s.leased, 0);
    assert_eq!((s.queued, s.cancelled), (0, 2));
    assert!(lease(&mut c, &w, 10).await.is_empty());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn higher_priority_first_and_released_jobs_keep_their_progress() {
    let (_dir, server, mut c) = start(30).await;
    submit_ok(&mut c, "low", optimal(), &["R U", "F D"], 10).await;
    let spec = BatchSpec {
        batch_id: "high".into(),
        name: "urgent".into(),
        mode: Some(optimal()),
        priority: 5,
        ..BatchSpec::default()
    };
    submit_stream(&mut c, submission(Some(spec), &["L B", "U2 R"], 10))
        .await
        .unwrap();
    let w = register(&mut c, "w").await;
    let jobs = lease(&mut c, &w, 3).await;
    let order = scrambles_of(&jobs, &["R U", "F D", "L B", "U2 R"]);
    let leased: Vec<&str> = jobs.iter().map(|j| order[&j.job_id]).collect();
    assert_eq!(
        leased,
        vec!["L B", "U2 R", "R U"],
        "priority, then line order"
    );

    // release on drain: back to the queue with the bound reached
    let progress: Vec<(u64, u32)> = jobs.iter().map(|j| (j.job_id, 1)).collect();
    let released = release(&mut c, &w, &progress, 5).await;
    assert_eq!(released, 3);
    assert_eq!(status(&mut c, "high").await.queued, 2);
    assert_eq!(status(&mut c, "low").await.queued, 2);
    let again = lease_exactly(&mut c, &w, 10, 4).await;
    for j in &again {
        let expected = u32::from(jobs.iter().any(|k| k.job_id == j.job_id));
        assert_eq!(j.lower_bound, expected, "{j:?}");
    }
    // a job not held is not released
    let other = register(&mut c, "someone-else").await;
    let released = release(&mut c, &other, &[(again[0].job_id, 0)], 0).await;
    assert_eq!(released, 0);
    assert_eq!(status(&mut c, "high").await.leased, 2);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resubmitting_a_batch_is_idempotent() {
    let (_dir, server, mut c) = start(30).await;
    let lines = ["R U", "nonsense", "F D'", "B2 L"];
    let first = submit_ok(&mut c, "again", two_phase(20), &lines, 3).await;
    assert_eq!((first.total, first.invalid), (4, 1));
    let before = status(&mut c, "again").await;

    let second = submit_ok(&mut c, "again", two_phase(20), &lines, 1).await;
    assert_eq!(second.batch_id, "again");
    assert_eq!(second.total, 4);
    assert_eq!(second.invalid, 1, "counts describe the whole batch");
    let after = status(&mut c, "again").await;
    assert_eq!(
        (after.total, after.queued, after.invalid),
        (before.total, before.queued, before.invalid)
    );
    assert_eq!(after.created_unix_ms, before.created_unix_ms);
    let results = all_results(&mut c, "again").await;
    assert_eq!(results.len(), 4);
    assert_eq!(list_batches(&mut c).await.len(), 1);

    // only four jobs to lease
    let w = register(&mut c, "w").await;
    assert_eq!(lease(&mut c, &w, 100).await.len(), 3);

    // a resubmission that goes further appends the new lines only
    let mut more = lines.to_vec();
    more.push("U F");
    let third = submit_ok(&mut c, "again", two_phase(20), &more, 2).await;
    assert_eq!(third.total, 5);
    let s = status(&mut c, "again").await;
    assert_eq!((s.total, s.queued, s.leased, s.invalid), (5, 1, 3, 1));
    assert_eq!(all_results(&mut c, "again").await[4].input, "U F");

    // the same id with another mode is refused
    let err = submit(&mut c, "again", optimal(), &lines, 2)
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert_eq!(status(&mut c, "again").await.total, 5);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symmetric_and_inverse_copies_are_answered_from_the_store() {
    let (_dir, server, mut c) = start(30).await;
    let scramble = "R U F' D2 L";
    submit_ok(&mut c, "first", two_phase(20), &[scramble], 10).await;
    let w = register(&mut c, "w").await;
    let jobs = lease_exactly(&mut c, &w, 10, 1).await;
    let (accepted, _) = complete(&mut c, &w, vec![solved(jobs[0].job_id, &undo(scramble))]).await;
    assert_eq!(accepted, 1);

    // copies: the same, rotated (y ... y'), mirrored (L-R), inverted, and a rotated inverse
    let cube = parse_position(scramble, InputFormat::Moves).unwrap();
    let rotated = format!("y {scramble} y'");
    let mirrored = FaceletCube::from_cubie(&SYMMETRIES.conjugate(&cube, 1)).to_string();
    let inverse = undo(scramble);
    let rotated_inverse = format!("x2 {inverse} x2");
    let copies = [
        scramble.to_string(),
        rotated.clone(),
        mirrored.clone(),
        inverse.clone(),
        rotated_inverse,
    ];
    // they really are other positions
    let distinct: std::collections::HashSet<String> = copies.iter().map(|p| facelets(p)).collect();
    assert_eq!(distinct.len(), copies.len(), "{distinct:?}");
    let mut lines: Vec<&str> = copies.iter().map(String::as_str).collect();
    lines.push("B2 D"); // not solved before
    let r = submit_ok(&mut c, "second", two_phase(20), &lines, 10).await;
    assert_eq!(r.from_store, 5);
    let s = status(&mut c, "second").await;
    assert_eq!((s.done, s.queued), (5, 1));
    let results = all_results(&mut c, "second").await;
    for (i, r) in results.iter().take(5).enumerate() {
        assert_eq!(r.state, JobState::Done as i32, "{i}: {r:?}");
        assert!(r.from_store, "{i}");
        assert_eq!(r.status, "solved");
        assert_eq!(r.length, 5);
        assert_eq!(r.facelets, facelets(&copies[i]));
        assert!(
            solves(&copies[i], &r.solution),
            "{i}: `{}` does not solve `{}`",
            r.solution,
            copies[i]
        );
    }
    assert_eq!(results[5].state, JobState::Queued as i32);
    assert!(!results[5].from_store);
    let again = submit_ok(&mut c, "second", two_phase(20), &lines, 10).await;
    assert_eq!((again.total, again.from_store), (6, 5));

    // another mode is not answered from this one
    let r = submit_ok(&mut c, "other-mode", two_phase(19), &[scramble], 10).await;
    assert_eq!(r.from_store, 0);
    assert_eq!(status(&mut c, "other-mode").await.queued, 1);

    // lookup by position, for each copy
    for p in &copies {
        let found = lookup(&mut c, p).await;
        assert!(found.found, "{p}");
        let r = found.result.unwrap();
        assert!(
            solves(p, &r.solution),
            "`{}` does not solve {p}",
            r.solution
        );
        assert_eq!(r.facelets, facelets(p));
        assert_eq!(found.mode, Some(two_phase(20)));
    }
    assert!(!lookup(&mut c, "U R2 F2").await.found);
    let err = try_lookup(&mut c, &twisted_corner()).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_requeues_leases_and_keeps_results() {
    let dir = TempDir::new().unwrap();
    let scrambles = ["R U", "F D'", "L2 B", "U R'"];
    let (done_id, done_solution, leased_id, old_worker) = {
        let server = Server::start(config(&dir, Duration::from_secs(30))).await;
        let mut c = server.client().await;
        submit_ok(&mut c, "durable", two_phase(20), &scrambles, 10).await;
        let w = register(&mut c, "w").await;
        let jobs = lease_exactly(&mut c, &w, 2, 2).await;
        let by_job = scrambles_of(&jobs, &scrambles);
        let solution = undo(by_job[&jobs[0].job_id]);
        let (accepted, _) = complete(&mut c, &w, vec![solved(jobs[0].job_id, &solution)]).await;
        assert_eq!(accepted, 1);
        let s = status(&mut c, "durable").await;
        assert_eq!((s.queued, s.leased, s.done), (2, 1, 1));
        // a cancelled batch whose leased job is still out when the server stops
        submit_ok(&mut c, "dropped", optimal(), &["R U", "F D"], 10).await;
        assert_eq!(lease(&mut c, &w, 1).await.len(), 1);
        cancel_batch(&mut c, "dropped").await;
        drop(c);
        server.stop().await;
        (jobs[0].job_id, solution, jobs[1].job_id, w)
    };

    // the same data directory, the lease forgotten
    let server = Server::start(config(&dir, Duration::from_secs(30))).await;
    let mut c = server.client().await;
    let s = status(&mut c, "durable").await;
    assert_eq!((s.total, s.queued, s.leased, s.done), (4, 3, 0, 1));
    assert_eq!(s.length_histogram.get(2), Some(&1));
    let r = job(&mut c, done_id).await;
    assert_eq!(r.state, JobState::Done as i32);
    assert_eq!(r.solution, done_solution);
    assert!(solves(&r.facelets, &r.solution));
    let r = job(&mut c, leased_id).await;
    assert_eq!(r.state, JobState::Queued as i32);
    let s = status(&mut c, "dropped").await;
    assert!(s.cancelled_batch);
    assert_eq!((s.queued, s.leased, s.cancelled), (0, 0, 2));

    // registrations live in memory: a worker from before the restart is listed again when it
    // calls (its old leases are gone, so the heartbeat names nothing to stop)
    assert!(server.core.workers().is_empty());
    assert!(heartbeat(&mut c, &old_worker, &[]).await.is_empty());
    // listed by its public id, never by the secret it sends
    let listed: Vec<(String, String)> = server
        .core
        .workers()
        .into_iter()
        .map(|(id, w)| (id, w.name))
        .collect();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].1, "w");
    assert!(!old_worker.contains(&listed[0].0));

    // every unfinished job can be leased and finished
    let w = register(&mut c, "w-after").await;
    let jobs = lease_exactly(&mut c, &w, 10, 3).await;
    assert!(jobs.iter().any(|j| j.job_id == leased_id));
    assert_eq!(complete(&mut c, &w, undo_all(&jobs, &scrambles)).await.0, 3);
    let s = status(&mut c, "durable").await;
    assert_eq!((s.queued, s.leased, s.done), (0, 0, 4));
    // dedup survives the restart (the symmetry index is rebuilt from the records)
    let r = submit_ok(&mut c, "again", two_phase(20), &[scrambles[0]], 10).await;
    assert_eq!(r.from_store, 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_required_but_health_is_open() {
    let dir = TempDir::new().unwrap();
    let mut cfg = config(&dir, Duration::from_secs(30));
    cfg.token = Some("s3cret".into());
    let server = Server::start(cfg).await;

    let mut anon = Client::connect(&server.url, None).await.unwrap();
    let err = try_list_batches(&mut anon).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated);
    let err = anon
        .workers
        .register(RegisterRequest::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated);
    let err = submit(&mut anon, "x", two_phase(20), &["R"], 1)
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated);

    let mut wrong = Client::connect(&server.url, Some("guess")).await.unwrap();
    let err = try_list_batches(&mut wrong).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated);

    let mut ok = Client::connect(&server.url, Some("s3cret")).await.unwrap();
    let r = submit_ok(&mut ok, "x", two_phase(20), &["R"], 1).await;
    assert_eq!(r.total, 1);
    assert_eq!(list_batches(&mut ok).await.len(), 1);
    assert!(!register(&mut ok, "w").await.is_empty());

    // health needs no token
    let channel = tonic::transport::Endpoint::from_shared(server.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let r = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: HEALTH_SERVICE.to_string(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        r.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    server.stop().await;
}

/// Registration names the protocol revision both ways: the coordinator answers with its own,
/// so a newer worker can refuse it when too old, and still serves a worker that sends none
/// (an older build, whose results it understands).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_exchanges_protocol_revisions() {
    let (_dir, server, mut c) = start(30).await;
    for sent in [0, cubefleet_proto::PROTOCOL] {
        let r = c
            .workers
            .register(RegisterRequest {
                name: format!("speaks {sent}"),
                threads: 1,
                table_fingerprint: "test".into(),
                protocol: sent,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.protocol, cubefleet_proto::PROTOCOL);
        assert!(!r.worker_id.is_empty());
    }
    server.stop().await;
}
