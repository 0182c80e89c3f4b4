//! The state index: a numbering of the 43,252,003,274,489,856,000 solvable states, so that a
//! state can be named by a number and a range of numbers handed out as work (seed 003).
//!
//! The index is a mixed-radix number whose digits, most significant first, are
//! - the corner permutation's rank `cp < 8! = 40320` (lexicographic order of `cp`, the identity
//!   0),
//! - the corner twist `co < 3^7 = 2187` ([`CubieCube::twist`]: the first 7 corners' twists in
//!   base 3; the eighth follows),
//! - half the edge permutation's rank `ep < 12!/2 = 239,500,800`: in lexicographic order the
//!   permutations of ranks `2k` and `2k + 1` differ by a swap of the last two edges, so exactly
//!   one of them has the parity of the corner permutation, which a solvable state needs; `k`
//!   names that one,
//! - the edge flip `eo < 2^11 = 2048` ([`CubieCube::flip`]: the first 11 edges' flips in base
//!   2; the twelfth follows).
//!
//! `index = ((cp * 2187 + co) * 239500800 + ep) * 2048 + eo`. Index 0 is the solved cube;
//! [`N_STATES`] - 1 the last state. The order is fixed: stored ranges and results depend on it.

use crate::cubie::{permutation_parity, CubieCube, N_CORNERS, N_EDGES};
use crate::error::Error;

/// Corner permutations: `8!`.
pub const N_CORNER_PERM: u128 = 40_320;
/// Corner twists: `3^7`.
pub const N_TWIST: u128 = 2_187;
/// Edge permutations of one parity: `12! / 2`.
pub const N_EDGE_PERM_HALF: u128 = 239_500_800;
/// Edge flips: `2^11`.
pub const N_FLIP: u128 = 2_048;
/// The number of solvable states: `8! * 3^7 * 12!/2 * 2^11`.
pub const N_STATES: u128 = N_CORNER_PERM * N_TWIST * N_EDGE_PERM_HALF * N_FLIP;

/// `FACTORIAL[n] = n!` for `n <= 12`.
const FACTORIAL: [u64; 13] = {
    let mut f = [1u64; 13];
    let mut i = 1;
    while i < 13 {
        f[i] = f[i - 1] * i as u64;
        i += 1;
    }
    f
};

/// The lexicographic rank of the permutation `p` of `0..p.len()` (the identity is 0).
fn perm_rank(p: &[u8]) -> u64 {
    let n = p.len();
    let mut rank = 0;
    for i in 0..n {
        let smaller_after = p[i + 1..].iter().filter(|&&x| x < p[i]).count() as u64;
        rank += smaller_after * FACTORIAL[n - 1 - i];
    }
    rank
}

/// The permutation of `0..out.len()` (at most 12 elements) of lexicographic rank
/// `rank < out.len()!`, into `out`.
fn perm_unrank(mut rank: u64, out: &mut [u8]) {
    let n = out.len();
    // the values not placed yet, in order: `left[..n - i]`
    let mut left: [u8; N_EDGES] = std::array::from_fn(|v| v as u8);
    for (i, slot) in out.iter_mut().enumerate() {
        let f = FACTORIAL[n - 1 - i];
        let k = (rank / f) as usize;
        *slot = left[k];
        left.copy_within(k + 1..n - i, k);
        rank %= f;
    }
}

/// The index of a solvable state (`c` must be one: permutations of equal parity, twists and
/// flips as [`crate::facelet::validate`] accepts; anything else has no index).
pub fn index_of(c: &CubieCube) -> u128 {
    let cp = perm_rank(&c.cp) as u128;
    let ep = (perm_rank(&c.ep) / 2) as u128;
    ((cp * N_TWIST + c.twist() as u128) * N_EDGE_PERM_HALF + ep) * N_FLIP + c.flip() as u128
}

/// The state with index `index`, refused when `index >= N_STATES`.
pub fn state_at(index: u128) -> Result<CubieCube, Error> {
    if index >= N_STATES {
        return Err(Error::BadStateIndex(
            index.to_string(),
            "there are 43252003274489856000 states, numbered from 0",
        ));
    }
    let eo = index % N_FLIP;
    let rest = index / N_FLIP;
    let ep = rest % N_EDGE_PERM_HALF;
    let rest = rest / N_EDGE_PERM_HALF;
    let co = rest % N_TWIST;
    let cp = rest / N_TWIST;
    let mut c = CubieCube::SOLVED;
    perm_unrank(cp as u64, &mut c.cp[..N_CORNERS]);
    perm_unrank(2 * ep as u64, &mut c.ep[..N_EDGES]);
    if permutation_parity(&c.ep) != permutation_parity(&c.cp) {
        c.ep.swap(N_EDGES - 2, N_EDGES - 1);
    }
    c.set_twist(co as usize);
    c.set_flip(eo as usize);
    Ok(c)
}

/// Reads a state index written in decimal (`_` between digits allowed), refusing anything
/// that is no number or not below [`N_STATES`].
pub fn parse_index(text: &str) -> Result<u128, Error> {
    let t = text.trim();
    let digits: String = t.chars().filter(|&ch| ch != '_').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::BadStateIndex(
            t.to_string(),
            "not a number (a state index is a decimal integer)",
        ));
    }
    match digits.parse::<u128>() {
        Ok(i) if i < N_STATES => Ok(i),
        _ => Err(Error::BadStateIndex(
            t.to_string(),
            "too large: there are 43252003274489856000 states, numbered from 0",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facelet::validate;
    use crate::moves::Move;
    use rand::{Rng, SeedableRng};

    #[test]
    fn the_count_is_the_number_of_states() {
        assert_eq!(N_STATES, 43_252_003_274_489_856_000);
        assert_eq!(FACTORIAL[12], 479_001_600);
    }

    #[test]
    fn index_zero_is_solved_and_the_last_index_is_a_real_state() {
        assert_eq!(state_at(0).expect("in range"), CubieCube::SOLVED);
        assert_eq!(index_of(&CubieCube::SOLVED), 0);
        let last = state_at(N_STATES - 1).expect("in range");
        validate(&last).expect("a solvable state");
        assert_eq!(index_of(&last), N_STATES - 1);
        assert!(state_at(N_STATES).is_err());
        assert!(state_at(u128::MAX).is_err());
    }

    /// index -> state -> index, and state -> index -> state, on a million random states; each
    /// decoded state is solvable.
    #[test]
    fn a_million_random_states_round_trip() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(24);
        for k in 0..1_000_000 {
            let i = rng.random_range(0..N_STATES);
            let c = state_at(i).expect("in range");
            assert_eq!(index_of(&c), i);
            if k % 1000 == 0 {
                validate(&c).expect("a solvable state");
                let r = CubieCube::random(&mut rng);
                assert_eq!(state_at(index_of(&r)).expect("in range"), r);
            }
        }
    }

    #[test]
    fn the_one_move_states_have_distinct_indices() {
        let mut seen: Vec<u128> = Move::ALL
            .iter()
            .map(|&m| index_of(&CubieCube::SOLVED.apply_move(m)))
            .collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 18);
        assert!(!seen.contains(&0));
    }

    #[test]
    fn indices_are_read_as_written_or_refused() {
        assert_eq!(parse_index("0"), Ok(0));
        assert_eq!(parse_index(" 1_000 "), Ok(1000));
        assert_eq!(parse_index("43252003274489855999"), Ok(N_STATES - 1));
        for bad in [
            "",
            "-1",
            "1e6",
            "0x10",
            "12a",
            "43252003274489856000",
            "99999999999999999999999999999999999999999",
        ] {
            let e = parse_index(bad).expect_err(bad);
            assert!(e.to_string().contains("state index"), "{bad}: {e}");
        }
    }
}
