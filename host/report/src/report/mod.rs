//! `devicerail report`: one self-contained HTML file that shows a Session
//! — a filterable, keyboard-navigable timeline of every event; each
//! Action's recorded (redacted where protected) arguments, outcome,
//! duration, error and execution mode; screenshots, with the resolved
//! element outlined on a semantic Action's before screenshot; each UI
//! snapshot as a tree whose nodes outline themselves on the screenshot
//! when hovered; each Action's effect (what its before and after
//! observations differ in, or `no visible change`, see [`effects`]);
//! verdicts with their evidence; and for a Session `devicerail replay`
//! ran, the Session it replays beside it, step by step ([`replay`]).
//!
//! The page loads nothing: data and blobs are embedded (images decoded
//! only when shown), a Content-Security-Policy admits only the page's own
//! script and style (by hash) and `data:`/`blob:` images, and every text
//! from the device reaches the DOM through `textContent`, never as markup.
//! The same [`SessionData`] renders to the same bytes, whether it was read
//! from the store or from a bundle.
//!
//! What this module must never do: write to the store or take the host's
//! lock, show anything a protected Action's redaction removed (it renders
//! only recorded events, and drops any arguments an event marks redacted),
//! or put device text into the page as markup.

use std::path::Path;

use base64::Engine as _;
use devicerail_host_protocol::{PNG_MEDIA_TYPE, SessionId, UI_TREE_MEDIA_TYPE};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::bundle::{self, BundleError, SessionData};

pub mod effects;
pub mod replay;
use devicerail_host_store::event_store::ReadOnlyStore;

const TEMPLATE: &str = include_str!("template.html");
const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The Session could not be read: from the store, or from a bundle
    /// that is missing or fails validation.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// A stored event is not JSON, so the page cannot carry it.
    #[error("event {sequence} is not JSON: {reason}")]
    BadEvent {
        /// The event's sequence.
        sequence: u64,
        /// The parser's complaint.
        reason: String,
    },
    /// The HTML file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The report file asked for.
        path: std::path::PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// Where the Session comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A session of the data directory (`None`: the last one).
    Store {
        /// The host's data directory (read, never written).
        data_dir: std::path::PathBuf,
        /// The Session to show; `None` picks the last one started.
        session: Option<SessionId>,
    },
    /// A bundle file (validated before use).
    Bundle(std::path::PathBuf),
}

/// What `report` wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The Session the report shows.
    pub session: SessionId,
    /// Events on its timeline.
    pub events: usize,
    /// Screenshots (PNG blobs) embedded.
    pub screenshots: usize,
    /// Size of the HTML file, in bytes.
    pub bytes: u64,
}

/// Loads the Session of `source`.
pub fn load(source: &Source) -> Result<SessionData, ReportError> {
    Ok(match source {
        Source::Store { data_dir, session } => {
            let store = ReadOnlyStore::open(data_dir).map_err(BundleError::from)?;
            let info = bundle::pick_session(&store, *session)?;
            // A report shows what the store still has; a blob it lost is
            // shown as missing rather than costing the whole report.
            bundle::load_from_store(&store, &info, bundle::Missing::Skip)?
        }
        Source::Bundle(path) => bundle::open(path)?,
    })
}

/// The Session `data` replays, read from the same data directory, when
/// `data` is a replay Session and `source` a store (a bundle holds one
/// Session); `None` (logged) when it cannot be read.
pub fn recorded_for(source: &Source, data: &SessionData) -> Option<SessionData> {
    let Source::Store { data_dir, .. } = source else {
        return None;
    };
    let replays = data.events.iter().find_map(|e| {
        let ev: devicerail_host_protocol::TestEvent = serde_json::from_str(&e.json).ok()?;
        match ev.payload {
            devicerail_host_protocol::TestEventPayload::VerdictRecorded { verdict } => {
                replay::linked(&verdict.summary).and_then(|s| s.parse::<SessionId>().ok())
            }
            _ => None,
        }
    })?;
    load(&Source::Store {
        data_dir: data_dir.clone(),
        session: Some(replays),
    })
    .inspect_err(|e| tracing::warn!("the replayed Session {replays} cannot be read: {e}"))
    .ok()
}

/// `devicerail report`: renders `data` to `out` (owner-only,
/// atomically); a replay Session shows the Session it replays
/// (`recorded`, when given) beside it, step by step.
pub fn write(
    data: &SessionData,
    recorded: Option<&SessionData>,
    out: &Path,
) -> Result<Written, ReportError> {
    let html = render(data, recorded)?;
    let bytes =
        devicerail_host_store::private_file::write(out, html.as_bytes()).map_err(|source| {
            ReportError::Write {
                path: out.to_path_buf(),
                source,
            }
        })?;
    let screenshots = data
        .blobs
        .values()
        .filter(|b| b.media_type == PNG_MEDIA_TYPE)
        .count();
    tracing::info!(session = %data.session.id, events = data.events.len(), bytes, "report written");
    Ok(Written {
        session: data.session.id,
        events: data.events.len(),
        screenshots,
        bytes,
    })
}

/// The report page's Content-Security-Policy (also in its `<meta>`): its
/// own script and style by hash, `data:`/`blob:` images, nothing else. A
/// server of reports sends it as a header.
pub fn policy() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data: blob:; base-uri 'none'; form-action 'none'",
        csp_hash(SCRIPT),
        csp_hash(STYLE)
    )
}

/// `sha256-<base64>` for a Content-Security-Policy source.
fn csp_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// JSON safe to place inside a `<script>` element: no `<`, `>` or `&`
/// (escaped as `\u003c` etc., which JSON reads back unchanged).
fn script_json(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len() + text.len() / 64);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text for an HTML text or attribute position.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An event as the page gets it: the stored JSON, with the arguments of
/// any call marked redacted dropped (they are `null` already; this keeps
/// it so whatever wrote the event).
fn page_event(sequence: u64, json: &str) -> Result<Value, ReportError> {
    let mut v: Value = serde_json::from_str(json).map_err(|e| ReportError::BadEvent {
        sequence,
        reason: e.to_string(),
    })?;
    if let Some(call) = v.pointer_mut("/payload/call")
        && call.get("argumentsRedacted") == Some(&Value::Bool(true))
        && let Some(obj) = call.as_object_mut()
    {
        obj.insert("arguments".into(), Value::Null);
    }
    Ok(v)
}

/// Renders the report page of `data` (with `recorded` beside it, when
/// `data` replays it).
pub fn render(data: &SessionData, recorded: Option<&SessionData>) -> Result<String, ReportError> {
    let events = data
        .events
        .iter()
        .map(|e| page_event(e.sequence, &e.json))
        .collect::<Result<Vec<_>, _>>()?;
    // UI snapshots are parsed into the page data; images stay base64
    // until shown. Anything else is listed by size only.
    let mut snapshots = Map::new();
    let mut blob_info = Map::new();
    let mut images = String::new();
    for (sha, blob) in &data.blobs {
        blob_info.insert(
            sha.clone(),
            json!({ "mediaType": blob.media_type, "size": blob.bytes.len() }),
        );
        if blob.media_type == UI_TREE_MEDIA_TYPE {
            match serde_json::from_slice::<Value>(&blob.bytes) {
                Ok(tree) => {
                    snapshots.insert(sha.clone(), tree);
                }
                Err(e) => tracing::warn!("UI snapshot {sha} is not JSON: {e}"),
            }
        } else if blob.media_type.starts_with("image/") {
            images.push_str(&format!(
                "<script type=\"application/x-devicerail-blob\" id=\"blob-{sha}\" data-media-type=\"{}\">",
                escape_html(&blob.media_type)
            ));
            images.push_str(&base64::engine::general_purpose::STANDARD.encode(&blob.bytes));
            images.push_str("</script>\n");
        }
    }
    // Effects read the typed log (an event this host could not read back is
    // shown, not compared).
    let typed: Vec<devicerail_host_protocol::TestEvent> = data
        .events
        .iter()
        .filter_map(|e| {
            serde_json::from_str(&e.json)
                .inspect_err(|err| tracing::warn!("event {} is not readable: {err}", e.sequence))
                .ok()
        })
        .collect();
    let effects = effects::effects(data, &typed);
    let compared = replay::comparison(&typed, recorded);
    // The recorded side's screenshots travel with the page.
    if let (Some(c), Some(rec)) = (&compared, recorded) {
        let mut added = std::collections::HashSet::new();
        for step in &c.steps {
            for sha in [&step.recorded_before, &step.recorded_after]
                .into_iter()
                .flatten()
            {
                if data.blobs.contains_key(sha) || !added.insert(sha.clone()) {
                    continue;
                }
                if let Some(blob) = rec.blobs.get(sha) {
                    images.push_str(&format!(
                        "<script type=\"application/x-devicerail-blob\" id=\"blob-{sha}\" data-media-type=\"{}\">",
                        escape_html(&blob.media_type)
                    ));
                    images.push_str(&base64::engine::general_purpose::STANDARD.encode(&blob.bytes));
                    images.push_str("</script>\n");
                }
            }
        }
    }
    let page = json!({
        "producer": concat!("devicerail ", env!("CARGO_PKG_VERSION")),
        "session": data.session,
        "events": events,
        "snapshots": snapshots,
        "blobs": blob_info,
        "effects": effects,
        "replay": compared,
    });
    let csp = policy();
    let title = format!("DeviceRail session {}", data.session.id);
    // The template's placeholders are filled in one pass, so nothing
    // inserted is ever read as a placeholder.
    let mut out = String::with_capacity(TEMPLATE.len() + images.len() + 4096);
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        match &after[..end] {
            "CSP" => out.push_str(&escape_html(&csp)),
            "TITLE" => out.push_str(&escape_html(&title)),
            "STYLE" => out.push_str(STYLE),
            "SCRIPT" => out.push_str(SCRIPT),
            "DATA" => out.push_str(&script_json(&page)),
            "IMAGES" => out.push_str(&images),
            other => {
                out.push_str("{{");
                out.push_str(other);
                out.push_str("}}");
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_the_script_element() {
        let v = json!({ "text": "</script><script>alert(1)</script>&" });
        let s = script_json(&v);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert_eq!(serde_json::from_str::<Value>(&s).expect("json"), v);
    }

    #[test]
    fn redacted_arguments_are_dropped_whatever_the_event_says() {
        let v = page_event(
            2,
            r#"{"payload":{"type":"actionStarted","call":{"id":"x","name":"inputSecret","arguments":{"text":"hunter2"},"argumentsRedacted":true}}}"#,
        )
        .expect("event");
        assert_eq!(v["payload"]["call"]["arguments"], Value::Null);
    }
}
