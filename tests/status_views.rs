//! The three views of a batch's progress agree: `cubefleet status --json` (the CLI over
//! gRPC), `GET /api/status` and the status page (`GET /`) of a real coordinator process, for a
//! batch with a done, a skipped, an invalid and a failed line. A failed job is finished in all
//! three (the batch reaches 100 %), and each shows every count the same.
//!
//! The failed job is made by a lying worker over gRPC: it answers one job wrongly until the
//! coordinator gives up on it, speaking as a worker older than the status enum (the status as
//! text only), and answers the other job rightly as this version's workers do (enum and text).

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{client, status, wait_for};
use cubefleet_proto::client::Client;
use cubefleet_proto::{CompleteRequest, Completion, LeaseRequest, LeasedJob, ResultStatus};
use cubefleet_tables::MoveSeq;

/// The body of `GET path` on the HTTP port (HTTP/1.0: the body ends with the connection).
fn http_body(port: u16, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    assert!(
        raw.starts_with("HTTP/1.0 200") || raw.starts_with("HTTP/1.1 200"),
        "{raw}"
    );
    raw.split_once("\r\n\r\n").unwrap().1.to_string()
}

/// Leases up to `n` jobs for `worker`.
async fn lease(grpc: &mut Client, worker: &str, n: u32) -> Vec<LeasedJob> {
    let request = LeaseRequest {
        worker_id: worker.to_string(),
        max_jobs: n,
        ..LeaseRequest::default()
    };
    grpc.workers.lease(request).await.unwrap().into_inner().jobs
}

/// Reports `c` for `worker`; the number of results accepted.
async fn complete(grpc: &mut Client, worker: &str, c: Completion) -> u32 {
    let request = CompleteRequest {
        worker_id: worker.to_string(),
        results: vec![c],
    };
    grpc.workers
        .complete(request)
        .await
        .unwrap()
        .into_inner()
        .accepted
}

/// Answers the job of `good` rightly and the other job wrongly (with `good`'s solution) until
/// it fails.
async fn work(url: &str, good: &str) {
    let mut grpc = Client::connect(url, None).await.unwrap();
    let worker = cubefleet_testkit::register_worker(&mut grpc, "liar").await;
    let undo = |s: &str| MoveSeq::parse(s).unwrap().inverse().to_string();
    let facelets = |s: &str| {
        let cube = cubefleet_tables::parse_position(s, cubefleet_tables::InputFormat::Auto);
        cubefleet_tables::FaceletCube::from_cubie(&cube.unwrap()).to_string()
    };
    let jobs = lease(&mut grpc, &worker, 2).await;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    let (good_job, bad_job) = if jobs[0].facelets == facelets(good) {
        (jobs[0].job_id, jobs[1].job_id)
    } else {
        (jobs[1].job_id, jobs[0].job_id)
    };
    // this version's form: the enum and its text
    let mut right = Completion {
        job_id: good_job,
        solution: undo(good),
        has_solution: true,
        ..Completion::default()
    };
    right.set_outcome(ResultStatus::Solved);
    assert_eq!(complete(&mut grpc, &worker, right).await, 1);
    // an older worker's form: the text alone
    let wrong = Completion {
        job_id: bad_job,
        status: "solved".into(),
        solution: undo(good),
        has_solution: true,
        ..Completion::default()
    };
    for round in 0..cubefleet_coordinator::MAX_REJECTIONS {
        if round > 0 {
            let again = lease(&mut grpc, &worker, 1).await;
            assert_eq!(again.len(), 1, "round {round}: the job is not queued again");
        }
        assert_eq!(complete(&mut grpc, &worker, wrong.clone()).await, 0);
    }
}

/// The counts every view shows.
const COUNTS: [&str; 9] = [
    "total",
    "queued",
    "leased",
    "done",
    "invalid",
    "cancelled",
    "failed",
    "finished",
    "made",
];

#[test]
fn the_cli_the_json_api_and_the_page_agree_on_a_batch_with_a_failed_job() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, grpc, http) = common::http_coordinator(dir.path());
    let url = format!("http://127.0.0.1:{grpc}");
    wait_for("the coordinator", Duration::from_secs(30), || {
        TcpStream::connect(("127.0.0.1", http)).ok()
    });

    let (good, bad) = ("R U F", "D L B");
    let file = dir.path().join("batch.txt");
    std::fs::write(&file, format!("{good}\n# a comment\n{bad}\nR U Q2\n")).unwrap();
    let batch = client(&url, &["submit", file.to_str().unwrap()])
        .trim()
        .to_string();
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(work(&url, good));

    // the CLI
    let from_cli = status(&url, &batch).unwrap();
    assert_eq!(from_cli["batch"], batch.as_str(), "{from_cli}");
    // the JSON API
    let api: serde_json::Value = serde_json::from_str(&http_body(http, "/api/status")).unwrap();
    let from_api = api["batches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["batch_id"] == batch.as_str())
        .unwrap_or_else(|| panic!("batch {batch} not in {api}"))
        .clone();
    assert_eq!(api["jobs"]["failed"], 1, "{api}");
    // the page: the batch's article and the counts it carries
    let page = http_body(http, "/");
    let start = page
        .find(&format!("data-batch=\"{batch}\""))
        .unwrap_or_else(|| panic!("batch {batch} not on the page"));
    let article = &page[start..start + page[start..].find("</article>").unwrap()];
    let on_page = |name: &str| -> u64 {
        let key = format!("data-{name}=\"");
        let at = article
            .find(&key)
            .unwrap_or_else(|| panic!("no {key} in {article}"));
        let rest = &article[at + key.len()..];
        rest[..rest.find('"').unwrap()].parse().unwrap()
    };

    let want = [4, 0, 0, 2, 1, 0, 1, 4, 4];
    for (name, want) in COUNTS.iter().zip(want) {
        if *name != "made" {
            assert_eq!(on_page(name), want, "page: {name} in {article}");
        }
        assert_eq!(from_cli[name], want, "status --json: {name} in {from_cli}");
        assert_eq!(from_api[name], want, "/api/status: {name} in {from_api}");
    }
    for view in [&from_cli, &from_api] {
        assert_eq!(view["state"], "finished", "{view}");
    }
    assert!(article.contains("badge finished"), "{article}");
    assert!(
        article.contains("<progress class=\"batch-progress\" max=\"4\" value=\"4\">"),
        "{article}"
    );
    assert!(article.contains("100.0%"), "{article}");
    // the text the CLI prints says the same
    let text = client(&url, &["status", &batch]);
    assert!(
        text.contains("total 4 queued 0 leased 0 done 2 invalid 1 cancelled 0 failed 1"),
        "{text}"
    );
    // the failed line's status, as results show it
    let results = client(&url, &["results", &batch, "--status", "failed"]);
    let failed: Vec<serde_json::Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(failed.len(), 1, "{results}");
    assert_eq!(
        (failed[0]["index"].as_u64(), failed[0]["status"].as_str()),
        (Some(2), Some("failed"))
    );
    assert_eq!(coordinator.terminate(Duration::from_secs(60)), Some(0));
}
