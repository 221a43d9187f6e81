//! The `devicerail` command line.
//!
//! `main` parses the arguments ([`args`]) and hands each subcommand to its
//! module under [`commands`]. Every command first reads the configuration
//! (`devicerail_host_config`: command line, then environment, then the
//! configuration file, then defaults), then sets up logging with its log
//! filter ([`logging`]).
//!
//! What it must never do: print anything but protocol frames on stdout
//! while serving (`serve` and `mcp` move fd 1 aside before anything runs),
//! or carry logic another crate owns: this crate parses, dispatches and
//! prints.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use devicerail_host_config::CommandLine;

mod args;
mod attach;
mod commands;
mod logging;

use args::{Cli, Command};

/// mimalloc, not glibc's malloc: the host allocates a response on one
/// thread and frees it on another (the output writer), and glibc's arenas
/// turn that into lock traffic between threads (measured in the serve
/// bench; docs/PERFORMANCE.md). Plugin workers are this binary too.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let line = CommandLine {
        config: cli.config,
        ..CommandLine::default()
    };
    match cli.command {
        Command::PluginWorker(a) => commands::worker::run(&a),
        Command::PluginConformance(a) => commands::conformance::run(&a, line),
        Command::Serve(a) => commands::serve::run(a, line),
        Command::Attach(a) => commands::attach::run(a),
        Command::Mcp(a) => commands::mcp::run(a, line),
        Command::Console(a) => commands::console::run(a, line),
        Command::Kube { command } => commands::kube::run(command, line),
        Command::Plugins { command } => commands::plugins::run(command, line),
        Command::Config { command } => commands::config::run(command, line),
        Command::Devices(a) => commands::devices::run(a, line),
        Command::Bench(a) => commands::bench::run(a, line),
        Command::Doctor(a) => commands::doctor::run(a, line),
        Command::Completions { shell } => commands::completions::run(shell),
        Command::Man => commands::completions::man(),
        Command::Report(a) => commands::report::run_report(a),
        Command::Bundle { command } => commands::report::run_bundle(command),
        Command::Replay(a) => commands::replay::run(a, line),
        Command::Export(a) => commands::replay::run_export(a),
    }
}
