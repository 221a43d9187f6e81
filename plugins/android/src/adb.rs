//! Talking to the adb server.
//!
//! * Device streams (`shell,v2,raw:`, `exec:`) go through `adb_client`'s
//!   `ADBServerDevice`. `adb_client` gives no socket timeouts, so every
//!   operation runs on a worker thread that the caller waits for with the
//!   call's deadline and cancellation flag; an abandoned worker ends when
//!   the server closes its socket.
//! * Shell exit codes are taken from a marker the command line prints last
//!   (`; echo __rc=$?`), never from `adb_client`'s return value, which
//!   carries no status on the server's v1 path. A stream that ends without
//!   the marker was cut: the device vanished mid-command.
//! * Host services (`host:devices-l`, `host:version`) are queried here
//!   directly (a four-hex-digit length, `OKAY`/`FAIL`): `ADBServer` runs
//!   `adb start-server` without `-P` before every request to a loopback
//!   address, which would spawn a process per listing and start a stray
//!   server on 5037 when another port is configured. Instead this module
//!   starts `adb -P <port> start-server` itself, only when a loopback
//!   server refuses the connection and `startServer` allows it, at most
//!   once per `START_RETRY` (10 s).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpStream};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use adb_client::server::DeviceLong;
use adb_client::server_device::ADBServerDevice;
use adb_client::{ADBDeviceExt, HostFeatures, RustADBError};
use devicerail_host_plugin_api::protocol::DeviceId;
use devicerail_host_plugin_api::{CallContext, DriverError};

use crate::config::Config;

/// What every driver command line prints last.
pub(crate) const RC_MARKER: &str = "__rc=";
/// How often a waiting caller looks at its cancellation flag.
const POLL: Duration = Duration::from_millis(5);
/// Least time between two `adb start-server` attempts.
pub(crate) const START_RETRY: Duration = Duration::from_secs(10);
/// Longest error text carried into a message.
const MAX_ERROR_TEXT: usize = 400;

/// Why an adb operation failed.
#[derive(Debug, thiserror::Error)]
pub enum AdbError {
    /// Nothing accepts connections at the server address (after one
    /// `adb start-server` attempt, where allowed).
    #[error("the adb server at {addr} is unreachable: {reason}")]
    ServerUnreachable {
        /// The address tried (the configured server).
        addr: SocketAddrV4,
        /// The connection error, for the message.
        reason: String,
    },
    /// The device is not (or no longer) there: unknown serial, or its
    /// connection broke mid-command. The text is the whole message.
    #[error("{0}")]
    DeviceGone(String),
    /// The adb server refused because the device is in `state`.
    #[error("the adb server says the device is {state}: {message}")]
    DeviceState {
        /// The adb state named in the refusal (`offline`, `unauthorized`, ...).
        state: &'static str,
        /// The server's refusal, verbatim.
        message: String,
    },
    /// The adb server answered `FAIL` for another reason; the text is its
    /// message.
    #[error("the adb server refused the request: {0}")]
    Refused(String),
    /// The output ended without the exit-status marker: the stream closed
    /// before the command finished.
    #[error("the connection to the device ended before the command finished")]
    Truncated,
    /// The command outlived the configured command timeout (the call itself
    /// had time left).
    #[error("the device did not answer within {0:?}")]
    TimedOut(Duration),
    /// The call's own deadline passed first.
    #[error("the call's deadline passed")]
    Deadline,
    /// The host cancelled the call.
    #[error("the call was cancelled")]
    Cancelled,
    /// A command ran but exited non-zero (see [`ShellOutput::success`]).
    #[error("{what} failed with exit status {status}: {message}")]
    Failed {
        /// What was attempted, in a few words, for the message.
        what: String,
        /// The command's exit status.
        status: i32,
        /// An excerpt of its stderr (or stdout when stderr is empty).
        message: String,
    },
    /// The server or the device answered something this client cannot
    /// read, or a local resource (a worker thread) was unavailable.
    #[error("adb protocol error: {0}")]
    Protocol(String),
}

impl AdbError {
    /// The typed driver error for an operation on `device`.
    pub fn into_driver(self, device: &DeviceId) -> DriverError {
        match self {
            Self::Cancelled => DriverError::cancelled(),
            Self::Deadline => DriverError::deadline_exceeded(),
            e @ (Self::ServerUnreachable { .. }
            | Self::DeviceGone(_)
            | Self::Truncated
            | Self::TimedOut(_)) => DriverError::device_unavailable(device, e.to_string()),
            Self::DeviceState { state, .. } => crate::device_state::state_error(device, state),
            e @ Self::Failed { .. } => DriverError::action_failed(e.to_string()),
            e @ (Self::Refused(_) | Self::Protocol(_)) => DriverError::failure(e.to_string()),
        }
    }
}

/// Text cut to a readable length for messages.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    let mut out: String = text.chars().take(MAX_ERROR_TEXT).collect();
    if text.chars().count() > MAX_ERROR_TEXT {
        out.push('…');
    }
    out
}

/// The result of one command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellOutput {
    /// Standard output, without the `__rc=` marker line.
    pub stdout: Vec<u8>,
    /// Standard error; empty for `exec:` streams and on devices without
    /// shell protocol v2, whose stderr arrives mixed into `stdout`.
    pub stderr: Vec<u8>,
    /// From the `__rc=` marker.
    pub status: i32,
}

impl ShellOutput {
    /// `stdout` as text, invalid UTF-8 replaced.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Fails with [`AdbError::Failed`] unless the status is 0.
    pub fn success(self, what: &str) -> Result<Self, AdbError> {
        if self.status == 0 {
            Ok(self)
        } else {
            let message = if self.stderr.iter().any(|b| !b.is_ascii_whitespace()) {
                excerpt(&self.stderr)
            } else {
                excerpt(&self.stdout)
            };
            Err(AdbError::Failed {
                what: what.to_owned(),
                status: self.status,
                message,
            })
        }
    }
}

/// Splits the trailing `__rc=<n>` line off `stdout`; `None` when it is
/// missing (the stream was cut).
pub(crate) fn split_marker(stdout: &[u8]) -> Option<(Vec<u8>, i32)> {
    let marker = RC_MARKER.as_bytes();
    let pos = stdout.windows(marker.len()).rposition(|w| w == marker)?;
    let tail = &stdout[pos + marker.len()..];
    let digits_end = tail
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b'-'))
        .unwrap_or(tail.len());
    let status: i32 = std::str::from_utf8(&tail[..digits_end])
        .ok()?
        .parse()
        .ok()?;
    let rest = &tail[digits_end..];
    if !(rest.is_empty() || rest == b"\n" || rest == b"\r\n") {
        return None;
    }
    Some((stdout[..pos].to_vec(), status))
}

/// One line of `host:devices-l`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedDevice {
    /// The serial adb addresses the device by (`emulator-5554`,
    /// `host:port` for `adb connect`ed ones).
    pub serial: String,
    /// `device`, `offline`, `unauthorized`, `no permissions`, ...
    pub state: String,
    /// The `model:` field with `_` shown as spaces; `None` when adb reports
    /// none (typically devices that are not in state `device`).
    pub model: Option<String>,
}

/// Parses the `host:devices-l` answer (adb_client's line parser, with a
/// lenient fallback for states it does not know).
pub(crate) fn parse_devices(text: &str) -> Vec<ListedDevice> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|line| match DeviceLong::try_from(line.as_bytes()) {
            Ok(d) => Some(ListedDevice {
                serial: d.identifier,
                state: d.state.to_string(),
                model: (d.model != "Unk").then(|| d.model.replace('_', " ")),
            }),
            Err(_) => {
                let line = line.trim();
                let (serial, rest) = line.split_once(char::is_whitespace)?;
                let rest = rest.trim_start();
                let end = ["; see", " usb:", " product:", " transport_id:"]
                    .iter()
                    .filter_map(|cut| rest.find(cut))
                    .min()
                    .unwrap_or(rest.len());
                let state = rest[..end].trim();
                Some(ListedDevice {
                    serial: serial.to_owned(),
                    state: if state.is_empty() {
                        "unknown".into()
                    } else {
                        state.to_owned()
                    },
                    model: None,
                })
            }
        })
        .collect()
}

/// The end of an operation's budget and whether it is the call's own.
#[derive(Debug, Clone, Copy)]
struct Budget {
    at: Instant,
    from_call: bool,
    timeout: Duration,
}

impl Budget {
    fn new(ctx: &CallContext, timeout: Duration) -> Self {
        let own = Instant::now() + timeout;
        match ctx.deadline() {
            Some(d) if d <= own => Self {
                at: d,
                from_call: true,
                timeout,
            },
            _ => Self {
                at: own,
                from_call: false,
                timeout,
            },
        }
    }

    fn left(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    fn expired(&self) -> AdbError {
        if self.from_call {
            AdbError::Deadline
        } else {
            AdbError::TimedOut(self.timeout)
        }
    }
}

/// Runs `f` on a worker thread and waits for it within the budget,
/// watching the cancellation flag.
fn bounded<T: Send + 'static>(
    ctx: &CallContext,
    budget: Budget,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, AdbError> {
    ctx.check().map_err(|e| {
        if e.is_cancellation() {
            AdbError::Cancelled
        } else {
            AdbError::Deadline
        }
    })?;
    let (tx, rx) = mpsc::sync_channel(1);
    thread::Builder::new()
        .name("devicerail-adb".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| AdbError::Protocol(format!("cannot start a worker thread: {e}")))?;
    loop {
        if ctx.is_cancelled() {
            return Err(AdbError::Cancelled);
        }
        let left = budget.left();
        if left.is_zero() {
            return Err(budget.expired());
        }
        match rx.recv_timeout(left.min(POLL)) {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(AdbError::Protocol(
                    "the adb worker ended without a result".into(),
                ));
            }
        }
    }
}

fn classify(addr: SocketAddrV4, e: RustADBError) -> AdbError {
    match e {
        RustADBError::IOError(io) if io.kind() == io::ErrorKind::ConnectionRefused => {
            AdbError::ServerUnreachable {
                addr,
                reason: io.to_string(),
            }
        }
        RustADBError::IOError(io) => {
            AdbError::DeviceGone(format!("the connection to the device broke: {io}"))
        }
        RustADBError::ADBRequestFailed(msg) | RustADBError::DeviceNotFound(msg) => {
            let lower = msg.to_ascii_lowercase();
            if [
                "not found",
                "offline",
                "unauthorized",
                "no devices",
                "authorizing",
                "connecting",
                "no permissions",
                // The transport closed while the request was pending.
                "closed",
            ]
            .iter()
            .any(|k| lower.contains(k))
            {
                match crate::device_state::state_in_message(&msg) {
                    Some(state) => AdbError::DeviceState {
                        state,
                        message: msg,
                    },
                    None => AdbError::DeviceGone(format!("the adb server says: {msg}")),
                }
            } else {
                AdbError::Refused(msg)
            }
        }
        other => AdbError::Protocol(other.to_string()),
    }
}

/// A sink for `exec:` output that signals, when the reading side drops
/// it, that the stream has ended.
struct Collector {
    buf: Arc<Mutex<Vec<u8>>>,
    _done: mpsc::Sender<()>,
}

impl Write for Collector {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The adb server and how to reach it.
#[derive(Debug)]
pub struct Adb {
    config: Config,
    last_start: Mutex<Option<Instant>>,
}

impl Adb {
    /// A client for the server `config` names; connects lazily, per command.
    pub fn new(config: Config) -> Self {
        Self {
            config,
            last_start: Mutex::new(None),
        }
    }

    /// The configuration this client was built with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    fn budget(&self, ctx: &CallContext) -> Budget {
        Budget::new(ctx, self.config.command_timeout)
    }

    /// Runs `command` with `sh` on the device (shell protocol v2 when the
    /// device offers it) and returns its output and marker status.
    pub fn shell(
        &self,
        ctx: &CallContext,
        serial: &str,
        command: &str,
    ) -> Result<ShellOutput, AdbError> {
        let line = format!("{command}; echo {RC_MARKER}$?");
        let (addr, serial) = (self.config.server, serial.to_owned());
        let result = bounded(ctx, self.budget(ctx), move || {
            let mut device = ADBServerDevice::new(serial, Some(addr));
            let (mut out, mut err) = (Vec::new(), Vec::new());
            device
                .shell_command(&line, Some(&mut out), Some(&mut err))
                .map(|_| (out, err))
        })?;
        let (out, err) = result.map_err(|e| classify(addr, e))?;
        let (stdout, status) = split_marker(&out).ok_or(AdbError::Truncated)?;
        Ok(ShellOutput {
            stdout,
            stderr: err,
            status,
        })
    }

    /// Whether the device speaks shell protocol v2 (separate stdout and
    /// stderr, no terminal). Without it `adb_client` falls back to
    /// `shell:`, which runs under a terminal on the device.
    pub fn shell_v2(&self, ctx: &CallContext, serial: &str) -> Result<bool, AdbError> {
        let (addr, serial) = (self.config.server, serial.to_owned());
        let features = bounded(ctx, self.budget(ctx), move || {
            ADBServerDevice::new(serial, Some(addr)).host_features()
        })?
        .map_err(|e| classify(addr, e))?;
        Ok(features.contains(&HostFeatures::ShellV2))
    }

    /// Runs a command whose stdout is binary: through shell v2 when the
    /// device has it, else through `exec:` (raw, no terminal to turn `\n`
    /// into `\r\n`).
    pub fn shell_binary(
        &self,
        ctx: &CallContext,
        serial: &str,
        command: &str,
        shell_v2: bool,
    ) -> Result<ShellOutput, AdbError> {
        if shell_v2 {
            self.shell(ctx, serial, command)
        } else {
            let line = format!("{command}; echo {RC_MARKER}$?");
            self.exec_with_stdin(ctx, serial, &line, Vec::new())
        }
    }

    /// Runs `command` through `exec:` (raw, no terminal), feeds it `stdin`
    /// and collects its output until the device closes the stream. The
    /// command must print the `__rc=` marker itself.
    pub fn exec_with_stdin(
        &self,
        ctx: &CallContext,
        serial: &str,
        command: &str,
        stdin: Vec<u8>,
    ) -> Result<ShellOutput, AdbError> {
        let (addr, serial, command) = (self.config.server, serial.to_owned(), command.to_owned());
        let budget = self.budget(ctx);
        let result = bounded(ctx, budget, move || {
            let mut device = ADBServerDevice::new(serial, Some(addr));
            let buf = Arc::new(Mutex::new(Vec::new()));
            let (done_tx, done_rx) = mpsc::channel::<()>();
            let sink = Collector {
                buf: buf.clone(),
                _done: done_tx,
            };
            device.exec(&command, &mut stdin.as_slice(), Box::new(sink))?;
            // The reader drops the sink at end of stream; keep `device`
            // (and so the socket) alive until then.
            let _ = done_rx.recv_timeout(budget.left());
            drop(device);
            let out = buf.lock().map(|b| b.clone()).unwrap_or_default();
            Ok(out)
        })?;
        let out = result.map_err(|e| classify(addr, e))?;
        let (stdout, status) = split_marker(&out).ok_or(AdbError::Truncated)?;
        Ok(ShellOutput {
            stdout,
            stderr: Vec::new(),
            status,
        })
    }

    /// Every device the server knows, in every state.
    pub fn devices(&self, ctx: &CallContext) -> Result<Vec<ListedDevice>, AdbError> {
        self.host_request(ctx, "host:devices-l")
            .map(|text| parse_devices(&text))
    }

    /// The server's protocol version (`host:version`).
    pub fn server_version(&self, ctx: &CallContext) -> Result<u32, AdbError> {
        let text = self.host_request(ctx, "host:version")?;
        u32::from_str_radix(text.trim(), 16)
            .map_err(|_| AdbError::Protocol(format!("unexpected version answer {text:?}")))
    }

    /// One host service request, starting a loopback server first when
    /// allowed and needed.
    pub fn host_request(&self, ctx: &CallContext, request: &str) -> Result<String, AdbError> {
        match self.host_request_once(ctx, request) {
            Err(AdbError::ServerUnreachable { .. })
                if self.config.start_server && self.config.server.ip().is_loopback() =>
            {
                // Whether or not this call started it, ask once more.
                self.start_server(ctx)?;
                self.host_request_once(ctx, request)
            }
            other => other,
        }
    }

    fn host_request_once(&self, ctx: &CallContext, request: &str) -> Result<String, AdbError> {
        let addr = self.config.server;
        let budget = self.budget(ctx);
        let unreachable = |e: io::Error| AdbError::ServerUnreachable {
            addr,
            reason: e.to_string(),
        };
        let left = budget.left().max(Duration::from_millis(1));
        let mut s = TcpStream::connect_timeout(&SocketAddr::V4(addr), left).map_err(|e| {
            if e.kind() == io::ErrorKind::TimedOut {
                budget.expired()
            } else {
                unreachable(e)
            }
        })?;
        let io_err = |e: io::Error| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => budget.expired(),
            _ => AdbError::Protocol(format!("host request {request:?}: {e}")),
        };
        let left = budget.left().max(Duration::from_millis(1));
        s.set_read_timeout(Some(left)).map_err(io_err)?;
        s.set_write_timeout(Some(left)).map_err(io_err)?;
        s.write_all(format!("{:04x}{request}", request.len()).as_bytes())
            .map_err(io_err)?;
        let mut status = [0u8; 4];
        s.read_exact(&mut status).map_err(io_err)?;
        let mut len = [0u8; 4];
        s.read_exact(&mut len).map_err(io_err)?;
        let len = std::str::from_utf8(&len)
            .ok()
            .and_then(|t| usize::from_str_radix(t, 16).ok())
            .ok_or_else(|| AdbError::Protocol(format!("bad length {len:?}")))?;
        let mut body = vec![0u8; len];
        s.read_exact(&mut body).map_err(io_err)?;
        let body = String::from_utf8_lossy(&body).into_owned();
        match &status {
            b"OKAY" => Ok(body),
            b"FAIL" => Err(AdbError::Refused(body)),
            other => Err(AdbError::Protocol(format!(
                "unexpected status {:?}",
                String::from_utf8_lossy(other)
            ))),
        }
    }

    /// Runs `adb -P <port> start-server`; false when an attempt was made
    /// too recently.
    fn start_server(&self, ctx: &CallContext) -> Result<bool, AdbError> {
        {
            let mut last = self.last_start.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|t| t.elapsed() < START_RETRY) {
                return Ok(false);
            }
            *last = Some(Instant::now());
        }
        let port = self.config.server.port().to_string();
        tracing::info!(port = %port, adb = %self.config.adb_path, "starting the adb server");
        let mut child = Command::new(&self.config.adb_path)
            .args(["-P", &port, "start-server"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| AdbError::ServerUnreachable {
                addr: self.config.server,
                reason: format!("cannot run {} start-server: {e}", self.config.adb_path),
            })?;
        let budget = self.budget(ctx);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return Ok(true),
                Ok(None) => {}
                Err(e) => return Err(AdbError::Protocol(e.to_string())),
            }
            if ctx.is_cancelled() || budget.left().is_zero() {
                // The daemon may still come up; do not leave a zombie.
                thread::spawn(move || child.wait());
                return Err(if ctx.is_cancelled() {
                    AdbError::Cancelled
                } else {
                    budget.expired()
                });
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_is_split_off_text_and_binary() {
        assert_eq!(
            split_marker(b"hello\n__rc=0\n"),
            Some((b"hello\n".to_vec(), 0))
        );
        assert_eq!(split_marker(b"__rc=127\r\n"), Some((Vec::new(), 127)));
        // Binary data that happens to contain the marker earlier.
        let mut data = b"\x00__rc=9\x01\x02".to_vec();
        data.extend_from_slice(b"__rc=3\n");
        assert_eq!(
            split_marker(&data),
            Some((b"\x00__rc=9\x01\x02".to_vec(), 3))
        );
        assert_eq!(split_marker(b"partial output"), None);
        assert_eq!(split_marker(b"__rc=1\nmore"), None);
    }

    #[test]
    fn device_lines_in_every_state() {
        let text = "127.0.0.1:40001        device product:fake_pixel model:Fake_Pixel device:fakepixel transport_id:1\n\
                    127.0.0.1:40002        unauthorized transport_id:2\n\
                    127.0.0.1:40003        offline transport_id:3\n\
                    0123456789ABCDEF       no permissions (missing udev rules? user is in the plugdev group); see [http://developer.android.com/tools/device.html] usb:1-1 transport_id:4\n";
        let d = parse_devices(text);
        assert_eq!(d.len(), 4);
        assert_eq!(d[0].state, "device");
        assert_eq!(d[0].model.as_deref(), Some("Fake Pixel"));
        assert_eq!(d[1].state, "unauthorized");
        assert_eq!(d[2].state, "offline");
        assert_eq!(d[3].serial, "0123456789ABCDEF");
        assert_eq!(
            d[3].state,
            "no permissions (missing udev rules? user is in the plugdev group)"
        );
    }

    #[test]
    fn budgets_prefer_the_earlier_end() {
        let ctx = CallContext::new(Some(Instant::now() + Duration::from_millis(5)));
        let b = Budget::new(&ctx, Duration::from_secs(30));
        assert!(b.from_call);
        let r = bounded(&ctx, b, || thread::sleep(Duration::from_millis(200)));
        assert!(matches!(r, Err(AdbError::Deadline)));
        let ctx = CallContext::unbounded();
        let b = Budget::new(&ctx, Duration::from_millis(5));
        let r = bounded(&ctx, b, || thread::sleep(Duration::from_millis(200)));
        assert!(matches!(r, Err(AdbError::TimedOut(_))));
        let ctx = CallContext::unbounded();
        ctx.cancel();
        let r = bounded(&ctx, b, || 1);
        assert!(matches!(r, Err(AdbError::Cancelled)));
    }
}

/// A shell kept open on one device: an `exec:sh` stream through the adb
/// server (no terminal), to which command lines are written one at a time
/// and whose output is read up to the `__rc=` marker each line prints.
/// What touch input runs on: a write costs a few milliseconds instead of
/// a new stream per command. A session that breaks (the device vanished,
/// a read timed out) is dropped by its owner and opened again.
#[derive(Debug)]
pub(crate) struct ShellSession {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl ShellSession {
    /// Opens `exec:sh` on `serial` through the server at `addr`, within
    /// `budget`.
    pub(crate) fn open(
        addr: SocketAddrV4,
        serial: &str,
        budget: Duration,
    ) -> Result<Self, AdbError> {
        let budget = budget.max(Duration::from_millis(10));
        let io_err = |e: io::Error| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => AdbError::Deadline,
            io::ErrorKind::ConnectionRefused => AdbError::ServerUnreachable {
                addr,
                reason: e.to_string(),
            },
            _ => AdbError::DeviceGone(format!("the shell session broke: {e}")),
        };
        let mut stream =
            TcpStream::connect_timeout(&SocketAddr::V4(addr), budget).map_err(io_err)?;
        stream.set_read_timeout(Some(budget)).map_err(io_err)?;
        stream.set_write_timeout(Some(budget)).map_err(io_err)?;
        let _ = stream.set_nodelay(true);
        for request in [format!("host:transport:{serial}"), "exec:sh".to_owned()] {
            stream
                .write_all(format!("{:04x}{request}", request.len()).as_bytes())
                .map_err(io_err)?;
            let mut status = [0u8; 4];
            stream.read_exact(&mut status).map_err(io_err)?;
            if &status != b"OKAY" {
                let mut len = [0u8; 4];
                let message = stream
                    .read_exact(&mut len)
                    .ok()
                    .and_then(|()| usize::from_str_radix(std::str::from_utf8(&len).ok()?, 16).ok())
                    .map(|n| {
                        let mut body = vec![0u8; n.min(4096)];
                        let _ = stream.read_exact(&mut body);
                        String::from_utf8_lossy(&body).into_owned()
                    })
                    .unwrap_or_default();
                return Err(classify(
                    addr,
                    RustADBError::ADBRequestFailed(format!("{request}: {message}")),
                ));
            }
        }
        Ok(Self {
            stream,
            buf: Vec::new(),
        })
    }

    /// Runs `command` (its stderr folded into stdout) and returns its
    /// output and status, within `budget`.
    pub(crate) fn run(&mut self, command: &str, budget: Duration) -> Result<ShellOutput, AdbError> {
        let budget = budget.max(Duration::from_millis(10));
        let deadline = Instant::now() + budget;
        let io_err = |e: io::Error| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => AdbError::Deadline,
            _ => AdbError::DeviceGone(format!("the shell session broke: {e}")),
        };
        self.stream
            .set_write_timeout(Some(budget))
            .map_err(io_err)?;
        self.stream
            .write_all(format!("{command} 2>&1; echo {RC_MARKER}$?\n").as_bytes())
            .map_err(io_err)?;
        let mut chunk = [0u8; 8192];
        loop {
            if let Some(end) = marker_line_end(&self.buf) {
                let line: Vec<u8> = self.buf.drain(..end).collect();
                let (stdout, status) = split_marker(&line).ok_or(AdbError::Truncated)?;
                return Ok(ShellOutput {
                    stdout,
                    stderr: Vec::new(),
                    status,
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(AdbError::Deadline);
            }
            self.stream.set_read_timeout(Some(left)).map_err(io_err)?;
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(AdbError::Truncated),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(e)),
            }
        }
    }
}

/// Where the first `__rc=N` line of `buf` ends (after its newline).
fn marker_line_end(buf: &[u8]) -> Option<usize> {
    let marker = RC_MARKER.as_bytes();
    let pos = buf.windows(marker.len()).position(|w| w == marker)?;
    let nl = buf[pos..].iter().position(|b| *b == b'\n')?;
    Some(pos + nl + 1)
}

#[cfg(test)]
mod session_tests {
    use super::*;

    #[test]
    fn the_marker_line_ends_a_command() {
        assert_eq!(marker_line_end(b"out\n__rc=0\nnext"), Some(11));
        assert_eq!(marker_line_end(b"out\n__rc=0"), None);
        assert_eq!(split_marker(b"out\n__rc=1\n"), Some((b"out\n".to_vec(), 1)));
    }
}
