//! Method handlers, one module per area of the method table. Handlers
//! use state (the host, its connections, registry and stores); they never
//! reach up to dispatch or the transports.

pub mod call;
pub mod closing;
pub mod device;
pub mod events;
pub mod evidence;
pub mod execute;
pub mod media;
pub mod pool;
pub mod request;
pub mod routing;
pub mod sessions;
pub mod system;

use devicerail_host_protocol::RpcError;

pub use crate::wire_errors::{
    driver_error, driver_error_info, driver_rpc, session_required, store_error,
};
use devicerail_host_store::event_store::StoreError;

/// The stored summary of session `id`, or `session_not_found`.
pub async fn existing_session(
    host: &crate::state::Host,
    id: devicerail_host_protocol::SessionId,
) -> Result<devicerail_host_protocol::SessionInfo, RpcError> {
    host.store
        .session(id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| store_error(StoreError::NotFound(id)))
}
