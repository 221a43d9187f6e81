//! Finding the Evidence an event references, wherever the protocol puts
//! it (Observation screenshots and UI snapshots, Action result evidence,
//! verdict evidence, media frames): every object shaped like an
//! `AssetRef` with a content address. Reads only; never edits an event.

use serde_json::Value;

/// One content-addressed reference found in an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AssetUse {
    /// The reference's `id` (`sha256:<hex>`).
    pub id: String,
    pub sha256: String,
    pub media_type: String,
    /// The Observation whose UI snapshot this is, when it is one.
    pub observation_id: Option<String>,
}

/// Every content-addressed reference in `event`, in document order.
pub(crate) fn asset_refs(event: &Value) -> Vec<AssetUse> {
    let mut out = Vec::new();
    walk(event, None, &mut out);
    out
}

fn as_asset(map: &serde_json::Map<String, Value>) -> Option<(String, String, String)> {
    let id = map.get("id")?.as_str()?;
    let media_type = map.get("mediaType")?.as_str()?;
    map.get("uri")?.as_str()?;
    let sha = match map.get("sha256") {
        Some(Value::String(s)) => s.clone(),
        _ => id.strip_prefix("sha256:")?.to_owned(),
    };
    Some((id.to_owned(), sha, media_type.to_owned()))
}

fn walk(v: &Value, observation: Option<&str>, out: &mut Vec<AssetUse>) {
    match v {
        Value::Object(map) => {
            if let Some((id, sha256, media_type)) = as_asset(map) {
                out.push(AssetUse {
                    id,
                    sha256,
                    media_type,
                    observation_id: observation.map(str::to_owned),
                });
                return;
            }
            // An Observation: its UI snapshot reference sits under
            // `uiSnapshot.evidence`.
            let this_observation = (map.contains_key("viewport")
                && map.contains_key("capturedAtMs"))
            .then(|| map.get("id").and_then(Value::as_str))
            .flatten();
            for (key, child) in map {
                let obs = if key == "uiSnapshot" {
                    this_observation
                } else {
                    None
                };
                walk(
                    child,
                    obs.or(observation.filter(|_| key == "evidence")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for item in items {
                walk(item, None, out);
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
    fn finds_screenshots_snapshots_and_verdict_evidence() {
        let a = "a".repeat(64);
        let b = "b".repeat(64);
        let event = json!({
            "payload": {
                "type": "observationCaptured",
                "observation": {
                    "id": "obs-1", "capturedAtMs": 1, "viewport": {"width": 1, "height": 1, "scaleFactor": 1.0},
                    "screenshot": {"id": format!("sha256:{a}"), "mediaType": "image/png", "uri": "x", "sha256": a},
                    "uiSnapshot": {"nodeCount": 1, "evidence": {"id": format!("sha256:{b}"), "mediaType": "t", "uri": "y", "sha256": b}}
                }
            }
        });
        let found = asset_refs(&event);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].sha256, a);
        assert_eq!(found[0].observation_id, None);
        assert_eq!(found[1].sha256, b);
        assert_eq!(found[1].observation_id.as_deref(), Some("obs-1"));
    }
}
