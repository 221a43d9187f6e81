//! [`ClientHost`]: a `devicerail` process driven through the official Rust
//! client, asynchronously — the one harness every end-to-end test that
//! drives a host goes through ([`super::HostClient`] is its blocking
//! face). The client either owns the process (it spawned it) or the test
//! does (to signal it, kill it, read its exit status and all of its
//! stderr).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use devicerail_client::methods::{ControlMethod, NoParams};
use devicerail_client::protocol::RpcError;
use devicerail_client::{
    CallOptions, ClientError, ClientOptions, ControlTransportKind, DeviceRailClient, SpawnConfig,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::CALL_WAIT as WAIT;

/// A host (or `devicerail attach`) driven by the official client, with
/// the temporary root it serves from.
pub struct ClientHost {
    /// The connected client (already past hello).
    pub client: DeviceRailClient,
    /// The root the host serves from (plugins/ and data/ inside), when
    /// the test made one.
    pub root: PathBuf,
    tmp: Option<tempfile::TempDir>,
    /// The process, when the test spawned it itself; otherwise the client
    /// owns it.
    process: Option<Process>,
}

/// A process the test spawned, its pipes handed to the client.
struct Process {
    child: tokio::process::Child,
    stderr: Arc<Mutex<Vec<u8>>>,
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
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", config.command.display()));
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

impl ClientHost {
    /// Spawns `config` through the official client (which owns the
    /// process and says hello); `root` and `tmp` are what it serves from.
    pub async fn spawn(
        config: SpawnConfig,
        root: PathBuf,
        tmp: Option<tempfile::TempDir>,
    ) -> Result<Self, ClientError> {
        let client = tokio::time::timeout(WAIT, DeviceRailClient::spawn(config))
            .await
            .expect("the host answers hello in time")?;
        Ok(Self {
            client,
            root,
            tmp,
            process: None,
        })
    }

    /// Spawns `config` itself and attaches the official client to its
    /// pipes, so the test can signal or kill the process and read its exit
    /// status and whole stderr.
    pub async fn spawn_owned(
        config: SpawnConfig,
        root: PathBuf,
        tmp: Option<tempfile::TempDir>,
    ) -> Result<Self, ClientError> {
        let (client, process) = spawn_owned(config).await?;
        Ok(Self {
            client,
            root,
            tmp,
            process: Some(process),
        })
    }

    /// Keeps the temporary root alive beyond this host (for restarts).
    pub fn keep_root(&mut self) -> Option<tempfile::TempDir> {
        self.tmp.take()
    }

    fn process(&self) -> &Process {
        self.process
            .as_ref()
            .expect("a host started with ClientHost::spawn_owned")
    }

    /// The host's process id (an owned host).
    pub fn pid(&self) -> u32 {
        self.process().child.id().expect("the host is running")
    }

    /// SIGKILL, as a crash (an owned host).
    pub async fn kill9(&mut self) {
        let p = self.process.as_mut().expect("an owned host");
        p.child.kill().await.expect("kill -9");
    }

    /// Waits for an owned host to exit.
    pub async fn wait(&mut self) -> std::process::ExitStatus {
        let p = self.process.as_mut().expect("an owned host");
        tokio::time::timeout(WAIT, p.child.wait())
            .await
            .expect("the host exits in time")
            .expect("wait")
    }

    /// Closes the client (stdin EOF) and waits for an owned host to exit.
    pub async fn finish(mut self) -> std::process::ExitStatus {
        self.client
            .close()
            .await
            .unwrap_or_else(|e| panic!("the client closes: {e}"));
        self.wait().await
    }

    /// Closes the client (stdin EOF); the host must exit 0 promptly.
    pub async fn close(self) {
        self.client
            .close()
            .await
            .unwrap_or_else(|e| panic!("the host exits cleanly on EOF: {e}"));
    }

    /// What the host wrote to stderr (all of it for an owned host, the
    /// client's tail otherwise).
    pub fn stderr_text(&self) -> String {
        match &self.process {
            Some(p) => String::from_utf8_lossy(&p.stderr.lock().expect("stderr")).into_owned(),
            None => self.client.stderr_tail(),
        }
    }

    /// Calls `M` with params given as JSON (decoded into the client's own
    /// typed params first, so the client checks them as it would a user's).
    pub async fn call<M>(&self, params: Value) -> Result<M::Result, ClientError>
    where
        M: ControlMethod,
        M::Params: DeserializeOwned,
    {
        self.call_with::<M>(params, CallOptions::default()).await
    }

    /// [`ClientHost::call`] with call options (`timeoutMs`).
    pub async fn call_with<M>(
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
        self.typed::<M>(params, options).await
    }

    /// Calls `M` with typed params; panics past the wait.
    pub async fn typed<M: ControlMethod>(
        &self,
        params: M::Params,
        options: CallOptions,
    ) -> Result<M::Result, ClientError> {
        match tokio::time::timeout(WAIT, self.client.call::<M>(params, options)).await {
            Ok(r) => r,
            Err(_) => panic!(
                "{} did not answer within {WAIT:?}; host stderr:\n{}",
                M::DESCRIPTOR.name,
                self.stderr_text()
            ),
        }
    }

    /// Calls a method without params.
    pub async fn call0<M>(&self) -> Result<M::Result, ClientError>
    where
        M: ControlMethod<Params = NoParams>,
    {
        self.call0_with::<M>(CallOptions::default()).await
    }

    /// [`ClientHost::call0`] with call options (`timeoutMs`).
    pub async fn call0_with<M>(&self, options: CallOptions) -> Result<M::Result, ClientError>
    where
        M: ControlMethod<Params = NoParams>,
    {
        self.typed::<M>(NoParams, options).await
    }

    /// Calls `method` by name through the client's typed method (the
    /// client encodes the params and decodes the result into its own
    /// types, failing the connection on anything invalid) and returns the
    /// response shaped as on the wire: `{"result": …}` with the typed
    /// result serialized again, or `{"error": …}`.
    pub async fn call_json(
        &self,
        method: &str,
        params: Option<Value>,
        options: CallOptions,
    ) -> Value {
        call_json(&self.client, method, params, options).await
    }

    /// The wire-shaped response of one call with default options.
    pub async fn answer(&self, method: &str, params: Option<Value>) -> Value {
        self.call_json(method, params, CallOptions::default()).await
    }

    /// The result of a call that must succeed.
    pub async fn ok(&self, method: &str, params: Option<Value>) -> Value {
        let r = self.call_json(method, params, CallOptions::default()).await;
        assert!(
            r.get("error").is_none(),
            "{method} failed: {r}\nhost stderr:\n{}",
            self.stderr_text()
        );
        r["result"].clone()
    }

    /// `error.data.code` of a call that must fail.
    pub async fn err(&self, method: &str, params: Option<Value>) -> String {
        let r = self.call_json(method, params, CallOptions::default()).await;
        r["error"]["data"]["code"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("{method} succeeded: {r}"))
    }

    /// Begins a call that is awaited later with [`ClientHost::response`].
    pub fn request(&self, method: &str, params: Option<Value>, options: CallOptions) -> Pending {
        let client = self.client.clone();
        let method = method.to_owned();
        Pending(tokio::spawn(async move {
            call_json(&client, &method, params, options).await
        }))
    }

    /// The wire-shaped response of a call begun with [`ClientHost::request`].
    pub async fn response(&self, pending: Pending) -> Value {
        tokio::time::timeout(WAIT, pending.0)
            .await
            .expect("the response in time")
            .expect("the call task")
    }
}

/// A request begun with [`ClientHost::request`], awaited with
/// [`ClientHost::response`].
pub struct Pending(tokio::task::JoinHandle<Value>);

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
pub async fn ready(h: &ClientHost) -> String {
    h.ok("device.connect", None).await;
    let s = h.ok("session.start", None).await;
    s["id"].as_str().expect("session id").to_owned()
}

/// The JSON-RPC error of a failed call (panics on success or on a local
/// client error).
pub fn remote<T: std::fmt::Debug>(r: Result<T, ClientError>) -> RpcError {
    match r {
        Err(ClientError::RemoteRpc { error, .. }) => *error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// Checks a failed call's `data.code`, numeric code and `retryable` flag;
/// returns its details.
#[track_caller]
pub fn expect_error<T: std::fmt::Debug>(
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
