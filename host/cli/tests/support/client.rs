//! The host driven through the protocol authors' official Rust client
//! (`devicerail-client` from crates.io): what a Rust user of the host sees,
//! typed results decoded by the client and every server frame checked by
//! it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use devicerail_client::methods::{ControlMethod, NoParams};
use devicerail_client::protocol::{HelloParams, RpcError};
use devicerail_client::{
    CallOptions, ClientError, ClientOptions, ControlTransportKind, DeviceRailClient, SpawnConfig,
    default_hello,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Options, plugins_dir_with_mock};

/// How long a spawn (hello included) or one call may take.
pub(crate) const WAIT: Duration = Duration::from_secs(60);

/// A host driven by the official client, with its temporary root.
pub(crate) struct ClientHost {
    pub client: DeviceRailClient,
    pub root: PathBuf,
    _tmp: Option<tempfile::TempDir>,
    /// The host process, when the test spawned it itself (to signal it,
    /// kill it or read its exit status); otherwise the client owns it.
    process: Option<Process>,
}

/// Runs `config`'s command with piped stdio (its stderr collected) and
/// attaches the official client to it, which says hello.
async fn spawn_owned(config: SpawnConfig) -> Result<(DeviceRailClient, Process), ClientError> {
    let mut cmd = tokio::process::Command::new(&config.command);
    cmd.args(&config.args)
        .envs(&config.env)
        .env_remove("DEVICERAIL_SCREENSHOT_POLICY")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("spawn");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let sink = stderr.clone();
    tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let mut buf = [0u8; 8192];
        while let Ok(n) = err.read(&mut buf).await {
            if n == 0 {
                break;
            }
            sink.lock().expect("stderr").extend_from_slice(&buf[..n]);
        }
    });
    let attached = tokio::time::timeout(
        WAIT,
        DeviceRailClient::attach(
            stdout,
            stdin,
            ControlTransportKind::Stdio,
            config.hello,
            ClientOptions::default(),
        ),
    )
    .await
    .expect("hello answered in time");
    let process = Process { child, stderr };
    match attached {
        Ok(client) => Ok((client, process)),
        Err(e) => {
            let text =
                String::from_utf8_lossy(&process.stderr.lock().expect("stderr")).into_owned();
            eprintln!("stderr of the spawned process:\n{text}");
            Err(e)
        }
    }
}

/// A process the test spawned, its pipes handed to the client.
struct Process {
    child: tokio::process::Child,
    stderr: Arc<Mutex<Vec<u8>>>,
}

/// The hello the official client sends by default, under our test name.
pub(crate) fn hello() -> HelloParams {
    let mut h = default_hello();
    h.client.name = "e2e-official-client".into();
    h
}

/// A hello offering only `optional` (protocol 1.0–1.5).
pub(crate) fn hello_with(optional: &[&str]) -> HelloParams {
    let mut h = hello();
    h.features.optional = optional.iter().map(|s| (*s).to_owned()).collect();
    h.features.required.clear();
    h
}

/// The `serve` command line for `opts` under `root`.
pub(crate) fn spawn_config(opts: &Options, root: &Path, hello: HelloParams) -> SpawnConfig {
    let plugins = if opts.no_plugins {
        let d = root.join("empty-plugins");
        std::fs::create_dir_all(&d).expect("mkdir");
        d
    } else if root.join("plugins").exists() {
        root.join("plugins")
    } else {
        plugins_dir_with_mock(root)
    };
    let data = opts.data_dir.clone().unwrap_or_else(|| root.join("data"));
    let mut config = SpawnConfig::new(env!("CARGO_BIN_EXE_devicerail"), hello)
        .arg("serve")
        .arg("--plugins-dir")
        .arg(plugins)
        .arg("--data-dir")
        .arg(data)
        .env("RUST_LOG", "info");
    if let Some(text) = &opts.config {
        let file = root.join("config.toml");
        std::fs::write(&file, text).expect("write the configuration file");
        config = config.arg("--config").arg(file);
    }
    if let Some(p) = opts.screenshot_policy {
        config = config.arg("--screenshot-policy").arg(p);
    }
    if opts.faults {
        config = config.env("DEVICERAIL_MOCK_FAULTS", "1");
    }
    if let Some(n) = opts.devices {
        config = config.env("DEVICERAIL_MOCK_DEVICES", n.to_string());
    }
    for (k, v) in &opts.env {
        config = config.env(k, v);
    }
    config
}

fn root_of(opts: &Options) -> (Option<tempfile::TempDir>, PathBuf) {
    match &opts.root {
        Some(r) => (None, r.clone()),
        None => {
            let t = tempfile::tempdir().expect("tempdir");
            let p = t.path().to_path_buf();
            (Some(t), p)
        }
    }
}

impl ClientHost {
    /// Spawns a host through the official client (which says hello).
    pub(crate) async fn start(opts: Options, hello: HelloParams) -> Result<Self, ClientError> {
        let (tmp, root) = root_of(&opts);
        let config = spawn_config(&opts, &root, hello);
        let client = tokio::time::timeout(WAIT, DeviceRailClient::spawn(config))
            .await
            .expect("the host answers hello in time")?;
        Ok(Self {
            client,
            root,
            _tmp: tmp,
            process: None,
        })
    }

    /// A host with the default options and hello.
    pub(crate) async fn started() -> Self {
        Self::start(Options::default(), hello())
            .await
            .expect("the host starts")
    }

    /// Spawns the host itself (same command line as [`ClientHost::start`])
    /// and attaches the official client to its pipes, so the test can
    /// signal or kill the process and read its exit status.
    pub(crate) async fn start_owned(
        opts: Options,
        hello: HelloParams,
    ) -> Result<Self, ClientError> {
        let (tmp, root) = root_of(&opts);
        let config = spawn_config(&opts, &root, hello);
        let (client, process) = spawn_owned(config).await?;
        Ok(Self {
            client,
            root,
            _tmp: tmp,
            process: Some(process),
        })
    }

    /// Runs `config` (any `devicerail` binary and arguments: a release
    /// archive's, say) and attaches the official client to its pipes.
    pub(crate) async fn start_config(config: SpawnConfig) -> Result<Self, ClientError> {
        let (client, process) = spawn_owned(config).await?;
        Ok(Self {
            client,
            root: PathBuf::new(),
            _tmp: None,
            process: Some(process),
        })
    }

    /// A client of the shared host listening on `socket`, through a
    /// `devicerail attach` process the test owns (to kill it, as a client
    /// that dies).
    pub(crate) async fn attach_owned(
        socket: &Path,
        hello: HelloParams,
    ) -> Result<Self, ClientError> {
        Self::attach_with_env(socket, hello, &[]).await
    }

    /// [`ClientHost::attach_owned`] with `devicerail attach` given `env`
    /// (a reservation token, say).
    pub(crate) async fn attach_with_env(
        socket: &Path,
        hello: HelloParams,
        env: &[(&str, &str)],
    ) -> Result<Self, ClientError> {
        let mut config = SpawnConfig::new(env!("CARGO_BIN_EXE_devicerail"), hello)
            .arg("attach")
            .arg("--socket")
            .arg(socket);
        for (k, v) in env {
            config = config.env(*k, *v);
        }
        let (client, process) = spawn_owned(config).await?;
        Ok(Self {
            client,
            root: socket.parent().map(Path::to_path_buf).unwrap_or_default(),
            _tmp: None,
            process: Some(process),
        })
    }

    /// Keeps the temporary root alive beyond this host (for restarts).
    pub(crate) fn keep_root(&mut self) -> Option<tempfile::TempDir> {
        self._tmp.take()
    }

    fn process(&self) -> &Process {
        self.process
            .as_ref()
            .expect("a host started with ClientHost::start_owned")
    }

    /// The host's process id (an owned host).
    pub(crate) fn pid(&self) -> u32 {
        self.process().child.id().expect("the host is running")
    }

    /// Sends `sig` to an owned host.
    pub(crate) fn signal(&self, sig: i32) {
        let pid = i32::try_from(self.pid()).expect("pid");
        // SAFETY: sending a signal to our own child process.
        let rc = unsafe { libc::kill(pid, sig) };
        assert_eq!(rc, 0, "kill({pid}, {sig}) failed");
    }

    /// SIGKILL, as a crash (an owned host).
    pub(crate) async fn kill9(&mut self) {
        let p = self.process.as_mut().expect("an owned host");
        p.child.kill().await.expect("kill -9");
    }

    /// Waits for an owned host to exit.
    pub(crate) async fn wait(&mut self) -> std::process::ExitStatus {
        let p = self.process.as_mut().expect("an owned host");
        tokio::time::timeout(WAIT, p.child.wait())
            .await
            .expect("the host exits in time")
            .expect("wait")
    }

    /// Closes the client (stdin EOF) and waits for an owned host to exit.
    pub(crate) async fn finish(mut self) -> std::process::ExitStatus {
        self.client
            .close()
            .await
            .unwrap_or_else(|e| panic!("the client closes: {e}"));
        self.wait().await
    }

    /// What the host wrote to stderr (all of it for an owned host, the
    /// client's tail otherwise).
    pub(crate) fn stderr_text(&self) -> String {
        match &self.process {
            Some(p) => String::from_utf8_lossy(&p.stderr.lock().expect("stderr")).into_owned(),
            None => self.client.stderr_tail(),
        }
    }

    /// Calls `M` with params given as JSON (decoded into the client's own
    /// typed params first, so the client checks them as it would a user's).
    pub(crate) async fn call<M>(&self, params: Value) -> Result<M::Result, ClientError>
    where
        M: ControlMethod,
        M::Params: DeserializeOwned,
    {
        self.call_with::<M>(params, CallOptions::default()).await
    }

    /// [`ClientHost::call`] with call options (`timeoutMs`).
    pub(crate) async fn call_with<M>(
        &self,
        params: Value,
        options: CallOptions,
    ) -> Result<M::Result, ClientError>
    where
        M: ControlMethod,
        M::Params: DeserializeOwned,
    {
        let params: M::Params = serde_json::from_value(params)
            .unwrap_or_else(|e| panic!("params for {}: {e}", M::DESCRIPTOR.name));
        tokio::time::timeout(WAIT, self.client.call::<M>(params, options))
            .await
            .unwrap_or_else(|_| panic!("{} answered in time", M::DESCRIPTOR.name))
    }

    /// Calls a method without params.
    pub(crate) async fn call0<M>(&self) -> Result<M::Result, ClientError>
    where
        M: ControlMethod<Params = NoParams>,
    {
        self.call0_with::<M>(CallOptions::default()).await
    }

    /// [`ClientHost::call0`] with call options (`timeoutMs`).
    pub(crate) async fn call0_with<M>(&self, options: CallOptions) -> Result<M::Result, ClientError>
    where
        M: ControlMethod<Params = NoParams>,
    {
        tokio::time::timeout(WAIT, self.client.call::<M>(NoParams, options))
            .await
            .unwrap_or_else(|_| panic!("{} answered in time", M::DESCRIPTOR.name))
    }

    /// Closes the client (stdin EOF); the host must exit 0 promptly.
    pub(crate) async fn close(self) {
        self.client
            .close()
            .await
            .unwrap_or_else(|e| panic!("the host exits cleanly on EOF: {e}"));
    }
}

/// `device.execute` params with a fresh call id.
pub(crate) fn action(name: &str, arguments: Value) -> Value {
    serde_json::json!({ "id": uuid::Uuid::new_v4(), "name": name, "arguments": arguments })
}

/// The JSON-RPC error of a failed call (panics on success or on a local
/// client error).
pub(crate) fn remote<T: std::fmt::Debug>(r: Result<T, ClientError>) -> RpcError {
    match r {
        Err(ClientError::RemoteRpc { error, .. }) => *error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// Checks a failed call's `data.code`, numeric code and `retryable` flag;
/// returns its details.
#[track_caller]
pub(crate) fn expect_error<T: std::fmt::Debug>(
    r: Result<T, ClientError>,
    code: &str,
    rpc: i32,
    retryable: bool,
) -> Value {
    let e = remote(r);
    assert_eq!(e.data.code, code, "{e:?}");
    assert_eq!(e.code, rpc, "{code}: numeric code ({e:?})");
    assert_eq!(e.data.retryable, retryable, "{code}: retryable ({e:?})");
    assert_eq!(e.message, e.data.message);
    e.data.details.unwrap_or(Value::Null)
}

/// A request begun with [`ClientHost::request`], awaited with
/// [`ClientHost::response`].
pub(crate) struct Pending(tokio::task::JoinHandle<Value>);

impl ClientHost {
    /// Calls `method` by name through the client's typed method (the
    /// client encodes the params and decodes the result into its own
    /// types, failing the connection on anything invalid) and returns the
    /// response shaped as on the wire: `{"result": …}` with the typed
    /// result serialized again, or `{"error": …}`.
    pub(crate) async fn call_json(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Value {
        call_json(&self.client, method, params, options).await
    }

    /// The wire-shaped response of one call with default options.
    pub(crate) async fn answer(&self, method: &str, params: Option<Value>) -> Value {
        self.call_json(method, params, CallOptions::default()).await
    }

    /// The result of a call that must succeed.
    pub(crate) async fn ok(&self, method: &str, params: Option<Value>) -> Value {
        let r = self.call_json(method, params, CallOptions::default()).await;
        assert!(
            r.get("error").is_none(),
            "{method} failed: {r}\nhost stderr:\n{}",
            self.stderr_text()
        );
        r["result"].clone()
    }

    /// `error.data.code` of a call that must fail.
    pub(crate) async fn err(&self, method: &str, params: Option<Value>) -> String {
        let r = self.call_json(method, params, CallOptions::default()).await;
        r["error"]["data"]["code"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("{method} succeeded: {r}"))
    }

    /// Begins a call that is awaited later with [`ClientHost::response`].
    pub(crate) fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Pending {
        let client = self.client.clone();
        let method = method.to_owned();
        Pending(tokio::spawn(async move {
            call_json(&client, &method, params, options).await
        }))
    }

    /// The wire-shaped response of a call begun with [`ClientHost::request`].
    pub(crate) async fn response(&self, pending: Pending) -> Value {
        tokio::time::timeout(WAIT, pending.0)
            .await
            .expect("the response in time")
            .expect("the call task")
    }
}

async fn call_json(
    client: &DeviceRailClient,
    method: &str,
    params: Option<Value>,
    options: CallOptions,
) -> Value {
    use devicerail_client::methods::*;
    let params = params.unwrap_or(Value::Null);
    macro_rules! with_params {
        ($m:ty) => {{
            let p: <$m as RpcMethod>::Params = serde_json::from_value(params)
                .unwrap_or_else(|e| panic!("params of {method}: {e}"));
            tokio::time::timeout(WAIT, client.call::<$m>(p, options))
                .await
                .unwrap_or_else(|_| panic!("{method} answered in time"))
                .map(|r| serde_json::to_value(r).expect("re-serialize"))
        }};
    }
    macro_rules! no_params {
        ($m:ty) => {{
            assert!(params.is_null(), "{method} takes no params");
            tokio::time::timeout(WAIT, client.call::<$m>(NoParams, options))
                .await
                .unwrap_or_else(|_| panic!("{method} answered in time"))
                .map(|r| serde_json::to_value(r).expect("re-serialize"))
        }};
    }
    let r = match method {
        "system.describe" => no_params!(SystemDescribe),
        "devices.list" => no_params!(DevicesList),
        "device.select" => with_params!(DeviceSelect),
        "device.connect" => no_params!(DeviceConnect),
        "device.disconnect" => no_params!(DeviceDisconnect),
        "device.capabilities" => no_params!(DeviceCapabilities),
        "device.observe" => no_params!(DeviceObserve),
        "device.execute" => with_params!(DeviceExecute),
        "request.cancel" => with_params!(RequestCancel),
        "session.start" => no_params!(SessionStart),
        "session.current" => no_params!(SessionCurrent),
        "session.end" => with_params!(SessionEnd),
        "sessions.list" => no_params!(SessionsList),
        "session.export" => with_params!(SessionExport),
        "events.list" => with_params!(EventsList),
        "events.clear" => with_params!(EventsClear),
        "events.stream.open" => with_params!(EventsStreamOpen),
        "media.stream.start" => with_params!(MediaStreamStart),
        "media.stream.capture" => with_params!(MediaStreamCapture),
        "media.stream.end" => with_params!(MediaStreamEnd),
        "ui.snapshot.get" => with_params!(UiSnapshotGet),
        "verdict.record" => with_params!(VerdictRecord),
        other => panic!("{other}: not a method the client calls"),
    };
    match r {
        Ok(result) => serde_json::json!({ "result": result }),
        Err(ClientError::RemoteRpc { error, .. }) => {
            serde_json::json!({ "error": serde_json::to_value(&*error).expect("error") })
        }
        Err(other) => panic!("{method}: the client failed: {other:?}"),
    }
}

/// Connects the device and starts a Session; returns its id.
pub(crate) async fn ready(h: &ClientHost) -> String {
    h.ok("device.connect", None).await;
    let s = h.ok("session.start", None).await;
    s["id"].as_str().expect("session id").to_owned()
}

/// A [`ClientHost`] (owned process) for synchronous tests: the official
/// client runs on its own multi-threaded runtime and each call blocks on
/// it, so a test can mix calls with blocking work (running other commands,
/// its own runtimes).
pub(crate) struct BlockingHost {
    rt: tokio::runtime::Runtime,
    host: Option<ClientHost>,
}

impl BlockingHost {
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
    }

    /// Starts an owned host with `opts` and the default hello.
    pub(crate) fn start(opts: Options) -> Self {
        let rt = Self::runtime();
        let host = rt
            .block_on(ClientHost::start_owned(opts, hello()))
            .expect("the host starts");
        Self {
            rt,
            host: Some(host),
        }
    }

    /// A client named `name` spawning `devicerail` with `args` (an
    /// `attach` command line), saying hello through it.
    pub(crate) fn spawn_named<I, S>(args: I, name: &str) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<std::ffi::OsString>,
    {
        let rt = Self::runtime();
        let mut h = hello();
        h.client.name = name.into();
        let config = SpawnConfig::new(env!("CARGO_BIN_EXE_devicerail"), h).args(args);
        let (client, process) = rt.block_on(spawn_owned(config)).expect("hello");
        Self {
            rt,
            host: Some(ClientHost {
                client,
                root: PathBuf::new(),
                _tmp: None,
                process: Some(process),
            }),
        }
    }

    /// A client named `name` of the shared host on `socket`, through
    /// `devicerail attach`.
    pub(crate) fn attach(socket: &Path, name: &str) -> Self {
        Self::spawn_named(
            [
                std::ffi::OsString::from("attach"),
                "--socket".into(),
                socket.as_os_str().to_owned(),
            ],
            name,
        )
    }

    fn host(&self) -> &ClientHost {
        self.host.as_ref().expect("running")
    }

    /// The temporary root (plugins/ and data/ inside).
    pub(crate) fn root(&self) -> &Path {
        &self.host().root
    }

    /// Keeps the temporary root alive beyond this host.
    pub(crate) fn keep_root(&mut self) -> Option<tempfile::TempDir> {
        self.host.as_mut().expect("running").keep_root()
    }

    /// The result of a call that must succeed.
    pub(crate) fn ok(&self, method: &str, params: Option<Value>) -> Value {
        self.rt.block_on(self.host().ok(method, params))
    }

    /// The wire-shaped response of a call.
    pub(crate) fn call(&self, method: &str, params: Option<Value>) -> Value {
        self.rt.block_on(self.host().answer(method, params))
    }

    /// Connects the device and starts a Session; returns its id.
    pub(crate) fn ready_session(&self) -> String {
        self.rt.block_on(ready(self.host()))
    }

    /// Closes the client and waits for the host to exit.
    pub(crate) fn finish(mut self) -> std::process::ExitStatus {
        let host = self.host.take().expect("running");
        self.rt.block_on(host.finish())
    }
}
