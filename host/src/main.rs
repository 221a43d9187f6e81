//! The `devicerail` command line.
//!
//! Every command first reads the configuration (`devicerail_host::config`:
//! command line, then environment, then the configuration file, then
//! defaults), then sets up logging with its log filter.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use devicerail_host::config::{self, CommandLine, Config, ConfigError};
use devicerail_host::state::ScreenshotPolicy;
use devicerail_host::{commands, serve};

#[derive(Parser)]
#[command(
    name = "devicerail",
    version,
    about = "DeviceRail Host: drive phones, simulators and browsers over one JSON-RPC protocol"
)]
struct Cli {
    /// Configuration file (default: $DEVICERAIL_CONFIG, else config.toml beside the default plugins and data directories).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

/// What a command that runs a host takes from the command line (`serve`,
/// and `mcp` for its in-process host).
#[derive(clap::Args)]
struct HostArgs {
    /// Plugins directory (default: $DEVICERAIL_PLUGINS_DIR, else host.pluginsDir of the configuration file, else the platform data dir).
    #[arg(long)]
    plugins_dir: Option<PathBuf>,
    /// Data directory for sessions, events and Evidence (default: $DEVICERAIL_DATA_DIR, else host.dataDir, else the platform data dir).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Whether observations capture screenshots (default: $DEVICERAIL_SCREENSHOT_POLICY, else host.screenshotPolicy, else capture).
    #[arg(long, value_enum)]
    screenshot_policy: Option<ScreenshotPolicy>,
    /// Diagnostics filter, RUST_LOG syntax (default: $RUST_LOG, else host.logFilter, else info).
    #[arg(long)]
    log_filter: Option<String>,
}

impl HostArgs {
    /// Puts these values on the configuration's command-line layer.
    fn apply(self, line: &mut CommandLine) {
        line.plugins_dir = self.plugins_dir;
        line.data_dir = self.data_dir;
        line.screenshot_policy = self.screenshot_policy;
        line.log_filter = self.log_filter;
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve the protocol on stdin/stdout (NDJSON).
    Serve {
        #[command(flatten)]
        host: HostArgs,
        /// Also serve a local control socket shared by many clients:
        /// `unix` (the default path: $DEVICERAIL_SOCKET, else
        /// $XDG_RUNTIME_DIR/devicerail/host.sock) or `unix:PATH`. The host
        /// then runs until SIGINT/SIGTERM, even after stdin closes.
        #[arg(long, value_name = "unix[:PATH]", value_parser = parse_listen)]
        listen: Option<Listen>,
        /// Socket connections served at once (more are refused).
        #[arg(long, default_value_t = serve::DEFAULT_MAX_CONNECTIONS)]
        max_connections: usize,
    },
    /// Bridge stdin/stdout to a shared host's control socket, so a stdio
    /// client uses the shared host unchanged.
    Attach {
        /// The host's socket (default: $DEVICERAIL_SOCKET, else
        /// $XDG_RUNTIME_DIR/devicerail/host.sock).
        #[arg(long)]
        socket: Option<PathBuf>,
        /// Start a shared host in the background when none is listening.
        #[arg(long)]
        spawn: bool,
        /// Plugins directory of a host started with --spawn.
        #[arg(long, requires = "spawn")]
        plugins_dir: Option<PathBuf>,
        /// Data directory of a host started with --spawn.
        #[arg(long, requires = "spawn")]
        data_dir: Option<PathBuf>,
    },
    /// Serve the Model Context Protocol on stdin/stdout for agents: attaches
    /// to the shared host when one listens, else runs one in this process.
    Mcp {
        /// The shared host's socket (default: $DEVICERAIL_SOCKET, else
        /// $XDG_RUNTIME_DIR/devicerail/host.sock).
        #[arg(long)]
        socket: Option<PathBuf>,
        #[command(flatten)]
        host: HostArgs,
    },
    /// Manage driver plugins.
    Plugins {
        #[command(subcommand)]
        command: PluginsCommand,
    },
    /// Show the configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Check the environment: configuration, directories, plugins and each driver's own checks.
    Doctor {
        #[arg(long)]
        plugins_dir: Option<PathBuf>,
        #[arg(long)]
        data_dir: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Render a Session as one self-contained HTML file (works on a running host's store, read-only).
    Report {
        /// A session id, or the path of a bundle file.
        source: Option<String>,
        /// The last session of the data directory.
        #[arg(long, conflicts_with = "source")]
        last: bool,
        /// The HTML file to write (default: devicerail-report-<session>.html).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Data directory (default: $DEVICERAIL_DATA_DIR, else the platform data dir).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
    /// Export or validate portable session bundles.
    Bundle {
        #[command(subcommand)]
        command: BundleCommand,
    },
    /// Internal: serve one plugin to its host over a socket (started by `serve`).
    #[command(hide = true)]
    PluginWorker {
        /// The descriptor of the channel to the host.
        #[arg(long)]
        fd: i32,
        /// The plugin library.
        #[arg(long)]
        plugin: PathBuf,
        /// The host's process id.
        #[arg(long)]
        parent: u32,
        #[arg(long, default_value = "info")]
        log_filter: String,
    },
}

#[derive(Subcommand)]
enum BundleCommand {
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
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
    /// Check a bundle: contiguous sequences, every digest, every reference. Exits 1 with the reason when it is not valid.
    Validate { file: PathBuf },
}

#[derive(Subcommand)]
enum PluginsCommand {
    /// List plugin files with their status (loaded or refused, with the reason) and devices.
    List {
        #[arg(long)]
        plugins_dir: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Check a plugin library and copy it into the plugins directory.
    Install {
        file: PathBuf,
        #[arg(long)]
        plugins_dir: Option<PathBuf>,
        /// Replace an installed plugin with the same id.
        #[arg(long)]
        force: bool,
    },
    /// Remove an installed plugin by id.
    Remove {
        id: String,
        #[arg(long)]
        plugins_dir: Option<PathBuf>,
    },
}

/// Where `serve --listen` listens.
#[derive(Debug, Clone)]
struct Listen(Option<PathBuf>);

fn parse_listen(s: &str) -> Result<Listen, String> {
    match s.strip_prefix("unix") {
        Some("") => Ok(Listen(None)),
        Some(rest) => match rest.strip_prefix(':') {
            Some(path) if !path.is_empty() => Ok(Listen(Some(PathBuf::from(path)))),
            _ => Err("expected `unix` or `unix:PATH`".into()),
        },
        None => Err("only local sockets are served: expected `unix` or `unix:PATH`".into()),
    }
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print the effective configuration and where each value came from.
    Show {
        #[arg(long)]
        plugins_dir: Option<PathBuf>,
        #[arg(long)]
        data_dir: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

fn init_logging(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::builder()
        .parse(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_target(false)
        .init();
}

/// Reads the configuration and starts logging, or says why it cannot.
fn configure(what: &str, cli: &CommandLine, default_log: &str) -> Result<Config, ExitCode> {
    match Config::load(cli, default_log) {
        Ok(c) => {
            init_logging(&c.log_filter.value);
            Ok(c)
        }
        Err(e) => {
            eprintln!("devicerail {what}: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

fn exit<T, E: std::fmt::Display>(what: &str, r: Result<T, E>) -> ExitCode {
    match r {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("devicerail {what}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logging of a plugin worker: plain lines on stderr, level first, which
/// the host forwards to its own log.
fn init_worker_logging(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::builder()
        .parse(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_ansi(false)
        .with_target(false)
        .without_time()
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut line = CommandLine {
        config: cli.config,
        ..CommandLine::default()
    };
    match cli.command {
        Command::PluginWorker {
            fd,
            plugin,
            parent,
            log_filter,
        } => {
            init_worker_logging(&log_filter);
            let args = devicerail_host::worker::entry::WorkerArgs { fd, plugin, parent };
            match devicerail_host::worker::entry::run(&args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("plugin worker: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Serve {
            host,
            listen,
            max_connections,
        } => {
            host.apply(&mut line);
            let config = match configure("serve", &line, "info") {
                Ok(c) => c,
                Err(code) => return code,
            };
            let listen = match listen
                .map(|l| devicerail_host::paths::socket_path(l.0.as_deref()))
                .transpose()
            {
                Ok(l) => l.map(|path| serve::Listen {
                    path,
                    max_connections: max_connections.max(1),
                }),
                Err(e) => {
                    eprintln!("devicerail serve: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match serve::serve(&config, listen) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("{e}");
                    eprintln!("devicerail serve: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Attach {
            socket,
            spawn,
            plugins_dir,
            data_dir,
        } => {
            init_logging("warn");
            let spawn = spawn.then_some(devicerail_host::attach::SpawnOptions {
                plugins_dir,
                data_dir,
            });
            match devicerail_host::attach::attach(socket.as_deref(), spawn) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("devicerail attach: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Mcp { socket, host } => {
            host.apply(&mut line);
            let config = match configure("mcp", &line, "info") {
                Ok(c) => c,
                Err(code) => return code,
            };
            let socket = match devicerail_host::paths::socket_path(socket.as_deref()) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("devicerail mcp: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match devicerail_host::mcp::run(&config, &socket) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("{e}");
                    eprintln!("devicerail mcp: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Plugins { command } => {
            line.plugins_dir = match &command {
                PluginsCommand::List { plugins_dir, .. }
                | PluginsCommand::Install { plugins_dir, .. }
                | PluginsCommand::Remove { plugins_dir, .. } => plugins_dir.clone(),
            };
            let config = match configure("plugins", &line, "warn") {
                Ok(c) => c,
                Err(code) => return code,
            };
            let result = match command {
                PluginsCommand::List { json, .. } => commands::list(&config, json),
                PluginsCommand::Install { file, force, .. } => {
                    commands::install(&file, &config, force)
                        .map(|p| println!("installed {}", p.display()))
                }
                PluginsCommand::Remove { id, .. } => commands::remove(&id, &config).map(|files| {
                    files
                        .iter()
                        .for_each(|f| println!("removed {}", f.display()))
                }),
            };
            exit("plugins", result)
        }
        Command::Config {
            command:
                ConfigCommand::Show {
                    plugins_dir,
                    data_dir,
                    json,
                },
        } => {
            line.plugins_dir = plugins_dir;
            line.data_dir = data_dir;
            match configure("config", &line, "warn") {
                Ok(c) => {
                    commands::config_show(&c, json);
                    ExitCode::SUCCESS
                }
                Err(code) => code,
            }
        }
        Command::Report {
            source,
            last,
            out,
            data_dir,
        } => {
            init_logging("warn");
            match commands::report(source.as_deref(), last, out.as_deref(), data_dir.as_deref()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("devicerail report: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Bundle { command } => {
            init_logging("warn");
            let result = match &command {
                BundleCommand::Export {
                    session,
                    last,
                    out,
                    data_dir,
                } => commands::bundle_export(session.as_deref(), *last, out, data_dir.as_deref()),
                BundleCommand::Validate { file } => commands::bundle_validate(file),
            };
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    match &command {
                        BundleCommand::Validate { file } => {
                            eprintln!("devicerail bundle validate: {}: {e}", file.display())
                        }
                        BundleCommand::Export { .. } => eprintln!("devicerail bundle export: {e}"),
                    }
                    ExitCode::FAILURE
                }
            }
        }
        Command::Doctor {
            plugins_dir,
            data_dir,
            json,
        } => {
            line.plugins_dir = plugins_dir;
            line.data_dir = data_dir;
            // A broken file is reported as a check; the rest still runs.
            let config = match Config::load(&line, "warn") {
                Ok(c) => Ok(c),
                Err(e) => match Config::without_file(&line, &config::process_env, "warn") {
                    Ok(c) => Err((e, c)),
                    Err(e2) => return exit("doctor", Err::<(), ConfigError>(e2)),
                },
            };
            let filter = match &config {
                Ok(c) | Err((_, c)) => c.log_filter.value.clone(),
            };
            init_logging(&filter);
            match commands::doctor(config, json) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("devicerail doctor: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
