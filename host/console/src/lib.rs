//! # devicerail-host-console
//!
//! `devicerail console`: a live web console for a device lab, served on
//! loopback by a client of the host (through the link crate, so it runs
//! beside the shared host or, when none listens, with a host in this
//! process). A person sees every device with its plugin, health and
//! holder; watches a device's screen live (Chromium's own screencast, a
//! changed screenshot elsewhere); takes control, and taps, drags and types
//! on it as Actions of a Session opened for them (leased and recorded like
//! any client's, secrets as `inputSecret`); follows any running Session's
//! events and effects as they happen; opens an ended Session's report,
//! replays or exports it. A second viewer watches what another holds.
//!
//! * [`auth`]: the one-time capability token, the viewer cookie, the
//!   loopback `Host` and same-origin checks.
//! * `http`: the routes (page, embedded files, report, evidence, socket)
//!   and the strict headers every response carries.
//! * `ws`: one viewer's WebSocket; `lab`: what every viewer sees (device
//!   list, Session list, frame pumps) through the host's lab extension;
//!   `control`: one viewer's device, lease and Session; `follow`: a
//!   Session's events and effects; `buttons`: replay and export.
//! * [`messages`]: the page's messages, as types.
//!
//! What it must never do: listen beyond loopback, serve without a viewer's
//! cookie (but the token exchange), log a token, a cookie or a secret, or
//! act on a device for a viewer who does not hold it.

#![forbid(unsafe_code)]

pub mod auth;
mod buttons;
mod control;
mod follow;
mod http;
mod lab;
pub mod messages;
mod ws;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use devicerail_host_config::Config;
use devicerail_host_link::{LinkError, Reach};

pub use http::PAGE_POLICY;

/// Why the console could not run.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// The host could not be reached or started.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// The listening socket or the runtime failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// `--listen` named an address other machines could reach.
    #[error(
        "the console listens on loopback only (127.0.0.1 or ::1), not {0}; reach it from elsewhere through SSH (`ssh -L`)"
    )]
    NotLoopback(SocketAddr),
}

/// Where the console listens.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// A loopback address (port 0: any free port).
    pub listen: SocketAddr,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        }
    }
}

/// Runs the console for the host of `config` (the shared host on `socket`
/// when one listens) until interrupted; `announce` gets the URL to open
/// (with its one-time token) once the console listens.
pub fn run(
    config: &Config,
    socket: &Path,
    opts: Options,
    announce: impl FnOnce(&str),
) -> Result<(), ConsoleError> {
    if !opts.listen.ip().is_loopback() {
        return Err(ConsoleError::NotLoopback(opts.listen));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = rt.block_on(async {
        let reach = Arc::new(Reach::open(config, socket)?);
        let listener = tokio::net::TcpListener::bind(opts.listen).await?;
        let addr = listener.local_addr()?;
        let lab = lab::Lab::start(reach.clone());
        let app = Arc::new(http::App {
            gate: auth::Gate::default(),
            lab,
            data_dir: config.data_dir.value.clone(),
            mode: reach.mode(),
        });
        let token = app.gate.invite(None)?;
        announce(&format!("http://{addr}/?token={token}"));
        tracing::info!(%addr, mode = reach.mode(), "the console listens");
        let served = axum::serve(listener, http::router(app.clone()))
            .with_graceful_shutdown(stopped())
            .await;
        drop(app);
        reach.shutdown().await;
        served.map_err(ConsoleError::from)
    });
    rt.shutdown_timeout(Duration::from_millis(500));
    result
}

/// Resolves on Ctrl-C or SIGTERM.
async fn stopped() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async {
            match term.as_mut() {
                Some(t) => { t.recv().await; }
                None => std::future::pending::<()>().await,
            }
        } => {}
    }
    tracing::info!("the console is stopping");
}
