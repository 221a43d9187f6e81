//! How failures of the store and of drivers look on the wire: the one
//! place that turns a `StoreError` or a `DriverError` into the catalog's
//! code, numeric code, flag and detail keys. Used by handlers and by the
//! state modules that report errors (the recorder); it imports neither.

use devicerail_host_plugin_api::DriverError;
use devicerail_host_protocol::{ErrorCode, ErrorInfo, Feature, RpcError};
use serde_json::json;

use devicerail_host_store::event_store::StoreError;

/// The JSON-RPC error for a store failure.
pub(crate) fn store_error(e: StoreError) -> RpcError {
    match e {
        StoreError::NotFound(id) => {
            ErrorCode::SessionNotFound.rpc(format!("no session {id}"), json!({ "sessionId": id }))
        }
        StoreError::Ended(id) => ErrorCode::SessionEnded.rpc(
            format!("session {id} has ended"),
            json!({ "sessionId": id }),
        ),
        StoreError::Active(id) => ErrorCode::SessionActive.rpc(
            format!("session {id} is still active; end it first"),
            json!({ "sessionId": id }),
        ),
        e @ (StoreError::Storage(_) | StoreError::CannotWrite(_) | StoreError::ReadOnly(_)) => {
            ErrorCode::EventStoreError.rpc(e.to_string(), serde_json::Value::Null)
        }
        StoreError::TooLarge { bytes } => ErrorCode::ResponseFrameTooLarge.rpc(
            format!(
                "the event would be {bytes} bytes; no event larger than {} bytes is recorded, so that every event can be read back",
                devicerail_host_store::event_store::MAX_EVENT_BYTES
            ),
            json!({ "actualBytes": bytes, "limitBytes": devicerail_host_store::event_store::MAX_EVENT_BYTES }),
        ),
        StoreError::Closed => ErrorCode::EventStoreShuttingDown
            .rpc("the event store is shut down", serde_json::Value::Null),
    }
}

/// The wire form of a routed Driver's failure. Catalog driver codes keep
/// their code with the catalog's flag and detail keys; `internal_error` is
/// the driver variant (-32000, retryable); codes a driver invents travel as
/// `platform_error` with the code as `platformCode`.
pub(crate) fn driver_error_info(mut e: DriverError) -> ErrorInfo {
    e.message = devicerail_host_protocol::errors::bound_message(e.message);
    e.details = devicerail_host_protocol::errors::bound_value(e.details, 0);
    let known = e.code.known();
    match known {
        Some(ErrorCode::PlatformError) => ErrorInfo {
            code: e.code.into(),
            message: e.message,
            retryable: e.retryable,
            details: ErrorCode::PlatformError.filtered_details(e.details),
        },
        Some(ErrorCode::InternalError) => ErrorInfo {
            code: e.code.into(),
            message: e.message,
            retryable: ErrorCode::InternalError
                .in_context(devicerail_host_protocol::errors::Context::Driver)
                .1,
            details: ErrorCode::InternalError.filtered_details(e.details),
        },
        Some(code)
            if code.rpc_code() == ErrorCode::DRIVER_RPC_CODE
                || code == ErrorCode::DeviceNotFound =>
        {
            ErrorInfo {
                code: e.code.into(),
                message: e.message,
                retryable: code.retryable(),
                details: code.filtered_details(e.details),
            }
        }
        _ => ErrorInfo {
            code: ErrorCode::PlatformError.as_str().to_owned(),
            message: e.message,
            retryable: e.retryable,
            details: json!({ "platformCode": devicerail_host_plugin_api::driver::platform_code(&e.code) }),
        },
    }
}

/// The JSON-RPC error for a driver failure (see [`driver_error_info`]).
pub(crate) fn driver_error(e: DriverError) -> RpcError {
    driver_rpc(driver_error_info(e))
}

/// The JSON-RPC error carrying already-mapped driver error data.
pub(crate) fn driver_rpc(info: ErrorInfo) -> RpcError {
    let code = match ErrorCode::from_code(&info.code) {
        Some(ErrorCode::DeviceNotFound) => ErrorCode::DeviceNotFound.rpc_code(),
        _ => ErrorCode::DRIVER_RPC_CODE,
    };
    RpcError {
        code,
        message: info.message.clone(),
        data: info,
    }
}

/// `session_required`.
pub(crate) fn session_required(what: &str) -> RpcError {
    ErrorCode::SessionRequired.rpc(
        format!("{what} needs an active session; call session.start"),
        json!({ "requiredMethod": "session.start" }),
    )
}

/// `feature_not_negotiated` for a control field or capability.
pub(crate) fn feature_not_negotiated(what: &str, feature: Feature) -> RpcError {
    ErrorCode::FeatureNotNegotiated.rpc(
        format!("{what} needs the {feature} feature, which this connection did not negotiate"),
        json!({ "field": what, "requiredFeature": feature.name() }),
    )
}
