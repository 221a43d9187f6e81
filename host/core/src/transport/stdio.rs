//! NDJSON framing on stdio: one JSON message per line, at most
//! [`MAX_FRAME_BYTES`] per frame in both directions.
//!
//! The reader never buffers more than one frame: an oversized line is
//! skipped up to its newline and reported as [`Frame::TooLarge`].
//!
//! When standard input and output are pipes or sockets (as when a client
//! spawns the host), both are non-blocking and driven by the runtime's
//! reactor: input is read by the task that dispatches it
//! ([`PipeReader`]), output written by a task ([`spawn_pipe_writer`]) that
//! takes every frame queued since it last ran and writes them with one
//! call, so a burst of answers costs one write and no thread wake-up.
//! Otherwise (a terminal, a file) input is read on a thread of its own
//! ([`spawn_reader`]) and the writer is a dedicated thread
//! ([`spawn_writer`]). Either writer is fed by a queue bounded in frames
//! and bytes ([`OutputQueue`]) and writes frames in order.

use std::io::{Read, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use devicerail_host_sys::stream::NonBlocking;
use tokio::io::unix::AsyncFd;

use devicerail_host_protocol::MAX_FRAME_BYTES;
use tokio_util::sync::CancellationToken;

use crate::connection::Connection;
use crate::dispatch::Dispatcher;
use crate::outbox::Descriptor;
pub(crate) use crate::outbox::OutputQueue;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// One input frame.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A complete line without its `\n` (and without a trailing `\r`).
    Line(Vec<u8>),
    /// A line longer than the limit; its bytes were discarded.
    TooLarge { len: usize },
    /// End of input. A final line without `\n` is returned as a `Line` first.
    Eof,
}

/// Reads frames with a per-frame limit.
pub(crate) struct FrameReader<R> {
    inner: R,
    limit: usize,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_FRAME_BYTES)
    }

    pub(crate) fn with_limit(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            buf: Vec::with_capacity(4096),
        }
    }

    /// The next non-blank frame.
    pub(crate) async fn next(&mut self) -> std::io::Result<Frame> {
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

/// Starts the writer thread over `out`; it ends when every sender is
/// dropped, after writing everything queued. Returns the queue and the
/// thread handle.
pub(crate) fn spawn_writer<W: Write + Send + 'static>(
    out: W,
    frames: usize,
    bytes: usize,
) -> (OutputQueue, std::thread::JoinHandle<std::io::Result<()>>) {
    let (tx, mut rx) = OutputQueue::bounded(frames, bytes);
    let handle = std::thread::Builder::new()
        .name("stdout-writer".into())
        .spawn(move || {
            let mut w = std::io::BufWriter::with_capacity(256 * 1024, out);
            while let Some(first) = rx.blocking_recv() {
                w.write_all(&first.frame)?;
                w.write_all(b"\n")?;
                drop(first);
                while let Ok(next) = rx.try_recv() {
                    w.write_all(&next.frame)?;
                    w.write_all(b"\n")?;
                }
                w.flush()?;
            }
            w.flush()
        })
        .unwrap_or_else(|e| panic!("cannot start the output writer thread: {e}"));
    (tx, handle)
}

/// The writer of a control connection's output, to wait for at shutdown.
pub(crate) enum WriterHandle {
    /// A thread writing a blocking descriptor.
    Thread(std::thread::JoinHandle<std::io::Result<()>>),
    /// A task writing a non-blocking one.
    Task(tokio::task::JoinHandle<std::io::Result<()>>),
}

impl WriterHandle {
    /// Waits until everything queued is written (the queue's senders must
    /// be gone): the writer's own result, or why it ended abnormally.
    pub(crate) async fn join(self) -> Result<std::io::Result<()>, WriterGone> {
        match self {
            Self::Thread(h) => match tokio::task::spawn_blocking(move || h.join()).await {
                Ok(Ok(r)) => Ok(r),
                _ => Err(WriterGone),
            },
            Self::Task(h) => h.await.map_err(|_| WriterGone),
        }
    }
}

/// The writer panicked or was cancelled.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the output writer ended abnormally")]
pub(crate) struct WriterGone;

/// Starts the writer of `out`: a task on the runtime when `out` is a pipe
/// or socket, else a thread ([`spawn_writer`]).
pub(crate) fn writer_for(
    out: std::fs::File,
    frames: usize,
    bytes: usize,
) -> (OutputQueue, WriterHandle) {
    match NonBlocking::new(out) {
        Ok(pipe) => match devicerail_host_sys::stream::register(pipe) {
            Ok(fd) => {
                let (q, h) = spawn_pipe_writer(fd, frames, bytes);
                (q, WriterHandle::Task(h))
            }
            Err(e) => {
                tracing::warn!("cannot poll standard output ({e}); writing it from a thread");
                // The descriptor goes back to blocking mode with the
                // failed registration; a closed one fails on first write.
                let (q, h) = spawn_writer(std::io::sink(), frames, bytes);
                (q, WriterHandle::Thread(h))
            }
        },
        Err(file) => {
            let (q, h) = spawn_writer(file, frames, bytes);
            (q, WriterHandle::Thread(h))
        }
    }
}

/// Starts the writer task over the non-blocking `out`; it ends when every
/// sender is dropped, after writing everything queued. Each frame keeps
/// its share of the queue's byte budget until its bytes are written.
pub(crate) fn spawn_pipe_writer(
    out: AsyncFd<NonBlocking>,
    frames: usize,
    bytes: usize,
) -> (OutputQueue, tokio::task::JoinHandle<std::io::Result<()>>) {
    let out = Arc::new(out);
    let (tx, mut batches) = OutputQueue::lending(out.clone(), frames, bytes);
    let task = tokio::spawn(async move {
        while let Some(lines) = batches.next().await {
            write_all(&out, lines).await?;
            batches.written();
        }
        Ok(())
    });
    (tx, task)
}

impl Descriptor for AsyncFd<NonBlocking> {
    fn try_write(&self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut out: &NonBlocking = self.get_ref();
        out.write(bytes)
    }
}

/// Writes all of `bytes` to the non-blocking `out`, waiting while it is
/// full.
async fn write_all(out: &AsyncFd<NonBlocking>, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let mut guard = out.writable().await?;
        match guard.try_io(|fd| fd.get_ref().write(bytes)) {
            Ok(Ok(0)) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(Ok(n)) => bytes = bytes.get(n..).unwrap_or_default(),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(Err(e)) => return Err(e),
            Err(_would_block) => {}
        }
    }
    Ok(())
}

/// Standard input as a non-blocking pipe read by the task that dispatches
/// it: no thread in between.
#[derive(Debug)]
pub(crate) struct PipeReader {
    fd: AsyncFd<NonBlocking>,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
}

impl PipeReader {
    pub(crate) fn new(fd: AsyncFd<NonBlocking>) -> Self {
        Self {
            fd,
            buf: vec![0u8; 64 * 1024].into_boxed_slice(),
            pos: 0,
            len: 0,
        }
    }
}

impl AsyncRead for PipeReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let available = ready!(self.as_mut().poll_fill_buf(cx))?;
        let n = available.len().min(buf.remaining());
        buf.put_slice(&available[..n]);
        self.consume(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncBufRead for PipeReader {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<&[u8]>> {
        let this = self.get_mut();
        while this.pos >= this.len {
            let mut guard = ready!(this.fd.poll_read_ready(cx))?;
            match guard.try_io(|fd| fd.get_ref().read(&mut this.buf)) {
                Ok(Ok(n)) => {
                    this.pos = 0;
                    this.len = n;
                    if n == 0 {
                        return Poll::Ready(Ok(&[]));
                    }
                    // A read that did not fill the buffer emptied the pipe
                    // or socket: wait for the reactor's next edge instead
                    // of reading again only to be told it would block.
                    // (The reactor keeps a hang-up it saw, so an end of
                    // input that came with these bytes is still seen.)
                    if n < this.buf.len() {
                        guard.clear_ready();
                    }
                }
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => {}
            }
        }
        Poll::Ready(Ok(this.buf.get(this.pos..this.len).unwrap_or_default()))
    }

    fn consume(mut self: Pin<&mut Self>, amt: usize) {
        self.pos = (self.pos + amt).min(self.len);
    }
}

/// Reads a blocking source (stdin) on a thread of its own and hands its
/// bytes to async readers, so reading input never takes a thread of the
/// async runtime's blocking pool. At most `depth` chunks wait unread: a
/// host that stops consuming stops reading.
pub(crate) fn spawn_reader<R: Read + Send + 'static>(mut input: R, depth: usize) -> ChannelReader {
    let (tx, rx) = mpsc::channel::<std::io::Result<Vec<u8>>>(depth.max(1));
    let spawned = std::thread::Builder::new()
        .name("stdin-reader".into())
        .spawn(move || {
            // One buffer for every read; each chunk handed on is a copy of
            // what arrived (a few hundred bytes per request), not a fresh
            // zeroed 64 KiB.
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match input.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let chunk = buf.get(..n).unwrap_or_default().to_vec();
                        if tx.blocking_send(Ok(chunk)).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = tx.blocking_send(Err(e));
                        break;
                    }
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the input reader thread: {e}");
    }
    ChannelReader {
        rx,
        chunk: Vec::new(),
        pos: 0,
    }
}

/// The async side of [`spawn_reader`].
#[derive(Debug)]
pub(crate) struct ChannelReader {
    rx: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl AsyncRead for ChannelReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let available = match self.as_mut().poll_fill_buf(cx) {
            Poll::Ready(Ok(a)) => a,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        };
        let n = available.len().min(buf.remaining());
        buf.put_slice(&available[..n]);
        self.consume(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncBufRead for ChannelReader {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<&[u8]>> {
        let this = self.get_mut();
        while this.pos >= this.chunk.len() {
            match this.rx.poll_recv(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    this.chunk = chunk;
                    this.pos = 0;
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                // End of input.
                Poll::Ready(None) => return Poll::Ready(Ok(&[])),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(&this.chunk[this.pos..]))
    }

    fn consume(mut self: Pin<&mut Self>, amt: usize) {
        self.pos = (self.pos + amt).min(self.chunk.len());
    }
}

/// Serves one control connection on standard input until end of input or
/// `stop`: read by this task when it is a pipe or socket ([`PipeReader`]),
/// else by a thread ([`spawn_reader`]).
pub(crate) async fn serve_stdin(
    dispatcher: &Dispatcher,
    conn: &Arc<Connection>,
    stop: CancellationToken,
) {
    let pipe = match NonBlocking::stdin() {
        Ok(Ok(pipe)) => devicerail_host_sys::stream::register(pipe).map_err(|e| {
            tracing::warn!("cannot poll standard input ({e}); reading it from a thread");
        }),
        Ok(Err(_not_a_pipe)) => Err(()),
        Err(e) => {
            tracing::warn!("cannot duplicate standard input ({e}); reading it from a thread");
            Err(())
        }
    };
    match pipe {
        Ok(fd) => {
            serve_frames(
                dispatcher,
                conn,
                FrameReader::new(PipeReader::new(fd)),
                stop,
            )
            .await
        }
        Err(()) => serve(dispatcher, conn, std::io::stdin(), stop).await,
    }
}

/// Serves one control connection on `input` (read on a thread of its own)
/// until end of input or `stop`.
pub(crate) async fn serve<R: Read + Send + 'static>(
    dispatcher: &Dispatcher,
    conn: &Arc<Connection>,
    input: R,
    stop: CancellationToken,
) {
    let reader = FrameReader::new(spawn_reader(input, INPUT_CHUNKS));
    serve_frames(dispatcher, conn, reader, stop).await;
}

/// Every line of `reader` goes to the dispatcher (which answers through
/// the connection's output queue), until end of input or `stop`.
async fn serve_frames<R: AsyncBufRead + Unpin>(
    dispatcher: &Dispatcher,
    conn: &Arc<Connection>,
    mut reader: FrameReader<R>,
    stop: CancellationToken,
) {
    let mut since_yield = 0usize;
    loop {
        let frame = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            f = reader.next() => f,
        };
        match frame {
            Ok(Frame::Line(line)) => {
                dispatcher.handle_line(conn, line).await;
                // A client that pipelines keeps the input full: let the
                // answers go out every few requests rather than after the
                // whole backlog, or it waits for them with nothing to send.
                since_yield += 1;
                if since_yield == ANSWERS_BEFORE_YIELD {
                    since_yield = 0;
                    tokio::task::yield_now().await;
                }
            }
            Ok(Frame::TooLarge { len }) => dispatcher.frame_too_large(conn, len).await,
            Ok(Frame::Eof) => {
                tracing::info!(connection = %conn.id, "input closed");
                break;
            }
            Err(e) => {
                tracing::warn!(connection = %conn.id, "reading input failed: {e}");
                break;
            }
        }
    }
}

/// Requests handled back to back before the other tasks (the writer of
/// their answers among them) get a turn.
const ANSWERS_BEFORE_YIELD: usize = 32;

/// Input chunks (64 KiB each) read ahead of the dispatcher.
const INPUT_CHUNKS: usize = 16;

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
    async fn the_output_queue_is_bounded_in_bytes() {
        let (q, mut rx) = OutputQueue::bounded(100, 10);
        q.send(vec![b'a'; 6]).await.expect("fits");
        // 6 + 6 > 10: the second frame waits until the first is written.
        let pending =
            tokio::time::timeout(std::time::Duration::from_millis(50), q.send(vec![b'b'; 6])).await;
        assert!(pending.is_err(), "the byte budget holds the sender back");
        let first = rx.recv().await.expect("first");
        drop(first);
        q.send(vec![b'c'; 6]).await.expect("room again");
        // A frame over the whole budget takes all of it.
        drop(rx.recv().await);
        q.send(vec![b'd'; 1000]).await.expect("oversized frame");
    }

    /// A pipe's read end as the host reads standard input (non-blocking,
    /// on the reactor), and its write end.
    fn pipe() -> (PipeReader, std::io::PipeWriter) {
        let (r, w) = std::io::pipe().expect("pipe");
        let file = std::fs::File::from(std::os::fd::OwnedFd::from(r));
        let fd = devicerail_host_sys::stream::register(
            NonBlocking::new(file).expect("a pipe can be made non-blocking"),
        )
        .expect("register");
        (PipeReader::new(fd), w)
    }

    /// The next frame, or a failure after 10 s (a lost wake-up hangs).
    async fn next_within(r: &mut FrameReader<PipeReader>) -> Frame {
        tokio::time::timeout(std::time::Duration::from_secs(10), r.next())
            .await
            .expect("the reader was woken")
            .expect("read")
    }

    #[tokio::test]
    async fn a_pipe_closed_with_its_last_bytes_still_ends() {
        let (reader, mut w) = pipe();
        // Bytes and the end of input are both there before the first read,
        // which is short: the end must not be lost with the readiness.
        w.write_all(b"{\"a\":1}\n{\"b\":2}\n").expect("write");
        drop(w);
        let mut r = FrameReader::new(reader);
        assert_eq!(
            next_within(&mut r).await,
            Frame::Line(b"{\"a\":1}".to_vec())
        );
        assert_eq!(
            next_within(&mut r).await,
            Frame::Line(b"{\"b\":2}".to_vec())
        );
        assert_eq!(next_within(&mut r).await, Frame::Eof);
    }

    #[tokio::test]
    async fn bytes_after_a_short_read_wake_the_reader() {
        let (reader, mut w) = pipe();
        let mut r = FrameReader::new(reader);
        w.write_all(b"{\"a\":1}\n").expect("write");
        assert_eq!(
            next_within(&mut r).await,
            Frame::Line(b"{\"a\":1}".to_vec())
        );
        // The short read left the reader waiting for the reactor: later
        // bytes, and later the end, are new edges.
        let later = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            w.write_all(b"{\"b\":2}\n").expect("write");
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(w);
        });
        assert_eq!(
            next_within(&mut r).await,
            Frame::Line(b"{\"b\":2}".to_vec())
        );
        assert_eq!(next_within(&mut r).await, Frame::Eof);
        later.join().expect("writer");
    }

    #[tokio::test]
    async fn more_than_a_buffer_at_once_is_read_whole() {
        let (reader, mut w) = pipe();
        let lines = 20_000;
        let writer = std::thread::spawn(move || {
            for i in 0..lines {
                writeln!(w, "{{\"n\":{i}}}").expect("write");
            }
        });
        let mut r = FrameReader::new(reader);
        for i in 0..lines {
            assert_eq!(
                next_within(&mut r).await,
                Frame::Line(format!("{{\"n\":{i}}}").into_bytes())
            );
        }
        assert_eq!(next_within(&mut r).await, Frame::Eof);
        writer.join().expect("writer");
    }

    #[tokio::test]
    async fn the_reader_thread_feeds_frames() {
        let input = std::io::Cursor::new(b"{\"a\":1}\n{\"b\":2}\n".to_vec());
        let mut r = FrameReader::new(spawn_reader(input, 2));
        assert_eq!(
            r.next().await.expect("a"),
            Frame::Line(b"{\"a\":1}".to_vec())
        );
        assert_eq!(
            r.next().await.expect("b"),
            Frame::Line(b"{\"b\":2}".to_vec())
        );
        assert_eq!(r.next().await.expect("eof"), Frame::Eof);
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
