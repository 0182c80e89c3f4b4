//! A lying worker against the real coordinator: a real server on `127.0.0.1:0`, a real sled
//! store, and a raw gRPC client that says what a buggy, old or hostile worker might (bounds
//! above the possible, claims of optimality it cannot have, odd notation, results for jobs it
//! does not hold, replayed and late results, results for cancelled batches). Every answer the
//! coordinator then stores must still be verified and correct.
//!
//! Positions are made from short scrambles, so a correct solution is the scramble undone and
//! no lookup tables are needed.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

mod common;

use common::{job, lease, optimal, register, two_phase, undo, Server};
use cubefleet_coordinator::{Clock, Config, ManualClock};
use cubefleet_proto::client::Client;
use cubefleet_proto::{
    mode, submit_request, BatchRef, BatchSpec, CompleteRequest, Completion, DepthLimited,
    HeartbeatRequest, JobProgress, JobResult, JobState, LineChunk, Metric, Mode, ReleaseRequest,
    SubmitRequest,
};
use cubefleet_tables::{parse_position, InputFormat, MoveSeq};
use tempfile::TempDir;

/// A coordinator with leases of `lease` on a store in a fresh temporary directory, a client of
/// it, and a registered worker id. Keep the directory until the server has stopped.
async fn start(lease: Duration) -> (TempDir, Server, Client, String) {
    start_on(lease, Clock::system()).await
}

/// [`start`] with the coordinator's time read from `clock` (a manual clock the test moves).
async fn start_on(lease: Duration, clock: Clock) -> (TempDir, Server, Client, String) {
    let dir = TempDir::new().unwrap();
    let mut config = Config::new(dir.path());
    config.lease = lease;
    config.clock = clock;
    let server = Server::start(config).await;
    let mut client = server.client().await;
    let worker = register(&mut client, "liar").await;
    (dir, server, client, worker)
}

fn depth_limited(max_depth: u32) -> Mode {
    Mode {
        kind: Some(mode::Kind::DepthLimited(DepthLimited {
            max_depth,
            metric: Metric::Htm as i32,
        })),
        timeout_seconds: 0.0,
        ..Default::default()
    }
}

/// Submits `lines` as batch `id` in `mode`.
async fn submit(client: &mut Client, id: &str, mode: Mode, lines: &[&str]) {
    let spec = SubmitRequest {
        part: Some(submit_request::Part::Spec(BatchSpec {
            batch_id: id.to_string(),
            name: format!("liar batch {id}"),
            mode: Some(mode),
            priority: 0,
            ..BatchSpec::default()
        })),
    };
    let chunk = SubmitRequest {
        part: Some(submit_request::Part::Chunk(LineChunk {
            lines: lines.iter().map(|s| s.to_string()).collect(),
        })),
    };
    client
        .batches
        .submit(tokio_stream::iter(vec![spec, chunk]))
        .await
        .unwrap();
}

/// The progress of job `job_id` with `lower_bound` proven.
fn progress(job_id: u64, lower_bound: u32) -> Vec<JobProgress> {
    vec![JobProgress {
        job_id,
        lower_bound,
        nodes: 1000,
        reason: String::new(),
    }]
}

/// Claims `lower_bound` for `job_id` in a heartbeat, then hands the job back with it.
async fn claim_and_release(client: &mut Client, worker: &str, job_id: u64, lower_bound: u32) {
    client
        .workers
        .heartbeat(HeartbeatRequest {
            worker_id: worker.to_string(),
            jobs: progress(job_id, lower_bound),
        })
        .await
        .unwrap();
    client
        .workers
        .release(ReleaseRequest {
            worker_id: worker.to_string(),
            jobs: progress(job_id, lower_bound),
        })
        .await
        .unwrap();
}

/// A "solved" completion of `job_id` with `solution`, claimed optimal with `lower_bound` when
/// `optimal`.
fn solved(job_id: u64, solution: &str, optimal: bool, lower_bound: u32) -> Completion {
    Completion {
        job_id,
        status: "solved".into(),
        solution: solution.to_string(),
        optimal,
        lower_bound,
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

/// Reports `results` as `worker`; returns (accepted, rejection reasons).
async fn complete(
    client: &mut Client,
    worker: &str,
    results: Vec<Completion>,
) -> (u32, Vec<String>) {
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
        r.rejected.into_iter().map(|x| x.reason).collect(),
    )
}

/// Checks that `r` is done with a solution of `position` of `length` moves at most, stored in
/// canonical notation, whose lower bound does not exceed its length.
#[track_caller]
fn assert_verified(r: &JobResult, position: &str, length: u32) {
    assert_eq!(r.state, JobState::Done as i32, "{r:?}");
    let moves = MoveSeq::parse(&r.solution).unwrap();
    let cube = parse_position(position, InputFormat::Auto).unwrap();
    assert!(cube.apply_moves(&moves.0).is_solved(), "{r:?}");
    assert!(r.length <= length, "{r:?}");
    assert!(r.lower_bound <= r.length, "{r:?}");
    assert_eq!(r.solution, moves.to_string(), "not canonical: {r:?}");
}

/// An identity of four turns (`R L R' L'`: R and L commute), to pad a solution.
const NOTHING: &str = "R L R' L'";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_above_the_possible_makes_no_long_solution_optimal() {
    let (_dir, server, mut client, liar) = start(Duration::from_secs(30)).await;
    let scramble = "R U F D";
    submit(&mut client, "opt", optimal(), &[scramble]).await;
    let id = lease(&mut client, &liar, 1).await[0].job_id;
    claim_and_release(&mut client, &liar, id, 40).await;
    // the resumed search starts from a bound that cannot exclude the 4-move optimum
    let again = lease(&mut client, &liar, 1).await;
    assert_eq!(again.len(), 1);
    assert!(
        again[0].lower_bound <= 4,
        "resumed from {}",
        again[0].lower_bound
    );
    // 40 moves "proven optimal"
    let long = format!("{} {}", [NOTHING; 9].join(" "), undo(scramble));
    let (accepted, rejected) =
        complete(&mut client, &liar, vec![solved(id, &long, true, 40)]).await;
    assert_eq!(accepted, 0, "a 40-move solution stored as optimal");
    assert!(rejected[0].contains("false claim"), "{rejected:?}");
    // 8 moves "proven optimal" (the position has a 4-move solution: its scramble undone)
    let again = lease(&mut client, &liar, 1).await;
    assert_eq!(again.len(), 1);
    let eight = format!("{NOTHING} {}", undo(scramble));
    let (accepted, _) = complete(&mut client, &liar, vec![solved(id, &eight, true, 8)]).await;
    assert_eq!(accepted, 0, "an 8-move solution stored as optimal");
    // the truth is still accepted, and stored with its bound
    let again = lease(&mut client, &liar, 1).await;
    assert_eq!(again.len(), 1);
    let truth = solved(id, &undo(scramble), true, 4);
    assert_eq!(complete(&mut client, &liar, vec![truth]).await.0, 1);
    let r = job(&mut client, id).await;
    assert_verified(&r, scramble, 4);
    assert!(r.optimal && r.lower_bound == 4, "{r:?}");
    server.stop().await;
}

/// A lying heartbeat on a facelet line (no move count to clamp its bound to) cannot make the
/// truth be refused: a verified solution shorter than the stored bound proves that bound
/// false, so the solution is stored (optimal, with its own bound) and the job does not fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verified_solution_below_a_lying_stored_bound_is_stored() {
    let (_dir, server, mut client, liar) = start(Duration::from_secs(30)).await;
    let scramble = "R U";
    let cube = parse_position(scramble, InputFormat::Auto).unwrap();
    let facelets = cubefleet_tables::FaceletCube::from_cubie(&cube).to_string();
    submit(&mut client, "faces", optimal(), &[&facelets]).await;
    let id = lease(&mut client, &liar, 1).await[0].job_id;
    // 19 is below God's number, so the coordinator cannot tell it from the truth
    claim_and_release(&mut client, &liar, id, 19).await;
    let honest = register(&mut client, "honest").await;
    for _ in 0..cubefleet_coordinator::MAX_REJECTIONS + 1 {
        let again = lease(&mut client, &honest, 1).await;
        assert_eq!(again.len(), 1, "the job is still there to solve");
        let (accepted, rejected) = complete(
            &mut client,
            &honest,
            vec![solved(id, &undo(scramble), true, 2)],
        )
        .await;
        if accepted == 1 {
            let r = job(&mut client, id).await;
            assert_verified(&r, &facelets, 2);
            assert!(r.optimal && r.lower_bound == 2, "{r:?}");
            server.stop().await;
            return;
        }
        assert!(!rejected.is_empty());
    }
    panic!("the 2-move truth was refused every time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_above_a_short_solution_is_refused_in_two_phase_too() {
    let (_dir, server, mut client, liar) = start(Duration::from_secs(30)).await;
    let scramble = "R U";
    submit(&mut client, "tp", two_phase(20), &[scramble]).await;
    let id = lease(&mut client, &liar, 1).await[0].job_id;
    // a bound above the solution sent with it is a contradiction
    let (accepted, rejected) = complete(
        &mut client,
        &liar,
        vec![solved(id, &undo(scramble), false, 9)],
    )
    .await;
    assert_eq!(accepted, 0, "{rejected:?}");
    assert_eq!(lease(&mut client, &liar, 1).await.len(), 1);
    assert_eq!(
        complete(
            &mut client,
            &liar,
            vec![solved(id, &undo(scramble), false, 0)]
        )
        .await
        .0,
        1
    );
    assert_verified(&job(&mut client, id).await, scramble, 2);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn none_within_is_accepted_only_where_possible() {
    let (_dir, server, mut client, liar) = start(Duration::from_secs(30)).await;
    let scramble = "R U F";
    let none_within = |job_id, lower_bound| Completion {
        job_id,
        status: "none_within".into(),
        lower_bound,
        ..Completion::default()
    };
    // depth 20: every position has a solution that short
    submit(&mut client, "d20", depth_limited(20), &[scramble]).await;
    let id = lease(&mut client, &liar, 1).await[0].job_id;
    let (accepted, rejected) = complete(&mut client, &liar, vec![none_within(id, 21)]).await;
    assert_eq!(accepted, 0, "none_within 20 stored for a 3-move position");
    assert_eq!(rejected.len(), 1);
    // depth 5: the line itself names a 3-move solution
    submit(&mut client, "d5", depth_limited(5), &[scramble]).await;
    let mut ids: Vec<u64> = lease(&mut client, &liar, 2)
        .await
        .iter()
        .map(|j| j.job_id)
        .collect();
    ids.sort_unstable();
    let d5 = *ids.last().unwrap();
    let (accepted, _) = complete(&mut client, &liar, vec![none_within(d5, 6)]).await;
    assert_eq!(accepted, 0, "none_within 5 stored for a 3-move position");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_notation_is_stored_canonically() {
    let (_dir, server, mut client, liar) = start(Duration::from_secs(30)).await;
    let scramble = "R2 U";
    submit(&mut client, "odd", two_phase(20), &[scramble]).await;
    let id = lease(&mut client, &liar, 1).await[0].job_id;
    // "R2'" is R2, written oddly
    assert_eq!(
        complete(&mut client, &liar, vec![solved(id, "U' R2'", false, 0)])
            .await
            .0,
        1
    );
    let r = job(&mut client, id).await;
    assert_eq!(r.solution, "U' R2");
    assert_verified(&r, scramble, 2);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_for_other_jobs_replayed_late_or_cancelled_change_nothing() {
    let clock = ManualClock::new();
    let (_dir, server, mut client, liar) = start_on(Duration::from_secs(1), clock.clock()).await;
    let honest = register(&mut client, "honest").await;
    let (a, b) = ("R U F", "D L B");
    submit(&mut client, "mix", two_phase(20), &[a, b]).await;
    let mut jobs = lease(&mut client, &liar, 2).await;
    jobs.sort_unstable_by_key(|j| j.job_id);
    let (ja, jb) = (jobs[0].job_id, jobs[1].job_id);
    // a's solution sent for b, and for a job id that does not exist
    let swapped = vec![
        solved(jb, &undo(a), false, 0),
        solved(jb + 1000, &undo(a), false, 0),
    ];
    let (accepted, rejected) = complete(&mut client, &liar, swapped).await;
    assert_eq!((accepted, rejected.len()), (0, 2), "{rejected:?}");
    // the lease expires; the honest worker takes a: the liar's late answer, right or wrong,
    // is no longer its to give (only the holder reports), and the honest one's is stored
    clock.advance(Duration::from_secs(1));
    server.sweep().await;
    let taken = lease(&mut client, &honest, 2).await;
    assert!(taken.iter().any(|j| j.job_id == ja), "{taken:?}");
    let late = solved(ja, &undo(a), false, 0);
    assert_eq!(complete(&mut client, &liar, vec![late.clone()]).await.0, 0);
    let wrong = solved(ja, &undo(b), false, 0);
    complete(&mut client, &liar, vec![late.clone(), wrong]).await;
    assert_eq!(job(&mut client, ja).await.state, JobState::Leased as i32);
    assert_eq!(complete(&mut client, &honest, vec![late]).await.0, 1);
    assert_verified(&job(&mut client, ja).await, a, 3);
    // b's batch is cancelled: a result for it afterwards stores nothing
    client
        .batches
        .cancel_batch(BatchRef {
            batch_id: "mix".into(),
        })
        .await
        .unwrap();
    // b is the honest worker's (it ends cancelled at its next heartbeat): the liar's answer
    // stores nothing
    complete(&mut client, &liar, vec![solved(jb, &undo(b), false, 0)]).await;
    let rb = job(&mut client, jb).await;
    assert!(
        rb.state == JobState::Cancelled as i32 || rb.state == JobState::Leased as i32,
        "{rb:?}"
    );
    assert!(rb.solution.is_empty() && rb.worker.is_empty(), "{rb:?}");
    assert_verified(&job(&mut client, ja).await, a, 3);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_results_keep_being_rejected_ends_failed() {
    let (_dir, server, mut client, liar) = start(Duration::from_secs(30)).await;
    let bystander = register(&mut client, "bystander").await;
    let scramble = "R U F";
    submit(&mut client, "fails", two_phase(20), &[scramble]).await;
    let id = lease(&mut client, &liar, 1).await[0].job_id;
    let wrong = || vec![solved(id, "U R", false, 0)];
    // a peer that does not hold the lease cannot wear the job down
    for _ in 0..10 {
        assert_eq!(complete(&mut client, &bystander, wrong()).await.0, 0);
    }
    for round in 0..cubefleet_coordinator::MAX_REJECTIONS {
        if round > 0 {
            let again = lease(&mut client, &liar, 1).await;
            assert_eq!(again.len(), 1, "round {round}: the job is not queued again");
        }
        assert_eq!(complete(&mut client, &liar, wrong()).await.0, 0);
    }
    let r = job(&mut client, id).await;
    assert_eq!(r.state, JobState::Failed as i32, "{r:?}");
    assert_eq!(r.status, "failed");
    assert!(r.error.contains("does not solve"), "{r:?}");
    assert!(r.solution.is_empty(), "{r:?}");
    assert!(
        lease(&mut client, &liar, 1).await.is_empty(),
        "a failed job is leased again"
    );
    let status = client
        .batches
        .get_batch(BatchRef {
            batch_id: "fails".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (status.failed, status.queued, status.leased),
        (1, 0, 0),
        "{status:?}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_depth_limited_answer_is_reused_only_for_the_depth_it_proves() {
    let (_dir, server, mut client, liar) = start(Duration::from_secs(30)).await;
    let scramble = "R U F D";
    submit(&mut client, "d3", depth_limited(3), &[scramble]).await;
    let id = lease(&mut client, &liar, 1).await[0].job_id;
    let none = Completion {
        job_id: id,
        status: "none_within".into(),
        lower_bound: 4,
        ..Completion::default()
    };
    assert_eq!(complete(&mut client, &liar, vec![none]).await.0, 1);
    // "none within 3" says nothing of depth 5: the job is searched
    submit(&mut client, "d5", depth_limited(5), &[scramble]).await;
    let leased = lease(&mut client, &liar, 1).await;
    assert_eq!(
        leased.len(),
        1,
        "none_within 3 reused for a depth-5 request"
    );
    server.stop().await;
}
