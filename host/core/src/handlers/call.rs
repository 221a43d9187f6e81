//! The request a handler receives: the host, the connection and what it
//! negotiated, the id, the method's table row, its raw params and budget.

use std::sync::Arc;

use devicerail_host_protocol::{MethodSpec, RpcError, RpcId, RpcParams};
use tokio::time::Instant;

use crate::connection::{Connection, Negotiated};
use crate::state::Host;
use devicerail_host_engine::device_call::Stop;

/// One request that passed the envelope and method checks.
pub(crate) struct Call {
    pub host: Arc<Host>,
    pub conn: Arc<Connection>,
    pub neg: Arc<Negotiated>,
    pub id: RpcId,
    pub spec: &'static MethodSpec,
    pub params: Option<RpcParams>,
    pub timeout_ms: Option<u64>,
}

impl Call {
    /// Decodes the params for this method.
    pub(crate) fn params<P: serde::de::DeserializeOwned>(&mut self) -> Result<P, RpcError> {
        crate::params::decode(self.spec, self.params.take())
    }

    /// The request's stop conditions, measured from now (acceptance).
    pub(crate) fn stop(&self, cancel: tokio_util::sync::CancellationToken) -> Stop {
        Stop {
            deadline: self
                .timeout_ms
                .map(|ms| Instant::now() + std::time::Duration::from_millis(ms)),
            cancel,
            shutdown: self.host.shutdown.clone(),
        }
    }
}
