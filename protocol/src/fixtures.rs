//! The golden fixtures, embedded at build time (feature `fixtures`).
//!
//! `manifest.json` lists each fixture's id, path, schema file, kind and the
//! model it exercises; [`all`] pairs each entry with its JSON text.

use serde::Deserialize;

/// Every file under `fixtures/`, keyed by its path relative to that folder.
static FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/fixture_files.rs"));

/// The manifest document.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub manifest_version: u32,
    pub protocol_version: crate::ProtocolVersion,
    pub fixture_paths_relative_to: String,
    pub schema_paths_relative_to: String,
    pub fixtures: Vec<ManifestEntry>,
}

/// One manifest entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestEntry {
    pub id: String,
    pub path: String,
    pub schema: String,
    pub kind: String,
    pub model: String,
}

impl ManifestEntry {
    /// The schema's file name (`device-info.schema.json`).
    pub fn schema_file(&self) -> &str {
        self.schema.rsplit('/').next().unwrap_or(&self.schema)
    }
}

/// One fixture with its text.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub entry: ManifestEntry,
    pub json: &'static str,
}

/// The manifest's raw text.
pub fn manifest_text() -> &'static str {
    file("manifest.json").unwrap_or("")
}

/// The parsed manifest.
pub fn manifest() -> Result<Manifest, serde_json::Error> {
    serde_json::from_str(manifest_text())
}

/// The text of one embedded file.
pub fn file(path: &str) -> Option<&'static str> {
    FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
}

/// Every manifest entry with its text; entries whose file is missing are
/// returned as errors naming the path.
pub fn all() -> Result<Vec<Fixture>, String> {
    let manifest = manifest().map_err(|e| format!("manifest.json: {e}"))?;
    manifest
        .fixtures
        .into_iter()
        .map(|entry| match file(&entry.path) {
            Some(json) => Ok(Fixture { entry, json }),
            None => Err(format!("fixture file {} is not embedded", entry.path)),
        })
        .collect()
}
