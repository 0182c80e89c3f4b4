//! The state index: a numbering of the 43,252,003,274,489,856,000 solvable states, so that a
//! state can be named by a number and a range of numbers handed out as work.
//!
//! The index is a mixed-radix number whose digits, most significant first, are
//! - the corner permutation's rank `cp < 8! = 40320` (lexicographic order of `cp`, the identity
//!   0; outermost, so its parity, which the edge permutation must share, changes least often),
//! - half the edge permutation's rank `ep < 12!/2 = 239,500,800`: in lexicographic order the
//!   permutations of ranks `2k` and `2k + 1` differ by a swap of the last two edges, so exactly
//!   one of them has the parity of the corner permutation, which a solvable state needs; `k`
//!   names that one,
//! - the twist digit `co < 3^7 = 2187`: the corner twist ([`CubieCube::twist`], the first 7
//!   corners' twists in base 3, the eighth following) is the modular ternary Gray code of `co`
//!   ([`gray3`]),
//! - the flip digit `eo < 2^11 = 2048`: the edge flip ([`CubieCube::flip`], the first 11 edges'
//!   flips in base 2, the twelfth following) is the binary reflected Gray code of `eo`.
//!
//! `index = ((cp * 239500800 + ep) * 2187 + co) * 2048 + eo`. Index 0 is the solved cube;
//! [`N_STATES`] - 1 the last state. Like a walk over every state in nested loops (permutations
//! outermost, orientations innermost in Gray-code order), the order keeps consecutive states
//! close: the next index changes one edge's flip (with the twelfth edge's), and every 2048
//! states also one corner's twist (with the eighth corner's); the permutations change only
//! every 4,478,976 states ([`PERM_BLOCK`]). [`Walk`] visits a range in that order, decoding the
//! permutations once per block. The order is fixed: stored ranges and results depend on it.

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
/// Consecutive indices with the same permutations: `3^7 * 2^11`.
pub const PERM_BLOCK: u128 = N_TWIST * N_FLIP;

/// The binary reflected Gray code of `k < 2048`: `gray2(k)` and `gray2(k + 1)` differ in one bit.
fn gray2(k: u16) -> u16 {
    k ^ (k >> 1)
}

/// The `k` with `gray2(k) = g`.
fn gray2_inverse(g: u16) -> u16 {
    let (mut k, mut shift) = (g, g >> 1);
    while shift != 0 {
        k ^= shift;
        shift >>= 1;
    }
    k
}

/// The modular ternary Gray code of `k < 3^7`: digit `i` of the result (base 3, least
/// significant first) is `k_i - k_(i+1)` mod 3 (`k_7 = 0`), so `gray3(k)` and `gray3(k + 1)`
/// differ in one digit, by one, and so do `gray3(3^7 - 1)` and `gray3(0)`.
pub fn gray3(k: u16) -> u16 {
    let mut digits = [0u16; 8];
    let mut rest = k;
    for d in &mut digits[..7] {
        *d = rest % 3;
        rest /= 3;
    }
    (0..7)
        .rev()
        .fold(0, |g, i| g * 3 + (digits[i] + 3 - digits[i + 1]) % 3)
}

/// The `k` with `gray3(k) = g`.
fn gray3_inverse(g: u16) -> u16 {
    let mut gd = [0u16; 7];
    let mut rest = g;
    for d in &mut gd {
        *d = rest % 3;
        rest /= 3;
    }
    // k_6 = g_6, k_i = g_i + k_(i+1) mod 3
    let mut above = 0;
    let mut k = 0;
    for i in (0..7).rev() {
        let d = (gd[i] + above) % 3;
        k = k * 3 + d;
        above = d;
    }
    k
}

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
    let co = gray3_inverse(c.twist() as u16) as u128;
    let eo = gray2_inverse(c.flip() as u16) as u128;
    ((cp * N_EDGE_PERM_HALF + ep) * N_TWIST + co) * N_FLIP + eo
}

/// The state with index `index`, refused when `index >= N_STATES`.
pub fn state_at(index: u128) -> Result<CubieCube, Error> {
    if index >= N_STATES {
        return Err(Error::BadStateIndex(
            index.to_string(),
            "there are 43252003274489856000 states, numbered from 0",
        ));
    }
    let mut c = CubieCube::SOLVED;
    set_permutations(&mut c, index / PERM_BLOCK);
    set_orientations(&mut c, index % PERM_BLOCK);
    Ok(c)
}

/// Sets the permutations of `c` to those of block `block < N_STATES / PERM_BLOCK`.
fn set_permutations(c: &mut CubieCube, block: u128) {
    let (cp, ep) = (block / N_EDGE_PERM_HALF, block % N_EDGE_PERM_HALF);
    perm_unrank(cp as u64, &mut c.cp[..N_CORNERS]);
    perm_unrank(2 * ep as u64, &mut c.ep[..N_EDGES]);
    if permutation_parity(&c.ep) != permutation_parity(&c.cp) {
        c.ep.swap(N_EDGES - 2, N_EDGES - 1);
    }
}

/// Sets the twist and flip of `c` to those of offset `within < PERM_BLOCK` of a block.
fn set_orientations(c: &mut CubieCube, within: u128) {
    c.set_twist(gray3((within / N_FLIP) as u16) as usize);
    c.set_flip(gray2((within % N_FLIP) as u16) as usize);
}

/// The states of an index range in index order, each next one made from the one before: the
/// flip (and at each 2048th step the twist) set from its Gray code, the permutations decoded
/// once per [`PERM_BLOCK`] states.
#[derive(Clone, Debug)]
pub struct Walk {
    /// The next index to visit.
    next: u128,
    /// The end of the range (exclusive).
    end: u128,
    /// The state of the last index visited, whose block is `block`.
    cube: CubieCube,
    /// The permutation block of `cube` (`None` before the first state).
    block: Option<u128>,
}

impl Walk {
    /// The states with indices `start..end` (`end` at most [`N_STATES`]); refused when the
    /// range is not inside the state space.
    pub fn new(start: u128, end: u128) -> Result<Walk, Error> {
        if end > N_STATES || start > end {
            return Err(Error::BadStateIndex(
                format!("{start}..{end}"),
                "a range of states is START..END with START <= END <= 43252003274489856000",
            ));
        }
        Ok(Walk {
            next: start,
            end,
            cube: CubieCube::SOLVED,
            block: None,
        })
    }
}

impl Iterator for Walk {
    type Item = (u128, CubieCube);

    fn next(&mut self) -> Option<(u128, CubieCube)> {
        if self.next >= self.end {
            return None;
        }
        let index = self.next;
        self.next += 1;
        let (block, within) = (index / PERM_BLOCK, index % PERM_BLOCK);
        if self.block != Some(block) {
            set_permutations(&mut self.cube, block);
            set_orientations(&mut self.cube, within);
            self.block = Some(block);
        } else if within % N_FLIP == 0 {
            set_orientations(&mut self.cube, within);
        } else {
            self.cube.set_flip(gray2((within % N_FLIP) as u16) as usize);
        }
        Some((index, self.cube))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.end - self.next).ok();
        (n.unwrap_or(usize::MAX), n)
    }
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
    fn the_gray_codes_are_bijections_with_one_small_step_each() {
        for k in 0..2048u16 {
            assert_eq!(gray2_inverse(gray2(k)), k);
            let step = gray2(k) ^ gray2((k + 1) % 2048);
            assert_eq!(step.count_ones(), 1, "{k}");
        }
        let digits = |g: u16| -> Vec<u16> { (0..7).map(|i| g / 3u16.pow(i) % 3).collect() };
        let mut seen = vec![false; 2187];
        for k in 0..2187u16 {
            let g = gray3(k);
            assert!(!std::mem::replace(&mut seen[g as usize], true), "{k}");
            assert_eq!(gray3_inverse(g), k);
            let (a, b) = (digits(g), digits(gray3((k + 1) % 2187)));
            let changed: Vec<usize> = (0..7).filter(|&i| a[i] != b[i]).collect();
            assert_eq!(changed.len(), 1, "{k}");
            assert_eq!((a[changed[0]] + 1) % 3, b[changed[0]], "{k}");
        }
    }

    /// A walk visits exactly the states `state_at` gives, in index order, across a block
    /// boundary; consecutive states within a block differ in the orientation of at most two
    /// edges and two corners, and nothing else.
    #[test]
    fn a_walk_visits_the_range_in_index_order_by_small_steps() {
        let start = 3 * PERM_BLOCK - 5000;
        let mut last: Option<CubieCube> = None;
        let mut n = 0;
        for (i, c) in Walk::new(start, start + 10_000).expect("a range") {
            assert_eq!(i, start + n);
            assert_eq!(c, state_at(i).expect("in range"), "{i}");
            if let Some(p) = last.filter(|_| i % PERM_BLOCK != 0) {
                assert_eq!((p.cp, p.ep), (c.cp, c.ep), "{i}");
                let edges = (0..12).filter(|&e| p.eo[e] != c.eo[e]).count();
                let corners = (0..8).filter(|&k| p.co[k] != c.co[k]).count();
                assert!(edges <= 2 && corners <= 2 && edges + corners > 0, "{i}");
            }
            last = Some(c);
            n += 1;
        }
        assert_eq!(n, 10_000);
        assert_eq!(
            Walk::new(N_STATES - 2, N_STATES).expect("a range").count(),
            2
        );
        assert!(Walk::new(0, N_STATES + 1).is_err());
        assert!(Walk::new(5, 4).is_err());
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
