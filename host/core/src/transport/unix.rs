//! The shared host's local control socket: the same protocol and NDJSON
//! framing as stdio, one protocol connection per socket connection.
//!
//! Security: the socket lives in a directory only the user can enter
//! (created 0700; an existing one open to others is refused), the socket
//! itself is 0600, and a peer whose uid is neither ours nor root's is
//! dropped before a byte of it is read. (Root can read the host's memory
//! anyway; admitting it lets a root-run agent, such as the Kubernetes
//! device plugin that must write into the kubelet's directory, use a
//! host that runs as an ordinary user.) A lock file beside the socket tells a live host
//! from a stale socket file: the live one is never replaced, a stale one
//! is. At most `max_connections` are served at once; one more is told so
//! in one error frame and closed.
//!
//! A connection that starts with the [`ATTACH_PREAMBLE`] line comes from
//! `devicerail attach` bridging a stdio client: it is reported to that
//! client as a stdio transport (clients check the transport kind), and
//! the log says where it came from. The preamble's words after it are
//! `key=value` pairs; [`TOKEN_KEY`] carries a device-pool reservation
//! token, which the connection keeps as a digest and the log never shows.

use std::fs::{File, OpenOptions};

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use devicerail_host_protocol::{ErrorCode, TransportInfo};
use serde_json::json;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::stdio::{Frame, FrameReader};
use crate::connection::Connection;
use crate::dispatch::{Closing, Dispatcher};
use crate::leases::TokenDigest;
use crate::outbox::{Batches, Descriptor, OutputQueue};
use devicerail_host_protocol::pool::LeaseToken;

/// The first line `devicerail attach` writes: never valid JSON, so it
/// cannot be mistaken for a client's frame.
pub const ATTACH_PREAMBLE: &str = "#devicerail-attach v1";

/// The preamble word (`lease-token=TOKEN`) that presents a reservation
/// token (see `devicerail_host_protocol::pool`).
pub const TOKEN_KEY: &str = "lease-token";

/// What the words after [`ATTACH_PREAMBLE`] said.
#[derive(Debug, PartialEq, Eq)]
pub struct Preamble {
    /// The words for the log, the token's value replaced.
    pub said: String,
    /// The presented token's digest (`None` if none, or an invalid one).
    pub token: Option<TokenDigest>,
    /// Why a presented token was refused.
    pub token_refused: Option<devicerail_host_protocol::pool::TokenError>,
    /// The digest of a presented pool manager's key
    /// ([`crate::pool_key::PREAMBLE_KEY`]), if any.
    pub pool_key: Option<TokenDigest>,
}

/// Reads the words after [`ATTACH_PREAMBLE`].
pub fn parse_preamble(rest: &[u8]) -> Preamble {
    let text = String::from_utf8_lossy(rest);
    let mut said = Vec::new();
    let mut token = None;
    let mut token_refused = None;
    let mut pool_key = None;
    for word in text.split_whitespace() {
        match word.split_once('=') {
            Some((key, value)) if key == crate::pool_key::PREAMBLE_KEY => {
                said.push(format!("{key}=<redacted>"));
                pool_key = LeaseToken::new(value).ok().map(|k| TokenDigest::of(&k));
            }
            Some((key, value)) if key == TOKEN_KEY => {
                said.push(format!("{TOKEN_KEY}=<redacted>"));
                match LeaseToken::new(value) {
                    Ok(t) => token = Some(TokenDigest::of(&t)),
                    Err(e) => token_refused = Some(e),
                }
            }
            _ => said.push(word.to_owned()),
        }
    }
    Preamble {
        said: said.join(" "),
        token,
        token_refused,
        pool_key,
    }
}

/// Output queue of one socket connection (frames, bytes).
const OUTPUT_FRAMES: usize = 4096;
const OUTPUT_BYTES: usize = 4 * 1024 * 1024;

/// Why the socket could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// A live host already owns the socket path (it holds the lock beside
    /// it, or answers on it); its socket is left alone.
    #[error(
        "another DeviceRail host is already listening on {0} (attach to it with `devicerail attach --socket {0}`)"
    )]
    Live(PathBuf),
    /// The path does not fit in a `sockaddr_un` (107 bytes at most).
    #[error("the socket path {path} is {len} bytes long; Unix sockets allow at most 107")]
    TooLong {
        /// The requested socket path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
    },
    /// Something other than a socket exists at the path; it is never
    /// replaced.
    #[error("{0} exists and is not a socket; refusing to replace it")]
    NotASocket(PathBuf),
    /// The socket's directory is not owned by this user or can be entered
    /// by others.
    #[error(
        "the socket directory {dir} can be entered by others (mode {mode:o}) or is not owned by this user; use a private directory (chmod 700)"
    )]
    OpenDirectory {
        /// The refused directory.
        dir: PathBuf,
        /// Its permission bits (`0o777` mask).
        mode: u32,
    },
    /// A file-system or socket call failed while setting up `path`.
    #[error("cannot set up the control socket {path}: {source}")]
    Io {
        /// The socket path (or its directory) being set up.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// A bound control socket (the listener, and the lock that proves this
/// host owns the path). The socket file is removed when dropped.
#[derive(Debug)]
pub(crate) struct Socket {
    path: PathBuf,
    listener: std::os::unix::net::UnixListener,
    _lock: File,
}

impl Drop for Socket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Checks that `dir` is ours and closed to others, creating it (0700)
/// when missing.
fn private_dir(dir: &Path) -> Result<(), ListenError> {
    let io = |source| ListenError::Io {
        path: dir.to_path_buf(),
        source,
    };
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io)?;
    }
    let meta = std::fs::metadata(dir).map_err(io)?;
    let uid = devicerail_host_sys::effective_uid();
    let mode = meta.permissions().mode() & 0o777;
    if meta.uid() != uid || mode & 0o077 != 0 {
        return Err(ListenError::OpenDirectory {
            dir: dir.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

/// Binds the control socket at `path`, replacing a stale socket file and
/// refusing to touch a live host's.
pub(crate) fn bind(path: &Path) -> Result<Socket, ListenError> {
    let len = path.as_os_str().len();
    if len > 107 {
        return Err(ListenError::TooLong {
            path: path.to_path_buf(),
            len,
        });
    }
    let io = |source| ListenError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        private_dir(dir)?;
    }
    let mut lock_name = path.as_os_str().to_owned();
    lock_name.push(".lock");
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(PathBuf::from(&lock_name))
        .map_err(io)?;
    if devicerail_host_sys::lock_exclusive(&lock).map_err(io)? == devicerail_host_sys::Locked::Busy
    {
        return Err(ListenError::Live(path.to_path_buf()));
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            use std::os::unix::fs::FileTypeExt;
            if !meta.file_type().is_socket() {
                return Err(ListenError::NotASocket(path.to_path_buf()));
            }
            // We hold the lock, so no host owns this file; but a host of
            // an older layout might still answer on it.
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(ListenError::Live(path.to_path_buf()));
            }
            tracing::info!(socket = %path.display(), "replacing a stale socket file");
            std::fs::remove_file(path).map_err(io)?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let listener = std::os::unix::net::UnixListener::bind(path).map_err(io)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    listener.set_nonblocking(true).map_err(io)?;
    Ok(Socket {
        path: path.to_path_buf(),
        listener,
        _lock: lock,
    })
}

/// Accepts connections on `socket` until `stop`, serving each on a task of
/// `tasks` (so shutdown can wait for them).
pub(crate) async fn serve(
    dispatcher: Dispatcher,
    socket: Socket,
    max_connections: usize,
    stop: CancellationToken,
    tasks: TaskTracker,
) {
    let listener = match socket
        .listener
        .try_clone()
        .and_then(tokio::net::UnixListener::from_std)
    {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(socket = %socket.path.display(), "cannot serve the control socket: {e}");
            return;
        }
    };
    tracing::info!(socket = %socket.path.display(), max_connections, "listening");
    let open = Arc::new(AtomicUsize::new(0));
    let uid = devicerail_host_sys::effective_uid();
    loop {
        let stream = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("accepting a socket connection failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let peer = match stream.peer_cred() {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("refused a socket connection without peer credentials: {e}");
                continue;
            }
        };
        if peer.uid() != uid && peer.uid() != 0 {
            tracing::warn!(
                peer_uid = peer.uid(),
                peer_pid = ?peer.pid(),
                "refused a socket connection from another user"
            );
            continue;
        }
        if open.fetch_add(1, Ordering::AcqRel) >= max_connections {
            open.fetch_sub(1, Ordering::AcqRel);
            tracing::warn!(
                max_connections,
                "refused a socket connection: too many open"
            );
            tasks.spawn(refuse(stream, max_connections));
            continue;
        }
        let d = dispatcher.clone();
        let open = open.clone();
        let stop = stop.clone();
        tasks.spawn(async move {
            connection(d, stream, peer.pid(), stop).await;
            open.fetch_sub(1, Ordering::AcqRel);
        });
    }
    drop(socket);
}

/// Tells a peer over the connection cap why it is closed.
async fn refuse(mut stream: UnixStream, max: usize) {
    let error = ErrorCode::TooManyRequests.rpc(
        format!("the host already serves {max} connections; try again when one closes"),
        json!({ "limit": max, "scope": "connections" }),
    );
    let mut frame = Connection::encode_error(None, &error);
    frame.push(b'\n');
    let _ = stream.write_all(&frame).await;
    let _ = stream.shutdown().await;
}

/// Serves one socket connection until its peer closes it or the host stops.
pub(crate) async fn connection(
    dispatcher: Dispatcher,
    stream: UnixStream,
    peer_pid: Option<i32>,
    stop: CancellationToken,
) {
    let (read, write) = stream.into_split();
    let mut reader = FrameReader::new(BufReader::with_capacity(64 * 1024, read));
    // The first frame says whether `devicerail attach` bridges a stdio
    // client; it is read before the connection exists.
    let first = tokio::select! {
        _ = stop.cancelled() => return,
        f = reader.next() => f,
    };
    let (transport, first, via, token, key) = match first {
        Ok(Frame::Line(line)) if line.starts_with(ATTACH_PREAMBLE.as_bytes()) => {
            let preamble = parse_preamble(&line[ATTACH_PREAMBLE.len()..]);
            tracing::debug!(?peer_pid, attach = %preamble.said, "a stdio client attached");
            if let Some(e) = &preamble.token_refused {
                tracing::warn!(
                    ?peer_pid,
                    "ignored the lease token of an attached client: {e}"
                );
            }
            (
                TransportInfo::stdio(),
                None,
                "attach",
                preamble.token,
                preamble.pool_key,
            )
        }
        Ok(frame) => (TransportInfo::unix(), Some(frame), "socket", None, None),
        Err(e) => {
            tracing::debug!("socket connection failed before its first frame: {e}");
            return;
        }
    };
    let write = Arc::new(write);
    let (out, batches) = OutputQueue::lending(write.clone(), OUTPUT_FRAMES, OUTPUT_BYTES);
    let writer = tokio::spawn(write_frames(write, batches));
    let presented = token.is_some();
    let pool_manager = dispatcher.host().is_pool_key(key.as_ref());
    if key.is_some() && !pool_manager {
        tracing::warn!(
            ?peer_pid,
            "a socket client presented a pool key that is not this host's; it is an ordinary client"
        );
    }
    let conn = Connection::with_lease_token(transport, out, token, pool_manager);
    tracing::info!(connection = %conn.id, ?peer_pid, via, lease_token = presented, pool_manager, "socket connection opened");
    let mut pending = first;
    let closed_by = loop {
        let frame = match pending.take() {
            Some(f) => Ok(f),
            None => tokio::select! {
                biased;
                _ = stop.cancelled() => break Closing::Shutdown,
                f = reader.next() => f,
            },
        };
        match frame {
            Ok(Frame::Line(line)) => dispatcher.handle_line(&conn, line).await,
            Ok(Frame::TooLarge { len }) => dispatcher.frame_too_large(&conn, len).await,
            Ok(Frame::Eof) => break Closing::PeerClosed,
            Err(e) => {
                tracing::debug!(connection = %conn.id, "reading the socket failed: {e}");
                break Closing::PeerClosed;
            }
        }
    };
    dispatcher.close(&conn, closed_by).await;
    tracing::info!(connection = %conn.id, via, "socket connection closed");
    drop(conn);
    let _ = writer.await;
}

/// Writes queued frames to the socket, each batch of what is queued with
/// one call. Once the peer is gone it keeps draining the queue
/// (discarding), so no request ever waits on a dead connection's output.
/// Dropping the last handle of the write half shuts it down.
async fn write_frames(write: Arc<OwnedWriteHalf>, mut batches: Batches) {
    let mut failed = false;
    while let Some(lines) = batches.next().await {
        if !failed && let Err(e) = write_all(&write, lines).await {
            tracing::debug!("writing to a socket connection failed: {e}");
            failed = true;
        }
        batches.written();
    }
}

/// Writes all of `bytes`, waiting while the socket is full.
async fn write_all(out: &OwnedWriteHalf, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        out.writable().await?;
        match out.try_write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Descriptor for OwnedWriteHalf {
    fn try_write(&self, bytes: &[u8]) -> std::io::Result<usize> {
        OwnedWriteHalf::try_write(self, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preamble_token_is_kept_as_a_digest_and_never_logged() {
        let token = "Ab-_0123456789abcdefghijklmnopqrstuv";
        let p = parse_preamble(format!(" pid=7 {TOKEN_KEY}={token}").as_bytes());
        assert_eq!(p.said, format!("pid=7 {TOKEN_KEY}=<redacted>"));
        let expected = TokenDigest::of(&LeaseToken::new(token).expect("valid"));
        assert_eq!(p.token, Some(expected));
        assert!(p.token_refused.is_none());
        let p = parse_preamble(format!(" {TOKEN_KEY}=short").as_bytes());
        assert!(!p.said.contains("short"));
        assert!(p.token.is_none());
        assert!(p.token_refused.is_some());
        let p = parse_preamble(b" mcp pid=3");
        assert_eq!((p.said.as_str(), p.token), ("mcp pid=3", None));
        let key = "0123456789abcdef".repeat(4);
        let p = parse_preamble(format!(" pool-key={key}").as_bytes());
        assert_eq!(p.said, "pool-key=<redacted>");
        let expected = TokenDigest::of(&LeaseToken::new(key).expect("valid"));
        assert!(p.pool_key.expect("a key").matches(&expected));
    }
}
