//! One viewer's WebSocket: the upgrade (cookie, loopback `Host`, the
//! page's own `Origin`), then a loop that pushes what the viewer sees —
//! the device list, the watched device's frames (only the newest: a slow
//! page skips frames, it never queues them), the Session list, the
//! followed Session's events — and hands the viewer's requests to one
//! task that runs them in order (its control of a device, replay, export,
//! invites).
//!
//! When the socket closes the viewer's device is released and its
//! watches end. It must never log a secret's text.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Response, StatusCode, header};
use devicerail_host_protocol::SessionId;
use devicerail_host_protocol::lab::LabStatusResult;
use futures_util::{SinkExt, StreamExt};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use crate::auth::{self, Viewer};
use crate::control::{Act, Control, failure};
use crate::http::{App, loopback, respond, viewer_of};
use crate::messages::{ClientMsg, ControlState, DeviceView, Failure, Holder, ServerMsg};

/// Largest message a page may send.
const MAX_IN: usize = 256 * 1024;
/// Messages queued for a slow page before frames are skipped.
const OUT_QUEUE: usize = 64;

fn bad(status: StatusCode, why: &'static str) -> Response<Body> {
    respond(status, "text/plain; charset=utf-8", why)
}

/// `GET /ws`: checks the viewer and where the page came from, then
/// switches protocols.
pub(crate) async fn upgrade(State(app): State<Arc<App>>, mut req: Request) -> Response<Body> {
    let viewer = match viewer_of(&app, req.headers()) {
        Ok(v) => v,
        Err(r) => return r.response(),
    };
    let headers = req.headers();
    let host = loopback(headers).unwrap_or_default().to_owned();
    let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
    if !auth::same_origin(origin, &host) {
        return bad(
            StatusCode::FORBIDDEN,
            "the WebSocket is the console page's own",
        );
    }
    let is = |name: header::HeaderName, want: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(want)))
    };
    if !is(header::UPGRADE, "websocket")
        || !is(header::CONNECTION, "upgrade")
        || !is(header::SEC_WEBSOCKET_VERSION, "13")
    {
        return bad(StatusCode::BAD_REQUEST, "expected a WebSocket upgrade");
    }
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return bad(StatusCode::BAD_REQUEST, "expected a WebSocket key");
    };
    let accept = derive_accept_key(key.as_bytes());
    let upgraded = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        match upgraded.await {
            Ok(io) => {
                let config = WebSocketConfig::default()
                    .max_message_size(Some(MAX_IN))
                    .max_frame_size(Some(MAX_IN));
                let ws =
                    WebSocketStream::from_raw_socket(TokioIo::new(io), Role::Server, Some(config))
                        .await;
                run(app, viewer, host, ws).await;
            }
            Err(e) => tracing::warn!("the console's WebSocket upgrade failed: {e}"),
        }
    });
    let mut r = respond(StatusCode::SWITCHING_PROTOCOLS, "text/plain", "");
    let h = r.headers_mut();
    h.remove(header::CONTENT_TYPE);
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(v) = HeaderValue::from_str(&accept) {
        h.insert(header::SEC_WEBSOCKET_ACCEPT, v);
    }
    r
}

/// Sends `msg` (dropped if the page went away).
async fn send(tx: &mpsc::Sender<String>, msg: &ServerMsg) {
    if let Ok(text) = serde_json::to_string(msg) {
        let _ = tx.send(text).await;
    }
}

/// The name this viewer's control connection gives itself.
fn client_name(viewer: &Viewer) -> String {
    format!("devicerail-console ({})", viewer.name)
}

/// The device list as `viewer` sees it (`mine`: the device it holds).
fn devices_for(status: &LabStatusResult, viewer: &Viewer, mine: Option<&str>) -> Vec<DeviceView> {
    let me = client_name(viewer);
    status
        .devices
        .iter()
        .map(|d| {
            let id = d.device.id.to_string();
            let holder = match (&d.lease, &d.reservation) {
                (Some(l), _)
                    if mine == Some(id.as_str())
                        && l.client.as_ref().is_some_and(|c| c.name == me) =>
                {
                    Holder {
                        kind: "you",
                        label: None,
                    }
                }
                (Some(l), _) => Holder {
                    kind: "client",
                    label: Some(
                        l.client
                            .as_ref()
                            .map_or_else(|| "another client".to_owned(), |c| c.name.clone()),
                    ),
                },
                (None, Some(r)) => Holder {
                    kind: "reservation",
                    label: Some(r.label.clone()),
                },
                (None, None) => Holder {
                    kind: "none",
                    label: None,
                },
            };
            DeviceView {
                name: d.device.name.clone(),
                platform: d.device.platform.name().to_owned(),
                plugin: d.plugin.clone(),
                health: serde_json::to_value(d.health)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                reason: d.reason.clone(),
                doctor: d.doctor.clone(),
                holder,
                id,
            }
        })
        .collect()
}

/// The control message of `device` for a viewer that sees `devices`.
fn control_of(devices: &[DeviceView], device: &str, session: Option<&str>) -> Option<ServerMsg> {
    let d = devices.iter().find(|d| d.id == device)?;
    let (state, holder) = match d.holder.kind {
        "you" => (ControlState::Yours, None),
        "none" => (ControlState::Free, None),
        _ => (ControlState::Held, d.holder.label.clone()),
    };
    Some(ServerMsg::Control {
        device: device.to_owned(),
        state,
        holder,
        session: (state == ControlState::Yours)
            .then(|| session.map(str::to_owned))
            .flatten(),
    })
}

/// What the request task tells the loop about this viewer's control.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Mine {
    device: Option<String>,
    session: Option<String>,
}

/// Resolves when `rx` changes; never when there is none.
async fn frame_changed(rx: &mut Option<(String, watch::Receiver<Option<Arc<ServerMsg>>>)>) -> bool {
    match rx {
        Some((_, r)) => r.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// Serves one viewer until its socket closes.
async fn run<S>(app: Arc<App>, viewer: Viewer, host: String, ws: WebSocketStream<S>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut stream) = ws.split();
    let (tx, mut out) = mpsc::channel::<String>(OUT_QUEUE);
    let writer = tokio::spawn(async move {
        while let Some(text) = out.recv().await {
            if sink.send(Message::Text(text.into())).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let (mine_tx, mut mine_rx) = watch::channel(Mine::default());
    let (req_tx, req_rx) = mpsc::channel::<ClientMsg>(32);
    let requests = tokio::spawn(serve_requests(
        app.clone(),
        viewer.clone(),
        host,
        req_rx,
        tx.clone(),
        mine_tx,
    ));
    let mut status = app.lab.status();
    let mut sessions = app.lab.sessions();
    let mut watched: Option<(String, watch::Receiver<Option<Arc<ServerMsg>>>)> = None;
    let mut follow: Option<JoinHandle<()>> = None;
    send(
        &tx,
        &ServerMsg::Hello {
            viewer: json!({ "id": viewer.id, "name": viewer.name }),
            host: json!({ "mode": app.mode, "dataDir": app.data_dir.display().to_string() }),
        },
    )
    .await;
    let mut devices = devices_for(&status.borrow_and_update(), &viewer, None);
    send(
        &tx,
        &ServerMsg::Devices {
            devices: devices.clone(),
        },
    )
    .await;
    let listed = sessions.borrow_and_update().as_ref().clone();
    send(&tx, &ServerMsg::Sessions { sessions: listed }).await;
    let mut last_control: Option<ServerMsg> = None;
    loop {
        let mut refresh_devices = false;
        tokio::select! {
            incoming = stream.next() => {
                let text = match incoming {
                    Some(Ok(Message::Text(t))) => t,
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                let msg: ClientMsg = match serde_json::from_str(text.as_str()) {
                    Ok(m) => m,
                    Err(e) => {
                        // Never echo the text: it may hold a secret.
                        let what = e.to_string();
                        let what = what.split(['"', '`']).next().unwrap_or("").trim_end();
                        send(&tx, &ServerMsg::Notice { message: format!("the console ignored a message it does not understand: {what}") }).await;
                        continue;
                    }
                };
                match msg {
                    ClientMsg::Watch { device } => {
                        if let Some((old, _)) = watched.take() {
                            app.lab.unwatch(&old);
                        }
                        let rx = app.lab.watch(&device);
                        let current = rx.borrow().clone();
                        if let Some(frame) = current
                            && let Ok(text) = serde_json::to_string(frame.as_ref())
                        {
                            let _ = tx.try_send(text);
                        }
                        watched = Some((device, rx));
                        last_control = None;
                        refresh_devices = true;
                    }
                    ClientMsg::Unwatch { device } => {
                        if watched.as_ref().is_some_and(|(d, _)| *d == device) {
                            watched = None;
                            app.lab.unwatch(&device);
                        }
                    }
                    ClientMsg::Follow { session } => {
                        if let Some(f) = follow.take() {
                            f.abort();
                        }
                        match session.parse::<SessionId>() {
                            Ok(id) => follow = Some(tokio::spawn(crate::follow::follow(app.clone(), id, tx.clone()))),
                            Err(_) => send(&tx, &ServerMsg::Notice { message: format!("{session} is not a Session id") }).await,
                        }
                    }
                    ClientMsg::Painted { device, seq, captured_at_ms, painted_at_ms } => {
                        if let Some(at) = captured_at_ms {
                            tracing::debug!(device, seq, latency_ms = painted_at_ms.saturating_sub(at), "frame painted");
                        }
                    }
                    request => {
                        if req_tx.try_send(request).is_err() {
                            send(&tx, &ServerMsg::Notice { message: "too many requests at once; wait for the last ones".into() }).await;
                        }
                    }
                }
            }
            changed = status.changed() => {
                if changed.is_err() {
                    break;
                }
                refresh_devices = true;
            }
            changed = mine_rx.changed() => {
                if changed.is_err() {
                    break;
                }
                refresh_devices = true;
            }
            changed = sessions.changed() => {
                if changed.is_err() {
                    break;
                }
                let listed = sessions.borrow_and_update().as_ref().clone();
                send(&tx, &ServerMsg::Sessions { sessions: listed }).await;
            }
            alive = frame_changed(&mut watched) => {
                if !alive {
                    watched = None;
                    continue;
                }
                let frame = watched.as_mut().and_then(|(_, r)| r.borrow_and_update().clone());
                if let Some(frame) = frame {
                    // Only the newest matters: a page that is behind skips.
                    if let Ok(text) = serde_json::to_string(frame.as_ref()) {
                        let _ = tx.try_send(text);
                    }
                }
            }
        }
        if refresh_devices {
            let mine = mine_rx.borrow_and_update().clone();
            let now = devices_for(&status.borrow_and_update(), &viewer, mine.device.as_deref());
            if now != devices {
                devices = now;
                send(
                    &tx,
                    &ServerMsg::Devices {
                        devices: devices.clone(),
                    },
                )
                .await;
            }
            if let Some((device, _)) = &watched {
                let control = control_of(&devices, device, mine.session.as_deref());
                if control.is_some() && control != last_control {
                    if let Some(c) = &control {
                        send(&tx, c).await;
                    }
                    last_control = control;
                }
            }
        }
    }
    if let Some((device, _)) = watched.take() {
        app.lab.unwatch(&device);
    }
    if let Some(f) = follow.take() {
        f.abort();
    }
    drop(req_tx);
    // The request task releases the device when its queue closes.
    let _ = tokio::time::timeout(Duration::from_secs(30), requests).await;
    writer.abort();
    tracing::info!(viewer = %viewer.name, "a viewer left the console");
}

fn answer(id: u64, r: Result<serde_json::Value, Failure>) -> ServerMsg {
    match r {
        Ok(data) => ServerMsg::Result {
            id,
            ok: true,
            data: Some(data),
            error: None,
        },
        Err(error) => ServerMsg::Result {
            id,
            ok: false,
            data: None,
            error: Some(error),
        },
    }
}

fn console_error(code: &str, message: impl Into<String>) -> Failure {
    Failure {
        code: code.into(),
        message: message.into(),
    }
}

/// Runs one viewer's requests in order; releases its device at the end.
async fn serve_requests(
    app: Arc<App>,
    viewer: Viewer,
    host: String,
    mut requests: mpsc::Receiver<ClientMsg>,
    tx: mpsc::Sender<String>,
    mine: watch::Sender<Mine>,
) {
    let mut control: Option<Control> = None;
    while let Some(msg) = requests.recv().await {
        let not_in_control = || {
            console_error(
                "not_in_control",
                "take control of the device first (a viewer only watches)",
            )
        };
        let reply = match msg {
            ClientMsg::Take { id, device } => {
                let r = match &control {
                    Some(c) if c.device == device => {
                        Ok(json!({ "device": device, "session": c.session }))
                    }
                    Some(c) => Err(console_error(
                        "already_in_control",
                        format!("release {} first", c.device),
                    )),
                    None => match Control::take(&app.lab.reach, &viewer.name, &device).await {
                        Ok(c) => {
                            let data = json!({ "device": device, "session": c.session });
                            mine.send_replace(Mine {
                                device: Some(device.clone()),
                                session: Some(c.session.clone()),
                            });
                            control = Some(c);
                            Ok(data)
                        }
                        Err(e) => Err(failure(&e)),
                    },
                };
                answer(id, r)
            }
            ClientMsg::Release { id } => {
                let r = match control.take() {
                    Some(c) => {
                        let device = c.device.clone();
                        c.release().await;
                        mine.send_replace(Mine::default());
                        Ok(json!({ "device": device }))
                    }
                    None => Err(not_in_control()),
                };
                answer(id, r)
            }
            ClientMsg::Tap { id, x, y } => act(&control, id, &Act::Tap { x, y }).await,
            ClientMsg::Swipe {
                id,
                from_x,
                from_y,
                to_x,
                to_y,
                duration_ms,
            } => {
                act(
                    &control,
                    id,
                    &Act::Swipe {
                        from: (from_x, from_y),
                        to: (to_x, to_y),
                        duration_ms,
                    },
                )
                .await
            }
            ClientMsg::Text { id, text } => act(&control, id, &Act::Text(&text)).await,
            ClientMsg::Secret { id, text } => act(&control, id, &Act::Secret(&text)).await,
            ClientMsg::Key { id, key } => act(&control, id, &Act::Key(&key)).await,
            ClientMsg::Invite { id } => answer(
                id,
                app.gate
                    .invite(Some(crate::auth::INVITE_LIFETIME))
                    .map(|t| json!({ "url": format!("http://{host}/?token={t}") }))
                    .map_err(|e| console_error("internal_error", e.to_string())),
            ),
            ClientMsg::Replay { id, session } => {
                answer(id, crate::buttons::replay(&app, &session).await)
            }
            ClientMsg::Export {
                id,
                session,
                script,
            } => answer(id, crate::buttons::export(&app, &session, &script).await),
            // Handled by the socket loop.
            ClientMsg::Watch { .. }
            | ClientMsg::Unwatch { .. }
            | ClientMsg::Follow { .. }
            | ClientMsg::Painted { .. } => continue,
        };
        send(&tx, &reply).await;
    }
    if let Some(c) = control.take() {
        c.release().await;
    }
}

async fn act(control: &Option<Control>, id: u64, what: &Act<'_>) -> ServerMsg {
    let Some(c) = control else {
        return answer(
            id,
            Err(console_error(
                "not_in_control",
                "take control of the device first (a viewer only watches)",
            )),
        );
    };
    answer(id, c.act(what).await.map_err(|e| failure(&e)))
}
