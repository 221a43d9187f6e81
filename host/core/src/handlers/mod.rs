//! Method handlers, one module per area of the method table. Handlers
//! use state (the host, its connections, registry and stores); they never
//! reach up to dispatch or the transports.

pub(crate) mod answer;
pub(crate) mod call;
pub(crate) mod closing;
pub(crate) mod device;
pub(crate) mod events;
pub(crate) mod evidence;
pub(crate) mod execute;
pub(crate) mod lab;
pub(crate) mod media;
pub(crate) mod pool;
pub(crate) mod request;
pub(crate) mod routing;
pub(crate) mod sessions;
pub(crate) mod system;

use devicerail_host_protocol::RpcError;

pub(crate) use crate::wire_errors::{driver_error_info, driver_rpc, session_required, store_error};
use devicerail_host_store::event_store::StoreError;

/// The stored summary of session `id`, or `session_not_found`.
pub(crate) async fn existing_session(
    host: &crate::state::Host,
    id: devicerail_host_protocol::SessionId,
) -> Result<devicerail_host_protocol::SessionInfo, RpcError> {
    host.store
        .session(id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| store_error(StoreError::NotFound(id)))
}
