//! Typed failures of the DevTools client.

use std::time::Duration;

/// Why a DevTools request or connection failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CdpError {
    /// The WebSocket handshake or the TCP connection failed.
    #[error("could not connect to the DevTools endpoint {url}: {reason}")]
    Connect { url: String, reason: String },
    /// The endpoint is not a DevTools endpoint we can use.
    #[error("bad DevTools endpoint {endpoint}: {reason}")]
    BadEndpoint { endpoint: String, reason: String },
    /// The connection closed (browser exited or crashed) before an answer.
    #[error("the DevTools connection is closed: {0}")]
    Closed(String),
    /// No answer within the call's budget.
    #[error("{method} got no answer within {budget:?}")]
    Timeout { method: String, budget: Duration },
    /// The browser answered with a protocol error.
    #[error("{method} failed: {message} (code {code})")]
    Protocol {
        method: String,
        code: i64,
        message: String,
    },
    /// The answer did not have the expected shape.
    #[error("{method} returned an unexpected result: {reason}")]
    Decode { method: String, reason: String },
}

impl CdpError {
    /// Whether the error means the browser connection is gone.
    pub fn is_closed(&self) -> bool {
        matches!(self, Self::Closed(_))
    }
}
