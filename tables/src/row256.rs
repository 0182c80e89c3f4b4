//! Rows of 256 mod-3 entries (2 bits each, 64 bytes: one cache line), read all at once
//! through a map of their entries: which entries of a neighbouring row, taken in the order of
//! this row's entries, hold a given residue. The colossal table's backward passes read one
//! such row per entry row and move instead of one entry per empty entry and move.
//!
//! [`matches`] is a plain loop, or on x86-64 with AVX-512 VBMI (checked at run time) eight
//! byte shuffles and tests, held to the loop by a test.

/// Entries of a row.
pub(crate) const ROW_ENTRIES: usize = 256;

/// A map of a row's entries, `t -> to[t]` (`to[t] < 256`), a byte each: four cache lines.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub(crate) struct RowMap {
    to: [u8; ROW_ENTRIES],
}

impl RowMap {
    /// Every entry to itself.
    pub(crate) const IDENTITY: RowMap = {
        let mut to = [0; ROW_ENTRIES];
        let mut t = 0;
        while t < ROW_ENTRIES {
            to[t] = t as u8;
            t += 1;
        }
        RowMap { to }
    };

    /// The map `t -> to[t]` (`to` has [`ROW_ENTRIES`] values below [`ROW_ENTRIES`]).
    pub(crate) fn new(to: &[u16]) -> RowMap {
        assert_eq!(to.len(), ROW_ENTRIES);
        RowMap {
            to: std::array::from_fn(|t| u8::try_from(to[t]).expect("an entry of the row")),
        }
    }

    /// Starts loading the map (its four cache lines).
    #[inline]
    pub(crate) fn prefetch(&self) {
        for line in (0..ROW_ENTRIES).step_by(64) {
            crate::prefetch(&self.to, line);
        }
    }
}

/// Whether [`matches`] is fast here (AVX-512 VBMI). Without it, reading whole rows costs more
/// than reading entries, and the build does not.
pub(crate) fn fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512vbmi") && std::is_x86_feature_detected!("avx512bw") {
        return true;
    }
    false
}

/// Bit `t % 64` of word `t / 64` set where entry `to[t]` of `row` holds `v` (`map` is `to`,
/// `v < 4`). `row` is the row's 64 bytes as 8 little-endian words, entry `j` at bits `2 (j %
/// 32)` of word `j / 32`.
#[inline]
pub(crate) fn matches(row: &[u64; 8], map: &RowMap, v: u8) -> [u64; 4] {
    #[cfg(target_arch = "x86_64")]
    if fast() {
        // SAFETY: the CPU has the features `matches_vbmi` is compiled for (checked just above).
        return unsafe { matches_vbmi(row, map, v) };
    }
    matches_plain(row, map, v)
}

/// [`matches`] entry by entry: the reference the fast one is tested against.
fn matches_plain(row: &[u64; 8], map: &RowMap, v: u8) -> [u64; 4] {
    let mut out = [0u64; 4];
    for (t, &x) in map.to.iter().enumerate() {
        let x = x as usize;
        if (row[x / 32] >> (2 * (x % 32))) & 3 == v as u64 {
            out[t / 64] |= 1 << (t % 64);
        }
    }
    out
}

/// [`matches`] with AVX-512 VBMI: the row in one register; per 64 entries, one shuffle brings
/// each entry's byte (`to / 4`), and one test of its two bits (`3 << 2 (to % 4)`, from a
/// 4-entry table) against `v`'s makes its bit.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn matches_vbmi(row: &[u64; 8], map: &RowMap, v: u8) -> [u64; 4] {
    use std::arch::x86_64::*;
    // the bits of entry `j % 4` in its byte, for `j % 4` in each 16-byte lane's first bytes
    let fields = _mm512_set4_epi32(0, 0, 0, 0xC030_0C03_u32 as i32);
    // SAFETY: `row` is 64 readable bytes; each quarter of the map is 64 bytes at a multiple of
    // 64 (`RowMap` is aligned to 64).
    unsafe {
        let x = _mm512_xor_si512(
            _mm512_loadu_si512(row.as_ptr().cast()),
            _mm512_set1_epi8((0x55 * v) as i8),
        );
        let mut out = [0u64; 4];
        for (q, o) in out.iter_mut().enumerate() {
            let to = _mm512_load_si512(map.to.as_ptr().add(64 * q).cast());
            // the shuffle reads the low 6 bits of each byte: what the neighbour's bits shifted
            // in above them does not matter
            let byte = _mm512_permutexvar_epi8(_mm512_srli_epi16::<2>(to), x);
            let field = _mm512_shuffle_epi8(fields, _mm512_and_si512(to, _mm512_set1_epi8(3)));
            *o = _mm512_testn_epi8_mask(byte, field);
        }
        out
    }
}

/// Bit `i` of `bits` moved to bit `2 i`: a word's low bits ([`crate::huge`]'s entry masks)
/// for 32 entries given one bit each.
#[inline]
pub(crate) fn spread_even(bits: u32) -> u64 {
    let mut x = bits as u64;
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The fast reading (where the CPU has it) equals the plain one on random rows and maps,
    /// and both read each entry's residue.
    #[test]
    fn matches_reads_the_mapped_entries() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(39);
        for _ in 0..2000 {
            let row: [u64; 8] = std::array::from_fn(|_| rng.random());
            let to: Vec<u16> = (0..ROW_ENTRIES)
                .map(|_| rng.random_range(0..ROW_ENTRIES as u16))
                .collect();
            let map = RowMap::new(&to);
            for v in 0..4 {
                let got = matches(&row, &map, v);
                assert_eq!(got, matches_plain(&row, &map, v));
                for (t, &x) in to.iter().enumerate() {
                    let x = x as usize;
                    let entry = (row[x / 32] >> (2 * (x % 32))) & 3;
                    assert_eq!((got[t / 64] >> (t % 64)) & 1 == 1, entry == v as u64);
                }
            }
            assert_eq!(
                matches(&row, &RowMap::IDENTITY, 3),
                matches(&row, &RowMap::new(&(0..256).collect::<Vec<_>>()), 3)
            );
        }
    }

    #[test]
    fn spread_even_moves_bit_i_to_2i() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..1000 {
            let bits: u32 = rng.random();
            let want = (0..32).fold(0u64, |w, i| w | (((bits >> i) & 1) as u64) << (2 * i));
            assert_eq!(spread_even(bits), want);
        }
    }
}
