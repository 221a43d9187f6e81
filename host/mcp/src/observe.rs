//! The `observe` tool: one DeviceRail Observation in the device's Session,
//! its UI tree as a bounded outline with refs, and its screenshot read
//! from the data directory's Evidence (checked against its sha256),
//! downscaled and re-encoded.
//!
//! It never sends the full tree or the full-size screenshot to the agent,
//! and never fails an observation because the image could not be read
//! (the outline comes back with a note instead).

use base64::Engine;
use devicerail_client::methods::{DeviceObserve, UiSnapshotGet};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::backend::{call, call0};
use super::image::{self, Encoded};
use super::outline::{self, Budget, Node};
use super::refs::RefEntry;
use super::sessions::ids;
use super::state::{State, ToolError};
use super::tools::ObserveArgs;
use devicerail_host_store::event_store::ReadOnlyStore;

/// How long an observation may take.
const OBSERVE_TIMEOUT_MS: u64 = 60_000;

/// Runs `observe`.
pub(crate) async fn observe(state: &State, args: ObserveArgs) -> Result<CallToolResult, ToolError> {
    let subtree = match &args.subtree {
        Some(r) => Some(state.refs().resolve(r, &args.device)?.stable_node_id),
        None => None,
    };
    let slot = state.slots.get(&args.device);
    let mut slot = slot.lock().await;
    let (client, session) = slot
        .ensure(&state.backend, &state.leases, &args.device)
        .await?;
    let obs = call0::<DeviceObserve>(client, Some(OBSERVE_TIMEOUT_MS)).await?;
    let observation_id = obs["id"].as_str().unwrap_or_default().to_owned();
    let mut notes = Vec::new();
    let (nodes, context) = if obs["uiSnapshot"].is_object() {
        let snap = call::<UiSnapshotGet>(
            client,
            json!({ "observationId": observation_id }),
            Some(OBSERVE_TIMEOUT_MS),
        )
        .await?;
        let nodes: Vec<Node> = serde_json::from_value(snap["nodes"].clone())?;
        (nodes, snap["context"].clone())
    } else {
        notes.push(format!(
            "no UI tree: {}",
            obs["uiSnapshotOmission"]
                .as_str()
                .unwrap_or("the device gave none")
        ));
        (Vec::new(), Value::Null)
    };
    drop(slot);

    let budget = Budget {
        max_nodes: args
            .max_nodes
            .unwrap_or(outline::DEFAULT_MAX_NODES)
            .clamp(1, 2000),
        max_chars: args
            .max_chars
            .unwrap_or(outline::DEFAULT_MAX_CHARS)
            .clamp(200, 100_000),
        filter: args.filter.clone(),
        subtree,
    };
    let built = {
        let mut refs = state.refs();
        let built = outline::build(&nodes, &budget, refs.next_number())?;
        refs.record(
            built
                .refs
                .iter()
                .map(|(r, id)| {
                    let entry = RefEntry {
                        device: args.device.clone(),
                        observation_id: observation_id.clone(),
                        context: context.clone(),
                        stable_node_id: id.clone(),
                    };
                    (r.clone(), entry)
                })
                .collect(),
        );
        built
    };

    let mut image: Option<Encoded> = None;
    if args.screenshot.unwrap_or(true) {
        match obs["screenshot"]["sha256"].as_str() {
            Some(sha) => match read_screenshot(state, sha, args.format, args.max_side).await {
                Ok(e) => image = Some(e),
                Err(why) => notes.push(format!("no image: {why}")),
            },
            None => notes.push(format!(
                "no screenshot: {}",
                obs["screenshotOmission"]
                    .as_str()
                    .unwrap_or("the device gave none")
            )),
        }
    }

    let note = (!notes.is_empty()).then(|| notes.join("; "));
    let mut structured = ids(&args.device, &session);
    if let Some(m) = structured.as_object_mut() {
        m.insert("observationId".into(), json!(observation_id));
        m.insert("outline".into(), json!(built.text));
        m.insert("nodes".into(), json!(built.in_scope));
        m.insert("shown".into(), json!(built.refs.len()));
        m.insert("truncated".into(), json!(built.truncated()));
        m.insert(
            "image".into(),
            image.as_ref().map_or(Value::Null, |e| {
                json!({
                    "mimeType": e.format.mime_type(),
                    "width": e.width,
                    "height": e.height,
                    "bytes": e.bytes.len(),
                    "sourceWidth": e.source_width,
                    "sourceHeight": e.source_height,
                })
            }),
        );
        m.insert("note".into(), json!(note));
    }
    let mut header = format!(
        "{} observation {observation_id} (session {session}): {} of {} elements shown",
        args.device,
        built.refs.len(),
        built.in_scope
    );
    if let Some(n) = &note {
        header.push_str(&format!("; {n}"));
    }
    let mut content = vec![ContentBlock::text(format!("{header}\n{}", built.text))];
    if let Some(e) = image {
        let data = base64::engine::general_purpose::STANDARD.encode(&e.bytes);
        content.push(ContentBlock::image(data, e.format.mime_type()));
    }
    let mut result = CallToolResult::structured(structured);
    result.content = content;
    Ok(result)
}

/// Why the screenshot is not in the answer (the observation still is).
#[derive(Debug, thiserror::Error)]
enum ScreenshotError {
    #[error("{0}")]
    Store(#[from] devicerail_host_store::event_store::StoreError),
    #[error("the screenshot {0} is not in the data directory's Evidence")]
    Missing(String),
    #[error("the stored screenshot does not match its sha256")]
    Digest,
    #[error("{0}")]
    Image(#[from] image::ImageError),
    #[error("reading it failed: {0}")]
    Join(#[from] tokio::task::JoinError),
}

async fn read_screenshot(
    state: &State,
    sha: &str,
    format: image::Format,
    max_side: Option<u32>,
) -> Result<Encoded, ScreenshotError> {
    let data_dir = state.data_dir.clone();
    let sha = sha.to_owned();
    let max_side = max_side.unwrap_or(image::DEFAULT_MAX_SIDE);
    tokio::task::spawn_blocking(move || {
        let store = ReadOnlyStore::open(&data_dir)?;
        let bytes = store
            .blob(&sha)?
            .ok_or_else(|| ScreenshotError::Missing(sha.clone()))?;
        if devicerail_host_store::evidence::sha256_hex(&bytes) != sha {
            return Err(ScreenshotError::Digest);
        }
        Ok(image::prepare(&bytes, format, max_side)?)
    })
    .await?
}
