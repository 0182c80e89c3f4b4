//! The cluster end to end, as real processes on loopback: a coordinator and workers started as
//! `cubefleet` processes, killed with SIGKILL mid-batch and restarted, and the client commands
//! (`submit`, `status`, `results`, `cancel`, `lookup`) and the embedded `run` checked against
//! what they print.

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use common::{
    assert_solves, client, client_output, coordinator, coordinator_at, count, cubefleet,
    refusing_port, short_scrambles, status, wait_for, worker, Proc,
};

/// Lines that are no position, each with a word its reason must contain.
const INVALID: [(&str, &str); 3] = [
    ("R U X2 F", "X2"),
    (
        "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBU",
        "appears",
    ),
    ("hello there", "hello"),
];

/// The test's batch: random states, random-state scrambles, and a few invalid lines.
fn batch_lines() -> Vec<String> {
    let states = include_str!("vectors/random-states-1000.txt");
    let mut lines: Vec<String> = states.lines().take(700).map(str::to_string).collect();
    let out = cubefleet()
        .args(["scramble", "--count", "300", "--seed", "11"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let scrambles = String::from_utf8_lossy(&out.stdout).into_owned();
    lines.extend(scrambles.lines().map(str::to_string));
    // the invalid lines go in at fixed places among the good ones
    for (k, (line, _)) in INVALID.iter().enumerate() {
        lines.insert(100 + 300 * k, line.to_string());
    }
    lines
}

/// Lines in the second batch: enough for several store groups.
const SECOND_LINES: usize = 12_000;

/// Reads the exported results and checks every line of `lines` has exactly one, verified.
fn check_results(url: &str, batch: &str, lines: &[String]) -> BTreeMap<usize, serde_json::Value> {
    let out = client(url, &["results", batch]);
    let mut by_index = BTreeMap::new();
    for l in out.lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
        let i = v["index"].as_u64().expect("index") as usize;
        assert!(by_index.insert(i, v).is_none(), "line {i} has two results");
    }
    assert_eq!(by_index.len(), lines.len(), "one result per line");
    for (i, v) in &by_index {
        assert_eq!(v["input"].as_str(), Some(lines[*i].as_str()), "line {i}");
        for field in ["status", "solution", "length", "optimal", "error"] {
            assert!(v.get(field).is_some(), "line {i} lacks {field}: {v}");
        }
        match INVALID.iter().find(|(l, _)| *l == lines[*i]) {
            Some((_, reason)) => {
                assert_eq!(v["status"], "invalid", "{v}");
                let e = v["error"].as_str().expect("a reason");
                assert!(e.contains(reason), "reason {e:?} should name {reason:?}");
            }
            None => {
                assert_eq!(v["status"], "solved", "{v}");
                assert_eq!(v["optimal"], false);
                let length = v["length"].as_u64().expect("length");
                assert!(length <= 20, "line {i}: {length} moves");
                assert_solves(
                    &lines[*i],
                    v["solution"].as_str().expect("solution"),
                    length,
                );
            }
        }
    }
    by_index
}

#[test]
fn cluster_survives_sigkill_of_a_worker_and_the_coordinator() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("store");
    let file = dir.path().join("batch.txt");
    let lines = batch_lines();
    std::fs::write(&file, lines.join("\n") + "\n").expect("write");
    let (coord, url) = coordinator(&data);
    wait_for("the coordinator", Duration::from_secs(30), || {
        client_output(&url, &["status", "--json"]).ok()
    });
    let out = client(
        &url,
        &[
            "submit",
            file.to_str().expect("utf-8"),
            "--name",
            "e2e",
            "--max-length",
            "20",
        ],
    );
    let batch = out.trim().to_string();
    assert!(!batch.is_empty() && !batch.contains('\n'), "{out:?}");
    let s = status(&url, &batch).expect("status");
    assert_eq!(count(&s, "total"), lines.len() as u64);
    assert_eq!(count(&s, "invalid"), INVALID.len() as u64);

    // two workers; one is killed once the batch is under way
    let a = worker("worker-a", &url);
    let b = worker("worker-b", &url);
    let done = |s: &serde_json::Value| count(s, "done");
    wait_for("first results", Duration::from_secs(120), || {
        status(&url, &batch).filter(|s| done(s) >= 30)
    });
    a.kill();
    let before = wait_for("more results", Duration::from_secs(120), || {
        status(&url, &batch).filter(|s| done(s) >= 150)
    });
    // a second, larger batch is being submitted (at a lower priority) when the coordinator dies
    // with worker-a's leases outstanding and worker-b mid-flight
    let second = dir.path().join("second.txt");
    let second_lines = short_scrambles(SECOND_LINES);
    std::fs::write(&second, second_lines.join("\n") + "\n").expect("write");
    let submit_second = || {
        let mut c = cubefleet();
        c.arg("submit")
            .arg(&second)
            .args(["--coordinator", &url, "--batch-id", "second"])
            .args(["--priority", "-1"]);
        c
    };
    let submitting = Proc::spawn("submit", submit_second());
    wait_for("part of the second batch", Duration::from_secs(60), || {
        status(&url, "second").filter(|s| count(s, "total") > 0)
    });
    coord.kill();
    drop(submitting);
    eprintln!("coordinator killed at {} done", done(&before));

    // restarted on the same store and address: nothing acknowledged is lost
    let coord = coordinator_at(&url, &data);
    let after = wait_for("the restarted coordinator", Duration::from_secs(30), || {
        status(&url, &batch)
    });
    assert_eq!(count(&after, "total"), lines.len() as u64);
    assert!(done(&after) >= done(&before), "{after} after {before}");
    assert_eq!(count(&after, "invalid"), INVALID.len() as u64);
    // the interrupted submission, sent again with the same batch id, completes the batch once
    let partial = count(&status(&url, "second").expect("status"), "total");
    let out = submit_second().output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = status(&url, "second").expect("status");
    assert_eq!(count(&s, "total"), SECOND_LINES as u64, "after {partial}");
    let states: u64 = ["queued", "leased", "done", "invalid", "cancelled"]
        .iter()
        .map(|f| count(&s, f))
        .sum();
    assert_eq!(states, SECOND_LINES as u64, "each job in one state: {s}");
    let c = worker("worker-c", &url);
    let last = wait_for("the batch to finish", Duration::from_secs(600), || {
        status(&url, &batch).filter(|s| count(s, "queued") + count(s, "leased") == 0)
    });
    assert_eq!(
        done(&last) + count(&last, "invalid"),
        lines.len() as u64,
        "{last}"
    );
    assert_eq!(count(&last, "cancelled"), 0);
    let hist: u64 = last["length_histogram"]
        .as_array()
        .expect("histogram")
        .iter()
        .map(|n| n.as_u64().expect("count"))
        .sum();
    assert_eq!(hist, done(&last), "every solution is in the histogram");

    let results = check_results(&url, &batch, &lines);

    // only the invalid lines, as CSV
    let csv = client(
        &url,
        &["results", &batch, "--format", "csv", "--status", "invalid"],
    );
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "index,input,status,solution,length,optimal,error,state_index"
    );
    assert_eq!(rows.len(), 1 + INVALID.len());

    // any position of the batch, written another way, is found in the store
    let (i, v) = results
        .iter()
        .find(|(_, v)| v["status"] == "solved")
        .expect("a solved line");
    let solution = v["solution"].as_str().expect("solution");
    let found = client(&url, &["lookup", &lines[*i]]);
    let l: serde_json::Value = serde_json::from_str(found.trim()).expect("JSON");
    assert_eq!(l["status"], "solved");
    assert_solves(
        &lines[*i],
        l["solution"].as_str().expect("solution"),
        l["length"].as_u64().expect("length"),
    );
    // the inverse position: its stored answer is the inverse solution
    let inverse = cubefleet_tables::MoveSeq::parse(solution)
        .expect("notation")
        .inverse()
        .to_string();
    let found = client(&url, &["lookup", &inverse]);
    let l: serde_json::Value = serde_json::from_str(found.trim()).expect("JSON");
    assert_solves(
        &inverse,
        l["solution"].as_str().expect("solution"),
        l["length"].as_u64().expect("length"),
    );

    // workers drain and exit cleanly on SIGTERM; the coordinator flushes and exits
    assert_eq!(b.terminate(Duration::from_secs(30)), Some(0));
    assert_eq!(c.terminate(Duration::from_secs(30)), Some(0));
    assert_eq!(coord.terminate(Duration::from_secs(30)), Some(0));
}

#[test]
fn cancel_stops_queued_jobs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("batch.txt");
    std::fs::write(&file, "R U\nF2 D'\nL B R2\n").expect("write");
    let (coord, url) = coordinator(&dir.path().join("store"));
    wait_for("the coordinator", Duration::from_secs(30), || {
        client_output(&url, &["status", "--json"]).ok()
    });
    // no worker: everything stays queued until cancelled
    let batch = client(&url, &["submit", file.to_str().expect("utf-8")])
        .trim()
        .to_string();
    client(&url, &["cancel", &batch]);
    let s = status(&url, &batch).expect("status");
    assert_eq!((count(&s, "cancelled"), count(&s, "queued")), (3, 0), "{s}");
    let out = client(&url, &["results", &batch, "--status", "cancelled"]);
    assert_eq!(out.lines().count(), 3);
    // an unknown batch is an error that names it
    let e = client_output(&url, &["status", "no-such-batch"]).expect_err("unknown batch");
    assert!(e.contains("no-such-batch"), "{e}");
    coord.terminate(Duration::from_secs(30));
}

#[test]
fn run_resumes_after_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let file = dir.path().join("states.txt");
    let mut lines: Vec<String> = include_str!("vectors/random-states-1000.txt")
        .lines()
        .skip(700)
        .take(300)
        .map(str::to_string)
        .collect();
    lines.insert(10, INVALID[0].0.to_string());
    std::fs::write(&file, lines.join("\n") + "\n").expect("write");
    let run = || {
        let mut c = cubefleet();
        c.arg("run")
            .arg(&file)
            .arg("--data")
            .arg(&data)
            .args(["--threads", "2", "--no-build"]);
        c
    };
    // killed as soon as its store exists (mid-batch or not, nothing may be lost)
    let first = Proc::spawn("run", run());
    wait_for("the store", Duration::from_secs(60), || {
        data.join("db").exists().then_some(())
    });
    std::thread::sleep(Duration::from_millis(300));
    first.kill();

    let out = run().output().expect("runs");
    assert_eq!(out.status.code(), Some(1), "an invalid line makes it 1");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let results: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(results.len(), lines.len(), "one line per input");
    for (i, v) in results.iter().enumerate() {
        assert_eq!(v["index"].as_u64(), Some(i as u64), "input order");
        if i == 10 {
            assert_eq!(v["status"], "invalid");
            continue;
        }
        assert_eq!(v["status"], "solved", "{v}");
        let length = v["length"].as_u64().expect("length");
        assert!(length <= 20);
        assert_solves(&lines[i], v["solution"].as_str().expect("solution"), length);
    }
    // a third run answers everything from the store, identically
    let again = run().output().expect("runs");
    assert_eq!(String::from_utf8_lossy(&again.stdout), stdout);
}

/// A client command against a coordinator that is not there fails with a message saying so.
#[test]
fn client_reports_an_unreachable_coordinator() {
    // a port held by a socket that does not listen: connections are refused
    let (_held, port) = refusing_port();
    let url = format!("http://127.0.0.1:{port}");
    let out = Command::new(env!("CARGO_BIN_EXE_cubefleet"))
        .args(["status", "--coordinator", &url])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("coordinator"), "{e}");
}
