//! The 18 face turns of the half-turn metric and Singmaster notation.
//!
//! Parsing accepts what users write: `R U R' U2`, `R3`, `R2'`, `R'2`, commas, no spaces
//! (`RUR'U'`), wide turns (`Rw`, `r`), slice turns (`M E S`) and whole-cube rotations (`x y z`).
//! A turn's suffix is one of nothing, `2`, `'`, `3`, `2'`, `'2` (`’`, `′` and a backtick are
//! read as `'`); any other (`R4`, `R0`, `R1`, `R22`, `R''`, `R3'`) is refused naming the token
//! ([`Error::BadSuffix`]).
//! Wide, slice and rotation tokens are reduced to face turns with the centres held fixed: the
//! result is the same position relative to the centres. Printing always uses the standard form
//! `U`, `U2`, `U'`.

use std::fmt;

use crate::cubie::CubieCube;
use crate::error::Error;

/// A face of the cube, in URFDLB order (the order of the facelet string).
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Face {
    U,
    R,
    F,
    D,
    L,
    B,
}

impl Face {
    /// All six faces in URFDLB order.
    pub const ALL: [Face; 6] = [Face::U, Face::R, Face::F, Face::D, Face::L, Face::B];

    /// The face's letter.
    pub fn letter(self) -> char {
        b"URFDLB"[self as usize] as char
    }

    /// The face for a letter of `URFDLB`.
    #[inline]
    pub fn from_letter(c: char) -> Option<Face> {
        Some(match c {
            'U' => Face::U,
            'R' => Face::R,
            'F' => Face::F,
            'D' => Face::D,
            'L' => Face::L,
            'B' => Face::B,
            _ => return None,
        })
    }

    /// The opposite face.
    pub fn opposite(self) -> Face {
        Face::ALL[(self as usize + 3) % 6]
    }
}

/// One of the 18 face turns: `3 * face + (quarter turns - 1)`, so `U1=0, U2=1, U3=2, R1=3, ...`.
/// `X1` is clockwise as seen facing `X`, `X3` anticlockwise (`X'`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move(u8);

/// Number of face turns in the half-turn metric.
pub const N_MOVE: usize = 18;

impl Move {
    /// All 18 turns in index order.
    pub const ALL: [Move; N_MOVE] = {
        let mut a = [Move(0); N_MOVE];
        let mut i = 0;
        while i < N_MOVE {
            a[i] = Move(i as u8);
            i += 1;
        }
        a
    };

    /// The turn of `face` by `quarter_turns` (1, 2 or 3) clockwise quarter turns.
    pub fn new(face: Face, quarter_turns: u8) -> Move {
        debug_assert!((1..=3).contains(&quarter_turns));
        Move(face as u8 * 3 + quarter_turns - 1)
    }

    /// The turn with index `i < 18`.
    pub fn from_index(i: usize) -> Move {
        assert!(i < N_MOVE, "move index {i} out of range");
        Move(i as u8)
    }

    /// Index `0 <= i < 18`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The face turned.
    #[inline]
    pub fn face(self) -> Face {
        Face::ALL[(self.0 / 3) as usize]
    }

    /// Clockwise quarter turns, 1..=3.
    #[inline]
    pub fn quarter_turns(self) -> u8 {
        self.0 % 3 + 1
    }

    /// The turn that undoes this one.
    pub fn inverse(self) -> Move {
        Move::new(self.face(), 4 - self.quarter_turns())
    }

    /// Length of this turn in the quarter-turn metric (1, or 2 for a half turn).
    pub fn qtm_length(self) -> u32 {
        if self.quarter_turns() == 2 {
            2
        } else {
            1
        }
    }

    /// The turn as a permutation at the cubie level.
    pub fn cubie(self) -> &'static CubieCube {
        &MOVE_CUBES[self.index()]
    }
}

impl Move {
    /// The turn in standard notation: the face's letter, then "", "2" or "'".
    #[inline]
    pub fn notation(self) -> &'static str {
        NOTATION[self.0 as usize]
    }
}

/// [`Move::notation`] by turn index (face * 3 + quarter turns - 1).
const NOTATION: [&str; N_MOVE] = [
    "U", "U2", "U'", "R", "R2", "R'", "F", "F2", "F'", "D", "D2", "D'", "L", "L2", "L'", "B", "B2",
    "B'",
];

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.notation())
    }
}

/// The six clockwise quarter turns U R F D L B at the cubie level.
const BASIC: [CubieCube; 6] = [
    // U
    CubieCube {
        cp: [3, 0, 1, 2, 4, 5, 6, 7],
        co: [0; 8],
        ep: [3, 0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11],
        eo: [0; 12],
    },
    // R
    CubieCube {
        cp: [4, 1, 2, 0, 7, 5, 6, 3],
        co: [2, 0, 0, 1, 1, 0, 0, 2],
        ep: [8, 1, 2, 3, 11, 5, 6, 7, 4, 9, 10, 0],
        eo: [0; 12],
    },
    // F
    CubieCube {
        cp: [1, 5, 2, 3, 0, 4, 6, 7],
        co: [1, 2, 0, 0, 2, 1, 0, 0],
        ep: [0, 9, 2, 3, 4, 8, 6, 7, 1, 5, 10, 11],
        eo: [0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0],
    },
    // D
    CubieCube {
        cp: [0, 1, 2, 3, 5, 6, 7, 4],
        co: [0; 8],
        ep: [0, 1, 2, 3, 5, 6, 7, 4, 8, 9, 10, 11],
        eo: [0; 12],
    },
    // L
    CubieCube {
        cp: [0, 2, 6, 3, 4, 1, 5, 7],
        co: [0, 1, 2, 0, 0, 2, 1, 0],
        ep: [0, 1, 10, 3, 4, 5, 9, 7, 8, 2, 6, 11],
        eo: [0; 12],
    },
    // B
    CubieCube {
        cp: [0, 1, 3, 7, 4, 5, 2, 6],
        co: [0, 0, 1, 2, 0, 0, 2, 1],
        ep: [0, 1, 2, 11, 4, 5, 6, 10, 8, 9, 3, 7],
        eo: [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1],
    },
];

/// All 18 turns at the cubie level, computed once.
static MOVE_CUBES: std::sync::LazyLock<[CubieCube; N_MOVE]> = std::sync::LazyLock::new(|| {
    let mut all = [CubieCube::SOLVED; N_MOVE];
    for (f, basic) in BASIC.iter().enumerate() {
        let mut c = CubieCube::SOLVED;
        for q in 0..3 {
            c = c.multiply(basic);
            all[3 * f + q] = c;
        }
    }
    all
});

/// Turn sequences applied with the cube held in vector registers (x86-64, SSSE3).
#[cfg(target_arch = "x86_64")]
mod turns {
    use std::arch::x86_64::*;
    use std::sync::LazyLock;

    use super::{Move, MOVE_CUBES, N_MOVE};
    use crate::cubie::CubieCube;

    /// One turn's cube as four 16-byte rows (`cp`, `co`, `ep`, `eo`), the lanes past each
    /// array 0: the operands of [`apply`], loaded without a copy.
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct Rows([[u8; 16]; 4]);

    /// [`Rows`] of the 18 turns, in [`Move::index`] order.
    static ROWS: LazyLock<[Rows; N_MOVE]> = LazyLock::new(|| {
        std::array::from_fn(|m| {
            let c = &MOVE_CUBES[m];
            let mut r = [[0u8; 16]; 4];
            r[0][..8].copy_from_slice(&c.cp);
            r[1][..8].copy_from_slice(&c.co);
            r[2][..12].copy_from_slice(&c.ep);
            r[3][..12].copy_from_slice(&c.eo);
            Rows(r)
        })
    });

    /// `c` followed by `moves`: each turn `b` makes lane `i` of each row take lane `b.p[i]`
    /// (`pshufb`), corner orientations add modulo 3 (sums below 6: subtract 3 where above 2),
    /// edge orientations modulo 2 (xor), as [`CubieCube::multiply_rotations`] does; the cube
    /// is loaded once and stored once.
    ///
    /// # Safety
    /// The CPU must support SSSE3. `c` has no mirrored corner (its orientations below 3).
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn apply(c: &CubieCube, moves: &[Move]) -> CubieCube {
        let rows = &*ROWS;
        let mut buf = [[0u8; 16]; 4];
        buf[0][..8].copy_from_slice(&c.cp);
        buf[1][..8].copy_from_slice(&c.co);
        buf[2][..12].copy_from_slice(&c.ep);
        buf[3][..12].copy_from_slice(&c.eo);
        // SAFETY (whole block): SSSE3 is enabled for this function; every load and store is
        // of 16 bytes inside a `[u8; 16]` (`buf`'s rows, or a `Rows`'s, 16-byte aligned)
        unsafe {
            let row = |r: &[u8; 16]| _mm_loadu_si128(r.as_ptr().cast());
            let (mut cp, mut co) = (row(&buf[0]), row(&buf[1]));
            let (mut ep, mut eo) = (row(&buf[2]), row(&buf[3]));
            let (two, three) = (_mm_set1_epi8(2), _mm_set1_epi8(3));
            for m in moves {
                let b = &rows[m.index()].0;
                let (bcp, bep) = (
                    _mm_load_si128(b[0].as_ptr().cast()),
                    _mm_load_si128(b[2].as_ptr().cast()),
                );
                cp = _mm_shuffle_epi8(cp, bcp);
                let sum = _mm_add_epi8(
                    _mm_shuffle_epi8(co, bcp),
                    _mm_load_si128(b[1].as_ptr().cast()),
                );
                co = _mm_sub_epi8(sum, _mm_and_si128(_mm_cmpgt_epi8(sum, two), three));
                ep = _mm_shuffle_epi8(ep, bep);
                eo = _mm_xor_si128(
                    _mm_shuffle_epi8(eo, bep),
                    _mm_load_si128(b[3].as_ptr().cast()),
                );
            }
            for (r, v) in buf.iter_mut().zip([cp, co, ep, eo]) {
                _mm_storeu_si128(r.as_mut_ptr().cast(), v);
            }
        }
        CubieCube {
            cp: std::array::from_fn(|i| buf[0][i]),
            co: std::array::from_fn(|i| buf[1][i]),
            ep: std::array::from_fn(|i| buf[2][i]),
            eo: std::array::from_fn(|i| buf[3][i]),
        }
    }
}

impl CubieCube {
    /// Applies one turn to this cube.
    #[inline]
    pub fn apply_move(&self, m: Move) -> CubieCube {
        self.multiply(m.cubie())
    }

    /// Applies a sequence of turns to this cube.
    ///
    /// Whether the cube has a mirrored corner is checked once, not once a turn as
    /// [`CubieCube::multiply`] does: a turn has none, and the product of two cubes without
    /// one has none, so a cube without one keeps the shuffling product throughout.
    ///
    /// On x86-64 with SSSE3 the cube stays in four vector registers for the whole sequence
    /// ([`turns::apply`]): the same shuffles as [`CubieCube::multiply_rotations`], without a
    /// round trip through memory per turn.
    pub fn apply_moves(&self, moves: &[Move]) -> CubieCube {
        if !self.mirrored() {
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("ssse3") {
                // SAFETY: the CPU has SSSE3 (checked just above; the check is a cached load)
                return unsafe { turns::apply(self, moves) };
            }
            moves
                .iter()
                .fold(*self, |c, &m| c.multiply_rotations(m.cubie()))
        } else {
            moves.iter().fold(*self, |c, &m| c.apply_move(m))
        }
    }

    /// The position reached from the solved cube by `moves`.
    pub fn from_moves(moves: &[Move]) -> CubieCube {
        CubieCube::SOLVED.apply_moves(moves)
    }
}

/// A sequence of face turns (a scramble or a solution).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MoveSeq(pub Vec<Move>);

impl MoveSeq {
    /// Number of turns (the half-turn metric length).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for the empty sequence.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Length in the quarter-turn metric.
    pub fn qtm_len(&self) -> u32 {
        self.0.iter().map(|m| m.qtm_length()).sum()
    }

    /// The sequence that undoes this one.
    pub fn inverse(&self) -> MoveSeq {
        MoveSeq(self.0.iter().rev().map(|m| m.inverse()).collect())
    }

    /// Parses Singmaster notation; see the module documentation for what is accepted.
    pub fn parse(text: &str) -> Result<MoveSeq, Error> {
        parse_moves(text)
    }

    /// The turns as their indices ([`Move::index`]), one byte each: the compact form the
    /// protocol carries (`Completion.moves`).
    pub fn indices(&self) -> Vec<u8> {
        self.0.iter().map(|m| m.0).collect()
    }

    /// The sequence of the turn indices `indices` ([`MoveSeq::indices`]), None when one is not
    /// below 18. Turns are taken as they are: two of one face in a row stay two.
    pub fn from_indices(indices: &[u8]) -> Option<MoveSeq> {
        if indices.iter().any(|&i| usize::from(i) >= N_MOVE) {
            return None;
        }
        // one allocation of the final size (collecting through `Option` grew it step by step)
        Some(MoveSeq(indices.iter().map(|&i| Move(i)).collect()))
    }
}

impl MoveSeq {
    /// The sequence in standard notation, one space between turns (what `Display` writes):
    /// built directly, without `core::fmt`, which costs as much as replaying the turns on a
    /// cube (the coordinator writes one for every verified result).
    /// Each turn is written as its face's letter and at most one suffix byte, pushed one by
    /// one (a `push_str` a turn was a `memcpy` call each).
    pub fn text(&self) -> String {
        let mut text = Vec::with_capacity(3 * self.0.len());
        for (i, m) in self.0.iter().enumerate() {
            if i > 0 {
                text.push(b' ');
            }
            text.push(m.face().letter() as u8);
            match m.quarter_turns() {
                2 => text.push(b'2'),
                3 => text.push(b'\''),
                _ => {}
            }
        }
        String::from_utf8(text).expect("turn notation is ASCII")
    }
}

impl fmt::Display for MoveSeq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl std::str::FromStr for MoveSeq {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_moves(s)
    }
}

/// What a token turns, before its amount is applied.
#[derive(Clone, Copy)]
enum Token {
    /// A face turn.
    Face(Face),
    /// A wide turn: the face and the slice next to it.
    Wide(Face),
    /// A middle slice: `M` (follows L), `E` (follows D), `S` (follows F).
    Slice(char),
    /// A whole-cube rotation: `x` (follows R), `y` (follows U), `z` (follows F).
    Rotation(char),
}

/// Which physical face (in the fixed-centre frame) is currently at each position.
type Frame = [Face; 6];

/// Rotates the frame by one clockwise quarter turn of `axis` (`x`, `y` or `z`).
fn rotate_frame(frame: &mut Frame, axis: char) {
    use Face::*;
    // cycle (a <- b <- c <- d <- a): position a now holds what position b held
    let cycle = match axis {
        'x' => [U, F, D, B],
        'y' => [F, R, B, L],
        _ => [U, L, D, R],
    };
    let held = frame[cycle[0] as usize];
    for i in 0..3 {
        frame[cycle[i] as usize] = frame[cycle[i + 1] as usize];
    }
    frame[cycle[3] as usize] = held;
}

/// Appends (merged, see [`push_merged`]) the fixed-centre face turns for one quarter turn of
/// `token` to `out` and updates the frame.
fn expand_quarter(token: Token, frame: &mut Frame, out: &mut Vec<Move>) {
    use Face::*;
    let turn = |frame: &Frame, face: Face, q: u8, out: &mut Vec<Move>| {
        push_merged(out, Move::new(frame[face as usize], q));
    };
    match token {
        Token::Face(f) => turn(frame, f, 1, out),
        Token::Rotation(a) => rotate_frame(frame, a),
        // r = L x, u = D y, f = B z, l = R x', d = U y', b = F z'
        Token::Wide(f) => {
            turn(frame, f.opposite(), 1, out);
            let (axis, times) = match f {
                R => ('x', 1),
                L => ('x', 3),
                U => ('y', 1),
                D => ('y', 3),
                F => ('z', 1),
                B => ('z', 3),
            };
            for _ in 0..times {
                rotate_frame(frame, axis);
            }
        }
        // M = R L' x', E = U D' y', S = F' B z
        Token::Slice(s) => {
            let (a, qa, b, qb, axis, times) = match s {
                'M' => (R, 1, L, 3, 'x', 3),
                'E' => (U, 1, D, 3, 'y', 3),
                _ => (F, 3, B, 1, 'z', 1),
            };
            turn(frame, a, qa, out);
            turn(frame, b, qb, out);
            for _ in 0..times {
                rotate_frame(frame, axis);
            }
        }
    }
}

/// Merges consecutive turns of the same face (`R R` -> `R2`, `R R'` -> nothing).
#[inline]
fn push_merged(out: &mut Vec<Move>, m: Move) {
    match out.last_mut() {
        Some(last) if last.face() == m.face() => {
            let q = (last.quarter_turns() + m.quarter_turns()) % 4;
            if q == 0 {
                out.pop();
            } else {
                *last = Move::new(m.face(), q);
            }
        }
        _ => out.push(m),
    }
}

fn parse_moves(text: &str) -> Result<MoveSeq, Error> {
    match parse_plain(text) {
        Some(seq) => Ok(seq),
        None => parse_general(text),
    }
}

/// The common case, face turns in standard notation separated by whitespace (`R U2 F'`, as
/// scrambles and solutions are written), read token by token without the general parser's
/// frame tracking; the same sequence [`parse_general`] gives (consecutive turns of one face
/// merged). None for anything else, which the general parser then reads.
fn parse_plain(text: &str) -> Option<MoveSeq> {
    let bytes = text.as_bytes();
    // a turn takes at least two bytes with its separator
    let mut out: Vec<Move> = Vec::with_capacity(bytes.len() / 2 + 1);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        // a token: a face letter, then nothing, `'`, `2` or `2'`, then whitespace or the end
        let face = Face::from_letter(b as char)?;
        let (quarters, len) = match (bytes.get(i + 1), bytes.get(i + 2)) {
            (Some(b'\''), _) => (3, 2),
            (Some(b'2'), Some(b'\'')) => (2, 3),
            (Some(b'2'), _) => (2, 2),
            _ => (1, 1),
        };
        i += len;
        if bytes.get(i).is_some_and(|b| !b.is_ascii_whitespace()) {
            return None;
        }
        push_merged(&mut out, Move::new(face, quarters));
    }
    Some(MoveSeq(out))
}

/// True for the characters read as a prime (`'`): the apostrophe, the typographic `’` and `′`,
/// and a backtick.
fn is_prime(c: char) -> bool {
    matches!(c, '\'' | '’' | '`' | '′')
}

/// Every notation [`MoveSeq::parse`] accepts, character by character.
fn parse_general(text: &str) -> Result<MoveSeq, Error> {
    let chars: Vec<char> = text.chars().collect();
    let mut frame: Frame = Face::ALL;
    // a face turn takes at least two characters with its separator
    let mut out = Vec::with_capacity(chars.len() / 2 + 1);
    let mut i = 0;
    let mut ordinal = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == ',' || c == ';' || c == '(' || c == ')' {
            i += 1;
            continue;
        }
        ordinal += 1;
        let start = i;
        i += 1;
        let token = match c {
            'U' | 'R' | 'F' | 'D' | 'L' | 'B' => {
                let face = Face::from_letter(c).expect("checked face letter");
                if i < chars.len() && chars[i] == 'w' {
                    i += 1;
                    Token::Wide(face)
                } else {
                    Token::Face(face)
                }
            }
            'u' | 'r' | 'f' | 'd' | 'l' | 'b' => {
                let face = Face::from_letter(c.to_ascii_uppercase()).expect("checked face letter");
                Token::Wide(face)
            }
            'M' | 'E' | 'S' => Token::Slice(c),
            'x' | 'y' | 'z' => Token::Rotation(c),
            _ => {
                while i < chars.len() && !chars[i].is_whitespace() && chars[i] != ',' {
                    i += 1;
                }
                return Err(Error::UnknownMove {
                    token: chars[start..i].iter().collect(),
                    position: ordinal,
                });
            }
        };
        // the suffix: the digits and primes that follow, one of the six forms that are turns
        let suffix_start = i;
        while i < chars.len() && (chars[i].is_ascii_digit() || is_prime(chars[i])) {
            i += 1;
        }
        let suffix = &chars[suffix_start..i];
        let read = |k: usize| suffix.get(k).map(|&c| if is_prime(c) { '\'' } else { c });
        let quarters = match (suffix.len(), read(0), read(1)) {
            (0, _, _) => 1,
            (1, Some('2'), _) | (2, Some('2'), Some('\'')) | (2, Some('\''), Some('2')) => 2,
            (1, Some('\'' | '3'), _) => 3,
            _ => {
                return Err(Error::BadSuffix {
                    token: chars[start..i].iter().collect(),
                    position: ordinal,
                })
            }
        };
        for _ in 0..quarters {
            expand_quarter(token, &mut frame, &mut out);
        }
    }
    Ok(MoveSeq(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(s: &str) -> CubieCube {
        CubieCube::from_moves(&MoveSeq::parse(s).expect("parses").0)
    }

    /// A sequence applied at once ([`CubieCube::apply_moves`]) gives the cube that one
    /// turn at a time does, from random cubes, for sequences of every length up to 40.
    #[test]
    fn a_sequence_is_its_turns_one_at_a_time() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(39);
        for n in 0..=40 {
            for _ in 0..50 {
                let c = CubieCube::random(&mut rng);
                let moves: Vec<Move> = (0..n)
                    .map(|_| Move::from_index(rng.random_range(0..N_MOVE)))
                    .collect();
                let one_by_one = moves.iter().fold(c, |c, &m| c.apply_move(m));
                assert_eq!(c.apply_moves(&moves), one_by_one, "{moves:?}");
            }
        }
    }

    #[test]
    fn every_turn_has_order_four() {
        for f in Face::ALL {
            let m = Move::new(f, 1);
            let c = CubieCube::from_moves(&[m, m, m, m]);
            assert!(c.is_solved());
            assert_eq!(CubieCube::from_moves(&[m, m]), *Move::new(f, 2).cubie());
        }
    }

    /// The notation of every turn is its face's letter and suffix, and a sequence's text is
    /// those joined by single spaces.
    #[test]
    fn the_text_is_the_turns_notation_joined() {
        use rand::{Rng, SeedableRng};
        for m in Move::ALL {
            let suffix = ["", "2", "'"][m.quarter_turns() as usize - 1];
            assert_eq!(m.notation(), format!("{}{suffix}", m.face().letter()));
        }
        assert_eq!(MoveSeq(Vec::new()).text(), "");
        let mut rng = rand::rngs::StdRng::seed_from_u64(26);
        for _ in 0..200 {
            let n = rng.random_range(1..30);
            let seq = MoveSeq(
                (0..n)
                    .map(|_| Move::from_index(rng.random_range(0..18)))
                    .collect(),
            );
            let joined: Vec<&str> = seq.0.iter().map(|m| m.notation()).collect();
            assert_eq!(seq.text(), joined.join(" "));
            assert_eq!(seq.to_string(), seq.text());
        }
    }

    #[test]
    fn random_plain_texts_read_as_the_general_parser_reads_them() {
        use rand::{Rng, SeedableRng};
        // tokens of the plain notation, repeats of one face among them (merged or cancelled)
        let tokens = ["U", "R'", "F2", "D2'", "L", "B'", "U'", "R2", " ", "\t"];
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..2000 {
            let n = rng.random_range(0..12);
            let text = (0..n)
                .map(|_| tokens[rng.random_range(0..tokens.len())])
                .collect::<Vec<_>>()
                .join(" ");
            let plain = parse_plain(&text).expect("plain notation");
            assert_eq!(Ok(plain.clone()), parse_general(&text), "{text:?}");
            // the replay that checks for mirrored corners once is the one turn by turn
            let turn_by_turn = plain
                .0
                .iter()
                .fold(CubieCube::SOLVED, |c, &m| c.apply_move(m));
            assert_eq!(
                CubieCube::SOLVED.apply_moves(&plain.0),
                turn_by_turn,
                "{text:?}"
            );
        }
    }

    #[test]
    fn plain_notation_reads_as_the_general_parser_reads_it() {
        for text in [
            "R U2 F'",
            "  R   U2\tF'  ",
            "R R",
            "R R'",
            "R2 R2 U",
            "U R2' D' D' B",
            "",
            "L F' B2 U2 D R' L2 F B' U D2 R",
        ] {
            let plain = parse_plain(text).expect("plain notation");
            assert_eq!(Ok(plain), parse_general(text), "{text:?}");
        }
        // anything else is left to the general parser
        for text in ["R,U", "RU", "R3", "x R", "Rw", "r", "R'2", "M", "R\u{2019}"] {
            assert!(parse_plain(text).is_none(), "{text:?}");
            assert!(MoveSeq::parse(text).is_ok(), "{text:?}");
        }
        for text in ["R2''", "R Q", "U 2"] {
            assert!(parse_plain(text).is_none(), "{text:?}");
            assert!(MoveSeq::parse(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn suffix_variants() {
        assert_eq!(pos("R'"), pos("R3"));
        assert_eq!(pos("R2'"), pos("R2"));
        assert_eq!(pos("R'2"), pos("R2"));
        assert_eq!(pos("R,U , R'"), pos("R U R'"));
        assert_eq!(pos("RUR'U'"), pos("R U R' U'"));
        assert_eq!(
            MoveSeq::parse("R U2 F'").expect("ok").to_string(),
            "R U2 F'"
        );
    }

    #[test]
    fn wide_slice_and_rotations_fix_centres() {
        assert!(pos("x y z x' y2").is_solved());
        assert_eq!(pos("r"), pos("L"));
        assert_eq!(pos("Rw"), pos("L"));
        assert_eq!(pos("M"), pos("R L'"));
        assert_eq!(pos("E"), pos("U D'"));
        assert_eq!(pos("S"), pos("F' B"));
        // after x, the face in front is the old D
        assert_eq!(pos("x F"), pos("D"));
        assert_eq!(pos("y F"), pos("R"));
        assert_eq!(pos("z U"), pos("L"));
        assert_eq!(pos("M2 E2 S2"), pos("R2 L2 U2 D2 F2 B2"));
        assert_eq!(pos("r U r'"), pos("L F L'"));
    }

    #[test]
    fn only_the_listed_suffixes_are_turns() {
        for (text, same) in [
            ("R2", "R R"),
            ("R'", "R R R"),
            ("R3", "R'"),
            ("R2'", "R2"),
            ("R'2", "R2"),
            ("R\u{2019}", "R'"),
            ("x2 M' Rw2", "x x M M M Rw Rw"),
        ] {
            assert_eq!(pos(text), pos(same), "{text}");
        }
        for (text, token, position) in [
            ("R4", "R4", 1),
            ("U R0", "R0", 2),
            ("R1000", "R1000", 1),
            ("R5 U", "R5", 1),
            ("R1", "R1", 1),
            ("F R22", "R22", 2),
            ("R''", "R''", 1),
            ("R3'", "R3'", 1),
            ("x4", "x4", 1),
            ("RUR4", "R4", 3),
        ] {
            let e = MoveSeq::parse(text).unwrap_err();
            assert_eq!(
                e,
                Error::BadSuffix {
                    token: token.into(),
                    position
                },
                "{text}"
            );
            assert!(e.to_string().contains(&format!("`{token}`")), "{e}");
        }
    }

    #[test]
    fn unknown_token_names_place() {
        let e = MoveSeq::parse("R U Q2 F").unwrap_err();
        assert_eq!(
            e,
            Error::UnknownMove {
                token: "Q2".into(),
                position: 3
            }
        );
        assert!(e.to_string().contains("Q2"));
    }
}
