//! [`Reach`]: where a tool finds its host. The shared host when one
//! listens on the control socket; else (for tools that may run one) a
//! host inside this process on the same configuration, served over
//! socket pairs by the same connection code as the socket, so a client
//! cannot tell the two apart. Every connection starts with an [`Intro`].

use std::path::{Path, PathBuf};

use devicerail_client::protocol::HelloParams;
use devicerail_client::{ClientOptions, ControlTransportKind, DeviceRailClient, default_hello};
use devicerail_host_config::Config;
use devicerail_host_core::in_process::InProcessHost;
use devicerail_host_core::serve::ServeError;
use devicerail_host_store::lockfile::LockError;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::{Intro, LinkError};

/// Whether a host listens on `socket` now.
pub fn listening(socket: &Path) -> bool {
    std::os::unix::net::UnixStream::connect(socket).is_ok()
}

/// The host a tool talks to.
pub enum Reach {
    /// A shared host on its control socket.
    Shared {
        /// The socket.
        socket: PathBuf,
    },
    /// A host inside this process.
    Local(InProcessHost),
}

impl std::fmt::Debug for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.mode())
    }
}

impl Reach {
    /// The shared host on `socket` (connected on each [`Reach::stream`]).
    pub fn shared(socket: &Path) -> Self {
        Reach::Shared {
            socket: socket.to_path_buf(),
        }
    }

    /// The shared host listening on `socket`, else a host started in this
    /// process on `config`. Must run inside the Tokio runtime that will
    /// serve it.
    pub fn open(config: &Config, socket: &Path) -> Result<Self, LinkError> {
        if listening(socket) {
            tracing::info!(socket = %socket.display(), "attaching to the shared host");
            return Ok(Self::shared(socket));
        }
        match InProcessHost::start(config) {
            Ok(h) => {
                tracing::info!(data_dir = %config.data_dir.value.display(), "serving with an in-process host");
                Ok(Reach::Local(h))
            }
            Err(ServeError::Lock(LockError::Busy { dir, .. })) => Err(LinkError::Busy { dir }),
            Err(e) => Err(LinkError::Start(e)),
        }
    }

    /// `shared` or `in-process`.
    pub fn mode(&self) -> &'static str {
        match self {
            Reach::Shared { .. } => "shared",
            Reach::Local(_) => "in-process",
        }
    }

    /// A new connection that introduced itself with `intro` (no hello
    /// yet: the caller speaks the protocol on it).
    pub async fn stream(&self, intro: &Intro) -> Result<UnixStream, LinkError> {
        let mut stream = match self {
            Reach::Shared { socket } => UnixStream::connect(socket).await?,
            Reach::Local(h) => h.connect()?,
        };
        stream.write_all(intro.line().as_bytes()).await?;
        Ok(stream)
    }

    /// A new connection through the official client, `system.hello` done
    /// as client `name` (this build's version), every feature offered.
    pub async fn client(&self, intro: &Intro, name: &str) -> Result<DeviceRailClient, LinkError> {
        let (read, write) = self.stream(intro).await?.into_split();
        attach(read, write, name).await
    }

    /// [`Reach::client`] offering every feature but those named in
    /// `without` (e.g. to observe without UI snapshots).
    pub async fn client_without(
        &self,
        intro: &Intro,
        name: &str,
        without: &[&str],
    ) -> Result<DeviceRailClient, LinkError> {
        let (read, write) = self.stream(intro).await?.into_split();
        let mut hello = hello(name);
        hello
            .features
            .optional
            .retain(|f| !without.contains(&f.as_str()));
        attach_with(read, write, hello).await
    }

    /// Stops an in-process host (a shared host keeps running).
    pub async fn shutdown(&self) {
        if let Reach::Local(h) = self {
            h.shutdown().await;
        }
    }
}

/// The official client over `read` and `write` (a connection that already
/// introduced itself), `system.hello` done as client `name`. The
/// connection reports itself as stdio, as `devicerail attach` does.
pub async fn attach<R, W>(read: R, write: W, name: &str) -> Result<DeviceRailClient, LinkError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    attach_with(read, write, hello(name)).await
}

/// The hello of client `name` (this build's version), every feature
/// offered.
pub(crate) fn hello(name: &str) -> HelloParams {
    let mut hello = default_hello();
    hello.client.name = name.into();
    hello.client.version = env!("CARGO_PKG_VERSION").into();
    hello
}

/// [`attach`] with a caller's hello.
async fn attach_with<R, W>(
    read: R,
    write: W,
    hello: HelloParams,
) -> Result<DeviceRailClient, LinkError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    DeviceRailClient::attach(
        read,
        write,
        ControlTransportKind::Stdio,
        hello,
        ClientOptions::default(),
    )
    .await
    .map_err(|e| crate::remote("system.hello", e))
}
