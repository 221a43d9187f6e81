//! Running a driver call's future to completion from the calling thread,
//! ending early on cancellation or at the call's deadline. Every blocking
//! entry point of the driver goes through here.

use std::future::Future;
use std::time::Duration;

use devicerail_host_plugin_api::{CallContext, DriverError, DriverResult};

/// How often a blocked call looks at its cancellation flag.
const CANCEL_POLL: Duration = Duration::from_millis(10);

/// Runs `fut` on `runtime` (from a driver call's thread), ending early with
/// a typed error on cancellation or when the call's deadline passes.
pub(crate) fn block_on_call<T>(
    runtime: &tokio::runtime::Runtime,
    ctx: &CallContext,
    fut: impl Future<Output = DriverResult<T>>,
) -> DriverResult<T> {
    ctx.check()?;
    runtime.block_on(async {
        let cancelled = async {
            loop {
                if ctx.is_cancelled() {
                    return DriverError::cancelled();
                }
                tokio::time::sleep(CANCEL_POLL).await;
            }
        };
        let expired = async {
            match ctx.deadline() {
                Some(d) => {
                    tokio::time::sleep_until(d.into()).await;
                    DriverError::deadline_exceeded()
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = fut => r,
            e = cancelled => Err(e),
            e = expired => Err(e),
        }
    })
}
