//! The workspace's `devicerail` driven through the protocol authors'
//! official Rust client (`devicerail-client` from crates.io): the one
//! harness of every end-to-end test that drives a host — the drivers'
//! (`plugins/*/tests/host_e2e.rs`) and the host's own
//! (`host/cli/tests`). [`ClientHost`] is the asynchronous harness;
//! [`HostClient`] the same on a runtime of its own, with blocking calls,
//! so a plain `#[test]` reads like a script:
//!
//! ```ignore
//! let lib = devicerail_host_testing::build_workspace_plugin("devicerail-host-plugin-mock", "mock");
//! let host = HostClient::start(&[lib], &[]);
//! host.ok0::<DeviceConnect>();
//! let found = host.execute("findElement", json!({ "selector": { "identifier": "username" } }));
//! ```
//!
//! Frames the client refuses to send (malformed lines, calls before hello)
//! stay with [`crate::host_process::HostProcess`].

mod host;

use std::path::{Path, PathBuf};
use std::time::Duration;

use devicerail_client::methods::{ControlMethod, DeviceExecute, NoParams};
use devicerail_client::protocol::{ActionResult, HelloParams, RpcError};
use devicerail_client::{CallOptions, ClientError, ClientOptions, SpawnConfig, default_hello};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub use host::{ClientHost, Pending, expect_error, ready, remote};

use crate::host_process::host_binary;

/// How long a spawn (hello included) or one call may take.
pub const CALL_WAIT: Duration = Duration::from_secs(60);
/// How much of the host's stderr is kept (the client keeps a tail).
const STDERR_TAIL: usize = 4 * 1024 * 1024;

/// A [`ClientHost`] with a runtime of its own: each call blocks on it, so
/// a test can mix calls with blocking work (other commands, its own
/// runtimes).
pub struct HostClient {
    rt: tokio::runtime::Runtime,
    host: Option<ClientHost>,
}

/// The client's default hello (protocol 1.0–1.5, every feature optional)
/// under the name `driver-e2e`.
pub fn hello() -> HelloParams {
    hello_named("driver-e2e")
}

/// The client's default hello under the name `name`.
pub fn hello_named(name: &str) -> HelloParams {
    let mut h = default_hello();
    h.client.name = name.into();
    h
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
}

impl HostClient {
    /// Serves copies of `plugins` with `env` set for the host (and so the
    /// plugins it loads), connected with [`hello`].
    pub fn start(plugins: &[PathBuf], env: &[(&str, &str)]) -> Self {
        Self::start_with(plugins, env, hello()).unwrap_or_else(|e| panic!("spawn and hello: {e:?}"))
    }

    /// [`HostClient::start`] with a caller's hello; a refused hello is the
    /// error.
    pub fn start_with(
        plugins: &[PathBuf],
        env: &[(&str, &str)],
        hello: HelloParams,
    ) -> Result<Self, ClientError> {
        let (dir, plugins_dir) = crate::root_with_plugins(plugins);
        let mut config = SpawnConfig::new(host_binary(), hello)
            .arg("serve")
            .arg("--plugins-dir")
            .arg(&plugins_dir)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
            );
        for (k, v) in env {
            config = config.env(k, v);
        }
        config.client = ClientOptions {
            stderr_tail_bytes: STDERR_TAIL,
            ..ClientOptions::default()
        };
        let rt = runtime();
        let root = dir.path().to_path_buf();
        let host = rt.block_on(ClientHost::spawn(config, root, Some(dir)))?;
        Ok(Self {
            rt,
            host: Some(host),
        })
    }

    /// Runs `config` (the test owns the process: its exit status and whole
    /// stderr are kept) serving from `root` (`tmp` kept alive with it).
    pub fn owned(
        config: SpawnConfig,
        root: PathBuf,
        tmp: Option<tempfile::TempDir>,
    ) -> Result<Self, ClientError> {
        let rt = runtime();
        let host = rt.block_on(ClientHost::spawn_owned(config, root, tmp))?;
        Ok(Self {
            rt,
            host: Some(host),
        })
    }

    /// The asynchronous harness underneath.
    pub fn host(&self) -> &ClientHost {
        self.host.as_ref().expect("running")
    }

    /// The temporary root (plugins/ and data/ inside).
    pub fn root(&self) -> &Path {
        &self.host().root
    }

    /// Keeps the temporary root alive beyond this host.
    pub fn keep_root(&mut self) -> Option<tempfile::TempDir> {
        self.host.as_mut().expect("running").keep_root()
    }

    /// Calls `M` with typed params and options; panics past [`CALL_WAIT`].
    pub fn call_with<M: ControlMethod>(
        &self,
        params: M::Params,
        options: CallOptions,
    ) -> Result<M::Result, ClientError> {
        self.rt.block_on(self.host().typed::<M>(params, options))
    }

    /// Calls `M` with params given as JSON (decoded into the client's own
    /// params type first).
    pub fn call<M>(&self, params: Value) -> Result<M::Result, ClientError>
    where
        M: ControlMethod,
        M::Params: DeserializeOwned,
    {
        self.rt.block_on(self.host().call::<M>(params))
    }

    /// [`HostClient::call`] that must succeed.
    #[track_caller]
    pub fn ok<M>(&self, params: Value) -> M::Result
    where
        M: ControlMethod,
        M::Params: DeserializeOwned,
    {
        let r = self.call::<M>(params);
        self.expect_ok(M::DESCRIPTOR.name, r)
    }

    /// A method without params that must succeed.
    #[track_caller]
    pub fn ok0<M: ControlMethod<Params = NoParams>>(&self) -> M::Result {
        let r = self.call_with::<M>(NoParams, CallOptions::default());
        self.expect_ok(M::DESCRIPTOR.name, r)
    }

    /// The wire-shaped response (`{"result": …}` or `{"error": …}`) of
    /// calling `method` by name.
    pub fn answer(&self, method: &str, params: Option<Value>) -> Value {
        self.rt.block_on(self.host().answer(method, params))
    }

    /// The wire result of calling `method` by name, which must succeed.
    pub fn ok_json(&self, method: &str, params: Option<Value>) -> Value {
        self.rt.block_on(self.host().ok(method, params))
    }

    /// Connects the device and starts a Session; returns its id.
    pub fn ready_session(&self) -> String {
        self.rt.block_on(ready(self.host()))
    }

    /// `device.execute` of `name` with a fresh call id.
    pub fn execute(&self, name: &str, arguments: Value) -> Result<ActionResult, ClientError> {
        self.execute_params(action(name, arguments))
    }

    /// `device.execute` with whole params (for `actionTimeoutMs`).
    pub fn execute_params(&self, params: Value) -> Result<ActionResult, ClientError> {
        self.call::<DeviceExecute>(params)
    }

    #[track_caller]
    fn expect_ok<T>(&self, method: &str, r: Result<T, ClientError>) -> T {
        r.unwrap_or_else(|e| {
            panic!(
                "{method} failed: {}\nhost stderr:\n{}",
                describe(&e),
                self.stderr()
            )
        })
    }

    /// The host's stderr so far (the last 4 MiB, or all of it for an
    /// owned process).
    pub fn stderr(&self) -> String {
        self.host().stderr_text()
    }

    /// Closes stdin and waits for the host: an error when it does not
    /// exit 0 promptly. Returns the host's stderr.
    pub fn finish(mut self) -> Result<String, ClientError> {
        let host = self.host.take().expect("running");
        self.rt.block_on(host.client.close())?;
        Ok(host.stderr_text())
    }

    /// Closes the client and waits for an owned process to exit.
    pub fn finish_owned(mut self) -> std::process::ExitStatus {
        let host = self.host.take().expect("running");
        self.rt.block_on(host.finish())
    }
}

/// `device.execute` params with a fresh call id.
pub fn action(name: &str, arguments: Value) -> Value {
    json!({ "id": uuid::Uuid::new_v4(), "name": name, "arguments": arguments })
}

/// The JSON-RPC error of a failed call, if the host sent one.
pub fn remote_error<T>(r: &Result<T, ClientError>) -> Option<&RpcError> {
    match r {
        Err(ClientError::RemoteRpc { error, .. }) => Some(error),
        _ => None,
    }
}

/// `error.data.code` of a failed call, if the host sent an error.
pub fn error_code<T>(r: &Result<T, ClientError>) -> Option<&str> {
    remote_error(r).map(|e| e.data.code.as_str())
}

/// A client error with the remote error's code and message spelled out
/// (the client's `Display` names only the request id).
pub fn describe(e: &ClientError) -> String {
    match e {
        ClientError::RemoteRpc { error, .. } => format!(
            "{} ({}): {} details={}",
            error.data.code,
            error.code,
            error.data.message,
            error.data.details.clone().unwrap_or(Value::Null)
        ),
        other => format!("{other:?}"),
    }
}

/// The wire JSON of a successful call's typed result (as the client
/// decoded it, serialized again), panicking with the remote error.
#[track_caller]
pub fn wire<T: serde::Serialize>(r: Result<T, ClientError>) -> Value {
    match r {
        Ok(v) => serde_json::to_value(v).unwrap_or_else(|e| panic!("serialize: {e}")),
        Err(e) => panic!("the call failed: {}", describe(&e)),
    }
}
