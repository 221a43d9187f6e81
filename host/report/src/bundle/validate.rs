//! Reading and checking a bundle: the archive's entries (safe paths,
//! regular files, no duplicates, bounded sizes), the manifest, the events
//! (valid protocol events of the manifest's session, sequences contiguous
//! from 1, the count and digest the manifest names), every blob (present,
//! listed, its bytes matching its name and size) and every reference (each
//! asset an event names is in the bundle; each completed call was
//! started; each element an Action names belongs to a recorded
//! Observation). The first failure is returned, as one [`BundleError`].
//!
//! It must never trust the archive: nothing is written to disk, no path
//! from it is opened, and sizes are checked before bytes are read.

use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::Path;

use devicerail_host_protocol::{TestEvent, TestEventPayload};

use super::{
    BLOBS_DIR, BlobEntry, BundleError, EVENTS_PATH, FORMAT, FORMAT_VERSION, MANIFEST_PATH,
    MAX_ENTRY_BYTES, Manifest, SessionData, asset_refs,
};
use devicerail_host_store::event_store::RawEvent;
use devicerail_host_store::evidence::{is_sha256_hex, sha256_hex};

/// Checks the bundle at `path`; `Ok` carries what it holds.
pub fn validate(path: &Path) -> Result<SessionData, BundleError> {
    super::open(path)
}

/// The entries of a tar archive, by path.
fn entries(input: impl Read) -> Result<BTreeMap<String, Vec<u8>>, BundleError> {
    let mut archive = tar::Archive::new(input);
    let mut out = BTreeMap::new();
    let list = archive
        .entries()
        .map_err(|e| BundleError::NotAnArchive(e.to_string()))?;
    for entry in list {
        let mut entry = entry.map_err(|e| BundleError::NotAnArchive(e.to_string()))?;
        let path = entry
            .path()
            .map_err(|e| BundleError::NotAnArchive(e.to_string()))?
            .to_string_lossy()
            .into_owned();
        let safe = !path.is_empty()
            && !path.starts_with('/')
            && path
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if !safe {
            return Err(BundleError::UnsafePath(path));
        }
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(BundleError::NotAFile(path));
        }
        let size = entry.size();
        if size > MAX_ENTRY_BYTES {
            return Err(BundleError::EntryTooLarge { path, size });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| BundleError::NotAnArchive(e.to_string()))?;
        if out.contains_key(&path) {
            return Err(BundleError::DuplicateEntry(path));
        }
        out.insert(path, bytes);
    }
    Ok(out)
}

/// Reads and validates a bundle.
pub(crate) fn read(input: impl Read) -> Result<SessionData, BundleError> {
    let mut files = entries(input)?;
    let manifest_bytes = files
        .remove(MANIFEST_PATH)
        .ok_or(BundleError::MissingManifest)?;
    let manifest: Manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| BundleError::InvalidManifest(e.to_string()))?;
    if manifest.format != FORMAT || manifest.format_version != FORMAT_VERSION {
        return Err(BundleError::UnsupportedFormat {
            format: manifest.format,
            version: manifest.format_version,
        });
    }
    if manifest.events.path != EVENTS_PATH {
        return Err(BundleError::InvalidManifest(format!(
            "events.path is {:?}, not {EVENTS_PATH:?}",
            manifest.events.path
        )));
    }
    let events_bytes = files
        .remove(EVENTS_PATH)
        .ok_or(BundleError::MissingEvents)?;
    let events = check_events(&manifest, &events_bytes)?;

    // Blobs: every listed one present and intact, nothing unlisted.
    let mut blobs = BTreeMap::new();
    for listed in &manifest.blobs {
        if !is_sha256_hex(&listed.sha256) {
            return Err(BundleError::InvalidManifest(format!(
                "blob name {:?} is not a SHA-256 digest",
                listed.sha256
            )));
        }
        let path = format!("{BLOBS_DIR}{}", listed.sha256);
        let bytes = files
            .remove(&path)
            .ok_or_else(|| BundleError::MissingBlob {
                sha256: listed.sha256.clone(),
            })?;
        let actual = sha256_hex(&bytes);
        if actual != listed.sha256 {
            return Err(BundleError::BlobDigestMismatch {
                sha256: listed.sha256.clone(),
                actual,
            });
        }
        if bytes.len() as u64 != listed.size {
            return Err(BundleError::BlobSizeMismatch {
                sha256: listed.sha256.clone(),
                expected: listed.size,
                actual: bytes.len() as u64,
            });
        }
        blobs.insert(
            listed.sha256.clone(),
            BlobEntry {
                media_type: listed.media_type.clone(),
                bytes,
            },
        );
    }
    if let Some(path) = files.keys().next() {
        return Err(match path.strip_prefix(BLOBS_DIR) {
            Some(sha) => BundleError::UnlistedBlob {
                sha256: sha.to_owned(),
            },
            None => BundleError::UnexpectedEntry(path.clone()),
        });
    }

    // References: every asset resolves, every completed call was started.
    let mut started = HashSet::new();
    let mut observations = HashSet::new();
    for event in &events {
        let value: serde_json::Value =
            serde_json::from_str(&event.json).map_err(|e| BundleError::InvalidEvent {
                line: usize::try_from(event.sequence).unwrap_or(usize::MAX),
                reason: e.to_string(),
            })?;
        for asset in asset_refs(&value) {
            let ok =
                asset.id == format!("sha256:{}", asset.sha256) && blobs.contains_key(&asset.sha256);
            if !ok {
                return Err(BundleError::UnresolvedReference {
                    sequence: event.sequence,
                    asset: asset.id,
                });
            }
        }
        // Observations recorded so far; an element an Action names must
        // be in one of them (its resolved `before`, normally).
        let payload = &value["payload"];
        let result = &payload["outcome"]["result"];
        for obs in [&payload["observation"], &result["before"], &result["after"]] {
            if let Some(id) = obs["id"].as_str() {
                observations.insert(id.to_owned());
            }
        }
        if let Some(obs) = result["output"]["element"]["observationId"].as_str()
            && !observations.contains(obs)
        {
            return Err(BundleError::UnresolvedObservation {
                sequence: event.sequence,
                observation: obs.to_owned(),
                node: result["output"]["element"]["stableNodeId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            });
        }
        match value["payload"]["type"].as_str() {
            Some("actionStarted") => {
                if let Some(id) = value["payload"]["call"]["id"].as_str() {
                    started.insert(id.to_owned());
                }
            }
            Some("actionCompleted") => {
                let id = value["payload"]["callId"].as_str().unwrap_or_default();
                if !started.contains(id) {
                    return Err(BundleError::UnknownCall {
                        sequence: event.sequence,
                        call_id: id.to_owned(),
                    });
                }
            }
            _ => {}
        }
    }
    Ok(SessionData {
        session: manifest.session,
        events,
        blobs,
    })
}

/// Parses `events.ndjson` and checks it against the manifest.
fn check_events(manifest: &Manifest, bytes: &[u8]) -> Result<Vec<RawEvent>, BundleError> {
    let text = std::str::from_utf8(bytes).map_err(|e| BundleError::InvalidEvent {
        line: 0,
        reason: format!("not UTF-8: {e}"),
    })?;
    let expected_session = manifest.session.id.to_string();
    let mut events = Vec::new();
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines = body.split('\n').filter(|_| !body.is_empty());
    for (expected, (i, line)) in (1u64..).zip(lines.enumerate()) {
        let line_no = i + 1;
        let event: TestEvent =
            serde_json::from_str(line).map_err(|e| BundleError::InvalidEvent {
                line: line_no,
                reason: e.to_string(),
            })?;
        let sequence = event.sequence.get();
        if event.session_id.to_string() != expected_session {
            return Err(BundleError::WrongSession {
                sequence,
                found: event.session_id.to_string(),
                expected: expected_session,
            });
        }
        if sequence > expected {
            return Err(BundleError::SequenceGap {
                after: expected - 1,
                next: sequence,
            });
        }
        if sequence < expected {
            return Err(BundleError::SequenceOutOfOrder {
                expected,
                found: sequence,
            });
        }
        if expected == 1 && !matches!(event.payload, TestEventPayload::SessionStarted) {
            return Err(BundleError::InvalidEvent {
                line: line_no,
                reason: "the first event is not sessionStarted".into(),
            });
        }
        events.push(RawEvent {
            sequence,
            json: line.to_owned(),
        });
    }
    let found = events.len() as u64;
    if found != manifest.events.count {
        return Err(BundleError::EventCountMismatch {
            manifest: manifest.events.count,
            found,
        });
    }
    let actual = sha256_hex(bytes);
    if actual != manifest.events.sha256 {
        return Err(BundleError::EventsDigestMismatch {
            expected: manifest.events.sha256.clone(),
            actual,
        });
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{SessionData, write_bundle};
    use devicerail_host_protocol::{EventSequence, SafeU64, SessionInfo, SessionState};
    use serde_json::json;

    const SESSION: &str = "0190b6f0-0000-7000-8000-000000000001";
    const OTHER: &str = "0190b6f0-0000-7000-8000-000000000002";

    fn event(seq: u64, session: &str, payload: serde_json::Value) -> RawEvent {
        let json = json!({
            "eventId": format!("0190b6f0-0000-7000-8000-{seq:012}"),
            "sessionId": session,
            "sequence": seq,
            "atMs": 1_000 + seq,
            "payload": payload,
        });
        RawEvent {
            sequence: seq,
            json: json.to_string(),
        }
    }

    fn sample() -> SessionData {
        let png = b"\x89PNG not really".to_vec();
        let sha = sha256_hex(&png);
        let asset = json!({ "id": format!("sha256:{sha}"), "mediaType": "image/png", "uri": format!("devicerail://assets/sha256/{sha}"), "sha256": sha });
        let call = "0190b6f0-0000-7000-8000-0000000000aa";
        let events = vec![
            event(1, SESSION, json!({ "type": "sessionStarted" })),
            event(
                2,
                SESSION,
                json!({ "type": "actionStarted", "call": { "id": call, "name": "tap", "arguments": { "x": 1, "y": 2 } } }),
            ),
            event(
                3,
                SESSION,
                json!({ "type": "actionCompleted", "callId": call, "outcome": { "outcome": "failed", "error": { "code": "action_failed", "message": "no", "retryable": false } } }),
            ),
            event(
                4,
                SESSION,
                json!({ "type": "verdictRecorded", "verdict": { "status": "fail", "summary": "s", "evidence": [asset] } }),
            ),
        ];
        let mut blobs = BTreeMap::new();
        blobs.insert(
            sha,
            BlobEntry {
                media_type: "image/png".into(),
                bytes: png,
            },
        );
        SessionData {
            session: SessionInfo {
                id: SESSION.parse().expect("id"),
                state: SessionState::Active,
                started_at_ms: SafeU64::saturating(1_000),
                ended_at_ms: None,
                event_count: EventSequence::try_new(4).expect("4"),
                last_sequence: EventSequence::try_new(4).expect("4"),
            },
            events,
            blobs,
        }
    }

    fn bytes_of(data: &SessionData) -> Vec<u8> {
        let mut out = Vec::new();
        write_bundle(data, &mut out).expect("write");
        out
    }

    /// A tar of `entries` as given (no checks on the way in).
    fn raw_tar(entries: &[(&str, &[u8], tar::EntryType)]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, bytes, kind) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_entry_type(*kind);
            h.set_mode(0o644);
            // Paths are written raw so that unsafe ones survive.
            let name = h.as_old_mut().name.as_mut();
            name[..path.len()].copy_from_slice(path.as_bytes());
            h.set_cksum();
            b.append(&h, *bytes).expect("append");
        }
        b.into_inner().expect("tar")
    }

    fn entries_of(data: &SessionData) -> Vec<(String, Vec<u8>)> {
        let bytes = bytes_of(data);
        entries(bytes.as_slice())
            .expect("entries")
            .into_iter()
            .collect()
    }

    #[test]
    fn round_trips_and_is_deterministic() {
        let data = sample();
        let bytes = bytes_of(&data);
        assert_eq!(bytes, bytes_of(&data));
        assert_eq!(read(bytes.as_slice()).expect("valid"), data);
    }

    #[test]
    fn each_corruption_has_its_own_reason() {
        let data = sample();
        let manifest = serde_json::to_vec(&super::super::manifest_of(&data)).expect("manifest");
        let events: Vec<u8> = entries_of(&data)
            .into_iter()
            .find(|(p, _)| p == EVENTS_PATH)
            .expect("events")
            .1;
        let reg = tar::EntryType::Regular;
        let check = |tar: Vec<u8>| read(tar.as_slice()).expect_err("invalid").to_string();

        assert!(check(raw_tar(&[("../evil", b"x", reg)])).contains("unsafe path"));
        assert!(
            check(raw_tar(&[("manifest.json", b"", tar::EntryType::Symlink)]))
                .contains("not a regular file")
        );
        assert!(check(raw_tar(&[("events.ndjson", &events, reg)])).contains("no manifest.json"));
        assert!(
            check(raw_tar(&[
                ("manifest.json", &manifest, reg),
                ("manifest.json", &manifest, reg)
            ]))
            .contains("appears twice")
        );
        assert!(check(raw_tar(&[("manifest.json", &manifest, reg)])).contains("no events.ndjson"));
        let mut other = super::super::manifest_of(&data);
        other.format_version = 9;
        let other = serde_json::to_vec(&other).expect("m");
        assert!(
            check(raw_tar(&[("manifest.json", &other, reg)])).contains("unsupported bundle format")
        );
        // An extra file.
        let mut with_extra = entries_of(&data);
        with_extra.push(("notes.txt".into(), b"hi".to_vec()));
        let tar = raw_tar(
            &with_extra
                .iter()
                .map(|(p, b)| (p.as_str(), b.as_slice(), reg))
                .collect::<Vec<_>>(),
        );
        assert!(check(tar).contains("entry \"notes.txt\" is not part of the bundle layout"));

        // Event-level problems, each with a manifest that matches the file.
        let rebuild = |events: Vec<RawEvent>| {
            let mut d = sample();
            d.events = events;
            bytes_of(&d)
        };
        let mut wrong = sample().events;
        wrong[2] = event(3, OTHER, json!({ "type": "sessionStarted" }));
        assert!(check(rebuild(wrong)).contains(&format!("event 3 belongs to session {OTHER}")));
        let mut swapped = sample().events;
        swapped.swap(1, 2);
        assert!(check(rebuild(swapped)).contains("event 1 is followed by 3 (gap)"));
        let mut repeated = sample().events;
        repeated[2] = repeated[1].clone();
        assert!(check(rebuild(repeated)).contains("expected 3, found 2"));
        let mut unstarted = sample().events;
        unstarted.remove(1);
        for (i, e) in unstarted.iter_mut().enumerate() {
            let mut v: serde_json::Value = serde_json::from_str(&e.json).expect("json");
            v["sequence"] = json!(i + 1);
            e.sequence = i as u64 + 1;
            e.json = v.to_string();
        }
        assert!(check(rebuild(unstarted)).contains(
            "completes call 0190b6f0-0000-7000-8000-0000000000aa, which no earlier event started"
        ));
        let mut dangling = sample().events;
        let call = "0190b6f0-0000-7000-8000-0000000000bb";
        let element = json!({ "observationId": "0190b6f0-0000-7000-8000-0000000000cc", "stableNodeId": "n1", "context": { "contextKind": "native", "contextId": "c", "documentEpoch": "e" } });
        dangling.push(event(5, SESSION, json!({ "type": "actionStarted", "call": { "id": call, "name": "tapElement", "arguments": {} } })));
        dangling.push(event(6, SESSION, json!({ "type": "actionCompleted", "callId": call, "outcome": { "outcome": "succeeded", "result": { "callId": call, "startedAtMs": 1, "finishedAtMs": 2, "output": { "element": element }, "before": null, "after": null, "evidence": [] } } })));
        assert!(check(rebuild(dangling)).contains("event 6 names element n1 of observation 0190b6f0-0000-7000-8000-0000000000cc, which no event up to it recorded"));
        let mut bad = sample().events;
        bad[3].json = bad[3].json.replace("\"fail\"", "\"maybe\"");
        assert!(check(rebuild(bad)).contains("events.ndjson line 4 is not a valid event"));
        // The count the manifest gives.
        let mut d = sample();
        let m = super::super::manifest_of(&d);
        d.events.pop();
        let mut tar = entries_of(&d);
        for (path, bytes) in &mut tar {
            if path == MANIFEST_PATH {
                *bytes = serde_json::to_vec(&m).expect("m");
            }
        }
        let tar = raw_tar(
            &tar.iter()
                .map(|(p, b)| (p.as_str(), b.as_slice(), reg))
                .collect::<Vec<_>>(),
        );
        assert!(check(tar).contains("the manifest lists 4 events, events.ndjson holds 3"));
    }
}
