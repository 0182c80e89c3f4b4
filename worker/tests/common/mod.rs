//! Test data shared by the optimal-solver tests: the positions with proven optimal lengths
//! (`tests/vectors/known-optimal.txt` of this repository).

use cubefleet_tables::{parse_position, CubieCube, InputFormat};

const KNOWN: &str = include_str!("../../../tests/vectors/known-optimal.txt");

/// Every known position whose optimal length (HTM) is in `lengths`: (facelets, cube, length).
pub(crate) fn known_optimal(
    lengths: std::ops::RangeInclusive<u32>,
) -> Vec<(String, CubieCube, u32)> {
    KNOWN
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let facelets = words.next().expect("facelets");
            let len: u32 = words.next().expect("length").parse().expect("number");
            lengths.contains(&len).then(|| {
                let cube = parse_position(facelets, InputFormat::Facelets).expect("valid");
                (facelets.to_string(), cube, len)
            })
        })
        .collect()
}
