//! Coset batches end to end: `run --cosets` in one process, and a coordinator with worker
//! processes, one killed in the middle of a coset and the coordinator killed and restarted;
//! every coset's counts equal `cubefleet coset solve`'s for it, and `status` sums them.
//!
//! The depth is small (6: coset 0, H itself, takes about 4 s on one thread and 0.6 GB, the
//! others of the range milliseconds), so the tests stay short; a worker still checks that the
//! system says a full coset's 4.9 GB are available before it takes a coset.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{
    client, client_output, coordinator, coordinator_at, count, cubefleet, json_rows, status,
    wait_for, worker,
};

/// The depth the batches are solved to.
const DEPTH: &str = "6";

/// The counts `cubefleet coset solve` gives coset `n` to [`DEPTH`], exact throughout.
fn solved_alone(n: u64) -> Vec<u64> {
    let rows = json_rows(cubefleet().args([
        "coset",
        "solve",
        &n.to_string(),
        "--max-depth",
        DEPTH,
        "--exact-depth",
        DEPTH,
        "--threads",
        "2",
        "--format",
        "json",
    ]));
    counts_of(&rows[0])
}

fn counts_of(row: &serde_json::Value) -> Vec<u64> {
    row["counts"]
        .as_array()
        .unwrap_or_else(|| panic!("counts in {row}"))
        .iter()
        .map(|n| n.as_u64().expect("a count"))
        .collect()
}

/// Checks coset rows (one per coset of `first..first + rows.len()`, in order): each one's
/// counts are `coset solve`'s (computed for those with a position within the depth; the
/// others are all 0 both ways, as `coset solve` of one of them shows), they sum with the
/// unsolved to the coset's size, and `sums` (a status's `coset_counts`) is their sum.
fn check_rows(rows: &[serde_json::Value], first: u64, sums: &[u64]) {
    let mut total = vec![0u64; sums.len()];
    let mut empty_checked = false;
    for (k, row) in rows.iter().enumerate() {
        let n = first + k as u64;
        assert_eq!(row["coset"].as_u64(), Some(n), "{row}");
        assert_eq!(row["status"], "solved", "{row}");
        assert_eq!(row["claimed"], true, "a coset's counts are a claim: {row}");
        let counts = counts_of(row);
        let unsolved = row["unsolved"].as_u64().expect("unsolved");
        assert_eq!(
            counts.iter().sum::<u64>() + unsolved,
            19_508_428_800,
            "{row}"
        );
        if counts.iter().any(|&c| c > 0) || !empty_checked {
            assert_eq!(counts, solved_alone(n), "coset {n}");
            empty_checked |= counts.iter().all(|&c| c == 0);
        }
        for (t, c) in total.iter_mut().zip(&counts) {
            *t += c;
        }
    }
    assert_eq!(total, sums, "the status sums the cosets' counts");
}

/// `run --cosets` solves each coset of the range, a row per coset in order; a second run
/// answers from the store, identically. Conjugate cosets (3, 6, 11 and 19 are one class of
/// the 16 symmetries that fix H) have equal counts.
#[test]
fn run_solves_a_range_of_cosets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let run = || {
        let mut c = cubefleet();
        c.args(["run", "--cosets", "0..24", "--max-depth", DEPTH])
            .args(["--exact-depth", DEPTH, "--threads", "2", "--no-build"])
            .arg("--data")
            .arg(&data);
        c
    };
    let out = run().output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(rows.len(), 24);
    let mut sums = vec![0u64; 7];
    for row in &rows {
        for (s, c) in sums.iter_mut().zip(counts_of(row)) {
            *s += c;
        }
    }
    check_rows(&rows, 0, &sums);
    let class: Vec<Vec<u64>> = [3, 6, 11, 19].map(|n| counts_of(&rows[n])).into();
    assert!(class.iter().all(|c| *c == class[0]), "{class:?}");
    assert!(class[0].iter().any(|&c| c > 0));
    let again = run().output().expect("runs");
    assert_eq!(String::from_utf8_lossy(&again.stdout), stdout);
}

/// A coset batch on a coordinator with worker processes: the worker holding H (the one slow
/// coset) is killed in the middle of it, so its lease expires and another worker solves it;
/// the coordinator is killed and restarted with the batch half done. Nothing acknowledged is
/// lost, every coset ends solved once, and the sums of `status` are the rows'.
#[test]
fn a_coset_batch_survives_a_killed_worker_and_coordinator() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("store");
    let (coord, url) = coordinator(&data);
    wait_for("the coordinator", Duration::from_secs(30), || {
        client_output(&url, &["status", "--json"]).ok()
    });
    let out = client(
        &url,
        &[
            "submit",
            "--cosets",
            "0..40",
            "--max-depth",
            DEPTH,
            "--exact-depth",
            DEPTH,
            "--batch-id",
            "cosets",
        ],
    );
    assert_eq!(out.trim(), "cosets");
    let s = status(&url, "cosets").expect("status");
    assert_eq!(count(&s, "total"), 40);
    assert_eq!(s["kind"], "cosets");

    // worker-a leases coset 0 (the first line, one coset per worker) and is killed in it
    let a = worker("worker-a", &url);
    wait_for("coset 0 leased", Duration::from_secs(60), || {
        status(&url, "cosets").filter(|s| count(s, "leased") > 0)
    });
    std::thread::sleep(Duration::from_millis(500));
    a.kill();
    let b = worker("worker-b", &url);
    let before = wait_for("cosets solved", Duration::from_secs(120), || {
        status(&url, "cosets").filter(|s| count(s, "done") >= 10)
    });
    coord.kill();
    let coord = coordinator_at(&url, &data);
    let after = wait_for("the restarted coordinator", Duration::from_secs(30), || {
        status(&url, "cosets")
    });
    assert!(
        count(&after, "done") >= count(&before, "done"),
        "{after} after {before}"
    );
    let c = worker("worker-c", &url);
    let last = wait_for("every coset", Duration::from_secs(300), || {
        status(&url, "cosets").filter(|s| count(s, "done") == 40)
    });
    assert_eq!(count(&last, "failed"), 0);
    let sums: Vec<u64> = last["coset_counts"]
        .as_array()
        .unwrap_or_else(|| panic!("coset_counts in {last}"))
        .iter()
        .map(|n| n.as_u64().expect("a count"))
        .collect();
    let rows = json_rows(
        cubefleet()
            .args(["results", "cosets", "--chunks"])
            .args(["--coordinator", &url]),
    );
    assert_eq!(rows.len(), 40);
    check_rows(&rows, 0, &sums);
    // coset 0 was solved again by a worker alive at the end, under a new lease
    assert_ne!(rows[0]["worker"], "worker-a", "{}", rows[0]);
    let workers: BTreeMap<String, usize> = rows.iter().fold(BTreeMap::new(), |mut m, r| {
        *m.entry(r["worker"].as_str().unwrap_or("").to_string())
            .or_default() += 1;
        m
    });
    assert!(
        !workers.contains_key(""),
        "every coset names its worker: {workers:?}"
    );
    // the status text names the sums
    let text = client(&url, &["status", "cosets"]);
    assert!(text.contains("positions by depth 0:1 1:10 2:67"), "{text}");
    drop(b);
    assert_eq!(c.terminate(Duration::from_secs(30)), Some(0));
    assert_eq!(coord.terminate(Duration::from_secs(30)), Some(0));
}
