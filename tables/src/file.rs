//! The table file format and memory-mapped loading.
//!
//! A table file is a 64-byte header followed by the payload (so the payload is 64-byte aligned in
//! a mapping, which starts page-aligned). All integers little-endian.
//!
//! | offset | size | field |
//! | ---: | ---: | --- |
//! | 0 | 8 | magic `CUBEFLT\0` |
//! | 8 | 4 | format version ([`FORMAT_VERSION`]) |
//! | 12 | 4 | table kind ([`TableKind`]) |
//! | 16 | 8 | number of entries |
//! | 24 | 8 | payload length in bytes |
//! | 32 | 4 | CRC-32 of the payload |
//! | 36 | 4 | entry encoding: bits per entry (8: the depth itself; 2: depth mod 3; 40: phase-1 move deltas; 0: no entries, the coordinate tables), or 3 for the colossal table's rows (64 bytes per 256 entries: base-3 residues five to a byte, then the row's floors; [`crate::colossal::Rows`]) |
//! | 40 | 4 | endianness check `0x01020304` |
//! | 44 | 16 | reserved, zero |
//! | 60 | 4 | CRC-32 of bytes 0..60 |
//!
//! Files are written to `NAME.tmp`, synced, renamed over `NAME`, and the directory synced, so a
//! crash never leaves a half-written file under the real name. Loading checks every field and
//! refuses anything that does not match.
//!
//! The payload checksum (a second of CPU for the ~1 GB of tables) is computed in full by
//! `tables verify`, `tables info` and the first load of a file; a load that found it right
//! leaves a *stamp* beside the file (`NAME.verified`: the file's device, inode, size,
//! modification and status-change times, and its header checksum). A later load whose file
//! still matches its stamp skips the payload checksum: any write, truncation, rename or
//! replacement of the file changes one of those, and then the checksum runs again (a
//! mismatch is refused with "rebuild"). Timestamps are coarse (a few milliseconds), so a stamp
//! is written only for a file last modified more than [`STAMP_SETTLE`] before: a change within
//! the same tick as the verified contents could not be told apart.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use rayon::prelude::*;

use crate::error::Error;

/// Magic bytes at the start of every table file.
pub const MAGIC: [u8; 8] = *b"CUBEFLT\0";
/// Bumped whenever a coordinate definition, table layout or encoding changes.
pub const FORMAT_VERSION: u32 = 1;
/// Size of the header; the payload starts here.
pub const HEADER_LEN: usize = 64;
const ENDIAN_CHECK: u32 = 0x0102_0304;
/// How long ago a file must have been modified for its verified stamp to be written (far
/// more than a filesystem timestamp's granularity).
pub const STAMP_SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// The tables cubefleet stores in files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum TableKind {
    /// Phase 1: FlipUDSlice class x twist, 140,908,410 entries.
    Phase1 = 1,
    /// Phase 2: corner-permutation class x UD-edge permutation, 111,605,760 entries.
    Phase2 = 2,
    /// Phase 2: corner permutation x UD-slice permutation, 967,680 entries.
    Phase2Slice = 3,
    /// Optimal solver: UDSliceSorted class x flip x twist, 3,529,433,088 entries.
    Huge = 4,
    /// Phase 1, per entry of the phase-1 table: how each of the 18 moves changes the depth
    /// (2 bits per move, 5 bytes per entry).
    Phase1Moves = 5,
    /// Optimal solver: FlipUDSlice class x UDCorners x twist, 9,863,588,700 entries.
    Giant = 6,
    /// The coordinate tables (move, conjugation and sym-reduction tables, ~15 MB), computed
    /// at load when the file is missing and kept here so the next start maps them instead
    /// ([`crate::CoordTables::from_table`]).
    Coords = 7,
    /// Optimal solver: corner class x UDSliceSorted x the other edges' orientations,
    /// 30,199,910,400 entries ([`crate::colossal`]).
    Colossal = 8,
    // 9 was the first colossal tables' floor file, `colossal_floor.cft`: the floors are in the
    // colossal table's rows now, and a colossal build removes the file.
}

impl TableKind {
    /// Every kind, in build order.
    pub const ALL: [TableKind; 8] = [
        TableKind::Phase1,
        TableKind::Phase1Moves,
        TableKind::Phase2,
        TableKind::Phase2Slice,
        TableKind::Huge,
        TableKind::Giant,
        TableKind::Colossal,
        TableKind::Coords,
    ];

    /// The name used in file names, `tables info` and JSON.
    pub fn name(self) -> &'static str {
        match self {
            TableKind::Phase1 => "phase1",
            TableKind::Phase2 => "phase2",
            TableKind::Phase2Slice => "phase2_slice",
            TableKind::Huge => "huge",
            TableKind::Giant => "giant",
            TableKind::Colossal => "colossal",
            TableKind::Phase1Moves => "phase1_moves",
            TableKind::Coords => "coords",
        }
    }

    /// The file name inside the tables directory.
    pub fn file_name(self) -> String {
        format!("{}.cft", self.name())
    }

    fn from_u32(v: u32) -> Option<TableKind> {
        TableKind::ALL.into_iter().find(|k| *k as u32 == v)
    }
}

/// What the header says about a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Which table.
    pub kind: TableKind,
    /// Number of entries.
    pub entries: u64,
    /// Bits per entry.
    pub bits: u32,
    /// CRC-32 of the payload.
    pub checksum: u32,
    /// Payload length in bytes.
    pub payload_len: u64,
}

impl Header {
    fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&(self.kind as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.entries.to_le_bytes());
        h[24..32].copy_from_slice(&self.payload_len.to_le_bytes());
        h[32..36].copy_from_slice(&self.checksum.to_le_bytes());
        h[36..40].copy_from_slice(&self.bits.to_le_bytes());
        h[40..44].copy_from_slice(&ENDIAN_CHECK.to_le_bytes());
        let crc = crc32fast::hash(&h[..60]);
        h[60..64].copy_from_slice(&crc.to_le_bytes());
        h
    }

    fn decode(bytes: &[u8], path: &Path) -> Result<Header, Error> {
        let bad = |reason: String| Error::BadTable {
            path: path.to_path_buf(),
            reason,
        };
        if bytes.len() < HEADER_LEN {
            return Err(bad(format!(
                "file is {} bytes, shorter than its header",
                bytes.len()
            )));
        }
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
        if bytes[0..8] != MAGIC {
            return Err(bad("not a cubefleet table file (bad magic)".into()));
        }
        if crc32fast::hash(&bytes[..60]) != u32_at(60) {
            return Err(bad("header checksum mismatch".into()));
        }
        if u32_at(40) != ENDIAN_CHECK {
            return Err(bad("written on a machine of other endianness".into()));
        }
        let version = u32_at(8);
        if version != FORMAT_VERSION {
            return Err(bad(format!(
                "format version {version}, this build reads version {FORMAT_VERSION}"
            )));
        }
        let kind = TableKind::from_u32(u32_at(12))
            .ok_or_else(|| bad(format!("unknown table kind {}", u32_at(12))))?;
        Ok(Header {
            kind,
            entries: u64_at(16),
            payload_len: u64_at(24),
            checksum: u32_at(32),
            bits: u32_at(36),
        })
    }
}

/// A table's bytes with its header: over bytes just built, or over a read-only mapping.
pub struct Table<B: AsRef<[u8]> = Mmap> {
    header: Header,
    bytes: B,
    offset: usize,
}

impl<B: AsRef<[u8]>> Table<B> {
    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The payload (the entries).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.bytes.as_ref()[self.offset..]
    }

    /// The bytes of the whole file and the payload's offset in them (a multiple of 64).
    pub fn into_parts(self) -> (B, usize) {
        (self.bytes, self.offset)
    }
}

impl<B: AsRef<[u8]>> Table<B> {
    /// A table held in memory (offset 0: `bytes` is the payload).
    pub fn in_memory(kind: TableKind, entries: u64, bits: u32, bytes: B) -> Self {
        let header = Header {
            kind,
            entries,
            bits,
            checksum: parallel_crc32(bytes.as_ref()),
            payload_len: bytes.as_ref().len() as u64,
        };
        Table {
            header,
            bytes,
            offset: 0,
        }
    }

    /// Writes the table to `dir/<kind>.cft` atomically (temp file, fsync, rename, fsync dir).
    pub fn write_to(&self, dir: &Path) -> Result<PathBuf, Error> {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(self.header.kind.file_name());
        // unique per process and call, so concurrent builders never write the same temp file
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = dir.join(format!(
            "{}.{}-{serial}.tmp",
            self.header.kind.file_name(),
            std::process::id()
        ));
        let io = |e| Error::io(&tmp, e);
        let mut f = File::create(&tmp).map_err(io)?;
        f.write_all(&self.header.encode()).map_err(io)?;
        f.write_all(self.payload()).map_err(io)?;
        f.sync_all().map_err(io)?;
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // the written pages sit in the page cache as small folios, which would be mapped
            // with 4 KB pages; dropped now (they are on disk), they are read back as 2 MB folios
            // by the first mapping (`Table::open` asks for huge pages). Only a hint.
            // SAFETY: `f` is an open file descriptor for the whole call; fadvise reads no memory.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
        drop(f);
        fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
        if let Ok(d) = File::open(dir) {
            // directory fsync makes the rename durable; not all platforms allow it
            let _ = d.sync_all();
        }
        Ok(path)
    }
}

impl Table<Mmap> {
    /// Maps `dir/<kind>.cft` read-only and checks header and size, and the payload checksum
    /// unless the file still matches the stamp an earlier full check left (module doc).
    pub fn open(dir: &Path, kind: TableKind) -> Result<Table<Mmap>, Error> {
        Self::open_checking(dir, kind, false)
    }

    /// [`Table::open`] with the payload checksum computed whatever the stamp says (`tables
    /// verify`, `tables info`); a file found right gets its stamp renewed.
    pub fn open_verified(dir: &Path, kind: TableKind) -> Result<Table<Mmap>, Error> {
        Self::open_checking(dir, kind, true)
    }

    fn open_checking(dir: &Path, kind: TableKind, full: bool) -> Result<Table<Mmap>, Error> {
        let path = dir.join(kind.file_name());
        let f = File::open(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::MissingTable(path.clone())
            } else {
                Error::io(&path, e)
            }
        })?;
        // SAFETY: the file is opened read-only and cubefleet never modifies a table file in
        // place (rebuilds write a new file and rename it over the old one, which leaves existing
        // mappings of the old inode intact).
        let map = unsafe { Mmap::map(&f) }.map_err(|e| Error::io(&path, e))?;
        #[cfg(target_os = "linux")]
        {
            // before the checksum touches any page: pages read in from now on come into the
            // page cache as 2 MB folios, which this and every other process maps with huge
            // pages (the lookups are random, and a 4 KB page per lookup misses the TLB); only
            // a hint, and pages already cached keep their size
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        let table = Self::check(map, &path, kind, false)?;
        let stamp = Stamp::of(&f, &table.header);
        let stamped = stamp.as_ref().is_some_and(|s| !full && s.is_stored(&path));
        if !stamped {
            table.verify_payload(&path)?;
            if let Some(s) = stamp {
                // only a hint for the next load: without it, the next load checks in full
                let _ = s.store(&path);
            }
        }
        Ok(table)
    }

    /// Copies the table into private anonymous memory backed by transparent huge pages where
    /// the kernel allows (`madvise(MADV_HUGEPAGE)`). Lookups then miss the TLB far less often,
    /// at the price of one private copy per process instead of the shared page cache.
    pub fn into_private_hugepages(self) -> Result<Table<Mmap>, Error> {
        let len = self.bytes.len();
        let mut anon = memmap2::MmapOptions::new()
            .len(len.max(1))
            .map_anon()
            .map_err(|e| Error::io("anonymous memory", e))?;
        #[cfg(target_os = "linux")]
        {
            // only a hint: without transparent huge pages the copy works the same
            let _ = anon.advise(memmap2::Advice::HugePage);
        }
        anon[..len].copy_from_slice(&self.bytes);
        let bytes = anon
            .make_read_only()
            .map_err(|e| Error::io("anonymous memory", e))?;
        Ok(Table {
            header: self.header,
            bytes,
            offset: self.offset,
        })
    }

    /// Reads only the header of a table file (for `tables info` without verifying).
    pub fn read_header(dir: &Path, kind: TableKind) -> Result<Header, Error> {
        let path = dir.join(kind.file_name());
        let bytes = fs::read(&path)
            .map_err(|e| Error::io(&path, e))
            .map(|mut b| {
                b.truncate(HEADER_LEN);
                b
            })?;
        Header::decode(&bytes, &path)
    }
}

impl<B: AsRef<[u8]>> Table<B> {
    /// Validates `bytes` (a whole file) as a table of `kind`.
    pub fn check(
        bytes: B,
        path: &Path,
        kind: TableKind,
        verify_checksum: bool,
    ) -> Result<Self, Error> {
        let data = bytes.as_ref();
        let header = Header::decode(data, path)?;
        let bad = |reason: String| Error::BadTable {
            path: path.to_path_buf(),
            reason,
        };
        if header.kind != kind {
            return Err(bad(format!(
                "holds table `{}`, expected `{}`",
                header.kind.name(),
                kind.name()
            )));
        }
        let have = (data.len() - HEADER_LEN) as u64;
        if have != header.payload_len {
            return Err(bad(format!(
                "truncated or padded: payload is {have} bytes, header says {}",
                header.payload_len
            )));
        }
        let table = Table {
            header,
            bytes,
            offset: HEADER_LEN,
        };
        if verify_checksum {
            table.verify_payload(path)?;
        }
        Ok(table)
    }

    /// Checks the payload against the header's checksum (on all cores).
    pub fn verify_payload(&self, path: &Path) -> Result<(), Error> {
        if parallel_crc32(self.payload()) != self.header.checksum {
            return Err(Error::BadTable {
                path: path.to_path_buf(),
                reason: "payload checksum mismatch (corrupted)".into(),
            });
        }
        Ok(())
    }
}

/// What identifies a table file's contents as verified without reading them (module doc): its
/// device and inode, size, modification and status-change times (nanoseconds), and header
/// checksum, as one line of text.
struct Stamp(String);

impl Stamp {
    /// The stamp of the open file `f` with header `header`; `None` where file metadata does not
    /// tell (not Unix), or when the file was modified less than [`STAMP_SETTLE`] ago.
    #[cfg(unix)]
    fn of(f: &File, header: &Header) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata().ok()?;
        let age = m.modified().ok()?.elapsed().ok()?;
        if age < STAMP_SETTLE {
            return None;
        }
        Some(Stamp(format!(
            "cubefleet table stamp 1: dev {} ino {} size {} mtime {}.{:09} ctime {}.{:09} crc {:08x}\n",
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
            header.checksum
        )))
    }

    #[cfg(not(unix))]
    fn of(_: &File, _: &Header) -> Option<Stamp> {
        None
    }

    /// Where the stamp of the table file `path` is kept.
    fn path(table: &Path) -> PathBuf {
        let mut p = table.as_os_str().to_owned();
        p.push(".verified");
        PathBuf::from(p)
    }

    /// True when the stamp stored beside `table` is this one.
    fn is_stored(&self, table: &Path) -> bool {
        fs::read(Stamp::path(table)).is_ok_and(|s| s == self.0.as_bytes())
    }

    /// Stores this stamp beside `table` (written to a temporary file and renamed, so a reader
    /// never sees half a stamp).
    fn store(&self, table: &Path) -> std::io::Result<()> {
        let path = Stamp::path(table);
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".{}.tmp", std::process::id()));
        fs::write(&tmp, &self.0)?;
        fs::rename(&tmp, &path)
    }
}

/// CRC-32 of `data`, computed in chunks on all cores and combined (equal to `crc32fast::hash`).
/// Checking a 700 MB table this way takes a fraction of a second instead of most of one.
///
/// The chunks are rayon's tasks, taken by whichever thread is free: when other work holds a
/// core (the coordinate tables computed meanwhile, a batch being submitted), the threads that
/// run check more chunks, and none is left to finish a long share alone.
pub fn parallel_crc32(data: &[u8]) -> u32 {
    const CHUNK: usize = 4 << 20;
    if data.len() <= CHUNK {
        return crc32fast::hash(data);
    }
    // one hasher per chunk, in the chunks' order (an indexed collect keeps it)
    let parts: Vec<crc32fast::Hasher> = data
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut h = crc32fast::Hasher::new();
            h.update(chunk);
            h
        })
        .collect();
    let mut total = crc32fast::Hasher::new();
    for p in &parts {
        total.combine(p);
    }
    total.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_sample(dir: &Path) -> PathBuf {
        let t = Table::in_memory(
            TableKind::Phase2Slice,
            100,
            8,
            (0..100u8).collect::<Vec<_>>(),
        );
        t.write_to(dir).expect("writes")
    }

    #[test]
    fn parallel_crc_equals_plain_crc() {
        let data: Vec<u8> = (0..40_000_000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        assert_eq!(parallel_crc32(&data), crc32fast::hash(&data));
        assert_eq!(
            parallel_crc32(&data[..1000]),
            crc32fast::hash(&data[..1000])
        );
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_sample(dir.path());
        let t = Table::open(dir.path(), TableKind::Phase2Slice).expect("opens");
        assert_eq!(t.payload(), (0..100u8).collect::<Vec<_>>().as_slice());
        let leftovers = fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(leftovers, 1, "only the table file remains");
    }

    /// A file verified once is stamped, and later loads trust the stamp; a change of the file
    /// (here: one payload byte, same size, its modification time put back) no longer matches
    /// it, so the checksum runs again and refuses the file.
    #[test]
    fn a_verified_file_is_stamped_and_a_changed_one_checked_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write_sample(dir.path());
        let settle = |path: &Path| {
            let old = std::time::SystemTime::now() - 2 * STAMP_SETTLE;
            let f = File::options().write(true).open(path).expect("open");
            f.set_modified(old).expect("set mtime");
        };
        // a fresh file is checked in full and not stamped: its timestamp is too recent
        Table::open(dir.path(), TableKind::Phase2Slice).expect("opens");
        assert!(!Stamp::path(&path).exists());
        settle(&path);
        let t = Table::open(dir.path(), TableKind::Phase2Slice).expect("opens");
        let f = File::open(&path).expect("open");
        let stamp = Stamp::of(&f, t.header()).expect("a settled file has a stamp");
        assert!(stamp.is_stored(&path));
        drop(t);
        let mut bytes = fs::read(&path).expect("read");
        bytes[HEADER_LEN + 7] ^= 1;
        fs::write(&path, &bytes).expect("write");
        settle(&path);
        let f = File::open(&path).expect("open");
        let header = Table::check(
            fs::read(&path).expect("read"),
            &path,
            TableKind::Phase2Slice,
            false,
        )
        .expect("the header is intact")
        .header;
        assert!(!Stamp::of(&f, &header).expect("settled").is_stored(&path));
        let e = Table::open(dir.path(), TableKind::Phase2Slice)
            .err()
            .expect("corrupted");
        assert!(e.to_string().contains("rebuild"), "{e}");
        assert!(Table::open_verified(dir.path(), TableKind::Phase2Slice).is_err());
    }

    #[test]
    fn refuses_bad_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write_sample(dir.path());
        let good = fs::read(&path).expect("read");
        let expect_bad = |bytes: &[u8], what: &str| {
            fs::write(&path, bytes).expect("write");
            let e = Table::open(dir.path(), TableKind::Phase2Slice)
                .err()
                .expect(what);
            assert!(e.to_string().contains("rebuild"), "{what}: {e}");
        };
        expect_bad(&good[..good.len() - 1], "truncated");
        let mut corrupt = good.clone();
        corrupt[HEADER_LEN + 5] ^= 1;
        expect_bad(&corrupt, "corrupted");
        let mut version = good.clone();
        version[8] = 99;
        let crc = crc32fast::hash(&version[..60]);
        version[60..64].copy_from_slice(&crc.to_le_bytes());
        expect_bad(&version, "wrong version");
        expect_bad(&good[..10], "shorter than header");
        fs::write(&path, &good).expect("write");
        let e = Table::open(dir.path(), TableKind::Phase1)
            .err()
            .expect("missing");
        assert!(matches!(e, Error::MissingTable(_)));
        // wrong kind: a phase2_slice file renamed to phase1
        fs::rename(&path, dir.path().join("phase1.cft")).expect("rename");
        let e = Table::open(dir.path(), TableKind::Phase1)
            .err()
            .expect("wrong kind");
        assert!(e.to_string().contains("expected `phase1`"));
    }
}
