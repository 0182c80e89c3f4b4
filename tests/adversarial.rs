//! The unlucky operator, end to end: a coordinator SIGKILLed at random moments of submissions
//! and completions (many times, from a seed), and a worker SIGKILLed in the middle of an
//! optimal search. Whatever was acknowledged survives, and every line ends with exactly one
//! verified answer of the line as written.
//!
//! The seed is printed; `CUBEFLEET_ADVERSARIAL_SEED=N` replays a run.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

use common::{
    assert_solves, client, client_output, coordinator, coordinator_at, count, cubefleet,
    short_scrambles, status, wait_for, worker, Proc,
};

/// The seed of this run: `CUBEFLEET_ADVERSARIAL_SEED`, else a fresh one (printed).
fn seed() -> u64 {
    let seed = std::env::var("CUBEFLEET_ADVERSARIAL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("CUBEFLEET_ADVERSARIAL_SEED={seed}");
    seed
}

/// Waits until the coordinator at `url` answers.
fn wait_up(url: &str) {
    wait_for("the coordinator", Duration::from_secs(30), || {
        client_output(url, &["status", "--json"]).ok()
    });
}

/// `submit FILE --batch-id ID` against `url`, as a command to spawn or run.
fn submit(url: &str, file: &Path, id: &str, extra: &[&str]) -> std::process::Command {
    let mut c = cubefleet();
    c.arg("submit")
        .arg(file)
        .args(["--coordinator", url, "--batch-id", id])
        .args(extra);
    c
}

/// The exported results of `batch`: exactly one per line of `lines`, each for its line as
/// written, solved and verified (within `max_length` moves when given); returned by index.
fn check_batch(
    url: &str,
    batch: &str,
    lines: &[String],
    max_length: Option<u64>,
) -> BTreeMap<usize, serde_json::Value> {
    let out = client(url, &["results", batch]);
    let mut by_index = BTreeMap::new();
    for l in out.lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
        let i = v["index"].as_u64().expect("index") as usize;
        assert!(by_index.insert(i, v).is_none(), "{batch}: line {i} twice");
    }
    assert_eq!(by_index.len(), lines.len(), "{batch}: one result per line");
    for (i, v) in &by_index {
        assert_eq!(v["input"].as_str(), Some(lines[*i].as_str()), "{batch} {i}");
        assert_eq!(v["status"], "solved", "{batch} {i}: {v}");
        let length = v["length"].as_u64().expect("length");
        if let Some(max) = max_length {
            assert!(length <= max, "{batch} {i}: {length} moves");
        }
        assert_solves(
            &lines[*i],
            v["solution"].as_str().expect("a solution"),
            length,
        );
    }
    by_index
}

/// The coordinator is SIGKILLed at a random moment, again and again, while batches are being
/// submitted and a worker completes jobs. A submission that was acknowledged (the client
/// exited 0) keeps all its lines through every later kill; a job seen done stays done; an
/// interrupted submission resumed under its batch id completes the batch once; in the end
/// every line of every batch has exactly one verified answer.
#[test]
fn coordinator_killed_at_random_moments_loses_nothing_acknowledged() {
    const BATCHES: usize = 4;
    const LINES: usize = 15_000;
    const KILLS: usize = 14;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed());
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("store");
    // each batch its own lines: the short scrambles, rotated so no two batches are alike
    let all = short_scrambles(LINES * BATCHES);
    let batches: Vec<(String, std::path::PathBuf, Vec<String>)> = (0..BATCHES)
        .map(|k| {
            let lines = all[k * LINES..(k + 1) * LINES].to_vec();
            let file = dir.path().join(format!("batch-{k}.txt"));
            std::fs::write(&file, lines.join("\n") + "\n").expect("write");
            (format!("adv-{k}"), file, lines)
        })
        .collect();
    // the first coordinator picks a port; each next one listens where the last one did
    let mut url = String::new();
    // one worker for the whole test: it outlives every coordinator and reconnects
    let mut w = None;
    let mut acknowledged = vec![false; BATCHES];
    let mut done_seen = vec![0u64; BATCHES];
    let mut next = 0;
    for kill in 0..KILLS {
        let coord = if kill == 0 {
            let (coord, first) = coordinator(&data);
            url = first;
            coord
        } else {
            coordinator_at(&url, &data)
        };
        wait_up(&url);
        // what was acknowledged or seen done before is still there
        for (k, (id, _, lines)) in batches.iter().enumerate() {
            let Some(s) = status(&url, id) else {
                assert!(!acknowledged[k], "acknowledged batch {id} vanished");
                continue;
            };
            if acknowledged[k] {
                assert_eq!(count(&s, "total"), lines.len() as u64, "{id}: {s}");
            }
            assert!(
                count(&s, "done") >= done_seen[k],
                "{id}: {} done after {} were seen done",
                count(&s, "done"),
                done_seen[k]
            );
        }
        if w.is_none() {
            w = Some(worker("worker", &url));
        }
        // what is seen done now must survive the kill
        for (k, (id, _, _)) in batches.iter().enumerate() {
            if let Some(s) = status(&url, id) {
                done_seen[k] = done_seen[k].max(count(&s, "done"));
            }
        }
        // submit (or resume) the next unacknowledged batch, and kill at a random moment
        let submitting = (next < BATCHES).then(|| {
            let (id, file, _) = &batches[next];
            Proc::spawn("submit", submit(&url, file, id, &["--priority", "1"]))
        });
        std::thread::sleep(Duration::from_millis(rng.random_range(5..700)));
        coord.kill();
        // a submission that exited 0 was acknowledged before the kill
        if let Some(mut p) = submitting {
            let exit = wait_for("the submission to end", Duration::from_secs(30), || {
                p.child.try_wait().expect("try_wait")
            });
            if exit.success() {
                acknowledged[next] = true;
                next += 1;
            }
        }
        eprintln!("kill {kill}: acknowledged {acknowledged:?}, seen done {done_seen:?}");
    }
    // a last coordinator: the batches not acknowledged yet are resumed to the end
    let coord = coordinator_at(&url, &data);
    wait_up(&url);
    for (id, file, lines) in &batches[next..] {
        let out = submit(&url, file, id, &[]).output().expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let s = status(&url, id).expect("status");
        assert_eq!(count(&s, "total"), lines.len() as u64, "{id}: {s}");
    }
    let start = Instant::now();
    for (id, _, lines) in &batches {
        let s = wait_for(&format!("{id} to finish"), Duration::from_secs(600), || {
            status(&url, id).filter(|s| count(s, "done") == lines.len() as u64)
        });
        assert_eq!(count(&s, "total"), lines.len() as u64, "{id}: {s}");
        check_batch(&url, id, lines, Some(20));
    }
    eprintln!("finished in {:?} after the last kill", start.elapsed());
    drop(w);
    assert_eq!(coord.terminate(Duration::from_secs(30)), Some(0));
}

/// A worker SIGKILLed in the middle of optimal searches: its leases expire, another worker
/// resumes the jobs (from the lower bounds the first one proved), and every answer is a
/// proven optimum of its line, as long as the published optimal length.
#[test]
fn worker_killed_mid_optimal_search_loses_nothing() {
    let known = include_str!("vectors/known-optimal.txt");
    // the positions of 12 to 16 moves: seconds each on the test tables, so the kill lands
    // inside a search
    let mut cases: Vec<(String, u64)> = known
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (pos, len) = (f.next()?, f.next()?.parse::<u64>().ok()?);
            (12..=16).contains(&len).then(|| (pos.to_string(), len))
        })
        .collect();
    cases.truncate(5);
    assert!(
        cases.len() >= 3,
        "positions of 12-16 moves in known-optimal.txt"
    );
    let lines: Vec<String> = cases.iter().map(|(p, _)| p.clone()).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("optimal.txt");
    std::fs::write(&file, lines.join("\n") + "\n").expect("write");
    let (coord, url) = coordinator(&dir.path().join("store"));
    wait_up(&url);
    let out = submit(&url, &file, "opt", &["--optimal"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let a = worker("worker-a", &url);
    // killed once it holds leases and has searched a while (after its tables loaded)
    wait_for("worker-a's leases", Duration::from_secs(120), || {
        status(&url, "opt").filter(|s| count(s, "leased") > 0)
    });
    std::thread::sleep(Duration::from_millis(1_500));
    a.kill();
    let before = status(&url, "opt").expect("status");
    eprintln!("worker-a killed: {before}");
    let _b = worker("worker-b", &url);
    wait_for("the batch to finish", Duration::from_secs(900), || {
        status(&url, "opt").filter(|s| count(s, "done") == lines.len() as u64)
    });
    let results = check_batch(&url, "opt", &lines, None);
    for (i, v) in &results {
        assert_eq!(v["optimal"], true, "line {i}: {v}");
        assert_eq!(v["length"].as_u64(), Some(cases[*i].1), "line {i}: {v}");
    }
    assert_eq!(coord.terminate(Duration::from_secs(30)), Some(0));
}
