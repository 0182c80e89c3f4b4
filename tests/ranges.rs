//! Range and sample batches end to end, as real processes on loopback: a range solved by a
//! coordinator and two workers while one is SIGKILLed, every state answered once and each
//! solution checked against the state its index names; `run --sample` reproducible from its
//! seed; and a range of 10^18 states that leaves the coordinator's memory and store flat and
//! is cancelled at once.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::worker;
use common::{client, client_output, coordinator, count, cubefleet, status, wait_for};
use cubefleet_tables::index::state_at;
use cubefleet_tables::MoveSeq;

/// Checks that `solution` solves the state with index `index` in `length` moves.
fn assert_solves_index(index: &str, solution: &str, length: u64) {
    let cube = state_at(index.parse().expect("a decimal index")).expect("a state");
    let moves = MoveSeq::parse(solution).expect("standard notation");
    assert!(
        cube.apply_moves(&moves.0).is_solved(),
        "{solution:?} does not solve state {index}"
    );
    assert_eq!(moves.len() as u64, length, "length of {solution:?}");
}

/// The results of `out` (JSON lines) by line index; each line once.
fn by_index(out: &str) -> BTreeMap<u64, serde_json::Value> {
    let mut m = BTreeMap::new();
    for l in out.lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
        let i = v["index"].as_u64().expect("index");
        assert!(m.insert(i, v).is_none(), "line {i} has two results");
    }
    m
}

#[test]
fn a_range_is_answered_once_per_state_while_a_worker_is_killed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_coord, url) = coordinator(&dir.path().join("store"));
    wait_for("the coordinator", Duration::from_secs(30), || {
        client_output(&url, &["status", "--json"]).ok()
    });
    // states spread over the whole space (far apart, so as hard as random ones)
    let (start, step, n) = (12_345_678_901_234_567u128, 9_876_543_210_123u64, 400u64);
    let end = start + u128::from(step) * u128::from(n);
    let range = format!("{start}..{end}");
    let out = client(
        &url,
        &["submit", "--range", &range, "--step", &step.to_string()],
    );
    let batch = out.trim().to_string();
    let s = status(&url, &batch).expect("status");
    assert_eq!(count(&s, "total"), n);
    assert_eq!((count(&s, "made"), s["kind"].as_str()), (0, Some("range")));

    let a = worker("worker-a", &url);
    let _b = worker("worker-b", &url);
    wait_for("first results", Duration::from_secs(120), || {
        status(&url, &batch).filter(|s| count(s, "done") >= 20)
    });
    a.kill();
    let last = wait_for("the range to finish", Duration::from_secs(600), || {
        status(&url, &batch).filter(|s| count(s, "queued") + count(s, "leased") == 0)
    });
    assert_eq!(count(&last, "done"), n, "{last}");
    assert_eq!(count(&last, "made"), n);

    let results = by_index(&client(&url, &["results", &batch]));
    assert_eq!(results.len() as u64, n, "one result per state");
    for (k, v) in &results {
        let index = start + u128::from(*k) * u128::from(step);
        assert_eq!(v["state_index"].as_str(), Some(index.to_string().as_str()));
        assert_eq!(v["status"], "solved", "{v}");
        let length = v["length"].as_u64().expect("length");
        assert!(length <= 20, "{v}");
        assert_solves_index(
            v["state_index"].as_str().expect("index"),
            v["solution"].as_str().expect("solution"),
            length,
        );
    }
    // the per-chunk counts add up to the histogram `status` shows
    let chunks = client(&url, &["results", &batch, "--chunks"]);
    let mut hist: Vec<u64> = Vec::new();
    for l in chunks.lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
        for (len, c) in v["length_histogram"]
            .as_array()
            .expect("counts")
            .iter()
            .enumerate()
        {
            if hist.len() <= len {
                hist.resize(len + 1, 0);
            }
            hist[len] += c.as_u64().expect("count");
        }
    }
    let shown: Vec<u64> = last["length_histogram"]
        .as_array()
        .expect("histogram")
        .iter()
        .map(|c| c.as_u64().expect("count"))
        .collect();
    assert_eq!(hist, shown);
    assert_eq!(shown.iter().sum::<u64>(), n);
}

/// `run --sample N --seed S` in the store `data`: the results (JSON lines).
fn run_sample(data: &Path, n: &str, seed: &str) -> String {
    let out = cubefleet()
        .args(["run", "--sample", n, "--seed", seed, "--max-length", "20"])
        .args(["--no-build", "--threads", "2", "--data"])
        .arg(data)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn a_sample_is_reproducible_from_its_seed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let histogram = |out: &str| {
        let mut indices = Vec::new();
        let mut lengths = BTreeMap::new();
        for (k, v) in by_index(out) {
            assert_eq!(k as usize, indices.len(), "in line order");
            let index = v["state_index"].as_str().expect("index").to_string();
            let length = v["length"].as_u64().expect("length");
            assert!(length <= 20, "{v}");
            assert_solves_index(&index, v["solution"].as_str().expect("solution"), length);
            indices.push(index);
            *lengths.entry(length).or_insert(0u64) += 1;
        }
        (indices, lengths)
    };
    let (a, ha) = histogram(&run_sample(&dir.path().join("one"), "1000", "7"));
    let (b, hb) = histogram(&run_sample(&dir.path().join("two"), "1000", "7"));
    assert_eq!(a.len(), 1000);
    assert_eq!(a, b, "the same seed draws the same states");
    assert_eq!(ha, hb, "and gives the same histogram");
    let (c, _) = histogram(&run_sample(&dir.path().join("three"), "20", "8"));
    assert!(
        c.iter().zip(&a).all(|(x, y)| x != y),
        "another seed draws other states"
    );
}

/// The resident memory of process `pid`, in kB.
fn rss_kb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// The bytes of the files under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

#[test]
fn a_range_of_10_18_states_keeps_memory_and_store_flat_and_cancels() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("store");
    let (coord, url) = coordinator(&data);
    wait_for("the coordinator", Duration::from_secs(30), || {
        client_output(&url, &["status", "--json"]).ok()
    });
    let pid = coord.child.id();
    let (rss0, disk0) = (rss_kb(pid), dir_bytes(&data));
    let batch = client(
        &url,
        &[
            "submit",
            "--range",
            "0..1000000000000000000",
            "--keep",
            "histogram",
        ],
    )
    .trim()
    .to_string();
    for _ in 0..5 {
        let s = status(&url, &batch).expect("status");
        assert_eq!(count(&s, "total"), 1_000_000_000_000_000_000);
        assert_eq!(count(&s, "made"), 0);
    }
    // a range's jobs are made only as workers lease them: the five reads above found none
    // made, and memory and store are measured after them
    let (rss1, disk1) = (rss_kb(pid), dir_bytes(&data));
    eprintln!(
        "coordinator with a 10^18 range submitted: VmRSS {rss0} kB -> {rss1} kB, store \
         {disk0} -> {disk1} bytes"
    );
    assert!(rss1 < rss0 + 16 * 1024, "{rss0} kB -> {rss1} kB");
    assert!(disk1 < disk0 + 1024 * 1024, "{disk0} -> {disk1} bytes");
    let out = client(&url, &["cancel", &batch]);
    assert!(out.contains("made 0 of 1099511627776 jobs"), "{out}");
    let s = status(&url, &batch).expect("status");
    assert_eq!((count(&s, "queued"), count(&s, "leased")), (0, 0), "{s}");
    assert_eq!(count(&s, "cancelled"), 1 << 40);
    assert_eq!(s["keep"], "histogram");
}

#[test]
fn bad_ranges_and_samples_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (args, why) in [
        (&["--range", "10..5"][..], "START must be below END"),
        (
            &["--range", "0..43252003274489856001"],
            "past the last state",
        ),
        (
            &["--range", "0..43252003274489856000"],
            "use --step or split",
        ),
        (&["--range", "0..ten"], "not a number"),
        (&["--range", "7"], "START..END"),
        (&["--range", "0..10", "--step", "0"], "--step"),
        (&["--sample", "10"], "--seed"),
        (&["--sample", "0", "--seed", "1"], "--sample"),
        (&["file.txt", "--range", "0..10"], "cannot be used with"),
        (
            &["file.txt", "--keep", "histogram"],
            "keep histogram is for",
        ),
    ] {
        let out = cubefleet()
            .arg("run")
            .args(args)
            .arg("--data")
            .arg(dir.path().join("store"))
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(err.contains(why), "{args:?}: {err}");
    }
}
