//! The facelet level: the 54 stickers, and reading a position as users write it.
//!
//! Sticker order is Kociemba's: `U1..U9, R1..R9, F1..F9, D1..D9, L1..L9, B1..B9`, each face read
//! row by row as seen from outside, U on top of F (U seen with B at the top, D with F at the top).
//! Colours are mapped to faces through the centres, so a string in colour letters (`WGRYBO...`)
//! or a cube held another way up is read as it is: the face whose centre is at sticker 5 is U.
//!
//! Facelets or moves ([`parse_position`] with [`InputFormat::Auto`], [`looks_like_facelets`]): a
//! line of letters and spaces only with a word of 9 or more letters is a facelet string and
//! must have exactly 54 stickers ("facelet string has 53 stickers, needs 54"); any other line
//! is a move sequence. A line longer than [`crate::MAX_LINE_BYTES`] is refused unread.

use crate::cubie::{permutation_parity, CubieCube};
use crate::error::Error;
use crate::moves::{Face, MoveSeq};

/// Number of stickers.
pub const N_FACELETS: usize = 54;

/// Sticker indices of each corner position, starting with its U or D sticker, then clockwise.
pub const CORNER_FACELET: [[usize; 3]; 8] = [
    [8, 9, 20],   // URF: U9 R1 F3
    [6, 18, 38],  // UFL: U7 F1 L3
    [0, 36, 47],  // ULB: U1 L1 B3
    [2, 45, 11],  // UBR: U3 B1 R3
    [29, 26, 15], // DFR: D3 F9 R7
    [27, 44, 24], // DLF: D1 L9 F7
    [33, 53, 42], // DBL: D7 B9 L7
    [35, 17, 51], // DRB: D9 R9 B7
];

/// Sticker indices of each edge position, U/D (or F/B for slice edges) sticker first.
pub const EDGE_FACELET: [[usize; 2]; 12] = [
    [5, 10],  // UR
    [7, 19],  // UF
    [3, 37],  // UL
    [1, 46],  // UB
    [32, 16], // DR
    [28, 25], // DF
    [30, 43], // DL
    [34, 52], // DB
    [23, 12], // FR
    [21, 41], // FL
    [50, 39], // BL
    [48, 14], // BR
];

use Face::{B, D, F, L, R, U};

/// The colours (as faces) of each corner piece, in the order of [`CORNER_FACELET`].
pub const CORNER_COLOR: [[Face; 3]; 8] = [
    [U, R, F],
    [U, F, L],
    [U, L, B],
    [U, B, R],
    [D, F, R],
    [D, L, F],
    [D, B, L],
    [D, R, B],
];

/// The colours (as faces) of each edge piece, in the order of [`EDGE_FACELET`].
pub const EDGE_COLOR: [[Face; 2]; 12] = [
    [U, R],
    [U, F],
    [U, L],
    [U, B],
    [D, R],
    [D, F],
    [D, L],
    [D, B],
    [F, R],
    [F, L],
    [B, L],
    [B, R],
];

/// Names of the corner positions, for messages.
pub const CORNER_NAMES: [&str; 8] = ["URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB"];
/// Names of the edge positions, for messages.
pub const EDGE_NAMES: [&str; 12] = [
    "UR", "UF", "UL", "UB", "DR", "DF", "DL", "DB", "FR", "FL", "BL", "BR",
];

/// Sticker index of each face's centre.
const CENTRES: [usize; 6] = [4, 13, 22, 31, 40, 49];

/// A cube as 54 stickers, each named by the face its colour belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaceletCube(pub [Face; N_FACELETS]);

impl FaceletCube {
    /// Reads 54 colour letters (whitespace ignored), mapping colours to faces through the
    /// centres. Checks length, centres and sticker counts; piece-level checks happen in
    /// [`FaceletCube::to_cubie`].
    pub fn parse(text: &str) -> Result<FaceletCube, Error> {
        let letters: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        if letters.len() != N_FACELETS {
            return Err(Error::WrongLength(letters.len()));
        }
        let centres: Vec<char> = CENTRES.iter().map(|&i| letters[i]).collect();
        for i in 0..6 {
            if centres[..i].contains(&centres[i]) {
                return Err(Error::CentresNotDistinct(centres.iter().collect()));
            }
        }
        let mut f = [U; N_FACELETS];
        let mut counts = [0usize; 6];
        for (i, &c) in letters.iter().enumerate() {
            let face = centres
                .iter()
                .position(|&k| k == c)
                .ok_or(Error::UnknownColour {
                    letter: c,
                    position: i + 1,
                })?;
            counts[face] += 1;
            f[i] = Face::ALL[face];
        }
        for (face, &count) in counts.iter().enumerate() {
            if count != 9 {
                return Err(Error::WrongStickerCount {
                    letter: centres[face],
                    count,
                });
            }
        }
        Ok(FaceletCube(f))
    }

    /// Reads the colour net of ZOJ 2477: 3 lines of 3 stickers (U), 3 lines of 12 (L F R B side
    /// by side), 3 lines of 3 (D). Stickers may be separated by spaces; blank lines are skipped.
    pub fn parse_net(text: &str) -> Result<FaceletCube, Error> {
        let rows: Vec<Vec<char>> = text
            .lines()
            .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect::<Vec<_>>())
            .filter(|r| !r.is_empty())
            .collect();
        if rows.len() != 9 {
            return Err(Error::BadNet(format!(
                "found {} non-empty lines",
                rows.len()
            )));
        }
        for (i, r) in rows.iter().enumerate() {
            let want = if (3..6).contains(&i) { 12 } else { 3 };
            if r.len() != want {
                return Err(Error::BadNet(format!(
                    "line {} has {} stickers, expected {want}",
                    i + 1,
                    r.len()
                )));
            }
        }
        let mut s = vec![' '; N_FACELETS];
        // face base index in the facelet string, and its column block in the middle rows
        let sides = [(36usize, 0usize), (18, 1), (9, 2), (45, 3)]; // L F R B
        for r in 0..3 {
            for c in 0..3 {
                s[r * 3 + c] = rows[r][c];
                s[27 + r * 3 + c] = rows[6 + r][c];
                for &(base, block) in &sides {
                    s[base + r * 3 + c] = rows[3 + r][block * 3 + c];
                }
            }
        }
        FaceletCube::parse(&s.into_iter().collect::<String>())
    }

    /// The cube at the cubie level, with every check a real cube must pass.
    pub fn to_cubie(&self) -> Result<CubieCube, Error> {
        let f = &self.0;
        let names = |fs: &[Face]| fs.iter().map(|x| x.letter()).collect::<String>();
        let mut c = CubieCube::SOLVED;
        for (i, fac) in CORNER_FACELET.iter().enumerate() {
            let stickers = [f[fac[0]], f[fac[1]], f[fac[2]]];
            let bad = || Error::NoSuchCorner {
                position: CORNER_NAMES[i].into(),
                colours: names(&stickers),
            };
            let ori = (0..3)
                .find(|&o| stickers[o] == U || stickers[o] == D)
                .ok_or_else(bad)?;
            let c1 = stickers[(ori + 1) % 3];
            let c2 = stickers[(ori + 2) % 3];
            let j = (0..8)
                .find(|&j| {
                    CORNER_COLOR[j][0] == stickers[ori]
                        && CORNER_COLOR[j][1] == c1
                        && CORNER_COLOR[j][2] == c2
                })
                .ok_or_else(bad)?;
            c.cp[i] = j as u8;
            c.co[i] = ori as u8;
        }
        for (i, fac) in EDGE_FACELET.iter().enumerate() {
            let (a, b) = (f[fac[0]], f[fac[1]]);
            let found = (0..12).find_map(|j| {
                if EDGE_COLOR[j] == [a, b] {
                    Some((j, 0))
                } else if EDGE_COLOR[j] == [b, a] {
                    Some((j, 1))
                } else {
                    None
                }
            });
            let (j, o) = found.ok_or_else(|| Error::NoSuchEdge {
                position: EDGE_NAMES[i].into(),
                colours: names(&[a, b]),
            })?;
            c.ep[i] = j as u8;
            c.eo[i] = o;
        }
        validate(&c)?;
        Ok(c)
    }

    /// The stickers of a cubie-level cube.
    pub fn from_cubie(c: &CubieCube) -> FaceletCube {
        let mut f = [U; N_FACELETS];
        for (i, &face) in Face::ALL.iter().enumerate() {
            for k in 0..9 {
                f[9 * i + k] = face;
            }
        }
        for i in 0..8 {
            let j = c.cp[i] as usize;
            let ori = c.co[i] as usize % 3;
            for k in 0..3 {
                f[CORNER_FACELET[i][(k + ori) % 3]] = CORNER_COLOR[j][k];
            }
        }
        for i in 0..12 {
            let j = c.ep[i] as usize;
            let ori = c.eo[i] as usize;
            for k in 0..2 {
                f[EDGE_FACELET[i][(k + ori) % 2]] = EDGE_COLOR[j][k];
            }
        }
        FaceletCube(f)
    }
}

impl std::fmt::Display for FaceletCube {
    /// The 54 face letters, written as one string from a byte buffer (a lease sends every
    /// job's position this way: collecting 54 `char`s into a `String` cost about as much as
    /// computing the stickers).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes: [u8; N_FACELETS] = std::array::from_fn(|i| b"URFDLB"[self.0[i] as usize]);
        // every byte is one of six ASCII letters
        f.write_str(std::str::from_utf8(&bytes).map_err(|_| std::fmt::Error)?)
    }
}

/// Checks that a cubie-level cube is one a real cube can reach: each piece once, twists summing
/// to 0 mod 3, an even number of flips, and equal corner and edge parity.
pub fn validate(c: &CubieCube) -> Result<(), Error> {
    let mut seen = [false; 12];
    for &p in &c.cp {
        if std::mem::replace(&mut seen[p as usize], true) {
            return Err(Error::DuplicateCorner(CORNER_NAMES[p as usize].into()));
        }
    }
    let mut seen = [false; 12];
    for &p in &c.ep {
        if std::mem::replace(&mut seen[p as usize], true) {
            return Err(Error::DuplicateEdge(EDGE_NAMES[p as usize].into()));
        }
    }
    let twist = c.co.iter().map(|&o| o as u32).sum::<u32>() % 3;
    if twist != 0 {
        return Err(Error::TwistedCorner(twist as u8));
    }
    if c.eo.iter().map(|&o| o as u32).sum::<u32>() % 2 != 0 {
        return Err(Error::FlippedEdge);
    }
    if permutation_parity(&c.cp) != permutation_parity(&c.ep) {
        return Err(Error::ParityMismatch);
    }
    Ok(())
}

/// How a position is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InputFormat {
    /// A facelet string when [`looks_like_facelets`] says so, else a move sequence.
    #[default]
    Auto,
    /// A move sequence applied to the solved cube.
    Moves,
    /// A 54-sticker facelet string.
    Facelets,
    /// The 9-line colour net.
    Net,
}

/// The fewest letters in one word that make a line of letters a facelet string: a face's
/// stickers. Moves are written with spaces, suffixes (`2`, `'`) or commas between them.
pub const FACELET_WORD: usize = 9;

/// The rule that decides facelets vs moves ([`InputFormat::Auto`]): `text` is read as a facelet
/// string when it holds only letters and whitespace and one of its words has at least
/// [`FACELET_WORD`] (9) letters; everything else is a move sequence.
///
/// So `UUUUUUUUURRRRRRRRR...` (one word) and `UUUUUUUUU RRRRRRRRR ...` (words of 9) are facelet
/// strings, and one with 53 or 55 stickers is refused for its count ([`Error::WrongLength`])
/// instead of being read as 53 turns written without spaces. `RUR'U'`, `R U R U` and `R2U2`
/// are moves (a suffix, or no word of 9 letters); nine or more plain quarter turns written
/// without spaces or suffixes (`RURURURUR`) read as stickers, and are written `R U R U ...`.
pub fn looks_like_facelets(text: &str) -> bool {
    text.chars().all(|c| c.is_alphabetic() || c.is_whitespace())
        && text
            .split_whitespace()
            .any(|w| w.chars().count() >= FACELET_WORD)
}

/// Reads one position in the given format and returns it at the cubie level, validated. A
/// text longer than [`crate::MAX_LINE_BYTES`] is refused ([`Error::LineTooLong`]) before it
/// is read (a colour net: all its lines together).
pub fn parse_position(text: &str, format: InputFormat) -> Result<CubieCube, Error> {
    if text.len() > crate::MAX_LINE_BYTES {
        return Err(Error::LineTooLong);
    }
    let text = text.trim();
    // no text is no position (an empty move sequence would read as the solved cube)
    if text.is_empty() {
        return Err(Error::Empty);
    }
    let format = match format {
        InputFormat::Auto if looks_like_facelets(text) => InputFormat::Facelets,
        InputFormat::Auto => InputFormat::Moves,
        f => f,
    };
    match format {
        InputFormat::Facelets => FaceletCube::parse(text)?.to_cubie(),
        InputFormat::Net => FaceletCube::parse_net(text)?.to_cubie(),
        _ => Ok(CubieCube::from_moves(&MoveSeq::parse(text)?.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moves::Move;

    const SOLVED: &str = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";

    #[test]
    fn no_text_is_no_position() {
        for blank in ["", "   ", "\t\n"] {
            for format in [InputFormat::Auto, InputFormat::Moves, InputFormat::Facelets] {
                assert_eq!(
                    parse_position(blank, format),
                    Err(Error::Empty),
                    "{blank:?}"
                );
            }
        }
    }

    fn cube(moves: &str) -> CubieCube {
        CubieCube::from_moves(&MoveSeq::parse(moves).expect("parses").0)
    }

    #[test]
    fn round_trip_through_stickers() {
        let c = cube("R U R' U' F2 D L' B2 U2 R");
        let s = FaceletCube::from_cubie(&c).to_string();
        assert_eq!(
            FaceletCube::parse(&s).expect("ok").to_cubie().expect("ok"),
            c
        );
        assert_eq!(
            FaceletCube::from_cubie(&CubieCube::SOLVED).to_string(),
            SOLVED
        );
    }

    #[test]
    fn single_turn_stickers() {
        // U turns the top layer: R's first row now shows B's colour
        let s = FaceletCube::from_cubie(Move::new(Face::U, 1).cubie()).to_string();
        assert_eq!(&s[9..12], "BBB");
        assert_eq!(&s[18..21], "RRR");
    }

    #[test]
    fn colour_letters_and_rotations() {
        let c = cube("R U F' L2 D B'");
        let s = FaceletCube::from_cubie(&c).to_string();
        let coloured: String = s
            .chars()
            .map(|ch| match ch {
                'U' => 'W',
                'R' => 'R',
                'F' => 'G',
                'D' => 'Y',
                'L' => 'O',
                _ => 'B',
            })
            .collect();
        assert_eq!(parse_position(&coloured, InputFormat::Auto).expect("ok"), c);
        // a solved cube held with F on top, written in face letters: still solved
        let held = "FFFFFFFFF RRRRRRRRR DDDDDDDDD BBBBBBBBB LLLLLLLLL UUUUUUUUU";
        assert!(parse_position(held, InputFormat::Auto)
            .expect("ok")
            .is_solved());
    }

    #[test]
    fn net_of_zoj_2477() {
        let net = "w w w\nw w w\nb b b\nr r w g g g y b b o o o\nr r w g g g y b b o o o\nr r w g g g y b b o o o\nr r r\ny y y\ny y y\n";
        let c = FaceletCube::parse_net(net)
            .expect("ok")
            .to_cubie()
            .expect("valid");
        assert_eq!(c, cube("F'"));
    }

    #[test]
    fn each_validation_error() {
        let mut s: Vec<u8> = SOLVED.as_bytes().to_vec();
        assert_eq!(
            FaceletCube::parse(&SOLVED[..53]),
            Err(Error::WrongLength(53))
        );
        s[4] = b'R';
        assert!(matches!(
            FaceletCube::parse(std::str::from_utf8(&s).expect("ascii")),
            Err(Error::CentresNotDistinct(_))
        ));
        let mut s = SOLVED.as_bytes().to_vec();
        s[0] = b'X';
        assert!(matches!(
            FaceletCube::parse(std::str::from_utf8(&s).expect("ascii")),
            Err(Error::UnknownColour {
                letter: 'X',
                position: 1
            })
        ));
        let mut s = SOLVED.as_bytes().to_vec();
        s[0] = b'R';
        assert!(matches!(
            FaceletCube::parse(std::str::from_utf8(&s).expect("ascii")),
            Err(Error::WrongStickerCount { .. })
        ));
        // a twisted corner: rotate the stickers of URF
        let mut c = CubieCube::SOLVED;
        c.co[0] = 1;
        c.co[1] = 0;
        let s = FaceletCube::from_cubie(&c).to_string();
        assert_eq!(
            FaceletCube::parse(&s).expect("ok").to_cubie(),
            Err(Error::TwistedCorner(1))
        );
        let mut c = CubieCube::SOLVED;
        c.eo[0] = 1;
        let s = FaceletCube::from_cubie(&c).to_string();
        assert_eq!(
            FaceletCube::parse(&s).expect("ok").to_cubie(),
            Err(Error::FlippedEdge)
        );
        let mut c = CubieCube::SOLVED;
        c.ep.swap(0, 1);
        let s = FaceletCube::from_cubie(&c).to_string();
        assert_eq!(
            FaceletCube::parse(&s).expect("ok").to_cubie(),
            Err(Error::ParityMismatch)
        );
        // swap two stickers of one corner with those of another: no real corner
        let mut s = SOLVED.as_bytes().to_vec();
        s.swap(9, 20); // URF's R and F stickers: a mirrored corner
        s.swap(18, 38); // keep counts: UFL's F and L stickers
        assert!(matches!(
            FaceletCube::parse(std::str::from_utf8(&s).expect("ascii"))
                .expect("counts ok")
                .to_cubie(),
            Err(Error::NoSuchCorner { .. })
        ));
        let mut s = SOLVED.as_bytes().to_vec();
        s[10] = b'U'; // UR now shows U and U
        s[1] = b'R';
        assert!(matches!(
            FaceletCube::parse(std::str::from_utf8(&s).expect("ascii"))
                .expect("counts ok")
                .to_cubie(),
            Err(Error::NoSuchEdge { .. })
        ));
    }

    #[test]
    fn a_facelet_string_with_a_sticker_missing_or_extra_is_refused_for_its_count() {
        let twisted = FaceletCube::from_cubie(&cube("R U F' L2 D B'")).to_string();
        for text in [
            &SOLVED[..53],
            &twisted[..53],
            &format!("{SOLVED}U"),
            &format!("{twisted}R"),
        ] {
            let n = text.len();
            assert_eq!(
                parse_position(text, InputFormat::Auto),
                Err(Error::WrongLength(n)),
                "{text}"
            );
        }
        // in words of 9, one face a sticker short
        let spaced = "UUUUUUUUU RRRRRRRR FFFFFFFFF DDDDDDDDD LLLLLLLLL BBBBBBBBB";
        assert_eq!(
            parse_position(spaced, InputFormat::Auto),
            Err(Error::WrongLength(53))
        );
        assert!(Error::WrongLength(53)
            .to_string()
            .starts_with("facelet string has 53 stickers, needs 54"));
        // moves stay moves: suffixes, commas, spaces between short words
        for moves in [
            "RUR'U'",
            "R U R U F",
            "R2U2F",
            "RUFDLB",
            "R,U,F,D,L,B,R,U,F,D",
        ] {
            assert!(!looks_like_facelets(moves), "{moves}");
            assert!(parse_position(moves, InputFormat::Auto).is_ok(), "{moves}");
        }
        // asked for as moves, letters are turns whatever their number
        assert!(parse_position(&SOLVED[..53], InputFormat::Moves).is_ok());
    }

    #[test]
    fn a_line_over_the_limit_is_refused_naming_the_limit() {
        let long = "R U ".repeat(25_000); // 100 kB
        let e = parse_position(&long, InputFormat::Auto).unwrap_err();
        assert_eq!(e, Error::LineTooLong);
        assert!(e
            .to_string()
            .contains(&format!("{} bytes", crate::MAX_LINE_BYTES)));
        let within = "R U ".repeat(crate::MAX_LINE_BYTES / 4);
        assert!(parse_position(&within, InputFormat::Auto).is_ok());
    }

    #[test]
    fn messages_speak_cuber() {
        assert!(Error::TwistedCorner(1)
            .to_string()
            .contains("one corner is twisted"));
        assert!(Error::ParityMismatch
            .to_string()
            .contains("two pieces are swapped"));
        assert!(Error::WrongLength(3).to_string().contains("U1..U9"));
    }
}
