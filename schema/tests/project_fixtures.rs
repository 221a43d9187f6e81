//! Every project fixture validates under the project schema its manifest
//! entry names.

mod common;

use std::collections::BTreeSet;

use devicerail_host_fixtures as fixtures;
use devicerail_host_schema_gen::{DOCUMENTS, Document, SCHEMA_DIR};
use serde_json::Value;

#[test]
fn project_fixtures_validate_under_project_schemas() {
    let all = fixtures::all().unwrap_or_else(|e| panic!("{e}"));
    assert!(!all.is_empty(), "the project manifest lists no fixtures");
    let mut failures = Vec::new();
    for fixture in &all {
        let entry = &fixture.entry;
        let instance: Value = match serde_json::from_str(fixture.json) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: does not parse: {e}", entry.path));
                continue;
            }
        };
        let schema = common::project_schema(&entry.schema);
        match common::validator(&schema) {
            Ok(validator) => {
                let errors = common::errors(&validator, &instance);
                if !errors.is_empty() {
                    failures.push(format!(
                        "{} under {}:\n    {}",
                        entry.path,
                        entry.schema,
                        errors.join("\n    ")
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", entry.schema)),
        }
    }
    println!(
        "project fixtures: {}/{} validate under project schemas",
        all.len() - failures.len(),
        all.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn manifest_schemas_are_generated_documents() {
    let manifest = fixtures::manifest().unwrap_or_else(|e| panic!("manifest.json: {e}"));
    let generated: BTreeSet<String> = DOCUMENTS
        .iter()
        .map(|d| format!("{SCHEMA_DIR}/{}", Document::file_name(d)))
        .collect();
    let unknown: Vec<&str> = manifest
        .fixtures
        .iter()
        .map(|e| e.schema.as_str())
        .filter(|s| !generated.contains(*s))
        .collect();
    assert!(
        unknown.is_empty(),
        "manifest names schemas the generator does not produce: {unknown:?}"
    );
    assert_eq!(manifest.schema_paths_relative_to, "repositoryRoot");
    assert_eq!(manifest.fixture_paths_relative_to, "manifestDirectory");
}

#[test]
fn every_schema_compiles() {
    let mut failures = Vec::new();
    for doc in DOCUMENTS {
        if let Err(e) = common::validator(&doc.schema()) {
            failures.push(format!("{}: {e}", doc.file_name()));
        }
    }
    println!(
        "project schemas: {}/{} compile",
        DOCUMENTS.len() - failures.len(),
        DOCUMENTS.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
