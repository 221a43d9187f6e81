//! Where `devicerail mcp` gets its DeviceRail connections: the shared host
//! listening on the control socket when there is one, else a host inside
//! this process on the same configuration. Either way a connection is a
//! Unix stream that starts with the attach preamble and then speaks the
//! protocol through the official client (`devicerail-client`), so
//! everything after [`Backend::connect`] is the same code path.
//!
//! It never writes to stdout and never serves the protocol to anyone but
//! this process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use devicerail_client::methods::{ControlMethod, NoParams};
use devicerail_client::protocol::RequestTimeoutMs;
use devicerail_client::{
    CallOptions, ClientError, ClientOptions, ControlTransportKind, DeviceRailClient, default_hello,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};

use devicerail_host_config::Config;
use devicerail_host_core::in_process::InProcessHost;
use devicerail_host_core::serve::ServeError;
use devicerail_host_core::transport::unix::ATTACH_PREAMBLE;
use devicerail_host_store::lockfile::LockError;

/// Lease holders last seen per device id (`None`: free), from the
/// `devices.list` answers that crossed a connection.
pub(crate) type LeaseView = Arc<Mutex<HashMap<String, Option<String>>>>;

/// Why no connection could be made or a call failed. At start-up it ends
/// `devicerail mcp` (through [`crate::McpError::Backend`]); during a tool
/// call it becomes that call's error result.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// No shared host listens on the socket, and the data directory is
    /// locked by a host that does not listen, so none can start here.
    #[error(
        "the data directory {dir} is in use by a DeviceRail host that does not share it; stop it, or run it as `devicerail serve --listen unix` so `devicerail mcp` can attach to it"
    )]
    Busy {
        /// The locked data directory.
        dir: PathBuf,
    },
    /// The in-process host failed to start for another reason.
    #[error("cannot start the in-process host: {0}")]
    Start(ServeError),
    /// Connecting to the host or writing the attach preamble failed.
    #[error("cannot connect to the host: {0}")]
    Io(#[from] std::io::Error),
    /// The official client failed (handshake, transport, framing).
    #[error("{0}")]
    Client(#[from] ClientError),
    /// The host answered a request with a protocol error.
    #[error("the host refused: {message} ({code})")]
    Remote {
        /// The protocol error code (`data.code`, e.g. `unknown_action`),
        /// or the numeric JSON-RPC code when there is none.
        code: String,
        /// The error's human-readable message.
        message: String,
        /// The error's `data` object, as the host sent it.
        data: Value,
    },
    /// Tool arguments did not fit a method's params, or a result did not
    /// turn back into JSON.
    #[error("unexpected data from the host: {0}")]
    Decode(#[from] serde_json::Error),
}

impl BackendError {
    /// The protocol error code of a remote refusal; `None` for every other
    /// kind of failure.
    pub fn code(&self) -> Option<&str> {
        match self {
            BackendError::Remote { code, .. } => Some(code),
            _ => None,
        }
    }
}

fn remote(e: ClientError) -> BackendError {
    match e {
        ClientError::RemoteRpc { error, .. } => {
            let v = serde_json::to_value(&error).unwrap_or(Value::Null);
            let code = v["data"]["code"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| v["code"].to_string());
            BackendError::Remote {
                code,
                message: v["message"].as_str().unwrap_or("").to_owned(),
                data: v["data"].clone(),
            }
        }
        other => BackendError::Client(other),
    }
}

/// Call options with `timeout_ms` where method `M` takes one.
fn options<M: ControlMethod>(timeout_ms: Option<u64>) -> CallOptions {
    CallOptions {
        timeout_ms: timeout_ms
            .filter(|_| M::DESCRIPTOR.supports_timeout)
            .and_then(RequestTimeoutMs::new),
    }
}

/// Calls `M` with params given as JSON; the result as JSON.
pub(crate) async fn call<M>(
    client: &DeviceRailClient,
    params: Value,
    timeout_ms: Option<u64>,
) -> Result<Value, BackendError>
where
    M: ControlMethod,
    M::Params: DeserializeOwned,
    M::Result: Serialize,
{
    let params: M::Params = serde_json::from_value(params)?;
    let result = client
        .call::<M>(params, options::<M>(timeout_ms))
        .await
        .map_err(remote)?;
    Ok(serde_json::to_value(result)?)
}

/// Calls `M`, which takes no params; the result as JSON.
pub(crate) async fn call0<M>(
    client: &DeviceRailClient,
    timeout_ms: Option<u64>,
) -> Result<Value, BackendError>
where
    M: ControlMethod<Params = NoParams>,
    M::Result: Serialize,
{
    let result = client
        .call::<M>(NoParams, options::<M>(timeout_ms))
        .await
        .map_err(remote)?;
    Ok(serde_json::to_value(result)?)
}

/// `devices.list` on `client`, as JSON (devices, and the selection when
/// there is one).
pub(crate) async fn devices_list(client: &DeviceRailClient) -> Result<Value, BackendError> {
    call0::<devicerail_client::methods::DevicesList>(client, Some(30_000)).await
}

/// The host behind this MCP server.
pub(crate) enum Backend {
    /// A shared host on its control socket.
    Shared { socket: PathBuf },
    /// A host inside this process.
    Local(InProcessHost),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.mode())
    }
}

impl Backend {
    /// Attaches to the host listening on `socket`, else starts one in this
    /// process on `config`. Must run inside the Tokio runtime.
    pub(crate) fn start(config: &Config, socket: &Path) -> Result<Self, BackendError> {
        if std::os::unix::net::UnixStream::connect(socket).is_ok() {
            tracing::info!(socket = %socket.display(), "attaching to the shared host");
            return Ok(Backend::Shared {
                socket: socket.to_path_buf(),
            });
        }
        match InProcessHost::start(config) {
            Ok(h) => {
                tracing::info!(data_dir = %config.data_dir.value.display(), "serving with an in-process host");
                Ok(Backend::Local(h))
            }
            Err(ServeError::Lock(LockError::Busy { dir, .. })) => Err(BackendError::Busy { dir }),
            Err(e) => Err(BackendError::Start(e)),
        }
    }

    /// `shared` or `in-process`.
    pub(crate) fn mode(&self) -> &'static str {
        match self {
            Backend::Shared { .. } => "shared",
            Backend::Local(_) => "in-process",
        }
    }

    /// A new protocol connection (hello done), recording the leases its
    /// `devices.list` answers show into `leases`.
    pub(crate) async fn connect(
        &self,
        leases: &LeaseView,
    ) -> Result<DeviceRailClient, BackendError> {
        let mut stream = match self {
            Backend::Shared { socket } => tokio::net::UnixStream::connect(socket).await?,
            Backend::Local(h) => h.connect()?,
        };
        let preamble = format!("{ATTACH_PREAMBLE} mcp pid={}\n", std::process::id());
        stream.write_all(preamble.as_bytes()).await?;
        let (read, write) = stream.into_split();
        let read = LeaseTap {
            inner: read,
            line: Vec::new(),
            leases: leases.clone(),
        };
        let mut hello = default_hello();
        hello.client.name = "devicerail-mcp".into();
        hello.client.version = env!("CARGO_PKG_VERSION").into();
        let client = DeviceRailClient::attach(
            read,
            write,
            ControlTransportKind::Stdio,
            hello,
            ClientOptions::default(),
        )
        .await?;
        Ok(client)
    }

    /// Stops the in-process host (a shared host keeps running).
    pub(crate) async fn shutdown(&self) {
        if let Backend::Local(h) = self {
            h.shutdown().await;
        }
    }
}

/// Longest frame the lease tap looks into; longer ones pass untouched.
const TAP_LINE_MAX: usize = 256 * 1024;

/// Passes the host's bytes to the client unchanged and reads the lease
/// holders out of `devices.list` answers (the client's own types drop
/// that extension field).
struct LeaseTap<R> {
    inner: R,
    line: Vec<u8>,
    leases: LeaseView,
}

impl<R> LeaseTap<R> {
    fn take_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        if line.len() > TAP_LINE_MAX || !contains(&line, b"\"devices\"") {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(&line) else {
            return;
        };
        let Some(devices) = v["result"]["devices"].as_array() else {
            return;
        };
        let mut seen = HashMap::new();
        for d in devices {
            if let Some(id) = d["id"].as_str() {
                let holder = d["lease"]["holder"].as_str().map(str::to_owned);
                seen.insert(id.to_owned(), holder);
            }
        }
        if let Ok(mut map) = self.leases.lock() {
            *map = seen;
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|&b| b == b'\n') {
            let (body, done) = match chunk.split_last() {
                Some((b'\n', body)) => (body, true),
                _ => (chunk, false),
            };
            if self.line.len() <= TAP_LINE_MAX {
                self.line.extend_from_slice(body);
            }
            if done {
                self.take_line();
            }
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

impl<R: AsyncRead + Unpin> AsyncRead for LeaseTap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let fresh = buf.filled()[before..].to_vec();
            self.scan(&fresh);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tap_reads_lease_holders_across_chunks() {
        let leases: LeaseView = Arc::default();
        let mut tap = LeaseTap {
            inner: tokio::io::empty(),
            line: Vec::new(),
            leases: leases.clone(),
        };
        let frame = br#"{"jsonrpc":"2.0","id":"1","result":{"devices":[{"id":"mock-1","lease":{"holder":"anotherConnection","sinceMs":1}},{"id":"mock-2"}]}}"#;
        let (a, b) = frame.split_at(40);
        tap.scan(a);
        tap.scan(b);
        tap.scan(b"\n{\"other\":1}\n");
        let map = leases.lock().expect("lock").clone();
        assert_eq!(map["mock-1"].as_deref(), Some("anotherConnection"));
        assert_eq!(map["mock-2"], None);
    }
}
