//! `device.execute`: one Action from `actionStarted` to its terminal
//! `actionCompleted`, which is always recorded — on success, failure,
//! cancellation, timeout and shutdown alike.
//!
//! `timeoutMs` bounds the whole request from acceptance; `actionTimeoutMs`
//! starts once `actionStarted` is durable and bounds only the driver call.
//! The earlier deadline wins. After an interrupt the driver gets a bounded
//! grace period to return before the terminal event is written.

use std::time::Duration;

use devicerail_plugin_api::{ActionOutput, DriverError, ObserveRequest};
use devicerail_protocol::{
    ActionCall, ActionOutcome, ActionResult, AssetRef, ClearElementResult, DeviceExecuteParams,
    ErrorCode, ErrorInfo, Feature, FindElementResult, Observation, ObservationId,
    RecordedActionCall, RpcError, SafeU64, SetElementValueResult, TapElementResult,
    TestEventPayload, UiNodeRef, WaitForElementResult,
};
use serde_json::json;
use tokio::time::Instant;

use crate::device_call::{self, Interrupt};
use crate::event_store::now_ms;
use crate::handlers::device::{
    Accepted, capabilities, failed_call, interrupt_error, require_connected, shot,
};
use crate::handlers::{driver_error_info, driver_rpc, session_required, store_error};
use crate::recorder::{self, Captured, Shot, Tree};

/// Which budget ended an Action.
#[derive(Debug, Clone, Copy)]
enum Budget {
    Request(u64),
    Action(u64),
}

/// How the driver call ended.
enum Terminal {
    Succeeded(ActionOutput),
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

pub async fn execute(a: &Accepted, p: DeviceExecuteParams) -> Result<ActionResult, RpcError> {
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
    let _sensitive = redact.then(|| session.enter_sensitive());
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
    let started = a
        .host
        .store
        .append_one(
            session.id,
            a.event(TestEventPayload::ActionStarted {
                call: RecordedActionCall::of(&call, redact),
            }),
        )
        .await
        .map_err(store_error)?;
    let started_at_ms = started.event.at_ms;
    if redact {
        tracing::info!(request = %a.id, call = %call.id, "action started (arguments redacted)");
    } else {
        tracing::info!(request = %a.id, call = %call.id, action = %call.name, "action started");
    }

    // The Action deadline starts now that actionStarted is durable.
    let action_deadline = p
        .action_timeout_ms
        .map(|t| Instant::now() + Duration::from_millis(t.get()));
    let stop = a.stop.tightened(action_deadline);
    let budget = match (
        a.stop.deadline,
        action_deadline,
        a.timeout_ms,
        p.action_timeout_ms,
    ) {
        (Some(r), Some(x), Some(rm), Some(xm)) => {
            if x < r {
                Budget::Action(xm.get())
            } else {
                Budget::Request(rm)
            }
        }
        (_, Some(_), _, Some(xm)) => Budget::Action(xm.get()),
        (_, _, rm, _) => Budget::Request(rm.unwrap_or(0)),
    };
    let observation_id = ObservationId::new_v7();
    let ctx = stop
        .context()
        .with_observation_id(observation_id)
        .with_request_id(a.id.to_string());
    let device = a.route.device.clone();
    let driver_call = call.clone();
    let terminal = match device_call::run(&a.route, ctx, &stop, move |d, ctx| {
        d.execute(ctx, &device, &driver_call)
    })
    .await
    {
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
    let terminal = match terminal {
        Terminal::Succeeded(out) => match check_semantic_output(&call.name, &out, observation_id) {
            Ok(()) => Terminal::Succeeded(out),
            Err(e) => Terminal::Failed(e),
        },
        other => other,
    };

    match terminal {
        Terminal::Succeeded(out) => {
            let (result, evidence) =
                finish_success(a, &call, out, observation_id, started_at_ms, redact).await?;
            let mut event = a.event(TestEventPayload::ActionCompleted {
                call_id: call.id,
                outcome: ActionOutcome::Succeeded {
                    result: result.clone(),
                },
            });
            event.evidence = evidence;
            a.host
                .store
                .append_one(session.id, event)
                .await
                .map_err(store_error)?;
            tracing::info!(request = %a.id, call = %call.id, "action succeeded");
            Ok(result)
        }
        Terminal::Failed(e) => {
            let info = sanitized(&e, redact);
            record(
                a,
                session.id,
                call.id,
                ActionOutcome::Failed {
                    error: info.clone(),
                },
            )
            .await?;
            tracing::info!(request = %a.id, call = %call.id, code = %info.code, "action failed");
            if redact {
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
                session.id,
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
            let message = if why == Interrupt::Shutdown {
                "the host shut down while the action was running"
            } else {
                "the caller cancelled the action"
            };
            let reason = if why == Interrupt::Shutdown {
                "shutdown"
            } else {
                "requested"
            };
            let error = ErrorCode::ActionCancelled
                .info(message)
                .with_details(json!({ "callId": call.id, "reason": reason }));
            record(a, session.id, call.id, ActionOutcome::Cancelled { error }).await?;
            tracing::info!(request = %a.id, call = %call.id, "action cancelled");
            Err(interrupt_error(why, a.timeout_ms))
        }
    }
}

async fn record(
    a: &Accepted,
    session: devicerail_protocol::SessionId,
    call_id: devicerail_protocol::CallId,
    outcome: ActionOutcome,
) -> Result<(), RpcError> {
    let event = a.event(TestEventPayload::ActionCompleted { call_id, outcome });
    match a.host.store.append_one(session, event).await {
        Ok(_) => Ok(()),
        Err(e) => {
            tracing::error!(request = %a.id, call = %call_id, "could not record the terminal event: {e}");
            Err(store_error(e))
        }
    }
}

/// Checks a semantic Action's output against its canonical result type:
/// node references must point at the resolved observation.
fn check_semantic_output(
    name: &str,
    out: &ActionOutput,
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
        if out
            .resolved
            .as_ref()
            .and_then(|o| o.ui_tree.as_ref())
            .is_none()
        {
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

type Success = (ActionResult, Vec<AssetRef>);

async fn finish_success(
    a: &Accepted,
    call: &ActionCall,
    out: ActionOutput,
    observation_id: ObservationId,
    started_at_ms: SafeU64,
    redact: bool,
) -> Result<Success, RpcError> {
    let ActionOutput {
        output,
        execution,
        resolved,
    } = out;
    let mut evidence = Vec::new();
    let mut links = Vec::new();
    let before = match resolved {
        Some(obs) => {
            let shot = match (&obs.png, redact) {
                (Some(_), false) => Shot::Wanted,
                (Some(_), true) => {
                    Shot::Omitted(devicerail_protocol::ScreenshotOmissionReason::ProtectedAction)
                }
                (None, _) => Shot::NotRequested,
            };
            let tree = if obs.ui_tree.is_some() {
                Tree::Wanted
            } else {
                Tree::NotRequested
            };
            let Captured { observation, evidence: assets } =
                recorder::capture(&a.host, observation_id, &a.route.device, obs, shot, tree).await.inspect_err(|e| {
                    tracing::warn!(request = %a.id, "could not store the resolved observation: {}", e.message);
                })?;
            if let Some(s) = &observation.screenshot {
                evidence.push(s.clone());
            }
            links.extend(assets);
            Some(observation)
        }
        None => None,
    };
    let after = after_observation(a, redact).await;
    if let Some((obs, assets)) = &after {
        if let Some(s) = &obs.screenshot {
            evidence.push(s.clone());
        }
        links.extend(assets.iter().cloned());
    }
    let result = ActionResult {
        call_id: call.id,
        started_at_ms,
        finished_at_ms: now_ms(),
        output,
        before,
        after: after.map(|(o, _)| o),
        evidence,
        execution,
    };
    Ok((result, links))
}

/// Observes the device after a successful Action (screenshot per policy,
/// omitted for redacted Actions). Failure only leaves `after` empty.
async fn after_observation(a: &Accepted, redact: bool) -> Option<(Observation, Vec<AssetRef>)> {
    let shot = shot(&a.host, redact);
    let request = ObserveRequest {
        screenshot: shot == Shot::Wanted,
        ui_tree: false,
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
    let device = a.route.device.clone();
    let obs = match device_call::run(&a.route, ctx, &stop, move |d, ctx| {
        d.observe(ctx, &device, &request)
    })
    .await
    {
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
    let tree = if redact {
        Tree::Omitted(devicerail_protocol::UiSnapshotOmissionReason::ProtectedAction)
    } else {
        Tree::NotRequested
    };
    match recorder::capture(&a.host, observation_id, &a.route.device, obs, shot, tree).await {
        Ok(c) => Some((c.observation, c.evidence)),
        Err(e) => {
            tracing::warn!(request = %a.id, "could not store the after-action observation: {}", e.message);
            None
        }
    }
}
