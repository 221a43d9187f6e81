//! [`LinkError`]: why a host could not be reached or a call failed, the
//! one mapping every tool shares (the wire error's `data.code`, else its
//! numeric code; its message; its `data`).

use std::path::PathBuf;

use devicerail_client::ClientError;
use devicerail_host_core::serve::ServeError;
use serde_json::Value;

/// Why a host could not be reached, or a call to it failed.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// No shared host listens on the socket, and the data directory is
    /// locked by a host that does not listen, so none can start here.
    #[error(
        "the data directory {dir} is in use by a DeviceRail host that does not share it; stop it, or run it as `devicerail serve --listen unix` so this command can attach to it"
    )]
    Busy {
        /// The locked data directory.
        dir: PathBuf,
    },
    /// A host in this process failed to start for another reason.
    #[error("cannot start the in-process host: {0}")]
    Start(ServeError),
    /// Connecting to the host or writing the attach preamble failed.
    #[error("cannot connect to the host: {0}")]
    Io(#[from] std::io::Error),
    /// The official client failed (handshake, transport, framing).
    #[error("{0}")]
    Client(ClientError),
    /// The host answered a request with a protocol error.
    #[error("the host refused {method}: {message} ({code})")]
    Remote {
        /// The method called.
        method: &'static str,
        /// The protocol error code (`data.code`, e.g. `device_in_use`),
        /// or the numeric JSON-RPC code when there is none.
        code: String,
        /// The error's human-readable message.
        message: String,
        /// The error's `data` object, as the host sent it.
        data: Value,
    },
    /// Params did not fit a method, or a result did not turn back into
    /// JSON.
    #[error("unexpected data from the host: {0}")]
    Decode(#[from] serde_json::Error),
}

impl LinkError {
    /// The protocol error code of a remote refusal; `None` for every other
    /// kind of failure.
    pub fn code(&self) -> Option<&str> {
        match self {
            LinkError::Remote { code, .. } => Some(code),
            _ => None,
        }
    }

    /// The error's message without the method (a remote refusal's own
    /// message), for answers that name the method elsewhere.
    pub fn message(&self) -> String {
        match self {
            LinkError::Remote { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }

    /// Whether the host could not be reached at all (no answer, a broken
    /// connection), as opposed to an answer.
    pub fn is_unreachable(&self) -> bool {
        !matches!(self, LinkError::Remote { .. } | LinkError::Decode(_))
    }
}
