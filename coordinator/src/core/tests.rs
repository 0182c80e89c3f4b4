//! Tests across the core's parts: submission, leasing, completion, following and the
//! symmetry index together.

use std::sync::Arc;
use std::time::Duration;

use cubefleet_proto::{mode, BatchSpec, Completion, Mode, TwoPhase};
use cubefleet_tables::{parse_position, InputFormat};

use super::dedup::SymIndex;
use super::{Core, MAX_LINE_LEN};
use crate::error::Error;
use crate::mode::mode_key;
use crate::record::{batch_seq, job_id, line_index, BatchRecord};

/// Submits `lines` as batch `id` (two-phase to 20 moves) and returns its record.
fn submit(core: &Core, id: &str, lines: &[&str]) -> BatchRecord {
    let mut batch = core
        .begin_submit(BatchSpec {
            batch_id: id.into(),
            name: id.into(),
            mode: Some(Mode {
                kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
                ..Mode::default()
            }),
            priority: 0,
            ..BatchSpec::default()
        })
        .expect("begin");
    let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let jobs = core.prepare_chunk(&batch, 0, lines).expect("prepare");
    core.store_chunk(&mut batch, jobs).expect("store");
    core.end_submit(id);
    batch
}

/// A resubmission under an existing id is refused when its content hash differs from the
/// batch's, or (hash or not) when a line already stored differs from the stored line; the
/// same lines continue the batch.
#[test]
fn a_resubmission_with_other_lines_is_refused() {
    let (_dir, core, _) = fresh_core();
    let spec = |hash: &[u8]| BatchSpec {
        batch_id: "same".into(),
        mode: Some(Mode {
            kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
            ..Mode::default()
        }),
        content_hash: hash.to_vec(),
        ..BatchSpec::default()
    };
    let mut b = core.begin_submit(spec(&[1; 32])).expect("begin");
    let lines = |l: &[&str]| l.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    let jobs = core
        .prepare_chunk(&b, 0, lines(&["R U", "F D2"]))
        .expect("prepare");
    core.store_chunk(&mut b, jobs).expect("store");
    core.end_submit("same");
    let e = core.begin_submit(spec(&[2; 32])).expect_err("another hash");
    assert!(matches!(e, Error::ContentDiffers { .. }), "{e}");
    assert!(e.to_string().contains("another batch id"), "{e}");
    // refused, the batch is free for the next submitter
    let b = core.begin_submit(spec(&[])).expect("no hash");
    let e = core
        .prepare_chunk(&b, 0, lines(&["R U", "F D'"]))
        .expect_err("line 1 differs");
    assert!(e.to_string().contains("line 1"), "{e}");
    let more = core
        .prepare_chunk(&b, 0, lines(&["R U", "F D2", "L"]))
        .expect("the same lines, and one more");
    assert_eq!(more.len(), 1);
    assert_eq!(line_index(more[0].0), 2);
    core.end_submit("same");
    assert!(core.begin_submit(spec(&[1; 32])).is_ok(), "the same hash");
}

/// A core on a fresh store (in the returned directory) with a registered worker.
fn fresh_core() -> (tempfile::TempDir, Arc<Core>, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let core = Core::open(dir.path(), Duration::from_secs(30)).expect("open");
    let w = core.register("w".into(), 1, String::new()).0;
    (dir, core, w)
}

/// A "solved" result of job `job_id`.
fn solved(job_id: u64, solution: &str) -> Completion {
    Completion {
        job_id,
        status: "solved".into(),
        solution: solution.into(),
        has_solution: true,
        ..Completion::default()
    }
}

#[test]
fn a_result_reported_twice_in_one_group_is_stored_and_counted_once() {
    let (_dir, core, w) = fresh_core();
    let b = submit(&core, "twice", &["R U"]);
    let id = core.lease(&w, 1).expect("lease")[0].job_id;
    let done = solved(id, "U' R'");
    let (accepted, rejected) = core.complete(&w, &[done.clone(), done]).expect("complete");
    assert_eq!((accepted, rejected.len()), (2, 0), "{rejected:?}");
    assert_eq!(core.counters().0.completed, 1);
    assert_eq!(core.status("twice").expect("status").done, 1);
    assert_eq!(core.job(job_id(b.seq, 0)).expect("job").solution, "U' R'");
}

#[test]
fn a_follower_gets_the_results_that_finish_after_it_began() {
    let (_dir, core, w) = fresh_core();
    let before = submit(&core, "b", &["R"]);
    let first = core.lease(&w, 1).expect("lease")[0].job_id;
    assert_eq!(
        core.complete(&w, &[solved(first, "R'")])
            .expect("complete")
            .0,
        1
    );
    // begun now: the job finished before is not sent
    let mut feed = core.follow("b", 16).expect("follow");
    assert!(feed.try_recv().is_err());
    // a line finished at submission (invalid) and a completion are sent, once durable
    let mut batch = core.store.batch("b").expect("read").expect("stored");
    // (not "U": a symmetric copy of "R", which the store would answer)
    let more = ["U R F", "not a cube"].map(String::from);
    let jobs = core
        .prepare_chunk(&batch, 1, more.to_vec())
        .expect("prepare");
    core.store_chunk(&mut batch, jobs).expect("store");
    let invalid = feed.try_recv().expect("the invalid line");
    assert_eq!((invalid.index, invalid.status.as_str()), (2, "invalid"));
    assert!(feed.try_recv().is_err());
    let second = core.lease(&w, 1).expect("lease")[0].job_id;
    assert_eq!(
        core.complete(&w, &[solved(second, "F' R' U'")])
            .expect("complete")
            .0,
        1
    );
    let done = feed.try_recv().expect("the completion");
    assert_eq!((done.index, done.solution.as_str()), (1, "F' R' U'"));
    // another batch's results are not
    let other = submit(&core, "other", &["D2 B L"]);
    let third = core.lease(&w, 1).expect("lease")[0].job_id;
    assert_eq!(batch_seq(third), other.seq);
    assert_eq!(
        core.complete(&w, &[solved(third, "L' B' D2")])
            .expect("complete")
            .0,
        1
    );
    assert!(feed.try_recv().is_err());
    // a receiver dropped is forgotten at the next sending
    drop(feed);
    core.send_followers(before.seq, Vec::new());
    assert!(!core.followed());
}

#[test]
fn the_symmetry_index_answers_symmetric_copies_survives_a_restart_and_checks_candidates() {
    let (dir, core, w) = fresh_core();
    let first = submit(&core, "first", &["R U"]);
    let leased = core.lease(&w, 10).expect("lease");
    assert_eq!(leased.len(), 1);
    let done = solved(leased[0].job_id, "U' R'");
    assert_eq!(core.complete(&w, &[done]).expect("complete").0, 1);
    // a mirror image of the position (L' U', conjugated by the R-L mirror) and its inverse
    // copy (U R) are answered from the store, with solutions of their own
    let r = submit(&core, "again", &["L' U'", "U R", "R U F"]);
    assert_eq!(core.submitted_counts(r.seq).1, 2);
    let (found, _) = core.lookup("U R").expect("lookup").expect("found");
    assert_eq!(found.solution, "R' U'");
    drop(core);

    let core = Core::open(dir.path(), Duration::from_secs(30)).expect("reopen");
    assert!(core.lookup("L' U'").expect("lookup").is_some());
    assert!(core.lookup("R U F").expect("lookup").is_none());
    // a slot naming a job of another class (a shared hash) is no answer
    let other = parse_position("R U F", InputFormat::Auto).expect("parses");
    let twophase = mode_key(&core.batch_mode(r.seq));
    let slot = SymIndex::slot(&other.canonical().cube.key(), &twophase);
    let first_job = job_id(first.seq, 0);
    core.index.write().expect("lock").0.insert(slot, first_job);
    assert!(core.lookup("R U F").expect("lookup").is_none());
}

#[test]
fn blank_and_comment_lines_are_skipped_in_place_and_long_lines_invalid() {
    let (_dir, core, w) = fresh_core();
    let long = "R U ".repeat(25_000);
    let batch = submit(
        &core,
        "b",
        &["# header", "R U", "", "  ", long.as_str(), "F"],
    );
    let (results, _) = core.results("b", 0, 100, "", false).expect("results");
    let statuses: Vec<&str> = results.iter().map(|r| r.status.as_str()).collect();
    assert_eq!(
        statuses,
        ["skipped", "", "skipped", "skipped", "invalid", ""]
    );
    assert!(results[4].error.contains(&format!("{MAX_LINE_LEN} bytes")));
    assert_eq!(results[4].input.len(), MAX_LINE_LEN + 1);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.index, i as u64);
    }
    // only the two positions are ever leased
    let leased = core.lease(&w, 10).expect("lease");
    let mut lines: Vec<u64> = leased.iter().map(|l| line_index(l.job_id)).collect();
    lines.sort_unstable();
    assert_eq!(lines, [1, 5]);
    assert_eq!(batch.total, 6);
}

/// A follower that does not read holds at most its channel's capacity: the result that
/// finds the channel full drops the follower (the core never waits for it, and sends it
/// nothing more), and the receiver sees the end after the results queued. Every result is
/// still in the store.
#[test]
fn a_follower_that_does_not_read_is_dropped_when_its_channel_is_full() {
    const CAPACITY: usize = 3;
    let (_dir, core, w) = fresh_core();
    submit(&core, "slow", &["R"]);
    let mut feed = core.follow("slow", CAPACITY).expect("follow");
    // many lines finished at once (invalid), never read by the follower
    let mut batch = core.store.batch("slow").expect("read").expect("stored");
    let more: Vec<String> = (0..100).map(|i| format!("not a cube {i}")).collect();
    let jobs = core.prepare_chunk(&batch, 1, more).expect("prepare");
    core.store_chunk(&mut batch, jobs).expect("store");
    assert_eq!(feed.len(), CAPACITY);
    assert!(
        !core.followed(),
        "the follower is dropped once its channel is full"
    );
    // a completion afterwards is not queued for it
    let first = core.lease(&w, 1).expect("lease")[0].job_id;
    assert_eq!(
        core.complete(&w, &[solved(first, "R'")])
            .expect("complete")
            .0,
        1
    );
    assert_eq!(feed.len(), CAPACITY);
    let queued: Vec<u64> = std::iter::from_fn(|| feed.try_recv().ok())
        .map(|r| r.index)
        .collect();
    assert_eq!(queued, [1, 2, 3]);
    assert_eq!(
        feed.try_recv(),
        Err(tokio::sync::mpsc::error::TryRecvError::Disconnected)
    );
    // and every result is in the store
    assert_eq!(
        core.finished_prefix("slow", 0, 1000).expect("read").len(),
        101
    );
    assert_eq!(core.status("slow").expect("status").invalid, 100);
}
