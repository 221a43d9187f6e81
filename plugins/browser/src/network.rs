//! The page's requests in flight, for the activity hint observations
//! carry (`idle.inflightRequests`): tools that settle after an Action
//! (`devicerail mcp`'s `act`, replay) wait while a request the Action
//! started is still running, instead of calling a screen settled that
//! is about to change when the answer arrives.
//!
//! Watches the page session's `Network.requestWillBeSent`,
//! `loadingFinished` and `loadingFailed` events (`Network.enable`). A
//! request counts only while it is younger than [`RECENT`]: long polls,
//! event streams and web sockets stay open for minutes and would keep a
//! page busy forever. Requests of out-of-process frames (other sessions)
//! are not counted. A request that just ended counts for [`AFTER_END`]
//! more: the page handles its answer (a promise's callbacks, then the DOM
//! change) a little after `loadingFinished`, and a screen looked at in
//! between is about to change.
//!
//! Never reads or keeps anything of a request but its id and when it
//! started (URLs and headers may carry secrets).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use crate::cdp::CdpClient;

/// How long a request counts as in flight.
pub(crate) const RECENT: Duration = Duration::from_secs(2);
/// How long a request still counts after it ended.
pub(crate) const AFTER_END: Duration = Duration::from_millis(100);
/// Requests older than this are forgotten even without an end event
/// (one lost to a lagging subscriber).
const FORGET: Duration = Duration::from_secs(60);
/// Request types that stay open by design.
const LONG_LIVED: [&str; 2] = ["WebSocket", "EventSource"];

/// Where one request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Request {
    /// Sent at this instant, not ended yet.
    Running(Instant),
    /// Ended (finished or failed) at this instant.
    Ended(Instant),
}

type Started = Arc<Mutex<HashMap<String, Request>>>;

/// The watcher of one page session; stops when dropped.
pub(crate) struct NetworkWatch {
    started: Started,
    task: tokio::task::JoinHandle<()>,
}

impl NetworkWatch {
    /// Watches the events of session `session_id` on `client` (the
    /// caller enables `Network` on it). Must run inside a Tokio runtime.
    pub(crate) fn start(client: &CdpClient, session_id: String) -> Self {
        let started: Started = Arc::default();
        let mut events = client.subscribe();
        let table = started.clone();
        let task = tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(e) if e.session_id.as_deref() == Some(session_id.as_str()) => {
                        record(&table, &e.method, &e.params, Instant::now());
                    }
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => break,
                }
            }
        });
        Self { started, task }
    }

    /// Requests in flight that started less than [`RECENT`] ago, and
    /// those that ended less than [`AFTER_END`] ago.
    pub(crate) fn in_flight(&self) -> u32 {
        count(&self.started, Instant::now())
    }
}

/// Requests in the table that count at `now`: running and younger than
/// [`RECENT`], or ended less than [`AFTER_END`] ago.
fn count(table: &Mutex<HashMap<String, Request>>, now: Instant) -> u32 {
    let table = table.lock().unwrap_or_else(|p| p.into_inner());
    let n = table
        .values()
        .filter(|r| match r {
            Request::Running(at) => now.saturating_duration_since(*at) < RECENT,
            Request::Ended(at) => now.saturating_duration_since(*at) < AFTER_END,
        })
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Drop for NetworkWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Applies one `Network` event to the table of started requests.
fn record(table: &Mutex<HashMap<String, Request>>, method: &str, params: &Value, now: Instant) {
    let Some(id) = params.get("requestId").and_then(Value::as_str) else {
        return;
    };
    let mut table = table.lock().unwrap_or_else(|p| p.into_inner());
    match method {
        "Network.requestWillBeSent" => {
            let kind = params.get("type").and_then(Value::as_str).unwrap_or("");
            if LONG_LIVED.contains(&kind) {
                return;
            }
            table.retain(|_, r| match r {
                Request::Running(at) => now.saturating_duration_since(*at) < FORGET,
                Request::Ended(at) => now.saturating_duration_since(*at) < AFTER_END,
            });
            // A redirect keeps its id: the request goes on.
            let r = table.entry(id.to_owned()).or_insert(Request::Running(now));
            if matches!(r, Request::Ended(_)) {
                *r = Request::Running(now);
            }
        }
        "Network.loadingFinished" | "Network.loadingFailed" => {
            if let Some(r) = table.get_mut(id) {
                *r = Request::Ended(now);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_count_from_start_to_end_and_long_lived_ones_never() {
        let table = Mutex::new(HashMap::new());
        let t0 = Instant::now();
        record(
            &table,
            "Network.requestWillBeSent",
            &json!({ "requestId": "1", "type": "Fetch" }),
            t0,
        );
        record(
            &table,
            "Network.requestWillBeSent",
            &json!({ "requestId": "2", "type": "XHR" }),
            t0,
        );
        record(
            &table,
            "Network.requestWillBeSent",
            &json!({ "requestId": "3", "type": "EventSource" }),
            t0,
        );
        record(
            &table,
            "Network.requestWillBeSent",
            &json!({ "requestId": "1", "type": "Fetch" }),
            t0,
        );
        assert_eq!(count(&table, t0), 2);
        // A request open longer than RECENT no longer counts.
        assert_eq!(count(&table, t0 + RECENT), 0);
        record(
            &table,
            "Network.loadingFinished",
            &json!({ "requestId": "1" }),
            t0,
        );
        record(
            &table,
            "Network.loadingFailed",
            &json!({ "requestId": "2" }),
            t0,
        );
        // Just ended: the page is still handling the answers.
        assert_eq!(count(&table, t0), 2);
        assert_eq!(count(&table, t0 + AFTER_END), 0);
        // Events without an id change nothing.
        record(&table, "Network.requestWillBeSent", &json!({}), t0);
        assert_eq!(table.lock().map(|t| t.len()).unwrap_or(0), 2);
        // Ended requests are forgotten when the next one starts.
        record(
            &table,
            "Network.requestWillBeSent",
            &json!({ "requestId": "4", "type": "Fetch" }),
            t0 + AFTER_END,
        );
        assert_eq!(table.lock().map(|t| t.len()).unwrap_or(0), 1);
    }
}
