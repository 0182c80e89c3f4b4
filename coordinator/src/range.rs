//! Range, sample and coset batches: a batch stored as its definition ([`States`], whose rule of which
//! state each line is lives in `cubefleet_tables::states`); its jobs are made as workers lease
//! them. A batch makes at most [`crate::MAX_LINES`] (2^40) jobs.

use cubefleet_proto::BatchSpec;
pub use cubefleet_tables::states::{parse_range, sample_index, States};

use crate::error::Error;
use crate::record::BatchRecord;

/// The states a submission's spec asks for (`cubefleet_proto::batch::states_of`, the reading
/// every front end's writing is tested against): None for a file batch, refused as an invalid
/// argument when the spec has both, half a range or a bad one.
pub fn states_of(spec: &BatchSpec) -> Result<Option<States>, Error> {
    cubefleet_proto::batch::states_of(spec).map_err(|e| Error::InvalidArgument(e.0))
}

impl BatchRecord {
    /// The states of a range or sample batch (None for a file batch). A stored definition
    /// was checked when the batch was made; one that no longer reads is taken as none.
    pub(crate) fn states(&self) -> Option<States> {
        if self.coset_end > 0 {
            return States::cosets(self.coset_start, self.coset_end, self.canonical_only).ok();
        }
        if self.sample_count > 0 {
            return States::sample(self.sample_count, self.sample_seed).ok();
        }
        if self.range_end.is_empty() {
            return None;
        }
        let (start, end) =
            parse_range(&format!("{}..{}", self.range_start, self.range_end)).ok()?;
        States::range(start, end, self.range_step).ok()
    }
}
