//! The host driven through the protocol authors' official Rust client
//! (`devicerail-client` from crates.io): what a Rust user of the host sees,
//! typed results decoded by the client and every server frame checked by
//! it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use devicerail_client::methods::{ControlMethod, NoParams};
use devicerail_client::protocol::{HelloParams, RpcError};
use devicerail_client::{CallOptions, ClientError, DeviceRailClient, SpawnConfig, default_hello};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Options, plugins_dir_with_mock};

/// How long a spawn (hello included) or one call may take.
pub const WAIT: Duration = Duration::from_secs(60);

/// A host spawned by the official client, with its temporary root.
pub struct ClientHost {
    pub client: DeviceRailClient,
    pub root: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

/// The hello the official client sends by default, under our test name.
pub fn hello() -> HelloParams {
    let mut h = default_hello();
    h.client.name = "e2e-official-client".into();
    h
}

/// A hello offering only `optional` (protocol 1.0–1.5).
pub fn hello_with(optional: &[&str]) -> HelloParams {
    let mut h = hello();
    h.features.optional = optional.iter().map(|s| (*s).to_owned()).collect();
    h.features.required.clear();
    h
}

/// The `serve` command line for `opts` under `root`.
pub fn spawn_config(opts: &Options, root: &Path, hello: HelloParams) -> SpawnConfig {
    let plugins = if opts.no_plugins {
        let d = root.join("empty-plugins");
        std::fs::create_dir_all(&d).expect("mkdir");
        d
    } else if root.join("plugins").exists() {
        root.join("plugins")
    } else {
        plugins_dir_with_mock(root)
    };
    let mut config = SpawnConfig::new(env!("CARGO_BIN_EXE_devicerail"), hello)
        .arg("serve")
        .arg("--plugins-dir")
        .arg(plugins)
        .arg("--data-dir")
        .arg(root.join("data"))
        .env("RUST_LOG", "info");
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

impl ClientHost {
    /// Spawns a host through the official client (which says hello).
    pub async fn start(opts: Options, hello: HelloParams) -> Result<Self, ClientError> {
        let (tmp, root) = match &opts.root {
            Some(r) => (None, r.clone()),
            None => {
                let t = tempfile::tempdir().expect("tempdir");
                let p = t.path().to_path_buf();
                (Some(t), p)
            }
        };
        let config = spawn_config(&opts, &root, hello);
        let client = tokio::time::timeout(WAIT, DeviceRailClient::spawn(config))
            .await
            .expect("the host answers hello in time")?;
        Ok(Self {
            client,
            root,
            _tmp: tmp,
        })
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
        tokio::time::timeout(WAIT, self.client.call::<M>(params, options))
            .await
            .unwrap_or_else(|_| panic!("{} answered in time", M::DESCRIPTOR.name))
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
        tokio::time::timeout(WAIT, self.client.call::<M>(NoParams, options))
            .await
            .unwrap_or_else(|_| panic!("{} answered in time", M::DESCRIPTOR.name))
    }

    /// Closes the client (stdin EOF); the host must exit 0 promptly.
    pub async fn close(self) {
        self.client
            .close()
            .await
            .unwrap_or_else(|e| panic!("the host exits cleanly on EOF: {e}"));
    }
}

/// `device.execute` params with a fresh call id.
pub fn action(name: &str, arguments: Value) -> Value {
    serde_json::json!({ "id": uuid::Uuid::new_v4(), "name": name, "arguments": arguments })
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
