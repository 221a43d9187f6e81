//! Cross-checks against the published reference, when
//! `DEVICERAIL_REFERENCE_DIR` names it: both fixture sets validate under
//! both schema sets, the file sets match and the project's fixtures cover
//! every reference fixture id.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use devicerail_host_fixtures as fixtures;
use devicerail_host_schema_gen::{DOCUMENTS, MANIFEST_FILE, SCHEMA_DIR, manifest};
use serde_json::Value;

/// `(id, path, schema, kind)` of every entry of the reference manifest.
fn reference_entries(dir: &Path) -> Vec<(String, String, String, String)> {
    let manifest = common::read_json(&dir.join("fixtures").join("manifest.json"));
    let entries = manifest["fixtures"]
        .as_array()
        .unwrap_or_else(|| panic!("the reference manifest has no fixtures array"));
    let field = |e: &Value, k: &str| e[k].as_str().unwrap_or_default().to_owned();
    entries
        .iter()
        .map(|e| {
            (
                field(e, "id"),
                field(e, "path"),
                field(e, "schema"),
                field(e, "kind"),
            )
        })
        .collect()
}

#[test]
fn reference_fixtures_validate_under_project_schemas() {
    let Some(dir) = common::reference_dir("reference fixtures") else {
        return;
    };
    let entries = reference_entries(&dir);
    let mut failures = Vec::new();
    for (_, path, schema, _) in &entries {
        let instance = common::read_json(&dir.join("fixtures").join(path));
        let ours = format!("{SCHEMA_DIR}/{}", common::schema_file_name(schema));
        match common::validator(&common::project_schema(&ours)) {
            Ok(validator) => {
                let errors = common::errors(&validator, &instance);
                if !errors.is_empty() {
                    failures.push(format!(
                        "{path} under {ours}:\n    {}",
                        errors.join("\n    ")
                    ));
                }
            }
            Err(e) => failures.push(format!("{ours}: {e}")),
        }
    }
    println!(
        "reference fixtures: {}/{} validate under project schemas",
        entries.len() - failures.len(),
        entries.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn project_fixtures_validate_under_reference_schemas() {
    let Some(dir) = common::reference_dir("project fixtures under reference schemas") else {
        return;
    };
    let all = fixtures::all().unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    for fixture in &all {
        let entry = &fixture.entry;
        let instance: Value = serde_json::from_str(fixture.json)
            .unwrap_or_else(|e| panic!("{}: does not parse: {e}", entry.path));
        let theirs = dir
            .join("schema")
            .join("v1")
            .join(common::schema_file_name(&entry.schema));
        match common::validator(&common::read_json(&theirs)) {
            Ok(validator) => {
                let errors = common::errors(&validator, &instance);
                if !errors.is_empty() {
                    failures.push(format!(
                        "{} under the reference {}:\n    {}",
                        entry.path,
                        common::schema_file_name(&entry.schema),
                        errors.join("\n    ")
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", theirs.display())),
        }
    }
    println!(
        "project fixtures: {}/{} validate under reference schemas",
        all.len() - failures.len(),
        all.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn schema_file_set_matches_reference() {
    let Some(dir) = common::reference_dir("schema files") else {
        return;
    };
    let schema_dir = dir.join("schema").join("v1");
    let theirs: BTreeSet<String> = std::fs::read_dir(&schema_dir)
        .unwrap_or_else(|e| panic!("cannot list the reference schemas: {e}"))
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| n.ends_with(".schema.json"))
        .collect();
    let ours: BTreeSet<String> = DOCUMENTS.iter().map(|d| d.file_name()).collect();
    let missing: Vec<&String> = theirs.difference(&ours).collect();
    let extra: Vec<&String> = ours.difference(&theirs).collect();
    println!(
        "schema files: {}/{}",
        theirs.intersection(&ours).count(),
        theirs.len()
    );
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing: {missing:?}\nnot in the reference: {extra:?}"
    );
    // Same documents, ids and names in the two manifests.
    let documents = |m: &Value| -> BTreeMap<String, Value> {
        m["documents"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| (d["file"].as_str().unwrap_or_default().to_owned(), d.clone()))
            .collect()
    };
    let theirs = documents(&common::read_json(&schema_dir.join(MANIFEST_FILE)));
    let ours = documents(&manifest());
    let differing: Vec<&String> = theirs
        .iter()
        .filter(|(file, doc)| ours.get(*file) != Some(doc))
        .map(|(file, _)| file)
        .collect();
    assert!(
        differing.is_empty(),
        "manifest documents differ (file, id or name): {differing:?}"
    );
}

#[test]
fn project_manifest_covers_reference_manifest() {
    let Some(dir) = common::reference_dir("reference fixture ids") else {
        return;
    };
    let ours: BTreeSet<(String, String)> = fixtures::manifest()
        .unwrap_or_else(|e| panic!("manifest.json: {e}"))
        .fixtures
        .into_iter()
        .map(|e| (e.id, e.kind))
        .collect();
    let entries = reference_entries(&dir);
    let uncovered: Vec<String> = entries
        .iter()
        .filter(|(id, _, _, kind)| !ours.contains(&(id.clone(), kind.clone())))
        .map(|(id, _, _, kind)| format!("{id} ({kind})"))
        .collect();
    let their_kinds: BTreeSet<&str> = entries.iter().map(|e| e.3.as_str()).collect();
    let our_kinds: BTreeSet<&str> = ours.iter().map(|(_, k)| k.as_str()).collect();
    let missing_kinds: Vec<&&str> = their_kinds.difference(&our_kinds).collect();
    println!(
        "reference fixture ids: {}/{} covered ({}/{} kinds)",
        entries.len() - uncovered.len(),
        entries.len(),
        their_kinds.len() - missing_kinds.len(),
        their_kinds.len()
    );
    assert!(
        uncovered.is_empty() && missing_kinds.is_empty(),
        "not covered by the project manifest: {uncovered:?}; kinds: {missing_kinds:?}"
    );
}
