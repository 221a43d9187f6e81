//! Following a Session as it happens: its events from the first on,
//! through the host's lab extension (any Session, whoever runs it), each
//! pushed to the viewer as it is committed; and each succeeded Action's
//! effect, computed by the report's own rule (`devicerail-host-report`'s
//! effects over the recorded events and their blobs, so the console, the
//! report and `devicerail mcp` agree) with its before and after
//! screenshots.
//!
//! Reads only; stops when the Session ended and every event was sent.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use devicerail_host_protocol::{SessionId, TestEvent, TestEventPayload};
use devicerail_host_report::report::{self, Source};
use tokio::sync::mpsc;

use crate::http::App;
use crate::lab::{events_after, lab_link};
use crate::messages::ServerMsg;

/// Effects are worked out at most this often (each reads the Session).
const EFFECTS_EVERY: Duration = Duration::from_millis(250);

async fn send(tx: &mpsc::Sender<String>, msg: &ServerMsg) {
    if let Ok(text) = serde_json::to_string(msg) {
        let _ = tx.send(text).await;
    }
}

/// Pushes `session`'s events (and effects) to `tx` until it has ended.
pub(crate) async fn follow(app: Arc<App>, session: SessionId, tx: mpsc::Sender<String>) {
    let mut link = match lab_link(&app.lab.reach, "console follow").await {
        Ok(l) => l,
        Err(e) => {
            send(
                &tx,
                &ServerMsg::Notice {
                    message: format!("cannot follow {session}: {e}"),
                },
            )
            .await;
            return;
        }
    };
    let name = session.to_string();
    let mut events: Vec<TestEvent> = Vec::new();
    let mut shown: HashSet<String> = HashSet::new();
    let mut pending = false;
    let mut last_effects = Instant::now() - EFFECTS_EVERY;
    let mut after = 0;
    loop {
        let page = match events_after(&mut link, session, after).await {
            Ok(p) => p,
            Err(e) => {
                send(
                    &tx,
                    &ServerMsg::Notice {
                        message: format!("following {session} stopped: {e}"),
                    },
                )
                .await;
                return;
            }
        };
        for e in page.events {
            after = e.sequence.get();
            pending |= matches!(e.payload, TestEventPayload::ActionCompleted { .. });
            send(
                &tx,
                &ServerMsg::Event {
                    session: name.clone(),
                    event: Box::new(e.clone()),
                },
            )
            .await;
            events.push(e);
        }
        if pending && (page.ended || last_effects.elapsed() >= EFFECTS_EVERY) {
            pending = false;
            last_effects = Instant::now();
            for msg in effects(&app, session, &events, &mut shown).await {
                send(&tx, &msg).await;
            }
        }
        if page.ended {
            return;
        }
    }
}

/// The effects of Actions not shown yet.
async fn effects(
    app: &App,
    session: SessionId,
    events: &[TestEvent],
    shown: &mut HashSet<String>,
) -> Vec<ServerMsg> {
    let source = Source::Store {
        data_dir: app.data_dir.clone(),
        session: Some(session),
    };
    let events_owned = events.to_vec();
    let computed = tokio::task::spawn_blocking(move || {
        let data = report::load(&source)?;
        Ok::<_, report::ReportError>(report::effects::effects(&data, &events_owned))
    })
    .await;
    let map = match computed {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => {
            tracing::debug!("effects of {session}: {e}");
            return Vec::new();
        }
        Err(_) => return Vec::new(),
    };
    let shots = devicerail_host_agent::log::effect_inputs(events);
    let mut out = Vec::new();
    for inputs in shots {
        if shown.contains(&inputs.call_id) {
            continue;
        }
        let Some(e) = map.get(&inputs.call_id) else {
            continue;
        };
        shown.insert(inputs.call_id.clone());
        let shot = |o: Option<&devicerail_host_protocol::Observation>| {
            o.and_then(devicerail_host_agent::screen::shot_of)
        };
        out.push(ServerMsg::Effect {
            session: session.to_string(),
            call_id: inputs.call_id.clone(),
            verdict: e["verdict"].as_str().unwrap_or("unknown").to_owned(),
            summary: e["summary"].as_str().unwrap_or_default().to_owned(),
            before: shot(inputs.before_shot),
            after: shot(inputs.after_shot),
        });
    }
    out
}
