//! Mapping DevTools failures to the driver's typed errors.

use std::time::Duration;

use devicerail_host_plugin_api::protocol::DeviceId;
use devicerail_host_plugin_api::{CallContext, DriverError};

use crate::cdp::CdpError;

/// Per-request budget when the call has no deadline: a browser that does
/// not answer within it is treated as unavailable.
pub(crate) const UNBOUNDED_REQUEST_BUDGET: Duration = Duration::from_secs(60);

/// The budget of each DevTools request made for `ctx`.
pub(crate) fn budget(ctx: &CallContext) -> Duration {
    ctx.remaining().unwrap_or(UNBOUNDED_REQUEST_BUDGET)
}

/// The typed error for a DevTools failure on `device` during `ctx`.
pub(crate) fn from_cdp(ctx: &CallContext, device: &DeviceId, e: CdpError) -> DriverError {
    if ctx.is_cancelled() {
        return DriverError::cancelled();
    }
    match e {
        CdpError::Timeout { .. } if ctx.is_expired() => DriverError::deadline_exceeded(),
        CdpError::Timeout { method, budget } => DriverError::device_unavailable(
            device,
            format!("the browser did not answer {method} within {budget:?}"),
        ),
        CdpError::Closed(reason) => DriverError::device_unavailable(
            device,
            format!("the browser connection closed: {reason}"),
        ),
        e @ (CdpError::Connect { .. } | CdpError::BadEndpoint { .. }) => {
            DriverError::device_unavailable(device, e.to_string())
        }
        CdpError::Protocol {
            method,
            code,
            message,
        } => DriverError::platform(
            "cdp_error",
            format!("the browser refused {method}: {message} (CDP code {code})"),
            false,
        ),
        e @ CdpError::Decode { .. } => DriverError::failure(e.to_string()),
    }
}
