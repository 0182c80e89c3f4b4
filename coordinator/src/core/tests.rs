//! Tests across the core's parts: submission, leasing, completion, following and the
//! symmetry index together.

use std::sync::Arc;
use std::time::Duration;

use cubefleet_proto::{mode, BatchSpec, Completion, JobProgress, JobState, Mode, TwoPhase};
use cubefleet_tables::{parse_position, InputFormat};

use super::dedup::SymIndex;
use super::Canceller;
use super::{Core, MAX_LINE_LEN};
use crate::clock::{Clock, ManualClock};
use crate::error::Error;
use crate::mode::mode_key;
use crate::record::{batch_seq, job_id, line_index, BatchRecord};

/// Submits `lines` as batch `id` (two-phase to 20 moves) and returns its record.
fn submit(core: &Core, id: &str, lines: &[&str]) -> BatchRecord {
    let mut batch = core
        .begin_submit(
            BatchSpec {
                batch_id: id.into(),
                name: id.into(),
                mode: Some(Mode {
                    kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
                    ..Mode::default()
                }),
                priority: 0,
                ..BatchSpec::default()
            },
            "",
        )
        .expect("begin");
    let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let jobs = core.prepare_chunk(&batch, 0, lines).expect("prepare");
    core.store_chunk(&mut batch, jobs).expect("store");
    core.end_submit(id);
    batch
}

/// A resubmission under an existing id is refused when its content hash differs from the
/// batch's (or it has none, as from stdin, while the batch has one), or (hash or not) when a
/// line already stored differs from the stored line; the same lines continue the batch.
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
    let mut b = core.begin_submit(spec(&[1; 32]), "").expect("begin");
    let lines = |l: &[&str]| l.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    let jobs = core
        .prepare_chunk(&b, 0, lines(&["R U", "F D2"]))
        .expect("prepare");
    core.store_chunk(&mut b, jobs).expect("store");
    core.end_submit("same");
    let e = core
        .begin_submit(spec(&[2; 32]), "")
        .expect_err("another hash");
    assert!(matches!(e, Error::ContentDiffers { .. }), "{e}");
    assert!(e.to_string().contains("another batch id"), "{e}");
    // refused, the batch is free for the next submitter; without a hash nothing shows the
    // lines are the batch's
    let e = core.begin_submit(spec(&[]), "").expect_err("no hash");
    assert!(e.to_string().contains("without a content hash"), "{e}");
    // a batch made without a hash is continued by its own lines only
    let unnamed = |hash: &[u8]| BatchSpec {
        batch_id: "unnamed".into(),
        ..spec(hash)
    };
    let mut b = core.begin_submit(unnamed(&[]), "").expect("begin");
    let jobs = core
        .prepare_chunk(&b, 0, lines(&["R U", "F D2"]))
        .expect("prepare");
    core.store_chunk(&mut b, jobs).expect("store");
    core.end_submit("unnamed");
    let b = core.begin_submit(unnamed(&[]), "").expect("no hash");
    let e = core
        .prepare_chunk(&b, 0, lines(&["R U", "F D'"]))
        .expect_err("line 1 differs");
    assert!(e.to_string().contains("line 1"), "{e}");
    let more = core
        .prepare_chunk(&b, 0, lines(&["R U", "F D2", "L"]))
        .expect("the same lines, and one more");
    assert_eq!(more.len(), 1);
    assert_eq!(line_index(more[0].0), 2);
    core.end_submit("unnamed");
    assert!(
        core.begin_submit(spec(&[1; 32]), "").is_ok(),
        "the same hash"
    );
}

/// A core on a fresh store (in the returned directory) with a registered worker.
fn fresh_core() -> (tempfile::TempDir, Arc<Core>, String) {
    core_on(Clock::system())
}

/// [`fresh_core`] whose time is `clock`'s (30 s leases).
fn core_on(clock: Clock) -> (tempfile::TempDir, Arc<Core>, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let core = Core::open_with_clock(dir.path(), LEASE, clock).expect("open");
    let w = core.register("w".into(), 1, String::new()).0;
    (dir, core, w)
}

/// The lease of [`fresh_core`] and [`core_on`].
const LEASE: Duration = Duration::from_secs(30);

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

/// A result is verified against its own job's position as its lease made it, and only the
/// session holding the lease may report on a job: another session's report, right or wrong,
/// changes nothing, and so does a report on a job nobody leased.
#[test]
fn only_the_lease_holder_reports_and_its_results_are_verified() {
    let (_dir, core, w) = fresh_core();
    let other = core.register("other".into(), 1, String::new()).0;
    let b = submit(&core, "p", &["R U", "F D2", "L2 B'", "U R2 F"]);
    let ids: Vec<u64> = (0..4).map(|i| job_id(b.seq, i)).collect();
    assert_eq!(core.lease(&w, 2).expect("lease").len(), 2, "lines 0 and 1");
    let right = [
        solved(ids[0], "U' R'"),
        solved(ids[1], "D2 F'"),
        solved(ids[2], "B L2"),
        solved(ids[3], "F' R2 U'"),
    ];
    // another session: refused before anything is verified, leased or not
    let (accepted, rejected) = core.complete(&other, &right).expect("complete");
    assert_eq!((accepted, rejected.len()), (0, 4), "{rejected:?}");
    assert!(rejected
        .iter()
        .all(|(_, r)| r.contains("not leased to this session")));
    // the holder, on jobs it does not hold: refused too
    let (accepted, rejected) = core.complete(&w, &right[2..]).expect("complete");
    assert_eq!((accepted, rejected.len()), (0, 2), "{rejected:?}");
    // each answer of the other line of its pair, from the holder: refused by verification
    let swapped = [solved(ids[0], "D2 F'"), solved(ids[1], "U' R'")];
    let (accepted, rejected) = core.complete(&w, &swapped).expect("complete");
    assert_eq!((accepted, rejected.len()), (0, 2), "{rejected:?}");
    assert!(rejected.iter().all(|(_, r)| r.contains("does not solve")));
    // queued again: leased anew, answered right
    assert_eq!(core.lease(&w, 4).expect("lease").len(), 4);
    let (accepted, rejected) = core.complete(&w, &right).expect("complete");
    assert_eq!((accepted, rejected.len()), (4, 0), "{rejected:?}");
    assert_eq!(core.status("p").expect("status").done, 4);
    // the same report again is accepted (a lost acknowledgement); another's is not
    assert_eq!(core.complete(&w, &right[..1]).expect("again").0, 1);
    let (_, rejected) = core.complete(&other, &right[..1]).expect("other");
    assert!(rejected[0].1.contains("finished"), "{rejected:?}");
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

    let core = reopen(dir.path());
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

/// A range batch of `n` states from `start` (two-phase to 20 moves), begun and ended.
fn range_batch(core: &Core, id: &str, start: u128, n: u128) -> BatchRecord {
    let b = core
        .begin_submit(
            BatchSpec {
                batch_id: id.into(),
                mode: Some(Mode {
                    kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
                    ..Mode::default()
                }),
                range_start: start.to_string(),
                range_end: (start + n).to_string(),
                ..BatchSpec::default()
            },
            "",
        )
        .expect("begin");
    core.end_submit(id);
    b
}

/// A crash after a chunk of a range batch's jobs was written but before its batch record
/// counted them (`made`), and after some of them finished: the reopened core raises `made`
/// over them, so the next lease makes the lines after them; no finished line is made again
/// (overwritten) and none is skipped.
#[test]
fn a_range_batch_resumes_after_jobs_stored_without_their_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let core = Core::open(dir.path(), Duration::from_secs(30)).expect("open");
    let b = range_batch(&core, "r", 1000, 1_000_000);
    // lines 0..5 as a crash left them: stored, three of them done, the record not updated
    let mut made = b.clone();
    let mkey = mode_key(&b.mode.unwrap_or_default());
    let mut jobs = Vec::new();
    for k in 0..5u64 {
        let index = 1000 + u128::from(k);
        let cube = cubefleet_tables::index::state_at(index).expect("state");
        let r = cubefleet_proto::JobResult {
            state_index: index.to_string(),
            ..Default::default()
        };
        let mut job = core.job_of_position(&b, &mkey, r, &cube).expect("job");
        if k < 3 {
            job.r_mut().state = cubefleet_proto::JobState::Done as i32;
            job.r_mut().status = "solved".into();
            job.r_mut().length = 99;
        }
        jobs.push((job_id(b.seq, k), job));
    }
    core.store.insert_jobs(&jobs).expect("insert");
    core.store.flush().expect("flush");
    made.made = 0;
    assert_eq!(core.store.batch("r").expect("read"), Some(made));
    drop(core);
    let core = reopen(dir.path());
    assert_eq!(core.status("r").expect("status").made, 5);
    let w = core.register("w".into(), 1, "t".into()).0;
    let leased = core.lease(&w, 4).expect("lease");
    let lines: Vec<u64> = leased.iter().map(|j| line_index(j.job_id)).collect();
    assert_eq!(lines, [3, 4, 5, 6]);
    for j in &leased {
        let index = 1000 + u128::from(line_index(j.job_id));
        assert_eq!(
            j.cube,
            cubefleet_tables::index::state_at(index).expect("state")
        );
    }
    for k in 0..3 {
        let r = core.job(job_id(b.seq, k)).expect("job");
        assert_eq!((r.status.as_str(), r.length), ("solved", 99), "line {k}");
    }
    assert_eq!(core.status("r").expect("status").made, 7);
}

/// Jobs of a range batch are made only as leases ask for them, highest priority first: a
/// lease for 3 makes 3; a file batch of higher priority is leased before the range; a
/// cancelled range makes no more and counts its unmade lines as cancelled.
#[test]
fn range_jobs_are_made_as_leased_and_stop_at_cancel() {
    let (_dir, core, w) = fresh_core();
    range_batch(&core, "big", 0, 1_000_000_000_000_000_000);
    let s = core.status("big").expect("status");
    // a batch makes at most 2^40 jobs: those wait as queued
    assert_eq!(
        (s.total, s.made, s.queued),
        (1_000_000_000_000_000_000, 0, crate::record::MAX_LINES)
    );
    let leased = core.lease(&w, 3).expect("lease");
    assert_eq!(leased.len(), 3);
    assert_eq!(core.status("big").expect("status").made, 3);
    let mut file = core
        .begin_submit(
            BatchSpec {
                batch_id: "urgent".into(),
                priority: 5,
                ..BatchSpec::default()
            },
            "",
        )
        .expect("begin");
    let jobs = core
        .prepare_chunk(&file, 0, vec!["R U".into(), "F2".into()])
        .expect("prepare");
    core.store_chunk(&mut file, jobs).expect("store");
    core.end_submit("urgent");
    let next = core.lease(&w, 4).expect("lease");
    let seqs: Vec<u32> = next.iter().map(|j| batch_seq(j.job_id)).collect();
    assert_eq!(
        seqs,
        [file.seq, file.seq, batch_seq(leased[0].job_id), seqs[3]]
    );
    assert_eq!(core.status("big").expect("status").made, 5);
    let s = core.cancel("big", &ADMIN).expect("cancel");
    assert_eq!(s.queued, 0);
    assert_eq!(s.cancelled + s.leased, crate::record::MAX_LINES);
    assert!(core.lease(&w, 10).expect("lease").is_empty());
    assert_eq!(core.status("big").expect("status").made, 5);
}

/// Leases from several threads at once, each making jobs of one range: every line is leased
/// once, none made twice (the making lock), and `made` ends at the range's size.
#[test]
fn concurrent_leases_make_each_line_of_a_range_once() {
    let (_dir, core, _) = fresh_core();
    range_batch(&core, "r", 777, 1000);
    let leased: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let core = &core;
                s.spawn(move || {
                    let w = core.register(format!("w{t}"), 1, "t".into()).0;
                    let mut mine = Vec::new();
                    loop {
                        let jobs = core.lease(&w, 7).expect("lease");
                        if jobs.is_empty() {
                            return mine;
                        }
                        mine.extend(jobs.iter().map(|j| line_index(j.job_id)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    let mut all: Vec<u64> = leased.concat();
    all.sort_unstable();
    let leases = all.len();
    all.dedup();
    assert_eq!((leases, all.len()), (1000, 1000), "each line leased once");
    assert_eq!(all, (0..1000).collect::<Vec<_>>(), "no line skipped");
    let s = core.status("r").expect("status");
    assert_eq!((s.made, s.leased, s.queued), (1000, 1000, 0));
}

/// `n` distinct positions as move sequences, each with the sequence that undoes it: the
/// digits of 1, 2, 3, ... in base 18 as face turns, where no two turns in a row are on the
/// same or opposite faces (so no sequence cancels to a shorter one, or to the solved cube).
fn scrambles(n: usize) -> Vec<(String, String)> {
    const TURNS: [&str; 18] = [
        "U", "U2", "U'", "R", "R2", "R'", "F", "F2", "F'", "D", "D2", "D'", "L", "L2", "L'", "B",
        "B2", "B'",
    ];
    (1usize..)
        .filter_map(|mut i| {
            let mut turns = Vec::new();
            while i > 0 {
                turns.push(i % 18);
                i /= 18;
            }
            // faces U R F D L B: 0..6, opposite faces equal modulo 3
            let reduced = turns.windows(2).all(|t| t[0] / 3 % 3 != t[1] / 3 % 3);
            reduced.then(|| {
                let seq: Vec<&str> = turns.iter().map(|&t| TURNS[t]).collect();
                let undo: Vec<&str> = turns
                    .iter()
                    .rev()
                    .map(|&t| TURNS[t / 3 * 3 + 2 - t % 3])
                    .collect();
                (seq.join(" "), undo.join(" "))
            })
        })
        .take(n)
        .collect()
}

/// The ready queue keeps no entry per queued job: a batch of 3,000 queued lines is a cursor;
/// leases take its lines in order, a job handed back goes out again before the next lines,
/// and after a restart the lines finished are passed over and the ones leased before it are
/// leased again, first.
#[test]
fn queued_lines_are_a_cursor_leased_in_order_across_a_restart() {
    let (dir, core, w) = fresh_core();
    let lines = scrambles(3000);
    let text: Vec<&str> = lines.iter().map(|(s, _)| s.as_str()).collect();
    let b = submit(&core, "many", &text);
    assert_eq!(core.counters().1, 3000, "all queued");
    assert_eq!(core.lock().ready.returned(), 0, "no entry per queued job");
    let ids = |leased: Vec<super::Leased>| -> Vec<u64> {
        leased.iter().map(|l| line_index(l.job_id)).collect()
    };
    assert_eq!(
        ids(core.lease(&w, 10).expect("lease")),
        (0..10).collect::<Vec<_>>()
    );
    let done: Vec<Completion> = (0..5)
        .map(|i| solved(job_id(b.seq, i), &lines[i as usize].1))
        .collect();
    assert_eq!(core.complete(&w, &done).expect("complete").0, 5);
    // line 5 handed back: leased again before line 10
    let back = cubefleet_proto::JobProgress {
        job_id: job_id(b.seq, 5),
        ..Default::default()
    };
    assert_eq!(core.release(&w, &[back]).expect("release"), 1);
    assert_eq!(ids(core.lease(&w, 3).expect("lease")), vec![5, 10, 11]);
    assert_eq!(core.counters().1, 3000 - 12);
    drop(core);

    let core = reopen(dir.path());
    let w = core.register("w".into(), 1, String::new()).0;
    assert_eq!(core.counters().1, 3000 - 5, "leased jobs are queued again");
    let leased = ids(core.lease(&w, 10).expect("lease"));
    assert_eq!(
        leased,
        (5..15).collect::<Vec<_>>(),
        "finished lines passed over"
    );
    // the rest, in lease-sized steps, each line once
    let rest: Vec<u64> = lease_all(&core).into_iter().map(line_index).collect();
    assert_eq!(rest, (15..3000).collect::<Vec<_>>());
    assert_eq!(core.counters().1, 0);
    assert_eq!(core.status("many").expect("status").leased, 2995);
}

/// Copies the store directory `from` (closed) to `to`.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("copy");
        }
    }
}

/// What a batch's status says of its jobs: counts per state and the length histogram.
fn job_counts(core: &Core, id: &str) -> (u64, u64, u64, u64, u64, u64, Vec<u64>) {
    let s = core.status(id).expect("status");
    let h = s.length_histogram.clone();
    (
        s.queued,
        s.leased,
        s.done,
        s.invalid,
        s.cancelled,
        s.failed,
        h,
    )
}

/// Leases every job `core` hands out (a new worker), in order.
fn lease_all(core: &Core) -> Vec<u64> {
    let w = core.register("all".into(), 1, String::new()).0;
    let mut ids = Vec::new();
    loop {
        let more = core.lease(&w, 1000).expect("lease");
        if more.is_empty() {
            return ids;
        }
        ids.extend(more.iter().map(|l| l.job_id));
    }
}

/// The batches of [`busy_core`].
const BUSY: [&str; 4] = ["a", "c", "d", "r"];

/// A core with work in every state: file batch `a` (300 lines: 50 solved, 10 leased, one
/// handed back), `c` cancelled, `d` with an answer from the store and an invalid line, and
/// range batch `r`. Returns its directory, the core, its worker, the lines (scramble,
/// solution) and `a`'s record.
fn busy_core() -> (
    tempfile::TempDir,
    Arc<Core>,
    String,
    Vec<(String, String)>,
    BatchRecord,
) {
    let (dir, core, w) = fresh_core();
    let lines = scrambles(400);
    let text: Vec<&str> = lines.iter().map(|(s, _)| s.as_str()).collect();
    let a = submit(&core, "a", &text[..300]);
    submit(&core, "c", &text[300..]);
    core.cancel("c", &ADMIN).expect("cancel");
    range_batch(&core, "r", 5000, 40);
    let leased = core.lease(&w, 60).expect("lease");
    assert_eq!(leased.len(), 60);
    let done: Vec<Completion> = (0..50)
        .map(|i| solved(job_id(a.seq, i), &lines[i as usize].1))
        .collect();
    assert_eq!(core.complete(&w, &done).expect("complete").0, 50);
    let back = cubefleet_proto::JobProgress {
        job_id: job_id(a.seq, 52),
        ..Default::default()
    };
    assert_eq!(core.release(&w, &[back]).expect("release"), 1);
    // answered from the store (solved above), and one invalid line
    let d = submit(
        &core,
        "d",
        &[text[3], text[4], "not a cube", "R U F D L B R2 U2"],
    );
    assert_eq!(core.submitted_counts(d.seq), (1, 2));
    (dir, core, w, lines, a)
}

/// A clean stop stores a summary, and the next open takes its state from it without reading
/// the jobs: the same counts, histograms and lease order as an open without it gives (the
/// oracle: a copy of the store with its summary taken out), after completions, a job handed
/// back, leases held at the stop, answers from the store, a cancelled batch, an invalid line
/// and a range batch. Nothing changes after the stop; the open takes the summary out.
#[test]
fn a_clean_stop_reopens_from_its_summary_as_a_scan_would() {
    let (dir, core, w, lines, a) = busy_core();
    let text: Vec<&str> = lines.iter().map(|(s, _)| s.as_str()).collect();
    core.close().expect("close");
    let e = core.complete(&w, &[solved(job_id(a.seq, 51), &lines[51].1)]);
    assert!(matches!(e, Err(Error::Unavailable(_))), "{e:?}");
    assert!(core.status("a").is_ok(), "reads still work");
    let named: Vec<u64> = core
        .index
        .read()
        .expect("index")
        .0
        .values()
        .copied()
        .collect();
    assert!(!named.is_empty());
    drop(core);

    let oracle = tempfile::tempdir().expect("temp dir");
    copy_dir(dir.path(), oracle.path());
    {
        let db = crate::store::sled_config(oracle.path())
            .expect("conf")
            .open()
            .expect("sled");
        let meta = db.open_tree("meta").expect("meta");
        let summary = meta.remove("summary").expect("remove").expect("a summary");
        db.flush().expect("flush");
        // it says where the index's jobs are (among a's solved lines), not a's queued ones
        let summary =
            <crate::record::Summary as prost::Message>::decode(&*summary).expect("decodes");
        assert!(summary.index_runs_known);
        let runs: Vec<_> = summary.index_runs.chunks(2).map(|p| p[0]..p[1]).collect();
        for id in &named {
            assert!(runs.iter().any(|r| r.contains(id)), "{id} in {runs:?}");
        }
        assert!(
            !runs.iter().any(|r| r.contains(&job_id(a.seq, 299))),
            "{runs:?}"
        );
    }
    let quick = reopen(dir.path());
    let scanned = Core::open(oracle.path(), Duration::from_secs(30)).expect("reopen");
    for id in BUSY {
        assert_eq!(
            job_counts(&quick, id),
            job_counts(&scanned, id),
            "batch {id}"
        );
    }
    assert_eq!(
        job_counts(&quick, "a").0,
        250,
        "held leases are queued again"
    );
    // symmetric copies are answered from the store once the index is rebuilt behind
    assert!(quick.lookup(text[7]).expect("lookup").is_some());
    let order = lease_all(&quick);
    assert_eq!(order, lease_all(&scanned));
    assert_eq!(order.len(), 250 + 1 + 40, "a, d's unsolved line, r");
    assert_eq!(line_index(order[0]), 50, "from the first line not finished");
    drop(quick);
    // (the index thread lets go of the store just after it finished)
    let db = (0..200)
        .find_map(|_| {
            crate::store::sled_config(dir.path())
                .expect("conf")
                .open()
                .inspect_err(|_| std::thread::sleep(Duration::from_millis(10)))
                .ok()
        })
        .expect("sled");
    let meta = db.open_tree("meta").expect("meta");
    assert!(
        meta.get("summary").expect("get").is_none(),
        "taken out by the open"
    );
}

/// Opens the store in `dir` once the core that had it open let go of it (its index thread
/// may hold it a moment longer).
fn reopen(dir: &std::path::Path) -> Arc<Core> {
    (0..200)
        .find_map(|_| {
            Core::open(dir, Duration::from_secs(30))
                .inspect_err(|_| std::thread::sleep(Duration::from_millis(10)))
                .ok()
        })
        .expect("reopen")
}

/// After a crash (no summary) the open counts the jobs from their tags, without decoding a
/// record: every batch has the counts and histogram it had, its leased jobs queued again,
/// the lease order starts at the first unfinished line, and the symmetry index is rebuilt.
#[test]
fn a_crash_reopens_from_the_tags_with_the_counts_it_had() {
    let (dir, core, _w, lines, a) = busy_core();
    let before: Vec<_> = BUSY.iter().map(|id| job_counts(&core, id)).collect();
    assert_eq!(before[0].1, 9, "a has leased jobs");
    // (batch numbers are dense from 1: invalid lines and answers from the store of each)
    let submitted: Vec<_> = (1..=4).map(|seq| core.submitted_counts(seq)).collect();
    assert!(submitted.iter().any(|&(_, from_store)| from_store > 0));
    drop(core); // no close: no summary, as after a crash
    let again = reopen(dir.path());
    let now: Vec<_> = (1..=4).map(|seq| again.submitted_counts(seq)).collect();
    assert_eq!(now, submitted);
    for (id, b) in BUSY.iter().zip(before) {
        let after = job_counts(&again, id);
        let expected = (b.0 + b.1, 0, b.2, b.3, b.4, b.5, b.6);
        assert_eq!(after, expected, "batch {id}");
    }
    assert!(again.lookup(&lines[7].0).expect("lookup").is_some());
    let order = lease_all(&again);
    assert_eq!(order.len(), 250 + 1 + 40, "a, d's unsolved line, r");
    assert_eq!(
        order[0],
        job_id(a.seq, 50),
        "from the first line not finished"
    );
}

/// A cancellation cut short by a crash (the batch record says cancelled, its jobs are still
/// queued) is finished by the next open: the jobs' records are read and swapped to cancelled.
#[test]
fn an_open_finishes_a_cancellation_a_crash_cut_short() {
    let (dir, core, _w) = fresh_core();
    let lines = scrambles(150);
    let text: Vec<&str> = lines.iter().map(|(s, _)| s.as_str()).collect();
    let mut b = submit(&core, "x", &text);
    b.cancelled = true;
    core.store.put_batch(&b).expect("put");
    core.store.flush().expect("flush");
    drop(core);
    let again = reopen(dir.path());
    assert_eq!(job_counts(&again, "x"), (0, 0, 0, 0, 150, 0, Vec::new()));
    assert!(lease_all(&again).is_empty());
}

/// A summary is a file an older version or a damaged store may have written: one whose index
/// runs are not in pairs, or bytes that are no summary, is not used (the open reads the jobs);
/// one without index runs (written before them) has the index rebuilt from every job.
#[test]
fn a_malformed_summary_is_not_used_and_one_without_index_runs_reads_every_job() {
    use crate::record::Summary;
    let enc = |s: Summary| prost::Message::encode_to_vec(&s);
    let odd = Summary {
        batches: Vec::new(),
        index_runs_known: true,
        index_runs: vec![1, 2, 3],
    };
    assert!(Core::from_summary(&enc(odd), &[], Clock::system()).is_none());
    assert!(Core::from_summary(b"\xff\xff\xff not a summary", &[], Clock::system()).is_none());
    let older = Summary {
        batches: Vec::new(),
        index_runs_known: false,
        index_runs: Vec::new(),
    };
    let (_, runs) = Core::from_summary(&enc(older), &[], Clock::system()).expect("fits");
    assert!(runs.len() == 1 && runs[0] == (0..u64::MAX), "{runs:?}");
}

/// One group of results spread over several blocks of two batches (blocks hold 64 jobs),
/// given out of order, with a wrong solution and a result given twice among them: every
/// verified result is stored with the canonical text of its solution, the wrong one is
/// refused and its job queued again, and an open after a crash (no summary) finds exactly
/// what the group was acknowledged with.
#[test]
fn a_group_over_several_blocks_and_batches_is_stored_whole() {
    let (dir, core, w) = fresh_core();
    let lines = scrambles(300);
    let text: Vec<&str> = lines.iter().map(|(s, _)| s.as_str()).collect();
    let a = submit(&core, "a", &text[..200]);
    let b = submit(&core, "b", &text[200..]);
    assert_eq!(core.lease(&w, 300).expect("lease").len(), 300);
    // lines 0..200 of a (four blocks) but line 77, and b's lines 0..100 (two blocks)
    let mut group: Vec<Completion> = (0..200u64)
        .filter(|&i| i != 77)
        .map(|i| solved(job_id(a.seq, i), &lines[i as usize].1))
        .chain((0..100u64).map(|i| solved(job_id(b.seq, i), &lines[200 + i as usize].1)))
        .collect();
    group.reverse();
    group.swap(3, 250);
    group.push(solved(job_id(a.seq, 77), &lines[78].1));
    group.push(group[10].clone());
    let (accepted, rejected) = core.complete(&w, &group).expect("complete");
    assert_eq!(accepted, 300, "299 verified, one given twice");
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].0, job_id(a.seq, 77));
    let stored = |core: &Core| {
        let mut done = Vec::new();
        for (id, n) in [("a", 200), ("b", 100)] {
            let (results, _) = core.results(id, 0, n, "", false).expect("results");
            assert_eq!(results.len(), n);
            done.extend(
                results
                    .into_iter()
                    .map(|r| (r.state(), r.status, r.solution, r.length)),
            );
        }
        done
    };
    let before = stored(&core);
    for (i, (state, status, solution, length)) in before.iter().enumerate() {
        if i == 77 {
            assert_eq!(*state, JobState::Queued, "refused: queued again");
            continue;
        }
        assert_eq!(
            (*state, status.as_str()),
            (JobState::Done, "solved"),
            "line {i}"
        );
        assert_eq!(solution, &lines[i].1, "line {i}: the canonical text");
        assert_eq!(*length as usize, lines[i].1.split(' ').count(), "line {i}");
    }
    let counts = (job_counts(&core, "a"), job_counts(&core, "b"));
    assert_eq!((counts.0 .2, counts.1 .2), (199, 100));
    drop(core); // no close: no summary, as after a crash
    let again = reopen(dir.path());
    assert_eq!(stored(&again), before);
    assert_eq!((job_counts(&again, "a"), job_counts(&again, "b")), counts);
    assert_eq!(lease_all(&again), [job_id(a.seq, 77)]);
}

/// A batch's rate comes from its finished jobs as they finish, not from who reads it: the
/// first read after jobs finished over more than half a second shows it, and reading changes
/// nothing (a later read sees the same jobs over a longer time, never more of them). The
/// time is the core's clock's: the rates are exact.
#[test]
fn a_batch_rate_is_known_at_the_first_read_and_reading_does_not_change_it() {
    let manual = ManualClock::new();
    let (_dir, core, w) = core_on(manual.clock());
    let b = submit(&core, "r", &["R U", "F D2", "L2 B'"]);
    let ids: Vec<u64> = (0..3).map(|i| job_id(b.seq, i)).collect();
    assert_eq!(core.lease(&w, 3).expect("lease").len(), 3);
    let (accepted, _) = core
        .complete(&w, &[solved(ids[0], "U' R'")])
        .expect("complete");
    assert_eq!(accepted, 1);
    manual.advance(Duration::from_millis(600));
    let (accepted, _) = core
        .complete(&w, &[solved(ids[1], "D2 F'")])
        .expect("complete");
    assert_eq!(accepted, 1);
    let first = core.status("r").expect("status");
    // 1 more job in 0.6 s since the first sample
    assert!((first.rate - 1.0 / 0.6).abs() < 1e-9, "{first:?}");
    assert!(first.eta_seconds > 0.0, "{first:?}");
    assert_eq!(
        core.status("r").expect("status").rate,
        first.rate,
        "read twice"
    );
    manual.advance(Duration::from_millis(50));
    let second = core.status("r").expect("status");
    assert!((second.rate - 1.0 / 0.65).abs() < 1e-9, "{second:?}");
    assert_eq!((second.done, second.queued + second.leased), (2, 1));
}

/// A lease ends at its deadline on the core's clock, not a nanosecond before, and a heartbeat
/// moves the deadline a lease on; the session whose lease expired may still report on the
/// job for the grace ([`super::machine::GRACE_LEASES`] leases) and not after the sweeper
/// forgot it; a session silent for three leases is forgotten.
#[test]
fn leases_expire_at_their_deadline_on_the_cores_clock_and_the_grace_follows_it() {
    let manual = ManualClock::new();
    let (_dir, core, w) = core_on(manual.clock());
    let b = submit(&core, "e", &["R U", "F D2"]);
    let ids: Vec<u64> = (0..2).map(|i| job_id(b.seq, i)).collect();
    assert_eq!(core.lease(&w, 2).expect("lease").len(), 2);
    manual.advance(Duration::from_secs(20));
    let beat = JobProgress {
        job_id: ids[1],
        ..JobProgress::default()
    };
    assert!(core.heartbeat(&w, &[beat]).expect("heartbeat").is_empty());
    // job 0's lease ends at 30 s, job 1's at 50 s
    manual.advance(Duration::from_secs(10) - Duration::from_nanos(1));
    assert_eq!(
        core.expire_leases().expect("sweep"),
        0,
        "a nanosecond early"
    );
    manual.advance(Duration::from_nanos(1));
    assert_eq!(core.expire_leases().expect("sweep"), 1, "at the deadline");
    let s = core.status("e").expect("status");
    assert_eq!((s.queued, s.leased), (1, 1));
    assert_eq!(core.counters().0.lease_expiries, 1);
    manual.advance(Duration::from_secs(20) - Duration::from_nanos(1));
    assert_eq!(core.expire_leases().expect("sweep"), 0);
    manual.advance(Duration::from_nanos(1));
    assert_eq!(core.expire_leases().expect("sweep"), 1, "job 1 at 50 s");
    // at 60 s: job 0's grace (30 s from its expiry) ends now, job 1's at 80 s
    manual.advance(Duration::from_secs(10));
    core.prune_workers();
    manual.advance(Duration::from_nanos(1));
    core.prune_workers();
    let (accepted, rejected) = core
        .complete(&w, &[solved(ids[0], "U' R'"), solved(ids[1], "D2 F'")])
        .expect("complete");
    assert_eq!(accepted, 1, "{rejected:?}");
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert_eq!(rejected[0].0, ids[0], "{rejected:?}");
    assert_eq!(core.job(ids[1]).expect("job").state, JobState::Done as i32);
    // the worker last called (the completion) at 60 s and 1 ns: listed for three leases on
    manual.advance(3 * LEASE - Duration::from_nanos(1));
    core.prune_workers();
    assert_eq!(core.workers().len(), 1);
    manual.advance(Duration::from_nanos(1));
    core.prune_workers();
    assert_eq!(
        core.workers().len(),
        1,
        "three leases exactly: still listed"
    );
    manual.advance(Duration::from_nanos(1));
    core.prune_workers();
    assert!(core.workers().is_empty(), "silent for over three leases");
}

/// An admin's cancellation (any batch).
const ADMIN: Canceller = Canceller {
    name: String::new(),
    admin: true,
};

/// Batch `id` of two lines, both answered by worker `w` with a proven bound: claims of the
/// worker (anonymous: it goes by its name, "w"), stored as such.
fn two_claims(core: &Core, w: &str, id: &str) -> BatchRecord {
    let b = submit(core, id, &["R U", "F D2"]);
    assert_eq!(core.lease(w, 2).expect("lease").len(), 2);
    let claims: Vec<Completion> = [(0, "U' R'"), (1, "D2 F'")]
        .iter()
        .map(|&(i, s)| Completion {
            lower_bound: 2,
            ..solved(job_id(b.seq, i), s)
        })
        .collect();
    assert_eq!(core.complete(w, &claims).expect("complete").0, 2);
    assert!(core.job(job_id(b.seq, 0)).expect("job").claimed);
    b
}

/// A revocation cut short by a crash at any point after its first flush (the name stored as
/// pending, its answers not all taken back) ends at the next open: every claim of the revoked
/// worker is queued again before the core serves, and the name stays revoked. Whether one,
/// some or none of the answers were taken back before the crash, the outcome is the same.
#[test]
fn a_revocation_a_crash_cut_short_ends_at_the_next_open() {
    for taken_back in 0..=2 {
        let (dir, core, w) = fresh_core();
        let b = two_claims(&core, &w, "r");
        // the crash: the revocation stored as pending, then `taken_back` answers undone
        {
            let mut sec = core.secure();
            sec.revoked.insert("w".into());
            sec.pending.push("w".into());
            core.store_security(&sec).expect("stored");
        }
        for i in 0..taken_back {
            let id = job_id(b.seq, i);
            let job = core.store.job(id).expect("read").expect("stored");
            assert!(core.unanswer(id, &job).expect("unanswer"));
        }
        core.store.flush().expect("flush");
        drop(core); // no clean stop: no summary, as after a SIGKILL
        let core = reopen(dir.path());
        for i in 0..2 {
            let r = core.job(job_id(b.seq, i)).expect("job");
            assert_eq!(r.state, JobState::Queued as i32, "{taken_back}: {r:?}");
            assert!(r.worker.is_empty() && !r.claimed, "{r:?}");
        }
        assert!(core.is_revoked("w"));
        assert!(core.secure().pending.is_empty(), "ended, and stored so");
        assert_eq!(core.status("r").expect("status").done, 0);
        drop(core);
        let core = reopen(dir.path());
        assert!(core.is_revoked("w") && core.secure().pending.is_empty());
    }
}

/// A store of format 5 holding a revocation whose pass over the jobs may have been cut short
/// (version 5 left no mark of that) is upgraded at open, and the pass runs again: the revoked
/// worker's claims are queued again. Garbage where the revoked names are stored is refused
/// with a message naming the key, not read as "nothing revoked".
#[test]
fn a_version_5_store_with_a_revocation_is_swept_at_upgrade_and_garbage_is_refused() {
    let (dir, core, w) = fresh_core();
    let b = two_claims(&core, &w, "v5");
    // what version 5 stored for a revocation: the name, no pending list, the answers kept
    {
        let mut sec = core.secure();
        sec.revoked.insert("w".into());
        core.store_security(&sec).expect("stored");
    }
    core.store
        .put_meta(b"format_version", &5u32.to_be_bytes())
        .expect("version 5");
    core.store.flush().expect("flush");
    drop(core);
    let core = reopen(dir.path());
    for i in 0..2 {
        let r = core.job(job_id(b.seq, i)).expect("job");
        assert_eq!(r.state, JobState::Queued as i32, "{r:?}");
        assert!(r.worker.is_empty() && !r.claimed, "{r:?}");
    }
    assert!(core.is_revoked("w") && core.secure().pending.is_empty());
    core.store
        .put_meta(b"revoked", b"\xff\xff\xff")
        .expect("garbage");
    core.store.flush().expect("flush");
    drop(core);
    // the store's lock may outlive the dropped core for a moment (sled's flusher)
    let e = (0..200)
        .find_map(|_| match Core::open(dir.path(), Duration::from_secs(30)) {
            Err(e) if e.to_string().contains("could not acquire lock") => {
                std::thread::sleep(Duration::from_millis(10));
                None
            }
            r => Some(r),
        })
        .expect("the store's lock is released")
        .err()
        .expect("a store with garbage for its revoked names is refused");
    assert!(e.to_string().contains("meta key `revoked`"), "{e}");
}
