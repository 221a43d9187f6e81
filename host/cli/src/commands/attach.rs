//! `devicerail attach`: a stdio client's bridge to the shared host (the
//! bridge itself is [`crate::attach`]).

use std::process::ExitCode;

use crate::args::AttachArgs;
use crate::attach::{self, SpawnOptions};
use crate::logging;

/// Bridges stdin/stdout to the socket until either side closes.
pub(crate) fn run(a: AttachArgs) -> ExitCode {
    logging::init("warn");
    if let Some(destination) = a.ssh {
        let remote = attach::Remote {
            destination,
            options: a.ssh_options,
            devicerail: a.remote_devicerail,
            socket: a.socket,
        };
        return logging::exit("attach", attach::attach_over_ssh(&remote));
    }
    let spawn = a.spawn.then_some(SpawnOptions {
        plugins_dir: a.plugins_dir,
        data_dir: a.data_dir,
    });
    logging::exit("attach", attach::attach(a.socket.as_deref(), spawn))
}
