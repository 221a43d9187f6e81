//! `devicerail plugin-worker` (internal): serves one plugin to the host
//! that started it, over the descriptor it passed.

use std::process::ExitCode;

use devicerail_host_engine::worker::entry::{self, WorkerArgs};

use crate::args;
use crate::logging;

/// Runs the worker until its host goes away.
pub(crate) fn run(a: &args::WorkerArgs) -> ExitCode {
    logging::init_worker(&a.log_filter);
    let args = WorkerArgs {
        fd: a.fd,
        plugin: a.plugin.clone(),
        parent: a.parent,
    };
    match entry::run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("plugin worker: {e}");
            ExitCode::FAILURE
        }
    }
}
