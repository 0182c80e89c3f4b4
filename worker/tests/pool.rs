//! The search pool with real tables: jobs in, verified results out, cancellation.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use cubefleet_search::{Question, Status};
use cubefleet_tables::{parse_position, InputFormat, Tables};
use cubefleet_worker::pool::{Job, Pool};

fn tables() -> Arc<Tables> {
    let dir = cubefleet_testkit::tables_dir();
    Arc::new(Tables::load_or_build(&dir, &|_, _, _| {}).expect("tables"))
}

#[test]
fn jobs_in_results_out_and_cancel() {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let pool = Pool::new(tables(), 2, move |f| {
        let _ = tx.lock().expect("lock").send(f);
    });
    let scrambles = [
        "R U F",
        "F2 B' L D2",
        "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2",
    ];
    for (i, s) in scrambles.iter().enumerate() {
        pool.submit(Job {
            id: i as u64,
            cube: parse_position(s, InputFormat::Moves).expect("valid"),
            mode: Question::two_phase(21),
            start_lower_bound: 0,
            spot_seed: 0,
            seed: None,
        });
    }
    // an impossible target: runs until cancelled
    pool.submit(Job {
        id: 99,
        cube: parse_position(scrambles[2], InputFormat::Moves).expect("valid"),
        mode: Question::two_phase(15),
        start_lower_bound: 0,
        spot_seed: 0,
        seed: None,
    });
    let mut seen = Vec::new();
    for _ in 0..3 {
        let f = rx.recv_timeout(Duration::from_secs(60)).expect("a result");
        assert_eq!(f.outcome.status, Status::Solved);
        let cube = parse_position(scrambles[f.id as usize], InputFormat::Moves).expect("valid");
        let sol = f.outcome.solution.expect("solution");
        assert!(cube.apply_moves(&sol.0).is_solved());
        seen.push(f.id);
    }
    seen.sort();
    assert_eq!(seen, [0, 1, 2]);
    // job 99 runs once the pool reports its progress (a thread took it)
    cubefleet_testkit::wait_for("job 99 to start", Duration::from_secs(60), || {
        pool.progress().contains_key(&99).then_some(())
    });
    assert_eq!(pool.in_flight(), 1);
    pool.cancel(99);
    let f = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("cancelled job reports");
    assert_eq!((f.id, f.outcome.status), (99, Status::Cancelled));
    assert_eq!(pool.in_flight(), 0);
    pool.shutdown();
}

#[test]
fn a_search_that_panics_gives_its_job_back_and_the_pool_goes_on() {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let pool = Pool::new(tables(), 1, move |f| {
        let _ = tx.lock().expect("lock").send(f);
    });
    // corner twists out of range: the coordinates index past the tables
    let mut broken = parse_position("R U", InputFormat::Moves).expect("valid");
    broken.co = [200; 8];
    broken.ep = [200; 12];
    pool.submit(Job {
        id: 1,
        cube: broken,
        mode: Question::two_phase(21),
        start_lower_bound: 3,
        spot_seed: 0,
        seed: None,
    });
    let f = rx.recv_timeout(Duration::from_secs(60)).expect("a result");
    assert_eq!((f.id, f.outcome.status), (1, Status::Cancelled));
    assert!(
        f.panicked,
        "the result says the search panicked (the worker counts it)"
    );
    assert_eq!(pool.panics(), 1);
    assert_eq!(
        pool.in_flight(),
        0,
        "the job stays in the pool (its lease renewed forever)"
    );
    assert!(pool.progress().is_empty());
    // the thread lives on
    pool.submit(Job {
        id: 2,
        cube: parse_position("R U F", InputFormat::Moves).expect("valid"),
        mode: Question::two_phase(21),
        start_lower_bound: 0,
        spot_seed: 0,
        seed: None,
    });
    let f = rx.recv_timeout(Duration::from_secs(60)).expect("a result");
    assert_eq!((f.id, f.outcome.status), (2, Status::Solved));
    assert!(!f.panicked);
    pool.shutdown();
}
