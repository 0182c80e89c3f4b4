//! The job store across restarts: one store opened and closed many times, a batch each time,
//! and every batch still answers with its own lines and verified solutions of them.

use std::sync::Arc;
use std::time::Duration;

use cubefleet_coordinator::Config;
use cubefleet_proto::{mode, BatchSpec, Completion, Mode, TwoPhase};
use cubefleet_tables::{parse_position, CubieCube, InputFormat};
use rand::{Rng, SeedableRng};

/// Face turns of the standard notation.
const TURNS: [&str; 18] = [
    "U", "U2", "U'", "R", "R2", "R'", "F", "F2", "F'", "D", "D2", "D'", "L", "L2", "L'", "B", "B2",
    "B'",
];

/// A random sequence of `n` turns (no face twice in a row) and its inverse sequence.
fn scramble(rng: &mut impl Rng, n: usize) -> (String, String) {
    let mut turns: Vec<usize> = Vec::with_capacity(n);
    while turns.len() < n {
        let t = rng.random_range(0..18);
        if turns.last().is_none_or(|&p| p / 3 != t / 3) {
            turns.push(t);
        }
    }
    let line: Vec<&str> = turns.iter().map(|&t| TURNS[t]).collect();
    let inverse: Vec<&str> = turns
        .iter()
        .rev()
        .map(|&t| TURNS[t / 3 * 3 + 2 - t % 3])
        .collect();
    (line.join(" "), inverse.join(" "))
}

/// The position of a line.
fn cube(line: &str) -> CubieCube {
    parse_position(line, InputFormat::Auto).expect("a valid line")
}

fn two_phase() -> Mode {
    Mode {
        kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
        ..Mode::default()
    }
}

/// Opens the store 200 times; each time submits a batch of a few lines, leases its jobs and
/// completes each with the inverse of its line, then closes the store. Afterwards (and
/// already along the way) every batch answers with its own lines, each solved by its
/// solution. (With the batch number from sled's id generator, which jumps at every reopen,
/// job keys of later batches wrapped into earlier ones' after a few reopens.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_reopened_200_times_answers_every_batch_with_its_own_results() {
    const OPENS: usize = 200;
    const LINES: usize = 3;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = Config::new(dir.path());
    let mut rng = rand::rngs::StdRng::seed_from_u64(23);
    let mut batches: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for round in 0..OPENS {
        let core = reopen(&config).await;
        let lines: Vec<(String, String)> = (0..LINES).map(|_| scramble(&mut rng, 9)).collect();
        let id = format!("batch-{round}");
        let spec = BatchSpec {
            batch_id: id.clone(),
            name: id.clone(),
            mode: Some(two_phase()),
            priority: 0,
            ..BatchSpec::default()
        };
        let chunk: Vec<String> = lines.iter().map(|(l, _)| l.clone()).collect();
        let submitted = core
            .submit(spec, tokio_stream::iter([Ok(chunk)]))
            .await
            .expect("submit");
        assert_eq!(submitted.total, LINES as u64, "round {round}");
        let (worker, _) = core.register("w".into(), 1, String::new());
        let leased = core.lease(&worker, 100).expect("lease");
        // what is queued is exactly this batch's lines not answered from the store
        assert_eq!(
            leased.len() as u64,
            LINES as u64 - submitted.from_store,
            "round {round}: jobs of other batches are queued again"
        );
        let done: Vec<Completion> = leased
            .iter()
            .map(|j| {
                let (_, inverse) = lines
                    .iter()
                    .find(|(l, _)| cube(l) == j.cube)
                    .unwrap_or_else(|| panic!("round {round}: leased a position not submitted"));
                Completion {
                    job_id: j.job_id,
                    status: "solved".into(),
                    solution: inverse.clone(),
                    has_solution: true,
                    ..Completion::default()
                }
            })
            .collect();
        let (_, rejected) = core.complete(&worker, &done).expect("complete");
        assert!(rejected.is_empty(), "round {round}: {rejected:?}");
        batches.push((id, lines));
        // every fifth round, and the last, every batch so far is checked
        if round % 5 == 4 || round == OPENS - 1 {
            check_all(&core, &batches);
        }
        drop(core);
    }
    let core = reopen(&config).await;
    check_all(&core, &batches);
    assert_eq!(core.list().expect("list").len(), OPENS);
}

/// Opens the store of `config` once the coordinator dropped before has let it go: the store
/// closes when the last handle goes, and the coordinator's own threads (the symmetry index
/// rebuilt behind the open) may hold one a little longer than the test's, longer still on a
/// busy machine, so an open refused meanwhile (sled's lock on the directory) is tried again,
/// for up to 10 s.
async fn reopen(config: &Config) -> Arc<cubefleet_coordinator::Core> {
    let mut tries = 0;
    loop {
        match cubefleet_coordinator::open(config).await {
            Ok(core) => return core,
            Err(_) if tries < 1000 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => panic!("open: {e:?}"),
        }
    }
}

/// Every batch answers with its own lines in order, each done and solved by its solution,
/// and nothing is queued.
fn check_all(core: &cubefleet_coordinator::Core, batches: &[(String, Vec<(String, String)>)]) {
    for (id, lines) in batches {
        let (results, _) = core.results(id, 0, 1000, "", false).expect("results");
        let inputs: Vec<&str> = results.iter().map(|r| r.input.as_str()).collect();
        let want: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            inputs, want,
            "batch {id} answers with another batch's lines"
        );
        for r in &results {
            assert_eq!(r.status, "solved", "batch {id} line {}: {r:?}", r.index);
            let after = cube(&format!("{} {}", r.input, r.solution));
            assert!(after.is_solved(), "batch {id} line {}: {r:?}", r.index);
        }
        let status = core.status(id).expect("status");
        assert_eq!(
            (status.done, status.queued),
            (lines.len() as u64, 0),
            "batch {id}"
        );
    }
}
