//! Memory shared with a worker process: a memory file (`memfd`) mapped by
//! both ([`SharedRegion`]), and one-off sealed memory files for a single
//! large payload ([`sealed_file`], [`read_sealed`]).
//!
//! A region is a header page of 64-bit words that both processes only ever
//! touch atomically ([`SharedRegion::word`]), followed by a data area that
//! is only ever copied into or out of ([`SharedRegion::write`],
//! [`SharedRegion::read`]), bounds-checked. No reference to shared bytes
//! ever leaves this module, so the other process changing them can only
//! make a copy contain other bytes, never break this process's memory
//! safety. The file is sealed against shrinking before either side maps
//! it, so an access within its size can never fault (`SIGBUS`).

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};

use rustix::fs::{MemfdFlags, SealFlags};
use rustix::mm::{MapFlags, ProtFlags};

/// The header page: atomic words only.
pub const HEADER: usize = 4096;
/// Atomic words in the header page.
pub const WORDS: usize = HEADER / 8;

/// An access outside the data area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{len} bytes at offset {offset} are outside the shared data area of {size} bytes")]
pub struct OutOfBounds {
    /// Where the access starts in the data area.
    pub offset: usize,
    /// How many bytes it covers.
    pub len: usize,
    /// The data area's size.
    pub size: usize,
}

/// A memory file mapped shared (read and write) into this process.
#[derive(Debug)]
pub struct SharedRegion {
    base: NonNull<u8>,
    /// Header page plus data area.
    len: usize,
    fd: OwnedFd,
}

// SAFETY: the mapping is plain memory owned by this value until `Drop`;
// every access goes through atomics or bounds-checked copies, which any
// thread may make concurrently.
unsafe impl Send for SharedRegion {}
// SAFETY: as above; `&self` methods never hand out references to the
// bytes.
unsafe impl Sync for SharedRegion {}

impl SharedRegion {
    /// A new zeroed region with a data area of `data` bytes (sparse: pages
    /// cost memory only once touched), sealed against shrinking, growing
    /// and further seals, and mapped. Its descriptor ([`Self::fd`]) is for
    /// the other process, which maps it with [`Self::map`].
    pub fn create(name: &str, data: usize) -> io::Result<Self> {
        let len = HEADER
            .checked_add(data)
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        let fd = rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
        rustix::fs::ftruncate(&fd, len as u64)?;
        rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL)?;
        Self::mapped(fd, len)
    }

    /// Maps a region another process created and passed over: it must be
    /// a memory file sealed against shrinking, with at least the header
    /// page.
    pub fn map(fd: OwnedFd) -> io::Result<Self> {
        let seals = rustix::fs::fcntl_get_seals(&fd)?;
        if !seals.contains(SealFlags::SHRINK) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the shared region is not sealed against shrinking",
            ));
        }
        let size = rustix::fs::fstat(&fd)?.st_size;
        let len =
            usize::try_from(size).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        if len < HEADER {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the shared region is smaller than its header",
            ));
        }
        Self::mapped(fd, len)
    }

    fn mapped(fd: OwnedFd, len: usize) -> io::Result<Self> {
        // SAFETY: a fresh shared mapping of `len` bytes of `fd` at an
        // address the kernel picks; it aliases nothing of this process.
        // `fd` is sealed against shrinking (checked or done by the
        // callers), so every byte below `len` stays backed for the
        // mapping's life.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                &fd,
                0,
            )?
        };
        let base = NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| io::Error::from(io::ErrorKind::AddrNotAvailable))?;
        Ok(Self { base, len, fd })
    }

    /// The memory file, to pass to the other process.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Size of the data area.
    pub fn data_len(&self) -> usize {
        self.len - HEADER
    }

    fn check(&self, offset: usize, len: usize) -> Result<usize, OutOfBounds> {
        let bad = OutOfBounds {
            offset,
            len,
            size: self.data_len(),
        };
        match offset.checked_add(len) {
            Some(end) if end <= self.data_len() => Ok(HEADER + offset),
            _ => Err(bad),
        }
    }

    /// Copies `bytes` into the data area at `offset`.
    pub fn write(&self, offset: usize, bytes: &[u8]) -> Result<(), OutOfBounds> {
        let at = self.check(offset, bytes.len())?;
        // SAFETY: `at..at + len` lies inside the mapping (checked) and past
        // the header page, so it never overlaps an atomic word; `bytes` is
        // private memory of this process, which the mapping cannot
        // overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.as_ptr().add(at), bytes.len());
        }
        Ok(())
    }

    /// Copies `len` bytes of the data area at `offset` into a new buffer.
    pub fn read(&self, offset: usize, len: usize) -> Result<Vec<u8>, OutOfBounds> {
        let at = self.check(offset, len)?;
        let mut out = Vec::with_capacity(len);
        // SAFETY: the source lies inside the mapping (checked), past the
        // header page; the destination is the new buffer's spare capacity
        // of at least `len` bytes, which `set_len` then covers exactly. Any
        // bytes are valid `u8`s, whatever the other process wrote.
        unsafe {
            std::ptr::copy_nonoverlapping(self.base.as_ptr().add(at), out.as_mut_ptr(), len);
            out.set_len(len);
        }
        Ok(out)
    }

    /// Copies `out.len()` bytes of the data area at `offset` into `out`.
    pub fn read_into(&self, offset: usize, out: &mut [u8]) -> Result<(), OutOfBounds> {
        let at = self.check(offset, out.len())?;
        // SAFETY: the source lies inside the mapping (checked), past the
        // header page; `out` is private memory of this process, which the
        // mapping cannot overlap. Any bytes are valid `u8`s.
        unsafe {
            std::ptr::copy_nonoverlapping(self.base.as_ptr().add(at), out.as_mut_ptr(), out.len());
        }
        Ok(())
    }

    /// The first half of header word `index` (`< WORDS`) as a 32-bit
    /// atomic, for a futex. A word used this way must never be used
    /// through [`Self::word`] as well (by either process's code); the
    /// callers fix which words are which.
    pub fn word32(&self, index: usize) -> Option<&AtomicU32> {
        if index >= WORDS {
            return None;
        }
        // SAFETY: as for `word`: inside the header page, 4-aligned (8 even),
        // alive as long as `&self`, only ever accessed atomically; callers
        // never access the same word through both methods.
        Some(unsafe { AtomicU32::from_ptr(self.base.as_ptr().add(index * 8).cast::<u32>()) })
    }

    /// Header word `index` (`< WORDS`), only ever accessed atomically.
    pub fn word(&self, index: usize) -> Option<&AtomicU64> {
        if index >= WORDS {
            return None;
        }
        // SAFETY: the word is inside the header page of the mapping, 8-byte
        // aligned (the mapping is page-aligned), lives as long as `&self`,
        // and header words are only ever accessed through this method, as
        // atomics, by both processes (the data methods cannot reach the
        // header page).
        Some(unsafe { AtomicU64::from_ptr(self.base.as_ptr().add(index * 8).cast::<u64>()) })
    }
}

impl Drop for SharedRegion {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `mapped` with exactly this base
        // and length, and no reference into it outlives `&self`.
        if let Err(e) = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len) } {
            debug_assert!(false, "munmap failed: {e}");
        }
    }
}

/// A memory file holding exactly `bytes`, sealed against any change
/// (writes, size, further seals): what the other process reads is what
/// was written.
pub fn sealed_file(name: &str, bytes: &[u8]) -> io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
    let mut written = 0;
    while written < bytes.len() {
        match rustix::io::write(&fd, &bytes[written..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    rustix::fs::fcntl_add_seals(
        &fd,
        SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL,
    )?;
    Ok(fd)
}

/// Reads a sealed memory file of exactly `len` bytes (refused unless it
/// is sealed against writes and size changes, and has that size).
pub fn read_sealed(fd: &OwnedFd, len: usize) -> io::Result<Vec<u8>> {
    let seals = rustix::fs::fcntl_get_seals(fd)?;
    if !seals.contains(SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the payload file is not sealed",
        ));
    }
    let size = rustix::fs::fstat(fd)?.st_size;
    if u64::try_from(size).ok() != Some(len as u64) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the payload file does not have the announced size",
        ));
    }
    let mut out = vec![0u8; len];
    let mut done = 0;
    while done < len {
        match rustix::io::pread(fd, &mut out[done..], done as u64) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn both_mappings_see_the_same_bytes_and_words() {
        let a = SharedRegion::create("test-region", 1 << 20).expect("create");
        let fd = a.fd().try_clone_to_owned().expect("dup");
        let b = SharedRegion::map(fd).expect("map");
        assert_eq!(b.data_len(), 1 << 20);
        a.write(4096, b"hello").expect("write");
        assert_eq!(b.read(4096, 5).expect("read"), b"hello");
        a.word(3).expect("word").fetch_or(0b101, Ordering::AcqRel);
        assert_eq!(b.word(3).expect("word").swap(0, Ordering::AcqRel), 0b101);
        assert!(a.word(WORDS).is_none());
        assert!(b.read((1 << 20) - 2, 3).is_err());
        assert!(a.write(usize::MAX, b"x").is_err());
    }

    #[test]
    fn an_unsealed_file_is_not_mapped_and_sealed_files_read_back() {
        let fd = rustix::fs::memfd_create("x", MemfdFlags::CLOEXEC).expect("memfd");
        rustix::fs::ftruncate(&fd, 8192).expect("size");
        assert!(SharedRegion::map(fd).is_err());
        let sealed = sealed_file("payload", b"bytes").expect("sealed");
        assert_eq!(read_sealed(&sealed, 5).expect("read"), b"bytes");
        assert!(read_sealed(&sealed, 4).is_err());
        assert!(rustix::io::write(&sealed, b"more").is_err());
    }
}
