//! Read-only arrays for random lookups that can move, all together, into memory backed by
//! transparent huge pages.
//!
//! The coordinate tables ([`crate::CoordTables`], about 15 MB) are read at random by every
//! search node next to the big memory-mapped pruning tables. On the heap they sit on 4 KB pages,
//! some 4,000 of them, more than the TLB holds beside the pruning tables' entries, so many
//! lookups pay a page walk. [`relocate`] copies them into one anonymous mapping advised for huge
//! pages: seven or eight 2 MB pages (`AnonHugePages` of a search process showed 14 MB).

use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::{Mmap, MmapMut};

/// What keeps a [`Lookup`]'s elements alive.
enum Owner<T> {
    /// As computed, on the heap.
    Heap { _vec: Vec<T> },
    /// Copied into a mapping shared with other lookups (see [`relocate`]).
    Mapped { _map: Arc<Mmap> },
}

/// A read-only array of `T` (it derefs to `[T]`).
///
/// Invariant: `ptr` points to `len` initialised elements that live as long as `owner` (the
/// heap buffer of the vector, or a range of the mapping, which is aligned for `T`), and nothing
/// writes them.
pub struct Lookup<T: Pod> {
    ptr: NonNull<T>,
    len: usize,
    owner: Owner<T>,
}

// SAFETY: the elements are `Send + Sync` values owned by the lookup (or by a mapping it shares,
// which nothing writes), so sharing or sending the lookup shares or sends plain read-only data.
unsafe impl<T: Pod> Send for Lookup<T> {}
// SAFETY: as above; `Lookup` has no interior mutability.
unsafe impl<T: Pod> Sync for Lookup<T> {}

impl<T: Pod> From<Vec<T>> for Lookup<T> {
    fn from(mut v: Vec<T>) -> Self {
        Lookup {
            // a vector's buffer is never null (dangling but aligned when empty) and does not
            // move when the vector does
            ptr: NonNull::new(v.as_mut_ptr()).expect("a vector's pointer is not null"),
            len: v.len(),
            owner: Owner::Heap { _vec: v },
        }
    }
}

impl<T: Pod> Default for Lookup<T> {
    /// An empty lookup.
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<T: Pod> Deref for Lookup<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: by the invariant, `ptr` points to `len` live, initialised, unwritten elements.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Pod> Lookup<T> {
    /// True when the elements live in a shared mapping (after [`relocate`]).
    pub fn is_mapped(&self) -> bool {
        matches!(self.owner, Owner::Mapped { .. })
    }
}

/// A [`Lookup`] of some element type, as [`relocate`] handles them.
pub trait Relocate {
    /// The size of the elements in bytes.
    fn byte_len(&self) -> usize;
    /// The elements as bytes.
    fn bytes(&self) -> &[u8];
    /// Points at the `byte_len` bytes at `map[offset..]` from now on (where [`Relocate::bytes`]
    /// were copied, or a file holds them), which `map` keeps alive. Refused (false, nothing
    /// changed) when those bytes are not inside `map` or are no whole number of elements, or
    /// `offset` is not a multiple of [`ALIGN`].
    ///
    /// # Safety
    /// Nothing may write `map[offset..offset + byte_len]` while the lookup lives.
    unsafe fn point_at(&mut self, map: Arc<Mmap>, offset: usize, byte_len: usize) -> bool;
}

impl<T: Pod> Relocate for Lookup<T> {
    fn byte_len(&self) -> usize {
        std::mem::size_of_val::<[T]>(self)
    }

    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }

    unsafe fn point_at(&mut self, map: Arc<Mmap>, offset: usize, byte_len: usize) -> bool {
        if !offset.is_multiple_of(ALIGN) {
            return false;
        }
        let Some(bytes) = offset
            .checked_add(byte_len)
            .and_then(|end| map.get(offset..end))
        else {
            return false;
        };
        // a checked cast: refused unless the bytes are aligned for `T` and a whole number of
        // elements (any bit pattern is a valid `T: Pod`)
        let Ok(elements) = bytemuck::try_cast_slice::<u8, T>(bytes) else {
            return false;
        };
        // `map` is kept in `owner`, so the elements live as long as `self` (moving the `Arc`
        // does not move the mapping), and the caller vouches that nothing writes them
        self.ptr = NonNull::from(elements).cast();
        self.len = elements.len();
        self.owner = Owner::Mapped { _map: map };
        true
    }
}

/// Each lookup starts at a multiple of this (a cache line), which also aligns every element.
pub const ALIGN: usize = 64;

/// Where each of lookups of `byte_lens` bytes starts when they are laid out one after another
/// from `base` (a multiple of [`ALIGN`]), each at a multiple of [`ALIGN`]; and where the last
/// one ends, rounded up to [`ALIGN`].
pub fn layout(base: usize, byte_lens: impl IntoIterator<Item = usize>) -> (Vec<usize>, usize) {
    let mut offsets = Vec::new();
    let mut total = base;
    for len in byte_lens {
        offsets.push(total);
        total += len.div_ceil(ALIGN) * ALIGN;
    }
    (offsets, total)
}

/// Copies `lookups` into one anonymous mapping advised for transparent huge pages (one hint
/// before the first write, so the kernel hands out 2 MB pages where it can) and points them
/// there; their heap copies are freed. Without huge pages the copy works the same.
pub fn relocate(lookups: &mut [&mut dyn Relocate]) -> std::io::Result<()> {
    let (offsets, total) = layout(0, lookups.iter().map(|l| l.byte_len()));
    let mut map = MmapMut::map_anon(total.max(1))?;
    #[cfg(target_os = "linux")]
    {
        // only a hint
        let _ = map.advise(memmap2::Advice::HugePage);
    }
    for (l, &at) in lookups.iter().zip(&offsets) {
        map[at..at + l.byte_len()].copy_from_slice(l.bytes());
    }
    let map = Arc::new(map.make_read_only()?);
    for (l, &at) in lookups.iter_mut().zip(&offsets) {
        let len = l.byte_len();
        // SAFETY: the mapping is read-only from now on.
        let moved = unsafe { l.point_at(map.clone(), at, len) };
        debug_assert!(
            moved,
            "a lookup's place in its own layout is inside the mapping"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-field struct like the tables' packed sym-coordinates.
    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(transparent)]
    struct Packed(u32);

    #[test]
    fn relocated_lookups_read_the_same() {
        let a: Vec<u16> = (0..5000).map(|i| (i * 7) as u16).collect();
        let b: Vec<u32> = (0..333).map(|i| i * 1_000_003).collect();
        let c: Vec<Packed> = (0..17).map(Packed).collect();
        let (mut la, mut lb, mut lc) = (
            Lookup::from(a.clone()),
            Lookup::from(b.clone()),
            Lookup::from(c.clone()),
        );
        let mut empty = Lookup::<u16>::from(Vec::new());
        relocate(&mut [&mut la, &mut empty, &mut lb, &mut lc]).expect("anonymous memory");
        assert!(la.is_mapped() && lb.is_mapped() && lc.is_mapped() && empty.is_mapped());
        assert_eq!(&la[..], &a[..]);
        assert_eq!(&lb[..], &b[..]);
        assert_eq!(&lc[..], &c[..]);
        assert!(empty.is_empty());
        assert_eq!(lb.as_ptr() as usize % ALIGN, 0);
    }
}
