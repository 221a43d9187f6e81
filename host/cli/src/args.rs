//! The command line as `clap` parses it: one `Args` struct per subcommand,
//! every flag with its help text. Nothing here does any work; `main`
//! hands each subcommand's arguments to its module under `commands`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use devicerail_host_config::{CommandLine, ScreenshotPolicy};
use devicerail_host_core::serve::DEFAULT_MAX_CONNECTIONS;

/// Help text of `--plugins-dir` wherever it appears.
const PLUGINS_DIR_HELP: &str = "Plugins directory (default: $DEVICERAIL_PLUGINS_DIR, else host.pluginsDir of the configuration file, else the platform data dir)";
/// Help text of `--data-dir` wherever it appears.
const DATA_DIR_HELP: &str = "Data directory for sessions, events and Evidence (default: $DEVICERAIL_DATA_DIR, else host.dataDir of the configuration file, else the platform data dir)";

/// `devicerail`.
#[derive(Parser)]
#[command(
    name = "devicerail",
    version,
    about = "DeviceRail Host: drive phones, simulators and browsers over one JSON-RPC protocol"
)]
pub(crate) struct Cli {
    /// Configuration file (default: $DEVICERAIL_CONFIG, else config.toml in the platform config dir: $XDG_CONFIG_HOME/devicerail, ~/.config/devicerail, or ~/Library/Application Support/devicerail on macOS).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// The subcommand.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Subcommand)]
pub(crate) enum Command {
    /// Serve the protocol on stdin/stdout (NDJSON).
    Serve(ServeArgs),
    /// Bridge stdin/stdout to a shared host's control socket, so a stdio
    /// client uses the shared host unchanged.
    Attach(AttachArgs),
    /// Serve the Model Context Protocol on stdin/stdout for agents: attaches
    /// to the shared host when one listens, else runs one in this process.
    Mcp(McpArgs),
    /// Serve a live web console for a device lab on loopback (devices,
    /// live screens, remote control, Sessions as they happen): prints the
    /// URL to open, with a one-time token.
    Console(ConsoleArgs),
    /// Offer the shared host's devices to Kubernetes.
    Kube {
        /// What to run.
        #[command(subcommand)]
        command: KubeCommand,
    },
    /// Manage driver plugins.
    Plugins {
        /// What to do with plugins.
        #[command(subcommand)]
        command: PluginsCommand,
    },
    /// Show the configuration.
    Config {
        /// What to show.
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// List every device of every installed plugin, with its platform, state and lease.
    Devices(DevicesArgs),
    /// Time every screenshot, UI tree and input method of one device's driver on that
    /// device (p50/p95) and mark the faster; `--save` keeps them in the configuration file
    /// for the driver to use. Exits 1 when nothing could be measured.
    Bench(BenchArgs),
    /// Check the environment: configuration, directories, plugins and each driver's own checks.
    /// Exits 0 when nothing failed, 1 when a check failed, 2 on a usage error.
    Doctor(DoctorArgs),
    /// Render a Session as one self-contained HTML file (works on a running host's store, read-only).
    Report(ReportArgs),
    /// Export or validate portable session bundles.
    Bundle {
        /// What to do with a bundle.
        #[command(subcommand)]
        command: BundleCommand,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Internal: print the man page (roff) on stdout.
    #[command(hide = true)]
    Man,
    /// Run a recorded Session again on a device: re-aim what moved, compare
    /// each step with the recording, and write a comparison report. Exits
    /// 0 when every step matched or healed, 1 on a divergence, 2 on usage
    /// errors (no such Session, steps out of range, a secret not set).
    Replay(ReplayArgs),
    /// Turn a recorded Session into a script for an official client.
    Export(ExportArgs),
    /// Internal: serve one plugin to its host over a socket (started by `serve`).
    #[command(hide = true)]
    PluginWorker(WorkerArgs),
    /// Internal: run this devicerail's conformance suite on one plugin library
    /// (started by `plugins install CRATE_DIR`).
    #[command(hide = true)]
    PluginConformance(ConformanceArgs),
}

/// `plugin-conformance` (internal).
#[derive(Args)]
pub(crate) struct ConformanceArgs {
    /// The plugin library to check.
    #[arg(long)]
    pub(crate) library: PathBuf,
}

/// What a command that runs a host takes from the command line (`serve`,
/// and `mcp` for its in-process host).
#[derive(Args)]
pub(crate) struct HostArgs {
    #[arg(long, help = PLUGINS_DIR_HELP)]
    plugins_dir: Option<PathBuf>,
    #[arg(long, help = DATA_DIR_HELP)]
    data_dir: Option<PathBuf>,
    /// Whether observations capture screenshots (default: $DEVICERAIL_SCREENSHOT_POLICY, else host.screenshotPolicy, else capture).
    #[arg(long, value_enum)]
    screenshot_policy: Option<PolicyArg>,
    /// Diagnostics filter, RUST_LOG syntax (default: $RUST_LOG, else host.logFilter, else info).
    #[arg(long)]
    log_filter: Option<String>,
}

impl HostArgs {
    /// Puts these values on the configuration's command-line layer.
    pub(crate) fn apply(self, line: &mut CommandLine) {
        line.plugins_dir = self.plugins_dir;
        line.data_dir = self.data_dir;
        line.screenshot_policy = self.screenshot_policy.map(ScreenshotPolicy::from);
        line.log_filter = self.log_filter;
    }
}

/// The plugins and data directories of a command that inspects a host's
/// configuration without running it.
#[derive(Args)]
pub(crate) struct DirArgs {
    #[arg(long, help = PLUGINS_DIR_HELP)]
    pub(crate) plugins_dir: Option<PathBuf>,
    #[arg(long, help = DATA_DIR_HELP)]
    pub(crate) data_dir: Option<PathBuf>,
}

impl DirArgs {
    /// Puts these values on the configuration's command-line layer.
    pub(crate) fn apply(self, line: &mut CommandLine) {
        line.plugins_dir = self.plugins_dir;
        line.data_dir = self.data_dir;
    }
}

/// `--screenshot-policy` values (the configuration crate knows no `clap`).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum PolicyArg {
    /// Capture screenshots (except for protected Actions).
    Capture,
    /// Never capture; observations say `screenshotOmission: policy`.
    Omit,
}

impl From<PolicyArg> for ScreenshotPolicy {
    fn from(p: PolicyArg) -> Self {
        match p {
            PolicyArg::Capture => ScreenshotPolicy::Capture,
            PolicyArg::Omit => ScreenshotPolicy::Omit,
        }
    }
}

/// `serve`.
#[derive(Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) host: HostArgs,
    /// Also serve a local control socket shared by many clients:
    /// `unix` (the default path: $DEVICERAIL_SOCKET, else
    /// $XDG_RUNTIME_DIR/devicerail/host.sock) or `unix:PATH`. The host
    /// then runs until SIGINT/SIGTERM, even after stdin closes.
    #[arg(long, value_name = "unix[:PATH]", value_parser = parse_listen)]
    pub(crate) listen: Option<Listen>,
    /// Socket connections served at once (more are refused).
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS)]
    pub(crate) max_connections: usize,
}

/// `attach`.
#[derive(Args)]
pub(crate) struct AttachArgs {
    /// The host's socket (default: $DEVICERAIL_SOCKET, else
    /// $XDG_RUNTIME_DIR/devicerail/host.sock).
    #[arg(long)]
    pub(crate) socket: Option<PathBuf>,
    /// Start a shared host in the background when none is listening.
    #[arg(long)]
    pub(crate) spawn: bool,
    /// Plugins directory of a host started with --spawn.
    #[arg(long, requires = "spawn")]
    pub(crate) plugins_dir: Option<PathBuf>,
    /// Data directory of a host started with --spawn.
    #[arg(long, requires = "spawn")]
    pub(crate) data_dir: Option<PathBuf>,
    /// Reach a lab host on another machine through SSH (`user@lab`): runs
    /// `devicerail attach` there over an SSH session, authenticated by SSH
    /// alone; --socket then names the lab's socket.
    #[arg(long, value_name = "DESTINATION", conflicts_with = "spawn")]
    pub(crate) ssh: Option<String>,
    /// An SSH option for --ssh, as `ssh -o` takes it (`Port=2222`,
    /// `IdentityFile=~/.ssh/lab`); repeatable.
    #[arg(long = "ssh-option", value_name = "KEY=VALUE", requires = "ssh")]
    pub(crate) ssh_options: Vec<String>,
    /// The `devicerail` program on the lab machine (default: `devicerail`
    /// on its PATH).
    #[arg(
        long,
        value_name = "PATH",
        requires = "ssh",
        default_value = "devicerail"
    )]
    pub(crate) remote_devicerail: String,
}

/// `mcp`.
#[derive(Args)]
pub(crate) struct McpArgs {
    /// The shared host's socket (default: $DEVICERAIL_SOCKET, else
    /// $XDG_RUNTIME_DIR/devicerail/host.sock).
    #[arg(long)]
    pub(crate) socket: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) host: HostArgs,
}

/// `console`.
#[derive(Args)]
pub(crate) struct ConsoleArgs {
    /// The shared host's socket (default: $DEVICERAIL_SOCKET, else
    /// $XDG_RUNTIME_DIR/devicerail/host.sock).
    #[arg(long)]
    pub(crate) socket: Option<PathBuf>,
    /// The loopback address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0", value_name = "ADDR:PORT")]
    pub(crate) listen: std::net::SocketAddr,
    #[command(flatten)]
    pub(crate) host: HostArgs,
}

/// `doctor`.
#[derive(Args)]
pub(crate) struct DoctorArgs {
    #[command(flatten)]
    pub(crate) dirs: DirArgs,
    /// Print the checks as one JSON document.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `devices`.
#[derive(Args)]
pub(crate) struct DevicesArgs {
    #[command(flatten)]
    pub(crate) dirs: DirArgs,
    /// The shared host's socket, asked first for devices and leases (default:
    /// $DEVICERAIL_SOCKET, else $XDG_RUNTIME_DIR/devicerail/host.sock).
    #[arg(long)]
    pub(crate) socket: Option<PathBuf>,
    /// Print the devices as one JSON document.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `bench`.
#[derive(Args)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    pub(crate) dirs: DirArgs,
    /// The device (its id, as `devicerail devices` lists it).
    pub(crate) device: String,
    /// Samples per method, after one warm-up.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(2..=1000))]
    pub(crate) samples: u16,
    /// Also time taps, at X,Y in screenshot pixels: pick a point where a tap does no harm
    /// on the screen the device shows.
    #[arg(long, value_name = "X,Y", value_parser = parse_point)]
    pub(crate) tap: Option<(u32, u32)>,
    /// Write the faster methods to the configuration file as this device's settings.
    #[arg(long)]
    pub(crate) save: bool,
    /// Print the results as one JSON document.
    #[arg(long)]
    pub(crate) json: bool,
}

/// A `--tap` value that is not two pixel coordinates.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not X,Y in pixels (e.g. 540,80)")]
pub(crate) struct BadPoint(String);

/// `X,Y` as two pixel coordinates.
fn parse_point(s: &str) -> Result<(u32, u32), BadPoint> {
    let n = |v: &str| v.trim().parse::<u32>().ok();
    s.split_once(',')
        .and_then(|(x, y)| Some((n(x)?, n(y)?)))
        .ok_or_else(|| BadPoint(s.to_owned()))
}

/// `report`.
#[derive(Args)]
pub(crate) struct ReportArgs {
    /// A session id, or the path of a bundle file.
    pub(crate) source: Option<String>,
    /// The last session of the data directory.
    #[arg(long, conflicts_with = "source")]
    pub(crate) last: bool,
    /// The HTML file to write (default: devicerail-report-SESSION.html).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    #[arg(long, help = DATA_DIR_HELP)]
    pub(crate) data_dir: Option<PathBuf>,
}

/// `replay`.
#[derive(Args)]
pub(crate) struct ReplayArgs {
    /// A session id of the data directory, or the path of a bundle file.
    pub(crate) source: String,
    /// The device to replay on (default: the recorded one, else the only one).
    #[arg(long)]
    pub(crate) device: Option<String>,
    /// The first recorded Action to replay (from 1).
    #[arg(long, value_name = "N")]
    pub(crate) from: Option<usize>,
    /// The last recorded Action to replay.
    #[arg(long, value_name = "N")]
    pub(crate) to: Option<usize>,
    /// Stop at the first step that diverges.
    #[arg(long)]
    pub(crate) strict: bool,
    /// The comparison report to write (default: devicerail-replay-NEW_SESSION.html).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Print the step verdicts as one JSON document instead of lines.
    #[arg(long)]
    pub(crate) json: bool,
    /// How long to wait for the screen to settle around each step, in milliseconds.
    #[arg(long, default_value_t = 3000)]
    pub(crate) settle_ms: u32,
    /// The shared host's socket, used when a host listens there (default:
    /// $DEVICERAIL_SOCKET, else $XDG_RUNTIME_DIR/devicerail/host.sock).
    #[arg(long)]
    pub(crate) socket: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) host: HostArgs,
}

/// `export`.
#[derive(Args)]
pub(crate) struct ExportArgs {
    /// A session id of the data directory, or the path of a bundle file.
    pub(crate) source: String,
    /// The script's language.
    #[arg(long, value_enum)]
    pub(crate) script: ScriptArg,
    /// The file to write (default: stdout).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    #[arg(long, help = DATA_DIR_HELP)]
    pub(crate) data_dir: Option<PathBuf>,
}

/// `--script` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum ScriptArg {
    /// Python with the official `devicerail-client`.
    Python,
    /// TypeScript over stdio with the host's types package.
    Typescript,
    /// Rust with the official `devicerail-client` crate.
    Rust,
    /// A Node script for `playwright-core` (browser Sessions).
    Playwright,
}

/// `plugin-worker` (internal).
#[derive(Args)]
pub(crate) struct WorkerArgs {
    /// The descriptor of the channel to the host.
    #[arg(long)]
    pub(crate) fd: i32,
    /// The plugin library.
    #[arg(long)]
    pub(crate) plugin: PathBuf,
    /// The host's process id.
    #[arg(long)]
    pub(crate) parent: u32,
    /// The worker's diagnostics filter (the host's level).
    #[arg(long, default_value = "info")]
    pub(crate) log_filter: String,
}

/// `bundle …`.
#[derive(Subcommand)]
pub(crate) enum BundleCommand {
    /// Write one Session (manifest, events as stored, every referenced blob) to a tar archive.
    Export {
        /// The session id.
        session: Option<String>,
        /// The last session of the data directory.
        #[arg(long, conflicts_with = "session")]
        last: bool,
        /// The bundle file to write.
        #[arg(long)]
        out: PathBuf,
        #[arg(long, help = DATA_DIR_HELP)]
        data_dir: Option<PathBuf>,
    },
    /// Check a bundle: contiguous sequences, every digest, every reference. Exits 1 with the reason when it is not valid.
    Validate {
        /// The bundle file.
        file: PathBuf,
    },
}

/// `kube …`.
#[derive(Subcommand)]
pub(crate) enum KubeCommand {
    /// Run a kubelet device plugin: one extended resource per platform
    /// (devicerail.dev/android, devicerail.dev/ios-simulator,
    /// devicerail.dev/browser), the devices read from the shared host, each
    /// allocation reserved on the host for the pod's container.
    DevicePlugin(KubeDevicePluginArgs),
}

/// `kube device-plugin`.
#[derive(Args)]
pub(crate) struct KubeDevicePluginArgs {
    /// The shared host's socket (default: $DEVICERAIL_SOCKET, else
    /// $XDG_RUNTIME_DIR/devicerail/host.sock).
    #[arg(long)]
    pub(crate) socket: Option<PathBuf>,
    /// The kubelet's registration socket; the plugin's sockets are served in its directory.
    #[arg(long, default_value = devicerail_host_kube::config::DEFAULT_KUBELET_SOCKET)]
    pub(crate) kubelet_socket: PathBuf,
    /// The kubelet's PodResources socket, read to learn when a pod's allocation ended.
    #[arg(long, default_value = devicerail_host_kube::config::DEFAULT_POD_RESOURCES_SOCKET)]
    pub(crate) pod_resources_socket: PathBuf,
    /// Never read PodResources: an allocation then ends only when the kubelet allocates its device again.
    #[arg(long)]
    pub(crate) no_pod_resources: bool,
    /// PLATFORM=RESOURCE: offer the devices of a platform (`android`, `ios`, `web`, `mock`, …) as that extended resource, replacing the platform's default; `PLATFORM=` offers none (repeatable).
    #[arg(long = "resource", value_name = "PLATFORM=RESOURCE")]
    pub(crate) resources: Vec<String>,
    /// Where allocations and their tokens are kept across restarts (default: kube/allocations.json in the data directory); never inside the socket directory.
    #[arg(long)]
    pub(crate) state_file: Option<PathBuf>,
    /// The shared host's pool manager's key file, which lets this plugin reserve devices (default: pool-manager.key in the host's data directory); never inside the socket directory.
    #[arg(long, value_name = "FILE")]
    pub(crate) pool_key: Option<PathBuf>,
    /// The host's socket directory as the node sees it, mounted into pods (default: the socket's directory).
    #[arg(long)]
    pub(crate) node_socket_dir: Option<PathBuf>,
    /// Where pods see the host's socket directory.
    #[arg(long, default_value = devicerail_host_kube::config::DEFAULT_CONTAINER_SOCKET_DIR)]
    pub(crate) container_socket_dir: PathBuf,
    /// How often the host's devices are read, in milliseconds.
    #[arg(long, default_value_t = 500)]
    pub(crate) poll_ms: u64,
    /// How often the kubelet's PodResources are read, in milliseconds.
    #[arg(long, default_value_t = 2000)]
    pub(crate) release_poll_ms: u64,
    /// An allocation younger than this (milliseconds) is never released.
    #[arg(long, default_value_t = 10_000)]
    pub(crate) release_grace_ms: u64,
    /// Diagnostics filter, RUST_LOG syntax (default: $RUST_LOG, else host.logFilter, else info).
    #[arg(long)]
    pub(crate) log_filter: Option<String>,
}

/// `plugins …`.
#[derive(Subcommand)]
pub(crate) enum PluginsCommand {
    /// List plugin files with their status (loaded or refused, with the reason) and devices.
    List {
        #[arg(long, help = PLUGINS_DIR_HELP)]
        plugins_dir: Option<PathBuf>,
        /// List the plugins shipped with this devicerail that `plugins install NAME` installs, instead.
        #[arg(long)]
        available: bool,
        /// Print the listing as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Check plugins and copy them into the plugins directory: by name (android, browser,
    /// ios-simulator, mock: the plugins shipped with this devicerail), a library file, or the
    /// directory of a driver crate (built in release mode with your cargo, then its conformance
    /// suite must pass).
    Install {
        /// Plugin names (see `plugins list --available`), paths of plugin library files, or
        /// directories of driver crates (with a Cargo.toml).
        #[arg(required = true, value_name = "NAME|FILE|CRATE_DIR")]
        plugins: Vec<String>,
        #[arg(long, help = PLUGINS_DIR_HELP)]
        plugins_dir: Option<PathBuf>,
        /// Replace an installed plugin with the same id.
        #[arg(long)]
        force: bool,
    },
    /// Write a new driver crate from the plugin template: package devicerail-plugin-NAME,
    /// plugin id NAME, the SDK by version, a README, the conformance test and a CI workflow.
    /// Never overwrites: the directory must not exist.
    New {
        /// The plugin id: 1 to 46 of a-z, 0-9 and -, not starting or ending with -.
        name: String,
        /// The crate's directory, created (default: ./devicerail-plugin-NAME).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The platform of the driver's devices.
        #[arg(long, value_enum, default_value_t = PlatformArg::Other)]
        platform: PlatformArg,
        /// A local checkout of DeviceRail Host: the crate builds against its SDK crates
        /// (a [patch.crates-io] section) instead of the published ones.
        #[arg(long, value_name = "PATH")]
        sdk_path: Option<PathBuf>,
    },
    /// Remove an installed plugin by id.
    Remove {
        /// The plugin id (as `plugins list` shows it).
        id: String,
        #[arg(long, help = PLUGINS_DIR_HELP)]
        plugins_dir: Option<PathBuf>,
    },
}

impl PluginsCommand {
    /// The plugins directory the command names, if any.
    pub(crate) fn plugins_dir(&self) -> Option<PathBuf> {
        match self {
            PluginsCommand::List { plugins_dir, .. }
            | PluginsCommand::Install { plugins_dir, .. }
            | PluginsCommand::Remove { plugins_dir, .. } => plugins_dir.clone(),
            PluginsCommand::New { .. } => None,
        }
    }
}

/// `plugins new --platform` values: the platform a driver's devices report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PlatformArg {
    /// Android phones, tablets or emulators.
    Android,
    /// iPhones, iPads or iOS simulators.
    Ios,
    /// Pages in a web browser.
    Web,
    /// Anything else (the platform is named after the plugin id).
    Other,
}

/// `config …`.
#[derive(Subcommand)]
pub(crate) enum ConfigCommand {
    /// Print the effective configuration and where each value came from.
    Show {
        #[command(flatten)]
        dirs: DirArgs,
        /// Print the configuration as one JSON document.
        #[arg(long)]
        json: bool,
    },
}

/// Where `serve --listen` listens: the default socket, or a path.
#[derive(Debug, Clone)]
pub(crate) struct Listen(pub(crate) Option<PathBuf>);

/// A `--listen` value that names no local socket.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ListenError {
    /// `unix:` with nothing after it, or `unixfoo`.
    #[error("expected `unix` or `unix:PATH`")]
    Malformed,
    /// Anything that is not a unix socket (TCP, say).
    #[error("only local sockets are served: expected `unix` or `unix:PATH`")]
    NotLocal,
}

fn parse_listen(s: &str) -> Result<Listen, ListenError> {
    match s.strip_prefix("unix") {
        Some("") => Ok(Listen(None)),
        Some(rest) => match rest.strip_prefix(':') {
            Some(path) if !path.is_empty() => Ok(Listen(Some(PathBuf::from(path)))),
            _ => Err(ListenError::Malformed),
        },
        None => Err(ListenError::NotLocal),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_flag_and_argument_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "devicerail", &mut missing);
        assert!(missing.is_empty(), "flags without help: {missing:?}");
    }

    #[test]
    fn listen_accepts_only_local_sockets() {
        assert!(matches!(parse_listen("unix"), Ok(Listen(None))));
        assert!(
            matches!(parse_listen("unix:/tmp/x.sock"), Ok(Listen(Some(p))) if p == std::path::Path::new("/tmp/x.sock"))
        );
        assert!(matches!(parse_listen("unix:"), Err(ListenError::Malformed)));
        assert!(matches!(
            parse_listen("tcp:127.0.0.1:1"),
            Err(ListenError::NotLocal)
        ));
    }
}
