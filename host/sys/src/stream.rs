//! Standard input and output as non-blocking streams for the async
//! runtime's reactor, so the host reads requests and writes answers on its
//! own worker threads instead of handing every chunk to a thread of its
//! own and waking it.
//!
//! Only pipes and sockets are switched: a terminal or a regular file keeps
//! its blocking mode (a terminal's description is shared with the shell;
//! regular files cannot be polled). The flag lives on the open file
//! description, which a parent may share, so the mode the descriptor had is
//! put back when the stream is dropped.
//!
//! What it must never do: switch a descriptor it cannot poll, or leave one
//! non-blocking after the host is done with it.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use rustix::fs::{FileType, OFlags};

/// A pipe or socket end in non-blocking mode; the mode it had comes back
/// when this is dropped.
#[derive(Debug)]
pub struct NonBlocking {
    file: File,
    before: OFlags,
}

impl NonBlocking {
    /// Switches `file` to non-blocking mode if it is a pipe or a socket;
    /// anything else is handed back unchanged.
    pub fn new(file: File) -> Result<Self, File> {
        let pollable = rustix::fs::fstat(&file).is_ok_and(|st| {
            matches!(
                FileType::from_raw_mode(st.st_mode),
                FileType::Fifo | FileType::Socket
            )
        });
        if !pollable {
            return Err(file);
        }
        let Ok(before) = rustix::fs::fcntl_getfl(&file) else {
            return Err(file);
        };
        if rustix::fs::fcntl_setfl(&file, before | OFlags::NONBLOCK).is_err() {
            return Err(file);
        }
        Ok(Self { file, before })
    }

    /// A close-on-exec duplicate of standard input, switched when it is a
    /// pipe or a socket (else handed back as a plain `File`).
    pub fn stdin() -> io::Result<Result<Self, File>> {
        let dup = rustix::io::fcntl_dupfd_cloexec(rustix::stdio::stdin(), 3)?;
        Ok(Self::new(File::from(dup)))
    }
}

/// Registers `stream` with the reactor of the Tokio runtime this thread is
/// in (panics outside one, as Tokio does).
pub fn register(stream: NonBlocking) -> io::Result<tokio::io::unix::AsyncFd<NonBlocking>> {
    // SAFETY: a `NonBlocking` owns its descriptor (its `File`) for its
    // whole life and `as_raw_fd` always returns that same descriptor; it is
    // closed only when the stream is dropped, which the `AsyncFd` does
    // after deregistering it.
    unsafe { tokio::io::unix::AsyncFd::register(stream) }.map_err(io::Error::from)
}

impl Drop for NonBlocking {
    fn drop(&mut self) {
        let _ = rustix::fs::fcntl_setfl(&self.file, self.before);
    }
}

impl Read for &NonBlocking {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&self.file).read(buf)
    }
}

impl Write for &NonBlocking {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&self.file).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsFd for NonBlocking {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl AsRawFd for NonBlocking {
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_are_switched_and_put_back() {
        let (r, w) = std::io::pipe().expect("pipe");
        let r = File::from(std::os::fd::OwnedFd::from(r));
        let probe = r.try_clone().expect("dup");
        let nb = NonBlocking::new(r).expect("a pipe is switched");
        let mut buf = [0u8; 4];
        let e = (&nb).read(&mut buf).expect_err("nothing to read");
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        drop(nb);
        let flags = rustix::fs::fcntl_getfl(&probe).expect("flags");
        assert!(!flags.contains(OFlags::NONBLOCK), "the mode is put back");
        drop(w);
    }

    #[test]
    fn regular_files_are_left_alone() {
        let f = tempfile_in_tmp();
        let back = NonBlocking::new(f).expect_err("a regular file is not switched");
        let flags = rustix::fs::fcntl_getfl(&back).expect("flags");
        assert!(!flags.contains(OFlags::NONBLOCK));
    }

    fn tempfile_in_tmp() -> File {
        let dir = std::env::temp_dir().join(format!("devicerail-sys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("f");
        let f = File::create(&path).expect("file");
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_dir(&dir);
        f
    }
}
