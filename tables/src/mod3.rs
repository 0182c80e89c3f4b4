//! A mod-3 table loaded for the searches ([`Mod3Table`]): the huge, giant or colossal table
//! memory-mapped, with the index its lookups need and the exact depth found by walking to the
//! goal. The tables themselves and their builds: [`crate::huge`], [`crate::colossal`].

use memmap2::Mmap;

use crate::colossal::{ColossalIndex, Rows, COLOSSAL_BYTES, COLOSSAL_ENCODING, N_COLOSSAL};
use crate::coord::N_PERM_4;
use crate::error::Error;
use crate::file::{Table, TableKind};
use crate::huge::{get2, giant_index, huge_index, FlipConj, Mod3Coords, N_GIANT, N_HUGE};
use crate::moves::N_MOVE;
use crate::movetable::CoordTables;

/// How a [`Mod3Table`] is indexed: [`huge_index`] (with the flip conjugation it needs),
/// [`giant_index`] (both with 2-bit entries, four to a byte), or the colossal table's
/// [`ColossalIndex`] (its entries and floors in [`Rows`]).
enum Layout {
    Huge(FlipConj),
    Giant,
    Colossal(Box<ColossalIndex>),
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
        let Some(table) = Self::open(dir, kind)? else {
            return Ok(None);
        };
        let layout = match kind {
            TableKind::Giant => Layout::Giant,
            TableKind::Colossal => Layout::Colossal(Box::new(ColossalIndex::compute(coords))),
            _ => Layout::Huge(FlipConj::compute()),
        };
        Ok(Some(Mod3Table { table, layout }))
    }

    /// `dir`'s file of `kind`, mapped, when its header and stamp pass and it has the entry
    /// count, encoding and payload length of this version's table of `kind` (else refused
    /// with "rebuild"); `Ok(None)` when there is no such file.
    fn open(dir: &std::path::Path, kind: TableKind) -> Result<Option<Table<Mmap>>, Error> {
        let (entries, encoding, bytes) = match kind {
            TableKind::Huge => (N_HUGE, 2, N_HUGE.div_ceil(4)),
            TableKind::Giant => (N_GIANT, 2, N_GIANT.div_ceil(4)),
            TableKind::Colossal => (N_COLOSSAL, COLOSSAL_ENCODING, COLOSSAL_BYTES),
            other => panic!("{other:?} is not a mod-3 table"),
        };
        let table = match Table::open(dir, kind) {
            Ok(table) => table,
            Err(Error::MissingTable(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
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
            return Ok(Some(table));
        };
        Err(Error::BadTable {
            path: dir.join(kind.file_name()),
            reason,
        })
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

    /// The colossal table's index and rows, when this is the colossal table.
    #[inline]
    pub fn colossal(&self) -> Option<(&ColossalIndex, Rows<'_>)> {
        match &self.layout {
            Layout::Colossal(c) => Some((c, Rows::new(self.table.payload()))),
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
            Layout::Colossal(c) => c.index(x),
        }
    }

    /// Starts loading entry `index`.
    #[inline]
    pub fn prefetch(&self, index: usize) {
        match self.layout {
            Layout::Colossal(_) => Rows::new(self.table.payload()).prefetch(index),
            _ => crate::prefetch(self.table.payload(), index / 4),
        }
    }

    /// The depth mod 3 (`0..3`) of entry `index`.
    #[inline]
    pub fn mod3(&self, index: usize) -> u8 {
        match self.layout {
            Layout::Colossal(_) => Rows::new(self.table.payload()).mod3(index),
            _ => get2(self.table.payload(), index),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A colossal table of another size (here a planted 4-entry file), of the first
    /// versions' layout (2-bit entries, the floors in a file of their own) or cut short is
    /// refused with what to do, never read; so is a huge table of the colossal layout.
    #[test]
    fn tables_of_another_layout_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let n = N_COLOSSAL as u64;
        let planted = [
            (
                TableKind::Colossal,
                (4, COLOSSAL_ENCODING),
                1,
                "has 4 entries",
            ),
            // the first versions' colossal table: the right entry count, and no more
            (
                TableKind::Colossal,
                (n, 2),
                1,
                "entry encoding 2, expected 3",
            ),
            // the right header over a payload cut short
            (
                TableKind::Colossal,
                (n, COLOSSAL_ENCODING),
                64,
                "has 64 bytes of entries",
            ),
            (
                TableKind::Huge,
                (N_HUGE as u64, COLOSSAL_ENCODING),
                1,
                "entry encoding 3, expected 2",
            ),
        ];
        for (kind, (entries, encoding), len, reason) in planted {
            Table::in_memory(kind, entries, encoding, vec![0u8; len])
                .write_to(dir.path())
                .expect("written");
            let err = Mod3Table::open(dir.path(), kind).err().expect("refused");
            let err = err.to_string();
            assert!(err.contains(reason), "{err}");
            let rebuild = format!(
                "rebuild with `cubefleet tables build --{} --force`",
                kind.name()
            );
            assert!(err.contains(&rebuild), "{err}");
        }
        assert!(Mod3Table::open(dir.path(), TableKind::Giant)
            .expect("no file is no error")
            .is_none());
    }
}
