//! What a coset job's result is checked for. A coset result is a claim over 19,508,428,800
//! positions that the coordinator cannot check in full; it checks what can be checked:
//!
//! - the counts are the coset's and the question's: its number, one count per depth through
//!   the depth asked, the exact depth asked, the solved cube only in H at depth 0, and the
//!   counts and the unsolved positions summing to the coset's size (listed one by one, in
//!   order and in range, when there are at most [`MAX_LISTED`]);
//! - the samples: at the lease the coordinator drew a seed the worker could not know before
//!   (`Lease::seed`), which names [`COSET_SAMPLES`] positions of the coset
//!   ([`cubefleet_tables::coset::samples`]). For each the worker says the depth its counts put
//!   it at, with a solution of at most that many turns, which the coordinator applies to the
//!   position (made here from the coset and the local index) — exactly that many within the
//!   exact depths, where a shorter one would contradict the counts; or says it is unsolved,
//!   which must agree with the list of unsolved positions when there is one.
//!
//! What this proves: each sampled position is solved within the depth claimed for it, and the
//! worker could answer for positions it could not choose (a worker that skipped the work must
//! still search each sample). What it does not prove: the counts themselves (a worker could
//! search the samples alone and make the counts up): `--confirm 2` has two credentials' equal
//! counts make the result final, and `revoke` takes back every count a worker gave.

use cubefleet_proto::question::{Algorithm, Question};
use cubefleet_proto::{Completion, CosetCounts, ResultStatus};
use cubefleet_tables::coset::{
    sample_local, Coset, COSET_SAMPLES, COSET_SIZE, MAX_LISTED, SEED_BYTES,
};
use cubefleet_tables::{CubieCube, MoveSeq};

/// Checks the coset result `c` of the job whose position is `cube` (its coset's
/// representative) under the coset question `q`, with the samples drawn from `seed`; returns
/// the counts to store, or the reason it is refused, naming the field.
pub(crate) fn verify_coset(
    cube: &CubieCube,
    seed: &[u8; SEED_BYTES],
    q: &Question,
    c: &Completion,
) -> Result<CosetCounts, String> {
    let Algorithm::Coset {
        max_depth,
        exact_depth,
    } = q.algorithm()
    else {
        return Err("the job is no coset job".into());
    };
    if c.reported() != Some(ResultStatus::Solved) {
        return Err(format!(
            "completion.result_status is `{}`: a coset's result is solved (or cancelled, to \
             give it up)",
            c.status
        ));
    }
    if c.has_solution || !c.solution.is_empty() || !c.moves.is_empty() {
        return Err("completion.solution: a coset's result has counts, no solution".into());
    }
    if c.optimal || c.lower_bound > 0 {
        return Err("completion.optimal, completion.lower_bound: not for a coset".into());
    }
    let k = c
        .coset
        .as_ref()
        .ok_or("completion.coset is missing: a coset job's result carries its counts")?;
    let coset = Coset::of(cube);
    if coset.representative() != *cube {
        return Err("the job's position is not its coset's representative".into());
    }
    if k.number != coset.number() {
        return Err(format!(
            "completion.coset.number is {}: the job is coset {}",
            k.number,
            coset.number()
        ));
    }
    if k.counts.len() != max_depth as usize + 1 {
        return Err(format!(
            "completion.coset.counts has {} entries: a coset solved to depth {max_depth} has {}",
            k.counts.len(),
            max_depth + 1
        ));
    }
    if k.exact_through != exact_depth {
        return Err(format!(
            "completion.coset.exact_through is {}: the batch asks for {exact_depth}",
            k.exact_through
        ));
    }
    let at_zero = u64::from(coset.number() == 0);
    if k.counts[0] != at_zero {
        return Err(format!(
            "completion.coset.counts[0] is {}: it is {at_zero} (only H holds the solved cube)",
            k.counts[0]
        ));
    }
    let sum = k
        .counts
        .iter()
        .chain(std::iter::once(&k.unsolved))
        .try_fold(0u64, |a, &n| a.checked_add(n));
    if sum != Some(COSET_SIZE) {
        return Err(format!(
            "completion.coset.counts and unsolved sum to {}, not the coset's {COSET_SIZE} \
             positions",
            sum.map_or_else(|| "more than 2^64".into(), |s| s.to_string())
        ));
    }
    let beyond: u64 = k.counts[exact_depth as usize + 1..].iter().sum();
    if k.one_by_one > beyond {
        return Err(format!(
            "completion.coset.one_by_one is {}: more than the {beyond} positions counted past \
             the exact depth",
            k.one_by_one
        ));
    }
    let listed = k.unsolved <= MAX_LISTED;
    if listed {
        if k.unsolved_local.len() as u64 != k.unsolved
            || k.unsolved_local.windows(2).any(|w| w[0] >= w[1])
            || k.unsolved_local.last().is_some_and(|&i| i >= COSET_SIZE)
        {
            return Err(format!(
                "completion.coset.unsolved_local: {} increasing local indices below {COSET_SIZE} \
                 are needed (the {} unsolved positions)",
                k.unsolved, k.unsolved
            ));
        }
    } else if !k.unsolved_local.is_empty() {
        return Err(format!(
            "completion.coset.unsolved_local lists positions of {} unsolved: only {MAX_LISTED} \
             or fewer are listed",
            k.unsolved
        ));
    }
    if c.coset_samples.len() != COSET_SAMPLES {
        return Err(format!(
            "completion.coset_samples has {} answers: the lease's seed names {COSET_SAMPLES}",
            c.coset_samples.len()
        ));
    }
    for (j, s) in c.coset_samples.iter().enumerate() {
        let local = sample_local(seed, j as u32);
        let field = format!("completion.coset_samples[{j}] (local index {local})");
        let in_list = listed && k.unsolved_local.binary_search(&local).is_ok();
        if s.unsolved {
            if s.depth != 0 || !s.moves.is_empty() {
                return Err(format!("{field}: unsolved, with a depth or a solution"));
            }
            if k.unsolved == 0 || (listed && !in_list) {
                return Err(format!(
                    "{field}: unsolved, but the counts leave it solved (not among the unsolved)"
                ));
            }
            continue;
        }
        if in_list {
            return Err(format!("{field}: solved, but listed unsolved"));
        }
        if s.depth > max_depth || k.counts[s.depth as usize] == 0 {
            return Err(format!(
                "{field}: at depth {}, where the counts have no position",
                s.depth
            ));
        }
        let moves = MoveSeq::from_indices(&s.moves)
            .ok_or_else(|| format!("{field}: a move number above 17"))?;
        let length = moves.len() as u32;
        if length > s.depth {
            return Err(format!(
                "{field}: a solution of {length} turns for a position at depth {}",
                s.depth
            ));
        }
        if s.depth <= exact_depth && length != s.depth {
            return Err(format!(
                "{field}: a solution of {length} turns for a position the counts put at exact \
                 depth {}, which says none is shorter",
                s.depth
            ));
        }
        let position = coset
            .position(local)
            .ok_or_else(|| format!("{field}: no position"))?;
        if !position.apply_moves(&moves.0).is_solved() {
            return Err(format!("{field}: `{moves}` does not solve the position"));
        }
    }
    Ok(k.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubefleet_proto::question::{Metric, MoveSet};
    use cubefleet_proto::CosetSample;

    fn question(max_depth: u32, exact_depth: u32) -> Question {
        Question::new(
            Algorithm::Coset {
                max_depth,
                exact_depth,
            },
            Metric::Htm,
            MoveSet::ALL,
            None,
        )
        .expect("a coset question")
    }

    /// A result for H to depth 1 whose samples are all unsolved (their depths are beyond 1,
    /// as every random position's is): consistent, but for what the coordinator cannot check.
    fn result_for_h() -> Completion {
        let unsolved = COSET_SIZE - 11;
        Completion {
            job_id: 1,
            result_status: ResultStatus::Solved as i32,
            status: "solved".into(),
            coset: Some(CosetCounts {
                number: 0,
                counts: vec![1, 10],
                exact_through: 1,
                unsolved,
                unsolved_local: Vec::new(),
                one_by_one: 0,
            }),
            coset_samples: vec![
                CosetSample {
                    unsolved: true,
                    ..CosetSample::default()
                };
                COSET_SAMPLES
            ],
            ..Completion::default()
        }
    }

    #[test]
    fn consistent_counts_pass_and_each_field_is_checked() {
        let seed = [9u8; SEED_BYTES];
        let h = Coset::from_number(0).expect("H").representative();
        let q = question(1, 1);
        let good = result_for_h();
        assert!(verify_coset(&h, &seed, &q, &good).is_ok());
        let bad = |f: &dyn Fn(&mut Completion), field: &str| {
            let mut c = good.clone();
            f(&mut c);
            let why = verify_coset(&h, &seed, &q, &c).expect_err(field);
            assert!(why.contains(field), "{why}");
        };
        bad(
            &|c| c.coset.as_mut().expect("counts").counts[1] = 11,
            "sum to",
        );
        bad(&|c| c.coset.as_mut().expect("counts").number = 5, "number");
        bad(
            &|c| c.coset.as_mut().expect("counts").counts.push(0),
            "entries",
        );
        bad(&|c| c.coset = None, "completion.coset is missing");
        bad(
            &|c| {
                c.coset_samples.pop();
            },
            "coset_samples",
        );
        bad(
            &|c| {
                c.coset_samples[3] = CosetSample {
                    unsolved: false,
                    depth: 1,
                    moves: vec![0],
                }
            },
            "coset_samples[3]",
        );
        bad(
            &|c| {
                let k = c.coset.as_mut().expect("counts");
                k.counts[0] = 0;
                k.counts[1] = 11;
            },
            "counts[0]",
        );
    }
}
