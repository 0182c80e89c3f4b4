//! What a batch is made of, written into a [`BatchSpec`] and read back from one in one place:
//! lines (a file, or a list given in memory), a range of state indices, a sample of states or
//! a range of cosets ([`States`], whose rule of which state each job is lives in
//! `cubefleet_tables::states`),
//! and what a range or sample batch keeps of each result ([`Keep`]). The CLI's `submit`, the
//! Python `Client.submit` and the coordinator all go through these functions, so a spec means
//! the same to each of them.
//!
//! Invariants of a spec this module writes: exactly one of "lines", "range", "sample" and
//! "cosets" (whose mode is `coset`; a batch of lines with that mode is coset numbers);
//! `keep` is `Histogram` only for a range or a sample; lines go in messages of at most
//! [`CHUNK_LINES`] lines.

use cubefleet_tables::states::{parse_index, States};

use crate::{submit_request, BatchSpec, Keep, LineChunk, SubmitRequest};

/// Most lines per submission message ([`line_requests`], and the CLI's streaming of a file).
pub const CHUNK_LINES: usize = 2000;

/// A batch definition refused before it is sent (or, by the coordinator, when it arrives):
/// the reason, naming the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// What a batch keeps of each result, from its name (`all`, `histogram`), as both front ends
/// take it.
pub fn keep_named(name: &str) -> Result<Keep, Refused> {
    match name {
        "all" => Ok(Keep::All),
        "histogram" => Ok(Keep::Histogram),
        other => Err(Refused(format!(
            "keep must be \"all\" or \"histogram\", not {other:?}"
        ))),
    }
}

/// Writes `states` (None: a batch of lines) and `keep` into `spec`. A batch of lines keeps
/// every result: `Keep::Histogram` for one is refused.
pub fn define(spec: &mut BatchSpec, states: Option<&States>, keep: Keep) -> Result<(), Refused> {
    match states {
        Some(&States::Range { start, end, step }) => {
            spec.range_start = start.to_string();
            spec.range_end = end.to_string();
            spec.range_step = step;
        }
        Some(&States::Sample { count, seed }) => {
            spec.sample_count = count;
            spec.sample_seed = seed;
        }
        Some(&States::Cosets {
            start,
            end,
            canonical,
        }) => {
            if keep == Keep::Histogram {
                return Err(Refused(
                    "keep histogram is for range and sample batches; a coset batch keeps its \
                     counts"
                        .into(),
                ));
            }
            spec.coset_start = start;
            spec.coset_end = end;
            spec.canonical_only = canonical;
        }
        None if keep == Keep::Histogram => {
            return Err(Refused(
                "keep histogram is for range and sample batches (--range, --sample); a batch \
                 of lines keeps all"
                    .into(),
            ))
        }
        None => {}
    }
    spec.keep = keep as i32;
    Ok(())
}

/// The states a spec asks for: None for a batch of lines (no range, no sample); refused when
/// the spec has both, half a range, a step or seed alone, or a definition that makes no
/// states (the reason names the field).
pub fn states_of(spec: &BatchSpec) -> Result<Option<States>, Refused> {
    let range = !spec.range_start.is_empty() || !spec.range_end.is_empty();
    let invalid = |e: cubefleet_tables::Error| Refused(e.to_string());
    let coset_mode = matches!(
        spec.mode.as_ref().and_then(|m| m.kind.as_ref()),
        Some(crate::mode::Kind::Coset(_))
    );
    let cosets = spec.coset_start != 0 || spec.coset_end != 0;
    if cosets || spec.canonical_only {
        if range || spec.sample_count > 0 {
            return Err(Refused(
                "a batch is a range, a sample or cosets, not two of them".into(),
            ));
        }
        if !coset_mode {
            return Err(Refused(
                "coset_start and coset_end go with the mode coset (mode.coset)".into(),
            ));
        }
        return Ok(Some(
            States::cosets(spec.coset_start, spec.coset_end, spec.canonical_only)
                .map_err(invalid)?,
        ));
    }
    if coset_mode && (range || spec.sample_count > 0) {
        return Err(Refused(
            "the mode coset goes with cosets (coset_start, coset_end) or lines of coset \
             numbers, not a range or sample of states"
                .into(),
        ));
    }
    match (range, spec.sample_count > 0) {
        (false, false) => {
            if spec.range_step != 0 || spec.sample_seed != 0 {
                return Err(Refused(
                    "a step or seed without a range or sample: give range_start and \
                     range_end, or sample_count"
                        .into(),
                ));
            }
            Ok(None)
        }
        (true, true) => Err(Refused("a batch is a range or a sample, not both".into())),
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

/// A range or sample as people write it (`range 0..1000 step 1`, `sample 1000 seed 7`): the
/// name a batch gets when none is given.
pub fn describe(states: &States) -> String {
    match *states {
        States::Range { start, end, step } => format!("range {start}..{end} step {step}"),
        States::Sample { count, seed } => format!("sample {count} seed {seed}"),
        States::Cosets {
            start,
            end,
            canonical,
        } => format!(
            "cosets {start}..{end}{}",
            if canonical { " canonical" } else { "" }
        ),
    }
}

/// The messages of a submission whose lines are all in memory: the spec, then the lines in
/// chunks of at most [`CHUNK_LINES`].
pub fn line_requests(spec: BatchSpec, lines: &[String]) -> Vec<SubmitRequest> {
    std::iter::once(submit_request::Part::Spec(spec))
        .chain(lines.chunks(CHUNK_LINES).map(|chunk| {
            submit_request::Part::Chunk(LineChunk {
                lines: chunk.to_vec(),
            })
        }))
        .map(|part| SubmitRequest { part: Some(part) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_is_lines_a_range_or_a_sample() {
        let lines = BatchSpec::default();
        assert_eq!(states_of(&lines), Ok(None));
        let range = BatchSpec {
            range_start: "3".into(),
            range_end: "9".into(),
            range_step: 2,
            ..BatchSpec::default()
        };
        assert_eq!(
            states_of(&range),
            Ok(Some(States::Range {
                start: 3,
                end: 9,
                step: 2
            }))
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

    #[test]
    fn what_define_writes_states_of_reads_back() {
        for states in [
            States::range(5, 1 << 65, 1 << 40).expect("range"),
            States::sample(1000, 7).expect("sample"),
        ] {
            let mut spec = BatchSpec::default();
            define(&mut spec, Some(&states), Keep::Histogram).expect("defined");
            assert_eq!(states_of(&spec), Ok(Some(states)));
            assert_eq!(spec.keep, Keep::Histogram as i32);
        }
        let mut spec = BatchSpec::default();
        let refused = define(&mut spec, None, Keep::Histogram).expect_err("lines keep all");
        assert!(refused.0.contains("keep histogram"), "{refused}");
        assert_eq!(keep_named("all"), Ok(Keep::All));
        assert!(keep_named("most").is_err());
    }

    #[test]
    fn coset_batches_need_the_coset_mode_and_read_back() {
        let coset_mode = crate::question::Question::new(
            crate::question::Algorithm::Coset {
                max_depth: 6,
                exact_depth: 6,
            },
            crate::question::Metric::Htm,
            crate::question::MoveSet::ALL,
            None,
        )
        .expect("a coset question")
        .to_wire();
        let states = States::cosets(10, 20, true).expect("cosets");
        let mut spec = BatchSpec {
            mode: Some(coset_mode),
            ..BatchSpec::default()
        };
        define(&mut spec, Some(&states), Keep::All).expect("defined");
        assert_eq!(states_of(&spec), Ok(Some(states)));
        assert!(define(&mut spec.clone(), Some(&states), Keep::Histogram).is_err());
        let plain = BatchSpec {
            mode: None,
            ..spec.clone()
        };
        assert!(states_of(&plain)
            .expect_err("no coset mode")
            .0
            .contains("mode"));
        let mixed = BatchSpec {
            sample_count: 3,
            ..spec.clone()
        };
        assert!(states_of(&mixed).is_err());
        let past = BatchSpec {
            coset_end: u64::MAX,
            ..spec
        };
        assert!(states_of(&past).is_err());
    }

    #[test]
    fn lines_go_in_chunks_after_the_spec() {
        let lines: Vec<String> = (0..CHUNK_LINES + 1).map(|i| i.to_string()).collect();
        let requests = line_requests(BatchSpec::default(), &lines);
        assert_eq!(requests.len(), 3);
        assert!(matches!(
            requests[0].part,
            Some(submit_request::Part::Spec(_))
        ));
        let Some(submit_request::Part::Chunk(last)) = &requests[2].part else {
            panic!("a chunk last");
        };
        assert_eq!(last.lines, vec![CHUNK_LINES.to_string()]);
    }
}
