//! Pruning tables: for every class of positions, the exact number of moves to reach the goal of
//! a phase (a lower bound for the search).
//!
//! Encoding, a measured choice: one byte per entry holding the depth itself. Depth mod 3 in 2
//! bits would make the phase-1 and phase-2 tables 4x smaller (63 MB instead of 253 MB) but every
//! lookup would then need the parent's depth to decode, and the build would need the slower
//! mod-3 bookkeeping; at 253 MB the two-phase tables stay far under the 1 GB budget and all
//! worker processes of a machine share them through the page cache. The optional huge table
//! (3.5 G entries) is the one where 2 bits pay off.
//!
//! Building is breadth-first over sym-reduced rows (`class x raw coordinate`): forward from the
//! frontier while the table is mostly empty, then backward (each empty entry looks for a
//! neighbour at the current depth) once most entries are filled, as Kociemba describes for Cube
//! Explorer's tables. Classes are handed to all cores in blocks; rows are contiguous so a
//! class's neighbours stay in cache.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;

use crate::coord::{N_CORNERS, N_PERM_4, N_TWIST, N_UD_EDGES};
use crate::moves::N_MOVE;
use crate::movetable::{CoordTables, SymCoord, PHASE2_MOVES};

/// Marks an entry not reached yet during a build. Never present in a finished table.
pub const EMPTY: u8 = 0xFF;

/// Entries of the phase-1 table: 64430 FlipUDSlice classes x 2187 twists.
pub const N_PHASE1: usize = N_FLIPSLICE_CLASSES * N_TWIST;
/// FlipUDSlice classes under the 16 symmetries of D4h (phase 1's sym-coordinate).
pub const N_FLIPSLICE_CLASSES: usize = 64430;
/// Entries of the phase-2 table: 2768 corner classes x 40320 UD-edge permutations.
pub const N_PHASE2: usize = 2768 * N_UD_EDGES;
/// Entries of the phase-2 corner x slice table: 40320 corner permutations x 24 slice orders.
pub const N_PHASE2_SLICE: usize = N_CORNERS * N_PERM_4;

/// Reads the phase-1 move-delta table: for entry `i` of the phase-1 table, 2 bits per move
/// `m` (bits `2m..2m+2` of a 40-bit little-endian word at byte `5 i`): 0 when the move lowers the
/// depth by one, 1 when it keeps it, 2 when it raises it. A search that knows a node's depth
/// learns every child's depth from this one entry instead of 18 lookups.
pub struct Phase1Moves;

impl Phase1Moves {
    /// Bytes per entry.
    pub const ENTRY_BYTES: usize = 5;
    /// Padding after the last entry so every entry can be read as a `u64`.
    pub const PADDING: usize = 3;

    /// The 36 delta bits of entry `i` (a move's delta is `(word >> 2m) & 3`).
    #[inline]
    pub fn entry(payload: &[u8], i: usize) -> u64 {
        let at = Self::ENTRY_BYTES * i;
        let bytes: [u8; 8] = payload[at..at + 8].try_into().expect("8 bytes in bounds");
        u64::from_le_bytes(bytes) & ((1u64 << 36) - 1)
    }
}

/// Builds the phase-1 move-delta table from the finished phase-1 depths.
pub fn build_phase1_moves(t: &CoordTables, depths: &[u8], progress: ProgressFn<'_>) -> Vec<u8> {
    let space = Phase1Space(t);
    let classes = space.classes();
    let row = N_TWIST;
    let mut out = vec![0u8; N_PHASE1 * Phase1Moves::ENTRY_BYTES + Phase1Moves::PADDING];
    let done = AtomicUsize::new(0);
    out[..N_PHASE1 * Phase1Moves::ENTRY_BYTES]
        .par_chunks_mut(row * Phase1Moves::ENTRY_BYTES)
        .enumerate()
        .for_each_init(
            || vec![0u64; row],
            |words, (c, mine)| {
                words.iter_mut().for_each(|w| *w = 0);
                let base = c * row;
                for m in 0..N_MOVE {
                    let sc = space.class_move(c, m);
                    let base1 = sc.class() * row;
                    for (x, w) in words.iter_mut().enumerate() {
                        let d = depths[base + x] as i32;
                        let d1 = depths[base1 + space.row_move(x, m, sc.sym())] as i32;
                        *w |= ((d1 - d + 1) as u64) << (2 * m);
                    }
                }
                for (entry, w) in mine
                    .chunks_exact_mut(Phase1Moves::ENTRY_BYTES)
                    .zip(words.iter())
                {
                    entry.copy_from_slice(&w.to_le_bytes()[..Phase1Moves::ENTRY_BYTES]);
                }
                let n = done.fetch_add(1, Relaxed) + 1;
                if n.is_multiple_of(4096) || n == classes {
                    progress("phase1_moves", (n * row) as u64, N_PHASE1 as u64);
                }
            },
        );
    out
}

/// Progress of a build: which table, and entries filled so far out of all.
pub type ProgressFn<'a> = &'a (dyn Fn(&str, u64, u64) + Sync);

/// A space of sym-reduced positions: rows indexed by a class, each row by a raw coordinate.
pub(crate) trait SymSpace: Sync {
    fn classes(&self) -> usize;
    fn row_len(&self) -> usize;
    fn moves(&self) -> &[usize];
    /// The sym-coordinate of class `c`'s representative after move `m`.
    fn class_move(&self, c: usize, m: usize) -> SymCoord;
    /// The row coordinate after move `m`, conjugated by `sym` (the neighbour's symmetry).
    fn row_move(&self, x: usize, m: usize, sym: usize) -> usize;
    /// Symmetries that fix class `c`'s representative (bit s).
    fn self_sym(&self, c: usize) -> u16;
    /// The row coordinate conjugated by `s`.
    fn row_conj(&self, x: usize, s: usize) -> usize;
}

struct Phase1Space<'a>(&'a CoordTables);

impl SymSpace for Phase1Space<'_> {
    fn classes(&self) -> usize {
        self.0.flipslice.classes()
    }
    fn row_len(&self) -> usize {
        N_TWIST
    }
    fn moves(&self) -> &[usize] {
        &ALL_MOVES
    }
    #[inline]
    fn class_move(&self, c: usize, m: usize) -> SymCoord {
        self.0.flipslice_class_move[N_MOVE * c + m]
    }
    #[inline]
    fn row_move(&self, x: usize, m: usize, sym: usize) -> usize {
        self.row_conj(self.0.twist_move[N_MOVE * x + m] as usize, sym)
    }
    fn self_sym(&self, c: usize) -> u16 {
        self.0.flipslice.self_sym[c]
    }
    #[inline]
    fn row_conj(&self, x: usize, s: usize) -> usize {
        self.0.twist_conj[16 * x + s] as usize
    }
}

struct Phase2Space<'a>(&'a CoordTables);

impl SymSpace for Phase2Space<'_> {
    fn classes(&self) -> usize {
        self.0.corners_sym.classes()
    }
    fn row_len(&self) -> usize {
        N_UD_EDGES
    }
    fn moves(&self) -> &[usize] {
        &PHASE2_MOVES
    }
    #[inline]
    fn class_move(&self, c: usize, m: usize) -> SymCoord {
        self.0.corners_class_move[N_MOVE * c + m]
    }
    #[inline]
    fn row_move(&self, x: usize, m: usize, sym: usize) -> usize {
        self.row_conj(self.0.ud_edges_move[N_MOVE * x + m] as usize, sym)
    }
    fn self_sym(&self, c: usize) -> u16 {
        self.0.corners_sym.self_sym[c]
    }
    #[inline]
    fn row_conj(&self, x: usize, s: usize) -> usize {
        self.0.ud_edges_conj[16 * x + s] as usize
    }
}

pub(crate) const ALL_MOVES: [usize; N_MOVE] =
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17];

/// Views a byte buffer as atomics so build threads can share it.
fn as_atomic(bytes: &mut [u8]) -> &[AtomicU8] {
    // SAFETY: AtomicU8 has the same size, alignment and bit validity as u8, and the exclusive
    // borrow guarantees no other non-atomic access for the lifetime of the returned slice.
    unsafe { &*(bytes as *mut [u8] as *const [AtomicU8]) }
}

/// Runs `work(first, last)` over `0..n` in blocks of `block` on every core (one rayon task per
/// block).
fn parallel_blocks(n: usize, block: usize, work: impl Fn(usize, usize) + Sync + Send) {
    (0..n.div_ceil(block))
        .into_par_iter()
        .for_each(|b| work(b * block, ((b + 1) * block).min(n)));
}

/// Counts entries per depth (index = depth), ignoring [`EMPTY`].
pub fn distribution(table: &[u8]) -> Vec<u64> {
    let mut counts = [0u64; 256];
    for &d in table {
        counts[d as usize] += 1;
    }
    let max = (0..255).rev().find(|&d| counts[d] > 0).unwrap_or(0);
    counts[..=max].to_vec()
}

pub(crate) fn build_sym(space: &impl SymSpace, name: &str, progress: ProgressFn<'_>) -> Vec<u8> {
    let row = space.row_len();
    let total = space.classes() * row;
    let mut bytes = vec![EMPTY; total];
    bytes[0] = 0;
    let mut filled = 1usize;
    let table = as_atomic(&mut bytes);
    let mut depth = 0u8;
    while filled < total {
        let backward = filled * 3 > total;
        let next = depth + 1;
        parallel_blocks(space.classes(), 16, |first, last| {
            let mut xs: Vec<usize> = Vec::with_capacity(row);
            for c in first..last {
                let base = c * row;
                xs.clear();
                let want = if backward { EMPTY } else { depth };
                xs.extend((0..row).filter(|&x| table[base + x].load(Relaxed) == want));
                if xs.is_empty() {
                    continue;
                }
                for &m in space.moves() {
                    let sc = space.class_move(c, m);
                    let base1 = sc.class() * row;
                    if backward {
                        xs.retain(|&x| {
                            let x1 = space.row_move(x, m, sc.sym());
                            if table[base1 + x1].load(Relaxed) == depth {
                                table[base + x].store(next, Relaxed);
                                false
                            } else {
                                true
                            }
                        });
                        if xs.is_empty() {
                            break;
                        }
                    } else {
                        let fixed = space.self_sym(sc.class()) & !1;
                        for &x in &xs {
                            let x1 = space.row_move(x, m, sc.sym());
                            if table[base1 + x1].load(Relaxed) == EMPTY {
                                table[base1 + x1].store(next, Relaxed);
                                // the same position written with another symmetry of the class
                                let mut f = fixed;
                                while f != 0 {
                                    let s = f.trailing_zeros() as usize;
                                    f &= f - 1;
                                    let x2 = space.row_conj(x1, s);
                                    if table[base1 + x2].load(Relaxed) == EMPTY {
                                        table[base1 + x2].store(next, Relaxed);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        });
        let added = table
            .par_chunks(1 << 20)
            .map(|part| part.iter().filter(|e| e.load(Relaxed) == next).count())
            .sum::<usize>();
        if added == 0 {
            break;
        }
        filled += added;
        depth = next;
        progress(name, filled as u64, total as u64);
    }
    bytes
}

/// Builds the phase-1 table: `table[2187 * flipslice_class + twist_conj]` = moves to reach G1.
pub fn build_phase1(t: &CoordTables, progress: ProgressFn<'_>) -> Vec<u8> {
    build_sym(&Phase1Space(t), "phase1", progress)
}

/// Builds the phase-2 table: `table[40320 * corner_class + ud_edges_conj]` = moves (of phase 2)
/// to solve corners and U/D edges.
pub fn build_phase2(t: &CoordTables, progress: ProgressFn<'_>) -> Vec<u8> {
    build_sym(&Phase2Space(t), "phase2", progress)
}

/// Builds the phase-2 corner x slice table: `table[24 * corners + slice_sorted]` (slice_sorted
/// `< 24` in phase 2) = phase-2 moves to solve corners and the slice edges' order.
pub fn build_phase2_slice(t: &CoordTables, progress: ProgressFn<'_>) -> Vec<u8> {
    let mut table = vec![EMPTY; N_PHASE2_SLICE];
    table[0] = 0;
    let mut frontier = vec![0usize];
    let mut depth = 0u8;
    let mut filled = 1;
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &i in &frontier {
            let (c, s) = (i / N_PERM_4, i % N_PERM_4);
            for &m in &PHASE2_MOVES {
                let c1 = t.corners_move[N_MOVE * c + m] as usize;
                let s1 = t.slice_sorted_move[N_MOVE * s + m] as usize;
                let j = N_PERM_4 * c1 + s1;
                if table[j] == EMPTY {
                    table[j] = depth + 1;
                    next.push(j);
                }
            }
        }
        filled += next.len();
        depth += 1;
        frontier = next;
        progress("phase2_slice", filled as u64, N_PHASE2_SLICE as u64);
    }
    table
}

/// Entries per depth of a table file's payload, whatever its encoding.
pub fn table_distribution(header: &crate::file::Header, payload: &[u8]) -> Vec<u64> {
    match header.bits {
        8 => distribution(payload),
        // move deltas: entries per count of depth-lowering moves
        40 => {
            let mut counts = vec![0u64; N_MOVE + 1];
            for i in 0..header.entries as usize {
                let w = Phase1Moves::entry(payload, i);
                let down = (0..N_MOVE).filter(|m| (w >> (2 * m)) & 3 == 0).count();
                counts[down] += 1;
            }
            counts
        }
        _ => Vec::new(),
    }
}
