//! `device.execute`: one Action from `actionStarted` to its terminal
//! `actionCompleted`, which is always recorded — on success, failure,
//! cancellation, timeout and shutdown alike.
//!
//! `timeoutMs` bounds the whole request from acceptance; `actionTimeoutMs`
//! starts once `actionStarted` is durable and bounds only the driver call.
//! The earlier deadline wins. After an interrupt the driver gets a bounded
//! grace period to return before the terminal event is written.

use std::time::Duration;

use devicerail_host_plugin_api::{DriverError, ObserveRequest};
use devicerail_host_protocol::{
    ActionCall, ActionOutcome, ActionResult, AssetRef, ClearElementResult, DeviceExecuteParams,
    ErrorCode, ErrorInfo, Feature, FindElementResult, ObservationId, RecordedActionCall, RpcError,
    SafeU64, SetElementValueResult, TapElementResult, TestEventPayload, UiNodeRef,
    WaitForElementResult,
};
use serde_json::json;
use tokio::time::Instant;

use std::sync::Arc;

use crate::connection::{ActiveSession, SensitiveGuard};
use crate::handlers::request::{
    Accepted, capabilities, failed_call, interrupt_error, require_connected, shot,
};
use crate::handlers::{driver_error_info, driver_rpc, session_required, store_error};
use crate::recorder::{self, Captured, Shot, Tree};
use devicerail_host_engine::device_call::{self, Interrupt};
use devicerail_host_engine::observation::{HostActionOutput, HostObservation};
use devicerail_host_store::event_store::{MAX_EVENT_BYTES, StoreError, now_ms};
use devicerail_host_store::evidence::Blob;

/// Which budget ended an Action.
#[derive(Debug, Clone, Copy)]
enum Budget {
    Request(u64),
    Action(u64),
}

/// How the driver call ended.
enum Terminal {
    Succeeded(HostActionOutput),
    Failed(DriverError),
    TimedOut(Budget),
    Cancelled(Interrupt),
}

/// The recorded (and answered) form of a driver failure. For redacted
/// calls the text is replaced: serde messages may quote argument values,
/// which must never reach events or logs. (Details are already restricted
/// to the catalog's keys, which name actions, devices and codes, never
/// argument values.)
fn sanitized(e: &DriverError, redact: bool) -> ErrorInfo {
    let info = driver_error_info(e.clone());
    if redact {
        ErrorInfo {
            message: format!(
                "{} (the message is withheld for a redacted action)",
                info.code
            ),
            ..info
        }
    } else {
        info
    }
}

/// `device.execute`: admission checks, the durable start, the driver
/// call, and exactly one terminal event.
pub(crate) async fn execute(
    a: &Accepted,
    p: DeviceExecuteParams,
) -> Result<ActionResult, RpcError> {
    let admitted = admit(a, &p).await?;
    let started = start(a, &admitted).await?;
    let terminal = drive(a, &admitted, &started, p.action_timeout_ms.map(|t| t.get())).await;
    finish(a, &admitted, &started, terminal).await
}

/// An Action that passed every check before it starts.
struct Admitted {
    session: Arc<ActiveSession>,
    call: ActionCall,
    /// Protected or unclassified: arguments, screenshots and error text
    /// stay out of the record.
    redact: bool,
    _sensitive: Option<SensitiveGuard>,
}

/// A started Action: `actionStarted` is durable.
struct Started {
    at_ms: SafeU64,
    observation_id: ObservationId,
}

/// The checks, in the reference order: protected feature (after routing),
/// Session, connection, open media streams, interrupts, reused ids.
async fn admit(a: &Accepted, p: &DeviceExecuteParams) -> Result<Admitted, RpcError> {
    let caps = capabilities(a).await?;
    let def = caps.actions.iter().find(|d| d.name == p.name);
    if let Some(d) = def
        && d.is_protected()
        && !a.neg.has(Feature::ActionProtected)
    {
        return Err(ErrorCode::ProtectedActionNotNegotiated.rpc(
            format!(
                "{} is a protected action; negotiate action.protected.v1 to use it",
                d.name
            ),
            json!({ "action": d.name, "requiredFeature": Feature::ActionProtected.name() }),
        ));
    }
    let session = a
        .session
        .clone()
        .ok_or_else(|| session_required("device.execute"))?;
    require_connected(a)?;
    let redact = def.is_none_or(|d| d.is_protected());
    if redact && session.has_open_stream() {
        return Err(ErrorCode::MediaStreamProtectedActionBlocked.rpc(
            "a protected or unclassified action cannot run while a media stream is open; end the stream first",
            serde_json::Value::Null,
        ));
    }
    let sensitive = redact.then(|| session.enter_sensitive());
    let call: ActionCall = p.call();
    if let Some(why) = a.stop.fired() {
        return Err(interrupt_error(why, a.timeout_ms));
    }
    if !session.claim_call_id(call.id) {
        return Err(ErrorCode::DuplicateActionCall.rpc(
            format!("action id {} was already used in this session", call.id),
            json!({ "callId": call.id }),
        ));
    }
    Ok(Admitted {
        session,
        call,
        redact,
        _sensitive: sensitive,
    })
}

/// Appends `actionStarted`. An Action whose recorded form could not be
/// read back in one frame is refused here, before the device acts.
async fn start(a: &Accepted, ad: &Admitted) -> Result<Started, RpcError> {
    let event = a.event(TestEventPayload::ActionStarted {
        call: RecordedActionCall::of(&ad.call, ad.redact),
    });
    let started = match a.host.store.append_one(ad.session.id, event).await {
        Ok(s) => s,
        Err(StoreError::TooLarge { bytes }) => {
            return Err(ErrorCode::InvalidParams.rpc(
                format!(
                    "the action's recorded event would be {bytes} bytes, over the {MAX_EVENT_BYTES}-byte limit of one readable event; send smaller arguments"
                ),
                json!({ "method": "device.execute" }),
            ));
        }
        Err(e) => return Err(store_error(e)),
    };
    if ad.redact {
        tracing::info!(request = %a.id, call = %ad.call.id, "action started (arguments redacted)");
    } else {
        tracing::info!(request = %a.id, call = %ad.call.id, action = %ad.call.name, "action started");
    }
    Ok(Started {
        at_ms: started.event.at_ms,
        observation_id: ObservationId::new_v7(),
    })
}

/// Runs the driver call under the earlier of the request and Action
/// deadlines (the Action clock starts now that `actionStarted` is
/// durable) and classifies how it ended.
async fn drive(
    a: &Accepted,
    ad: &Admitted,
    st: &Started,
    action_timeout_ms: Option<u64>,
) -> Terminal {
    let action_deadline = action_timeout_ms.map(|t| Instant::now() + Duration::from_millis(t));
    let stop = a.stop.tightened(action_deadline);
    let budget = match (
        a.stop.deadline,
        action_deadline,
        a.timeout_ms,
        action_timeout_ms,
    ) {
        (Some(r), Some(x), Some(rm), Some(xm)) => {
            if x < r {
                Budget::Action(xm)
            } else {
                Budget::Request(rm)
            }
        }
        (_, Some(_), _, Some(xm)) => Budget::Action(xm),
        (_, _, rm, _) => Budget::Request(rm.unwrap_or(0)),
    };
    let ctx = stop
        .context()
        .with_observation_id(st.observation_id)
        .with_request_id(a.id.to_string());
    let terminal = match device_call::execute(&a.route, ctx, &stop, ad.call.clone()).await {
        Ok(Ok(out)) => Terminal::Succeeded(out),
        Ok(Err(e)) if e.is_deadline() => Terminal::TimedOut(budget),
        Ok(Err(e)) if e.is_cancellation() => match stop.fired() {
            Some(Interrupt::TimedOut) => Terminal::TimedOut(budget),
            Some(why) => Terminal::Cancelled(why),
            None => Terminal::Failed(e),
        },
        Ok(Err(e)) => Terminal::Failed(e),
        Err(interrupted) => {
            let why = interrupted.why;
            // Bounded cleanup: give the driver a moment to stop.
            let _ = interrupted.settle(a.host.config.cleanup_grace).await;
            match why {
                Interrupt::TimedOut => Terminal::TimedOut(budget),
                other => Terminal::Cancelled(other),
            }
        }
    };
    match terminal {
        Terminal::Succeeded(out) => {
            match check_semantic_output(&ad.call.name, &out, st.observation_id) {
                Ok(()) => Terminal::Succeeded(out),
                Err(e) => Terminal::Failed(e),
            }
        }
        other => other,
    }
}

/// Records the one terminal event and answers. Whatever happens here, the
/// Action ends with a terminal event: when the success cannot be recorded
/// as it is (its Evidence cannot be stored, its event would not fit a
/// frame) a `failed` terminal says why, never retryable since the device
/// acted; when no terminal can be written at all the store closes the
/// Action when its Session ends.
async fn finish(
    a: &Accepted,
    ad: &Admitted,
    st: &Started,
    terminal: Terminal,
) -> Result<ActionResult, RpcError> {
    let call = &ad.call;
    let session = ad.session.id;
    match terminal {
        Terminal::Succeeded(out) => {
            let stored = finish_success(a, call, out, st.observation_id, st.at_ms, ad.redact).await;
            let (result, evidence, blobs) = match stored {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(request = %a.id, call = %call.id, "the action ran but its evidence could not be stored: {}", e.message);
                    let error = ErrorCode::InternalError.rpc(
                        "the action ran, but its evidence could not be stored",
                        json!({ "cause": "evidenceNotStored" }),
                    );
                    return failed(a, session, call.id, error).await;
                }
            };
            let mut event = a.event(TestEventPayload::ActionCompleted {
                call_id: call.id,
                outcome: ActionOutcome::Succeeded {
                    result: result.clone(),
                },
            });
            event.evidence = evidence;
            event.blobs = blobs;
            match a.host.store.append_one(session, event).await {
                Ok(_) => {}
                Err(StoreError::TooLarge { bytes }) => {
                    let error = ErrorCode::ResponseFrameTooLarge.rpc(
                        format!(
                            "the action ran, but its result ({bytes} bytes) cannot be recorded or sent in one frame"
                        ),
                        json!({ "actualBytes": bytes, "limitBytes": MAX_EVENT_BYTES }),
                    );
                    return failed(a, session, call.id, error).await;
                }
                Err(e) => return Err(terminal_not_recorded(a, call.id, e)),
            }
            tracing::info!(request = %a.id, call = %call.id, "action succeeded");
            Ok(result)
        }
        Terminal::Failed(e) => {
            let info = sanitized(&e, ad.redact);
            record(
                a,
                session,
                call.id,
                ActionOutcome::Failed {
                    error: info.clone(),
                },
            )
            .await?;
            tracing::info!(request = %a.id, call = %call.id, code = %info.code, "action failed");
            if ad.redact {
                Err(driver_rpc(info))
            } else {
                Err(failed_call(a, e))
            }
        }
        Terminal::TimedOut(budget) => {
            let (ms, which, scope, code) = match budget {
                Budget::Request(ms) => (ms, "timeoutMs", "request", ErrorCode::RequestTimedOut),
                Budget::Action(ms) => (ms, "actionTimeoutMs", "action", ErrorCode::ActionTimedOut),
            };
            let error = ErrorCode::ActionTimeout
                .info(format!("the action exceeded its {ms} ms {which} deadline"))
                .with_details(json!({ "callId": call.id, "scope": scope, "timeoutMs": ms }));
            record(
                a,
                session,
                call.id,
                ActionOutcome::TimedOut {
                    error,
                    timeout_ms: SafeU64::saturating(ms),
                },
            )
            .await?;
            tracing::info!(request = %a.id, call = %call.id, budget = which, "action timed out");
            Err(code.rpc(
                format!("the action exceeded its {ms} ms {which} budget"),
                json!({ "scope": scope, "timeoutMs": ms }),
            ))
        }
        Terminal::Cancelled(why) => {
            let (message, reason) = if why == Interrupt::Shutdown {
                (
                    "the host shut down while the action was running",
                    "shutdown",
                )
            } else {
                ("the caller cancelled the action", "requested")
            };
            let error = ErrorCode::ActionCancelled
                .info(message)
                .with_details(json!({ "callId": call.id, "reason": reason }));
            record(a, session, call.id, ActionOutcome::Cancelled { error }).await?;
            tracing::info!(request = %a.id, call = %call.id, "action cancelled");
            Err(interrupt_error(why, a.timeout_ms))
        }
    }
}

/// Records `failed` with `error` (the Action ran; nothing is retryable)
/// and answers with it.
async fn failed(
    a: &Accepted,
    session: devicerail_host_protocol::SessionId,
    call_id: devicerail_host_protocol::CallId,
    error: RpcError,
) -> Result<ActionResult, RpcError> {
    record(
        a,
        session,
        call_id,
        ActionOutcome::Failed {
            error: error.data.clone(),
        },
    )
    .await?;
    Err(error)
}

/// The answer when not even the terminal event could be written: the same
/// store failure every other write answers (a full disk is one condition
/// with one code, whatever was being written), with `cause:
/// terminalNotRecorded` in its details, because the Action ran (or may
/// have) before the write failed. The store closes the Action when its
/// Session ends.
fn terminal_not_recorded(
    a: &Accepted,
    call_id: devicerail_host_protocol::CallId,
    e: StoreError,
) -> RpcError {
    tracing::error!(request = %a.id, call = %call_id, "could not record the terminal event: {e}");
    terminal_store_error(e)
}

/// The wire error of a terminal event the store could not write.
fn terminal_store_error(e: StoreError) -> RpcError {
    let mut error = crate::wire_errors::store_error(e);
    if error.data.code == ErrorCode::EventStoreError.as_str() {
        error.data.message = format!(
            "the action's outcome could not be recorded: {}",
            error.data.message
        );
        error.data.details = json!({ "cause": "terminalNotRecorded" });
    }
    error
}

async fn record(
    a: &Accepted,
    session: devicerail_host_protocol::SessionId,
    call_id: devicerail_host_protocol::CallId,
    outcome: ActionOutcome,
) -> Result<(), RpcError> {
    let event = a.event(TestEventPayload::ActionCompleted { call_id, outcome });
    a.host
        .store
        .append_one(session, event)
        .await
        .map(|_| ())
        .map_err(|e| terminal_not_recorded(a, call_id, e))
}

/// Checks a semantic Action's output against its canonical result type:
/// node references must point at the resolved observation.
fn check_semantic_output(
    name: &str,
    out: &HostActionOutput,
    observation: ObservationId,
) -> Result<(), DriverError> {
    let violation = |msg: String| DriverError::new(ErrorCode::ProtocolError, msg);
    let element: Option<UiNodeRef> = match name {
        "findElement" => {
            serde_json::from_value::<FindElementResult>(out.output.clone()).map(|r| Some(r.element))
        }
        "tapElement" => {
            serde_json::from_value::<TapElementResult>(out.output.clone()).map(|r| Some(r.element))
        }
        "clearElement" => serde_json::from_value::<ClearElementResult>(out.output.clone())
            .map(|r| Some(r.element)),
        "setElementValue" => serde_json::from_value::<SetElementValueResult>(out.output.clone())
            .map(|r| Some(r.element)),
        "waitForElement" => {
            serde_json::from_value::<WaitForElementResult>(out.output.clone()).map(|r| r.element)
        }
        _ => return Ok(()),
    }
    .map_err(|e| violation(format!("{name} output does not match its result type: {e}")))?;
    if let Some(el) = element {
        if el.observation_id != observation {
            return Err(violation(format!(
                "{name} output references observation {}, not the resolved one",
                el.observation_id
            )));
        }
        if !out.resolved.as_ref().is_some_and(HostObservation::has_ui) {
            return Err(violation(format!(
                "{name} returned a node reference without the UI tree it resolved against"
            )));
        }
    }
    if out.execution.is_none() {
        return Err(violation(format!(
            "{name} did not report how it was executed"
        )));
    }
    Ok(())
}

/// The result, the Evidence it makes reachable, and the bytes to store with
/// its terminal event.
type Success = (ActionResult, Vec<AssetRef>, Vec<Blob>);

async fn finish_success(
    a: &Accepted,
    call: &ActionCall,
    out: HostActionOutput,
    observation_id: ObservationId,
    started_at_ms: SafeU64,
    redact: bool,
) -> Result<Success, RpcError> {
    let HostActionOutput {
        output,
        execution,
        resolved,
    } = out;
    let mut evidence = Vec::new();
    let mut links = Vec::new();
    let mut blobs = Vec::new();
    let before = match resolved {
        Some(obs) => {
            let shot = match (&obs.png, redact) {
                (Some(_), false) => Shot::Wanted,
                (Some(_), true) => Shot::Omitted(
                    devicerail_host_protocol::ScreenshotOmissionReason::ProtectedAction,
                ),
                (None, _) => Shot::NotRequested,
            };
            let tree = if obs.has_ui() {
                Tree::Wanted
            } else {
                Tree::NotRequested
            };
            let Captured { observation, evidence: assets, blobs: bytes } =
                recorder::capture(&a.host, observation_id, &a.route.device, obs, shot, tree).await.inspect_err(|e| {
                    tracing::warn!(request = %a.id, "could not store the resolved observation: {}", e.message);
                })?;
            if let Some(s) = &observation.screenshot {
                evidence.push(s.clone());
            }
            links.extend(assets);
            blobs.extend(bytes);
            Some(observation)
        }
        None => None,
    };
    let after = after_observation(a, redact).await.map(|c| {
        if let Some(s) = &c.observation.screenshot {
            evidence.push(s.clone());
        }
        links.extend(c.evidence);
        blobs.extend(c.blobs);
        c.observation
    });
    let result = ActionResult {
        call_id: call.id,
        started_at_ms,
        finished_at_ms: now_ms(),
        output,
        before,
        after,
        evidence,
        execution,
    };
    Ok((result, links, blobs))
}

/// Observes the device after a successful Action: the screenshot per
/// policy and, when the connection negotiated UI snapshots and the host's
/// `afterActionTree` is on, the UI tree, so the Action's record holds what
/// it changed; both are omitted for redacted Actions. Failure only leaves
/// `after` empty.
async fn after_observation(a: &Accepted, redact: bool) -> Option<Captured> {
    let shot = shot(&a.host, redact);
    let tree = if redact {
        Tree::Omitted(devicerail_host_protocol::UiSnapshotOmissionReason::ProtectedAction)
    } else if a.host.config.after_action_tree
        && a.neg.has(Feature::ObservationUiSnapshot)
        && capabilities(a).await.is_ok_and(|c| c.ui_tree)
    {
        Tree::Wanted
    } else {
        Tree::NotRequested
    };
    let request = ObserveRequest {
        screenshot: shot == Shot::Wanted,
        ui_tree: tree == Tree::Wanted,
        live: None,
    };
    let stop = match a.stop.deadline {
        Some(_) => a.stop.clone(),
        None => a
            .stop
            .tightened(Some(Instant::now() + a.host.config.internal_call_timeout)),
    };
    let observation_id = ObservationId::new_v7();
    let ctx = stop
        .context()
        .with_observation_id(observation_id)
        .with_request_id(a.id.to_string());
    let obs = match device_call::observe(&a.route, ctx, &stop, request).await {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            tracing::warn!(request = %a.id, "after-action observation failed: {e}");
            return None;
        }
        Err(_) => {
            tracing::warn!(request = %a.id, "after-action observation was interrupted");
            return None;
        }
    };
    match recorder::capture(&a.host, observation_id, &a.route.device, obs, shot, tree).await {
        Ok(c) => Some(c),
        Err(e) => {
            tracing::warn!(request = %a.id, "could not store the after-action observation: {}", e.message);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unrecorded_terminal_is_the_store_error_with_its_cause() {
        for e in [
            StoreError::CannotWrite("No space left on device".into()),
            StoreError::Storage("disk I/O error".into()),
            StoreError::ReadOnly("serving read-only".into()),
        ] {
            let error = terminal_store_error(e);
            assert_eq!(error.data.code, "event_store_error");
            assert_eq!(error.code, -32006);
            assert!(error.data.retryable);
            assert_eq!(
                error.data.details,
                json!({ "cause": "terminalNotRecorded" })
            );
        }
        // A shut-down store keeps its own code.
        let error = terminal_store_error(StoreError::Closed);
        assert_eq!(error.data.code, "event_store_shutting_down");
    }
}
