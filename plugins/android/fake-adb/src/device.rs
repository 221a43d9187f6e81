//! `FakeAdbDevice`: a TCP listener that a real adb server reaches with
//! `adb connect 127.0.0.1:<port>`, speaking the device side of the ADB
//! transport protocol.
//!
//! Per connection: the server's `CNXN` is answered with our `CNXN`
//! (version and max payload negotiated down to the smaller of both), or
//! with `AUTH` tokens that are never satisfied (`unauthorized`), or not at
//! all (`offline`). Streams: `OPEN` gets `OKAY` with our local id, output
//! goes out as `WRTE` chunks of at most the negotiated payload, each
//! waiting for the server's `OKAY`, and ends with `CLSE`. Services:
//! `shell:` (raw bytes), `shell,v2,...:` (shell protocol v2 packets:
//! stdin/stdout/stderr/exit/close-stdin) and `exec:` (raw, with stdin).

use std::collections::HashMap;
use std::io::{self, Read};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use crate::app::{AppState, Device, DeviceProfile, InputCall, InputSource};
use crate::packet::{
    A_AUTH, A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_VERSION_SKIP_CHECKSUM, A_WRTE, AUTH_RSAPUBLICKEY,
    AUTH_SIGNATURE, AUTH_TOKEN, Packet,
};
use crate::shell;

/// How long a stream waits for the server's `OKAY` or for stdin.
const STREAM_TIMEOUT: Duration = Duration::from_secs(20);

/// Shell protocol v2 packet ids.
const SHELL_STDIN: u8 = 0;
const SHELL_STDOUT: u8 = 1;
const SHELL_STDERR: u8 = 2;
const SHELL_EXIT: u8 = 3;
const SHELL_CLOSE_STDIN: u8 = 4;

/// How the fake answers the server's `CNXN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// `CNXN` back at once: the server lists the device as `device`.
    Online,
    /// `AUTH` tokens, never accepting a signature or key: `unauthorized`.
    Unauthorized,
    /// Silence after the server's `CNXN`: `offline`.
    Offline,
}

/// Configuration of one fake device.
#[derive(Debug, Clone)]
pub struct FakeConfig {
    /// The device's static facts (model, display, dump details).
    pub profile: DeviceProfile,
    /// How it answers the server's connection.
    pub availability: Availability,
    /// Our `CNXN` version (`0x01000000` makes both sides checksum).
    pub version: u32,
    /// Our max payload; the smaller of ours and the server's wins.
    pub max_payload: u32,
    /// The `features=` list of the banner.
    pub features: Vec<String>,
}

impl Default for FakeConfig {
    fn default() -> Self {
        Self {
            profile: DeviceProfile::default(),
            availability: Availability::Online,
            version: A_VERSION_SKIP_CHECKSUM,
            max_payload: 256 * 1024,
            features: [
                "shell_v2",
                "cmd",
                "stat_v2",
                "ls_v2",
                "fixed_push_mkdir",
                "abb",
                "abb_exec",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        }
    }
}

/// One stream the server opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceCall {
    /// The full `OPEN` destination, e.g. `shell,v2,raw:wm size`.
    pub destination: String,
    /// `shell`, `shell,v2`, `exec`, or the destination's prefix.
    pub kind: String,
    /// The command line after the first `:`.
    pub command: String,
}

#[derive(Debug)]
enum StreamEvent {
    Data(Vec<u8>),
    Okay,
    Close,
}

struct Shared {
    device: Mutex<Device>,
    config: FakeConfig,
    calls: Mutex<Vec<ServiceCall>>,
    stdin_log: Mutex<Vec<u8>>,
    vanish_on: Mutex<Option<String>>,
    refuse: AtomicBool,
    stop: AtomicBool,
    sockets: Mutex<Vec<TcpStream>>,
    connections: AtomicU32,
}

impl Shared {
    fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn close_all(&self) {
        for s in Self::lock(&self.sockets).drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// A fake Android device reachable over TCP.
pub struct FakeAdbDevice {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<thread::JoinHandle<()>>,
}

impl std::fmt::Debug for FakeAdbDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeAdbDevice")
            .field("addr", &self.addr)
            .finish()
    }
}

/// Binds 127.0.0.1 on an ephemeral port outside the adb server's
/// emulator range (5555-5585) and its own default port.
fn bind_outside_emulator_range() -> io::Result<TcpListener> {
    for _ in 0..32 {
        let l = TcpListener::bind(("127.0.0.1", 0))?;
        let port = l.local_addr()?.port();
        if !(5555..=5585).contains(&port) && port != 5037 {
            return Ok(l);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AddrNotAvailable,
        "no port outside the emulator range",
    ))
}

impl FakeAdbDevice {
    /// Starts listening; the server reaches it after `adb connect`.
    pub fn start(config: FakeConfig) -> io::Result<Self> {
        let listener = bind_outside_emulator_range()?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            device: Mutex::new(Device::new(config.profile.clone())),
            config,
            calls: Mutex::new(Vec::new()),
            stdin_log: Mutex::new(Vec::new()),
            vanish_on: Mutex::new(None),
            refuse: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            sockets: Mutex::new(Vec::new()),
            connections: AtomicU32::new(0),
        });
        let s = shared.clone();
        let accept = thread::Builder::new()
            .name(format!("fake-adb-{}", addr.port()))
            .spawn(move || accept_loop(listener, s))?;
        Ok(Self {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// A device with the default profile, online.
    pub fn online() -> io::Result<Self> {
        Self::start(FakeConfig::default())
    }

    /// The loopback TCP port it listens on (for `adb connect`).
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The serial the adb server gives it: `127.0.0.1:<port>`.
    pub fn serial(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }

    /// Every stream the server opened, in order.
    pub fn calls(&self) -> Vec<ServiceCall> {
        Shared::lock(&self.shared.calls).clone()
    }

    /// The command lines of every stream, in order.
    pub fn command_lines(&self) -> Vec<String> {
        self.calls().into_iter().map(|c| c.command).collect()
    }

    /// Every byte received as stdin (exec: data, shell v2 stdin packets).
    pub fn stdin_received(&self) -> Vec<u8> {
        Shared::lock(&self.shared.stdin_log).clone()
    }

    /// Every `input` invocation.
    pub fn inputs(&self) -> Vec<InputCall> {
        Shared::lock(&self.shared.device).state.inputs.clone()
    }

    /// A copy of the app state.
    pub fn state(&self) -> AppState {
        Shared::lock(&self.shared.device).state.clone()
    }

    /// Changes the device (profile or app state).
    pub fn with_device<T>(&self, f: impl FnOnce(&mut Device) -> T) -> T {
        f(&mut Shared::lock(&self.shared.device))
    }

    /// Clears the call, stdin and input logs.
    pub fn clear_logs(&self) {
        Shared::lock(&self.shared.calls).clear();
        Shared::lock(&self.shared.stdin_log).clear();
        Shared::lock(&self.shared.device).state.inputs.clear();
    }

    /// The next stream whose destination contains `needle` makes the
    /// device vanish: every socket is closed without an answer and new
    /// connections are refused until [`FakeAdbDevice::reappear`].
    pub fn vanish_on(&self, needle: &str) {
        *Shared::lock(&self.shared.vanish_on) = Some(needle.to_owned());
    }

    /// Drops every connection now and refuses new ones.
    pub fn vanish(&self) {
        self.shared.refuse.store(true, Ordering::SeqCst);
        self.shared.close_all();
    }

    /// Accepts connections again.
    pub fn reappear(&self) {
        self.shared.refuse.store(false, Ordering::SeqCst);
    }

    /// How many transport connections the server made so far.
    pub fn connection_count(&self) -> u32 {
        self.shared.connections.load(Ordering::SeqCst)
    }
}

impl Drop for FakeAdbDevice {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.close_all();
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(conn) = conn else { continue };
        if shared.refuse.load(Ordering::SeqCst) {
            let _ = conn.shutdown(Shutdown::Both);
            continue;
        }
        let _ = conn.set_nodelay(true);
        if let Ok(c) = conn.try_clone() {
            Shared::lock(&shared.sockets).push(c);
        }
        shared.connections.fetch_add(1, Ordering::SeqCst);
        let s = shared.clone();
        let _ = thread::Builder::new()
            .name("fake-adb-conn".into())
            .spawn(move || {
                if let Err(e) = serve_connection(conn, &s) {
                    // The server hung up or the test made us vanish.
                    let _ = e;
                }
            });
    }
}

/// Writes packets for every stream of one connection.
#[derive(Clone)]
struct Writer {
    stream: Arc<Mutex<TcpStream>>,
}

impl Writer {
    fn send(&self, p: &Packet) -> io::Result<()> {
        let mut s = Shared::lock(&self.stream);
        p.write_to(&mut *s)
    }
}

fn random_token() -> Vec<u8> {
    // Not security relevant: the token only has to look like one.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        ^ 0x9e37_79b9_7f4a_7c15;
    (0..20u64)
        .map(|i| (seed.wrapping_mul(i + 1).rotate_left(i as u32) >> 24) as u8)
        .collect()
}

fn serve_connection(conn: TcpStream, shared: &Arc<Shared>) -> io::Result<()> {
    let mut reader = conn.try_clone()?;
    let writer = Writer {
        stream: Arc::new(Mutex::new(conn)),
    };
    let config = &shared.config;
    // The server speaks first.
    let hello = read(&mut reader, false)?;
    if hello.command != A_CNXN {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "expected CNXN"));
    }
    let version = hello.arg0.min(config.version);
    let max_payload = hello.arg1.min(config.max_payload).max(256) as usize;
    let checksums = version < A_VERSION_SKIP_CHECKSUM;
    match config.availability {
        Availability::Offline => loop {
            // Say nothing; swallow whatever comes until the server gives up.
            read(&mut reader, checksums)?;
        },
        Availability::Unauthorized => {
            writer.send(&Packet::new(A_AUTH, AUTH_TOKEN, 0, random_token()))?;
            loop {
                let p = read(&mut reader, checksums)?;
                if p.command == A_AUTH && p.arg0 == AUTH_SIGNATURE {
                    writer.send(&Packet::new(A_AUTH, AUTH_TOKEN, 0, random_token()))?;
                }
                // AUTH_RSAPUBLICKEY: the user never accepts the prompt.
                let _ = AUTH_RSAPUBLICKEY;
            }
        }
        Availability::Online => {}
    }
    let p = &config.profile;
    let banner = format!(
        "device::ro.product.name={};ro.product.model={};ro.product.device={};features={}",
        p.product,
        p.model,
        p.device,
        config.features.join(",")
    );
    writer.send(&Packet::new(
        A_CNXN,
        config.version,
        config.max_payload,
        banner.into_bytes(),
    ))?;

    let mut streams: HashMap<u32, Sender<StreamEvent>> = HashMap::new();
    let mut next_id: u32 = 1;
    loop {
        let p = read(&mut reader, checksums)?;
        match p.command {
            A_OPEN => {
                let destination = String::from_utf8_lossy(&p.payload)
                    .trim_end_matches('\0')
                    .to_owned();
                let remote = p.arg0;
                let vanish = {
                    let mut v = Shared::lock(&shared.vanish_on);
                    match v.as_deref() {
                        Some(needle) if destination.contains(needle) => {
                            *v = None;
                            true
                        }
                        _ => false,
                    }
                };
                if vanish {
                    record(shared, &destination);
                    shared.refuse.store(true, Ordering::SeqCst);
                    shared.close_all();
                    return Ok(());
                }
                let local = next_id;
                next_id = next_id.wrapping_add(1).max(1);
                let (tx, rx) = mpsc::channel();
                streams.insert(local, tx);
                let ctx = StreamCtx {
                    local,
                    remote,
                    max_payload,
                    writer: writer.clone(),
                    events: rx,
                    shared: shared.clone(),
                };
                thread::Builder::new()
                    .name(format!("fake-adb-stream-{local}"))
                    .spawn(move || ctx.run(destination))?;
            }
            A_WRTE => {
                // arg0: the server's id, arg1: ours.
                if let Some(tx) = streams.get(&p.arg1) {
                    let _ = tx.send(StreamEvent::Data(p.payload));
                    writer.send(&Packet::new(A_OKAY, p.arg1, p.arg0, Vec::new()))?;
                }
            }
            A_OKAY => {
                if let Some(tx) = streams.get(&p.arg1) {
                    let _ = tx.send(StreamEvent::Okay);
                }
            }
            A_CLSE => {
                if let Some(tx) = streams.remove(&p.arg1) {
                    let _ = tx.send(StreamEvent::Close);
                }
            }
            // A second CNXN restarts the session; AUTH, SYNC, STLS are
            // not used by online devices.
            _ => {}
        }
    }
}

fn read(reader: &mut impl Read, checksums: bool) -> io::Result<Packet> {
    Packet::read_from(reader, checksums).map_err(|e| match e {
        crate::packet::PacketError::Io(e) => e,
        other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
    })
}

fn record(shared: &Shared, destination: &str) -> ServiceCall {
    let (kind, command) = destination
        .split_once(':')
        .map(|(k, c)| (k.to_owned(), c.to_owned()))
        .unwrap_or_else(|| (destination.to_owned(), String::new()));
    // "shell,v2,TERM=xterm,raw" -> "shell,v2"
    let kind = if kind.starts_with("shell") {
        if kind.split(',').any(|a| a == "v2") {
            "shell,v2".to_owned()
        } else {
            "shell".to_owned()
        }
    } else {
        kind
    };
    let call = ServiceCall {
        destination: destination.to_owned(),
        kind,
        command,
    };
    Shared::lock(&shared.calls).push(call.clone());
    call
}

struct StreamCtx {
    local: u32,
    remote: u32,
    max_payload: usize,
    writer: Writer,
    events: Receiver<StreamEvent>,
    shared: Arc<Shared>,
}

/// How a stream frames its output.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Framing {
    Raw,
    ShellV2,
}

impl StreamCtx {
    fn run(self, destination: String) {
        let call = record(&self.shared, &destination);
        let framing = match call.kind.as_str() {
            "shell,v2" => Framing::ShellV2,
            "shell" | "exec" => Framing::Raw,
            _ => {
                let _ = self
                    .writer
                    .send(&Packet::new(A_CLSE, 0, self.remote, Vec::new()));
                return;
            }
        };
        if self
            .writer
            .send(&Packet::new(A_OKAY, self.local, self.remote, Vec::new()))
            .is_err()
        {
            return;
        }
        let mut stdin = Stdin {
            events: &self.events,
            framing,
            buf: Vec::new(),
            closed: false,
            acks: 0,
            shared: &self.shared,
        };
        let started = Instant::now();
        let stream_cost = Shared::lock(&self.shared.device)
            .profile
            .latency
            .cost(crate::latency::Cost::Stream);
        if is_session(&call.command) {
            self.session(&mut stdin, framing, started + stream_cost);
            return;
        }
        let out = if is_line_loop(&call.command) {
            run_line_loop(&self.shared, &mut stdin)
        } else {
            let mut device = Shared::lock(&self.shared.device);
            shell::run(&mut *device, &call.command, b"")
        };
        // The device lock is free while the command "runs": other streams
        // (a screenshot beside a dump) overlap as on a phone.
        wait_until(started + stream_cost + out.cost);
        let mut acks = stdin.acks;
        let bytes = match framing {
            Framing::Raw => out.merged,
            Framing::ShellV2 => {
                let mut b = Vec::new();
                for (id, data) in [(SHELL_STDOUT, &out.stdout), (SHELL_STDERR, &out.stderr)] {
                    // Several packets, as a real device's 4 KiB reads.
                    for chunk in data.chunks(64 * 1024) {
                        b.push(id);
                        b.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
                        b.extend_from_slice(chunk);
                    }
                }
                b.push(SHELL_EXIT);
                b.extend_from_slice(&1u32.to_le_bytes());
                b.push(out.status.clamp(0, 255) as u8);
                b
            }
        };
        for chunk in bytes.chunks(self.max_payload) {
            let wrte = Packet::new(A_WRTE, self.local, self.remote, chunk.to_vec());
            if self.writer.send(&wrte).is_err() {
                return;
            }
            if !self.wait_okay(&mut acks) {
                return;
            }
        }
        let _ = self
            .writer
            .send(&Packet::new(A_CLSE, self.local, self.remote, Vec::new()));
    }

    /// An interactive shell (`shell:` or `exec:sh` with no command): each
    /// line of stdin runs as a command line, its output written back as
    /// it finishes, until stdin ends.
    fn session(&self, stdin: &mut Stdin<'_>, framing: Framing, ready: Instant) {
        wait_until(ready);
        let mut acks = 0;
        let mut status = 0;
        while let Some(line) = stdin.line() {
            let started = Instant::now();
            let out = {
                let mut device = Shared::lock(&self.shared.device);
                shell::run(&mut *device, &line, b"")
            };
            wait_until(started + out.cost);
            status = out.status;
            acks += std::mem::take(&mut stdin.acks);
            let bytes = match framing {
                Framing::Raw => out.merged,
                Framing::ShellV2 => {
                    let mut b = Vec::new();
                    for (id, data) in [(SHELL_STDOUT, &out.stdout), (SHELL_STDERR, &out.stderr)] {
                        if !data.is_empty() {
                            b.push(id);
                            b.extend_from_slice(&(data.len() as u32).to_le_bytes());
                            b.extend_from_slice(data);
                        }
                    }
                    b
                }
            };
            for chunk in bytes.chunks(self.max_payload) {
                let wrte = Packet::new(A_WRTE, self.local, self.remote, chunk.to_vec());
                if self.writer.send(&wrte).is_err() || !self.wait_okay_feeding(&mut acks, stdin) {
                    return;
                }
            }
        }
        if framing == Framing::ShellV2 {
            let exit = vec![SHELL_EXIT, 1, 0, 0, 0, status.clamp(0, 255) as u8];
            let wrte = Packet::new(A_WRTE, self.local, self.remote, exit);
            if self.writer.send(&wrte).is_err() || !self.wait_okay_feeding(&mut acks, stdin) {
                return;
            }
        }
        let _ = self
            .writer
            .send(&Packet::new(A_CLSE, self.local, self.remote, Vec::new()));
    }

    /// [`StreamCtx::wait_okay`] for a session: stdin that arrives
    /// meanwhile is kept for the next lines instead of dropped.
    fn wait_okay_feeding(&self, acks: &mut u32, stdin: &mut Stdin<'_>) -> bool {
        if *acks > 0 {
            *acks -= 1;
            return true;
        }
        let deadline = Instant::now() + STREAM_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(StreamEvent::Okay) => return true,
                Ok(StreamEvent::Data(d)) => {
                    self.shared_stdin(&d);
                    stdin.push(&d);
                }
                Ok(StreamEvent::Close) | Err(_) => return false,
            }
        }
    }

    /// Waits for the server's OKAY of our last WRTE; false when the stream
    /// was closed or timed out.
    fn wait_okay(&self, acks: &mut u32) -> bool {
        if *acks > 0 {
            *acks -= 1;
            return true;
        }
        let deadline = Instant::now() + STREAM_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(StreamEvent::Okay) => return true,
                Ok(StreamEvent::Data(d)) => self.shared_stdin(&d),
                Ok(StreamEvent::Close) | Err(_) => return false,
            }
        }
    }

    fn shared_stdin(&self, d: &[u8]) {
        Shared::lock(&self.shared.stdin_log).extend_from_slice(d);
    }
}

/// The stream's stdin, decoded from raw data or shell v2 packets.
struct Stdin<'a> {
    events: &'a Receiver<StreamEvent>,
    framing: Framing,
    buf: Vec<u8>,
    closed: bool,
    /// OKAYs that arrived while waiting for stdin (none are expected
    /// before our first WRTE, but stay robust).
    acks: u32,
    shared: &'a Shared,
}

impl Stdin<'_> {
    /// The next line without its `\n`, or `None` at end of input.
    fn line(&mut self) -> Option<String> {
        let deadline = Instant::now() + STREAM_TIMEOUT;
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return Some(String::from_utf8_lossy(&line[..line.len() - 1]).into_owned());
            }
            if self.closed {
                return None;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(StreamEvent::Data(d)) => {
                    Shared::lock(&self.shared.stdin_log).extend_from_slice(&d);
                    self.push(&d);
                }
                Ok(StreamEvent::Okay) => self.acks += 1,
                Ok(StreamEvent::Close) | Err(RecvTimeoutError::Timeout) => self.closed = true,
                Err(RecvTimeoutError::Disconnected) => self.closed = true,
            }
        }
    }

    fn push(&mut self, d: &[u8]) {
        match self.framing {
            Framing::Raw => self.buf.extend_from_slice(d),
            Framing::ShellV2 => {
                // Packets may straddle WRTE boundaries only in theory; the
                // driver writes whole packets.
                let mut rest = d;
                while rest.len() >= 5 {
                    let id = rest[0];
                    let len = u32::from_le_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
                    let end = (5 + len).min(rest.len());
                    match id {
                        SHELL_STDIN => self.buf.extend_from_slice(&rest[5..end]),
                        SHELL_CLOSE_STDIN => self.closed = true,
                        _ => {}
                    }
                    rest = &rest[end..];
                }
            }
        }
    }
}

/// Whether `command` opens an interactive shell (`shell:`, `exec:sh`).
fn is_session(command: &str) -> bool {
    matches!(command.trim(), "" | "sh" | "/system/bin/sh")
}

/// Sleeps until `t` (returns at once when it passed).
fn wait_until(t: Instant) {
    let left = t.saturating_duration_since(Instant::now());
    if !left.is_zero() {
        std::thread::sleep(left);
    }
}

/// The driver's stdin typing loop: a `while IFS= read -r` over lines of
/// `t<encoded text>` (one `input text`), `k<keycode>` (one `input
/// keyevent`), ended by a `.` line; it prints `__rc=<status>`.
fn is_line_loop(command: &str) -> bool {
    command.contains("IFS= read -r")
}

fn run_line_loop(shared: &Shared, stdin: &mut Stdin<'_>) -> shell::Output {
    let mut status = 0;
    while let Some(line) = stdin.line() {
        if line == "." {
            break;
        }
        let started = Instant::now();
        let (out, cost) = {
            let mut device = Shared::lock(&shared.device);
            let out = if let Some(text) = line.strip_prefix('t') {
                device.input(InputSource::Stdin, &["text".into(), text.into()])
            } else if let Some(code) = line.strip_prefix('k') {
                device.input(InputSource::Stdin, &["keyevent".into(), code.into()])
            } else {
                shell::Output::fail(1, Vec::new())
            };
            let cost = device.profile.latency.cost(crate::latency::Cost::Input);
            (out, cost)
        };
        wait_until(started + cost);
        if out.status != 0 {
            status = out.status;
            break;
        }
    }
    let mut out = shell::Output::ok(format!("__rc={status}\n"));
    out.merged = out.stdout.clone();
    out
}
