//! What happens when a control connection ends (its peer closed, died, or
//! the host is shutting down): its unfinished requests are cancelled and
//! given a bounded time to record their terminal events, its active
//! Session is ended with an outcome that says why, and its device leases
//! are released. Never touches devices other connections hold.

use std::sync::Arc;
use std::time::Duration;

use devicerail_host_protocol::SessionOutcome;

use crate::connection::Connection;
use crate::state::Host;

/// Why a connection is being closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// The peer closed its end (or died, which closes it too).
    PeerClosed,
    /// The host is shutting down.
    Shutdown,
}

/// Ends `conn`: cancels what it still has in flight, waits (bounded) for
/// those requests to record their terminal events, ends its Session and
/// releases its leases. Returns once the connection holds nothing.
pub(crate) async fn close(host: &Arc<Host>, conn: &Arc<Connection>, why: Why) {
    if why == Why::PeerClosed {
        conn.inflight.cancel_all();
    }
    let limit =
        tokio::time::Instant::now() + host.config.cleanup_grace * 2 + Duration::from_secs(1);
    while !conn.inflight.is_empty() && tokio::time::Instant::now() < limit {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    if !conn.inflight.is_empty() {
        tracing::warn!(
            connection = %conn.id,
            pending = conn.inflight.len(),
            "in-flight requests did not finish before the connection closed"
        );
    }
    if let Some(active) = conn.session() {
        let (outcome, reason) = match why {
            Why::Shutdown => (SessionOutcome::Shutdown, "the host shut down"),
            Why::PeerClosed => (
                SessionOutcome::Cancelled,
                "the client's connection closed while the Session was active",
            ),
        };
        match super::sessions::finish(host, &active, outcome, Some(reason.into()), None).await {
            Ok(_) => tracing::info!(
                connection = %conn.id,
                session = %active.id,
                ?outcome,
                "active session ended: {reason}"
            ),
            Err(e) => tracing::error!(
                connection = %conn.id,
                session = %active.id,
                "could not end the active session: {}",
                e.message
            ),
        }
        conn.set_session(None);
    }
    let released = host.leases.release_all(conn.id);
    if !released.is_empty() {
        tracing::info!(connection = %conn.id, devices = ?released, "device leases released");
    }
}
