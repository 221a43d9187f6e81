//! The console's view of its host, shared by every viewer: the device list
//! (polled through the host's lab extension), the Session list, and one
//! frame pump per watched device (started by its first watcher, stopped
//! after its last). Each keeps its own connection to the host, through
//! the link crate, so a slow call of one never holds up another.
//!
//! It only reads: taking a device is [`crate::control`]'s.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use devicerail_host_link::methods::SessionsList;
use devicerail_host_link::typed::call0_as;
use devicerail_host_link::{Extension, Intro, LinkError, Reach};
use devicerail_host_protocol::lab::{
    LAB_EVENTS, LAB_FEATURE, LAB_FRAME, LAB_STATUS, LabEventsParams, LabEventsResult,
    LabFrameParams, LabFrameResult, LabStatusResult,
};
use devicerail_host_protocol::{DeviceId, SessionId, SessionInfo, SessionState};
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::messages::{ServerMsg, SessionView};

/// How often the device list is read.
const STATUS_EVERY: Duration = Duration::from_millis(500);
/// How often the Session list is read.
const SESSIONS_EVERY: Duration = Duration::from_millis(700);
/// How long one frame call waits for a change.
const FRAME_WAIT_MS: u32 = 1_000;
/// Pause before trying a device again that has no screen to show.
const RETRY: Duration = Duration::from_millis(500);
/// Longest one call to the host may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// The newest Sessions listed.
const SESSIONS_SHOWN: usize = 100;

/// Opens a lab connection to `reach` as `who`.
pub(crate) async fn lab_link(reach: &Reach, who: &str) -> Result<Extension, LinkError> {
    Extension::open(
        reach,
        &Intro::new(who),
        "devicerail-console",
        LAB_FEATURE,
        CALL_TIMEOUT,
    )
    .await
}

/// What `open` reaches, trying again (with a warning, after a pause)
/// until the host answers.
async fn connected<T, Fut>(mut open: impl FnMut() -> Fut) -> T
where
    Fut: std::future::Future<Output = Result<T, LinkError>>,
{
    loop {
        match open().await {
            Ok(t) => return t,
            Err(e) => {
                tracing::warn!("the console cannot reach the host: {e}");
                tokio::time::sleep(RETRY * 2).await;
            }
        }
    }
}

/// One device's frames and how many watch them.
struct Pump {
    frames: watch::Sender<Option<Arc<ServerMsg>>>,
    watchers: usize,
    task: JoinHandle<()>,
}

/// What every viewer sees.
pub(crate) struct Lab {
    pub(crate) reach: Arc<Reach>,
    status: watch::Sender<Arc<LabStatusResult>>,
    sessions: watch::Sender<Arc<Vec<SessionView>>>,
    pumps: Mutex<HashMap<String, Pump>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        for p in self
            .pumps
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            p.task.abort();
        }
    }
}

impl Lab {
    /// Starts reading the host's devices and Sessions.
    pub(crate) fn start(reach: Arc<Reach>) -> Arc<Self> {
        let (status, _) = watch::channel(Arc::new(LabStatusResult {
            devices: Vec::new(),
        }));
        let (sessions, _) = watch::channel(Arc::new(Vec::new()));
        let tasks = vec![
            tokio::spawn(poll_status(reach.clone(), status.clone())),
            tokio::spawn(poll_sessions(reach.clone(), sessions.clone())),
        ];
        Arc::new(Self {
            reach,
            status,
            sessions,
            pumps: Mutex::new(HashMap::new()),
            tasks,
        })
    }

    /// The device list as it changes.
    pub(crate) fn status(&self) -> watch::Receiver<Arc<LabStatusResult>> {
        self.status.subscribe()
    }

    /// The Session list as it changes.
    pub(crate) fn sessions(&self) -> watch::Receiver<Arc<Vec<SessionView>>> {
        self.sessions.subscribe()
    }

    /// Frames of `device` from now on (its pump starts with the first
    /// watcher). Call [`Lab::unwatch`] when done.
    pub(crate) fn watch(&self, device: &str) -> watch::Receiver<Option<Arc<ServerMsg>>> {
        let mut pumps = self.pumps.lock().unwrap_or_else(|p| p.into_inner());
        let pump = pumps.entry(device.to_owned()).or_insert_with(|| {
            let (frames, _) = watch::channel(None);
            let task = tokio::spawn(pump(self.reach.clone(), device.to_owned(), frames.clone()));
            Pump {
                frames,
                watchers: 0,
                task,
            }
        });
        pump.watchers += 1;
        pump.frames.subscribe()
    }

    /// One watcher of `device` fewer; its pump stops with the last.
    pub(crate) fn unwatch(&self, device: &str) {
        let mut pumps = self.pumps.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = pumps.get_mut(device) {
            p.watchers = p.watchers.saturating_sub(1);
            if p.watchers == 0 {
                p.task.abort();
                pumps.remove(device);
            }
        }
    }
}

/// Reads the device list until the console stops.
async fn poll_status(reach: Arc<Reach>, out: watch::Sender<Arc<LabStatusResult>>) {
    loop {
        let mut link = connected(|| lab_link(&reach, "console status")).await;
        loop {
            match link.request::<LabStatusResult>(LAB_STATUS, json!({})).await {
                Ok(status) => {
                    out.send_if_modified(|old| {
                        let changed = **old != status;
                        if changed {
                            *old = Arc::new(status);
                        }
                        changed
                    });
                }
                Err(e) => {
                    tracing::warn!("reading the device list failed: {e}");
                    break;
                }
            }
            tokio::time::sleep(STATUS_EVERY).await;
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// The device of `session`: the first of its events that names one.
async fn device_of(link: &mut Extension, session: SessionId) -> Option<String> {
    let page: LabEventsResult = link
        .request(
            LAB_EVENTS,
            LabEventsParams {
                session_id: session,
                after_sequence: 0,
                limit: Some(8),
                wait_ms: 0,
            },
        )
        .await
        .ok()?;
    page.events
        .into_iter()
        .find_map(|e| e.device_id.map(|d: DeviceId| d.to_string()))
}

/// Reads the Session list until the console stops.
async fn poll_sessions(reach: Arc<Reach>, out: watch::Sender<Arc<Vec<SessionView>>>) {
    // Each Session's device; `None` once looked up in vain (asked again
    // only while the Session runs).
    let mut devices: HashMap<SessionId, Option<String>> = HashMap::new();
    loop {
        let (client, mut link) = connected(|| async {
            let client = reach
                .client(&Intro::new("console sessions"), "devicerail-console")
                .await?;
            let link = lab_link(&reach, "console sessions").await?;
            Ok::<_, LinkError>((client, link))
        })
        .await;
        loop {
            let listed: Vec<SessionInfo> =
                match call0_as::<SessionsList, _>(&client, Some(15_000)).await {
                    Ok(l) => l,
                    Err(e) => {
                        tracing::warn!("reading the Session list failed: {e}");
                        break;
                    }
                };
            let mut sessions = listed;
            sessions.sort_by_key(|s| std::cmp::Reverse(s.started_at_ms.get()));
            sessions.truncate(SESSIONS_SHOWN);
            let mut views = Vec::with_capacity(sessions.len());
            for s in sessions {
                let active = s.state == SessionState::Active;
                let known = devices.get(&s.id).is_some_and(|d| d.is_some() || !active);
                if !known {
                    let found = device_of(&mut link, s.id).await;
                    devices.insert(s.id, found);
                }
                views.push(SessionView {
                    id: s.id.to_string(),
                    device: devices.get(&s.id).cloned().flatten(),
                    state: if active { "active" } else { "ended" }.into(),
                    started_at_ms: s.started_at_ms.get(),
                    ended_at_ms: s.ended_at_ms.map(|t| t.get()),
                    events: s.event_count.get(),
                });
            }
            out.send_if_modified(|old| {
                let changed = **old != views;
                if changed {
                    *old = Arc::new(views);
                }
                changed
            });
            tokio::time::sleep(SESSIONS_EVERY).await;
        }
        let _ = client.close().await;
        tokio::time::sleep(RETRY).await;
    }
}

/// Pushes `device`'s frames to its watchers until stopped.
async fn pump(reach: Arc<Reach>, device: String, out: watch::Sender<Option<Arc<ServerMsg>>>) {
    let Ok(device_id) = serde_json::from_value::<DeviceId>(json!(device)) else {
        return;
    };
    let mut seq = 0;
    loop {
        let mut link = connected(|| lab_link(&reach, "console screen")).await;
        loop {
            let params = LabFrameParams {
                device_id: device_id.clone(),
                after_seq: seq,
                wait_ms: FRAME_WAIT_MS,
            };
            match link.request::<LabFrameResult>(LAB_FRAME, params).await {
                Ok(r) => {
                    if r.seq < seq {
                        // The driver started counting again (reconnected).
                        seq = 0;
                        continue;
                    }
                    seq = r.seq;
                    if let Some(f) = r.frame {
                        out.send_replace(Some(Arc::new(ServerMsg::Frame {
                            device: device.clone(),
                            seq: r.seq,
                            media_type: f.media_type,
                            width: f.width,
                            height: f.height,
                            captured_at_ms: f.captured_at_ms,
                            data: f.data,
                        })));
                    }
                }
                Err(LinkError::Remote { code, .. }) => {
                    // Nobody uses the device (no screen), or it is gone:
                    // look again shortly.
                    tracing::debug!(device, code, "no frame");
                    tokio::time::sleep(RETRY).await;
                }
                Err(e) => {
                    tracing::warn!(device, "reading frames failed: {e}");
                    break;
                }
            }
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// A Session's events from `after` on, for one follower: `None` when the
/// connection failed.
pub(crate) async fn events_after(
    link: &mut Extension,
    session: SessionId,
    after: u64,
) -> Result<LabEventsResult, LinkError> {
    link.request(
        LAB_EVENTS,
        LabEventsParams {
            session_id: session,
            after_sequence: after,
            limit: None,
            wait_ms: 2_000,
        },
    )
    .await
}
