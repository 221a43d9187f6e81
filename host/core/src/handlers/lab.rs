//! The host's device-lab extension (`devicerailHost.lab.v1`, see
//! `devicerail_host_protocol::lab`): what a lab console shows, read without
//! taking anything. Every device with its plugin, health and holder; a
//! device's live screen; any Session's events as they are committed.
//!
//! Live frames are never recorded and never take a lease: they are a view.
//! A driver that keeps a stream of its screen answers from it (the
//! browser's screencast); for any other driver the host takes a screenshot
//! and numbers it only when its digest differs from the last one, so a
//! viewer is sent a frame only when the screen changed.
//!
//! It must never expose a reservation's token (only its label) nor
//! re-encode a protected argument (events are sent as recorded).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use devicerail_host_engine::device_call::{self, Stop};
use devicerail_host_plugin_api::{CallContext, LiveFrame, LiveRequest, ObserveRequest};
use devicerail_host_protocol::lab::{
    LAB_EVENTS, LAB_EVENTS_MAX, LAB_FRAME, LAB_WAIT_MAX_MS, LabDevice, LabEventsParams,
    LabEventsResult, LabFrame, LabFrameParams, LabFrameResult, LabLease, LabReservation,
    LabStatusResult, WorkerHealth,
};
use devicerail_host_protocol::methods::invalid_params;
use devicerail_host_protocol::{
    DeviceId, ErrorCode, RpcError, RpcParams, SafeU64, SessionState, TestEvent,
};
use serde::de::DeserializeOwned;
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::state::Host;
use crate::wire_errors::{driver_error, store_error};

/// `lab.status` refreshes the device list first when it is older than this.
const STATUS_MAX_AGE: Duration = Duration::from_millis(1000);
/// How long `lab.status` waits for a plugin that lists slowly.
const STATUS_REFRESH_WAIT: Duration = Duration::from_millis(500);
/// The longest one live look at a device may take.
const LOOK_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a driver that streams its screen is asked for a newer frame
/// while a viewer waits (a cheap call: the frame is already in memory).
const STREAM_POLL: Duration = Duration::from_millis(10);
/// How often the host takes a screenshot of a driver without a stream
/// while a viewer waits (the mock: ≥ 10 frames a second when it changes).
const SHOT_POLL: Duration = Duration::from_millis(50);

/// The newest frame the host numbered for a device whose driver has no
/// stream of its own.
#[derive(Default)]
struct Numbered {
    digest: [u8; 32],
    seq: u64,
}

/// Per-device frame numbers of drivers without a stream, shared by every
/// viewer so that one number means one picture; and what each plugin's
/// `doctor` said when one of its devices could not be used.
#[derive(Default)]
pub(crate) struct LiveScreens {
    numbered: Mutex<HashMap<DeviceId, Numbered>>,
    doctors: std::sync::Arc<Mutex<HashMap<String, Doctor>>>,
}

/// A plugin's `doctor` findings (its failed and warned checks).
#[derive(Clone)]
struct Doctor {
    asked: Instant,
    findings: Vec<String>,
}

/// How long a plugin's `doctor` findings are shown before it is asked again.
const DOCTOR_FRESH: Duration = Duration::from_secs(30);

impl LiveScreens {
    /// The number of `png` on `device`: the last one if the picture is the
    /// same, else the next.
    fn number(&self, device: &DeviceId, png: &[u8]) -> u64 {
        let digest: [u8; 32] = Sha256::digest(png).into();
        let mut map = self.numbered.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(device.clone()).or_default();
        if n.seq == 0 || n.digest != digest {
            n.digest = digest;
            n.seq += 1;
        }
        n.seq
    }
}

impl LiveScreens {
    /// What `plugin`'s doctor last said, asking it again (in the
    /// background: a listing never waits for it) when that is old.
    fn doctor(&self, host: &Host, plugin: &str, device: &DeviceId) -> Vec<String> {
        let mut map = self.doctors.lock().unwrap_or_else(|p| p.into_inner());
        let stale = map
            .get(plugin)
            .is_none_or(|d| d.asked.elapsed() > DOCTOR_FRESH);
        if stale && let Some(route) = host.registry.route(device) {
            let previous = map
                .get(plugin)
                .map(|d| d.findings.clone())
                .unwrap_or_default();
            map.insert(
                plugin.to_owned(),
                Doctor {
                    asked: Instant::now(),
                    findings: previous,
                },
            );
            let doctors = self.doctors.clone();
            let plugin = plugin.to_owned();
            let driver = route.driver.clone();
            if let Err(e) = route.executor.submit(move || {
                let findings: Vec<String> = driver
                    .doctor()
                    .into_iter()
                    .filter(|c| {
                        matches!(
                            c.status,
                            devicerail_host_plugin_api::CheckStatus::Fail
                                | devicerail_host_plugin_api::CheckStatus::Warn
                        )
                    })
                    .map(|c| format!("{}: {}", c.name, c.detail))
                    .collect();
                doctors.lock().unwrap_or_else(|p| p.into_inner()).insert(
                    plugin,
                    Doctor {
                        asked: Instant::now(),
                        findings,
                    },
                );
            }) {
                tracing::debug!("the lab cannot ask a plugin's doctor: {e}");
            }
        }
        map.get(plugin)
            .map(|d| d.findings.clone())
            .unwrap_or_default()
    }
}

fn safe(ms: u64) -> SafeU64 {
    SafeU64::new(ms).unwrap_or(SafeU64::MIN)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Decodes an object of params (or none, for methods without any).
fn decode<P: DeserializeOwned>(method: &str, params: Option<RpcParams>) -> Result<P, RpcError> {
    let value = match params {
        Some(RpcParams::Object(map)) => serde_json::Value::Object(map),
        None => json!({}),
        Some(_) => return Err(invalid_params(method, "params must be an object")),
    };
    serde_json::from_value(value).map_err(|e| invalid_params(method, e.to_string()))
}

fn unknown_device(device: &DeviceId) -> RpcError {
    ErrorCode::DeviceNotFound.rpc(
        format!("no registered device {device}"),
        json!({ "deviceId": device }),
    )
}

/// `devicerailHost.lab.status`.
pub(crate) async fn status(host: &Host) -> LabStatusResult {
    if host.registry.age() > STATUS_MAX_AGE {
        host.registry.refresh_within(STATUS_REFRESH_WAIT).await;
    }
    let devices = host
        .registry
        .devices()
        .into_iter()
        .map(|device| {
            let (health, reason) = host
                .registry
                .health(&device.id)
                .unwrap_or((WorkerHealth::Up, None));
            let plugin = host
                .registry
                .route(&device.id)
                .map(|r| r.plugin)
                .unwrap_or_default();
            let (lease, reservation) = host.leases.status(&device.id);
            let doctor = if health == WorkerHealth::Up {
                Vec::new()
            } else {
                host.live_screens.doctor(host, &plugin, &device.id)
            };
            LabDevice {
                plugin,
                health,
                reason: reason.map(str::to_owned),
                lease: lease.map(|l| LabLease {
                    client: l.client,
                    since_ms: safe(l.since_ms),
                    by_reservation: l.by_reservation,
                }),
                reservation: reservation.map(|r| LabReservation {
                    label: r.label,
                    since_ms: safe(r.since_ms),
                }),
                doctor,
                device,
            }
        })
        .collect();
    LabStatusResult { devices }
}

/// One live look at `device`: the driver's own frame when it streams its
/// screen, else a screenshot numbered by [`LiveScreens`].
async fn look(host: &Host, device: &DeviceId, after: u64) -> Result<LabFrameResult, RpcError> {
    let route = host
        .registry
        .route(device)
        .ok_or_else(|| unknown_device(device))?;
    if !host.is_connected(device) {
        return Err(ErrorCode::DeviceNotConnected.rpc(
            format!("device {device} is not connected: nobody is using it, so there is no screen to show"),
            json!({ "deviceId": device }),
        ));
    }
    let stop = Stop {
        deadline: Some(tokio::time::Instant::now() + LOOK_TIMEOUT),
        cancel: CancellationToken::new(),
        shutdown: host.shutdown.clone(),
    };
    let ctx = CallContext::new(Some(Instant::now() + LOOK_TIMEOUT));
    let request = ObserveRequest {
        screenshot: true,
        ui_tree: false,
        live: Some(LiveRequest { after }),
    };
    let obs = match device_call::observe(&route, ctx, &stop, request).await {
        Ok(Ok(obs)) => obs,
        Ok(Err(e)) => return Err(driver_error(e)),
        Err(_) => {
            return Err(ErrorCode::DriverTimedOut.rpc(
                format!("device {device} did not show its screen within {LOOK_TIMEOUT:?}"),
                json!({ "deviceId": device }),
            ));
        }
    };
    let (width, height) = (obs.viewport.width, obs.viewport.height);
    let engine = base64::engine::general_purpose::STANDARD;
    let live = devicerail_host_plugin_api::DriverObservation {
        viewport: obs.viewport,
        png: None,
        ui_tree: None,
        metadata: obs.metadata,
    };
    match (LiveFrame::of(&live), obs.png) {
        (Some(f), Some(bytes)) if f.seq > after => Ok(LabFrameResult {
            seq: f.seq,
            frame: Some(LabFrame {
                media_type: f.media_type,
                width,
                height,
                captured_at_ms: f.captured_at_ms,
                data: engine.encode(bytes),
            }),
        }),
        (Some(f), _) => Ok(LabFrameResult {
            seq: f.seq,
            frame: None,
        }),
        (None, Some(png)) => {
            let seq = host.live_screens.number(device, &png);
            Ok(LabFrameResult {
                seq,
                frame: (seq > after).then(|| LabFrame {
                    media_type: "image/png".into(),
                    width,
                    height,
                    captured_at_ms: now_ms(),
                    data: engine.encode(&png),
                }),
            })
        }
        (None, None) => Err(ErrorCode::DeviceUnavailable.rpc(
            format!("device {device} answered without a picture of its screen"),
            json!({ "deviceId": device }),
        )),
    }
}

/// `devicerailHost.lab.frame`.
pub(crate) async fn frame(
    host: &Host,
    params: Option<RpcParams>,
) -> Result<LabFrameResult, RpcError> {
    let p: LabFrameParams = decode(LAB_FRAME, params)?;
    let wait = Duration::from_millis(u64::from(p.wait_ms.min(LAB_WAIT_MAX_MS)));
    let until = Instant::now() + wait;
    loop {
        let r = look(host, &p.device_id, p.after_seq).await?;
        if r.frame.is_some() || Instant::now() >= until {
            return Ok(r);
        }
        let pause = if host.live_screens.has(&p.device_id) {
            SHOT_POLL
        } else {
            STREAM_POLL
        };
        tokio::select! {
            () = tokio::time::sleep(pause.min(until.saturating_duration_since(Instant::now()))) => {}
            () = host.shutdown.cancelled() => return Ok(r),
        }
    }
}

impl LiveScreens {
    /// Whether the host numbers `device`'s screenshots itself.
    fn has(&self, device: &DeviceId) -> bool {
        self.numbered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(device)
    }
}

/// `devicerailHost.lab.events`.
pub(crate) async fn events(
    host: &Host,
    params: Option<RpcParams>,
) -> Result<LabEventsResult, RpcError> {
    let p: LabEventsParams = decode(LAB_EVENTS, params)?;
    let limit = p.limit.unwrap_or(LAB_EVENTS_MAX).clamp(1, LAB_EVENTS_MAX);
    let wait = Duration::from_millis(u64::from(p.wait_ms.min(LAB_WAIT_MAX_MS)));
    let session = p.session_id;
    let not_found = || {
        ErrorCode::SessionNotFound.rpc(
            format!("no session {session}"),
            json!({ "sessionId": session }),
        )
    };
    let mut changes = host.store.watch(session, p.after_sequence);
    let until = tokio::time::Instant::now() + wait;
    loop {
        // Read before the events: a Session that ends in between is seen
        // as ended by the next call, never an event too early.
        let active = host
            .store
            .session(session)
            .await
            .map_err(store_error)?
            .ok_or_else(not_found)?
            .state
            == SessionState::Active;
        let rows = match host
            .store
            .events(session, p.after_sequence, Some(u64::from(limit)))
            .await
        {
            Ok(rows) => rows,
            Err(devicerail_host_store::event_store::StoreError::NotFound(_)) => {
                return Err(not_found());
            }
            Err(e) => return Err(store_error(e)),
        };
        if !rows.is_empty() || !active {
            let full = rows.len() >= limit as usize;
            let mut events = Vec::with_capacity(rows.len());
            for row in rows {
                let event: TestEvent = serde_json::from_str(row.json.get()).map_err(|e| {
                    ErrorCode::InternalError.rpc(
                        format!("a stored event does not read back: {e}"),
                        serde_json::Value::Null,
                    )
                })?;
                events.push(event);
            }
            return Ok(LabEventsResult {
                ended: !active && !full,
                events,
            });
        }
        let nothing = LabEventsResult {
            events: Vec::new(),
            ended: false,
        };
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    // The watch went away: look again after a pause.
                    tokio::time::sleep(SHOT_POLL).await;
                }
            }
            () = tokio::time::sleep_until(until) => return Ok(nothing),
            () = host.shutdown.cancelled() => return Ok(nothing),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screenshot_gets_a_new_number_only_when_the_picture_changed() {
        let screens = LiveScreens::default();
        let a = DeviceId::new("a");
        let b = DeviceId::new("b");
        assert_eq!(screens.number(&a, b"one"), 1);
        assert_eq!(screens.number(&a, b"one"), 1, "the same picture");
        assert_eq!(screens.number(&a, b"two"), 2);
        assert_eq!(
            screens.number(&a, b"one"),
            3,
            "back to an earlier one is a change"
        );
        assert_eq!(screens.number(&b, b"one"), 1, "per device");
        assert!(screens.has(&a) && !screens.has(&DeviceId::new("c")));
    }
}
