//! Attacks on the coordinator's trust model, each played as an attacker would: a client or worker that holds a
//! credential and speaks raw gRPC to a real coordinator (a real server on `127.0.0.1:0`, a
//! real sled store), never through `cubefleet`'s own client code. Each test failed on the
//! code before the fix it names, and holds the promise of the README's threat model.
//!
//! Positions are short scrambles, so a correct solution is the scramble undone and no lookup
//! tables are needed.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::time::Duration;

mod common;

use common::{job, lease, optimal, resident, two_phase, undo, Server};
use cubefleet_coordinator::credentials::{from_flags, with_admins, Credential, Role};
use cubefleet_coordinator::Config;
use cubefleet_proto::client::Client;
use cubefleet_proto::{
    mode, submit_request, BatchRef, BatchSpec, CompleteRequest, Completion, DepthLimited,
    HeartbeatRequest, JobProgress, JobState, LeaseRequest, LineChunk, ListBatchesRequest,
    LookupRequest, Metric, Mode, RegisterRequest, ReleaseRequest, ResultStatus, ResultsRequest,
    RevokeRequest, SubmitEnd, SubmitRequest,
};
use tempfile::TempDir;
use tonic::Code;

/// The secret of the client credential `alice`.
const ALICE: &str = "alice-secret";
/// The secret of the worker credential `farm` (the honest fleet).
const FARM: &str = "farm-secret";
/// The secret of the worker credential `volunteer` (the attacker, in these tests).
const VOLUNTEER: &str = "volunteer-secret";
/// The secret of the admin credential `root` (the one who may revoke).
const ROOT: &str = "root-secret";

/// A coordinator with a client credential `alice`, worker credentials `farm` and `volunteer`,
/// an admin `root` (all named) and leases of `lease`, on a store in a fresh directory.
async fn start(lease: Duration) -> (TempDir, Server) {
    let dir = TempDir::new().unwrap();
    let server = Server::start(config_in(dir.path(), lease)).await;
    (dir, server)
}

/// The configuration [`start`] serves, on the store in `dir`.
fn config_in(dir: &std::path::Path, lease: Duration) -> Config {
    let mut config = Config::new(dir);
    config.lease = lease;
    config.credentials = with_admins(
        &[format!("alice:{ALICE}")],
        &[format!("farm:{FARM}"), format!("volunteer:{VOLUNTEER}")],
        &[format!("root:{ROOT}")],
        None,
    )
    .unwrap();
    config
}

/// A raw client presenting `secret`.
async fn as_(server: &Server, secret: &str) -> Client {
    Client::connect(&server.url, Some(secret)).await.unwrap()
}

/// Registers a worker named `name` with `threads`; its session token.
async fn register(c: &mut Client, name: &str, threads: u32) -> String {
    register_at(c, name, threads, cubefleet_proto::PROTOCOL).await
}

/// [`register`] as a worker of protocol revision `protocol` (an older build).
async fn register_at(c: &mut Client, name: &str, threads: u32, protocol: u32) -> String {
    c.workers
        .register(RegisterRequest {
            name: name.into(),
            threads,
            table_fingerprint: "attack".into(),
            protocol,
        })
        .await
        .unwrap()
        .into_inner()
        .worker_id
}

/// A submission of `lines` as batch `id` in `mode`, with `hash` as its content hash.
fn submission(id: &str, mode: Mode, hash: &[u8], lines: &[&str]) -> Vec<SubmitRequest> {
    vec![
        SubmitRequest {
            part: Some(submit_request::Part::Spec(BatchSpec {
                batch_id: id.into(),
                mode: Some(mode),
                content_hash: hash.to_vec(),
                ..BatchSpec::default()
            })),
        },
        SubmitRequest {
            part: Some(submit_request::Part::Chunk(LineChunk {
                lines: lines.iter().map(|s| s.to_string()).collect(),
            })),
        },
    ]
}

/// Submits; the gRPC outcome.
async fn submit(c: &mut Client, requests: Vec<SubmitRequest>) -> Result<u64, tonic::Status> {
    c.batches
        .submit(tokio_stream::iter(requests))
        .await
        .map(|r| r.into_inner().total)
}

/// Reports `results` as `worker`: (accepted, rejection reasons), or the call's refusal.
async fn complete(
    c: &mut Client,
    worker: &str,
    results: Vec<Completion>,
) -> Result<(u32, Vec<String>), tonic::Status> {
    let r = c
        .workers
        .complete(CompleteRequest {
            worker_id: worker.into(),
            results,
        })
        .await?
        .into_inner();
    Ok((
        r.accepted,
        r.rejected.into_iter().map(|x| x.reason).collect(),
    ))
}

/// Reports the one result `c` as `worker` and asserts it is refused, with `says` in the reason
/// (a rejection in the reply, or the call refused as an invalid argument); `what` names the case
/// in a failure.
async fn assert_refused(client: &mut Client, worker: &str, c: Completion, says: &str, what: &str) {
    match complete(client, worker, vec![c]).await {
        Ok((accepted, reasons)) => {
            assert_eq!(accepted, 0, "{what}");
            assert!(reasons[0].contains(says), "{what}: {reasons:?}");
        }
        Err(e) => {
            assert_eq!(e.code(), Code::InvalidArgument, "{what}: {e:?}");
            assert!(e.message().contains(says), "{what}: {e:?}");
        }
    }
}

/// A "solved" result of `job_id`, claimed optimal with `lower_bound` when `optimal`.
fn solved(job_id: u64, solution: &str, optimal: bool, lower_bound: u32) -> Completion {
    Completion {
        job_id,
        status: "solved".into(),
        solution: solution.into(),
        optimal,
        lower_bound,
        nodes: 1,
        millis: 1.0,
        has_solution: true,
        moves: Vec::new(),
        // as a worker before the status enum (protocol revision 3) sends it: the text only
        result_status: 0,
        ..Completion::default()
    }
}

/// Heartbeats then releases `job_id` with `lower_bound` proven, as a worker that stops.
async fn claim_and_release(c: &mut Client, worker: &str, job_id: u64, lower_bound: u32) {
    let p = vec![JobProgress {
        job_id,
        lower_bound,
        nodes: 1000,
        reason: String::new(),
    }];
    c.workers
        .heartbeat(HeartbeatRequest {
            worker_id: worker.into(),
            jobs: p.clone(),
        })
        .await
        .unwrap();
    c.workers
        .release(ReleaseRequest {
            worker_id: worker.into(),
            jobs: p,
        })
        .await
        .unwrap();
}

fn depth_limited(max_depth: u32, metric: i32) -> Mode {
    Mode {
        kind: Some(mode::Kind::DepthLimited(DepthLimited { max_depth, metric })),
        timeout_seconds: 0.0,
        ..Default::default()
    }
}

#[track_caller]
fn refused(r: Result<impl std::fmt::Debug, tonic::Status>, code: Code, says: &str) {
    let e = r.expect_err("refused");
    assert_eq!(e.code(), code, "{e:?}");
    assert!(
        e.message().contains(says),
        "{:?} lacks {says:?}",
        e.message()
    );
}

/// 1. A mode no worker can run (a timeout of 1e20 s) is refused at the door, naming the field:
/// before, it was stored, and every worker that leased the job panicked on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_01_a_poison_timeout_is_refused_at_submission() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    for t in [1e20, f64::NAN, f64::INFINITY, -1.0] {
        let mut m = optimal();
        m.timeout_seconds = t;
        refused(
            submit(&mut alice, submission("p", m, &[], &["R U"])).await,
            Code::InvalidArgument,
            "timeout_seconds",
        );
    }
    let list = alice
        .batches
        .list_batches(ListBatchesRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(list.batches.is_empty(), "{list:?}");
    server.stop().await;
}

/// 2. A metric that is neither HTM nor QTM is refused (before, 258 was keyed as QTM and checked
/// as HTM, so HTM answers were served to QTM batches).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_02_an_unknown_metric_is_refused() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    refused(
        submit(
            &mut alice,
            submission("m", depth_limited(1, 258), &[], &["R2"]),
        )
        .await,
        Code::InvalidArgument,
        "metric",
    );
    let mut m = optimal();
    if let Some(mode::Kind::Optimal(o)) = &mut m.kind {
        o.metric = 258;
    }
    refused(
        submit(&mut alice, submission("o", m, &[], &["R2 U2"])).await,
        Code::InvalidArgument,
        "metric",
    );
    refused(
        submit(
            &mut alice,
            submission("d", depth_limited(41, 1), &[], &["R"]),
        )
        .await,
        Code::InvalidArgument,
        "max_depth",
    );
    // the honest QTM question is asked and answered on its own
    assert_eq!(
        submit(
            &mut alice,
            submission("q", depth_limited(1, Metric::Qtm as i32), &[], &["R2"])
        )
        .await
        .unwrap(),
        1
    );
    server.stop().await;
}

/// 2b. A move set (`Mode.moves`, protocol revision 5) is checked like every mode field: a mask
/// beyond the 18 turns, a face given in part, or a set with a two-phase search is refused
/// naming `mode.moves`. A worker of an older revision (which would drop the field and search
/// every turn) is leased none of such a batch's jobs; a solution with a turn outside the set
/// is refused, and so is `unreachable` where no invariant of the set shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_02b_hostile_move_sets_and_workers_too_old_for_them() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let ru = 0b111_111; // every turn of U (bits 0-2) and of R (bits 3-5)
    for (i, (mode, moves)) in [
        (optimal(), 1 << 18),
        (optimal(), u32::MAX),
        (optimal(), 0b001),           // U without U'
        (optimal(), 0b101),           // U and U' without U2
        (depth_limited(5, 1), 0b110), // U2 and U' without U
        (two_phase(20), ru),
    ]
    .into_iter()
    .enumerate()
    {
        refused(
            submit(
                &mut alice,
                submission(&format!("m{i}"), Mode { moves, ..mode }, &[], &["R U"]),
            )
            .await,
            Code::InvalidArgument,
            "mode.moves",
        );
    }
    let set = Mode {
        moves: ru,
        ..optimal()
    };
    let lines = submission("ru", set, &[], &["R U", "F"]);
    assert_eq!(submit(&mut alice, lines).await.unwrap(), 2);
    let mut farm = as_(&server, FARM).await;
    let old = register_at(&mut farm, "old", 1, 4).await;
    assert!(lease(&mut farm, &old, 10).await.is_empty());
    let new = register(&mut farm, "new", 1).await;
    let line = |j: &cubefleet_proto::LeasedJob| j.job_id & ((1 << 40) - 1);
    let jobs = lease(&mut farm, &new, 10).await;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert!(jobs
        .iter()
        .all(|j| j.mode.as_ref().is_some_and(|m| m.moves == ru)));
    let id_of = |jobs: &[cubefleet_proto::LeasedJob], l| {
        jobs.iter().find(|j| line(j) == l).expect("leased").job_id
    };
    let (ru_job, f_job) = (id_of(&jobs, 0), id_of(&jobs, 1));
    let unreachable = |job_id| Completion {
        job_id,
        status: "unreachable".into(),
        result_status: ResultStatus::Unreachable as i32,
        millis: 1.0,
        ..Completion::default()
    };
    // F' solves `F`, but turns F
    let outside = solved(f_job, "F'", true, 1);
    assert_refused(
        &mut farm,
        &new,
        outside,
        "outside",
        "a turn outside the set",
    )
    .await;
    let unproven = unreachable(ru_job);
    assert_refused(
        &mut farm,
        &new,
        unproven,
        "no invariant",
        "unreachable, unproven",
    )
    .await;
    // the honest answers: `U' R'`, proven optimal, and `F` out of reach of U and R
    let jobs = lease(&mut farm, &new, 10).await;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    let results = vec![solved(ru_job, "U' R'", true, 2), unreachable(f_job)];
    assert_eq!(
        complete(&mut farm, &new, results).await.unwrap(),
        (2, vec![])
    );
    let f = job(&mut alice, f_job).await;
    assert_eq!(f.outcome(), ResultStatus::Unreachable);
    assert!(!f.error.is_empty(), "{f:?}");
    server.stop().await;
}

/// 2c. A target (`Mode.to_high`, `Mode.to_low`, protocol revision 6) is checked like every
/// mode field: an index of the number of states or more is refused naming `mode.to`. A worker
/// of an older revision (which would drop the fields and solve to the solved cube) is leased
/// none of such a batch's jobs; a solution that solves the position but does not reach the
/// target is refused, and the one that reaches it is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_02c_hostile_targets_and_workers_too_old_for_them() {
    use cubefleet_tables::{index::index_of, CubieCube, MoveSeq};
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let n = cubefleet_proto::question::N_STATES;
    for (i, (to_high, to_low)) in [
        ((n >> 64) as u64, n as u64),
        (u64::MAX, u64::MAX),
        (u64::MAX, 0),
    ]
    .into_iter()
    .enumerate()
    {
        let mode = Mode {
            to_high,
            to_low,
            ..two_phase(20)
        };
        refused(
            submit(
                &mut alice,
                submission(&format!("t{i}"), mode, &[], &["R U"]),
            )
            .await,
            Code::InvalidArgument,
            "mode.to",
        );
    }
    let target = index_of(&CubieCube::from_moves(&MoveSeq::parse("R U").unwrap().0));
    let to = Mode {
        to_high: (target >> 64) as u64,
        to_low: target as u64,
        ..two_phase(20)
    };
    let lines = submission("to", to, &[], &["R U R' U'"]);
    assert_eq!(submit(&mut alice, lines).await.unwrap(), 1);
    let mut farm = as_(&server, FARM).await;
    let old = register_at(&mut farm, "old", 1, 5).await;
    assert!(lease(&mut farm, &old, 10).await.is_empty());
    let new = register(&mut farm, "new", 1).await;
    let jobs = lease(&mut farm, &new, 10).await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert!(jobs[0]
        .mode
        .is_some_and(|m| (m.to_high, m.to_low) == (to.to_high, to.to_low)));
    let id = jobs[0].job_id;
    // `U R U' R'` solves the position: the solved cube, not the target
    let solving = solved(id, &undo("R U R' U'"), false, 0);
    assert_refused(
        &mut farm,
        &new,
        solving,
        "target",
        "solves, misses the target",
    )
    .await;
    let jobs = lease(&mut farm, &new, 10).await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    // R U R' U' then U R is R U
    assert_eq!(
        complete(&mut farm, &new, vec![solved(id, "U R", false, 0)])
            .await
            .unwrap(),
        (1, vec![])
    );
    let r = job(&mut alice, id).await;
    assert_eq!(
        (r.outcome(), r.solution.as_str()),
        (ResultStatus::Solved, "U R")
    );
    server.stop().await;
}

/// 2d. A goal (`Mode.goal`, protocol revision 7) is checked like every mode field, over raw
/// gRPC: an unknown or unspecified kind, masks on a named goal, masks out of range, an empty
/// custom goal, a goal with a two-phase search or with a target are refused naming the field.
/// A worker of an older revision (which would drop the field and solve the whole cube) is
/// leased none of such a batch's jobs; a sequence that does not reach the goal is refused, and
/// one that does is stored with its length.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_02d_hostile_goals_and_workers_too_old_for_them() {
    use cubefleet_proto::{Goal, GoalKind};
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let with = |goal: Goal, base: Mode| Mode {
        goal: Some(goal),
        ..base
    };
    let custom = |place_corners, place_edges, orient_corners, orient_edges| Goal {
        kind: GoalKind::Custom as i32,
        place_corners,
        place_edges,
        orient_corners,
        orient_edges,
        any_face: false,
    };
    let named = |kind: GoalKind| Goal {
        kind: kind as i32,
        ..Goal::default()
    };
    for (i, (mode, field)) in [
        (with(Goal::default(), optimal()), "mode.goal.kind"),
        (
            with(
                Goal {
                    kind: 1000,
                    ..Goal::default()
                },
                optimal(),
            ),
            "mode.goal.kind",
        ),
        (
            with(
                Goal {
                    place_edges: 1,
                    ..named(GoalKind::Cross)
                },
                optimal(),
            ),
            "mode.goal.place_edges",
        ),
        (
            with(custom(1 << 8, 0, 0, 0), optimal()),
            "mode.goal.place_corners",
        ),
        (
            with(custom(0, u32::MAX, 0, 0), optimal()),
            "mode.goal.place_edges",
        ),
        (
            with(custom(0, 1, 0x100, 0), optimal()),
            "mode.goal.orient_corners",
        ),
        (
            with(custom(0, 1, 0, 1 << 12), optimal()),
            "mode.goal.orient_edges",
        ),
        (with(custom(0, 0, 0, 0), optimal()), "mode.goal"),
        (with(named(GoalKind::Cross), two_phase(20)), "mode.goal"),
        (
            Mode {
                to_low: 7,
                ..with(named(GoalKind::Eo), optimal())
            },
            "mode.goal",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        refused(
            submit(
                &mut alice,
                submission(&format!("g{i}"), mode, &[], &["R U"]),
            )
            .await,
            Code::InvalidArgument,
            field,
        );
    }
    let cross = with(named(GoalKind::Cross), optimal());
    let lines = submission("cross", cross, &[], &["R F"]);
    assert_eq!(submit(&mut alice, lines).await.unwrap(), 1);
    let mut farm = as_(&server, FARM).await;
    let old = register_at(&mut farm, "old", 1, 6).await;
    assert!(lease(&mut farm, &old, 10).await.is_empty());
    let new = register(&mut farm, "new", 1).await;
    let jobs = lease(&mut farm, &new, 10).await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0].mode.as_ref().and_then(|m| m.goal), cross.goal);
    let id = jobs[0].job_id;
    // F' alone leaves the DR edge out of place
    assert_refused(
        &mut farm,
        &new,
        solved(id, "F'", true, 1),
        "goal",
        "misses the goal",
    )
    .await;
    let jobs = lease(&mut farm, &new, 10).await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(
        complete(&mut farm, &new, vec![solved(id, "F' R'", true, 2)])
            .await
            .unwrap(),
        (1, vec![])
    );
    let r = job(&mut alice, id).await;
    assert_eq!(
        (r.outcome(), r.solution.as_str(), r.length),
        (ResultStatus::Solved, "F' R'", 2)
    );
    server.stop().await;
}

/// 2e. How many solutions (`Mode.solutions`, `Mode.all_solutions`, protocol revision 7) is
/// checked like every mode field: N above the limit, both fields, an unknown value or a
/// two-phase question refused naming the field. A worker of revision 6 is leased none of such
/// a batch's jobs. A count-only job is leased with a spot seed; a list with a repeat, a
/// non-canonical or a wrong-length solution, or a count whose spot check fails is refused;
/// the honest answer is stored with its count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_02e_hostile_solution_counts_and_lists() {
    use cubefleet_proto::question::{spot_ranks, MAX_SOLUTIONS};
    use cubefleet_tables::MoveSeq;
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let many = |solutions, all_solutions| Mode {
        solutions,
        all_solutions,
        ..optimal()
    };
    for (i, (mode, field)) in [
        (many(MAX_SOLUTIONS + 1, 0), "mode.solutions"),
        (many(u32::MAX, 0), "mode.solutions"),
        (many(5, 2), "mode.solutions"),
        (many(0, 3), "mode.all_solutions"),
        (many(0, -7), "mode.all_solutions"),
        (
            Mode {
                solutions: 5,
                ..two_phase(20)
            },
            "mode.solutions",
        ),
        (
            Mode {
                all_solutions: 1,
                ..two_phase(20)
            },
            "mode.all_solutions",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        refused(
            submit(
                &mut alice,
                submission(&format!("n{i}"), mode, &[], &["R U"]),
            )
            .await,
            Code::InvalidArgument,
            field,
        );
    }
    let turns = |moves: &str| MoveSeq::parse(moves).unwrap().indices();
    // U D is also solved by U' D' then (R2 U2)^6, the identity: canonical, 12 turns longer
    const LONGER: &str = "U' D' R2 U2 R2 U2 R2 U2 R2 U2 R2 U2 R2 U2";
    // all optimal solutions of U D (one: U' D') and the count of R's (one: R')
    let lines = submission("all", many(0, 1), &[], &["U D"]);
    assert_eq!(submit(&mut alice, lines).await.unwrap(), 1);
    let mut farm = as_(&server, FARM).await;
    let old = register_at(&mut farm, "old", 1, 6).await;
    assert!(lease(&mut farm, &old, 10).await.is_empty());
    let new = register(&mut farm, "new", 1).await;
    let jobs = lease(&mut farm, &new, 10).await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let id = jobs[0].job_id;
    let answer = |first: &str, list: &[&str], count: u64, spots: Vec<Vec<u8>>| Completion {
        moves: turns(first),
        solutions: list.iter().map(|s| turns(s)).collect(),
        count,
        spot_solutions: spots,
        ..solved(id, "", true, 2)
    };
    for (c, says) in [
        (answer("U' D'", &["U' D'", "U' D'"], 2, vec![]), "after"),
        (answer("D' U'", &["D' U'"], 1, vec![]), "canonical"),
        (
            answer("U' D'", &["U' D'", LONGER], 2, vec![]),
            "not the optimal 2",
        ),
        (answer("U' D'", &["U' D'", "U D'"], 2, vec![]), "target"),
    ] {
        // four refusals: a fifth of this credential would fail the job (a wrong count is
        // held to the list in the coordinator's unit tests)
        assert_refused(&mut farm, &new, c, says, says).await;
        assert_eq!(lease(&mut farm, &new, 10).await.len(), 1);
    }
    let honest = answer("U' D'", &["U' D'"], 1, vec![]);
    assert_eq!(
        complete(&mut farm, &new, vec![honest]).await.unwrap(),
        (1, vec![])
    );
    let r = job(&mut alice, id).await;
    assert_eq!(
        (r.solutions.clone(), r.count),
        (vec!["U' D'".to_string()], 1)
    );
    let lines = submission("count", many(0, 2), &[], &["R"]);
    assert_eq!(submit(&mut alice, lines).await.unwrap(), 1);
    let jobs = lease(&mut farm, &new, 10).await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let (id, seed) = (jobs[0].job_id, jobs[0].spot_seed);
    assert_ne!(seed, 0);
    let count = |count: u64, spots: Vec<Vec<u8>>| Completion {
        moves: turns("R'"),
        count,
        spot_solutions: spots,
        ..solved(id, "", true, 1)
    };
    // four solutions claimed: the spot check names ranks up to 3, which R' alone cannot fill
    let ranks = spot_ranks(seed, 0, 4);
    let lie = count(4, vec![turns("R'"); ranks.len()]);
    assert_refused(
        &mut farm,
        &new,
        lie,
        "cannot be solution",
        "a count too large",
    )
    .await;
    let jobs = lease(&mut farm, &new, 10).await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let seed = jobs[0].spot_seed;
    assert_eq!(spot_ranks(seed, 0, 1), [0]);
    assert_eq!(
        complete(&mut farm, &new, vec![count(1, vec![turns("R'")])])
            .await
            .unwrap(),
        (1, vec![])
    );
    let r = job(&mut alice, id).await;
    assert_eq!((r.count, r.solutions.len(), r.claimed), (1, 0, true));
    server.stop().await;
}

/// 3. A lying heartbeat no longer makes an honest worker lie: the bound another session
/// reported is not where the next search starts, and does not count when it reports.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_03_a_lying_bound_is_nobody_elses_starting_point() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let mut liar_c = as_(&server, VOLUNTEER).await;
    let mut farm = as_(&server, FARM).await;
    let liar = register(&mut liar_c, "liar", 1).await;
    let honest = register(&mut farm, "honest", 1).await;
    let scramble = "R U F D";
    submit(&mut alice, submission("opt", optimal(), &[], &[scramble]))
        .await
        .unwrap();
    let id = lease(&mut liar_c, &liar, 1).await[0].job_id;
    claim_and_release(&mut liar_c, &liar, id, 4).await;
    // the liar itself would resume from its claim; the honest worker starts from nothing
    let again = lease(&mut farm, &honest, 1).await;
    assert_eq!((again[0].job_id, again[0].lower_bound), (id, 0));
    // its 4-move answer "optimal" with its own bound of 4 is its own proof
    let (accepted, _) = complete(
        &mut farm,
        &honest,
        vec![solved(id, &undo(scramble), true, 4)],
    )
    .await
    .unwrap();
    assert_eq!(accepted, 1);
    let r = job(&mut alice, id).await;
    assert!(r.optimal && r.claimed, "{r:?}");
    assert_eq!(r.worker, "farm", "provenance names the credential: {r:?}");

    // depth-limited: a liar's bound of 4 on a 3-move position is not a "none within 3" start
    submit(
        &mut alice,
        submission("d3", depth_limited(3, 1), &[], &["R U F"]),
    )
    .await
    .unwrap();
    let d = lease(&mut liar_c, &liar, 1).await[0].job_id;
    claim_and_release(&mut liar_c, &liar, d, 4).await;
    let again = lease(&mut farm, &honest, 1).await;
    assert_eq!((again[0].job_id, again[0].lower_bound), (d, 0));
    server.stop().await;
}

/// 4. `optimal` is accepted only with `solved`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_04_optimal_only_with_solved() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let mut farm = as_(&server, FARM).await;
    let w = register(&mut farm, "w", 1).await;
    submit(&mut alice, submission("t", two_phase(1), &[], &["R U"]))
        .await
        .unwrap();
    for status in ["timeout", "over_target"] {
        let id = lease(&mut farm, &w, 1).await[0].job_id;
        let six = format!("R L R' L' {}", undo("R U"));
        let c = Completion {
            status: status.into(),
            ..solved(id, &six, true, 2)
        };
        let (accepted, reasons) = complete(&mut farm, &w, vec![c]).await.unwrap();
        assert_eq!(accepted, 0, "{status}");
        assert!(
            reasons[0].contains("only a solution can be optimal"),
            "{reasons:?}"
        );
    }
    server.stop().await;
}

/// 5. Heartbeats naming jobs that do not exist allocate nothing (before, each unknown batch
/// number became an entry of the coordinator's memory), and one naming more jobs than the
/// session may hold is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_05_unknown_jobs_in_heartbeats_grow_nothing() {
    let _alone = MEASURED.lock().await;
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut farm = as_(&server, FARM).await;
    let w = register(&mut farm, "w", 1).await;
    let fake = |round: u64, n: u64| -> Vec<JobProgress> {
        (0..n)
            .map(|i| JobProgress {
                // a different batch number each
                job_id: ((round * n + i + 1) << 40) | 7,
                lower_bound: 5,
                nodes: 1,
                reason: String::new(),
            })
            .collect()
    };
    refused(
        farm.workers
            .heartbeat(HeartbeatRequest {
                worker_id: w.clone(),
                jobs: fake(0, 200_000),
            })
            .await,
        Code::InvalidArgument,
        "jobs",
    );
    let before = resident();
    for round in 0..100 {
        let cancel = farm
            .workers
            .heartbeat(HeartbeatRequest {
                worker_id: w.clone(),
                jobs: fake(round, 10_000),
            })
            .await
            .unwrap()
            .into_inner()
            .cancel;
        assert_eq!(
            cancel.len(),
            10_000,
            "every job it does not hold is to stop"
        );
    }
    let grown = resident().saturating_sub(before);
    assert!(
        grown < 64 << 20,
        "a million unknown jobs grew memory by {grown} bytes"
    );
    server.stop().await;
}

/// 6. Refusal reasons are bounded: a huge solution is refused at the door, and a job failed
/// by many refusals keeps a short error that every query still returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_06_refusal_reasons_are_bounded() {
    let dir = TempDir::new().unwrap();
    // one credential: its refusals alone fail a job
    let mut config = Config::new(dir.path());
    config.token = Some("t".into());
    let server = Server::start(config).await;
    let mut c = as_(&server, "t").await;
    let w = register(&mut c, "w", 1).await;
    submit(&mut c, submission("big", two_phase(20), &[], &["R U"]))
        .await
        .unwrap();
    let id = lease(&mut c, &w, 1).await[0].job_id;
    let huge = "U ".repeat(2 << 20);
    refused(
        complete(&mut c, &w, vec![solved(id, &huge, false, 0)]).await,
        Code::InvalidArgument,
        "solution",
    );
    let long = "U R ".repeat(250); // 1000 bytes: within the limit, and wrong
    for round in 0..cubefleet_coordinator::MAX_REJECTIONS {
        if round > 0 {
            assert_eq!(lease(&mut c, &w, 1).await.len(), 1);
        }
        let (accepted, reasons) = complete(&mut c, &w, vec![solved(id, &long, false, 0)])
            .await
            .unwrap();
        assert_eq!(accepted, 0);
        assert!(reasons[0].len() <= cubefleet_coordinator::limits::MAX_REASON);
    }
    let r = job(&mut c, id).await;
    assert_eq!(r.state, JobState::Failed as i32, "{r:?}");
    assert!(r.error.len() < 2000, "{} bytes of error", r.error.len());
    let page = c
        .batches
        .list_results(ResultsRequest {
            batch_id: "big".into(),
            ..ResultsRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(page.results.len(), 1);
    server.stop().await;
}

/// 8. A batch id names its contents whatever the source: lines without a hash (stdin) cannot
/// be added to a batch created with one, and a hash sent after the lines (`SubmitEnd`) names
/// the batch they made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_08_stdin_lines_cannot_join_another_files_batch() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let lines = ["R U", "F D"];
    assert_eq!(
        submit(
            &mut alice,
            submission("file", two_phase(20), b"hash-of-a", &lines)
        )
        .await
        .unwrap(),
        2
    );
    // the same lines and more, without a hash: refused, nothing appended
    refused(
        submit(
            &mut alice,
            submission("file", two_phase(20), &[], &["R U", "F D", "B L"]),
        )
        .await,
        Code::FailedPrecondition,
        "without a content hash",
    );
    let s = alice
        .batches
        .get_batch(BatchRef {
            batch_id: "file".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(s.total, 2);
    // a stdin submission names its batch by the hash it sends at the end
    let mut stdin = submission("piped", two_phase(20), &[], &lines);
    stdin.push(SubmitRequest {
        part: Some(submit_request::Part::End(SubmitEnd {
            content_hash: b"hash-of-p".to_vec(),
        })),
    });
    assert_eq!(submit(&mut alice, stdin).await.unwrap(), 2);
    refused(
        submit(
            &mut alice,
            submission("piped", two_phase(20), b"hash-of-x", &["R U", "F D", "L"]),
        )
        .await,
        Code::FailedPrecondition,
        "content hash",
    );
    assert_eq!(
        submit(
            &mut alice,
            submission("piped", two_phase(20), b"hash-of-p", &lines)
        )
        .await
        .unwrap(),
        2
    );
    server.stop().await;
}

/// 9. An empty token is refused at start, with how to run without authentication.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_09_an_empty_token_does_not_turn_authentication_off() {
    let dir = TempDir::new().unwrap();
    let mut config = Config::new(dir.path());
    config.token = Some(String::new());
    let e = config.credentials().expect_err("refused");
    assert!(e.to_string().contains("without authentication"), "{e}");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = tokio::time::timeout(
        Duration::from_secs(20),
        cubefleet_coordinator::serve(config, listener, tokio_util::sync::CancellationToken::new()),
    )
    .await
    .expect("refused at once");
    assert!(served.is_err());
    assert!(Credential::new("w", true, Role::Worker, "").is_err());
}

/// 10. A session holds at most what its threads search in a lease period, and one credential
/// cannot fail a job that another credential's workers could answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_10_leases_are_bounded_and_one_credential_cannot_fail_a_job() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let mut vol = as_(&server, VOLUNTEER).await;
    let mut farm = as_(&server, FARM).await;
    let greedy = register(&mut vol, "greedy", 1).await;
    let spec = SubmitRequest {
        part: Some(submit_request::Part::Spec(BatchSpec {
            batch_id: "range".into(),
            mode: Some(two_phase(20)),
            range_start: "1".into(),
            range_end: "1000000001".into(),
            ..BatchSpec::default()
        })),
    };
    submit(&mut alice, vec![spec]).await.unwrap();
    let most = server.core.max_held(1) as usize;
    let mut held = 0;
    for _ in 0..5 {
        held += lease(&mut vol, &greedy, 10_000).await.len();
    }
    assert_eq!(held, most, "a one-thread session held {held}");
    assert!(most <= 10_000);

    // five bad results from one credential leave the job for the others
    let honest = register(&mut farm, "honest", 1).await;
    let scramble = "R U F";
    let prio = SubmitRequest {
        part: Some(submit_request::Part::Spec(BatchSpec {
            batch_id: "f2".into(),
            mode: Some(two_phase(20)),
            priority: 9,
            ..BatchSpec::default()
        })),
    };
    let chunk = SubmitRequest {
        part: Some(submit_request::Part::Chunk(LineChunk {
            lines: vec![scramble.into()],
        })),
    };
    submit(&mut alice, vec![prio, chunk]).await.unwrap();
    let bad = register(&mut vol, "bad", 1).await;
    let id = lease(&mut vol, &bad, 1).await[0].job_id;
    for round in 0..2 * cubefleet_coordinator::MAX_REJECTIONS {
        if round > 0 {
            let again = lease(&mut vol, &bad, 1).await;
            assert_eq!(again[0].job_id, id, "round {round}");
        }
        complete(&mut vol, &bad, vec![solved(id, "U R", false, 0)])
            .await
            .unwrap();
    }
    let r = job(&mut alice, id).await;
    assert_eq!(r.state, JobState::Queued as i32, "{r:?}");
    let got = lease(&mut farm, &honest, 1).await;
    assert_eq!(got[0].job_id, id);
    let (accepted, _) = complete(
        &mut farm,
        &honest,
        vec![solved(id, &undo(scramble), false, 0)],
    )
    .await
    .unwrap();
    assert_eq!(accepted, 1);
    server.stop().await;
}

/// 11. Reflection needs a credential; health stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_11_reflection_needs_a_credential() {
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let channel = tonic::transport::Endpoint::from_shared(server.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let ask = || {
        tokio_stream::once(ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        })
    };
    let mut anon = ServerReflectionClient::new(channel.clone());
    let e = anon.server_reflection_info(ask()).await.unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated);
    let mut with =
        ServerReflectionClient::with_interceptor(channel.clone(), |mut r: tonic::Request<()>| {
            r.metadata_mut()
                .insert("authorization", format!("Bearer {ALICE}").parse().unwrap());
            Ok(r)
        });
    let mut answers = with
        .server_reflection_info(ask())
        .await
        .unwrap()
        .into_inner();
    assert!(answers.message().await.unwrap().is_some());
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    health
        .check(tonic_health::pb::HealthCheckRequest::default())
        .await
        .unwrap();
    server.stop().await;
}

/// A GET of `path` on the HTTP port `port`: (status code, body).
fn http_get(port: u16, path: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let code = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (code, body)
}

/// 12. Nothing public shows a session's secret, a public id is no key, and a session is only
/// its own credential's; roles keep clients and workers apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_12_sessions_are_secret_and_roles_apart() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let mut farm = as_(&server, FARM).await;
    let mut vol = as_(&server, VOLUNTEER).await;
    let r = farm
        .workers
        .register(RegisterRequest {
            name: "w".into(),
            threads: 1,
            table_fingerprint: String::new(),
            protocol: cubefleet_proto::PROTOCOL,
        })
        .await
        .unwrap()
        .into_inner();
    let (token, public) = (r.worker_id, r.session);
    assert!(!public.is_empty() && !token.contains(&public));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = tokio_util::sync::CancellationToken::new();
    let http = tokio::spawn(cubefleet_coordinator::http::serve_http(
        server.core.clone(),
        listener,
        None,
        stop.clone(),
    ));
    let (code, metrics) = tokio::task::spawn_blocking(move || http_get(port, "/metrics"))
        .await
        .unwrap();
    assert_eq!(code, 200);
    assert!(
        !metrics.contains(&public),
        "the open metrics name no worker"
    );
    assert!(!metrics.contains(&token), "the secret is shown");
    stop.cancel();
    http.await.unwrap().unwrap();
    // the public id is no session; another credential cannot use the secret
    for (c, id, code) in [
        (&mut farm, public.as_str(), Code::Unauthenticated),
        (&mut vol, token.as_str(), Code::PermissionDenied),
    ] {
        let e = c
            .workers
            .lease(LeaseRequest {
                worker_id: id.into(),
                max_jobs: 1,
                ..LeaseRequest::default()
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), code, "{e:?}");
    }
    // roles
    refused(
        alice
            .workers
            .register(RegisterRequest {
                name: "x".into(),
                threads: 1,
                ..RegisterRequest::default()
            })
            .await,
        Code::PermissionDenied,
        "worker credential",
    );
    refused(
        submit(&mut farm, submission("x", two_phase(20), &[], &["R"])).await,
        Code::PermissionDenied,
        "client credential",
    );
    refused(
        farm.batches
            .lookup(LookupRequest {
                position: "R".into(),
            })
            .await,
        Code::PermissionDenied,
        "client credential",
    );
    server.stop().await;
}

/// Revocation: the worker is refused from then on, and every answer resting on its claims,
/// its own or served from the store from it, is searched again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_worker_undoes_its_claims() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let mut vol = as_(&server, VOLUNTEER).await;
    let liar = register(&mut vol, "liar", 1).await;
    // facelet lines: no move count shows the lie
    let faces = |moves: &str| {
        let cube =
            cubefleet_tables::parse_position(moves, cubefleet_tables::InputFormat::Auto).unwrap();
        cubefleet_tables::FaceletCube::from_cubie(&cube).to_string()
    };
    let (scramble, copy) = (faces("R U F D"), faces("F U L D"));
    submit(
        &mut alice,
        submission("a", depth_limited(5, 1), &[], &[&scramble]),
    )
    .await
    .unwrap();
    let id = lease(&mut vol, &liar, 1).await[0].job_id;
    let none = Completion {
        job_id: id,
        status: "none_within".into(),
        lower_bound: 6,
        ..Completion::default()
    };
    assert_eq!(complete(&mut vol, &liar, vec![none]).await.unwrap().0, 1);
    // the lie is served to a symmetric copy (turned a quarter about the U axis)
    submit(
        &mut alice,
        submission("b", depth_limited(5, 1), &[], &[&copy]),
    )
    .await
    .unwrap();
    let copy = job(&mut alice, 2u64 << 40).await;
    assert_eq!(
        (copy.status.as_str(), copy.worker.as_str()),
        ("none_within", "volunteer")
    );
    assert!(copy.from_store && copy.claimed, "{copy:?}");
    // a client may not revoke: that is an admin's
    let e = alice
        .batches
        .revoke(RevokeRequest {
            worker: "volunteer".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    let mut root = as_(&server, ROOT).await;
    let r = root
        .batches
        .revoke(RevokeRequest {
            worker: "volunteer".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.requeued, 2);
    assert!(r.credential_revoked);
    for jid in [id, 2u64 << 40] {
        let j = job(&mut alice, jid).await;
        assert_eq!(j.state, JobState::Queued as i32, "{j:?}");
        assert!(j.worker.is_empty() && !j.claimed);
    }
    let found = alice
        .batches
        .lookup(LookupRequest {
            position: scramble.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!found.found, "{found:?}");
    let e = vol
        .workers
        .lease(LeaseRequest {
            worker_id: liar.clone(),
            max_jobs: 1,
            ..LeaseRequest::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    // the queued jobs go to an honest worker
    let mut farm = as_(&server, FARM).await;
    let w = register(&mut farm, "w", 1).await;
    assert_eq!(lease(&mut farm, &w, 10).await.len(), 2);
    server.stop().await;
}

/// Confirmation (`confirm` 2): an optimal answer is final only when workers of two credentials
/// claim the same; a credential cannot confirm itself, and a disagreement waits for a third.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirmation_needs_two_credentials_to_agree() {
    let dir = TempDir::new().unwrap();
    let mut config = Config::new(dir.path());
    config.credentials = from_flags(
        &[format!("alice:{ALICE}")],
        &[
            format!("farm:{FARM}"),
            format!("volunteer:{VOLUNTEER}"),
            "third:third-secret".into(),
        ],
        None,
    )
    .unwrap();
    let server = Server::start(config).await;
    let mut alice = as_(&server, ALICE).await;
    let mut vol = as_(&server, VOLUNTEER).await;
    let mut farm = as_(&server, FARM).await;
    let mut third = as_(&server, "third-secret").await;
    let (liar, honest, judge) = (
        register(&mut vol, "liar", 1).await,
        register(&mut farm, "honest", 1).await,
        register(&mut third, "judge", 1).await,
    );
    // a facelet line: no move count bounds what may be claimed
    let cube =
        cubefleet_tables::parse_position("R U", cubefleet_tables::InputFormat::Auto).unwrap();
    let faces = cubefleet_tables::FaceletCube::from_cubie(&cube).to_string();
    let mut spec = submission("c", optimal(), &[], &[&faces]);
    if let Some(submit_request::Part::Spec(s)) = &mut spec[0].part {
        s.confirm = 2;
    }
    submit(&mut alice, spec).await.unwrap();
    // a 6-move "optimal" answer from the volunteer is held, not stored
    let id = lease(&mut vol, &liar, 1).await[0].job_id;
    let six = format!("R L R' L' {}", undo("R U"));
    assert_eq!(
        complete(&mut vol, &liar, vec![solved(id, &six, true, 6)])
            .await
            .unwrap()
            .0,
        1
    );
    let r = job(&mut alice, id).await;
    assert_eq!(r.state, JobState::Queued as i32, "{r:?}");
    assert!(
        lease(&mut vol, &liar, 1).await.is_empty(),
        "it confirms itself"
    );
    // the farm disagrees (the truth, 2 moves): a disagreement, still not final
    assert_eq!(lease(&mut farm, &honest, 1).await[0].job_id, id);
    complete(&mut farm, &honest, vec![solved(id, &undo("R U"), true, 2)])
        .await
        .unwrap();
    assert_eq!(job(&mut alice, id).await.state, JobState::Queued as i32);
    let s = alice
        .batches
        .get_batch(BatchRef {
            batch_id: "c".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((s.confirm, s.disagreements), (2, 1));
    // a third credential settles it
    assert_eq!(lease(&mut third, &judge, 1).await[0].job_id, id);
    complete(&mut third, &judge, vec![solved(id, &undo("R U"), true, 2)])
        .await
        .unwrap();
    let r = job(&mut alice, id).await;
    assert_eq!(r.state, JobState::Done as i32, "{r:?}");
    assert_eq!((r.length, r.optimal), (2, true));
    assert_eq!(r.confirmed_by, vec!["farm".to_string(), "third".into()]);
    server.stop().await;
}

/// 13. The status enum (protocol revision 4) from a hostile worker, raw over gRPC: an unknown
/// value, a status only the coordinator may give (`invalid`, `skipped`, `failed`), an enum
/// that contradicts the text, a negative value. Each is refused naming the field, the job
/// goes back to the queue with nothing stored, and an honest completion by enum afterwards is
/// stored. A results filter that names no status is refused, one naming `queued` lists the
/// unfinished job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_13_a_hostile_status_enum_changes_nothing_stored() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let mut farm = as_(&server, FARM).await;
    let w = register(&mut farm, "w", 1).await;
    submit(&mut alice, submission("enum", two_phase(20), &[], &["R U"]))
        .await
        .unwrap();
    let right = undo("R U");
    let hostile = [
        (9999, "solved", "result_status 9999"),
        (-1, "solved", "result_status -1"),
        (ResultStatus::Invalid as i32, "solved", "result_status 6"),
        (ResultStatus::Skipped as i32, "solved", "result_status 7"),
        (ResultStatus::Failed as i32, "solved", "result_status 8"),
        // the enum wins over the text: "none_within" in a two-phase batch is no answer
        (ResultStatus::NoneWithin as i32, "solved", "none_within"),
    ];
    for (value, text, says) in hostile {
        let id = lease(&mut farm, &w, 1).await[0].job_id;
        let c = Completion {
            status: text.into(),
            result_status: value,
            ..solved(id, &right, false, 0)
        };
        assert_refused(&mut farm, &w, c, says, &value.to_string()).await;
        let r = job(&mut alice, id).await;
        assert_ne!(r.state, JobState::Done as i32, "{value}: {r:?}");
        assert!(
            r.solution.is_empty() && r.status.is_empty(),
            "{value}: {r:?}"
        );
        // a refused call leaves the job leased: the worker hands it back (a refused result
        // requeued it already, and this release then names a job the session no longer holds)
        farm.workers
            .release(ReleaseRequest {
                worker_id: w.clone(),
                jobs: vec![JobProgress {
                    job_id: id,
                    ..JobProgress::default()
                }],
            })
            .await
            .ok();
    }
    // the results filter: garbage refused, an unfinished state listed
    let filter = |status: &str| ResultsRequest {
        batch_id: "enum".into(),
        status: status.into(),
        ..ResultsRequest::default()
    };
    refused(
        alice
            .batches
            .list_results(filter("x".repeat(100_000).as_str()))
            .await,
        Code::InvalidArgument,
        "status",
    );
    let queued = alice
        .batches
        .list_results(filter("queued"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(queued.results.len(), 1);
    // an honest worker of revision 4, by enum only
    let id = lease(&mut farm, &w, 1).await[0].job_id;
    let c = Completion {
        status: String::new(),
        result_status: ResultStatus::Solved as i32,
        ..solved(id, &right, false, 0)
    };
    assert_eq!(complete(&mut farm, &w, vec![c]).await.unwrap().0, 1);
    let r = job(&mut alice, id).await;
    assert_eq!(r.state, JobState::Done as i32, "{r:?}");
    assert_eq!(
        (r.outcome(), r.status.as_str()),
        (ResultStatus::Solved, "solved")
    );
    server.stop().await;
}

/// 14. A solution sent as turn numbers (`Completion.moves`, what every worker of this version
/// sends) with hostile bytes from a raw worker: a number above 17, one face turned twice in a
/// row, text and numbers both, a sequence that does not solve the position, one past the
/// target, one past the most turns a message may carry. Each is refused, the job keeps no
/// solution and is leased again; an honest report by numbers afterwards is stored as the
/// coordinator writes the turns, and the coordinator keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_14_hostile_turn_numbers_change_nothing_stored() {
    use cubefleet_tables::MoveSeq;
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let mut farm = as_(&server, FARM).await;
    let w = register(&mut farm, "w", 1).await;
    let right = MoveSeq::parse(&undo("R U")).unwrap().indices();
    // the undo of "R U" after U D U' D' repeated: solves the position, in too many turns
    let padded = |n: usize| -> Vec<u8> {
        let cycle = MoveSeq::parse("U D U' D'").unwrap().indices();
        let mut m: Vec<u8> = cycle.iter().copied().cycle().take(4 * n).collect();
        m.extend(&right);
        m
    };
    let hostile: [(Vec<u8>, &str, &str); 7] = [
        (vec![18], "", "above 17"),
        (vec![255, 0], "", "above 17"),
        (vec![0, 1], "", "twice in a row"),
        (right.clone(), "U' R'", "both"),
        (
            MoveSeq::parse("R U").unwrap().indices(),
            "",
            "does not solve",
        ),
        (padded(6), "", "above the target"),
        (padded(100), "", "moves"),
    ];
    for (k, (moves, text, says)) in hostile.into_iter().enumerate() {
        // a batch of its own each: a job refused five times from one credential fails
        let batch = format!("bytes{k}");
        submit(&mut alice, submission(&batch, two_phase(20), &[], &["R U"]))
            .await
            .unwrap();
        let id = lease(&mut farm, &w, 1).await[0].job_id;
        let c = Completion {
            moves: moves.clone(),
            ..solved(id, text, false, 0)
        };
        assert_refused(&mut farm, &w, c, says, &format!("{moves:?}")).await;
        let r = job(&mut alice, id).await;
        assert_ne!(r.state, JobState::Done as i32, "{moves:?}: {r:?}");
        assert!(r.solution.is_empty(), "{moves:?}: {r:?}");
        // a refused call leaves the job leased: hand it back
        farm.workers
            .release(ReleaseRequest {
                worker_id: w.clone(),
                jobs: vec![JobProgress {
                    job_id: id,
                    ..JobProgress::default()
                }],
            })
            .await
            .ok();
        alice
            .batches
            .cancel_batch(BatchRef { batch_id: batch })
            .await
            .unwrap();
    }
    submit(
        &mut alice,
        submission("honest", two_phase(20), &[], &["R U"]),
    )
    .await
    .unwrap();
    let id = lease(&mut farm, &w, 1).await[0].job_id;
    let c = Completion {
        moves: right,
        ..solved(id, "", false, 0)
    };
    assert_eq!(complete(&mut farm, &w, vec![c]).await.unwrap().0, 1);
    let r = job(&mut alice, id).await;
    assert_eq!(r.state, JobState::Done as i32, "{r:?}");
    assert_eq!((r.solution.as_str(), r.length), ("U' R'", 2));
    server.stop().await;
}

// An audit of what a worker's word decides, one attack per class (who may report, claims,
// revocations, deduplication, identities, bounds), raw over gRPC. Every decision they meet is
// the job state machine's (`coordinator/src/core/machine.rs`).

/// Sends `requests` (a submission) with `confirm` set in its spec.
fn confirming(mut requests: Vec<SubmitRequest>, confirm: u32) -> Vec<SubmitRequest> {
    if let Some(submit_request::Part::Spec(s)) = &mut requests[0].part {
        s.confirm = confirm;
    }
    requests
}

/// A `none_within` claim of job `id` at a depth limit below `bound`.
fn none_within(id: u64, bound: u32) -> Completion {
    Completion {
        job_id: id,
        status: "none_within".into(),
        lower_bound: bound,
        ..Completion::default()
    }
}

/// The facelets of the position `moves` make (a line whose length bounds no claim).
fn faces(moves: &str) -> String {
    let cube =
        cubefleet_tables::parse_position(moves, cubefleet_tables::InputFormat::Auto).unwrap();
    cubefleet_tables::FaceletCube::from_cubie(&cube).to_string()
}

/// Ownership: a worker session reports only on the jobs it holds. Another credential's report
/// on a job the farm holds, right or not, or on a job nobody leased (ids are predictable),
/// or a "gave up" for every job of a batch, changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_1_a_worker_reports_only_on_jobs_it_holds() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let (mut farm, mut vol) = (as_(&server, FARM).await, as_(&server, VOLUNTEER).await);
    let honest = register(&mut farm, "honest", 1).await;
    let liar = register(&mut vol, "liar", 1).await;
    let lines = ["R U", "F D2", "L2 B'"];
    submit(&mut alice, submission("own", two_phase(20), &[], &lines))
        .await
        .unwrap();
    let held = lease(&mut farm, &honest, 1).await[0].job_id;
    let ids: Vec<u64> = (0..3).map(|i| (1u64 << 40) | i).collect();
    for (i, &id) in ids.iter().enumerate() {
        let right = solved(id, &undo(lines[i]), false, 0);
        assert_refused(
            &mut vol,
            &liar,
            right,
            "not leased to this session",
            "right",
        )
        .await;
        let gave_up = Completion {
            job_id: id,
            status: "cancelled".into(),
            ..Completion::default()
        };
        assert_refused(&mut vol, &liar, gave_up, "not leased", "gave up").await;
    }
    // the farm still holds its job, the rest are queued, nothing is stored
    for &id in &ids {
        let r = job(&mut alice, id).await;
        let want = if id == held {
            JobState::Leased
        } else {
            JobState::Queued
        };
        assert_eq!(r.state, want as i32, "{r:?}");
    }
    let (accepted, _) = complete(
        &mut farm,
        &honest,
        vec![solved(held, &undo(lines[0]), false, 0)],
    )
    .await
    .unwrap();
    assert_eq!(accepted, 1);
    assert_eq!(job(&mut alice, held).await.worker, "farm");
    server.stop().await;
}

/// Non-answers are claims: an answer over the target is stored with its worker and
/// `claimed`, held under `--confirm 2` until another credential agrees, and undone by
/// `revoke`; a timeout the coordinator can tell is false (no time budget, or before the
/// budget passed) is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_2_every_non_answer_is_a_claim() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let (mut farm, mut vol) = (as_(&server, FARM).await, as_(&server, VOLUNTEER).await);
    let honest = register(&mut farm, "honest", 1).await;
    let liar = register(&mut vol, "liar", 1).await;
    // a 4-move target: "R U F D" undone in 4 after four wasted turns is over it
    let long = |line: &str| format!("F B F' B' {}", undo(line));
    let over = |id: u64, line: &str| Completion {
        status: "over_target".into(),
        ..solved(id, &long(line), false, 0)
    };
    submit(
        &mut alice,
        submission("one", two_phase(4), &[], &["R U F D"]),
    )
    .await
    .unwrap();
    let id = lease(&mut vol, &liar, 1).await[0].job_id;
    assert_eq!(
        complete(&mut vol, &liar, vec![over(id, "R U F D")])
            .await
            .unwrap()
            .0,
        1
    );
    let r = job(&mut alice, id).await;
    assert_eq!(r.status, "over_target");
    assert!(r.claimed && r.worker == "volunteer", "{r:?}");
    // under --confirm 2 the same claim is held until the farm makes it too
    let two = confirming(submission("two", two_phase(4), &[], &["U R F D"]), 2);
    submit(&mut alice, two).await.unwrap();
    let id2 = lease(&mut vol, &liar, 1).await[0].job_id;
    let timeout = over(id2, "U R F D");
    assert_eq!(
        complete(&mut vol, &liar, vec![timeout.clone()])
            .await
            .unwrap()
            .0,
        1
    );
    assert_eq!(job(&mut alice, id2).await.state, JobState::Queued as i32);
    assert_eq!(lease(&mut farm, &honest, 1).await[0].job_id, id2);
    let (accepted, reasons) = complete(&mut farm, &honest, vec![timeout]).await.unwrap();
    assert_eq!(accepted, 1, "{reasons:?}");
    let r = job(&mut alice, id2).await;
    assert_eq!(
        (r.state, r.status.as_str()),
        (JobState::Done as i32, "over_target")
    );
    assert_eq!(r.confirmed_by, vec!["volunteer".to_string(), "farm".into()]);
    // revoking the volunteer undoes both: its own claim and the one it confirmed
    let mut root = as_(&server, ROOT).await;
    let revoked = root
        .batches
        .revoke(RevokeRequest {
            worker: "volunteer".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(revoked.requeued, 2);
    for id in [id, id2] {
        assert_eq!(job(&mut alice, id).await.state, JobState::Queued as i32);
    }
    // a timeout with no time budget, or at once in a search of an hour's budget
    let id = lease(&mut farm, &honest, 1).await[0].job_id;
    let timeout = Completion {
        status: "timeout".into(),
        ..Completion::default()
    };
    let c = Completion {
        job_id: id,
        ..timeout.clone()
    };
    assert_refused(&mut farm, &honest, c, "no time budget", "no budget").await;
    let mut hour = two_phase(20);
    hour.timeout_seconds = 3600.0;
    submit(&mut alice, submission("hour", hour, &[], &["L D B"]))
        .await
        .unwrap();
    let id = lease(&mut farm, &honest, 10)
        .await
        .into_iter()
        .map(|j| j.job_id)
        .find(|&j| j == 3u64 << 40)
        .expect("the hour's line");
    let c = Completion {
        job_id: id,
        ..timeout
    };
    assert_refused(&mut farm, &honest, c, "of a 3600 s budget", "early").await;
    server.stop().await;
}

/// Security state survives a restart: a revocation holds after the coordinator stops and
/// starts again on the same store (before, the job state rebuilt at open wiped it), and the
/// revoked credential's answers stay undone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_3_a_revocation_survives_a_restart() {
    let dir = TempDir::new().unwrap();
    let server = Server::start(config_in(dir.path(), Duration::from_secs(30))).await;
    let mut alice = as_(&server, ALICE).await;
    let mut vol = as_(&server, VOLUNTEER).await;
    let liar = register(&mut vol, "liar", 1).await;
    submit(
        &mut alice,
        submission("r", depth_limited(5, 1), &[], &[&faces("R U F D")]),
    )
    .await
    .unwrap();
    let id = lease(&mut vol, &liar, 1).await[0].job_id;
    complete(&mut vol, &liar, vec![none_within(id, 6)])
        .await
        .unwrap();
    let mut root = as_(&server, ROOT).await;
    root.batches
        .revoke(RevokeRequest {
            worker: "volunteer".into(),
        })
        .await
        .unwrap();
    server.stop().await;
    for round in 0..2 {
        let server = Server::start(config_in(dir.path(), Duration::from_secs(30))).await;
        let mut vol = as_(&server, VOLUNTEER).await;
        let e = vol
            .workers
            .register(RegisterRequest {
                name: format!("again-{round}"),
                threads: 1,
                table_fingerprint: "attack".into(),
                protocol: cubefleet_proto::PROTOCOL,
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::PermissionDenied, "round {round}: {e:?}");
        let mut alice = as_(&server, ALICE).await;
        let r = job(&mut alice, id).await;
        assert_eq!(r.state, JobState::Queued as i32, "round {round}: {r:?}");
        server.stop().await;
    }
}

/// Deduplication keeps the trust level: an answer one credential claimed does not answer a
/// batch that asks for two; one two credentials confirmed does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_4_deduplication_serves_only_answers_trusted_enough() {
    let (_dir, server) = start(Duration::from_secs(30)).await;
    let mut alice = as_(&server, ALICE).await;
    let (mut farm, mut vol) = (as_(&server, FARM).await, as_(&server, VOLUNTEER).await);
    let honest = register(&mut farm, "honest", 1).await;
    let liar = register(&mut vol, "liar", 1).await;
    let line = faces("R U F D");
    submit(
        &mut alice,
        submission("once", depth_limited(5, 1), &[], &[&line]),
    )
    .await
    .unwrap();
    let id = lease(&mut vol, &liar, 1).await[0].job_id;
    complete(&mut vol, &liar, vec![none_within(id, 6)])
        .await
        .unwrap();
    assert!(job(&mut alice, id).await.claimed);
    // the same position in a --confirm 2 batch is searched, not copied
    let twice = confirming(submission("twice", depth_limited(5, 1), &[], &[&line]), 2);
    submit(&mut alice, twice).await.unwrap();
    let copy = 2u64 << 40;
    let r = job(&mut alice, copy).await;
    assert_eq!(r.state, JobState::Queued as i32, "{r:?}");
    assert!(!r.from_store);
    // once two credentials agree it is final, and serves a third --confirm 2 batch
    assert_eq!(lease(&mut farm, &honest, 1).await[0].job_id, copy);
    complete(&mut farm, &honest, vec![none_within(copy, 6)])
        .await
        .unwrap();
    assert_eq!(lease(&mut vol, &liar, 1).await[0].job_id, copy);
    complete(&mut vol, &liar, vec![none_within(copy, 6)])
        .await
        .unwrap();
    assert_eq!(job(&mut alice, copy).await.confirmed_by.len(), 2);
    let third = confirming(submission("third", depth_limited(5, 1), &[], &[&line]), 2);
    submit(&mut alice, third).await.unwrap();
    let r = job(&mut alice, 3u64 << 40).await;
    assert!(r.from_store && r.confirmed_by.len() == 2, "{r:?}");
    server.stop().await;
}

/// Identity comes from the credential: a worker of an unnamed credential that calls itself
/// "farm" answers as its credential's derived name; clients neither revoke nor cancel other
/// clients' batches (an admin may).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_5_identity_is_the_credentials_and_clients_keep_to_their_own() {
    let dir = TempDir::new().unwrap();
    let mut config = Config::new(dir.path());
    config.credentials = with_admins(
        &[format!("alice:{ALICE}"), "bob:bob-secret".into()],
        &[format!("farm:{FARM}"), "bare-worker-secret".into()],
        &[format!("root:{ROOT}")],
        None,
    )
    .unwrap();
    let server = Server::start(config).await;
    let mut alice = as_(&server, ALICE).await;
    let mut bob = as_(&server, "bob-secret").await;
    let mut bare = as_(&server, "bare-worker-secret").await;
    let posing = register(&mut bare, "farm", 1).await;
    submit(
        &mut alice,
        submission("mine", two_phase(20), &[], &["R U", "F D"]),
    )
    .await
    .unwrap();
    let id = lease(&mut bare, &posing, 1).await[0].job_id;
    complete(&mut bare, &posing, vec![solved(id, &undo("R U"), false, 0)])
        .await
        .unwrap();
    let worker = job(&mut alice, id).await.worker;
    let derived =
        cubefleet_coordinator::credentials::derived_name("worker-token", "bare-worker-secret");
    assert_eq!(worker, derived, "never the name it gave itself");
    // bob may read alice's batch, not cancel it, nor revoke anyone
    refused(
        bob.batches
            .cancel_batch(BatchRef {
                batch_id: "mine".into(),
            })
            .await,
        Code::PermissionDenied,
        "another client",
    );
    refused(
        bob.batches
            .revoke(RevokeRequest {
                worker: derived.clone(),
            })
            .await,
        Code::PermissionDenied,
        "admin",
    );
    assert_eq!(
        job(&mut bob, (1u64 << 40) | 1).await.state,
        JobState::Queued as i32
    );
    // its owner and an admin may
    let mut root = as_(&server, ROOT).await;
    alice
        .batches
        .cancel_batch(BatchRef {
            batch_id: "mine".into(),
        })
        .await
        .unwrap();
    root.batches
        .revoke(RevokeRequest { worker: derived })
        .await
        .unwrap();
    server.stop().await;
}

/// Bounds per credential: the sessions of one credential together hold at most its share
/// of the outstanding work while another credential's workers ask for work, however many
/// sessions and threads it registers, so the other credential's worker gets work; a worker's
/// reported search times never move the queued-work estimate further than the coordinator
/// saw.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_6_bounds_hold_per_credential() {
    let (_dir, server) = start(Duration::from_secs(60)).await;
    let mut alice = as_(&server, ALICE).await;
    let (mut farm, mut vol) = (as_(&server, FARM).await, as_(&server, VOLUNTEER).await);
    let honest = register(&mut farm, "honest", 16).await;
    let spec = SubmitRequest {
        part: Some(submit_request::Part::Spec(BatchSpec {
            batch_id: "wide".into(),
            mode: Some(two_phase(20)),
            range_start: "1".into(),
            range_end: "20001".into(),
            ..BatchSpec::default()
        })),
    };
    submit(&mut alice, vec![spec]).await.unwrap();
    // the farm asks for work (a credential that never asks reserves no share)
    assert_eq!(lease(&mut farm, &honest, 1).await.len(), 1);
    let mut held = 0usize;
    // eight sessions of 1024 threads may each hold two jobs per thread of a batch with no
    // result yet: together far more than the credential's share
    for s in 0..8 {
        let session = register(&mut vol, &format!("greedy-{s}"), 1024).await;
        loop {
            let got = lease(&mut vol, &session, 10_000).await.len();
            held += got;
            if got == 0 {
                break;
            }
        }
    }
    assert!(
        held <= 10_001,
        "one of two credentials holds {held} of 20,000"
    );
    assert!(
        !lease(&mut farm, &honest, 10).await.is_empty(),
        "the farm gets work"
    );
    // a huge reported search time, right after the lease: counted as what the coordinator saw
    // (the batch's second line keeps it the one a lease serves next, sized by its own times)
    let mut urgent = submission("urgent", two_phase(20), &[], &["R U", "F2 D"]);
    if let Some(submit_request::Part::Spec(s)) = &mut urgent[0].part {
        s.priority = 9;
    }
    submit(&mut alice, urgent).await.unwrap();
    let id = lease(&mut farm, &honest, 1).await[0].job_id;
    assert_eq!(id, 2u64 << 40, "the urgent line first");
    let mut c = solved(id, &undo("R U"), false, 0);
    c.millis = 3.0e9;
    let (accepted, reasons) = complete(&mut farm, &honest, vec![c]).await.unwrap();
    assert_eq!(accepted, 1, "{reasons:?}");
    let per_thread = server.core.max_held(1);
    assert!(
        per_thread > cubefleet_coordinator::core::MIN_HELD_PER_THREAD,
        "a reported 35 days moved the estimate: {per_thread} jobs per thread"
    );
    server.stop().await;
}

/// Held by a test that measures the process's resident memory, and by those that load the
/// tables (which would count in it): the tests of one binary run on threads of one process.
static MEASURED: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A change that makes a coset result lie.
type Lie = fn(&mut Completion);

/// A coset question to `max_depth`, exact through `exact_depth`.
fn coset_mode(max_depth: u32, exact_depth: u32) -> Mode {
    Mode {
        kind: Some(mode::Kind::Coset(cubefleet_proto::CosetSolve {
            max_depth,
            exact_depth,
        })),
        ..Mode::default()
    }
}

/// The tables of the sampled positions' solutions (the test tables: two-phase).
static TABLES: std::sync::LazyLock<cubefleet_tables::Tables> = std::sync::LazyLock::new(|| {
    cubefleet_tables::Tables::load_or_build(&cubefleet_testkit::tables_dir(), &|_, _, _| {})
        .unwrap()
});

/// A result for the leased coset job `j` (to depth 20, exact through 0) that the coordinator
/// cannot tell from an honest one: each sample solved (two-phase within 20) at its solution's
/// length, and the counts one position at each depth from 1 to 19, the others at 20 (the same
/// whatever the seed, so two workers' results agree).
fn coset_answer(j: &cubefleet_proto::LeasedJob) -> Completion {
    use cubefleet_tables::coset::{sample_local, Coset, COSET_SAMPLES, COSET_SIZE};
    let seed: [u8; 32] = j.sample_seed.as_slice().try_into().unwrap();
    let coset = Coset::from_number(j.coset).unwrap();
    let mut counts = vec![0u64; 21];
    let samples: Vec<cubefleet_proto::CosetSample> = (0..COSET_SAMPLES as u32)
        .map(|k| {
            let local = sample_local(&seed, k);
            let s = cubefleet_search::coset::sample_solution(
                &TABLES,
                coset,
                local,
                20,
                0,
                Duration::from_secs(30),
                None,
            )
            .unwrap();
            cubefleet_proto::CosetSample {
                unsolved: false,
                depth: s.len() as u32,
                moves: s.indices(),
            }
        })
        .collect();
    counts[1..20].fill(1);
    counts[20] = COSET_SIZE - 19;
    let mut c = Completion {
        job_id: j.job_id,
        coset: Some(cubefleet_proto::CosetCounts {
            number: j.coset,
            counts,
            exact_through: 0,
            ..cubefleet_proto::CosetCounts::default()
        }),
        coset_samples: samples,
        ..Completion::default()
    };
    c.set_outcome(ResultStatus::Solved);
    c
}

/// 15. Coset batches: hostile definitions are refused naming the field; a session holds one
/// coset at a time, each lease with a fresh sample seed; a result is refused when its counts do
/// not sum to the coset's size, when a sampled position's solution does not solve it, is longer
/// than the depth claimed for it or is claimed at a depth the counts have no position at, and
/// when it comes from a worker that does not hold the lease; a result consistent in all of
/// that is stored as a claim, and `status` sums its counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_15_coset_results_are_checked_by_their_samples() {
    let _alone = MEASURED.lock().await;
    let (_dir, server) = start(Duration::from_secs(60)).await;
    let mut alice = as_(&server, ALICE).await;
    let spec = |mode: Mode, start: u64, end: u64| {
        vec![SubmitRequest {
            part: Some(submit_request::Part::Spec(BatchSpec {
                batch_id: "cosets".into(),
                mode: Some(mode),
                coset_start: start,
                coset_end: end,
                ..BatchSpec::default()
            })),
        }]
    };
    for (requests, says) in [
        (spec(coset_mode(20, 0), 5, u64::MAX), "cosets 5.."),
        (spec(coset_mode(20, 0), 7, 5), "START < END"),
        (spec(two_phase(20), 5, 7), "mode coset"),
        (spec(coset_mode(21, 0), 5, 7), "mode.coset.max_depth"),
        (
            {
                let mut s = spec(coset_mode(20, 0), 5, 7);
                if let Some(submit_request::Part::Spec(b)) = &mut s[0].part {
                    b.sample_count = 3;
                }
                s
            },
            "not two of them",
        ),
    ] {
        refused(
            submit(&mut alice, requests).await,
            Code::InvalidArgument,
            says,
        );
    }
    assert_eq!(
        submit(&mut alice, spec(coset_mode(20, 0), 5, 7))
            .await
            .unwrap(),
        2
    );
    let mut vol = as_(&server, VOLUNTEER).await;
    let mut farm = as_(&server, FARM).await;
    let (attacker, other) = (
        register(&mut vol, "attacker", 4).await,
        register(&mut farm, "other", 1).await,
    );
    let leased = lease(&mut vol, &attacker, 10).await;
    assert_eq!(leased.len(), 1, "one coset at a time");
    assert!(lease(&mut vol, &attacker, 10).await.is_empty());
    let j = leased[0].clone();
    assert_eq!((j.coset, j.sample_seed.len()), (5, 32));
    // another session, of another credential, cannot answer for it
    let r = complete(&mut farm, &other, vec![coset_answer(&j)])
        .await
        .unwrap();
    assert_eq!(r.0, 0, "{r:?}");
    // each lie is refused naming what is wrong; the job is leased again, with another seed
    let mut seeds = vec![j.sample_seed.clone()];
    let lies: [(&str, Lie); 5] = [
        ("sum to", |c| c.coset.as_mut().unwrap().counts[20] -= 1),
        ("does not solve", |c| c.coset_samples[2].moves.reverse()),
        ("turns for a position at depth", |c| {
            // claimed a turn shorter, with a count there
            let d = c.coset_samples[1].depth - 1;
            c.coset_samples[1].depth = d;
            let k = c.coset.as_mut().unwrap();
            k.counts[d as usize] += 1;
            k.counts[20] -= 1;
        }),
        ("where the counts have no position", |c| {
            c.coset_samples[0].depth = 0;
        }),
        ("counts[0]", |c| {
            let k = c.coset.as_mut().unwrap();
            k.counts[0] = 1;
            k.counts[20] -= 1;
        }),
    ];
    let mut j = j;
    for (says, lie) in lies {
        let mut c = coset_answer(&j);
        lie(&mut c);
        let (accepted, reasons) = complete(&mut vol, &attacker, vec![c]).await.unwrap();
        assert_eq!(accepted, 0, "{says}");
        assert!(reasons[0].contains(says), "{reasons:?} lacks {says:?}");
        let again = lease(&mut vol, &attacker, 1).await;
        assert_eq!(again.len(), 1, "{says}: leased again");
        j = again[0].clone();
        assert!(!seeds.contains(&j.sample_seed), "a new seed at each lease");
        seeds.push(j.sample_seed.clone());
    }
    // the consistent answer is stored, as a claim
    let honest = coset_answer(&j);
    let (accepted, reasons) = complete(&mut vol, &attacker, vec![honest.clone()])
        .await
        .unwrap();
    assert_eq!((accepted, reasons.len()), (1, 0), "{reasons:?}");
    let r = job(&mut alice, j.job_id).await;
    assert_eq!(r.state, JobState::Done as i32);
    assert!(r.claimed);
    assert_eq!(r.coset, honest.coset);
    let s = alice
        .batches
        .get_batch(BatchRef {
            batch_id: "cosets".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(s.coset_counts, honest.coset.unwrap().counts);
    assert_eq!(s.kind, "cosets");
    server.stop().await;
}

/// 16. `--confirm 2` for coset jobs: one credential's counts are held, not stored, and the job
/// is not leased to that credential again; another credential's equal counts (for samples of
/// its own lease's seed) make them final, with both named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_16_coset_counts_under_confirm_2_need_two_credentials() {
    let _alone = MEASURED.lock().await;
    let (_dir, server) = start(Duration::from_secs(60)).await;
    let mut alice = as_(&server, ALICE).await;
    let spec = BatchSpec {
        batch_id: "cosets".into(),
        mode: Some(coset_mode(20, 0)),
        coset_start: 9,
        coset_end: 10,
        confirm: 2,
        ..BatchSpec::default()
    };
    let request = SubmitRequest {
        part: Some(submit_request::Part::Spec(spec)),
    };
    submit(&mut alice, vec![request]).await.unwrap();
    let mut vol = as_(&server, VOLUNTEER).await;
    let mut farm = as_(&server, FARM).await;
    let (one, two) = (
        register(&mut vol, "one", 1).await,
        register(&mut farm, "two", 1).await,
    );
    let j = lease(&mut vol, &one, 1).await.remove(0);
    let first = coset_answer(&j);
    assert_eq!(
        complete(&mut vol, &one, vec![first.clone()])
            .await
            .unwrap()
            .0,
        1
    );
    assert_eq!(
        job(&mut alice, j.job_id).await.state,
        JobState::Queued as i32
    );
    assert!(
        lease(&mut vol, &one, 1).await.is_empty(),
        "it confirms itself"
    );
    let k = lease(&mut farm, &two, 1).await.remove(0);
    assert_ne!(k.sample_seed, j.sample_seed);
    complete(&mut farm, &two, vec![coset_answer(&k)])
        .await
        .unwrap();
    let r = job(&mut alice, j.job_id).await;
    assert_eq!(r.state, JobState::Done as i32, "{r:?}");
    assert_eq!(r.coset, first.coset);
    assert_eq!(r.confirmed_by, vec!["volunteer".to_string(), "farm".into()]);
    server.stop().await;
}
