//! NDJSON framing on stdio: one JSON message per line, at most
//! [`MAX_FRAME_BYTES`] per frame in both directions.
//!
//! The reader never buffers more than one frame: an oversized line is
//! skipped up to its newline and reported as [`Frame::TooLarge`]. The
//! writer is a dedicated thread fed by a bounded queue; it writes frames in
//! order and flushes whenever the queue runs dry.

use std::io::Write;

use devicerail_protocol::MAX_FRAME_BYTES;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tokio::sync::mpsc;

/// One input frame.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line without its `\n` (and without a trailing `\r`).
    Line(Vec<u8>),
    /// A line longer than the limit; its bytes were discarded.
    TooLarge { len: usize },
    /// End of input. A final line without `\n` is returned as a `Line` first.
    Eof,
}

/// Reads frames with a per-frame limit.
pub struct FrameReader<R> {
    inner: R,
    limit: usize,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_FRAME_BYTES)
    }

    pub fn with_limit(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            buf: Vec::with_capacity(4096),
        }
    }

    /// The next non-blank frame.
    pub async fn next(&mut self) -> std::io::Result<Frame> {
        loop {
            self.buf.clear();
            let mut overflow = 0usize;
            let mut saw_newline = false;
            loop {
                let available = self.inner.fill_buf().await?;
                if available.is_empty() {
                    break;
                }
                let (chunk, done) = match memchr(available) {
                    Some(i) => (&available[..i], Some(i + 1)),
                    None => (available, None),
                };
                if overflow > 0 || self.buf.len() + chunk.len() > self.limit + 1 {
                    // +1 leaves room for a trailing '\r' that is stripped.
                    overflow += self.buf.len() + chunk.len();
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(chunk);
                }
                let consumed = done.unwrap_or(available.len());
                self.inner.consume(consumed);
                if done.is_some() {
                    saw_newline = true;
                    break;
                }
            }
            if overflow > 0 {
                return Ok(Frame::TooLarge { len: overflow });
            }
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
            if self.buf.len() > self.limit {
                return Ok(Frame::TooLarge {
                    len: self.buf.len(),
                });
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                if saw_newline {
                    continue;
                }
                return Ok(Frame::Eof);
            }
            return Ok(Frame::Line(std::mem::take(&mut self.buf)));
        }
    }
}

fn memchr(haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == b'\n')
}

/// Sender side of the output queue. Frames must already be newline-free
/// JSON; the writer appends `\n`.
pub type OutputQueue = mpsc::Sender<Vec<u8>>;

/// Starts the writer thread over `out`; it ends when every sender is
/// dropped, after writing everything queued. Returns the queue and the
/// thread handle.
pub fn spawn_writer<W: Write + Send + 'static>(
    out: W,
    depth: usize,
) -> (OutputQueue, std::thread::JoinHandle<std::io::Result<()>>) {
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(depth);
    let handle = std::thread::Builder::new()
        .name("stdout-writer".into())
        .spawn(move || {
            let mut w = std::io::BufWriter::with_capacity(256 * 1024, out);
            while let Some(frame) = rx.blocking_recv() {
                w.write_all(&frame)?;
                w.write_all(b"\n")?;
                while let Ok(frame) = rx.try_recv() {
                    w.write_all(&frame)?;
                    w.write_all(b"\n")?;
                }
                w.flush()?;
            }
            w.flush()
        })
        .unwrap_or_else(|e| panic!("cannot start the output writer thread: {e}"));
    (tx, handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], limit: usize) -> Vec<Frame> {
        let mut r = FrameReader::with_limit(tokio::io::BufReader::with_capacity(7, input), limit);
        let mut out = Vec::new();
        loop {
            let f = r.next().await.expect("read");
            let eof = f == Frame::Eof;
            out.push(f);
            if eof {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn splits_lines_skips_blanks_and_strips_cr() {
        let got = frames(b"{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}", 64).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"{\"a\":1}".to_vec()),
                Frame::Line(b"{\"b\":2}".to_vec()),
                Frame::Line(b"{\"c\":3}".to_vec()),
                Frame::Eof
            ]
        );
    }

    #[tokio::test]
    async fn oversized_lines_are_skipped_whole() {
        let mut input = vec![b'x'; 100];
        input.extend_from_slice(b"\nok\n");
        let got = frames(&input, 10).await;
        assert_eq!(
            got,
            vec![
                Frame::TooLarge { len: 100 },
                Frame::Line(b"ok".to_vec()),
                Frame::Eof
            ]
        );
        let exact = frames(b"0123456789\n", 10).await;
        assert_eq!(exact[0], Frame::Line(b"0123456789".to_vec()));
        let exact_cr = frames(b"0123456789\r\n", 10).await;
        assert_eq!(exact_cr[0], Frame::Line(b"0123456789".to_vec()));
        let over = frames(b"0123456789A\n", 10).await;
        assert_eq!(over[0], Frame::TooLarge { len: 11 });
    }
}
