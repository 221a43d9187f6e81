//! `devicerail completions SHELL` and the man page: both generated from the
//! command line's own definition, so they never disagree with `--help`.

use std::process::ExitCode;

use clap::CommandFactory;

use crate::args::Cli;

/// Prints the completion script for `shell` on stdout.
pub(crate) fn run(shell: clap_complete::Shell) -> ExitCode {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "devicerail", &mut std::io::stdout());
    ExitCode::SUCCESS
}

/// Prints the man page (roff) on stdout.
pub(crate) fn man() -> ExitCode {
    let page = clap_mangen::Man::new(Cli::command());
    match page.render(&mut std::io::stdout()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("devicerail man: {e}");
            ExitCode::FAILURE
        }
    }
}
