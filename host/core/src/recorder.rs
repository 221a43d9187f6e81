//! Turns what a driver saw into a protocol Observation: stores the PNG and
//! the UI snapshot as content-addressed Evidence and applies the screenshot
//! policy and omission reasons. The snapshot arrives already validated and
//! serialized where the driver ran (`devicerail_host_engine::observation`):
//! the recorder hashes and packs its bytes, never parses them.

use std::sync::Arc;

use devicerail_host_engine::observation::{EncodedUi, HostObservation};
use devicerail_host_protocol::{
    AssetRef, Bounded, DeviceId, ErrorCode, Observation, ObservationId, PNG_MEDIA_TYPE, RpcError,
    ScreenshotOmissionReason, UI_TREE_MEDIA_TYPE, UiSnapshotOmissionReason, UiSnapshotRef,
};

use crate::state::Host;
use devicerail_host_store::event_store::now_ms;
use devicerail_host_store::evidence::Blob;

/// What the host wanted of the screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shot {
    /// Requested from the driver.
    Wanted,
    /// Deliberately not taken, for this reason.
    Omitted(ScreenshotOmissionReason),
    /// Not part of this observation at all.
    NotRequested,
}

/// What the host wanted of the UI tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tree {
    Wanted,
    Omitted(UiSnapshotOmissionReason),
    NotRequested,
}

/// An Observation ready to record.
#[derive(Debug, Clone)]
pub(crate) struct Captured {
    pub observation: Observation,
    /// Evidence the observation references.
    pub evidence: Vec<AssetRef>,
    /// Evidence bytes the recording event stores with itself.
    pub blobs: Vec<Blob>,
}

/// Width and height from a PNG's IHDR chunk, if `bytes` is a PNG.
pub(crate) fn png_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if bytes.len() < 24 || &bytes[..8] != SIGNATURE || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let w = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    let h = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
    Some((w, h))
}

fn violation(what: impl std::fmt::Display) -> RpcError {
    crate::wire_errors::driver_rpc(
        ErrorCode::ProtocolError.info(format!("the driver returned {what}")),
    )
}

/// `evidence_io_error` for a failed Evidence write.
pub(crate) fn storage(e: impl std::fmt::Display) -> RpcError {
    ErrorCode::EvidenceIoError.rpc(
        format!("could not store Evidence: {e}"),
        serde_json::Value::Null,
    )
}

/// Builds and stores one Observation.
pub(crate) async fn capture(
    host: &Arc<Host>,
    id: ObservationId,
    device: &DeviceId,
    obs: HostObservation,
    shot: Shot,
    tree: Tree,
) -> Result<Captured, RpcError> {
    let captured_at_ms = now_ms();
    let HostObservation {
        viewport,
        png,
        ui,
        metadata,
    } = obs;
    let png = match (shot, png) {
        (Shot::Wanted, Some(bytes)) => {
            match png_dimensions(&bytes) {
                None => return Err(violation("a screenshot that is not a PNG")),
                Some(dims) if dims != (viewport.width, viewport.height) => tracing::warn!(
                    device = %device,
                    "screenshot is {}x{} but the viewport is {}x{}",
                    dims.0,
                    dims.1,
                    viewport.width,
                    viewport.height
                ),
                Some(_) => {}
            }
            Some(bytes)
        }
        (Shot::Wanted, None) => return Err(violation("no screenshot although one was requested")),
        _ => None,
    };
    let snapshot = match (tree, ui) {
        (Tree::Wanted, Some(Ok(ui))) => Some(ui),
        (Tree::Wanted, Some(Err(e))) => return Err(violation(e)),
        _ => None,
    };
    let ui_omission = match (tree, &snapshot) {
        (Tree::Wanted, None) => Some(UiSnapshotOmissionReason::DriverUnsupported),
        (Tree::Omitted(r), _) => Some(r),
        _ => None,
    };
    let mut blobs = Vec::new();
    let screenshot = match png {
        Some(bytes) => Some(store_evidence(host, bytes, PNG_MEDIA_TYPE, &mut blobs).await?),
        None => None,
    };
    let ui = match snapshot {
        Some(EncodedUi {
            context,
            node_count,
            bytes,
        }) => {
            let len = bytes.len();
            // A snapshot names its Observation, so its bytes are new every
            // time: no need to look for them among recent digests.
            let asset = if len <= devicerail_host_store::evidence::INLINE_MAX {
                let sha = devicerail_host_store::evidence::sha256_hex(&bytes);
                let packed = devicerail_host_store::snapshot_codec::compress(&bytes);
                blobs.push(Blob {
                    sha256: sha.clone(),
                    media_type: UI_TREE_MEDIA_TYPE.to_owned(),
                    bytes: Arc::new(bytes),
                    observation: Some(id),
                    packed,
                });
                AssetRef::content_addressed(&sha, UI_TREE_MEDIA_TYPE)
            } else {
                store_evidence(host, bytes, UI_TREE_MEDIA_TYPE, &mut blobs).await?
            };
            Some((context, node_count, len, asset))
        }
        None => None,
    };
    let mut evidence = Vec::new();
    if let Some(a) = &screenshot {
        evidence.push(a.clone());
    }
    let ui_ref = match ui {
        Some((context, node_count, len, asset)) => {
            evidence.push(asset.clone());
            Some(UiSnapshotRef {
                format_version: Bounded::MIN,
                context,
                node_count: Bounded::try_new(node_count as u64).map_err(violation)?,
                byte_length: Bounded::try_new(len as u64).map_err(violation)?,
                evidence: asset,
            })
        }
        None => None,
    };
    let screenshot_omission = match shot {
        Shot::Omitted(r) => Some(r),
        _ => None,
    };
    let observation = Observation {
        id,
        device_id: device.clone(),
        captured_at_ms,
        viewport,
        screenshot,
        screenshot_omission,
        ui_snapshot: ui_ref,
        ui_snapshot_omission: ui_omission,
        metadata,
    };
    Ok(Captured {
        observation,
        evidence,
        blobs,
    })
}

/// The content address of `bytes`; small blobs are added to `blobs` (to be
/// committed with their event), larger ones written as files now.
pub(crate) async fn store_evidence(
    host: &Arc<Host>,
    bytes: Vec<u8>,
    media_type: &'static str,
    blobs: &mut Vec<Blob>,
) -> Result<AssetRef, RpcError> {
    let (asset, blob) = if bytes.len() <= devicerail_host_store::evidence::INLINE_MAX {
        host.evidence.store(bytes, media_type).map_err(storage)?
    } else {
        let evidence = host.evidence.clone();
        tokio::task::spawn_blocking(move || evidence.store(bytes, media_type))
            .await
            .map_err(storage)?
            .map_err(storage)?
    };
    blobs.extend(blob);
    Ok(asset)
}
