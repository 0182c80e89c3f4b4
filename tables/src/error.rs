//! The one error type of the crate: bad cube input and bad table files.

use std::path::PathBuf;

/// Everything that can go wrong in `cubefleet-tables`.
///
/// Messages are meant for the user: they say what was wrong in the words a cuber uses and, for
/// table files, what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A move sequence has a token that is not a move.
    #[error("unknown move `{token}` (token {position}); moves are U R F D L B with optional 2 or ', wide moves Rw/r, slices M E S, rotations x y z")]
    UnknownMove {
        /// The token as written.
        token: String,
        /// 1-based place of the token in the sequence.
        position: usize,
    },
    /// A turn has a suffix that is none of `2`, `'`, `3`, `2'`, `'2` (e.g. `R4`, `R0`, `R1`).
    #[error("`{token}` (token {position}) is no turn: a turn is a letter with nothing, 2, ', 3, 2' or '2 after it")]
    BadSuffix {
        /// The token as written.
        token: String,
        /// 1-based place of the token in the sequence.
        position: usize,
    },
    /// A facelet string (or a line read as one: letters only, a word of 9 or more) does not
    /// have 54 stickers.
    #[error("facelet string has {0} stickers, needs 54 in the order U1..U9 R1..R9 F1..F9 D1..D9 L1..L9 B1..B9, e.g. UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB (a line of letters only with a word of 9 or more letters is read as stickers: to write moves, separate them by spaces)")]
    WrongLength(usize),
    /// A line is longer than [`crate::MAX_LINE_BYTES`].
    #[error("line of more than {max} bytes, the line-length limit (MAX_LINE_BYTES); split the sequence or write the position as a facelet string", max = crate::MAX_LINE_BYTES)]
    LineTooLong,
    /// The six centre stickers do not show six different colours.
    #[error("the six centres (stickers 5, 14, 23, 32, 41, 50) must show six different colours, they show {0}")]
    CentresNotDistinct(String),
    /// A sticker has a colour that no centre has.
    #[error("sticker {position} has colour `{letter}`, which is the colour of no centre")]
    UnknownColour {
        /// The colour letter.
        letter: char,
        /// 1-based place of the sticker in the string.
        position: usize,
    },
    /// A colour does not appear exactly nine times.
    #[error("colour `{letter}` appears {count} times; every colour appears exactly 9 times")]
    WrongStickerCount {
        /// The colour letter.
        letter: char,
        /// How many times it appears.
        count: usize,
    },
    /// Three corner stickers that no real corner piece has.
    #[error("the stickers at corner {position} ({colours}) are no real corner piece")]
    NoSuchCorner {
        /// Corner position, e.g. `URF`.
        position: String,
        /// The colours found there, as faces.
        colours: String,
    },
    /// Two edge stickers that no real edge piece has.
    #[error("the stickers at edge {position} ({colours}) are no real edge piece")]
    NoSuchEdge {
        /// Edge position, e.g. `UR`.
        position: String,
        /// The colours found there, as faces.
        colours: String,
    },
    /// The same corner piece appears twice.
    #[error("corner piece {0} appears twice")]
    DuplicateCorner(String),
    /// The same edge piece appears twice.
    #[error("edge piece {0} appears twice")]
    DuplicateEdge(String),
    /// The corner twists do not add up to 0 mod 3.
    #[error("one corner is twisted (corner twists add up to {0} mod 3, a real cube has 0)")]
    TwistedCorner(u8),
    /// The edge flips do not add up to an even number.
    #[error("one edge is flipped (an odd number of edges is flipped)")]
    FlippedEdge,
    /// Corner and edge permutation parities differ.
    #[error("two pieces are swapped (corner and edge permutations have different parity)")]
    ParityMismatch,
    /// A colour net is not 9 lines of 3, 12 and 3 stickers.
    #[error("a colour net is 9 lines: 3 lines of 3 stickers (U), 3 lines of 12 (L F R B), 3 lines of 3 (D); {0}")]
    BadNet(String),
    /// An empty line where a position was expected.
    #[error("empty position")]
    Empty,

    /// A table file could not be read or written.
    #[error("table file {path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// A table file exists but is not what this build expects.
    #[error(
        "table file {path} is unusable: {reason}; rebuild with `{}`",
        rebuild_command(.path)
    )]
    BadTable {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The huge table cannot be built by this version.
    #[error("the huge table is not available in this version")]
    HugeUnavailable,
    /// A table that is needed has not been built.
    #[error("table file {0} is missing; build it with `cubefleet tables build`")]
    MissingTable(PathBuf),
    /// A state index that is no number, or not below the number of states.
    #[error("state index `{0}`: {1}")]
    BadStateIndex(String, &'static str),
    /// A range or sample of states that cannot be made (see [`crate::states`]): why.
    #[error("{0}")]
    BadStates(String),
}

/// The command that rebuilds the table file `path`: the optimal solver's tables are built only
/// when asked for by name.
fn rebuild_command(path: &std::path::Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    match stem {
        "huge" | "giant" | "colossal" => format!("cubefleet tables build --{stem} --force"),
        _ => "cubefleet tables build --force".into(),
    }
}

impl Error {
    /// Wraps an I/O error with the file it concerns.
    pub fn io(path: impl Into<PathBuf>, e: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            message: e.to_string(),
        }
    }
}
