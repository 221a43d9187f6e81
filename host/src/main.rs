//! The `devicerail` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use devicerail_host::state::ScreenshotPolicy;
use devicerail_host::{commands, serve};

#[derive(Parser)]
#[command(
    name = "devicerail",
    version,
    about = "DeviceRail Host: drive phones, simulators and browsers over one JSON-RPC protocol"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the protocol on stdin/stdout (NDJSON).
    Serve {
        /// Plugins directory (default: $DEVICERAIL_PLUGINS_DIR, else the platform data dir).
        #[arg(long)]
        plugins_dir: Option<PathBuf>,
        /// Data directory for sessions, events and Evidence (default: $DEVICERAIL_DATA_DIR, else the platform data dir).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Whether observations capture screenshots.
        #[arg(
            long,
            value_enum,
            env = "DEVICERAIL_SCREENSHOT_POLICY",
            default_value = "capture"
        )]
        screenshot_policy: ScreenshotPolicy,
    },
    /// Manage driver plugins.
    Plugins {
        #[command(subcommand)]
        command: PluginsCommand,
    },
    /// Check the environment: directories, plugins and each driver's own checks.
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

fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_target(false)
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve {
            plugins_dir,
            data_dir,
            screenshot_policy,
        } => {
            init_logging("info");
            match serve::serve(serve::ServeOptions {
                plugins_dir,
                data_dir,
                screenshot_policy,
            }) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("{e}");
                    eprintln!("devicerail serve: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Plugins { command } => {
            init_logging("warn");
            let result = match command {
                PluginsCommand::List { plugins_dir, json } => {
                    commands::list(plugins_dir.as_deref(), json)
                }
                PluginsCommand::Install {
                    file,
                    plugins_dir,
                    force,
                } => commands::install(&file, plugins_dir.as_deref(), force)
                    .map(|p| println!("installed {}", p.display())),
                PluginsCommand::Remove { id, plugins_dir } => {
                    commands::remove(&id, plugins_dir.as_deref()).map(|files| {
                        files
                            .iter()
                            .for_each(|f| println!("removed {}", f.display()))
                    })
                }
            };
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("devicerail plugins: {e}");
                    ExitCode::FAILURE
                }
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
            init_logging("warn");
            match commands::doctor(plugins_dir.as_deref(), data_dir.as_deref(), json) {
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
