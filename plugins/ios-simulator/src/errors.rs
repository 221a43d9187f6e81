//! Maps simctl and WebDriverAgent failures onto typed DeviceRail errors.

use devicerail_host_plugin_api::protocol::{DeviceId, ErrorCode};
use devicerail_host_plugin_api::{CallContext, DriverError};
use serde_json::json;

use crate::process::ProcessError;
use crate::simctl::SimctlError;
use crate::wda::WdaError;

/// Whether an error must be returned as is (cancellation, deadline).
pub(crate) fn is_terminal(e: &DriverError) -> bool {
    e.is_cancellation() || e.is_deadline()
}

/// The error of a call whose time ran out: the call's deadline when it has
/// passed, otherwise `fallback`.
fn timed_out(ctx: &CallContext, fallback: DriverError) -> DriverError {
    if ctx.is_cancelled() {
        DriverError::cancelled()
    } else if ctx.is_expired() {
        DriverError::deadline_exceeded()
    } else {
        fallback
    }
}

/// A WebDriverAgent failure during an operation on `device`.
pub(crate) fn wda(ctx: &CallContext, device: &DeviceId, e: WdaError) -> DriverError {
    let reason = e.to_string();
    match e {
        WdaError::Cancelled => DriverError::cancelled(),
        WdaError::DeadlinePassed => DriverError::deadline_exceeded(),
        WdaError::TimedOut { .. } => {
            timed_out(ctx, DriverError::device_unavailable(device, reason))
        }
        WdaError::Unreachable { .. } => DriverError::device_unavailable(device, reason),
        WdaError::BadResponse { .. } => DriverError::failure(reason),
        WdaError::Refused {
            path,
            status,
            error,
            message,
        } => {
            let details = json!({ "path": path, "httpStatus": status, "wdaError": error, "wdaMessage": message });
            let code = match error.as_str() {
                "no such element" => ErrorCode::ElementNotFound,
                "stale element reference" => ErrorCode::ElementStale,
                "element not interactable" | "element click intercepted" => {
                    ErrorCode::ElementNotInteractable
                }
                "invalid session id" => {
                    return DriverError::device_unavailable(
                        device,
                        "the WebDriverAgent session ended and could not be renewed",
                    )
                    .with_details(details);
                }
                _ => {
                    return DriverError::platform("wda_refused", reason, false)
                        .with_details(details);
                }
            };
            DriverError::new(code, reason).with_details(details)
        }
    }
}

/// A WebDriverAgent failure while typing a secret: same codes, but WDA's
/// own message (which could echo input) is dropped.
pub(crate) fn wda_secret(ctx: &CallContext, device: &DeviceId, e: WdaError) -> DriverError {
    match e {
        WdaError::Refused {
            path,
            status,
            error,
            ..
        } => {
            let mut out = wda(
                ctx,
                device,
                WdaError::Refused {
                    path,
                    status,
                    error,
                    message: "(withheld for protected input)".into(),
                },
            );
            out.message = format!("WebDriverAgent refused the protected input ({})", out.code);
            out
        }
        other => wda(ctx, device, other),
    }
}

/// A simctl failure during an operation on `device` (`None`: not about
/// one device, e.g. listing).
pub(crate) fn simctl(ctx: &CallContext, device: Option<&DeviceId>, e: SimctlError) -> DriverError {
    let reason = e.to_string();
    match e {
        SimctlError::Process(ProcessError::Cancelled { .. }) => DriverError::cancelled(),
        SimctlError::Process(ProcessError::TimedOut { .. }) => {
            let fallback = match device {
                Some(d) => DriverError::device_unavailable(d, reason),
                None => DriverError::failure(reason),
            };
            timed_out(ctx, fallback)
        }
        SimctlError::Process(ProcessError::NotFound { .. }) => DriverError::failure(format!(
            "{reason}: the iOS Simulator driver needs Xcode's xcrun (macOS), or DEVICERAIL_XCRUN"
        ))
        .with_details(json!({ "cause": "xcrun_not_found" })),
        SimctlError::Process(_) | SimctlError::BadOutput { .. } => DriverError::failure(reason),
        SimctlError::Failed { .. } => DriverError::action_failed(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes() {
        let ctx = CallContext::unbounded();
        let d = DeviceId::new("U");
        let refused = |error: &str| WdaError::Refused {
            path: "/x".into(),
            status: 404,
            error: error.into(),
            message: "m".into(),
        };
        assert_eq!(
            wda(&ctx, &d, refused("no such element")).code,
            "element_not_found"
        );
        assert_eq!(
            wda(&ctx, &d, refused("stale element reference")).code,
            "element_stale"
        );
        assert_eq!(
            wda(&ctx, &d, refused("unknown error")).code,
            "platform_error"
        );
        assert_eq!(
            wda(
                &ctx,
                &d,
                WdaError::Unreachable {
                    url: "u".into(),
                    reason: "refused".into()
                }
            )
            .code,
            "device_unavailable"
        );
        let secret = wda_secret(&ctx, &d, refused("invalid element state"));
        assert!(!secret.details.to_string().contains("\"m\""));
        assert_eq!(
            secret.details["wdaMessage"],
            "(withheld for protected input)"
        );
    }
}
