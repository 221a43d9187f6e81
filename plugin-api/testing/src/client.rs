//! The workspace's `devicerail serve` driven through the protocol authors'
//! official Rust client (`devicerail-client` from crates.io), for the
//! drivers' end-to-end tests: typed calls, every server frame checked by
//! the client, and blocking wrappers so a plain `#[test]` reads like a
//! script.
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

use std::path::PathBuf;
use std::time::Duration;

use devicerail_client::methods::{ControlMethod, DeviceExecute, NoParams};
use devicerail_client::protocol::{ActionResult, HelloParams, RpcError};
use devicerail_client::{
    CallOptions, ClientError, ClientOptions, DeviceRailClient, SpawnConfig, default_hello,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::host_process::host_binary;

/// How long a spawn (hello included) or one call may take.
pub const CALL_WAIT: Duration = Duration::from_secs(60);
/// How much of the host's stderr is kept (the client keeps a tail).
const STDERR_TAIL: usize = 4 * 1024 * 1024;

/// A host spawned by the official client over a fresh plugins and data
/// directory, with a runtime of its own.
pub struct HostClient {
    /// The connected client (already past hello).
    pub client: DeviceRailClient,
    rt: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
}

/// The client's default hello (protocol 1.0–1.5, every feature optional)
/// under the name `driver-e2e`.
pub fn hello() -> HelloParams {
    let mut h = default_hello();
    h.client.name = "driver-e2e".into();
    h
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
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let plugins_dir = dir.path().join("plugins");
        std::fs::create_dir_all(&plugins_dir).unwrap_or_else(|e| panic!("mkdir: {e}"));
        for p in plugins {
            let name = p.file_name().unwrap_or_default();
            std::fs::copy(p, plugins_dir.join(name))
                .unwrap_or_else(|e| panic!("copy {}: {e}", p.display()));
        }
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
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("tokio runtime: {e}"));
        let client = rt
            .block_on(async {
                tokio::time::timeout(CALL_WAIT, DeviceRailClient::spawn(config)).await
            })
            .unwrap_or_else(|_| panic!("the host did not answer hello within {CALL_WAIT:?}"))?;
        Ok(Self {
            client,
            rt,
            _dir: dir,
        })
    }

    /// Calls `M` with typed params and options; panics past [`CALL_WAIT`].
    pub fn call_with<M: ControlMethod>(
        &self,
        params: M::Params,
        options: CallOptions,
    ) -> Result<M::Result, ClientError> {
        self.rt
            .block_on(async {
                tokio::time::timeout(CALL_WAIT, self.client.call::<M>(params, options)).await
            })
            .unwrap_or_else(|_| {
                panic!(
                    "{} did not answer within {CALL_WAIT:?}; host stderr:\n{}",
                    M::DESCRIPTOR.name,
                    self.stderr()
                )
            })
    }

    /// Calls `M` with params given as JSON (decoded into the client's own
    /// params type first).
    pub fn call<M>(&self, params: Value) -> Result<M::Result, ClientError>
    where
        M: ControlMethod,
        M::Params: DeserializeOwned,
    {
        let params: M::Params = serde_json::from_value(params)
            .unwrap_or_else(|e| panic!("params of {}: {e}", M::DESCRIPTOR.name));
        self.call_with::<M>(params, CallOptions::default())
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

    /// The host's stderr so far (the last 4 MiB).
    pub fn stderr(&self) -> String {
        self.client.stderr_tail()
    }

    /// Closes stdin and waits for the host: an error when it does not
    /// exit 0 promptly. Returns the host's stderr.
    pub fn finish(self) -> Result<String, ClientError> {
        self.rt.block_on(self.client.close())?;
        Ok(self.client.stderr_tail())
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
