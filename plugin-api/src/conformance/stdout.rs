//! Watches the process's stdout (file descriptor 1) while the suite runs
//! a driver: descriptor 1 is pointed at a temporary file and restored
//! afterwards, so whatever a driver prints (its own `println!`, a C
//! library's `printf`) is caught instead of reaching the terminal. It
//! never touches stdin or stderr.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, OwnedFd};

/// Descriptor 1 pointed at a temporary file, until [`Capture::finish`].
pub(crate) struct Capture {
    saved: OwnedFd,
    file: File,
}

impl Capture {
    /// Points descriptor 1 at a fresh temporary file.
    pub(crate) fn start() -> std::io::Result<Self> {
        let _ = std::io::stdout().flush();
        let file = tempfile::tempfile()?;
        let saved = rustix::io::dup(std::io::stdout().as_fd())?;
        rustix::stdio::dup2_stdout(&file)?;
        Ok(Self { saved, file })
    }

    /// Restores descriptor 1 and returns what was written meanwhile.
    pub(crate) fn finish(mut self) -> std::io::Result<Vec<u8>> {
        let _ = std::io::stdout().flush();
        rustix::stdio::dup2_stdout(&self.saved)?;
        let mut out = Vec::new();
        self.file.seek(SeekFrom::Start(0))?;
        self.file.read_to_end(&mut out)?;
        Ok(out)
    }
}

/// What a report says about `bytes` found on stdout.
pub(crate) fn describe(bytes: &[u8]) -> String {
    const SHOWN: usize = 300;
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(SHOWN)]);
    let more = if bytes.len() > SHOWN { " …" } else { "" };
    let harness = text
        .lines()
        .any(|l| l.starts_with("test ") && (l.ends_with(" ... ok") || l.ends_with(" ... FAILED")));
    let hint = if harness {
        " (lines like `test x ... ok` come from the test harness: keep the conformance test alone in its file)"
    } else {
        ""
    };
    format!(
        "{} bytes were written to stdout: {text:?}{more}{hint}",
        bytes.len()
    )
}
