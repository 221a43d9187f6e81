//! Method handlers, one module per area of the method table.

pub mod device;
pub mod evidence;
pub mod execute;
pub mod routing;
pub mod sessions;
pub mod streams;
pub mod system;

use devicerail_plugin_api::DriverError;
use devicerail_protocol::{ErrorCode, RpcError};
use serde_json::json;

use crate::event_store::StoreError;

/// The JSON-RPC error for a store failure.
pub fn store_error(e: StoreError) -> RpcError {
    match e {
        StoreError::NotFound(id) => {
            ErrorCode::SessionNotFound.rpc(format!("no session {id}"), json!({ "sessionId": id }))
        }
        StoreError::Ended(id) => ErrorCode::SessionRequired.rpc(
            format!("session {id} has ended"),
            json!({ "sessionId": id }),
        ),
        StoreError::Active(id) => ErrorCode::SessionNotEnded.rpc(
            format!("session {id} is still active; end it first"),
            json!({ "sessionId": id }),
        ),
        StoreError::Storage(msg) => ErrorCode::StorageFailure.rpc(msg, serde_json::Value::Null),
        StoreError::Closed => {
            ErrorCode::StorageFailure.rpc("the event store is shut down", serde_json::Value::Null)
        }
    }
}

/// The JSON-RPC error for a driver failure (envelope from the catalog,
/// `-32000` for driver-specific codes).
pub fn driver_error(e: DriverError) -> RpcError {
    RpcError::from_info(e.into_info())
}

/// The stored summary of session `id`, or `session_not_found`.
pub async fn existing_session(
    host: &crate::state::Host,
    id: devicerail_protocol::SessionId,
) -> Result<devicerail_protocol::SessionInfo, RpcError> {
    host.store
        .session(id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| store_error(StoreError::NotFound(id)))
}

/// `session_required`.
pub fn session_required(what: &str) -> RpcError {
    ErrorCode::SessionRequired.rpc(
        format!("{what} needs an active session; call session.start"),
        serde_json::Value::Null,
    )
}
