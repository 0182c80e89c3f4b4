//! Ranges and samples of states: which state each line of a range or sample batch is (the
//! coordinator stores such a batch as its definition, the CLI checks one before it sends it).
//!
//! Line `k` of
//! - a range `START..END` with step `STEP` is state index `START + k * STEP` (for
//!   `k < ceil((END - START) / STEP)`);
//! - a sample of `N` states with seed `S` is [`sample_index`]`(S, k)`: the first of the draws
//!   `d = 0, 1, ...` whose value is below `N_STATES`, where the value of draw `d` is the first
//!   16 bytes of SHA-256(`"cubefleet-sample-v1"` ++ `S` as 8 bytes little-endian ++ `k` as 8
//!   bytes little-endian ++ `d` as 4 bytes little-endian), read as a big-endian `u128` and
//!   shifted right by 62 bits (a uniform 66-bit number; about 59% of draws are accepted). So
//!   every line is computed alone, each is uniform over all states (independent, with
//!   repetition), and the rule is fixed: the same seed gives the same states in every version.
//!
//! A batch makes at most [`MAX_LINES`] (2^40) jobs: a range of more states (with step 1, one
//! of more than about 1.1 * 10^12) makes its first 2^40 and then no more.

use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::index::N_STATES;

/// Most lines a batch makes: 2^40 (the coordinator's job ids give a line index 40 bits).
pub const MAX_LINES: u64 = 1 << 40;

/// The states of a range or sample batch, line by line ([`States::state_index`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum States {
    /// The indices `start + k * step` below `end`; `start < end <= N_STATES`, `step >= 1`,
    /// and their number fits a `u64`.
    Range {
        /// First index.
        start: u128,
        /// End (exclusive).
        end: u128,
        /// Step (at least 1).
        step: u64,
    },
    /// `count` uniform draws (`1..=MAX_LINES`) by the rule of the module doc from `seed`.
    Sample {
        /// Number of states.
        count: u64,
        /// The seed.
        seed: u64,
    },
    /// The cosets of H numbered `start..end` (`start < end <= N_COSETS`), or only the
    /// canonical ones among them ([`crate::coset::Canonical`]), in increasing order: line `k`
    /// is the representative of the `k`-th (a coset batch, one job per coset).
    Cosets {
        /// First coset number.
        start: u64,
        /// End (exclusive).
        end: u64,
        /// Only the canonical cosets (at least one is in the range).
        canonical: bool,
    },
}

/// Reads `START..END` (decimal state indices, `_` allowed between digits): refused with the
/// reason unless `START < END <= N_STATES`.
pub fn parse_range(text: &str) -> Result<(u128, u128), Error> {
    let Some((a, b)) = text.trim().split_once("..") else {
        return Err(Error::BadStates(format!(
            "range `{text}` is not START..END (for example 0..1000000)"
        )));
    };
    Ok((parse_index(a, "START")?, parse_index(b, "END")?))
}

/// A decimal state index (`_` allowed between digits), one end of a range, named `what`
/// (`START`, `END`) in messages.
pub fn parse_index(text: &str, what: &str) -> Result<u128, Error> {
    let digits: String = text.trim().chars().filter(|&c| c != '_').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::BadStates(format!(
            "range {what} `{}` is not a number (a state index is a decimal integer)",
            text.trim()
        )));
    }
    digits.parse::<u128>().map_err(|_| {
        Error::BadStates(format!(
            "range {what} `{}` is past the last state ({N_STATES} states)",
            text.trim()
        ))
    })
}

impl States {
    /// The range `start..end` with `step` (0 means 1), checked: refused with the reason when
    /// it is empty, reaches past the last state, or has more states than a `u64` counts.
    pub fn range(start: u128, end: u128, step: u64) -> Result<States, Error> {
        let step = step.max(1);
        if end > N_STATES {
            return Err(Error::BadStates(format!(
                "range end {end} is past the last state: there are {N_STATES} states, so END \
                 is at most {N_STATES}"
            )));
        }
        if start >= end {
            return Err(Error::BadStates(format!(
                "range {start}..{end} is empty: START must be below END (END is exclusive)"
            )));
        }
        let states = States::Range { start, end, step };
        if (end - start).div_ceil(u128::from(step)) > u128::from(u64::MAX) {
            return Err(Error::BadStates(format!(
                "range {start}..{end} with step {step} has more than 2^64 states: use --step \
                 or split the range"
            )));
        }
        Ok(states)
    }

    /// A sample of `count` states from `seed`: refused unless `1 <= count <= MAX_LINES`.
    pub fn sample(count: u64, seed: u64) -> Result<States, Error> {
        if count == 0 || count > MAX_LINES {
            return Err(Error::BadStates(format!(
                "a sample of {count} states: give 1 to {MAX_LINES} (2^40)"
            )));
        }
        Ok(States::Sample { count, seed })
    }

    /// The cosets `start..end` (only the canonical ones when `canonical`): refused unless
    /// `start < end <= N_COSETS` and the range holds a coset to solve.
    pub fn cosets(start: u64, end: u64, canonical: bool) -> Result<States, Error> {
        use crate::coset::{Canonical, N_COSETS};
        if start >= end || end > N_COSETS {
            return Err(Error::BadStates(format!(
                "cosets {start}..{end}: give START..END with START < END <= {N_COSETS}"
            )));
        }
        if canonical && Canonical::get().rank(end) == Canonical::get().rank(start) {
            return Err(Error::BadStates(format!(
                "cosets {start}..{end} hold no canonical coset (the least of its class under \
                 the 16 symmetries that fix H)"
            )));
        }
        Ok(States::Cosets {
            start,
            end,
            canonical,
        })
    }

    /// The coset of line `k` of a coset batch (`k < self.len()`); None for other states.
    pub fn coset(&self, k: u64) -> Option<crate::coset::Coset> {
        let States::Cosets {
            start, canonical, ..
        } = *self
        else {
            return None;
        };
        if canonical {
            let c = crate::coset::Canonical::get();
            c.nth(c.rank(start) + k)
        } else {
            crate::coset::Coset::from_number(start + k).ok()
        }
    }

    /// The number of states it covers (a batch makes at most [`MAX_LINES`] of them).
    pub fn len(&self) -> u64 {
        match *self {
            States::Range { start, end, step } => {
                // checked at construction to fit
                u64::try_from((end - start).div_ceil(u128::from(step))).unwrap_or(u64::MAX)
            }
            States::Sample { count, .. } => count,
            States::Cosets {
                start,
                end,
                canonical: false,
            } => end - start,
            States::Cosets { start, end, .. } => {
                let c = crate::coset::Canonical::get();
                c.rank(end) - c.rank(start)
            }
        }
    }

    /// Never true: a range or sample has at least one state.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The jobs a batch of these states makes: [`States::len`], at most [`MAX_LINES`].
    pub fn lines(&self) -> u64 {
        self.len().min(MAX_LINES)
    }

    /// The state index of line `k` (`k < self.len()`).
    pub fn state_index(&self, k: u64) -> u128 {
        match *self {
            States::Range { start, step, .. } => start + u128::from(k) * u128::from(step),
            States::Sample { seed, .. } => sample_index(seed, k),
            States::Cosets { .. } => self
                .coset(k)
                .map_or(0, |c| crate::index::index_of(&c.representative())),
        }
    }

    /// Whether consecutive lines are consecutive state indices (a range of step 1), so that a
    /// chunk of them is best made with [`crate::index::Walk`].
    pub fn consecutive(&self) -> bool {
        matches!(self, States::Range { step: 1, .. })
    }

    /// `"range"`, `"sample"` or `"cosets"`.
    pub fn kind(&self) -> &'static str {
        match self {
            States::Range { .. } => "range",
            States::Sample { .. } => "sample",
            States::Cosets { .. } => "cosets",
        }
    }
}

/// Line `k` of the sample with `seed`: uniform over `0..N_STATES`, by the rule of the module
/// doc (fixed: stored samples and their results depend on it).
pub fn sample_index(seed: u64, k: u64) -> u128 {
    for draw in 0u32.. {
        let mut h = Sha256::new();
        h.update(b"cubefleet-sample-v1");
        h.update(seed.to_le_bytes());
        h.update(k.to_le_bytes());
        h.update(draw.to_le_bytes());
        let digest = h.finalize();
        let mut head = [0u8; 16];
        head.copy_from_slice(&digest[..16]);
        let value = u128::from_be_bytes(head) >> 62;
        if value < N_STATES {
            return value;
        }
    }
    // 2^32 draws all rejected (each with probability about 0.41) does not happen
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_maps_lines_to_start_plus_k_steps() {
        let r = States::range(10, 20, 1).expect("valid");
        assert_eq!(r.len(), 10);
        assert_eq!(
            (0..10).map(|k| r.state_index(k)).collect::<Vec<_>>(),
            (10..20).collect::<Vec<_>>()
        );
        let s = States::range(5, 26, 7).expect("valid");
        assert_eq!(s.len(), 3); // 5, 12, 19 (26 is excluded)
        assert_eq!([0, 1, 2].map(|k| s.state_index(k)), [5, 12, 19]);
        let t = States::range(5, 27, 7).expect("valid");
        assert_eq!(t.len(), 4); // ... and 26
        assert_eq!(t.state_index(3), 26);
        assert!(r.consecutive() && !s.consecutive());
        // the last state of the space is the last line of a range ending at N_STATES
        let last = States::range(N_STATES - 3, N_STATES, 1).expect("valid");
        assert_eq!(last.state_index(last.len() - 1), N_STATES - 1);
        // step 0 means 1
        assert_eq!(States::range(0, 4, 0).expect("valid").len(), 4);
    }

    #[test]
    fn bad_ranges_are_refused_with_the_reason() {
        let msg = |e: Error| e.to_string();
        assert!(msg(States::range(5, 5, 1).expect_err("empty")).contains("START must be below"));
        assert!(msg(States::range(6, 5, 1).expect_err("reversed")).contains("empty"));
        assert!(msg(States::range(0, N_STATES + 1, 1).expect_err("past")).contains("past"));
        // the whole space with step 1 has more states than a u64 counts
        let e = msg(States::range(0, N_STATES, 1).expect_err("too many"));
        assert!(e.contains("use --step or split the range"), "{e}");
        assert!(States::range(0, N_STATES, 3).is_ok());
        assert!(msg(parse_range("12").expect_err("no ..")).contains("START..END"));
        assert!(msg(parse_range("a..5").expect_err("nan")).contains("not a number"));
        assert!(msg(parse_range("1..-5").expect_err("nan")).contains("not a number"));
        assert_eq!(parse_range(" 1_000..2000 ").expect("valid"), (1000, 2000));
        assert!(States::sample(0, 1).is_err());
        assert!(States::sample(MAX_LINES + 1, 1).is_err());
        assert!(States::sample(MAX_LINES, 1).is_ok());
    }

    /// Samples are reproducible (line by line, the same for the same seed), differ between
    /// seeds, stay below N_STATES, and look uniform: the mean of many draws is near the middle
    /// and each tenth of the space holds about a tenth of them.
    #[test]
    fn samples_are_reproducible_uniform_and_in_range() {
        let a = States::sample(4000, 7).expect("valid");
        let b = States::sample(4000, 8).expect("valid");
        let xs: Vec<u128> = (0..4000).map(|k| a.state_index(k)).collect();
        assert_eq!(
            xs,
            (0..4000).map(|k| sample_index(7, k)).collect::<Vec<_>>()
        );
        let ys: Vec<u128> = (0..4000).map(|k| b.state_index(k)).collect();
        assert!(xs.iter().zip(&ys).all(|(x, y)| x != y));
        assert!(xs.iter().all(|&x| x < N_STATES));
        let mut tenths = [0u32; 10];
        for &x in &xs {
            tenths[(x * 10 / N_STATES) as usize] += 1;
        }
        // 400 expected each; 6 standard deviations is about 114
        assert!(
            tenths.iter().all(|&n| (286..=514).contains(&n)),
            "{tenths:?}"
        );
        // the first lines of seed 7 are fixed by the rule (these values were computed from
        // the rule's text by an independent implementation): a changed rule fails here
        assert_eq!(
            [0, 1, 2].map(|k| sample_index(7, k)),
            [
                14_962_859_730_898_997_947,
                13_986_520_893_401_664_216,
                41_891_004_312_173_788_750
            ]
        );
        let distinct: std::collections::HashSet<u128> = xs.iter().copied().collect();
        assert_eq!(distinct.len(), xs.len());
    }
}
