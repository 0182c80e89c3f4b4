//! A mod-3 table loaded for the searches ([`Mod3Table`]): the huge, giant or colossal table
//! memory-mapped, with the index its lookups need and the exact depth found by walking to the
//! goal. The tables themselves and their builds: [`crate::huge`], [`crate::colossal`].

use memmap2::Mmap;

use crate::colossal::{
    ColossalIndex, Floors, FLOOR_BYTES, FLOOR_ENCODING, N_COLOSSAL, N_FLOOR_GROUPS,
};
use crate::coord::N_PERM_4;
use crate::error::Error;
use crate::file::{Table, TableKind};
use crate::huge::{get2, giant_index, huge_index, FlipConj, Mod3Coords, N_GIANT, N_HUGE};
use crate::moves::N_MOVE;
use crate::movetable::CoordTables;

/// How a [`Mod3Table`] is indexed: [`huge_index`] (with the flip conjugation it needs),
/// [`giant_index`], or the colossal table's [`ColossalIndex`] (with its [`Floors`]).
enum Layout {
    Huge(FlipConj),
    Giant,
    Colossal(Box<(ColossalIndex, Floors)>),
}

/// The huge, giant or colossal table, memory-mapped, with what its lookups need.
pub struct Mod3Table {
    table: Table<Mmap>,
    layout: Layout,
}

impl Mod3Table {
    /// Maps `dir`'s table of `kind` ([`TableKind::Huge`], [`TableKind::Giant`] or
    /// [`TableKind::Colossal`]; any other kind is a caller's bug and panics) if it exists
    /// (checking header and stamp); `Ok(None)` when there is no such file. `coords` serve the
    /// colossal table's own index tables, computed here.
    pub fn load(
        dir: &std::path::Path,
        kind: TableKind,
        coords: &CoordTables,
    ) -> Result<Option<Mod3Table>, Error> {
        let n = match kind {
            TableKind::Huge => N_HUGE,
            TableKind::Giant => N_GIANT,
            TableKind::Colossal => N_COLOSSAL,
            other => panic!("{other:?} is not a mod-3 table"),
        };
        match Table::open(dir, kind) {
            Ok(table) => {
                let rebuild = format!("rebuild with `cubefleet tables build --{}`", kind.name());
                let table = sized(dir, kind, table, (n, 2, n.div_ceil(4)), &rebuild)?;
                let layout = match kind {
                    TableKind::Giant => Layout::Giant,
                    TableKind::Colossal => {
                        let floors = Floors::new(Self::floor_file(dir)?);
                        Layout::Colossal(Box::new((ColossalIndex::compute(coords), floors)))
                    }
                    _ => Layout::Huge(FlipConj::compute()),
                };
                Ok(Some(Mod3Table { table, layout }))
            }
            Err(Error::MissingTable(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The colossal table's floor file, which its build writes beside it: refused with
    /// "rebuild" when missing, of another size, or in another encoding (an earlier version's).
    fn floor_file(dir: &std::path::Path) -> Result<Table<Mmap>, Error> {
        let kind = TableKind::ColossalFloor;
        let rebuild = "rebuild with `cubefleet tables build --colossal --force`";
        let table = Table::open(dir, kind).map_err(|e| match e {
            Error::MissingTable(path) => Error::BadTable {
                path,
                reason: format!("is missing beside colossal.cft; {rebuild}"),
            },
            other => other,
        })?;
        let shape = (N_FLOOR_GROUPS, FLOOR_ENCODING, FLOOR_BYTES);
        sized(dir, kind, table, shape, rebuild)
    }

    /// Moves the table into private huge-page memory (see [`Table::into_private_hugepages`]):
    /// lookups spread over gigabytes miss the TLB far less often.
    pub fn into_private_hugepages(self) -> Result<Mod3Table, Error> {
        Ok(Mod3Table {
            table: self.table.into_private_hugepages()?,
            layout: self.layout,
        })
    }

    /// Which table this is.
    pub fn kind(&self) -> TableKind {
        match self.layout {
            Layout::Huge(_) => TableKind::Huge,
            Layout::Giant => TableKind::Giant,
            Layout::Colossal(_) => TableKind::Colossal,
        }
    }

    /// The colossal table's index and floors, when this is the colossal table.
    #[inline]
    pub fn colossal(&self) -> Option<&(ColossalIndex, Floors)> {
        match &self.layout {
            Layout::Colossal(c) => Some(c),
            _ => None,
        }
    }

    /// The index of the entry of the cube with coordinates `x`.
    #[inline]
    pub fn index(&self, coords: &CoordTables, x: &Mod3Coords) -> usize {
        match &self.layout {
            Layout::Giant => giant_index(
                coords,
                x.slice_sorted / N_PERM_4,
                x.flip,
                x.twist,
                x.ud_corners,
            ),
            Layout::Huge(fc) => huge_index(coords, fc, x.slice_sorted, x.flip, x.twist),
            Layout::Colossal(c) => c.0.index(x),
        }
    }

    /// The packed entries: entry `index` is in byte `index / 4` (for prefetching).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        self.table.payload()
    }

    /// The depth mod 3 (`0..3`) of entry `index`.
    #[inline]
    pub fn mod3(&self, index: usize) -> u8 {
        get2(self.table.payload(), index)
    }

    /// The exact depth of the cube with coordinates `x`, found by walking to the goal: from
    /// depth `d` some move always leads to an entry holding `(d - 1) mod 3`.
    pub fn depth(&self, coords: &CoordTables, x: &Mod3Coords) -> u32 {
        let mut x = *x;
        let mut depth = 0;
        // the goal is alone in its entry (index 0): conjugating it by any symmetry gives itself
        loop {
            let i = self.index(coords, &x);
            if i == 0 {
                break;
            }
            let want = (self.mod3(i) + 2) % 3;
            let step = (0..N_MOVE)
                .map(|m| x.apply(coords, m))
                .find(|n| self.mod3(self.index(coords, n)) == want);
            match step {
                Some(n) => x = n,
                // unreachable for a table that passed its checksum; the depth so far is still a
                // valid lower bound
                None => break,
            }
            depth += 1;
        }
        depth
    }
}

/// `table` (of `kind`, in `dir`) when its header says it has the `(entries, encoding, bytes)`
/// of `shape` (at least `bytes` of payload); refused with `rebuild` (what to do) otherwise.
fn sized(
    dir: &std::path::Path,
    kind: TableKind,
    table: Table<Mmap>,
    shape: (usize, u32, usize),
    rebuild: &str,
) -> Result<Table<Mmap>, Error> {
    let (entries, encoding, bytes) = shape;
    let h = table.header();
    let reason = if h.entries != entries as u64 {
        format!("has {} entries, expected {entries}", h.entries)
    } else if h.bits != encoding {
        format!(
            "has entry encoding {}, expected {encoding} (written by another version)",
            h.bits
        )
    } else if table.payload().len() < bytes {
        format!(
            "has {} bytes of entries, expected {bytes}",
            table.payload().len()
        )
    } else {
        return Ok(table);
    };
    Err(Error::BadTable {
        path: dir.join(kind.file_name()),
        reason: format!("{reason}; {rebuild}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A colossal table's floor file that is missing, of another size (here a planted 4-entry
    /// file), of the first versions' encoding or cut short is refused with what to do, never
    /// read.
    #[test]
    fn floor_files_missing_or_of_another_size_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let refusal = || {
            let err = Mod3Table::floor_file(dir.path()).err().expect("refused");
            assert!(err.to_string().contains("--colossal --force"), "{err}");
            err.to_string()
        };
        assert!(refusal().contains("missing beside colossal.cft"));
        let n = N_FLOOR_GROUPS as u64;
        let planted = [
            // another size
            ((4, 2, vec![0u8]), "has 4 entries"),
            // the first versions' floors (2-bit excesses): the right entry count, and no more
            ((n, 2, vec![0u8]), "entry encoding 2, expected 3"),
            // the right header over a payload cut short
            (
                (n, FLOOR_ENCODING, vec![0u8; 64]),
                "has 64 bytes of entries",
            ),
        ];
        for ((entries, encoding, payload), reason) in planted {
            Table::in_memory(TableKind::ColossalFloor, entries, encoding, payload)
                .write_to(dir.path())
                .expect("written");
            let err = refusal();
            assert!(err.contains(reason), "{err}");
        }
    }
}
