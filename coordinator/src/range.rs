//! Range and sample batches: a batch stored as its definition ([`States`], whose rule of which
//! state each line is lives in `cubefleet_tables::states`); its jobs are made as workers lease
//! them. A batch makes at most [`crate::MAX_LINES`] (2^40) jobs.

use cubefleet_proto::BatchSpec;
use cubefleet_tables::states::parse_index;
pub use cubefleet_tables::states::{parse_range, sample_index, States};

use crate::error::Error;
use crate::record::BatchRecord;

/// The states a submission's spec asks for: None for a file batch (no range, no sample),
/// refused when the spec has both or a bad one.
pub fn states_of(spec: &BatchSpec) -> Result<Option<States>, Error> {
    let range = !spec.range_start.is_empty() || !spec.range_end.is_empty();
    match (range, spec.sample_count > 0) {
        (false, false) => {
            if spec.range_step != 0 || spec.sample_seed != 0 {
                return Err(Error::InvalidArgument(
                    "a step or seed without a range or sample: give range_start and \
                     range_end, or sample_count"
                        .into(),
                ));
            }
            Ok(None)
        }
        (true, true) => Err(Error::InvalidArgument(
            "a batch is a range or a sample, not both".into(),
        )),
        (true, false) => Ok(Some(
            States::range(
                parse_index(&spec.range_start, "START").map_err(invalid)?,
                parse_index(&spec.range_end, "END").map_err(invalid)?,
                spec.range_step,
            )
            .map_err(invalid)?,
        )),
        (false, true) => Ok(Some(
            States::sample(spec.sample_count, spec.sample_seed).map_err(invalid)?,
        )),
    }
}

/// A definition the client gave that makes no states: refused with the reason.
fn invalid(e: cubefleet_tables::Error) -> Error {
    Error::InvalidArgument(e.to_string())
}

impl BatchRecord {
    /// The states of a range or sample batch (None for a file batch). A stored definition
    /// was checked when the batch was made; one that no longer reads is taken as none.
    pub(crate) fn states(&self) -> Option<States> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_is_a_file_a_range_or_a_sample() {
        let file = BatchSpec::default();
        assert_eq!(states_of(&file).expect("file"), None);
        let range = BatchSpec {
            range_start: "3".into(),
            range_end: "9".into(),
            range_step: 2,
            ..BatchSpec::default()
        };
        assert_eq!(
            states_of(&range).expect("range"),
            Some(States::Range {
                start: 3,
                end: 9,
                step: 2
            })
        );
        let both = BatchSpec {
            sample_count: 3,
            ..range.clone()
        };
        assert!(states_of(&both).is_err());
        let half = BatchSpec {
            range_start: "3".into(),
            ..BatchSpec::default()
        };
        assert!(states_of(&half).is_err());
        let stray = BatchSpec {
            sample_seed: 4,
            ..BatchSpec::default()
        };
        assert!(states_of(&stray).is_err());
    }
}
