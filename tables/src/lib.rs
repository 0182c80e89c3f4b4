//! The cube model of cubefleet and everything precomputed for its searches.
//!
//! Module map, from stickers to tables:
//! - [`input`]: what a line of input is (length limit, blank and comment lines);
//! - [`facelet`]: the 54 stickers, colour letters, the colour net, validation of real cubes;
//! - [`moves`]: the 18 face turns and Singmaster notation;
//! - [`cubie`]: permutation and orientation of the 8 corners and 12 edges, multiplication;
//! - [`symmetry`]: the 48 symmetries, conjugation, canonical forms for deduplication;
//! - [`reach`]: invariants that prove a position out of reach of a set of turns;
//! - [`index`]: the state index, a number for each of the 43,252,003,274,489,856,000 states;
//! - [`coord`]: coordinates (numbers describing parts of the state) and their ranges;
//! - [`coset`]: the cosets of H (numbers, local indices, canonical cosets under the 16
//!   symmetries that fix H, the samples a coordinator checks a coset's claim by);
//! - [`movetable`]: move, conjugation and sym-reduction tables over the coordinates;
//! - [`lookup`]: the arrays those tables are held in, movable into huge-page memory;
//! - [`prune`]: building the pruning tables of the two-phase search (phase 1, phase 2, the
//!   phase-1 move deltas);
//! - [`huge`]: the optimal solver's huge and giant tables (depth mod 3, two bits per position)
//!   and their build;
//! - [`colossal`]: the optimal solver's colossal table (nxopt's kind of goal), its rows with
//!   their floors, and its build;
//! - `row256`: its build's reading of a 256-entry row through a map of its entries at once;
//! - [`mod3`]: a huge, giant or colossal table loaded for the searches, with its index;
//! - [`file`]: the table file format and memory-mapped loading;
//! - [`Tables`]: all of it together, loaded from (or built into) a directory.
//!
//! Nothing here is built as a side effect of loading a module: tables are computed by explicit
//! calls ([`Tables::build`], [`CoordTables::compute`]).

pub mod colossal;
pub mod coord;
pub mod coset;
pub mod cubie;
mod error;
pub mod facelet;
pub mod file;
pub mod huge;
pub mod index;
pub mod input;
pub mod lookup;
pub mod mod3;
pub mod moves;
pub mod movetable;
pub mod prune;
pub mod reach;
mod row256;
pub mod states;
pub mod symmetry;

use std::path::{Path, PathBuf};

pub use cubie::CubieCube;
pub use error::Error;
pub use facelet::{parse_position, FaceletCube, InputFormat};
use file::{Table, TableKind};
pub use input::{is_blank_or_comment, MAX_LINE_BYTES};
pub use moves::{Face, Move, MoveSeq};
pub use movetable::CoordTables;
use prune::ProgressFn;

/// The default tables directory: `$CUBEFLEET_TABLES`, else `cubefleet/tables` in the user's
/// cache directory (etcetera's base strategy: `$XDG_CACHE_HOME` when absolute, else
/// `~/.cache` on Unix; the local application data folder on Windows), else
/// `./cubefleet-tables` when there is no home directory.
pub fn default_dir() -> PathBuf {
    use etcetera::BaseStrategy;
    if let Some(d) = std::env::var_os("CUBEFLEET_TABLES") {
        return PathBuf::from(d);
    }
    match etcetera::choose_base_strategy() {
        Ok(base) => base.cache_dir().join("cubefleet").join("tables"),
        Err(_) => PathBuf::from("cubefleet-tables"),
    }
}

/// Everything the two-phase and optimal searches need: the coordinate tables (computed in
/// memory) and the pruning tables (memory-mapped files).
pub struct Tables {
    /// Move, conjugation and sym-reduction tables.
    pub coords: CoordTables,
    /// Phase 1 pruning: depth of `2187 * flipslice_class + twist`.
    pub phase1: Table,
    /// Phase 1: for the same index, how each move changes the depth ([`prune::Phase1Moves`]).
    pub phase1_moves: Table,
    /// Phase 2 pruning: depth of `40320 * corner_class + ud_edges`.
    pub phase2: Table,
    /// Phase 2 pruning: depth of `24 * corners + slice_sorted`.
    pub phase2_slice: Table,
    /// The bound of optimal searches beyond phase 1's, when it was built into the same
    /// directory: the giant table (FlipUDSlice class x UDCorners x twist, `cubefleet tables
    /// build --giant`), else the huge table (UDSliceSorted class x flip x twist, `--huge`).
    pub optimal_bound: Option<mod3::Mod3Table>,
}

/// The coordinate tables of `dir`'s file ([`TableKind::Coords`]), mapped; computed when the file
/// is missing or bad, and then written there for the next start (when the directory allows:
/// the file is only a cache, everything works without it).
fn load_coords(dir: &Path) -> CoordTables {
    match Table::open(dir, TableKind::Coords).and_then(CoordTables::from_table) {
        Ok(coords) => coords,
        Err(_) => {
            let coords = CoordTables::compute();
            let payload = coords.file_payload();
            let entries = payload.len() as u64;
            let _ = Table::in_memory(TableKind::Coords, entries, 0, payload).write_to(dir);
            coords
        }
    }
}

/// The two-phase tables, in build order.
pub const TWO_PHASE_TABLES: [TableKind; 4] = [
    TableKind::Phase1,
    TableKind::Phase1Moves,
    TableKind::Phase2,
    TableKind::Phase2Slice,
];

impl Tables {
    /// Maps the tables in `dir`, checking every header and checksum; the optimal searches'
    /// bound table too (the colossal table, else the giant one, else the huge one) when one is
    /// there.
    pub fn load(dir: &Path) -> Result<Tables, Error> {
        Self::load_with(dir, true)
    }

    /// [`Tables::load`], with the optimal searches' bound table only when `optimal_bound`:
    /// two-phase searches never read it, and checking and mapping it costs a fraction of a
    /// second at every start.
    pub fn load_with(dir: &Path, optimal_bound: bool) -> Result<Tables, Error> {
        // the coordinate tables are computed while the files are checked: both keep the cores
        // busy only part of the time (the longest reduction runs alone at its end)
        let (coords, files) = std::thread::scope(|s| {
            let coords = s.spawn(|| {
                let mut coords = load_coords(dir);
                // only faster lookups: when no memory can be mapped, the tables stay where
                // they are
                let _ = coords.move_to_huge_pages();
                coords
            });
            let files = (|| {
                Ok::<_, Error>((
                    Table::open(dir, TableKind::Phase1)?,
                    Table::open(dir, TableKind::Phase1Moves)?,
                    Table::open(dir, TableKind::Phase2)?,
                    Table::open(dir, TableKind::Phase2Slice)?,
                ))
            })();
            (
                coords.join().expect("table computation does not panic"),
                files,
            )
        });
        let (phase1, phase1_moves, phase2, phase2_slice) = files?;
        let optimal_bound = if optimal_bound {
            let mut found = None;
            for kind in [TableKind::Colossal, TableKind::Giant, TableKind::Huge] {
                found = mod3::Mod3Table::load(dir, kind, &coords)?;
                if found.is_some() {
                    break;
                }
            }
            found
        } else {
            None
        };
        Ok(Tables {
            coords,
            phase1,
            phase1_moves,
            phase2,
            phase2_slice,
            optimal_bound,
        })
    }

    /// Builds the tables of `kinds` that are missing in `dir` (or all of them with `force`),
    /// returning the ones built. Each file appears atomically when complete.
    pub fn build(
        dir: &Path,
        kinds: &[TableKind],
        force: bool,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<TableKind>, Error> {
        let missing = |k: TableKind| !dir.join(k.file_name()).exists();
        let todo: Vec<TableKind> = kinds
            .iter()
            .copied()
            .filter(|&k| force || missing(k))
            .collect();
        if todo.is_empty() {
            return Ok(todo);
        }
        let coords = CoordTables::compute();
        for &kind in &todo {
            // the mod-3 tables come as words ([`huge::Packed`]), the others as bytes
            let (bytes, entries, bits): (Box<dyn AsRef<[u8]>>, _, _) = match kind {
                TableKind::Phase1 => (Box::new(prune::build_phase1(&coords, progress)), None, 8),
                TableKind::Phase2 => (Box::new(prune::build_phase2(&coords, progress)), None, 8),
                TableKind::Phase2Slice => (
                    Box::new(prune::build_phase2_slice(&coords, progress)),
                    None,
                    8,
                ),
                TableKind::Coords => (Box::new(coords.file_payload()), None, 0),
                TableKind::Phase1Moves => {
                    // derived from the phase-1 depths, which are built first
                    let phase1 = Table::open(dir, TableKind::Phase1)?;
                    let bytes = prune::build_phase1_moves(&coords, phase1.payload(), progress);
                    (Box::new(bytes), Some(prune::N_PHASE1 as u64), 40)
                }
                TableKind::Huge => {
                    let (bytes, dist) =
                        huge::build(&huge::HugeSpace::new(&coords), "huge", progress, None);
                    if dist != huge::HUGE_DISTRIBUTION {
                        return Err(Error::BadTable {
                            path: dir.join(kind.file_name()),
                            reason: format!(
                                "the build's depth distribution {dist:?} differs from the published one (a bug; the file was not written)"
                            ),
                        });
                    }
                    (Box::new(bytes), Some(huge::N_HUGE as u64), 2)
                }
                TableKind::Colossal => {
                    let (dist, rows) = colossal::build(&coords, progress);
                    check_reached(dir, kind, &dist, colossal::N_COLOSSAL)?;
                    let bytes = rows.map_err(|e| Error::BadTable {
                        path: dir.join(kind.file_name()),
                        reason: format!(
                            "the build's floors disagree, {e} (a bug; the file was not written)"
                        ),
                    })?;
                    // the first versions' floor file, useless beside the new table
                    let retired = dir.join(colossal::RETIRED_FLOOR_FILE);
                    match std::fs::remove_file(&retired) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                            return Err(Error::io(retired, e))
                        }
                        _ => {}
                    }
                    let n = colossal::N_COLOSSAL as u64;
                    (Box::new(bytes), Some(n), colossal::COLOSSAL_ENCODING)
                }
                TableKind::Giant => {
                    // no published distribution: the build is checked by its total, and the
                    // table by the tests (`worker/tests/optimal_huge.rs`)
                    let (bytes, dist) =
                        huge::build(&huge::GiantSpace::new(&coords), "giant", progress, None);
                    check_reached(dir, kind, &dist, huge::N_GIANT)?;
                    (Box::new(bytes), Some(huge::N_GIANT as u64), 2)
                }
            };
            let bytes = (*bytes).as_ref();
            let entries = entries.unwrap_or(bytes.len() as u64);
            Table::in_memory(kind, entries, bits, bytes).write_to(dir)?;
        }
        Ok(todo)
    }

    /// Identifies the tables: format version and every table's checksum. Workers report it so
    /// an operator can see which tables each one runs on.
    pub fn fingerprint(&self) -> String {
        let crc = |t: &Table| format!("{:08x}", t.header().checksum);
        format!(
            "v{}:{}:{}:{}:{}",
            file::FORMAT_VERSION,
            crc(&self.phase1),
            crc(&self.phase1_moves),
            crc(&self.phase2),
            crc(&self.phase2_slice)
        )
    }

    /// Moves the pruning tables into private huge-page memory (see
    /// [`Table::into_private_hugepages`]): faster lookups, no sharing between processes.
    pub fn into_private_hugepages(self) -> Result<Tables, Error> {
        Ok(Tables {
            coords: self.coords,
            phase1: self.phase1.into_private_hugepages()?,
            phase1_moves: self.phase1_moves.into_private_hugepages()?,
            phase2: self.phase2.into_private_hugepages()?,
            phase2_slice: self.phase2_slice.into_private_hugepages()?,
            optimal_bound: self
                .optimal_bound
                .map(mod3::Mod3Table::into_private_hugepages)
                .transpose()?,
        })
    }

    /// Maps the mod-3 table of `kind` in `dir` (huge, giant or colossal) when it has been built
    /// (`cubefleet tables build --huge`, ...); `Ok(None)` when there is no such file, an error
    /// when there is a bad one.
    pub fn load_mod3(&self, dir: &Path, kind: TableKind) -> Result<Option<mod3::Mod3Table>, Error> {
        mod3::Mod3Table::load(dir, kind, &self.coords)
    }

    /// Loads the tables in `dir`, building missing ones first.
    pub fn load_or_build(dir: &Path, progress: ProgressFn<'_>) -> Result<Tables, Error> {
        Self::build(dir, &TWO_PHASE_TABLES, false, progress)?;
        Self::load(dir)
    }
}

/// Refuses a mod-3 table whose build reached other than all of its `n` entries (`dist`: the
/// entries at each depth). Tables without a published distribution are checked so, and by the
/// tests (`worker/tests/optimal_huge.rs`).
fn check_reached(dir: &Path, kind: TableKind, dist: &[u64], n: usize) -> Result<(), Error> {
    let reached: u64 = dist.iter().sum();
    if reached == n as u64 {
        return Ok(());
    }
    Err(Error::BadTable {
        path: dir.join(kind.file_name()),
        reason: format!(
            "the build reached {reached} of {n} entries (a bug; the file was not written)"
        ),
    })
}

/// Hints the CPU to load `table[index]` into cache.
#[inline(always)]
pub fn prefetch<T>(table: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(p) = table.get(index) {
        // SAFETY: prefetching is only a hint and never faults; `p` points into `table`, and SSE
        // is part of the x86_64 baseline.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (p as *const T).cast::<i8>(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, index);
}
