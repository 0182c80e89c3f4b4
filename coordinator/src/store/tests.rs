//! The store's unit tests: blocks, swaps, reopens, batch numbers and format versions.

use std::path::Path;

use prost::Message;

use super::block::Block;
use super::format::{be_u32, FORMAT_VERSION, NEXT_SEQ_KEY, REVOKED_UNSWEPT_KEY, VERSION_KEY};
use super::*;
use crate::record::job_id;
use crate::record::MAX_BATCH_SEQ;
use cubefleet_proto::{JobResult, JobState};

fn record(input: &str, state: JobState) -> JobRecord {
    JobRecord {
        result: Some(Box::new(JobResult {
            input: input.into(),
            state: state as i32,
            ..JobResult::default()
        })),
        canonical: Vec::new(),
        sym: 0,
        bound_session: String::new(),
    }
}

/// The jobs with ids `ids`, read and decoded.
fn read(store: &SledStore, ids: &[u64]) -> Vec<Option<JobRecord>> {
    store
        .jobs_encoded(ids)
        .expect("read")
        .iter()
        .map(|j| {
            j.as_ref()
                .map(|b| JobRecord::decode(&b[..]).expect("decodes"))
        })
        .collect()
}

fn input(j: &Option<JobRecord>) -> Option<&str> {
    j.as_ref().map(|j| j.r().input.as_str())
}

/// Lines 0..150 of batch 1 (three blocks) and lines 0..10 of batch 2.
fn filled() -> (tempfile::TempDir, SledStore) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = open_retrying(dir.path(), "open");
    let first: Vec<_> = (0..150)
        .map(|i| (job_id(1, i), record(&format!("a{i}"), JobState::Queued)))
        .collect();
    store.insert_jobs(&first[..100]).expect("insert");
    store.insert_jobs(&first[100..]).expect("insert");
    let second: Vec<_> = (0..10)
        .map(|i| (job_id(2, i), record(&format!("b{i}"), JobState::Queued)))
        .collect();
    store.insert_jobs(&second).expect("insert");
    (dir, store)
}

#[test]
fn blocks_read_back_by_id_run_range_and_scan() {
    let (_dir, store) = filled();
    assert_eq!(store.blocks.len(), 2 + 1 + 1, "64 + 36, 50, 10 jobs");
    assert_eq!(input(&store.job(job_id(1, 77)).expect("read")), Some("a77"));
    assert!(store.job(job_id(1, 150)).expect("read").is_none());
    assert!(store.job(job_id(3, 0)).expect("read").is_none());
    // a run across block boundaries and past the batch's end
    let ids: Vec<u64> = (60..160).map(|i| job_id(1, i)).collect();
    let got = read(&store, &ids);
    assert_eq!(got.len(), 100);
    for (i, j) in (60..160).zip(&got) {
        let want = format!("a{i}");
        assert_eq!(input(j), (i < 150).then_some(want.as_str()));
    }
    let range = store
        .jobs_range(job_id(1, 140), job_id(2, 5), 100)
        .expect("range");
    let ids: Vec<u64> = range.iter().map(|(id, _)| *id).collect();
    let want: Vec<u64> = (140..150)
        .map(|i| job_id(1, i))
        .chain((0..5).map(|i| job_id(2, i)))
        .collect();
    assert_eq!(ids, want);
    assert_eq!(
        store
            .jobs_range(job_id(1, 0), job_id(3, 0), 7)
            .expect("range")
            .len(),
        7
    );
    let mut all = Vec::new();
    store
        .for_each_job(&mut |id, j| all.push((id, j.r().input.clone())))
        .expect("scan");
    assert_eq!(all.len(), 160);
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn a_changed_job_reads_as_changed_everywhere_and_swaps_are_exclusive() {
    let (dir, store) = filled();
    let id = job_id(1, 64);
    let old = store.job(id).expect("read").expect("stored");
    let done = record("a64", JobState::Done);
    assert!(store.cas_job(id, &old, &done).expect("cas"));
    // a second writer that read the block's copy loses
    let other = record("a64", JobState::Cancelled);
    assert!(!store.cas_job(id, &old, &other).expect("cas"));
    let state = |j: &Option<JobRecord>| j.as_ref().map(JobRecord::state);
    assert_eq!(state(&store.job(id).expect("read")), Some(JobState::Done));
    let run = read(&store, &[id - 1, id, id + 1]);
    assert_eq!(
        run.iter().map(state).collect::<Vec<_>>(),
        [
            Some(JobState::Queued),
            Some(JobState::Done),
            Some(JobState::Queued)
        ]
    );
    let mut seen = None;
    store
        .for_each_job(&mut |i, j| {
            if i == id {
                seen = Some(j.state());
            }
        })
        .expect("scan");
    assert_eq!(seen, Some(JobState::Done));
    // the job's own record changes by swap from itself
    assert!(store.cas_job(id, &done, &other).expect("cas"));
    store.flush().expect("flush");
    drop(store);
    let store = open_retrying(dir.path(), "reopen");
    assert_eq!(
        state(&store.job(id).expect("read")),
        Some(JobState::Cancelled)
    );
    assert_eq!(
        store
            .jobs_range(0, u64::MAX, usize::MAX)
            .expect("range")
            .len(),
        160
    );
}

#[test]
fn a_group_of_swaps_makes_each_change_on_its_own() {
    let (_dir, store) = filled();
    let ids = [job_id(1, 3), job_id(1, 63), job_id(1, 64), job_id(1, 120)];
    let old: Vec<JobRecord> = ids
        .iter()
        .map(|&id| store.job(id).expect("read").expect("stored"))
        .collect();
    // job 120 changed meanwhile, in a block whose other change goes on
    let meanwhile = record("a120", JobState::Cancelled);
    assert!(store.cas_job(ids[3], &old[3], &meanwhile).expect("cas"));
    // job 64 still has a record of its own, as an earlier version wrote a first change
    let own = record("a64 own", JobState::Queued);
    store
        .jobs
        .insert(ids[2].to_be_bytes(), own.encode_to_vec())
        .expect("insert");
    let done: Vec<JobRecord> = (0..4)
        .map(|i| record(&format!("done {i}"), JobState::Done))
        .collect();
    let olds = [&old[0], &old[1], &own, &old[3]].map(|o| o.encode_to_vec());
    let changes: Vec<(u64, &[u8], &JobRecord)> = (0..4)
        .rev()
        .map(|i| (ids[i], olds[i].as_slice(), &done[i]))
        .collect();
    let made = store.cas_jobs(&changes).expect("cas");
    assert_eq!(made, [false, true, true, true], "in the order given");
    let now: Vec<Option<String>> = read(&store, &ids)
        .iter()
        .map(|j| input(j).map(str::to_string))
        .collect();
    assert_eq!(
        now,
        [
            Some("done 0".into()),
            Some("done 1".into()),
            Some("done 2".into()),
            Some("a120".into())
        ]
    );
    // the block's copy of job 64 is untouched: its own record holds the change
    let block = store.blocks.get(job_id(1, 64).to_be_bytes()).expect("get");
    let block = block.expect("block");
    let copy = Block::parse(&block)
        .expect("parse")
        .record(0)
        .expect("job 64");
    assert_eq!(JobRecord::decode(copy).expect("decode").r().input, "a64");
    // the neighbours in the rewritten blocks are as they were
    assert_eq!(input(&store.job(job_id(1, 4)).expect("read")), Some("a4"));
    assert_eq!(
        input(&store.job(job_id(1, 121)).expect("read")),
        Some("a121")
    );
}

#[test]
fn concurrent_changes_of_one_block_all_land() {
    let (_dir, store) = filled();
    let store = std::sync::Arc::new(store);
    let writers: Vec<_> = (0..4u64)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                // each writer changes its own 16 jobs of the first block, one at a time
                for i in (0..16).map(|k| t * 16 + k) {
                    let id = job_id(1, i);
                    let old = store.job(id).expect("read").expect("stored");
                    let new = record(&format!("w{t} {i}"), JobState::Done);
                    assert!(store.cas_job(id, &old, &new).expect("cas"));
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    for i in 0..64 {
        let want = format!("w{} {i}", i / 16);
        assert_eq!(
            input(&store.job(job_id(1, i)).expect("read")),
            Some(want.as_str())
        );
    }
}

#[test]
fn jobs_stored_one_key_each_by_earlier_versions_read_the_same() {
    let (_dir, store) = filled();
    // an earlier version's store: every job under its own key, no block
    let id = job_id(5, 3);
    let old = record("old", JobState::Queued);
    store
        .jobs
        .insert(id.to_be_bytes(), old.encode_to_vec())
        .expect("insert");
    assert_eq!(input(&store.job(id).expect("read")), Some("old"));
    let got = read(&store, &[id - 1, id, id + 1]);
    assert_eq!(
        got.iter().map(input).collect::<Vec<_>>(),
        [None, Some("old"), None]
    );
    let done = record("old", JobState::Done);
    assert!(store.cas_job(id, &old, &done).expect("cas"));
    let mut n = 0;
    store.for_each_job(&mut |_, _| n += 1).expect("scan");
    assert_eq!(n, 161);
}

/// A record with a field this version retired (tag 2, an earlier version's lease holder)
/// changes by swap from its decoded copy, which has dropped that field, and not from a
/// record it is not.
#[test]
fn a_record_with_retired_fields_changes_from_its_decoded_copy() {
    let (_dir, store) = filled();
    let id = job_id(5, 9);
    let mut leased = record("leased", JobState::Leased).encode_to_vec();
    leased.extend_from_slice(&[2 << 3 | 2, 2, b'w', b'1']);
    store.jobs.insert(id.to_be_bytes(), leased).expect("insert");
    let read_back = store.job(id).expect("read").expect("stored");
    assert_eq!(read_back.r().input, "leased");
    let queued = record("leased", JobState::Queued);
    assert!(!store
        .cas_job(id, &record("other", JobState::Leased), &queued)
        .expect("cas"));
    assert!(store.cas_job(id, &read_back, &queued).expect("cas"));
    assert_eq!(
        store.job(id).expect("read").map(|j| j.state()),
        Some(JobState::Queued)
    );
}

/// A batch record as the caller gives it to [`Store::create_batch`] (number not set).
fn batch(id: &str) -> BatchRecord {
    BatchRecord {
        batch_id: id.into(),
        ..BatchRecord::default()
    }
}

/// The store in `dir`, opened as soon as a store just dropped there has released its lock
/// (sled's flusher thread may hold it a moment longer); `what` names the open in a failure.
fn open_retrying(dir: &Path, what: &str) -> SledStore {
    let mut tries = 0;
    loop {
        match SledStore::open(dir) {
            Ok(store) => return store,
            Err(e) if tries < 50 && e.to_string().contains("lock") => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

/// The store's format version key, read with sled directly.
fn version_in(dir: &Path) -> Option<u32> {
    // a store just dropped may hold its lock a moment longer (sled's flusher thread)
    let mut tries = 0;
    let db = loop {
        match sled_store::config(dir).expect("conf").open() {
            Ok(db) => break db,
            Err(e) if tries < 50 => {
                tries += 1;
                eprintln!("store not released yet: {e}");
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(e) => panic!("open: {e}"),
        }
    };
    let meta = db.open_tree("meta").expect("tree");
    let v = meta.get(VERSION_KEY).expect("get")?;
    Some(be_u32(&v, "version").expect("4 bytes"))
}

/// What an earlier version (format 1) wrote: batch records numbered `seqs` (by sled's id
/// generator) with two jobs each in one block, and no `meta` tree entries.
fn old_store(seqs: &[u32]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = sled::open(dir.path()).expect("open");
    let batches = db.open_tree("batches").expect("tree");
    let blocks = db.open_tree("job_blocks").expect("tree");
    for (k, &seq) in seqs.iter().enumerate() {
        let b = BatchRecord {
            batch_id: format!("old{k}"),
            seq,
            total: 2,
            ..BatchRecord::default()
        };
        batches
            .insert(b.batch_id.as_bytes(), b.encode_to_vec())
            .expect("insert");
        // the old key: (seq as u64) << 40, whatever bits fall off
        let first = u64::from(seq) << 40;
        let jobs: Vec<(u64, JobRecord)> = (0..2)
            .map(|i| (first + i, record(&format!("old{k} {i}"), JobState::Queued)))
            .collect();
        blocks
            .insert(first.to_be_bytes(), Block::encode_untagged(&jobs))
            .expect("insert");
    }
    db.flush().expect("flush");
    dir
}

/// Batch numbers are dense and survive reopening: no jump, no reuse (sled's id generator,
/// used before, jumped by about a million at every reopen).
#[test]
fn batch_numbers_are_dense_across_reopens() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut seqs = Vec::new();
    for round in 0..30 {
        let store = open_retrying(dir.path(), "open");
        for k in 0..2 {
            let b = store
                .create_batch(&batch(&format!("r{round} {k}")))
                .expect("create");
            seqs.push(b.seq);
            assert_eq!(store.batch(&b.batch_id).expect("read"), Some(b));
        }
    }
    assert_eq!(seqs, (1..=60).collect::<Vec<u32>>());
    assert_eq!(version_in(dir.path()), Some(FORMAT_VERSION));
}

/// The last batch number is handed out; past it a batch is refused, never wrapped.
#[test]
fn a_batch_past_the_last_number_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = open_retrying(dir.path(), "open");
    store
        .meta
        .insert(NEXT_SEQ_KEY, &(MAX_BATCH_SEQ - 1).to_be_bytes())
        .expect("insert");
    assert_eq!(
        store.create_batch(&batch("a")).expect("a").seq,
        MAX_BATCH_SEQ - 1
    );
    assert_eq!(
        store.create_batch(&batch("b")).expect("b").seq,
        MAX_BATCH_SEQ
    );
    let e = store.create_batch(&batch("c")).expect_err("past the last");
    assert!(matches!(e, Error::Full(_)), "{e}");
    assert!(e.to_string().contains("another --data directory"), "{e}");
    assert!(store.batch("c").expect("read").is_none());
    assert_eq!(store.batches().expect("list").len(), 2);
}

/// A store of format 1 whose batch numbers are distinct and below 2^24 is migrated: its
/// jobs read as before, the version is written, and new batches number on after its
/// highest.
#[test]
fn an_earlier_store_with_safe_numbers_is_migrated() {
    let dir = old_store(&[1, 1_000_002, 2_000_003]);
    assert_eq!(version_in(dir.path()), None);
    let store = open_retrying(dir.path(), "migrated");
    let b = store.create_batch(&batch("new")).expect("create");
    assert_eq!(b.seq, 2_000_004);
    assert_eq!(
        input(&store.job(job_id(1_000_002, 1)).expect("read")),
        Some("old1 1")
    );
    drop(store);
    assert_eq!(version_in(dir.path()), Some(FORMAT_VERSION));
    // reopened, it is a store of this version: numbers go on from the counter
    let store = open_retrying(dir.path(), "reopen");
    assert_eq!(
        store.create_batch(&batch("newer")).expect("create").seq,
        2_000_005
    );
}

/// A store of format 1 with a batch number past 24 bits (its jobs' keys wrapped onto
/// another batch's) or two batches sharing a number is refused with what to do, and left
/// as it was.
#[test]
fn an_earlier_store_whose_numbers_overflowed_is_refused() {
    for seqs in [
        vec![1, 9_000_010, 17_000_011],
        vec![5, 5],
        vec![3, u32::MAX],
    ] {
        let dir = old_store(&seqs);
        let e = SledStore::open(dir.path())
            .err()
            .unwrap_or_else(|| panic!("{seqs:?} opened"));
        assert!(matches!(e, Error::AliasedStore { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("move the directory away"), "{text}");
        assert!(text.contains("cannot be trusted"), "{text}");
        assert_eq!(version_in(dir.path()), None, "left as it was");
    }
}

/// sled's default segment size, which every store made before [`sled_store::SEGMENT_BYTES`]
/// has.
const SLED_DEFAULT_SEGMENT_BYTES: usize = 512 << 10;

/// A new store is made with sled segments of [`sled_store::SEGMENT_BYTES`] and reopens with
/// them; a store made with sled's default segments (every store before them) keeps its own,
/// which sled would refuse to change, and opens with all its jobs.
#[test]
fn each_store_keeps_the_segment_size_it_was_made_with() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = open_retrying(dir.path(), "new store");
    store.insert_jobs(&varied(1, 100)).expect("insert");
    store.flush().expect("flush");
    drop(store);
    assert_eq!(
        sled_store::segment_bytes(dir.path()).unwrap(),
        sled_store::SEGMENT_BYTES
    );
    let store = open_retrying(dir.path(), "reopened");
    assert_eq!(read(&store, &[job_id(1, 99)]).len(), 1);
    drop(store);

    let old = old_store(&[1]);
    assert_eq!(
        sled_store::segment_bytes(old.path()).unwrap(),
        SLED_DEFAULT_SEGMENT_BYTES
    );
    let store = open_retrying(old.path(), "earlier store");
    assert!(read(&store, &[job_id(1, 1)])[0].is_some());
    drop(store);
    assert_eq!(
        sled_store::segment_bytes(old.path()).unwrap(),
        SLED_DEFAULT_SEGMENT_BYTES
    );
}

/// A store whose sled configuration file is garbage (no segment size, one that is not a
/// number, not text, empty) is refused naming the file, never opened with a guessed segment
/// size and never a panic.
#[test]
fn a_garbage_sled_configuration_is_an_error_not_a_panic() {
    for conf in [&b"segment_size: banana\n"[..], b"\xff\xfe", b""] {
        let dir = tempfile::tempdir().expect("temp dir");
        drop(open_retrying(dir.path(), "new store"));
        std::fs::write(dir.path().join("conf"), conf).expect("write");
        let e = SledStore::open(dir.path()).err().expect("refused");
        assert!(e.to_string().contains("segment size"), "{conf:?}: {e}");
    }
}

/// A store of a newer format is refused, naming both versions.
#[test]
fn a_store_of_a_newer_format_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    drop(open_retrying(dir.path(), "new store"));
    {
        let db = sled_store::config(dir.path())
            .expect("conf")
            .open()
            .expect("open");
        let meta = db.open_tree("meta").expect("tree");
        meta.insert(VERSION_KEY, &(FORMAT_VERSION + 1).to_be_bytes())
            .expect("insert");
        db.flush().expect("flush");
    }
    let e = SledStore::open(dir.path()).err().expect("refused");
    assert!(
        matches!(e, Error::NewerStore { found, known, .. } if found == FORMAT_VERSION + 1 && known == FORMAT_VERSION),
        "{e}"
    );
    assert!(e.to_string().contains("newer cubefleet"), "{e}");
}

/// A store of version 2 (which holds no summary) is upgraded to this version in place, its
/// jobs read as before; and a summary is read once: taking it out leaves none.
#[test]
fn stores_of_versions_2_to_4_are_upgraded_and_a_summary_is_taken_once() {
    for version in [2u32, 3, 4] {
        let dir = tempfile::tempdir().expect("temp dir");
        {
            // an untagged block, as versions 2 and 3 wrote it (version 4 reads them too)
            let db = sled::open(dir.path()).expect("open");
            let jobs = [(job_id(1, 0), record("R U", JobState::Queued))];
            db.open_tree("job_blocks")
                .expect("tree")
                .insert(job_id(1, 0).to_be_bytes(), Block::encode_untagged(&jobs))
                .expect("insert");
            let meta = db.open_tree("meta").expect("tree");
            meta.insert(VERSION_KEY, &version.to_be_bytes())
                .expect("insert");
            meta.insert(NEXT_SEQ_KEY, &2u32.to_be_bytes())
                .expect("insert");
            db.flush().expect("flush");
        }
        let store = open_retrying(dir.path(), "upgraded");
        let job = store.job(job_id(1, 0)).expect("read").expect("kept");
        assert_eq!(job.r().input, "R U");
        assert_eq!(tags(&store), tags_of_records(&store));
        assert_eq!(store.take_summary().expect("take"), None);
        store.put_summary(b"state").expect("put");
        assert_eq!(
            store.take_summary().expect("take").as_deref(),
            Some(&b"state"[..])
        );
        assert_eq!(store.take_summary().expect("take"), None, "taken once");
        drop(store);
        assert_eq!(version_in(dir.path()), Some(FORMAT_VERSION));
    }
}

/// A version-6 store (before coset batches) is upgraded in place, its jobs kept, and no
/// revocation marked unswept (version 6 cut none short unmarked); a version-5 one is marked.
#[test]
fn stores_of_versions_5_and_6_are_upgraded_and_only_5_sweeps_revocations_again() {
    for version in [5u32, 6] {
        let dir = tempfile::tempdir().expect("temp dir");
        {
            let db = sled::open(dir.path()).expect("open");
            let jobs = [(job_id(1, 0), record("R U", JobState::Queued))];
            db.open_tree("job_blocks")
                .expect("tree")
                .insert(job_id(1, 0).to_be_bytes(), Block::encode(&jobs))
                .expect("insert");
            let meta = db.open_tree("meta").expect("tree");
            meta.insert(VERSION_KEY, &version.to_be_bytes())
                .expect("insert");
            meta.insert(NEXT_SEQ_KEY, &2u32.to_be_bytes())
                .expect("insert");
            db.flush().expect("flush");
        }
        let store = open_retrying(dir.path(), "upgraded");
        let job = store.job(job_id(1, 0)).expect("read").expect("kept");
        assert_eq!(job.r().input, "R U");
        drop(store);
        assert_eq!(version_in(dir.path()), Some(FORMAT_VERSION));
        let db = sled::open(dir.path()).expect("open");
        let unswept = db
            .open_tree("meta")
            .expect("tree")
            .get(REVOKED_UNSWEPT_KEY)
            .expect("read")
            .is_some_and(|v| v.as_ref() == [1u8]);
        assert_eq!(unswept, version == 5, "version {version}");
    }
}

#[test]
fn a_malformed_block_is_an_error_not_a_panic() {
    assert!(Block::parse(&[]).is_err());
    assert!(Block::parse(&[5, 0, 0, 0, 0, 0, 0, 0]).is_err());
    let jobs = [(1, record("x", JobState::Queued))];
    for good in [Block::encode(&jobs), Block::encode_untagged(&jobs)] {
        let mut bad = good.clone();
        let end = good.len() - jobs[0].1.encoded_len() - 4;
        bad[end] = 200; // the end offset points past the payload
        assert!(Block::parse(&bad).is_err());
        let block = Block::parse(&good).expect("parse");
        assert_eq!(block.len(), 1);
        assert!(block.record(1).is_none());
        for cut in 1..good.len() {
            if let Ok(b) = Block::parse(&good[..cut]) {
                panic!("a block cut to {cut} bytes parsed with {} jobs", b.len());
            }
        }
    }
    // a tagged block whose count runs past its end
    let mut bad = Block::encode(&jobs);
    bad[4] = 60;
    assert!(Block::parse(&bad).is_err());
}

/// Jobs in every state, answered from the store or not, with lengths that fit a tag and one
/// that does not (it is then read from the record).
fn varied(seq: u32, n: u64) -> Vec<(u64, JobRecord)> {
    (0..n)
        .map(|i| {
            let mut j = record(
                &format!("v{i}"),
                JobState::try_from((i % 7) as i32).unwrap(),
            );
            let r = j.r_mut();
            r.from_store = i % 3 == 0;
            match i % 4 {
                0 => {
                    r.status = "solved".into();
                    r.length = if i % 8 == 0 {
                        70_000 + i as u32
                    } else {
                        i as u32
                    };
                }
                1 => {
                    r.status = "over_target".into();
                    r.solution = "R U".into();
                    r.length = 2;
                }
                2 => r.status = "timeout".into(),
                _ => {}
            }
            (job_id(seq, i), j)
        })
        .collect()
}

/// Every job's tag as [`Store::for_each_tag`] gives it, by id.
fn tags(store: &SledStore) -> std::collections::BTreeMap<u64, JobTag> {
    let mut out = std::collections::BTreeMap::new();
    store
        .for_each_tag(&mut |id, t| assert!(out.insert(id, t).is_none(), "{id} twice"))
        .expect("tags");
    out
}

/// The tags the records give (the oracle: every record decoded).
fn tags_of_records(store: &SledStore) -> std::collections::BTreeMap<u64, JobTag> {
    let mut out = std::collections::BTreeMap::new();
    store
        .for_each_job(&mut |id, j| {
            out.insert(id, JobTag::of(&j));
        })
        .expect("scan");
    out
}

/// The tags an open counts say what the records say: in blocks of this version, in blocks
/// an earlier version wrote without tags, in records under a job's own id, and after swaps
/// (an untagged block gets its tags when it is rewritten).
#[test]
fn job_tags_describe_the_records_beside_them() {
    let (_dir, store) = filled();
    let jobs = varied(3, 150);
    store.insert_jobs(&jobs).expect("insert");
    // an untagged block of an earlier version, and a record under its own id
    let old = varied(4, 40);
    store
        .blocks
        .insert(job_id(4, 0).to_be_bytes(), Block::encode_untagged(&old))
        .expect("insert");
    let own = varied(5, 3);
    store
        .jobs
        .insert(job_id(5, 2).to_be_bytes(), own[2].1.encode_to_vec())
        .expect("insert");
    let expected = tags_of_records(&store);
    assert_eq!(expected.len(), 150 + 10 + 150 + 40 + 1);
    assert_eq!(tags(&store), expected);
    let t = expected[&job_id(3, 4)];
    assert_eq!((t.from_store, t.length), (false, Some(4)));
    assert!(expected[&job_id(3, 3)].from_store);
    assert_eq!(
        expected[&job_id(3, 8)].length,
        Some(70_008),
        "past u16: the record's"
    );
    assert_eq!(
        expected[&job_id(3, 2)].length,
        None,
        "a timeout without a solution"
    );
    assert_eq!(
        expected[&job_id(3, 5)].length,
        Some(2),
        "over target, with one"
    );
    // swaps in a tagged and an untagged block: both are then tagged, and still right
    let done = |id: u64| {
        let old = store.job(id).expect("read").expect("stored");
        let mut new = old.clone();
        new.r_mut().state = JobState::Done as i32;
        new.r_mut().status = "solved".into();
        new.r_mut().length = 17;
        (id, old.encode_to_vec(), new)
    };
    let changes = [
        done(job_id(3, 10)),
        done(job_id(4, 11)),
        done(job_id(4, 39)),
    ];
    let borrowed: Vec<(u64, &[u8], &JobRecord)> = changes
        .iter()
        .map(|(id, old, new)| (*id, old.as_slice(), new))
        .collect();
    assert_eq!(store.cas_jobs(&borrowed).expect("swap"), [true, true, true]);
    let after = tags(&store);
    assert_eq!(after, tags_of_records(&store));
    assert_eq!(after[&job_id(4, 11)].length, Some(17));
    assert_eq!(after[&job_id(4, 11)].state, JobState::Done);
    let block = store.blocks.get(job_id(4, 0).to_be_bytes()).expect("get");
    let block = block.expect("block");
    assert_eq!(
        &block[..4],
        &block::TAGGED.to_le_bytes(),
        "rewritten tagged"
    );
}
