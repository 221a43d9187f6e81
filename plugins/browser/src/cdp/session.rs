//! A view of the connection scoped to one target session (or the browser)
//! and one time budget.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::client::CdpClient;
use super::error::CdpError;

/// Requests go to `session_id` (`None`: the browser endpoint) and each
/// waits at most `timeout`.
#[derive(Clone)]
pub struct CdpSession {
    client: CdpClient,
    session_id: Option<String>,
    timeout: Option<Duration>,
}

impl CdpSession {
    /// The browser-level session of `client`.
    pub fn browser(client: CdpClient) -> Self {
        Self {
            client,
            session_id: None,
            timeout: None,
        }
    }

    /// An attached target's session.
    pub fn attached(client: CdpClient, session_id: String) -> Self {
        Self {
            client,
            session_id: Some(session_id),
            timeout: None,
        }
    }

    /// The same session with another per-request budget.
    #[must_use]
    pub fn with_timeout(&self, timeout: Option<Duration>) -> Self {
        Self {
            client: self.client.clone(),
            session_id: self.session_id.clone(),
            timeout,
        }
    }

    /// The shared connection this session sends on.
    pub fn client(&self) -> &CdpClient {
        &self.client
    }

    /// The target session requests are addressed to; `None` for the
    /// browser endpoint.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// How long each request may wait for its answer; `None`: as long as
    /// the connection lives.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Sends `method` with `params` and decodes the result.
    pub async fn send<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
    ) -> Result<R, CdpError> {
        let params = serde_json::to_value(params).map_err(|e| CdpError::Decode {
            method: method.to_owned(),
            reason: format!("parameters do not serialize: {e}"),
        })?;
        self.client
            .call(self.session_id(), method, params, self.timeout)
            .await
    }

    /// Sends `method` and ignores its (empty) result.
    pub async fn run<P: Serialize>(&self, method: &str, params: P) -> Result<(), CdpError> {
        self.send::<P, Value>(method, params).await.map(|_| ())
    }
}
