//! The host's end-to-end tests on the workspace's one harness
//! (`devicerail_host_testing::client`: the official Rust client driving
//! the real binary), with what only these tests add: their [`Options`]
//! (the mock plugin, faults, a configuration file), this test binary's
//! own `devicerail`, and signals.

use std::path::{Path, PathBuf};

// Each test binary uses its own part of these.
use devicerail_client::protocol::HelloParams;
use devicerail_client::{ClientError, SpawnConfig};
#[allow(unused_imports)]
pub(crate) use devicerail_host_testing::client::{
    CALL_WAIT as WAIT, ClientHost, HostClient as BlockingHost, action, expect_error, ready, remote,
};

use super::{Options, plugins_dir_with_mock};

/// The hello the official client sends by default, under our test name.
pub(crate) fn hello() -> HelloParams {
    devicerail_host_testing::client::hello_named("e2e-official-client")
}

/// A hello offering only `optional` (protocol 1.0–1.5).
pub(crate) fn hello_with(optional: &[&str]) -> HelloParams {
    let mut h = hello();
    h.features.optional = optional.iter().map(|s| (*s).to_owned()).collect();
    h.features.required.clear();
    h
}

/// This test binary's `devicerail`.
fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_devicerail")
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
    let mut config = SpawnConfig::new(binary(), hello)
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

/// A client of the shared host on `socket` through a `devicerail attach`
/// the test owns, given `env`.
fn attach_config(socket: &Path, hello: HelloParams, env: &[(&str, &str)]) -> SpawnConfig {
    let mut config = SpawnConfig::new(binary(), hello)
        .arg("attach")
        .arg("--socket")
        .arg(socket);
    for (k, v) in env {
        config = config.env(*k, *v);
    }
    config
}

/// How these tests start a [`ClientHost`].
pub(crate) trait Launch: Sized {
    /// Spawns a host through the official client (which says hello).
    async fn start(opts: Options, hello: HelloParams) -> Result<Self, ClientError>;
    /// A host with the default options and hello.
    async fn started() -> Self;
    /// Spawns the host itself (same command line as [`Launch::start`]) and
    /// attaches the official client to its pipes, so the test can signal
    /// or kill the process and read its exit status.
    async fn start_owned(opts: Options, hello: HelloParams) -> Result<Self, ClientError>;
    /// Runs `config` (any `devicerail` binary and arguments: a release
    /// archive's, say) and attaches the official client to its pipes.
    async fn start_config(config: SpawnConfig) -> Result<Self, ClientError>;
    /// A client of the shared host listening on `socket`, through a
    /// `devicerail attach` process the test owns (to kill it, as a client
    /// that dies).
    async fn attach_owned(socket: &Path, hello: HelloParams) -> Result<Self, ClientError>;
    /// [`Launch::attach_owned`] with `devicerail attach` given `env` (a
    /// reservation token, say).
    async fn attach_with_env(
        socket: &Path,
        hello: HelloParams,
        env: &[(&str, &str)],
    ) -> Result<Self, ClientError>;
    /// Sends `sig` to an owned host.
    fn signal(&self, sig: i32);
}

impl Launch for ClientHost {
    async fn start(opts: Options, hello: HelloParams) -> Result<Self, ClientError> {
        let (tmp, root) = root_of(&opts);
        let config = spawn_config(&opts, &root, hello);
        ClientHost::spawn(config, root, tmp).await
    }

    async fn started() -> Self {
        Self::start(Options::default(), hello())
            .await
            .expect("the host starts")
    }

    async fn start_owned(opts: Options, hello: HelloParams) -> Result<Self, ClientError> {
        let (tmp, root) = root_of(&opts);
        let config = spawn_config(&opts, &root, hello);
        ClientHost::spawn_owned(config, root, tmp).await
    }

    async fn start_config(config: SpawnConfig) -> Result<Self, ClientError> {
        ClientHost::spawn_owned(config, PathBuf::new(), None).await
    }

    async fn attach_owned(socket: &Path, hello: HelloParams) -> Result<Self, ClientError> {
        Self::attach_with_env(socket, hello, &[]).await
    }

    async fn attach_with_env(
        socket: &Path,
        hello: HelloParams,
        env: &[(&str, &str)],
    ) -> Result<Self, ClientError> {
        let root = socket.parent().map(Path::to_path_buf).unwrap_or_default();
        ClientHost::spawn_owned(attach_config(socket, hello, env), root, None).await
    }

    fn signal(&self, sig: i32) {
        let pid = i32::try_from(self.pid()).expect("pid");
        // SAFETY: sending a signal to our own child process.
        let rc = unsafe { libc::kill(pid, sig) };
        assert_eq!(rc, 0, "kill({pid}, {sig}) failed");
    }
}

/// How these tests start a [`BlockingHost`].
pub(crate) trait LaunchBlocking: Sized {
    /// Starts an owned host with `opts` and the default hello.
    fn serve(opts: Options) -> Self;
    /// A client named `name` spawning `devicerail` with `args` (an
    /// `attach` command line), saying hello through it.
    fn spawn_named<I, S>(args: I, name: &str) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<std::ffi::OsString>;
    /// A client named `name` of the shared host on `socket`, through
    /// `devicerail attach`.
    fn attach(socket: &Path, name: &str) -> Self;
}

impl LaunchBlocking for BlockingHost {
    fn serve(opts: Options) -> Self {
        let (tmp, root) = root_of(&opts);
        let config = spawn_config(&opts, &root, hello());
        BlockingHost::owned(config, root, tmp).expect("the host starts")
    }

    fn spawn_named<I, S>(args: I, name: &str) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<std::ffi::OsString>,
    {
        let mut h = hello();
        h.client.name = name.into();
        let config = SpawnConfig::new(binary(), h).args(args);
        BlockingHost::owned(config, PathBuf::new(), None).expect("hello")
    }

    fn attach(socket: &Path, name: &str) -> Self {
        let mut h = hello();
        h.client.name = name.into();
        BlockingHost::owned(attach_config(socket, h, &[]), PathBuf::new(), None).expect("hello")
    }
}
