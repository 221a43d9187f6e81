//! Typed failures of the DevTools client.

use std::time::Duration;

/// Why a DevTools request or connection failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CdpError {
    /// The WebSocket handshake or the TCP connection failed.
    #[error("could not connect to the DevTools endpoint {url}: {reason}")]
    Connect {
        /// The WebSocket URL tried.
        url: String,
        /// What the network or handshake layer reported.
        reason: String,
    },
    /// The endpoint is not a DevTools endpoint we can use.
    #[error("bad DevTools endpoint {endpoint}: {reason}")]
    BadEndpoint {
        /// The endpoint as configured.
        endpoint: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The connection closed (browser exited or crashed) before an answer.
    #[error("the DevTools connection is closed: {0}")]
    Closed(
        /// Why the connection ended, as first observed.
        String,
    ),
    /// No answer within the call's budget.
    #[error("{method} got no answer within {budget:?}")]
    Timeout {
        /// The DevTools method that went unanswered.
        method: String,
        /// The time it was given.
        budget: Duration,
    },
    /// The browser answered with a protocol error.
    #[error("{method} failed: {message} (code {code})")]
    Protocol {
        /// The DevTools method that failed.
        method: String,
        /// The protocol error code (`0` when the plugin raised it for a
        /// script exception).
        code: i64,
        /// The browser's message.
        message: String,
    },
    /// The answer did not have the expected shape.
    #[error("{method} returned an unexpected result: {reason}")]
    Decode {
        /// The DevTools method whose answer (or parameters) did not fit.
        method: String,
        /// The decoding error.
        reason: String,
    },
}
