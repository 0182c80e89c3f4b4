//! The symmetry index: which finished job answers a position's symmetry class in a mode, so
//! that a symmetric or inverse copy of a solved position is answered from the store (at
//! submission and by `lookup`), the stored answer mapped back and verified first.

use std::hash::BuildHasher;

use cubefleet_proto::{JobResult, JobState, ResultStatus};
use cubefleet_tables::symmetry::Canonical;
use cubefleet_tables::{CubieCube, FaceletCube, MoveSeq};

use super::state::FastMap;
use super::Core;
use crate::error::Error;
use crate::mode::mode_key;
use crate::record::{batch_seq, JobRecord};

/// The symmetry index: `hash(canonical key ++ mode key)` to the id of a finished job of that
/// class and mode whose answer can be reused (solved, or "none within"). Kept in memory and
/// rebuilt from the job records at start-up (each record carries its canonical key), so a
/// completion writes nothing to the store for it; about 20 bytes per such job. A hash only
/// names a candidate: two classes may share one, so users compare the job's stored canonical
/// form and its batch's mode before they trust it.
#[derive(Default)]
pub(super) struct SymIndex(pub(super) FastMap<u64, u64>);

impl SymIndex {
    /// The index slot of the class with canonical key `canonical` in the mode with key `mkey`.
    pub(super) fn slot(canonical: &[u8; 16], mkey: &[u8]) -> u64 {
        // a fixed seed: the slots of one process must agree (the index is rebuilt at start-up,
        // so they need not agree across processes)
        foldhash::quality::FixedState::default().hash_one((canonical, mkey))
    }

    /// Records that job `id` (of a batch in the mode with key `mkey`) answers its class, when
    /// it finished with a reusable answer.
    pub(super) fn add(&mut self, id: u64, job: &JobRecord, mkey: &[u8]) {
        let r = job.r();
        let status = r.outcome();
        if !matches!(status, ResultStatus::Solved | ResultStatus::NoneWithin) {
            return;
        }
        if status == ResultStatus::Solved && r.solution.is_empty() && r.length > 0 {
            return; // kept without its solution (`--keep histogram`): nothing to reuse
        }
        if let Some(k) = job.canonical_key() {
            self.0.insert(Self::slot(&k, mkey), id);
        }
    }

    /// The job the index names for the class `canonical` in the mode `mkey`, if any.
    pub(super) fn get(&self, canonical: &[u8; 16], mkey: &[u8]) -> Option<u64> {
        self.0.get(&Self::slot(canonical, mkey)).copied()
    }
}

impl Core {
    /// The finished jobs the symmetry index names for the class with canonical key
    /// `canonical` in the modes with keys `mkeys` (at most one per mode), with the stored
    /// canonical form of each; a candidate of another class or mode (a shared hash) is left out.
    pub(super) fn indexed(
        &self,
        canonical: &[u8; 16],
        mkeys: &[impl AsRef<[u8]>],
    ) -> Result<Vec<(u64, JobRecord, Canonical)>, Error> {
        // after an open from a summary, the index is rebuilt behind: wait until it is whole,
        // so a copy of a solved position is answered from the store as after any open
        self.wait_index();
        let ids: Vec<(u64, &[u8])> = {
            let index = self.index.read().unwrap_or_else(|e| e.into_inner());
            mkeys
                .iter()
                .filter_map(|m| Some((index.get(canonical, m.as_ref())?, m.as_ref())))
                .collect()
        };
        let mut out = Vec::new();
        for (id, mkey) in ids {
            if mode_key(&self.batch_mode(batch_seq(id))) != mkey {
                continue;
            }
            if let Some(job) = self.store.job(id)? {
                if let Some(canon) = job.canonical_form().filter(|c| c.cube.key() == *canonical) {
                    out.push((id, job, canon));
                }
            }
        }
        Ok(out)
    }
}

/// Maps `stored`, the result for the position whose canonical form is `src` (of the same class
/// as `canon`), to the position `cube`, verified.
pub(super) fn map_result(
    stored: JobResult,
    src: &Canonical,
    cube: &CubieCube,
    canon: &Canonical,
) -> Option<JobResult> {
    if stored.state != JobState::Done as i32 {
        return None;
    }
    let mut r = stored;
    let status = r.outcome();
    if status == ResultStatus::Solved {
        let sol = MoveSeq::parse(&r.solution).ok()?;
        let rep = src.solution_to_rep(&sol.0);
        let mine = MoveSeq(canon.solution_back(&rep));
        if !cube.apply_moves(&mine.0).is_solved() {
            return None;
        }
        r.solution = mine.to_string();
    } else if status != ResultStatus::NoneWithin {
        return None;
    }
    r.facelets = FaceletCube::from_cubie(cube).to_string();
    r.from_store = true;
    Some(r)
}
