//! The streaming planes: `events.stream.open`, `events.subscribe`,
//! `media.stream.start`/`capture`/`end`. Their features are not offered
//! until these are served, so the method table keeps them unreachable.

use devicerail_protocol::{MediaStreamCaptureParams, MediaStreamCaptureResult, RpcError};

use crate::dispatch::Call;
use crate::handlers::device::Accepted;

fn not_served(method: &str) -> RpcError {
    devicerail_protocol::MethodSpec::not_found_error(
        method,
        &devicerail_protocol::Availability::Unknown,
    )
}

pub async fn handle(call: &mut Call) -> Result<serde_json::Value, RpcError> {
    Err(not_served(call.spec.name))
}

pub async fn capture(
    _a: &Accepted,
    _p: MediaStreamCaptureParams,
) -> Result<MediaStreamCaptureResult, RpcError> {
    Err(not_served("media.stream.capture"))
}
